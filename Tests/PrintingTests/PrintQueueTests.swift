import CCups
import Foundation
@testable import Printing
import System
import TestFixtures
import XCTest

/// A test cupsd, or the test is skipped saying why.
func startTestCUPS() throws -> TestCUPS {
    do {
        let cups = try TestCUPS()
        cupsSetServer(nil)  // this thread's libcups reads CUPS_SERVER again
        return cups
    } catch let missing as TestCUPS.Unavailable {
        throw XCTSkip(missing.reason)
    }
}

final class PrintQueueTests: XCTestCase {
    func waitFor(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return try condition()
    }

    /// A photo handed over is printed once; a disabled printer is "needs attention" while photos
    /// keep coming; enabled again, the waiting job prints, once; a restart does not print again.
    func testPrintsOnceAndWaitsForAPrinterThatNeedsAttention() throws {
        let cups = try startTestCUPS()
        defer { cups.stop() }
        try cups.addPrinter("booth")
        let photo = cups.directory + "/LPX_0001.JPG", second = cups.directory + "/LPX_0002.JPG"
        try Data((0..<5000).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: photo))
        try Data((0..<7000).map { UInt8($0 % 241) }).write(to: URL(fileURLWithPath: second))
        let state = cups.directory + "/print-jobs"
        var settings = PrintQueue.Settings(printer: "booth")
        settings.pollSeconds = 0.3
        var queue: PrintQueue? = try PrintQueue(settings: settings, stateFile: state)
        XCTAssertTrue(waitFor(5) { queue?.attention == nil }, "an idle printer needs nothing: \(queue?.attention ?? "")")

        queue?.print(photo)
        XCTAssertTrue(try waitFor(30) { try cups.completedJobs("booth") == 1 && queue?.pending == 0 }, cups.log())
        XCTAssertEqual(FileManager.default.contents(atPath: cups.directory + "/out/booth.out"),
                       FileManager.default.contents(atPath: photo), "the printer got the photo's bytes: \((try? FileManager.default.contentsOfDirectory(atPath: cups.directory + "/out")) ?? [])\n\(cups.log())")
        XCTAssertEqual(queue?.printed, 1)

        // Paper out (here: the printer stopped): the booth hears it, the job waits in CUPS.
        XCTAssertEqual(try cups.run("/usr/sbin/cupsdisable", ["-r", "media-empty", "booth"]).status, 0)
        XCTAssertTrue(waitFor(10) { queue?.attention?.hasPrefix("Printer needs attention") == true }, "\(queue?.attention ?? "nil")")
        queue?.print(second)
        Thread.sleep(forTimeInterval: 2)
        XCTAssertEqual(try cups.completedJobs("booth"), 1, "nothing prints while the printer is stopped")
        XCTAssertEqual(queue?.pending, 1)

        // A restart while the job waits: the job is followed, not sent again.
        queue?.stop()
        queue = nil
        XCTAssertTrue(try String(contentsOfFile: state, encoding: .utf8).contains("LPX_0002.JPG\t"), "kept across the restart")
        // A job finished earlier under the same file name (another folder, a wiped card) is not
        // taken for this one: the titles differ.
        queue = try PrintQueue(settings: settings, stateFile: state)

        XCTAssertEqual(try cups.run("/usr/sbin/cupsenable", ["booth"]).status, 0)
        XCTAssertTrue(waitFor(10) { queue?.attention == nil }, "back: \(queue?.attention ?? "")")
        XCTAssertTrue(try waitFor(30) { try cups.completedJobs("booth") == 2 && queue?.pending == 0 }, cups.log())
        XCTAssertEqual(FileManager.default.contents(atPath: cups.directory + "/out/booth.out"),
                       FileManager.default.contents(atPath: second))
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertEqual(try cups.completedJobs("booth"), 2, "each photo printed once")
        queue?.stop()
    }

    /// A photo recorded without its job number (the daemon stopped between sending and noting
    /// it) is found in CUPS by its unique title and not sent again; a finished job of another
    /// photo with the same file name is not mistaken for it.
    func testARestartAdoptsAJobAlreadySentAndNeverPrintsTwice() throws {
        let cups = try startTestCUPS()
        defer { cups.stop() }
        try cups.addPrinter("booth")
        let photo = cups.directory + "/LPX_0001.JPG"
        try Data((0..<3000).map { UInt8($0 % 199) }).write(to: URL(fileURLWithPath: photo))
        let sent = PrintQueue.Entry(path: photo, token: "sentbefore")
        XCTAssertEqual(try cups.run("/usr/bin/lp", ["-d", "booth", "-t", sent.title, photo]).status, 0)
        XCTAssertTrue(try waitFor(30) { try cups.completedJobs("booth") == 1 }, cups.log())
        let state = cups.directory + "/print-jobs"
        PrintQueue.save([sent, PrintQueue.Entry(path: photo, token: "new")], to: state)
        var settings = PrintQueue.Settings(printer: "booth")
        settings.pollSeconds = 0.3
        let queue = try PrintQueue(settings: settings, stateFile: state)
        defer { queue.stop() }
        XCTAssertTrue(try waitFor(30) { try cups.completedJobs("booth") == 2 && queue.pending == 0 }, cups.log())
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertEqual(try cups.completedJobs("booth"), 2, "the adopted job is not sent again; the other entry (same file name) prints once")
    }

    /// A printer CUPS does not know, and no CUPS at all, are trouble to show, not crashes.
    func testAMissingPrinterOrCUPSIsReported() throws {
        let cups = try startTestCUPS()
        defer { cups.stop() }
        XCTAssertEqual(PrintQueue.printerTrouble("nosuch"), "Printer needs attention: no printer \"nosuch\"")
        cups.stop()
        setenv("CUPS_SERVER", cups.socket, 1)
        cupsSetServer(nil)
        defer { unsetenv("CUPS_SERVER") }
        XCTAssertTrue(PrintQueue.printerTrouble("booth")?.hasPrefix("Printer needs attention") == true)
    }

    func testTheStateFileRoundTrips() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("print-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let entries = [PrintQueue.Entry(path: "/a/LPX_0001.JPG", job: 7, token: "t1"), PrintQueue.Entry(path: "/a/LPX_0002.JPG", job: nil, token: "t2")]
        PrintQueue.save(entries, to: file)
        let loaded = PrintQueue.load(file)
        XCTAssertEqual(loaded.map(\.path), entries.map(\.path))
        XCTAssertEqual(loaded.map(\.job), [7, nil])
        XCTAssertEqual(loaded.map(\.token), ["t1", "t2"])
        XCTAssertEqual(loaded.map(\.recovered), [false, true], "one without a job number may have been sent: looked for first")
        XCTAssertEqual(loaded[0].title, "Loopix LPX_0001.JPG #t1")
        try "garbage\n\t\n/b/x.JPG\tnotanumber\n".write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(PrintQueue.load(file).map(\.path), ["/b/x.JPG"])
        XCTAssertNotEqual(PrintQueue.Entry(path: "/x").token, PrintQueue.Entry(path: "/x").token, "titles are unique")
    }
}
