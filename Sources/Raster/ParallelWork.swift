import Dispatch
import Synchronization

/// Runs `iterations` pieces of work in parallel and returns when every one is done. The
/// renderer and the HEIC writer take one, so that a photo can be developed on threads that
/// yield to the live preview (Darkroom's `BackgroundThreads`) while the preview itself uses
/// Dispatch's.
public protocol ParallelWork: Sendable {
    func perform(iterations: Int, _ body: @Sendable (Int) -> Void)
}

extension ParallelWork {
    /// `rows` in strips of `stripRows`, on `workers` iterations side by side, each taking the
    /// next strip left until none are (`body` gets the strip and the worker's number, for
    /// per-worker scratch). Uneven strips balance out, and so does a worker that starts late or
    /// loses its core a while (waking up, the camera's or the encoder's threads, a VM's
    /// neighbours), where a fixed share per worker would leave the whole waiting for it. With
    /// one worker (or one strip) `body` runs once, on the caller, with all the rows.
    public func performInStrips(rows: Int, stripRows: Int, workers: Int, _ body: @Sendable (Range<Int>, Int) -> Void) {
        precondition(stripRows > 0, "strips of no rows")
        let strips = (rows + stripRows - 1) / stripRows
        let workers = max(1, min(workers, strips))
        guard workers > 1 else { return body(0..<rows, 0) }
        let nextStrip = Atomic<Int>(0)
        perform(iterations: workers) { worker in
            while true {
                let s = nextStrip.add(1, ordering: .relaxed).oldValue
                guard s < strips else { break }
                body((s * stripRows)..<min((s + 1) * stripRows, rows), worker)
            }
        }
    }

    /// `rows` on at most `threads` threads, in strips of `minimumRows` (the last one shorter) as
    /// `performInStrips` hands them out; a frame of fewer whole strips than threads gets one
    /// thread a strip (more would cost more than they save).
    public func performInBands(rows: Int, threads: Int, minimumRows: Int = 16, _ body: @Sendable (Range<Int>) -> Void) {
        performInStrips(rows: rows, stripRows: minimumRows, workers: max(1, min(threads, rows / minimumRows))) { strip, _ in body(strip) }
    }
}

/// Dispatch's `concurrentPerform`: the global pool, at the caller's priority.
public struct DispatchParallelWork: ParallelWork {
    public init() {}
    public func perform(iterations: Int, _ body: @Sendable (Int) -> Void) {
        DispatchQueue.concurrentPerform(iterations: iterations, execute: body)
    }
}
