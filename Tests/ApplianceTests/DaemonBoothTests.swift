import FilmCore
import Foundation
import ImageFiles
import System
import TestFixtures
import XCTest
import Raster

/// The photobooth as a guest meets it, on the real `loopixd` (simulated camera, headless): the
/// idle screen with the gallery's QR code, the countdown started by the button, the shots taken
/// when it ends, the collage, the review screen whose QR code — read by zbarimg, a decoder no
/// one here wrote — opens the photo's gallery page.
final class DaemonBoothTests: XCTestCase {
    private func zbar(_ png: String) throws -> String {
        let program = "/usr/bin/zbarimg"
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw XCTSkip("zbarimg is not installed (scripts/setup installs zbar-tools)")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = ["--quiet", "--raw", png]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func booth(_ status: [String: Any]) -> [String: Any] { status["booth"] as? [String: Any] ?? [:] }

    /// Keeps a screen in the build directory for people to look at.
    private func keep(_ png: String, as name: String) {
        let target = DaemonHarness.packageRoot + "/.build/" + name
        try? FileManager.default.removeItem(atPath: target)
        try? FileManager.default.copyItem(atPath: png, toPath: target)
    }

    func testASessionOfTwoShotsEndsInACollageWhoseQRCodeOpensItsPage() throws {
        let d = try DaemonHarness(stillWidth: 640, stillHeight: 480, extraConfig: """
            "mode": "photobooth", "booth": { "countdownSeconds": 1, "shots": 2, "layout": "grid", "reviewSeconds": 60 },
              "web": { "enabled": true, "address": "127.0.0.1", "port": 0 }
            """)
        try d.start()
        defer { d.stop() }
        let idle = try d.request(#"{"cmd":"status"}"#)
        XCTAssertEqual(booth(idle)["phase"] as? String, "attract", "\(idle)")
        let gallery = try XCTUnwrap(idle["web"] as? String)

        // The idle screen: its QR code is the gallery's address.
        let attract = d.directory + "/attract.png"
        XCTAssertEqual(try d.request(#"{"cmd":"snapshot","path":"\#(attract)"}"#)["ok"] as? Bool, true)
        XCTAssertEqual(try zbar(attract), gallery, "the idle screen's QR code")
        keep(attract, as: "booth-attract.png")

        let press = try d.request(#"{"cmd":"capture"}"#)
        XCTAssertEqual(press["ok"] as? Bool, true, "\(press)")
        XCTAssertEqual(press["booth"] as? String, "countdown", "the button starts the countdown: \(press)")
        let countdownScreen = d.directory + "/countdown.png"
        XCTAssertEqual(try d.request(#"{"cmd":"snapshot","path":"\#(countdownScreen)"}"#)["ok"] as? Bool, true)
        keep(countdownScreen, as: "booth-countdown.png")
        let counting = booth(try d.request(#"{"cmd":"status"}"#))
        XCTAssertEqual(counting["shot"] as? Int, 1, "\(counting)")
        XCTAssertEqual(counting["countdown"] as? Int, 1, "\(counting)")

        let review = try d.waitForStatus(timeout: 120) { self.booth($0)["phase"] as? String == "review" }
        let session = booth(review)
        XCTAssertEqual(session["phase"] as? String, "review", "\(review)\n\(d.log())")
        let taken = session["taken"] as? [String] ?? []
        XCTAssertEqual(taken.map { ($0 as NSString).lastPathComponent }, ["LPX_0001.HEIC", "LPX_0002.HEIC"])
        // The photo is the first frame the sensor began exposing at or after the countdown's end,
        // whatever the machine's load: the simulated sensor keeps its last frames as a real one
        // keeps its buffers (30 fps; its timestamps are the sensor's, not when a thread ran).
        let latency = try XCTUnwrap(session["triggerLatencyMs"] as? Double)
        let exposure = try XCTUnwrap(session["exposureOffsetMs"] as? Double)
        XCTAssertGreaterThanOrEqual(exposure, 0, "never a frame exposed before the countdown's end")
        XCTAssertLessThan(exposure, 1000.0 / 30, "the frame exposed at the countdown's end, not a later one")
        print("booth: countdown end to shot \(latency) ms, to the exposure \(exposure) ms")

        // The collage: both shots side by side (grid), on paper, saved as the next photo.
        let collagePath = try XCTUnwrap(session["lastCollage"] as? String)
        XCTAssertTrue(collagePath.hasSuffix("/LPX_0003.HEIC"), collagePath)
        let collage = try ImageReader.readPhoto(path: collagePath).image
        XCTAssertEqual(collage.width, 2 * 640 + 3 * 26, "two columns of 640 with 26 px margins")
        XCTAssertGreaterThan(collage.height, 480 + 2 * 26)
        XCTAssertGreaterThan(collage.pixels[0], 240, "paper white in the corner")

        // The review screen's QR code opens the collage's page in the gallery.
        let shown = d.directory + "/review.png"
        XCTAssertEqual(try d.request(#"{"cmd":"snapshot","path":"\#(shown)"}"#)["ok"] as? Bool, true)
        keep(shown, as: "booth-review.png")
        let url = try zbar(shown)
        XCTAssertEqual(url, gallery + "photo/100LOOPX/LPX_0003.HEIC")
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-s", "--max-time", "30", url]
        let out = Pipe()
        curl.standardOutput = out
        try curl.run()
        let page = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        curl.waitUntilExit()
        XCTAssertTrue(page.contains("id=\"photo\"") && page.contains("LPX_0003.HEIC"), page)

        // Booth off: the shutter takes a photo at once again.
        XCTAssertEqual(try d.request(#"{"cmd":"booth","value":false}"#)["booth"] as? Bool, false)
        let photo = try d.request(#"{"cmd":"capture"}"#)
        XCTAssertEqual((photo["path"] as? String).map { ($0 as NSString).lastPathComponent }, "LPX_0004.HEIC", "\(photo)")
        XCTAssertNil(try d.request(#"{"cmd":"status"}"#)["booth"])
    }

    /// Printing through a real cupsd (the test's own, with a file-backed printer): each session
    /// is printed once as JPEG; a printer stopped with "media-empty" shows "Printer needs
    /// attention" while the booth keeps taking photos; enabled again, the waiting print comes out, once.
    func testTheBoothPrintsEachSessionOnceAndWaitsForAPrinterThatNeedsAttention() throws {
        let cups: TestCUPS
        do { cups = try TestCUPS() } catch let missing as TestCUPS.Unavailable { throw XCTSkip(missing.reason) }
        defer { cups.stop() }
        try cups.addPrinter("booth")
        let d = try DaemonHarness(extraConfig: #""mode": "photobooth", "booth": { "countdownSeconds": 0, "reviewSeconds": 1, "print": "auto", "printer": "booth" }"#)
        try d.start(environment: ["CUPS_SERVER": cups.socket])
        defer { d.stop() }
        func printing(_ s: [String: Any]) -> [String: Any] { booth(s)["printing"] as? [String: Any] ?? [:] }

        XCTAssertEqual(try d.request(#"{"cmd":"capture"}"#)["ok"] as? Bool, true)
        let first = try d.waitForStatus(timeout: 60) { printing($0)["printed"] as? Int == 1 }
        XCTAssertEqual(printing(first)["printed"] as? Int, 1, "\(first)\n\(d.log())\n\(cups.log())")
        let jpeg1 = d.photos + "/DCIM/100LOOPX/LPX_0001.JPG"
        XCTAssertEqual(cups.output("booth"), FileManager.default.contents(atPath: jpeg1), "the photo's JPEG went to the printer")

        XCTAssertEqual(try cups.run("/usr/sbin/cupsdisable", ["-r", "media-empty", "booth"]).status, 0)
        let trouble = try d.waitForStatus(timeout: 20) { printing($0)["attention"] != nil }
        XCTAssertTrue((printing(trouble)["attention"] as? String)?.hasPrefix("Printer needs attention") == true, "\(trouble)")
        _ = try d.waitForStatus(timeout: 10) { self.booth($0)["phase"] as? String == "attract" }
        let screen = d.directory + "/printer.png"
        XCTAssertEqual(try d.request(#"{"cmd":"snapshot","path":"\#(screen)"}"#)["ok"] as? Bool, true)
        keep(screen, as: "booth-printer.png")
        XCTAssertEqual(try d.request(#"{"cmd":"capture"}"#)["ok"] as? Bool, true, "the booth keeps taking photos")
        let waiting = try d.waitForStatus(timeout: 60) { $0["saved"] as? Int == 2 && printing($0)["pending"] as? Int == 1 }
        XCTAssertEqual(printing(waiting)["pending"] as? Int, 1, "\(waiting)")
        XCTAssertEqual(printing(waiting)["printed"] as? Int, 1)

        XCTAssertEqual(try cups.run("/usr/sbin/cupsenable", ["booth"]).status, 0)
        let back = try d.waitForStatus(timeout: 60) { printing($0)["printed"] as? Int == 2 && printing($0)["attention"] == nil }
        XCTAssertEqual(printing(back)["printed"] as? Int, 2, "\(back)\n\(cups.log())")
        XCTAssertEqual(cups.output("booth"), FileManager.default.contents(atPath: d.photos + "/DCIM/100LOOPX/LPX_0002.JPG"))
        Thread.sleep(forTimeInterval: 3)
        XCTAssertEqual(try cups.completedJobs("booth"), 2, "each session printed once")
    }

    /// Without a countdown the press takes the shot at once; the booth refuses video.
    func testWithoutACountdownThePressIsTheShot() throws {
        let d = try DaemonHarness(extraConfig: #""mode": "photobooth", "booth": { "countdownSeconds": 0, "reviewSeconds": 2 }"#)
        try d.start()
        defer { d.stop() }
        let press = try d.request(#"{"cmd":"capture"}"#)
        XCTAssertEqual((press["path"] as? String).map { ($0 as NSString).lastPathComponent }, "LPX_0001.HEIC", "\(press)")
        let latency = booth(try d.request(#"{"cmd":"status"}"#))["triggerLatencyMs"] as? Double
        XCTAssertLessThan(try XCTUnwrap(latency), 5, "taken in the press's own turn")
        XCTAssertEqual(try d.request(#"{"cmd":"mode","value":"video"}"#)["ok"] as? Bool, false)
        let reviewed = try d.waitForStatus(timeout: 60) { self.booth($0)["phase"] as? String == "review" }
        XCTAssertEqual(booth(reviewed)["phase"] as? String, "review", d.log())
        let idle = try d.waitForStatus(timeout: 10) { self.booth($0)["phase"] as? String == "attract" }
        XCTAssertEqual(booth(idle)["phase"] as? String, "attract", "the review ends after reviewSeconds")
    }

    /// A template and `print: button`: two shots go into the template's holes under its frame;
    /// the review asks for a press to print; the first press prints the collage once, the next
    /// starts a new session.
    func testATemplateCollageIsPrintedWhenTheGuestPressesTheButton() throws {
        let cups: TestCUPS
        do { cups = try TestCUPS() } catch let missing as TestCUPS.Unavailable { throw XCTSkip(missing.reason) }
        defer { cups.stop() }
        try cups.addPrinter("booth")
        // A 600×400 card: an opaque dark frame with two 260×260 holes.
        let templates = try makeTempDirectory(self)
        var frame = RGBImage(width: 600, height: 400)
        var alpha = [UInt8](repeating: 255, count: 600 * 400)
        for i in 0..<(600 * 400) {
            frame.pixels[3 * i] = 30
            frame.pixels[3 * i + 1] = 30
            frame.pixels[3 * i + 2] = 90
            let x = i % 600, y = i / 600
            if (40..<300).contains(y) && ((20..<280).contains(x) || (320..<580).contains(x)) { alpha[i] = 0 }
        }
        try ImageWriter.writePNG(frame, alpha: alpha, to: templates + "/card.png")
        try #"{ "image": "card.png", "holes": [ {"x":20,"y":40,"width":260,"height":260}, {"x":320,"y":40,"width":260,"height":260} ] }"#
            .write(toFile: templates + "/card.json", atomically: true, encoding: .utf8)
        let d = try DaemonHarness(extraConfig: """
            "mode": "photobooth", "booth": { "countdownSeconds": 1, "shots": 2, "reviewSeconds": 60, "print": "button",
              "printer": "booth", "template": "\(templates)/card.json" }
            """)
        try d.start(environment: ["CUPS_SERVER": cups.socket])
        defer { d.stop() }
        func printing(_ s: [String: Any]) -> [String: Any] { booth(s)["printing"] as? [String: Any] ?? [:] }

        XCTAssertEqual(try d.request(#"{"cmd":"capture"}"#)["ok"] as? Bool, true)
        let review = try d.waitForStatus(timeout: 120) { self.booth($0)["phase"] as? String == "review" }
        let collagePath = try XCTUnwrap(booth(review)["lastCollage"] as? String, "\(review)\n\(d.log())")
        let collage = try ImageReader.read(path: collagePath)
        XCTAssertEqual([collage.width, collage.height], [600, 400], "the template's size")
        let corner = Array(collage.pixels[0..<3]).map(Int.init)
        XCTAssertTrue(zip(corner, [30, 30, 90]).allSatisfy { abs($0 - $1) <= 6 }, "the frame covers the corner: \(corner)")
        let centre = ((170 * 600) + 150) * 3
        XCTAssertNotEqual(Array(collage.pixels[centre..<(centre + 3)]).map(Int.init), corner, "a shot shows through the hole")
        XCTAssertEqual(printing(review)["printed"] as? Int, 0)
        XCTAssertEqual(printing(review)["pending"] as? Int, 0, "nothing is printed unasked")
        let screen = d.directory + "/print-prompt.png"
        XCTAssertEqual(try d.request(#"{"cmd":"snapshot","path":"\#(screen)"}"#)["ok"] as? Bool, true)
        keep(screen, as: "booth-print-prompt.png")

        XCTAssertEqual(try d.request(#"{"cmd":"capture"}"#)["booth"] as? String, "review", "the first press prints")
        let printed = try d.waitForStatus(timeout: 60) { printing($0)["printed"] as? Int == 1 }
        XCTAssertEqual(printing(printed)["printed"] as? Int, 1, "\(printed)\n\(cups.log())")
        let jpeg = (collagePath as NSString).deletingPathExtension + ".JPG"
        XCTAssertEqual(cups.output("booth"), FileManager.default.contents(atPath: jpeg), "the collage's JPEG went to the printer")
        XCTAssertEqual(try d.request(#"{"cmd":"capture"}"#)["booth"] as? String, "countdown", "the next press starts a session")
        Thread.sleep(forTimeInterval: 2)
        XCTAssertEqual(try cups.completedJobs("booth"), 1, "printed once")
    }
}
