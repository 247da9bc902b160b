import Controls
import XCTest
import ControlProtocol
@testable import Appliance

final class StateRulesTests: XCTestCase {
    let rules = StateRules(presetIDs: ["clean", "mono", "portra"], lensCount: 3)

    func testFirstButtonPressChoosesTheShutterSide() {
        var s = CameraState(presetID: "clean")
        XCTAssertEqual(rules.apply(.leftButton, to: &s), [.settingsChanged])
        XCTAssertEqual(s.handedness, .left)
        XCTAssertTrue(s.onboardingDone)
        XCTAssertEqual(rules.apply(.leftButton, to: &s), [.capture], "left-handed: the left button is the shutter")
        XCTAssertEqual(rules.apply(.rightButton, to: &s), [.lookChanged, .settingsChanged], "the other one is next filter")
        XCTAssertEqual(s.presetID, "mono")
    }

    /// The trigger line takes a still at its edge's time, before onboarding too; nothing in
    /// video mode; in a booth it is the big button.
    func testTheTriggerTakesAStillAtItsEdge() {
        var s = CameraState(presetID: "clean")
        XCTAssertEqual(rules.apply(.trigger(atNs: 42), to: &s), [.captureAt(42)])
        XCTAssertFalse(s.onboardingDone, "a trigger does not choose the shutter side")
        s.mode = .video
        XCTAssertEqual(rules.apply(.trigger(atNs: 43), to: &s), [])
        s.mode = .photo
        s.session = Booth(settings: BoothSettings())
        XCTAssertEqual(rules.apply(.trigger(atNs: 44), to: &s), [.boothTrigger])
    }

    func testHandednessSwapsWhichButtonIsTheShutter() {
        var s = CameraState(presetID: "clean", handedness: .right, onboardingDone: true)
        XCTAssertEqual(rules.apply(.rightButton, to: &s), [.capture])
        _ = rules.apply(.handedness, to: &s)
        XCTAssertEqual(s.handedness, .left)
        XCTAssertEqual(rules.apply(.leftButton, to: &s), [.capture])
        XCTAssertEqual(rules.apply(.rightButton, to: &s), [.lookChanged, .settingsChanged])
    }

    func testEncoderAdjustsEVInThirdsWithinThreeStopsAndPressSwitchesToIntensity() {
        var s = CameraState(presetID: "portra", onboardingDone: true)
        _ = rules.apply(.encoderTurned(2), to: &s)
        XCTAssertEqual(s.ev, 2.0 / 3, accuracy: 1e-12)
        _ = rules.apply(.encoderTurned(50), to: &s)
        XCTAssertEqual(s.ev, 3)
        XCTAssertEqual(rules.apply(.encoderTurned(1), to: &s), [], "already at the end")
        _ = rules.apply(.encoderPressed, to: &s)
        XCTAssertEqual(s.dial, .intensity)
        _ = rules.apply(.encoderTurned(-4), to: &s)
        XCTAssertEqual(s.intensity, 0.8, accuracy: 1e-9)
        XCTAssertEqual(s.ev, 3, "EV untouched while the dial is on intensity")
    }

    func testIntensityIsRememberedPerLook() {
        var s = CameraState(presetID: "portra", onboardingDone: true)
        s.dial = .intensity
        _ = rules.apply(.encoderTurned(-6), to: &s)
        XCTAssertEqual(s.intensity, 0.7, accuracy: 1e-9)
        _ = rules.apply(.previousFilter, to: &s)
        XCTAssertEqual(s.presetID, "mono")
        XCTAssertEqual(s.intensity, 1, "a look not yet adjusted is at full strength")
        _ = rules.apply(.nextFilter, to: &s)
        XCTAssertEqual(s.intensity, 0.7, accuracy: 1e-9)
        _ = rules.apply(.encoderTurned(-100), to: &s)
        XCTAssertEqual(s.intensity, 0)
    }

