import Dispatch
@testable import Darkroom
import FilmCore
import Foundation
import TestFixtures
import XCTest
import Raster

/// The low-priority threads photos are developed on.
final class BackgroundThreadsTests: XCTestCase {
    final class Counts: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [Int]
        init(_ n: Int) { values = Array(repeating: 0, count: n) }
        func add(_ i: Int, _ n: Int = 1) { lock.lock(); values[i] += n; lock.unlock() }
        var all: [Int] { lock.lock(); defer { lock.unlock() }; return values }
    }

    func testEveryIterationRunsOnceEvenNested() {
        let pool = BackgroundThreads(threads: 2)
        defer { pool.shutdown() }
        let outer = Counts(5), inner = Counts(5 * 7)
        pool.perform(iterations: 5) { i in
            outer.add(i)
            // A perform inside a perform (tiles inside a job) must not wait for threads that
            // are all busy waiting.
            pool.perform(iterations: 7) { j in inner.add(i * 7 + j) }
        }
        XCTAssertEqual(outer.all, Array(repeating: 1, count: 5))
        XCTAssertEqual(inner.all, Array(repeating: 1, count: 35))
        // No helper threads at all: the caller does the work.
        let none = BackgroundThreads(threads: 0)
        let solo = Counts(4)
        none.perform(iterations: 4) { solo.add($0) }
        none.runInBackground { solo.add(0) }
        XCTAssertEqual(solo.all, [2, 1, 1, 1])
    }

    /// Three iterations that each wait for the other two can only finish if they really run
    /// at the same time: the caller and two helpers.
    func testIterationsRunInParallel() {
        let pool = BackgroundThreads(threads: 2)
        defer { pool.shutdown() }
        let arrived = Counts(1), results = Counts(3)
        pool.perform(iterations: 3) { i in
            arrived.add(0)
            let deadline = Date().addingTimeInterval(5)
            while arrived.all[0] < 3, Date() < deadline { usleep(1000) }
            if arrived.all[0] >= 3 { results.add(i) }
        }
        XCTAssertEqual(results.all.reduce(0, +), 3, "all three saw each other: \(results.all)")
    }

    /// The helpers run at nice +10, below the preview; the caller's own priority is untouched.
    func testHelpersRunAtLowPriority() {
        let pool = BackgroundThreads(threads: 1)
        defer { pool.shutdown() }
        let before = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        let seen = Counts(1)
        pool.runInBackground {
            errno = 0
            let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            if nice == BackgroundThreads.niceness { seen.add(0) }
        }
        XCTAssertEqual(seen.all, [1], "the job ran at nice \(BackgroundThreads.niceness)")
        XCTAssertEqual(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0), before)
    }

    /// The renderer gives the same pixels on the pool as on Dispatch's threads.
    func testRenderingOnThePoolIsTheSame() {
        let pool = BackgroundThreads(threads: 2)
        defer { pool.shutdown() }
        var image = RGBImage(width: 97, height: 61)
        for i in 0..<image.pixels.count { image.pixels[i] = UInt8(truncatingIfNeeded: i &* 31) }
        let renderer = FilmRenderer(look: FilmLook(preset: BuiltinPresets.trix400), width: 97, height: 61)
        var a = image, b = image
        renderer.render(&a, grainFrame: 3, threads: 3)
        renderer.render(&b, grainFrame: 3, threads: 3, parallel: pool)
        XCTAssertEqual(a.pixels, b.pixels)
        XCTAssertNotEqual(a.pixels, image.pixels)
    }

    /// Strips: every row once, in strips of the size asked (the last one short), on no more
    /// workers than asked; workers take the next strip left, so one that starts after the
    /// first has finished finds none; a frame of one strip runs on the caller alone.
    func testStripsCoverEveryRowOnceAndALateWorkerFindsNoneLeft() {
        let rows = Counts(100), workers = Counts(3), sizes = Counts(17)
        OneWorkerAfterAnother {}.performInStrips(rows: 100, stripRows: 16, workers: 3) { strip, worker in
            for y in strip { rows.add(y) }
            workers.add(worker)
            sizes.add(strip.count)
        }
        XCTAssertEqual(rows.all, Array(repeating: 1, count: 100))
        XCTAssertEqual(workers.all, [7, 0, 0], "the first worker took all 7 strips")
        XCTAssertEqual(sizes.all[16], 6)
        XCTAssertEqual(sizes.all[4], 1)
        // On real threads: every row once, whichever worker takes it.
        let pool = BackgroundThreads(threads: 2)
        defer { pool.shutdown() }
        // Every row once, whichever worker takes it, and no worker number (the index of its
        // scratch) in two strips at once.
        let shared = Counts(1000), used = Counts(3), busy = Counts(3), overlaps = Counts(1)
        pool.performInStrips(rows: 1000, stripRows: 3, workers: 3) { strip, worker in
            busy.add(worker)
            if busy.all[worker] > 1 { overlaps.add(0) }
            for y in strip { shared.add(y) }
            used.add(worker)
            busy.add(worker, -1)
        }
        XCTAssertEqual(shared.all, Array(repeating: 1, count: 1000))
        XCTAssertEqual(used.all.reduce(0, +), 334)
        XCTAssertEqual(overlaps.all, [0])
        let single = Counts(1)
        pool.performInStrips(rows: 10, stripRows: 16, workers: 3) { strip, worker in
            XCTAssertEqual(strip, 0..<10)
            single.add(worker)
        }
        XCTAssertEqual(single.all, [1])
    }
}
