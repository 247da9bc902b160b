import Controls
import Foundation
import XCTest

/// A clock the test moves by hand.
final class TestClock: @unchecked Sendable {  // `t` is guarded by `lock`.
    private let lock = NSLock()
    private var t = 100.0
    var now: Double { lock.lock(); defer { lock.unlock() }; return t }
    func advance(_ s: Double) { lock.lock(); t += s; lock.unlock() }
}

final class ScriptedMotionTests: XCTestCase {
    private let tilted = MotionSample(acceleration: SIMD3(1, 0, 0), rotation: .zero)
    private let shaking = MotionSample(acceleration: SIMD3(0.3, -1.4, 0.2), rotation: SIMD3(120, -80, 30))

    func testConstantSample() throws {
        let sensor = ScriptedMotion(tilted)
        XCTAssertEqual(try sensor.read(), tilted)
        XCTAssertEqual(try ScriptedMotion().read(), .level)
        XCTAssertEqual(ScriptedMotion(name: "imu twin").name, "imu twin")
    }

    func testScriptLoops() throws {
        let clock = TestClock()
        let sensor = ScriptedMotion(script: [(1, .level), (0, shaking), (0.5, tilted)], clock: { clock.now })
        var seen: [MotionSample] = []
        for _ in 0..<7 {  // t = 0, .25, …, 1.5
            seen.append(try sensor.read())
            clock.advance(0.25)
        }
        XCTAssertEqual(seen, [.level, .level, .level, .level, tilted, tilted, .level], "the zero-length step is skipped; it loops after 1.5 s")

        sensor.set(shaking)
        XCTAssertEqual(try sensor.read(), shaking)
        sensor.run([(2, tilted), (2, .level)])
        XCTAssertEqual(try sensor.read(), tilted, "a new script starts at its beginning")
    }

    func testFailureThrowsUntilCleared() throws {
        let sensor = ScriptedMotion()
        sensor.fail(true)
        XCTAssertThrowsError(try sensor.read()) { error in
            guard case MotionSensorError.notResponding(let what) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(what.contains("simulated"))
        }
        XCTAssertThrowsError(try sensor.read())
        sensor.fail(false)
        XCTAssertEqual(try sensor.read(), .level)
    }
}

final class MotionAnalyzerTests: XCTestCase {
    /// Feeds `sample` at 100 Hz for `seconds`, starting at `t`.
    private func feed(_ analyzer: inout MotionAnalyzer, _ sample: (Int) -> MotionSample, seconds: Double, from t: inout Double) {
        for i in 0..<Int(seconds * 100) {
            analyzer.add(sample(i), at: t)
            t += 0.01
        }
    }

    private func shake(_ i: Int) -> MotionSample {
        let s = i % 2 == 0 ? 1.0 : -1.0
        return MotionSample(acceleration: SIMD3(0.3 * s, -1 - 0.4 * s, 0.2), rotation: SIMD3(150 * s, -90 * s, 40))
    }

    /// Level, with the small noise of a camera resting on a table.
    private func resting(_ i: Int) -> MotionSample {
        let s = i % 2 == 0 ? 1.0 : -1.0
        return MotionSample(acceleration: SIMD3(0.005 * s, -1.01, 0.004), rotation: SIMD3(0.5 * s, -0.3, 0.2 * s))
    }

    func testStillForTwoSecondsSlowsTheGrain() {
        var analyzer = MotionAnalyzer()
        var t = 50.0
        XCTAssertEqual(analyzer.grainRate, 1, "moving until proven still")
        feed(&analyzer, resting, seconds: 1.5, from: &t)
        XCTAssertFalse(analyzer.isStill)
        XCTAssertEqual(analyzer.grainRate, 1, accuracy: 0.001, "not yet still after 1.5 s")
        feed(&analyzer, resting, seconds: 0.6, from: &t)
        XCTAssertTrue(analyzer.isStill)
        XCTAssertGreaterThan(analyzer.grainRate, 0.5, "slows gradually, not in one step")
        feed(&analyzer, resting, seconds: 3, from: &t)
        XCTAssertEqual(analyzer.grainRate, 0.15, accuracy: 0.01)
        XCTAssertLessThan(analyzer.activity, 0.1)
    }

