import Controls
import XCTest
@testable import Appliance

/// The photobooth's course as a pure value: idle → countdown → shots → developing → review → idle.
final class BoothTests: XCTestCase {
    let second: UInt64 = 1_000_000_000

    func settings(countdown: Int = 3, shots: Int = 1, review: Int = 5) -> BoothSettings {
        var s = BoothSettings()
        s.countdownSeconds = countdown
        s.shots = shots
        s.reviewSeconds = review
        return s
    }

    func testOneShotSessionCountsDownTakesTheShotAtTheEndAndReviewsTheSavedPhoto() {
        var booth = Booth(settings: settings())
        XCTAssertEqual(booth.phase, .attract)
        XCTAssertNil(booth.press(now: 10 * second), "a countdown starts; nothing is taken yet")
        XCTAssertEqual(booth.countdownNumeral(now: 10 * second), 3)
        XCTAssertEqual(booth.countdownNumeral(now: 11 * second + 1), 2)
        XCTAssertEqual(booth.countdownNumeral(now: 12 * second + 1), 1)
        XCTAssertNil(booth.tick(now: 13 * second - 1), "not before the end")
        XCTAssertNil(booth.press(now: 12 * second), "a press during the countdown is ignored")
        XCTAssertEqual(booth.tick(now: 13 * second + 5), .capture(shot: 1, due: 13 * second), "the shot is due at the countdown's end")
        XCTAssertNil(booth.tick(now: 13 * second + 10), "and asked for once")
        XCTAssertNil(booth.shotTaken("/p/LPX_0001.HEIC", now: 13 * second))
        XCTAssertEqual(booth.phase, .developing)
        XCTAssertNil(booth.photoSaved("/p/LPX_0000.HEIC", now: 14 * second), "another photo is not this session's")
        XCTAssertEqual(booth.photoSaved("/p/LPX_0001.HEIC", now: 14 * second), .review("/p/LPX_0001.HEIC"))
        XCTAssertEqual(booth.phase, .review(until: 19 * second))
        XCTAssertNil(booth.tick(now: 19 * second - 1))
        XCTAssertNil(booth.tick(now: 19 * second))
        XCTAssertEqual(booth.phase, .attract, "the review ends by itself")
    }

    func testFourShotsAreTakenOneCountdownEachThenPutTogether() {
        var booth = Booth(settings: settings(countdown: 2, shots: 4))
        var now = 0 * second
        _ = booth.press(now: now)
        var paths: [String] = []
        for shot in 1...4 {
            XCTAssertEqual(booth.currentShot, shot)
            now += 2 * second
            XCTAssertEqual(booth.tick(now: now), .capture(shot: shot, due: now))
            let path = "/p/LPX_000\(shot).HEIC"
            paths.append(path)
            // Shots saved while later ones are still being taken are remembered.
            if shot == 2 { XCTAssertNil(booth.photoSaved(paths[0], now: now)) }
            XCTAssertNil(booth.shotTaken(path, now: now))
        }
        XCTAssertEqual(booth.phase, .developing)
        XCTAssertNil(booth.photoSaved(paths[1], now: now))
        XCTAssertNil(booth.photoSaved(paths[3], now: now))
        XCTAssertEqual(booth.photoSaved(paths[2], now: now), .compose(paths), "all four saved: the collage, in order")
        XCTAssertEqual(booth.composed("/p/LPX_0005.HEIC", now: now), .review("/p/LPX_0005.HEIC"))
        XCTAssertNil(booth.press(now: now + second), "a press during the review starts a new session")
        XCTAssertEqual(booth.currentShot, 1)
        XCTAssertEqual(booth.taken, [])
    }

    func testWithoutACountdownThePressTakesTheShotAtOnceAndLaterShotsWaitASecond() {
        var booth = Booth(settings: settings(countdown: 0, shots: 2))
        XCTAssertEqual(booth.press(now: 5 * second), .capture(shot: 1, due: 5 * second))
        XCTAssertNil(booth.shotTaken("/a", now: 5 * second))
        XCTAssertEqual(booth.countdownNumeral(now: 5 * second), 1)
        XCTAssertEqual(booth.tick(now: 6 * second), .capture(shot: 2, due: 6 * second))
    }

    func testARefusedShotOrALostPhotoEndsTheSession() {
        var booth = Booth(settings: settings(countdown: 0))
        _ = booth.press(now: 0)
        XCTAssertNil(booth.shotTaken(nil, now: 0))
        XCTAssertEqual(booth.phase, .attract)
        _ = booth.press(now: 0)
        _ = booth.shotTaken("/a", now: 0)
        booth.failed()
        XCTAssertEqual(booth.phase, .attract)
        XCTAssertNil(booth.photoSaved("/a", now: 0), "a photo of an ended session is not reviewed")
    }

    func testSettingsAreKeptInRange() {
        var s = settings(countdown: -2, shots: 9, review: 0)
        s.layout = .grid
        let booth = Booth(settings: s)
        XCTAssertEqual(booth.settings.shots, 4)
        XCTAssertEqual(booth.settings.countdownSeconds, 0)
        XCTAssertEqual(booth.settings.reviewSeconds, 1)
    }

