import Camera
import ControlProtocol
import Controls
import Display
import FilmCore
import Foundation
import System
import XCTest
@testable import Appliance
import Raster

/// A camera that records what the controller asked of it (the simulated camera underneath).
final class RecordingCamera: CameraSource {
    let inner = SimulatedCamera(stillWidth: 160, stillHeight: 120)
    private(set) var starts: [Int] = []
    private(set) var controls: [CameraControls] = []
    var lenses: [Lens] { inner.lenses }
    func start(lens: Int, previewWidth: Int, previewHeight: Int) throws {
        starts.append(lens)
        try inner.start(lens: lens, previewWidth: previewWidth, previewHeight: previewHeight)
    }
    func stop() { inner.stop() }
    func setControls(_ c: CameraControls) {
        controls.append(c)
        inner.setControls(c)
    }
    func nextPreviewFrame(into frame: inout RGBImage, timeout: Double) throws -> FrameMetadata {
        try inner.nextPreviewFrame(into: &frame, timeout: timeout)
    }
    /// Called as each still is taken (its exposure), before it is returned.
    var onStill: (() -> Void)?
    func captureStill(notBefore: UInt64) throws -> CapturedStill {
        onStill?()
        return try inner.captureStill(notBefore: notBefore)
    }
    var stillsWhileStreaming: Bool { true }
    var offersRawStills: Bool { false }
}

/// Every input goes through one path: the same changes made by button events and by socket
/// requests give the same state and the same effects.
final class CommandPathTests: XCTestCase {
    private func makeController() throws -> (Controller, RecordingCamera, String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("loopix-path-\(UUID().uuidString.prefix(8))").path
        var config = Config.defaults
        config.storage.directory = dir + "/photos"
        config.storage.reserveMB = 0
        config.state.directory = dir + "/state"
        let camera = RecordingCamera()
        let controller = Controller(config: config, configPath: nil,
                                    devices: .init(camera: camera, faults: nil, display: try HeadlessDisplay(width: 160, height: 120), motion: nil))
        return (controller, camera, dir)
    }

    func testButtonsAndSocketRequestsChangeTheStateTheSameWay() throws {
        let presets = BuiltinPresets.all.map(\.id)
        let start = presets.firstIndex(of: "portra")!
        // The same intentions, once as buttons and the encoder, once as socket requests.
        let asEvents: [InputEvent] = [.rightButton, .nextFilter, .nextFilter, .encoderTurned(3), .nextLens, .grid, .handedness,
                                      .encoderPressed, .encoderTurned(-4)]
        let asRequests: [ControlRequest] = [.handedness(.right), .preset(presets[start + 1]), .preset(presets[start + 2]), .ev(1), .lens(1),
                                            .grid(true), .handedness(.left), .intensity(80)]
        let (byButtons, buttonCamera, _) = try makeController()
        var buttonEffects: [Effect] = []
        byButtons.effectObserver = { buttonEffects.append($0) }
        for e in asEvents { byButtons.perform(.input(e)) }
        let (bySocket, socketCamera, _) = try makeController()
        var socketEffects: [Effect] = []
        bySocket.effectObserver = { socketEffects.append($0) }
        for r in asRequests { XCTAssertTrue(bySocket.answer(r).ok, "\(r)") }

        var a = byButtons.state, b = bySocket.state
        XCTAssertEqual(a.dial, .intensity)
        a.dial = .ev  // the dial is a button's own business
        b.dial = .ev
        XCTAssertEqual(a, b)
        XCTAssertEqual(a.presetID, presets[start + 2])
        XCTAssertEqual(a.ev, 1)
        XCTAssertEqual(a.lensIndex, 1)
        XCTAssertEqual(a.intensity, 0.8, accuracy: 1e-9)
        XCTAssertEqual(a.handedness, .left)
        // The same device-facing effects, in the same order (the encoder press only shows the dial).
        func devices(_ e: [Effect]) -> [Effect] { e.filter { $0 != .intensityChanged } }
        XCTAssertEqual(devices(buttonEffects), devices(socketEffects))
        XCTAssertEqual(buttonCamera.starts, socketCamera.starts, "the lens switched the same way")
        XCTAssertEqual(buttonCamera.controls.last?.ev, socketCamera.controls.last?.ev)
        XCTAssertEqual(buttonCamera.controls.last?.ev, 1)
    }

    func testRefusedRequestsChangeNothing() throws {
        let (c, camera, _) = try makeController()
        let before = c.state
        let lensReply = c.answer(.lens(9))
        XCTAssertEqual(lensReply.error, "lens 9 does not exist (0…2)")
        XCTAssertEqual(c.answer(.preset("nosuchlook")).error, "unknown preset \"nosuchlook\"")
        XCTAssertEqual(c.state, before)
        XCTAssertTrue(camera.starts.isEmpty)
    }

    /// A request the server gave up on ("busy") is skipped by the controller, never carried out.
    func testAnExpiredRequestIsNeverCarriedOut() throws {
        let (c, _, _) = try makeController()
        let before = c.state.presetID
        let late = PendingRequest(.preset("trix400"), deadline: .after(seconds: 0))
        XCTAssertTrue(late.expire(), "the server answered busy")
        let inTime = PendingRequest(.grid(true), deadline: .after(seconds: 5))
        c.handle.submit(late)
        c.handle.submit(inTime)
        c.runOnce()
        XCTAssertEqual(c.state.presetID, before, "the expired request did nothing")
        XCTAssertNil(late.reply)
        XCTAssertEqual(inTime.reply?.ok, true)
        XCTAssertTrue(c.state.grid)
    }

    /// A photo the interval's timer takes and a photo a button takes go the same way: the
    /// shutter's one effect, carried out by the same capture (one still from the camera each,
    /// one file each); the timer's only adds keeping its schedule on disk around it.
    func testATimerFiredCaptureAndAButtonCaptureProduceTheSameEffects() throws {
        let (c, camera, dir) = try makeController()
        c.supervisor.start()
        var stills = 0
        camera.onStill = { stills += 1 }
        c.perform(.setHandedness(.right))
        var effects: [Effect] = []
        c.effectObserver = { effects.append($0) }

        let pressed = c.perform(.input(.rightButton))
        let buttonEffects = effects
        XCTAssertNotNil(pressed.photoPath, "\(pressed)")
        XCTAssertEqual(stills, 1)

        effects = []
        let now = Date().timeIntervalSince1970
        c.perform(.startInterval(Intervalometer(Intervalometer.Settings(everySeconds: 3600, count: 1), now: now)))
        c.intervalClock()
        let timerEffects = effects.filter { $0 != .saveInterval }
        XCTAssertEqual(stills, 2, "the timer's slot took one still")
        XCTAssertEqual(buttonEffects, [.capture])
        XCTAssertEqual(timerEffects, [.capture, .intervalEnded(taken: 1, skipped: 0, stopped: false)])
        let shot = try XCTUnwrap(effects.firstIndex(of: .capture))
        XCTAssertEqual(effects[shot - 1], .saveInterval, "the slot is on disk before its shot: \(effects)")
        XCTAssertNil(c.state.interval, "one slot, taken: done")
        c.shutdown(timeout: 30)  // the queue saves both
        let saved = try FileManager.default.contentsOfDirectory(atPath: dir + "/photos/DCIM/100LOOPX")
        XCTAssertEqual(saved.filter { $0.hasPrefix(".") == false }.count, 2, "\(saved)")
    }
}
