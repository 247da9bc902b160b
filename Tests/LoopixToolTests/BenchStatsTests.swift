import XCTest
@testable import LoopixTool

/// The benchmark's arithmetic: medians and spreads, what counts as noisy, rounds that
/// interleave their measurements and pair them per round, and valgrind's count read back.
final class BenchStatsTests: XCTestCase {
    func testMedianRangeAndNoise() {
        let s = Stats([10, 12, 11, 10.5, 11.5])
        XCTAssertEqual(s.median, 11)
        XCTAssertEqual(s.min, 10)
        XCTAssertEqual(s.max, 12)
        XCTAssertTrue(s.noisy, "a 2/11 = 18 % spread")
        XCTAssertFalse(Stats([10, 10.5, 11, 10.8, 10.2]).noisy, "a 10 % spread")
        XCTAssertEqual(Stats([4, 1, 3, 2]).median, 2.5)
        XCTAssertEqual(Stats([10, 12, 11, 10.5, 11.5]).text(" ns/pixel"), "11.00 ns/pixel (10.00–12.00) noisy")
        // A difference whose median is negative or zero is judged by its spread all the same.
        XCTAssertTrue(Stats([-10, 80, -87]).noisy)
        XCTAssertTrue(Stats([0, 0, 1, -1, 0]).noisy)
        XCTAssertFalse(Stats([-5, -5.1, -5.05]).noisy)
    }

    /// A cost made as a difference prints as a time only when its median is above zero.
    func testACostBelowTheNoiseIsNotANegativeTime() {
        XCTAssertEqual(Stats([0.2, 0.25, 0.3]).costText(" ms a frame", scale: 10), "2.50 ms a frame (2.00–3.00) noisy")
        XCTAssertEqual(Stats([-0.3, -0.1, 0.2]).costText(" ms a frame", scale: 10),
                       "below the rounds' noise (their differences -3.00–2.00 ms a frame)")
        XCTAssertEqual(Stats([0, 0, 0]).costText(" ms", scale: 1), "below the rounds' noise (their differences 0.00–0.00 ms)")
    }

    func testRoundsInterleaveAndPairPerRound() throws {
        var order: [String] = []
        var rounds = Rounds()
        var a = 0.0, b = 0.0
        rounds.add("a") { () throws(ToolError) -> Double in order.append("a"); a += 1; return a * 10 }
        rounds.add("b") { () throws(ToolError) -> Double in order.append("b"); b += 1; return b }
        try rounds.run(3)
        XCTAssertEqual(order, ["a", "b", "a", "b", "a", "b"])
        XCTAssertEqual(rounds.stats("a").values, [10, 20, 30])
        // Per-round ratios (10/1, 20/2, 30/3) are all 10, though the figures themselves vary 3×.
        let ratio = rounds.paired("a", "b", /)
        XCTAssertEqual(ratio.values, [10, 10, 10])
        XCTAssertFalse(ratio.noisy)
        XCTAssertTrue(rounds.stats("a").noisy)
    }

    func testANoisyFigureDecidesNoTarget() {
        XCTAssertEqual(Target(text: "LUT ≥ 4×", met: true).line, "  [met] LUT ≥ 4×")
        XCTAssertEqual(Target(text: "LUT ≥ 4×", met: false).line, "  [NOT met] LUT ≥ 4×")
        XCTAssertEqual(Target(text: "LUT ≥ 4×", met: false, noisy: true).line, "  [noisy: not met by its median, undecided] LUT ≥ 4×")
        XCTAssertEqual(Target(text: "no ffmpeg", met: nil).line, "  [n/a] no ffmpeg")
    }

    func testCachegrindsCountIsRead() {
        let log = """
        ==4242== Cachegrind, a cache and branch-prediction profiler
        ==4242== Command: ffmpeg -f rawvideo
        ==4242==
        ==4242== I   refs:      1,234,567,890
        """
        XCTAssertEqual(InstructionBench.instructionCount(inLog: log), 1_234_567_890)
        XCTAssertNil(InstructionBench.instructionCount(inLog: "==1== Valgrind: I can't recover.  Giving up."))
    }
}
