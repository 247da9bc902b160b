import Controls
import XCTest

/// The trigger line's edges: the chosen kind fires at its own kernel time; bounces after an
/// accepted edge are ignored, whichever way they go, and never move the time kept.
final class TriggerLogicTests: XCTestCase {
    let ms: UInt64 = 1_000_000

    func testFallingEdgesFireAtTheirTimeAndBounceIsIgnored() {
        var logic = TriggerLogic(edge: .falling, debounceNanoseconds: 10 * ms)
        XCTAssertEqual(logic.edge(rising: false, at: 100 * ms), 100 * ms, "the first edge's own time")
        XCTAssertNil(logic.edge(rising: true, at: 101 * ms), "bounce")
        XCTAssertNil(logic.edge(rising: false, at: 102 * ms), "bounce")
        XCTAssertNil(logic.edge(rising: true, at: 150 * ms), "a rising edge does not fire a falling trigger")
        XCTAssertEqual(logic.edge(rising: false, at: 200 * ms), 200 * ms)
        XCTAssertEqual(logic.edge(rising: false, at: 210 * ms), 210 * ms, "a debounce period later fires again")
    }

    func testRisingAndBoth() {
        var rising = TriggerLogic(edge: .rising, debounceNanoseconds: 0)
        XCTAssertNil(rising.edge(rising: false, at: 1))
        XCTAssertEqual(rising.edge(rising: true, at: 2), 2)
        var both = TriggerLogic(edge: .both, debounceNanoseconds: 5 * ms)
        XCTAssertEqual(both.edge(rising: false, at: 10 * ms), 10 * ms)
        XCTAssertNil(both.edge(rising: true, at: 12 * ms), "within the debounce")
        XCTAssertEqual(both.edge(rising: true, at: 40 * ms), 40 * ms, "a pulse's end is a trigger too")
    }
}
