import BoardIO
import Foundation
import System
import XCTest

/// The trigger input on the bench's real drivers: a gpio-sim line pulled low is the edge (its
/// kernel timestamp on CLOCK_MONOTONIC, the clock the cameras' frame timestamps are on); the
/// daemon takes the photo from that moment on and says how far its exposure was from the edge.
final class TriggerHILTests: XCTestCase {
    /// Pulls the trigger line low (and high again) and returns the daemon's
    /// triggerExposureOffsetMs for the photo it took, nil when it took none in `seconds`.
    private func trigger(_ daemon: BenchDaemon, pull: String, seconds: Double) throws -> Double? {
        try "pull-down".write(toFile: pull, atomically: false, encoding: .utf8)
        Thread.sleep(forTimeInterval: 0.05)
        try "pull-up".write(toFile: pull, atomically: false, encoding: .utf8)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let offset = try daemon.status().fields?["triggerExposureOffsetMs"] as? Double { return offset }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return nil
    }

    private func daemon(_ name: String, camera: String, boards: String, line: Int) throws -> BenchDaemon {
        try BenchDaemon(name: name, sections: """
            "board": "bench", "boardsDirectory": "\(boards)", "imu": { "enabled": false },
            "capture": { "trigger": { "line": \(line), "edge": "falling", "debounceMs": 10 } },
            "camera": \(camera), "display": { "backend": "headless", "width": 160, "height": 120 }
            """)
    }

    func testATriggerEdgeTakesThePhotoFromItsMomentOn() throws {
        try Bench.require("/dev/media0")
        let sysfs = try Bench.value("LOOPIX_HIL_GPIO_SYSFS")
        let boards = FileManager.default.temporaryDirectory.appendingPathComponent("trigger-boards-\(UUID().uuidString.prefix(8))").path
        try Bench.writeBoardFile(in: boards)
        defer { try? FileManager.default.removeItem(atPath: boards) }
        let line = try GPIOChipInfo.findLine(named: "trigger").offset
        let pull = "\(sysfs)/sim_gpio\(line)/pull"
        try "pull-up".write(toFile: pull, atomically: false, encoding: .utf8)

        // The simulated camera (30 fps) read through the real trigger line.
        let simulated = try daemon("trigger-sim", camera: #"{ "backend": "simulated", "simulatedStillWidth": 320, "simulatedStillHeight": 240 }"#,
                                   boards: boards, line: line)
        let simReady = try simulated.waitForStatus(seconds: 60) { $0.contains("\"camera\": \"ok\"") }
        XCTAssertTrue(simReady.contains("\"camera\": \"ok\""), simReady)
        let simOffset = try XCTUnwrap(try trigger(simulated, pull: pull, seconds: 30), "the edge took a photo")
        XCTAssertGreaterThanOrEqual(simOffset, 0, "not a frame from before the edge")
        XCTAssertLessThan(simOffset, 1000.0 / 30 + 1, "the first frame exposed from the edge on: within a frame period")
        kill(simulated.process.processIdentifier, SIGKILL)
        simulated.process.waitUntilExit()

        // vimc through libcamera: one stream, reconfigured for the still after the edge.
        let vimc = try daemon("trigger-vimc", camera: #"{ "backend": "libcamera", "required": true }"#, boards: boards, line: line)
        defer { kill(vimc.process.processIdentifier, SIGKILL) }  // not minutes developing a 9 MP still
        let ready = try vimc.waitForStatus(seconds: 60) { $0.contains("\"camera\": \"ok\"") }
        XCTAssertTrue(ready.contains("\"camera\": \"ok\""), ready)
        let vimcOffset = try XCTUnwrap(try trigger(vimc, pull: pull, seconds: 60), "the edge took a photo")
        XCTAssertGreaterThanOrEqual(vimcOffset, 0, "exposed after the edge")
        print("hil: trigger edge to exposure: simulated camera \(simOffset) ms (30 fps), vimc \(vimcOffset) ms " +
              "(accelerator \(ProcessInfo.processInfo.environment["LOOPIX_HIL_ACCEL"] ?? "?"))")
    }
}
