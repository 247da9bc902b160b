import Controls
import Display
import Viewfinder
import FilmCore
import Foundation
import ImageFiles
import XCTest
import Raster

/// KMSDisplay on vkms (card0, connector Virtual-1) inside the HIL VM.
final class KMSDisplayTests: XCTestCase {
    private let card = "/dev/dri/card0"
    private let connector = "Virtual-1"

    private func open(_ rotation: ScreenRotation = .none, flip: FlipAPI = .auto) throws -> KMSDisplay {
        try requireHIL()
        return try KMSDisplay(KMSConfiguration(connector: connector, rotation: rotation, cards: [card], flip: flip))
    }

    private func gray(_ display: KMSDisplay, _ level: UInt8 = 90) -> RGBImage {
        var image = RGBImage(width: display.width, height: display.height)
        image.pixels.withUnsafeMutableBufferPointer { $0.update(repeating: level) }
        return image
    }

    func testModeSet() throws {
        let display = try open()
        XCTAssertTrue(display.isConnected)
        XCTAssertEqual(display.connectorName, connector)
        XCTAssertTrue(display.name.contains("Virtual-1"), display.name)
        XCTAssertGreaterThan(display.width, 0)
        XCTAssertGreaterThan(display.refreshRate, 10)
        XCTAssertTrue(display.usesAtomic, "vkms is an atomic driver: \(display.name)")
        XCTAssertTrue(display.name.hasSuffix(" atomic"), display.name)
        try display.show(gray(display))
        XCTAssertTrue(display.isConnected)
    }

    func test300AtomicFlipsWithoutMissedFrames() throws { try flips(.atomic) }
    func test300LegacyFlipsWithoutMissedFrames() throws { try flips(.legacy) }

    private func flips(_ api: FlipAPI) throws {
        let display = try open(flip: api)
        XCTAssertEqual(display.usesAtomic, api == .atomic, display.name)
        var frame = gray(display)
        for i in 0..<300 {
            frame.pixels[0] = UInt8(i & 0xFF)
            try display.show(frame)
        }
        _ = display.withScreenBuffer { _, _, _, _ in 0 } // waits for the last flip
        XCTAssertTrue(display.isConnected)
        XCTAssertGreaterThanOrEqual(display.flipsCompleted, 299)
        // Under software emulation the guest's vCPUs are host threads on a shared machine: one
        // descheduled for a refresh period makes a flip late that our code queued in time.
        // Five in a hundred are allowed there and reported (runs here miss 3 or 4 of 300; a
        // flip queued after its vblank every time would miss most); with KVM, none.
        let allowed = ProcessInfo.processInfo.environment["LOOPIX_HIL_ACCEL"] == "tcg" ? 15 : 0
        print("flips (\(api)): \(display.flipsCompleted) completed, \(display.missedFrames) missed (\(allowed) allowed)")
        XCTAssertLessThanOrEqual(display.missedFrames, allowed, "flips that completed more than a refresh period after being queued")
    }

    /// What is scanned out (the buffer on screen, read back through its mapping) shows the grid
    /// and the look's name where OverlayLayout says they are.
    func testOverlayIsOnScreenAtItsPixels() throws {
        let display = try open()
        var model = OverlayModel()
        model.grid = true
        model.presetName = "Kodak Portra 400"
        var frame = gray(display, 60)
        var renderer = OverlayRenderer(width: display.width, height: display.height)
        renderer.draw(model, on: &frame)
        let layout = renderer.layout
        try display.show(frame)
        let rects = layout.gridLines + [try XCTUnwrap(layout.presetName)]
        let checked: (mismatches: Int, marked: Int)? = display.withScreenBuffer { raw, pitch, _, _ in
            var mismatches = 0, marked = 0
            for rect in rects {
                for y in rect.y..<(rect.y + rect.height) {
                    for x in rect.x..<(rect.x + rect.width) {
                        let o = y * pitch + x * 4
                        let i = (y * frame.width + x) * 3
                        let shown = (raw[o + 2], raw[o + 1], raw[o])
                        let want = (frame.pixels[i], frame.pixels[i + 1], frame.pixels[i + 2])
                        if shown != want { mismatches += 1 }
                        if shown != (60, 60, 60) { marked += 1 }
                    }
                }
            }
            return (mismatches, marked)
        }
        let result = try XCTUnwrap(checked, "nothing on screen")
        XCTAssertEqual(result.mismatches, 0)
        XCTAssertGreaterThan(result.marked, 100, "grid lines and the name are drawn")
    }