    func testShakingBringsTheGrainBackQuickly() {
        var analyzer = MotionAnalyzer()
        var t = 0.0
        feed(&analyzer, resting, seconds: 5, from: &t)
        XCTAssertEqual(analyzer.grainRate, 0.15, accuracy: 0.01)
        feed(&analyzer, shake, seconds: 0.03, from: &t)
        XCTAssertGreaterThan(analyzer.grainRate, 0.15)
        XCTAssertLessThan(analyzer.grainRate, 0.95, "a smooth rise, not a jump")
        feed(&analyzer, shake, seconds: 0.6, from: &t)
        XCTAssertEqual(analyzer.grainRate, 1, accuracy: 0.01)
        XCTAssertEqual(analyzer.activity, 1)
        XCTAssertFalse(analyzer.isStill)
        // Walking around between short rests never gets slow grain.
        for _ in 0..<4 {
            feed(&analyzer, resting, seconds: 1.5, from: &t)
            feed(&analyzer, shake, seconds: 0.2, from: &t)
        }
        XCTAssertGreaterThan(analyzer.grainRate, 0.95)
    }

    func testNanosecondTimestamps() {
        var analyzer = MotionAnalyzer()
        var ns: UInt64 = 7_000_000_000_000
        for _ in 0..<500 {
            analyzer.add(.level, atNanoseconds: ns)
            ns += 10_000_000
        }
        XCTAssertEqual(analyzer.grainRate, 0.15, accuracy: 0.01)
    }

    private func gravity(roll degrees: Double) -> MotionSample {
        let r = degrees * .pi / 180
        return MotionSample(acceleration: SIMD3(sin(r), -cos(r), 0), rotation: .zero)
    }

    func testEveryPose() {
        let poses: [(String, SIMD3<Double>, Int)] = [
            ("level", SIMD3(0, -1, 0), 1),
            ("turned clockwise, right side down", SIMD3(1, 0, 0), 6),
            ("upside down", SIMD3(0, 1, 0), 3),
            ("turned anticlockwise, left side down", SIMD3(-1, 0, 0), 8),
            ("level again", SIMD3(0, -1, 0), 1),
            ("anticlockwise straight from level", SIMD3(-1, 0, 0), 8),
            ("upside down from anticlockwise", SIMD3(0, 1, 0), 3),
            ("clockwise from upside down", SIMD3(1, 0, 0), 6),
        ]
        var analyzer = MotionAnalyzer()
        var t = 0.0
        for (name, g, exif) in poses {
            feed(&analyzer, { _ in MotionSample(acceleration: g, rotation: .zero) }, seconds: 0.5, from: &t)
            XCTAssertEqual(analyzer.orientation, exif, name)
        }
    }

    func testFirstSampleSetsOrientationDirectly() {
        var analyzer = MotionAnalyzer()
        analyzer.add(MotionSample(acceleration: SIMD3(1, 0, 0), rotation: .zero), at: 0)
        XCTAssertEqual(analyzer.orientation, 6)
    }

    func testHysteresisAroundFortyFiveDegrees() {
        var analyzer = MotionAnalyzer()
        var t = 0.0
        func hold(_ roll: Double) -> Int {
            feed(&analyzer, { _ in self.gravity(roll: roll) }, seconds: 0.5, from: &t)
            return analyzer.orientation
        }
        XCTAssertEqual(hold(0), 1)
        // Jitter either side of 45°: stays landscape.
        for roll in [40.0, 50, 44, 52, 47, 55] { XCTAssertEqual(hold(roll), 1, "\(roll)°") }
        XCTAssertEqual(hold(65), 6)
        // Back under 45°: stays portrait until clearly landscape.
        for roll in [50.0, 40, 35] { XCTAssertEqual(hold(roll), 6, "\(roll)°") }
        XCTAssertEqual(hold(20), 1)
        // The same on the other side and around upside down.
        XCTAssertEqual(hold(-55), 1)
        XCTAssertEqual(hold(-70), 8)
        XCTAssertEqual(hold(-130), 8)
        XCTAssertEqual(hold(-160), 3)
        XCTAssertEqual(hold(140), 3)
        XCTAssertEqual(hold(125), 3)
        XCTAssertEqual(hold(110), 6)
    }

    func testPointingUpOrDownOrShakingKeepsTheOrientation() {
        var analyzer = MotionAnalyzer()
        var t = 0.0
        feed(&analyzer, { _ in MotionSample(acceleration: SIMD3(-1, 0, 0), rotation: .zero) }, seconds: 0.5, from: &t)
        XCTAssertEqual(analyzer.orientation, 8)
        // Pointing at the ground: gravity along +z, a little roll noise.
        feed(&analyzer, { _ in MotionSample(acceleration: SIMD3(0.1, 0.2, 0.97), rotation: .zero) }, seconds: 0.5, from: &t)
        XCTAssertEqual(analyzer.orientation, 8)
        // A hard jolt that reads far from 1 g.
        feed(&analyzer, { _ in MotionSample(acceleration: SIMD3(0, 1.8, 0), rotation: .zero) }, seconds: 0.3, from: &t)
        XCTAssertEqual(analyzer.orientation, 8)
    }
}