    /// In booth mode every button and a touch is the big button; the encoder and the operator's
    /// keys change nothing; video is refused; switching the booth on goes to photo mode.
    func testRulesInBoothMode() {
        let rules = StateRules(presetIDs: ["clean", "mono"], lensCount: 2)
        var s = CameraState(presetID: "clean", onboardingDone: false)
        s.mode = .video
        XCTAssertEqual(rules.apply(.setBooth(true), to: &s), Outcome([.boothChanged, .modeChanged]))
        XCTAssertEqual(s.mode, .photo)
        for event: InputEvent in [.leftButton, .rightButton, .shutter, .focusTap(x: 0.5, y: 0.5)] {
            XCTAssertEqual(rules.apply(event, to: &s), [.boothTrigger], "\(event)")
        }
        XCTAssertFalse(s.onboardingDone, "a guest's press does not choose the shutter side")
        for event: InputEvent in [.encoderTurned(2), .nextFilter, .nextLens, .grid, .mode] {
            XCTAssertEqual(rules.apply(event, to: &s), [], "\(event)")
        }
        XCTAssertEqual(s.presetID, "clean")
        XCTAssertNotNil(rules.apply(.setMode(.video), to: &s).refusal)
        XCTAssertNotNil(rules.apply(.record(.start), to: &s).refusal)
        XCTAssertEqual(rules.apply(.selectPreset("mono"), to: &s), Outcome([.lookChanged, .settingsChanged]), "the operator still picks the look")
        XCTAssertEqual(rules.apply(.setBooth(false), to: &s), Outcome([.boothChanged]))
        XCTAssertEqual(rules.apply(.shutter, to: &s), [.capture])
    }

    /// `print: button`: the first press of a review prints what is shown (once) and keeps it on
    /// screen; the next press starts a new session.
    func testWithPrintButtonTheFirstPressOfAReviewPrintsItOnce() {
        var s = settings(countdown: 0, review: 5)
        s.print = .button
        var booth = Booth(settings: s)
        XCTAssertEqual(booth.press(now: 0), .capture(shot: 1, due: 0))
        _ = booth.shotTaken("/p/1.HEIC", now: 0)
        XCTAssertEqual(booth.photoSaved("/p/1.HEIC", now: second), .review("/p/1.HEIC"))
        XCTAssertEqual(booth.press(now: 2 * second), .print("/p/1.HEIC"))
        XCTAssertTrue(booth.printRequested)
        XCTAssertEqual(booth.phase, .review(until: 7 * second), "shown another reviewSeconds while it prints")
        XCTAssertEqual(booth.press(now: 3 * second), .capture(shot: 1, due: 3 * second), "the next press is a new session")
        XCTAssertFalse(booth.printRequested)
        _ = booth.shotTaken("/p/2.HEIC", now: 3 * second)
        XCTAssertEqual(booth.photoSaved("/p/2.HEIC", now: 4 * second), .review("/p/2.HEIC"))
        XCTAssertNil(booth.tick(now: 9 * second))
        XCTAssertEqual(booth.phase, .attract)
        XCTAssertEqual(booth.press(now: 10 * second), .capture(shot: 1, due: 10 * second), "after the review a press shoots")

        var auto = Booth(settings: settings(countdown: 0))
        _ = auto.press(now: 0)
        _ = auto.shotTaken("/p/1.HEIC", now: 0)
        _ = auto.photoSaved("/p/1.HEIC", now: 0)
        XCTAssertEqual(auto.press(now: second), .capture(shot: 1, due: second), "without print: button a press in review shoots")
    }

    /// The flash: on only for the exposure (`exposure`), or from the press to the last shot
    /// (`session`, a ring light); never with `off`.
    func testTheFlashIsWantedForTheExposureOrTheWholeSession() {
        for mode in BoothSettings.FlashMode.allCases {
            var s = settings(countdown: 2, shots: 2)
            s.flash = mode
            var booth = Booth(settings: s)
            XCTAssertFalse(booth.flashWanted(exposing: false), "idle, \(mode)")
            XCTAssertEqual(booth.flashWanted(exposing: true), mode != .off, "exposing, \(mode)")
            _ = booth.press(now: 0)
            XCTAssertEqual(booth.flashWanted(exposing: false), mode == .session, "counting down, \(mode)")
            XCTAssertEqual(booth.tick(now: 2 * second), .capture(shot: 1, due: 2 * second))
            XCTAssertNil(booth.shotTaken("/p/1.HEIC", now: 2 * second))
            XCTAssertEqual(booth.flashWanted(exposing: false), mode == .session, "between the shots, \(mode)")
            _ = booth.tick(now: 4 * second)
            _ = booth.shotTaken("/p/2.HEIC", now: 4 * second)
            XCTAssertEqual(booth.phase, .developing)
            XCTAssertFalse(booth.flashWanted(exposing: false), "developing, \(mode)")
        }
    }

    /// A camera reconfigured for each still is asked `lead` before the countdown's end; the
    /// shot is still due at the end (the camera waits for a frame from then on).
    func testWithALeadTheShotIsAskedForEarlyButDueAtTheEnd() {
        var booth = Booth(settings: settings(countdown: 3))
        XCTAssertNil(booth.press(now: 0))
        XCTAssertNil(booth.tick(now: 2 * second - 1, lead: second))
        XCTAssertEqual(booth.tick(now: 2 * second, lead: second), .capture(shot: 1, due: 3 * second))
        XCTAssertNil(booth.tick(now: 4 * second, lead: second), "asked for once")
        var long = Booth(settings: settings(countdown: 1))
        XCTAssertNil(long.press(now: 10 * second))
        XCTAssertEqual(long.tick(now: 10 * second, lead: 5 * second), .capture(shot: 1, due: 11 * second),
                       "a lead longer than the countdown asks at once")
    }
}