    func testAnotherMasterIsAClearError() throws {
        let first = try open()
        XCTAssertThrowsError(try KMSDisplay(KMSConfiguration(connector: connector, cards: [card]))) { error in
            XCTAssertTrue("\(error)".hasPrefix("/dev/dri/card0: another program holds the display (DRM master):"), "\(error)")
        }
        XCTAssertTrue(first.isConnected)
    }

    /// Forcing the connector off pauses the preview (show returns, no error); forcing it on
    /// again resumes it.
    func testConnectorOffAndOnIsSurvived() throws {
        let display = try open()
        let status = "/sys/class/drm/card0-\(connector)/status"
        defer { try? "detect".write(toFile: status, atomically: false, encoding: .utf8) }
        let frame = gray(display)
        try display.show(frame)
        try "off".write(toFile: status, atomically: false, encoding: .utf8)
        let start = Date()
        while display.isConnected && Date().timeIntervalSince(start) < 5 {
            try display.show(frame)
            usleep(20_000)
        }
        XCTAssertFalse(display.isConnected, "still connected 5 s after the connector was forced off")
        try display.show(frame) // returns at once, no throw
        try "on".write(toFile: status, atomically: false, encoding: .utf8)
        let back = Date()
        while !display.isConnected && Date().timeIntervalSince(back) < 5 {
            try display.show(frame)
            usleep(20_000)
        }
        XCTAssertTrue(display.isConnected, "not reconnected 5 s after the connector was forced on")
        XCTAssertEqual(display.reconnections, 1)
        let flips = display.flipsCompleted
        for _ in 0..<10 { try display.show(frame) }
        XCTAssertGreaterThan(display.flipsCompleted, flips)
    }

    /// loopixd started while the screen is unplugged runs headless; once the connector comes
    /// on, the preview moves onto it (status names the KMS display), and it keeps answering.
    func testTheDaemonTakesUpADisplayConnectedAfterItStarted() throws {
        try requireHIL()
        let status = "/sys/class/drm/card0-\(connector)/status"
        try "off".write(toFile: status, atomically: false, encoding: .utf8)
        defer { try? "detect".write(toFile: status, atomically: false, encoding: .utf8) }
        let daemon = try BenchDaemon(name: "hotplug", sections: """
            "camera": { "backend": "simulated" },
            "display": { "backend": "kms", "connector": "\(connector)", "mode": "640x480", "width": 320, "height": 240 }
            """)
        let headless = try daemon.waitForStatus(seconds: 60) { $0.contains("\"display\": \"headless") }
        XCTAssertTrue(headless.contains("\"display\": \"headless"), "runs headless with the connector off: \(headless)")
        try "on".write(toFile: status, atomically: false, encoding: .utf8)
        let kms = "\"display\": \"KMS /dev/dri/card0 \(connector) "
        let shown = try daemon.waitForStatus(seconds: 30) { $0.contains(kms) }
        XCTAssertTrue(shown.contains(kms), "the preview moved onto the display: \(shown)")
        // Composed at the display's size now. (A debug build under emulation takes over a
        // second a frame at this size, so the camera's "ok" — a frame within the last second —
        // is not waited for here; ControllerTests covers the camera at the new size.)
        let snapshot = daemon.directory + "/preview.png"
        let taken = try daemon.ctl(["snapshot", snapshot, "--timeout", "30"])
        XCTAssertEqual(taken.status, 0, taken.output)
        let frame = try ImageReader.read(path: snapshot)
        XCTAssertEqual([frame.width, frame.height], [640, 480], "the preview is composed at the mode's size")
        let preset = try daemon.ctl(["preset", "mono", "--timeout", "30"])
        XCTAssertEqual(preset.status, 0, preset.output)
    }
}
