import Camera
import Controls
import Display
import FilmCore
import Foundation
import Video
import XCTest
import ControlProtocol
@testable import Appliance
import Recording
import Raster

/// Runs a controller's loop on a thread of its own, as the daemon's main thread does. The test
/// must leave the controller alone until `stop()` has returned (the loop has ended): that is
/// what makes the unchecked conformance hold.
final class ControllerRun: @unchecked Sendable {
    let controller: Controller
    private let finished = DispatchSemaphore(value: 0)

    init(_ controller: Controller) {
        self.controller = controller
        Thread.detachNewThread { [self] in
            self.controller.run()
            finished.signal()
        }
    }

    /// Asks the loop to stop and waits for it (at most 10 s).
    func stop() -> Bool {
        controller.handle.requestStop()
        return finished.wait(timeout: .now() + 10) == .success
    }
}

/// A display that remembers what it showed and hands the controller scripted input, as
/// buttons, the encoder or a window's keyboard would.
final class ScriptedDisplay: DisplaySink, @unchecked Sendable {
    let name = "scripted"
    let width: Int, height: Int
    private let lock = NSLock()
    private var queued: [InputEvent] = []
    private(set) var frames = 0
    private var wrongSize = 0
    private var last: RGBImage?
    var closeRequested: Bool { false }

    init(width: Int = 240, height: Int = 160) {
        self.width = width
        self.height = height
    }

    func show(_ frame: RGBImage) throws {
        lock.lock()
        frames += 1
        last = frame
        if frame.width != width || frame.height != height { wrongSize += 1 }
        lock.unlock()
    }

    /// Frames shown whose size was not the display's.
    var framesOfWrongSize: Int {
        lock.lock()
        defer { lock.unlock() }
        return wrongSize
    }

    func pollEvents() -> [InputEvent] {
        lock.lock()
        defer { lock.unlock() }
        let events = queued
        queued.removeAll()
        return events
    }

    func press(_ events: InputEvent...) {
        lock.lock()
        queued += events
        lock.unlock()
    }

    /// The frame shown last (a copy).
    var lastFrame: RGBImage? {
        lock.lock()
        defer { lock.unlock() }
        return last
    }

    var framesShown: Int {
        lock.lock()
        defer { lock.unlock() }
        return frames
    }
}

final class ControllerTests: XCTestCase {
    private func temporaryConfig() -> Config {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("loopix-ctl-\(UUID().uuidString.prefix(8))").path
        var config = Config.defaults
        config.storage.directory = dir + "/photos"
        config.storage.reserveMB = 0
        config.state.directory = dir + "/state"
        return config
    }

    /// Started headless because no screen was connected, the preview moves onto one that
    /// appears later, at that display's size, and stops looking once it has one.
    func testHeadlessPreviewMovesOntoADisplayThatAppears() throws {
        let camera = SimulatedCamera(stillWidth: 160, stillHeight: 120)
        let screen = ScriptedDisplay()
        let lock = NSLock()
        var probes = 0, plugged = false
        func locked<T>(_ body: () -> T) -> T { lock.lock(); defer { lock.unlock() }; return body() }
        let find: () -> (display: DisplaySink, inputs: [InputSource])? = {
            locked {
                probes += 1
                return plugged ? (screen, []) : nil
            }
        }
        let controller = Controller(config: temporaryConfig(), configPath: nil,
                                    devices: .init(camera: camera, faults: camera, display: try HeadlessDisplay(width: 320, height: 200),
                                                   motion: nil, findDisplay: find))
        let run = ControllerRun(controller)
        func waitFor(_ what: String, seconds: Double, _ condition: () -> Bool) {
            let deadline = Date().addingTimeInterval(seconds)
            while !condition() && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            XCTAssertTrue(condition(), what)
        }
        waitFor("the headless preview looks for a display", seconds: 10) { locked { probes } >= 2 }
        XCTAssertEqual(screen.framesShown, 0)
        locked { plugged = true }
        waitFor("frames reach the display that appeared", seconds: 10) { screen.framesShown > 5 }
        XCTAssertEqual(screen.framesOfWrongSize, 0, "frames are composed at the new display's size")
        let probesOnceFound = locked { probes }
        Thread.sleep(forTimeInterval: PreviewPipeline.displayProbeInterval + 0.5)
        XCTAssertEqual(locked { probes }, probesOnceFound, "no more looking once a display is in use")
        XCTAssertTrue(run.stop())
        controller.shutdown(timeout: 30)
    }

