import Controls
import XCTest

/// Edge sequences of a rotary encoder resting at AB = 11 (pulled up): clockwise A leads.
struct EncoderTrace {
    var a = true, b = true
    var time: UInt64 = 1_000_000_000
    var edges: [(phase: QuadratureDecoder.Phase, level: Bool, time: UInt64)] = []

    /// `detents` detents (sign: direction), `perDetent` transitions each, spread over `seconds`
    /// each; every edge followed by `bounces` pairs of extra toggles 20 µs apart.
    mutating func turn(_ detents: Int, perDetent: Int = 4, secondsPerDetent: Double = 0.1, bounces: Int = 0) {
        let step = UInt64(secondsPerDetent * 1e9) / UInt64(perDetent)
        for _ in 0..<abs(detents) {
            for i in 0..<perDetent {
                // Clockwise from 11: A, B, A, B; anticlockwise: B, A, B, A.
                let phase: QuadratureDecoder.Phase = (i % 2 == 0) == (detents > 0) ? .a : .b
                time += step
                let level = phase == .a ? !a : !b
                if phase == .a { a = level } else { b = level }
                edges.append((phase, level, time))
                for k in 0..<bounces {
                    let t = time + UInt64(k * 2 + 1) * 20_000
                    edges.append((phase, !level, t))
                    edges.append((phase, level, t + 20_000))
                }
            }
        }
    }

    func decode(_ decoder: inout QuadratureDecoder) -> [Int] {
        edges.map { decoder.edge($0.phase, level: $0.level) }.filter { $0 != 0 }
    }
}

final class QuadratureDecoderTests: XCTestCase {
    func testTransitionTable() {
        // Clockwise AB: 00 → 10 → 11 → 01 → 00.
        let cw = [0b00, 0b10, 0b11, 0b01, 0b00]
        for i in 0..<4 {
            XCTAssertEqual(QuadratureDecoder.step(from: cw[i], to: cw[i + 1]), 1)
            XCTAssertEqual(QuadratureDecoder.step(from: cw[i + 1], to: cw[i]), -1)
            XCTAssertEqual(QuadratureDecoder.step(from: cw[i], to: cw[i]), 0)
        }
        XCTAssertNil(QuadratureDecoder.step(from: 0b00, to: 0b11))
        XCTAssertNil(QuadratureDecoder.step(from: 0b10, to: 0b01))
    }

    func testCleanTurnsBothWays() {
        for per in [1, 2, 4] {
            var trace = EncoderTrace()
            trace.turn(5, perDetent: per)
            trace.turn(-3, perDetent: per)
            var d = QuadratureDecoder(transitionsPerDetent: per)
            let out = trace.decode(&d)
            XCTAssertEqual(out.reduce(0, +), 2, "\(per) per detent")
            XCTAssertEqual(out.filter { $0 > 0 }.count, 5, "\(per) per detent")
            XCTAssertEqual(out.filter { $0 < 0 }.count, 3, "\(per) per detent")
        }
    }

    func testBounceCountsNothingExtra() {
        var trace = EncoderTrace()
        trace.turn(7, bounces: 3)
        trace.turn(-7, bounces: 2)
        var d = QuadratureDecoder()
        let out = trace.decode(&d)
        XCTAssertEqual(out, Array(repeating: 1, count: 7) + Array(repeating: -1, count: 7))
    }

    func testBackAndForthWithoutReachingADetentCountsNothing() {
        var d = QuadratureDecoder()
        XCTAssertEqual(d.edge(.a, level: false), 0)  // 11 → 01
        XCTAssertEqual(d.edge(.b, level: false), 0)  // → 00
        XCTAssertEqual(d.edge(.b, level: true), 0)   // back → 01
        XCTAssertEqual(d.edge(.a, level: true), 0)   // back at rest 11: net 0
        XCTAssertEqual(d.pending, 0)
    }

    func testInvalidTransitionsAreIgnored() {
        var d = QuadratureDecoder()
        XCTAssertEqual(d.levels(a: false, b: false), 0)  // 11 → 00: both changed
        XCTAssertEqual(d.invalidTransitions, 1)
        XCTAssertEqual(d.edge(.a, level: true), 0)       // 00 → 10: +1
        XCTAssertEqual(d.edge(.b, level: true), 1)       // 10 → 11: at rest with +2 of 4: counts one
        // A turn after that is clean again.
        var trace = EncoderTrace()
        trace.turn(3)
        XCTAssertEqual(trace.decode(&d), [1, 1, 1])
    }

