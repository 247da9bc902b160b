import Foundation
import XCTest

/// With `scripts/hil/run --screen FILE` the VM also has a virtio-gpu display whose picture the
/// host can dump over QMP: a mode is held on it and the dump shows modetest's colour bars.
final class ScreenTests: XCTestCase {
    func testScreenDumpShowsWhatIsScannedOut() throws {
        try Bench.requireBench()
        guard Bench.environment["LOOPIX_HIL_SCREEN"] == "1" else {
            throw XCTSkip("no virtio-gpu display: run scripts/hil/run --screen FILE")
        }
        let out = try Bench.value("LOOPIX_HIL_OUT")
        let (connector, mode) = try DRMTests.connectedConnector(module: "virtio_gpu")
        let holder = try Bench.Running("modetest", ["-M", "virtio_gpu", "-s", "\(connector):\(mode)"])
        defer { _ = holder.wait(timeout: 10) }
        // modetest's stdout is a pipe (buffered): give it time to set the mode and draw.
        Thread.sleep(forTimeInterval: 3)
        XCTAssertTrue(holder.process.isRunning, "modetest exited early")
        // Ask the host (scripts/hil/run) for a dump and wait for it.
        _ = FileManager.default.createFile(atPath: "\(out)/screen.request", contents: nil)
        let end = Date(timeIntervalSinceNow: 30)
        while !FileManager.default.fileExists(atPath: "\(out)/screen.done") && Date() < end {
            Thread.sleep(forTimeInterval: 0.1)
        }
        let ppm = try Data(contentsOf: URL(fileURLWithPath: "\(out)/screen.ppm"))
        let header = "P6\n\(mode.replacingOccurrences(of: "x", with: " "))\n255\n"
        XCTAssertEqual(String(decoding: ppm.prefix(header.utf8.count), as: UTF8.self), header)
        // modetest's test pattern: several distinct colour bars across the top row.
        let width = Int(mode.split(separator: "x")[0])!
        let row = ppm.dropFirst(header.utf8.count).prefix(width * 3)
        var colours = Set<[UInt8]>()
        var i = row.startIndex
        while i + 2 < row.endIndex { colours.insert([row[i], row[i + 1], row[i + 2]]); i += 3 }
        XCTAssertGreaterThanOrEqual(colours.count, 7, "the dump does not show the colour bars")
    }
}