    func testButtonsFollowHandednessFromTheFirstPressOn() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("loopix-ctl-\(UUID().uuidString.prefix(8))").path
        var config = Config.defaults
        config.storage.directory = dir + "/photos"
        config.storage.reserveMB = 0
        config.state.directory = dir + "/state"
        let camera = SimulatedCamera(stillWidth: 160, stillHeight: 120)
        let display = ScriptedDisplay()
        let controller = Controller(config: config, configPath: nil,
                                    devices: .init(camera: camera, faults: camera, display: display, motion: nil))
        let run = ControllerRun(controller)
        func photos() -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: dir + "/photos/DCIM/100LOOPX")) ?? []).filter { $0.hasSuffix(".HEIC") }.count
        }
        func waitFor(_ what: String, _ condition: () -> Bool) {
            let deadline = Date().addingTimeInterval(30)
            while !condition() && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            XCTAssertTrue(condition(), what)
        }
        waitFor("frames reach the display") { display.framesShown > 3 }
        // First start: the right button, pressed first, becomes the shutter; nothing is taken.
        display.press(.rightButton)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(photos(), 0)
        display.press(.rightButton)
        waitFor("the right button takes a photo") { photos() == 1 }
        // The left button is next-filter; then handedness swaps them.
        display.press(.leftButton)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(photos(), 1)
        display.press(.handedness, .leftButton)
        waitFor("after the swap the left button is the shutter") { photos() == 2 }
        display.press(.rightButton)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(photos(), 2, "and the right one is not")
        XCTAssertTrue(run.stop())
        controller.shutdown(timeout: 30)
        XCTAssertEqual(controller.state.handedness, .left)
        XCTAssertEqual(controller.state.presetID, BuiltinPresets.all[BuiltinPresets.all.firstIndex { $0.id == "portra" }! + 2].id,
                       "two next-filter presses from the default look")
    }
}

/// Recording with an encoder that cannot keep up: frames are dropped (counted), the preview
/// keeps its rate and the clip's duration stays true to the time it covered.
final class ControllerVideoTests: XCTestCase {
    private func ask(_ controller: Controller, _ request: ControlRequest) -> ControlReply? {
        let pending = PendingRequest(request, deadline: .after(seconds: 10))
        controller.handle.submit(pending)
        let deadline = Date().addingTimeInterval(10)
        while pending.reply == nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        return pending.reply
    }

    func testASlowEncoderDropsFramesNotThePreview() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("loopix-rec-\(UUID().uuidString.prefix(8))").path
        var config = Config.defaults
        config.storage.directory = dir + "/photos"
        config.storage.reserveMB = 0
        config.state.directory = dir + "/state"
        config.video.width = 160
        config.video.height = 120
        config.video.encoder = .libx264
        config.video.x264Preset = "ultrafast"
        let camera = SimulatedCamera(stillWidth: 160, stillHeight: 120)
        let display = ScriptedDisplay()
        let controller = Controller(config: config, configPath: nil,
                                    devices: .init(camera: camera, faults: camera, display: display, motion: nil))
        // 200 ms a frame: six times slower than the camera.
        controller.openRecorder = { path, settings, metadata, start throws(VideoError) in
            try Recorder(path: path, settings: settings, metadata: metadata, encoderName: "libx264", startNs: start, encodeDelay: 0.2)
        }
        let run = ControllerRun(controller)
        let deadline = Date().addingTimeInterval(30)
        while display.framesShown < 10 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let started = try XCTUnwrap(ask(controller, .record(.start)))
        XCTAssertTrue(started.ok, "\(started.jsonLine)")
        let shownBefore = display.framesShown
        let t0 = Date()
        Thread.sleep(forTimeInterval: 3)
        let shown = Double(display.framesShown - shownBefore) / Date().timeIntervalSince(t0)
        let recorded = Date().timeIntervalSince(t0)
        let stopped = try XCTUnwrap(ask(controller, .record(.stop)))
        XCTAssertTrue(run.stop())
        controller.shutdown(timeout: 30)
        XCTAssertGreaterThan(shown, 20, "the preview kept its pace (\(shown) frames a second) while the encoder fell behind")
        let path = try XCTUnwrap(stopped.fields["path"].flatMap { if case .string(let p) = $0 { return p } else { return nil } })
        let (status, out, err) = try runTool("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-show_entries",
                                                                  "stream=nb_read_frames:format=duration", "-of", "json", path])
        XCTAssertEqual(status, 0, err)
        let json = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any] ?? [:]
        let duration = Double((json["format"] as? [String: Any])?["duration"] as? String ?? "") ?? 0
        let frames = Int(((json["streams"] as? [[String: Any]])?.first?["nb_read_frames"] as? String) ?? "") ?? 0
        XCTAssertEqual(duration, recorded, accuracy: 0.4, "the clip lasts as long as it recorded")
        XCTAssertLessThan(Double(frames), recorded * 10, "\(frames) frames: most were dropped")
        XCTAssertGreaterThan(frames, 5)
    }
}
