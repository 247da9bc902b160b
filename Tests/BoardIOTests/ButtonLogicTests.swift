import Controls
import BoardIO
import XCTest

final class ButtonLogicTests: XCTestCase {
    let ms: UInt64 = 1_000_000
    let pins: [ControlPin: Int] = [.shutterLeft: 5, .shutterRight: 6, .encoderA: 17, .encoderB: 27, .encoderSwitch: 22,
                                   .mode: 23, .lens: 12, .filter: 13, .aeLock: 16, .afLock: 26]

    func logic(debounce: UInt64 = 5_000_000) -> ButtonLogic {
        ButtonLogic(pins: pins, debounceNanoseconds: debounce, acceleration: .none)
    }

    /// A press (with `bounces` extra toggles 200 µs apart) at `t`, released 100 ms later.
    func click(_ offset: Int, at t: UInt64, bounces: Int = 3) -> [GPIOEdge] {
        var edges: [GPIOEdge] = []
        for (start, level) in [(t, false), (t + 100 * ms, true)] {
            edges.append(GPIOEdge(offset: offset, rising: level, time: start))
            for k in 0..<bounces {
                edges.append(GPIOEdge(offset: offset, rising: !level, time: start + UInt64(2 * k + 1) * 200_000))
                edges.append(GPIOEdge(offset: offset, rising: level, time: start + UInt64(2 * k + 2) * 200_000))
            }
        }
        return edges
    }

    /// Feeds edges in order, ticking the clock in 1 ms steps as a poll loop would.
    func run(_ logic: inout ButtonLogic, _ edges: [GPIOEdge], until end: UInt64) -> [InputEvent] {
        var out: [InputEvent] = []
        var i = 0
        var now = edges.first?.time ?? 0
        while now <= end {
            while i < edges.count && edges[i].time <= now { out += logic.edge(edges[i]); i += 1 }
            out += logic.tick(at: now)
            now += ms
        }
        return out
    }

    func testEveryButtonMapsToItsEvent() {
        var l = logic()
        var edges: [GPIOEdge] = []
        let order: [ControlPin] = [.shutterLeft, .shutterRight, .mode, .lens, .filter, .aeLock, .afLock, .encoderSwitch]
        for (i, pin) in order.enumerated() { edges += click(pins[pin]!, at: 1_000 * ms + UInt64(i) * 300 * ms) }
        let events = run(&l, edges, until: 4_000 * ms)
        XCTAssertEqual(events, [.leftButton, .rightButton, .mode, .nextLens, .nextFilter, .aeLock, .afLock, .encoderPressed])
    }

    func testBouncyPressCountsOnceAndAfterTheDebounce() {
        var l = logic()
        let edges = click(6, at: 1_000 * ms, bounces: 5)
        // Just before the bounce has been quiet for 5 ms: nothing yet.
        var early = l
        let before = run(&early, Array(edges.prefix(11)), until: 1_000 * ms + 2_000_000 + 4 * ms)
        XCTAssertEqual(before, [])
        XCTAssertEqual(run(&l, edges, until: 1_300 * ms), [.rightButton])
    }

    func testGlitchShorterThanDebounceIsNoPress() {
        var l = logic()
        let edges = [GPIOEdge(offset: 5, rising: false, time: 10 * ms), GPIOEdge(offset: 5, rising: true, time: 12 * ms)]
        XCTAssertEqual(run(&l, edges, until: 50 * ms), [])
    }

    func testKernelDebouncedLinesPassStraightThrough() {
        var l = logic(debounce: 0)
        XCTAssertEqual(l.edge(GPIOEdge(offset: 23, rising: false, time: 1)), [.mode])
        XCTAssertEqual(l.edge(GPIOEdge(offset: 23, rising: true, time: 2)), [])
    }

    func testEncoderTurnsAt200DetentsPerSecondWithBounce() {
        var l = logic()
        var a = true, b = true
        var t: UInt64 = 1_000 * ms
        var edges: [GPIOEdge] = []
        for (count, dir) in [(300, 1), (150, -1)] {
            for _ in 0..<count {
                for i in 0..<4 {
                    let isA = (i % 2 == 0) == (dir > 0)
                    t += 1_250_000  // 200 detents/s, 4 transitions each
                    let level = isA ? !a : !b
                    if isA { a = level } else { b = level }
                    let o = isA ? 17 : 27
                    edges.append(GPIOEdge(offset: o, rising: level, time: t))
                    edges.append(GPIOEdge(offset: o, rising: !level, time: t + 30_000))
                    edges.append(GPIOEdge(offset: o, rising: level, time: t + 60_000))
                }
            }
        }
        var total = 0, forward = 0, backward = 0
        for e in edges {
            for case .encoderTurned(let n) in l.edge(e) {
                total += n
                if n > 0 { forward += n } else { backward -= n }
            }
        }
        XCTAssertEqual(forward, 300)
        XCTAssertEqual(backward, 150)
        XCTAssertEqual(total, 150)
    }

    func testSequenceNumberGapsCountLostEvents() {
        var l = logic(debounce: 0)
        _ = l.edge(GPIOEdge(offset: 5, rising: false, time: 1, seqno: 1))
        _ = l.edge(GPIOEdge(offset: 5, rising: true, time: 2, seqno: 2))
        _ = l.edge(GPIOEdge(offset: 5, rising: false, time: 3, seqno: 6))
        XCTAssertEqual(l.lostEvents, 3)
    }

    func testResyncRepairsALostRelease() {
        var l = logic(debounce: 0)
        XCTAssertEqual(l.edge(GPIOEdge(offset: 5, rising: false, time: 1)), [.leftButton])
        // The release was lost; the idle read sees the line high again, then a new press.
        var levels: [Int: Bool] = [:]
        for (_, o) in pins { levels[o] = true }
        XCTAssertEqual(l.resync(levels: levels, at: 10), [])
        XCTAssertEqual(l.edge(GPIOEdge(offset: 5, rising: false, time: 20)), [.leftButton])
    }

    func testGPIOErrorNamesWhatWasBeingDone() {
        XCTAssertThrowsError(try GPIOLines(chip: "no-such-chip-label", offsets: [1])) { e in
            let text = "\(e)"
            XCTAssertTrue(text.hasPrefix("requesting lines 1 of no-such-chip-label"), text)
        }
        XCTAssertThrowsError(try GPIOChipInfo.find("/dev/nonexistent-gpiochip")) { e in
            XCTAssertTrue("\(e)".contains("opening GPIO chip /dev/nonexistent-gpiochip"), "\(e)")
        }
        XCTAssertTrue([1, 2].contains(GPIOChipInfo.libgpiodVersion))
    }
}