    func testLensesLocksGridModeAndFocusTap() {
        var s = CameraState(presetID: "clean", onboardingDone: true)
        XCTAssertEqual(rules.apply(.nextLens, to: &s), [.switchLens, .settingsChanged])
        _ = rules.apply(.nextLens, to: &s)
        _ = rules.apply(.nextLens, to: &s)
        XCTAssertEqual(s.lensIndex, 0, "wraps after the last lens")
        _ = rules.apply(.aeLock, to: &s)
        XCTAssertTrue(s.aeLocked)
        XCTAssertFalse(s.afLocked, "AE and AF lock are independent")
        _ = rules.apply(.afLock, to: &s)
        XCTAssertTrue(s.afLocked)
        _ = rules.apply(.grid, to: &s)
        XCTAssertTrue(s.grid)
        _ = rules.apply(.mode, to: &s)
        XCTAssertEqual(s.mode, .video)
        XCTAssertEqual(rules.apply(.focusTap(x: 1.5, y: 0.25), to: &s), [.cameraControls])
        XCTAssertEqual(s.focusPoint, SIMD2(1, 0.25), "clamped to the frame")
    }
}

final class PhotoStorageTests: XCTestCase {
    func temp() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("loopix-storage-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    func testDCFNamesAndNumbersAreNeverReused() throws {
        let dir = try temp()
        XCTAssertEqual(PhotoStorage.path(number: 1, in: "/p"), "/p/DCIM/100LOOPX/LPX_0001.HEIC")
        XCTAssertEqual(PhotoStorage.path(number: 9999, in: "/p"), "/p/DCIM/100LOOPX/LPX_9999.HEIC")
        XCTAssertEqual(PhotoStorage.path(number: 10000, in: "/p"), "/p/DCIM/101LOOPX/LPX_0001.HEIC")
        let storage = PhotoStorage(directory: dir + "/photos", stateDirectory: dir + "/state", reserveBytes: 0)
        let first = try storage.reserve(bytes: 0)
        XCTAssertEqual(first, dir + "/photos/DCIM/100LOOPX/LPX_0001.HEIC")
        _ = FileManager.default.createFile(atPath: first, contents: Data([1]))
        let second = try storage.reserve(bytes: 0)
        XCTAssertEqual(second, dir + "/photos/DCIM/100LOOPX/LPX_0002.HEIC")
        // Delete everything: a new start still goes on from 3 (the counter in the state directory).
        try FileManager.default.removeItem(atPath: dir + "/photos")
        let restarted = PhotoStorage(directory: dir + "/photos", stateDirectory: dir + "/state", reserveBytes: 0)
        XCTAssertEqual(try restarted.reserve(bytes: 0), dir + "/photos/DCIM/100LOOPX/LPX_0003.HEIC")
        // Lose the counter but keep files: the highest file wins.
        _ = FileManager.default.createFile(atPath: dir + "/photos/DCIM/100LOOPX/LPX_0041.HEIC", contents: Data([1]))
        try FileManager.default.removeItem(atPath: dir + "/state/counter")
        let rescanned = PhotoStorage(directory: dir + "/photos", stateDirectory: dir + "/state", reserveBytes: 0)
        XCTAssertEqual(try rescanned.reserve(bytes: 0), dir + "/photos/DCIM/100LOOPX/LPX_0042.HEIC")
    }

    func testStorageBelowTheReserveIsFull() throws {
        let dir = try temp()
        let storage = PhotoStorage(directory: dir, stateDirectory: dir + "/state", reserveBytes: Int64.max / 2)
        XCTAssertThrowsError(try storage.reserve(bytes: 0)) { error in
            guard case .full = error as? PhotoStorage.StorageError else { return XCTFail("\(error)") }
            XCTAssertTrue("\(error)".hasPrefix("storage full (\(dir): "), "\(error)")
        }
        XCTAssertEqual(storage.shotsRemaining(bytesPerPhoto: 1_000_000), 0)
    }

    private let rules = StateRules(presetIDs: ["clean", "mono", "portra"], lensCount: 3)

    /// A camera that cannot take a still while it records refuses the shutter in the rules,
    /// whoever presses it; one that can takes it.
    func testNoStillWhileRecordingOnACameraThatCannot() {
        var s = CameraState(presetID: "clean", onboardingDone: true)
        s.stillsWhileRecording = false
        _ = rules.apply(.record(.start), to: &s)
        s.mode = .photo  // the clip goes on in photo mode
        XCTAssertEqual(rules.apply(.shutter, to: &s), [.refuseShutter("This camera cannot take stills while recording")])
        XCTAssertEqual(rules.apply(.trigger(atNs: 9), to: &s), [.refuseShutter("This camera cannot take stills while recording")])
        s.stillsWhileRecording = true
        XCTAssertEqual(rules.apply(.shutter, to: &s), [.capture])
    }

