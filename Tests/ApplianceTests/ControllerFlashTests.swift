import Camera
import Display
import Foundation
import XCTest
@testable import Appliance

/// The booth's flash as the controller drives it, against the moments the camera takes its
/// stills: on for each exposure (`exposure`), or from the press to the last shot (`session`).
final class ControllerFlashTests: XCTestCase {
    /// Records the flash's switching and the camera's stills in one list, in order.
    final class Timeline: FlashLight, @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [String] = []
        var failNext = false
        func set(_ on: Bool) throws {
            lock.lock()
            defer { lock.unlock() }
            if failNext {
                failNext = false
                throw GPIOFailure()
            }
            entries.append(on ? "on" : "off")
        }
        func still() {
            lock.lock()
            entries.append("still")
            lock.unlock()
        }
        var log: [String] {
            lock.lock()
            defer { lock.unlock() }
            return entries
        }
        struct GPIOFailure: Error {}
    }

    private func runSession(flash mode: BoothSettings.FlashMode, shots: Int, countdown: Int, failFirst: Bool = false) throws -> [String] {
        let dir = try makeTempDirectory(self)
        var config = Config.defaults
        config.storage.directory = dir + "/photos"
        config.storage.reserveMB = 0
        config.state.directory = dir + "/state"
        config.photobooth = true
        config.booth.flash = mode
        config.booth.shots = shots
        config.booth.countdownSeconds = countdown
        config.booth.reviewSeconds = 60
        let camera = RecordingCamera()
        let timeline = Timeline()
        timeline.failNext = failFirst
        camera.onStill = { timeline.still() }
        let display = ScriptedDisplay()
        let controller = Controller(config: config, configPath: nil,
                                    devices: .init(camera: camera, faults: nil, display: display, motion: nil, flash: timeline))
        let run = ControllerRun(controller)
        let deadline = Date().addingTimeInterval(60)
        while display.framesShown < 3 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        display.press(.shutter)
        while timeline.log.filter({ $0 == "still" }).count < shots && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertTrue(run.stop())
        controller.shutdown(timeout: 30)
        return timeline.log
    }

    func testTheFlashIsOnForEachExposure() throws {
        XCTAssertEqual(try runSession(flash: .exposure, shots: 2, countdown: 1), ["on", "still", "off", "on", "still", "off"])
    }

    func testARingLightIsOnFromThePressToTheLastShot() throws {
        XCTAssertEqual(try runSession(flash: .session, shots: 2, countdown: 1), ["on", "still", "still", "off"])
    }

    func testWithoutAFlashModeTheLineIsNeverDriven() throws {
        XCTAssertEqual(try runSession(flash: .off, shots: 1, countdown: 0), ["still"])
    }

    /// A line that cannot be driven costs the light, not the photo: the shot is taken, and the
    /// next switch is tried again.
    func testAFlashThatFailsDoesNotStopTheShot() throws {
        XCTAssertEqual(try runSession(flash: .exposure, shots: 2, countdown: 1, failFirst: true), ["still", "on", "still", "off"])
    }
}
