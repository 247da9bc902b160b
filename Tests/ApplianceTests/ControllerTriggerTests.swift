import Camera
import Display
import Foundation
import System
import XCTest
@testable import Appliance

/// A trigger edge, as the GPIO trigger input delivers it (its kernel time), on the simulated
/// camera: the photo is a frame of that moment, and its EXIF, read by exiftool, carries the
/// trigger's time to the microsecond and the exposure's distance from it.
final class ControllerTriggerTests: XCTestCase {
    func testATriggerTakesTheFrameOfItsEdgeAndStampsItsTime() throws {
        guard let exiftool = ["/usr/bin/exiftool", "/usr/local/bin/exiftool"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("exiftool is not installed (scripts/setup installs libimage-exiftool-perl)")
        }
        let dir = try makeTempDirectory(self)
        var config = testConfig(in: dir)
        config.capture.format = .jpeg
        let camera = SimulatedCamera(stillWidth: 160, stillHeight: 120, framesPerSecond: 30)
        let display = ScriptedDisplay()
        let controller = Controller(config: config, configPath: nil, devices: .init(camera: camera, faults: camera, display: display, motion: nil))
        let run = ControllerRun(controller)
        let deadline = Date().addingTimeInterval(60)
        while display.framesShown < 5 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        // The edge came 20 ms ago (the reading thread and the loop take their time).
        let edge = MonotonicClock.now() - 20_000_000
        let wallAtEdge = Date().timeIntervalSince1970 - 0.020
        display.press(.trigger(atNs: edge))
        let photo = dir + "/photos/DCIM/100LOOPX/LPX_0001.JPG"
        while !FileManager.default.fileExists(atPath: photo) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertTrue(run.stop())
        controller.shutdown(timeout: 30)
        XCTAssertTrue(FileManager.default.fileExists(atPath: photo), "the trigger took a photo")

        let p = Process()
        p.executableURL = URL(fileURLWithPath: exiftool)
        p.arguments = ["-s", "-s", "-s", "-d", "%s", "-DateTimeOriginal", "-SubSecTimeOriginal", "-UserComment", photo]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let lines = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").map(String.init)
        p.waitUntilExit()
        XCTAssertEqual(lines.count, 3, "\(lines)")
        guard lines.count == 3, let seconds = Double(lines[0]), let micro = Double(lines[1]) else { return }
        XCTAssertEqual(lines[1].count, 6, "microseconds")
        XCTAssertEqual(seconds + micro / 1e6, wallAtEdge, accuracy: 0.005, "the photo's time is the edge's")
        let comment = lines[2]
        XCTAssertTrue(comment.hasPrefix("Loopix trigger: exposure "), comment)
        let offset = Double(comment.dropFirst("Loopix trigger: exposure ".count).split(separator: " ")[0]) ?? .nan
        // The simulated sensor's still stream keeps its last frames: however late the loop
        // takes the event (the press here comes 20 ms after the edge), the photo is the first
        // frame exposed from the edge on.
        XCTAssertGreaterThanOrEqual(offset, 0, "not a frame from before the edge: \(comment)")
        XCTAssertLessThan(offset, 1000.0 / 30 + 1, "within a frame period of the edge: \(comment)")
        print("trigger on the simulated camera: \(comment)")
    }
}