    /// A recording that ends by itself goes through the rules like a stop: the state first,
    /// then the stop with its reason; a second report changes nothing.
    func testARecordingThatFailsEndsThroughTheRules() {
        var s = CameraState(presetID: "clean", onboardingDone: true)
        _ = rules.apply(.record(.start), to: &s)
        XCTAssertEqual(rules.apply(.recordingFailed("Storage full: recording stopped"), to: &s),
                       Outcome([.stopRecording(reason: "Storage full: recording stopped")]))
        XCTAssertFalse(s.recording)
        XCTAssertEqual(rules.apply(.recordingFailed("again"), to: &s), Outcome())
    }

    /// The booth's countdown ending (a timer) and a press with no countdown ask for the same
    /// shot; the session's flash follows its phase.
    func testABoothShotFromTheTimerIsTheShotAPressTakes() {
        var settings = BoothSettings()
        settings.countdownSeconds = 0
        settings.flash = .session
        let instant = StateRules(presetIDs: ["clean"], lensCount: 1, boothSettings: settings)
        var a = CameraState(presetID: "clean")
        XCTAssertEqual(instant.apply(.setBooth(true), to: &a), Outcome([.boothChanged]))
        XCTAssertEqual(instant.apply(.shutter, to: &a), [.boothTrigger])
        let pressed = instant.apply(.boothPress(now: 1_000), to: &a)

        settings.countdownSeconds = 3
        let counting = StateRules(presetIDs: ["clean"], lensCount: 1, boothSettings: settings)
        var b = CameraState(presetID: "clean")
        _ = counting.apply(.setBooth(true), to: &b)
        XCTAssertEqual(counting.apply(.boothPress(now: 0), to: &b), Outcome([.flashChanged]), "the countdown starts, the light goes on")
        XCTAssertTrue(b.flash)
        XCTAssertEqual(counting.apply(.boothTick(now: 2_000_000_000, lead: 0), to: &b), Outcome(), "not yet")
        let ticked = counting.apply(.boothTick(now: 3_000_000_000, lead: 0), to: &b)

        guard case .booth(.capture(let shotA, _))? = pressed.effects.first, case .booth(.capture(let shotB, let due))? = ticked.effects.first else {
            return XCTFail("\(pressed) \(ticked)")
        }
        XCTAssertEqual(shotA, 1)
        XCTAssertEqual(shotB, 1)
        XCTAssertEqual(due, 3_000_000_000, "due at the countdown's end")
        // The shot taken: the session waits for the photo; it saved: the review.
        XCTAssertEqual(counting.apply(.boothShotTaken("/p/LPX_0001.HEIC", now: 3_100_000_000), to: &b).effects.contains(.flashChanged), true)
        XCTAssertFalse(b.flash, "the light goes off once the shots are taken")
        XCTAssertEqual(counting.apply(.photoSaved("/p/LPX_0001.HEIC", now: 4_000_000_000), to: &b), Outcome([.booth(.review("/p/LPX_0001.HEIC"))]))
        XCTAssertEqual(b.session?.phaseName, "review")
    }

    /// The interval's slots through the rules: a due slot is kept on disk, then shot with the
    /// shutter's own effect; one due in booth mode or while recording is skipped with why.
    func testIntervalSlotsThroughTheRules() {
        var s = CameraState(presetID: "clean", onboardingDone: true)
        let schedule = Intervalometer(Intervalometer.Settings(everySeconds: 10, count: 2), now: 100)
        XCTAssertEqual(rules.apply(.startInterval(schedule), to: &s), Outcome([.saveInterval]))
        XCTAssertEqual(rules.apply(.intervalTick(now: 100, queueFull: false), to: &s), Outcome([.saveInterval, .capture]))
        XCTAssertEqual(rules.apply(.intervalShotDone(taken: true, now: 100), to: &s), Outcome([.saveInterval]))
        XCTAssertEqual(rules.apply(.intervalTick(now: 105, queueFull: false), to: &s), Outcome(), "nothing due")
        s.recording = true
        XCTAssertEqual(rules.apply(.intervalTick(now: 110, queueFull: false), to: &s),
                       Outcome([.saveInterval, .intervalSkipped(slot: 1, reason: "recording"), .saveInterval,
                                .intervalEnded(taken: 1, skipped: 1, stopped: false), .saveInterval]))
        XCTAssertNil(s.interval)
        XCTAssertEqual(rules.apply(.stopInterval, to: &s).refusal, "no interval is running")
    }
}