    func test200DetentsPerSecondWithBounceNoMissesNoDoubles() {
        var trace = EncoderTrace()
        trace.turn(400, secondsPerDetent: 1.0 / 200, bounces: 2)   // 2 s clockwise
        trace.turn(-200, secondsPerDetent: 1.0 / 200, bounces: 2)  // 1 s back
        var d = QuadratureDecoder()
        let out = trace.decode(&d)
        XCTAssertEqual(out.filter { $0 == 1 }.count, 400)
        XCTAssertEqual(out.filter { $0 == -1 }.count, 200)
        XCTAssertEqual(out.count, 600)
        XCTAssertEqual(d.invalidTransitions, 0)
    }

    func testAcceleration() {
        var acc = EncoderAcceleration()
        // Slow: 5 detents/s → ×1.
        var t: UInt64 = 1_000_000_000
        var slow = 0
        for _ in 0..<5 { t += 200_000_000; slow += acc.apply(1, at: t) }
        XCTAssertEqual(slow, 5)
        // 20 detents/s → ×2 once the rate is measured (from the second detent on).
        var medium: [Int] = []
        t += 1_000_000_000
        for _ in 0..<5 { t += 50_000_000; medium.append(acc.apply(1, at: t)) }
        XCTAssertEqual(medium, [1, 2, 2, 2, 2])
        // 100 detents/s the other way → ×4.
        var fast: [Int] = []
        for _ in 0..<5 { t += 10_000_000; fast.append(acc.apply(-1, at: t)) }
        XCTAssertEqual(fast, [-1, -4, -4, -4, -4])
        var none = EncoderAcceleration.none
        XCTAssertEqual(none.apply(3, at: t + 1), 3)
    }
}

final class DebouncerTests: XCTestCase {
    let ms: UInt64 = 1_000_000

    func testBouncyPressAndReleaseCountOnceEach() {
        var d = Debouncer(periodNanoseconds: 5 * ms, levels: [3: true])
        let t0: UInt64 = 1_000 * ms
        // Press with bounce: low, high, low, high, low within 1.5 ms.
        var out: [Debouncer.Change] = []
        for (i, level) in [false, true, false, true, false].enumerated() {
            out += d.edge(line: 3, level: level, at: t0 + UInt64(i) * 300_000)
        }
        XCTAssertEqual(out, [])
        XCTAssertEqual(d.nextDeadline, t0 + 1_200_000 + 5 * ms)
        XCTAssertEqual(d.tick(at: t0 + 5 * ms), [])  // not yet stable for 5 ms
        XCTAssertEqual(d.tick(at: t0 + 6_200_000), [Debouncer.Change(line: 3, level: false, time: t0 + 1_200_000)])
        XCTAssertNil(d.nextDeadline)
        // Release with bounce.
        let t1 = t0 + 100 * ms
        _ = d.edge(line: 3, level: true, at: t1)
        _ = d.edge(line: 3, level: false, at: t1 + 100_000)
        _ = d.edge(line: 3, level: true, at: t1 + 200_000)
        XCTAssertEqual(d.tick(at: t1 + 10 * ms), [Debouncer.Change(line: 3, level: true, time: t1 + 200_000)])
        XCTAssertEqual(d.level(3), true)
    }

    func testGlitchShorterThanThePeriodIsIgnored() {
        var d = Debouncer(periodNanoseconds: 5 * ms, levels: [1: true])
        _ = d.edge(line: 1, level: false, at: 10 * ms)
        _ = d.edge(line: 1, level: true, at: 11 * ms)
        XCTAssertEqual(d.tick(at: 20 * ms), [])
        XCTAssertEqual(d.level(1), true)
    }

    func testZeroPeriodPassesLevelChangesOnly() {
        var d = Debouncer(periodNanoseconds: 0, levels: [2: true])
        XCTAssertEqual(d.edge(line: 2, level: false, at: 1).count, 1)
        XCTAssertEqual(d.edge(line: 2, level: false, at: 2).count, 0)  // a repeated falling edge
        XCTAssertEqual(d.edge(line: 2, level: true, at: 3).count, 1)
    }

    func testResyncFromObservedLevels() {
        var d = Debouncer(periodNanoseconds: 5 * ms, levels: [4: true])
        // The press edge was lost; the idle read sees the line low.
        XCTAssertEqual(d.observed(line: 4, level: false, at: 100 * ms), [])
        XCTAssertEqual(d.tick(at: 105 * ms), [Debouncer.Change(line: 4, level: false, time: 100 * ms)])
        XCTAssertEqual(d.observed(line: 4, level: false, at: 200 * ms), [])
        XCTAssertNil(d.nextDeadline)
    }
}
