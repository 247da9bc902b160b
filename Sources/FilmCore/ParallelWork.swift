import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs `iterations` pieces of work in parallel and returns when every one is done. The
/// renderer and the HEIC writer take one, so that a photo can be developed on threads that
/// yield to the live preview (`BackgroundThreads`) while the preview itself uses Dispatch's.
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

/// A few threads of low priority (nice +10: the kernel gives the preview's threads the CPU
/// first), started once and kept. `perform` hands the iterations out to them and to the
/// calling thread, which takes its share too — so a `perform` inside a `perform` (the HEIC
/// writer's tiles inside a capture job) cannot deadlock, whatever the pool's size. Threads
/// created by the work (x265's) inherit the low priority.
public final class BackgroundThreads: ParallelWork, @unchecked Sendable {
    // @unchecked: `batches` and `stopping` are only touched under `mutex`/`condition`.

    /// One `perform` call: the next iteration to hand out and how many are still running.
    private final class Batch: @unchecked Sendable {
        // @unchecked: the counters are only touched under the owning pool's mutex.
        let body: @Sendable (Int) -> Void
        let iterations: Int
        var next = 0
        var unfinished: Int
        init(iterations: Int, body: @escaping @Sendable (Int) -> Void) {
            self.iterations = iterations
            self.body = body
            unfinished = iterations
        }
    }

    public static let niceness: Int32 = 10
    public let threadCount: Int
    private var batches: [Batch] = []
    private var stopping = false
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var threads: [pthread_t] = []

    /// `threads` helper threads (the caller makes one more while it waits).
    public init(threads count: Int) {
        threadCount = max(0, count)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
        for _ in 0..<threadCount {
            var tid = pthread_t()
            let context = Unmanaged.passRetained(self).toOpaque()
            let rc = pthread_create(&tid, nil, { arg in
                let pool = Unmanaged<BackgroundThreads>.fromOpaque(arg!).takeRetainedValue()
                // Linux keeps the nice value per thread: this lowers this thread alone.
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, BackgroundThreads.niceness)
                pool.helperLoop()
                return nil
            }, context)
            if rc == 0 {
                threads.append(tid)
            } else {
                Unmanaged<BackgroundThreads>.fromOpaque(context).release()  // fewer helpers; the caller still works
            }
        }
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Stops the helpers and waits for them (they hold the pool alive until then).
    public func shutdown() {
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
        for tid in threads { pthread_join(tid, nil) }
        threads.removeAll()
    }

    public func perform(iterations: Int, _ body: @Sendable (Int) -> Void) {
        run(iterations: iterations, callerWorks: true, body)
    }

    /// Runs `body` on one of the pool's threads (at its low priority) and waits for it.
    public func runInBackground(_ body: @Sendable () -> Void) {
        withoutActuallyEscaping(body) { body in
            run(iterations: 1, callerWorks: threadCount == 0) { _ in body() }
        }
    }

    private func run(iterations: Int, callerWorks: Bool, _ body: @Sendable (Int) -> Void) {
        guard iterations > 0 else { return }
        withoutActuallyEscaping(body) { body in
            // Safe to let `body` escape into the batch: this call returns only after every
            // iteration has finished, and the batch is then unreachable.
            let batch = Batch(iterations: iterations, body: body)
            pthread_mutex_lock(mutex)
            if iterations > 1 || !callerWorks {
                batches.append(batch)
                pthread_cond_broadcast(condition)
            }
            // Take iterations until none are left, then wait for the ones others run.
            while true {
                if callerWorks && batch.next < batch.iterations {
                    runNextIteration(of: batch)
                } else if batch.unfinished > 0 {
                    pthread_cond_wait(condition, mutex)
                } else {
                    break
                }
            }
            batches.removeAll { $0 === batch }
            pthread_mutex_unlock(mutex)
        }
    }

    private func helperLoop() {
        pthread_mutex_lock(mutex)
        while !stopping {
            guard let batch = batches.first(where: { $0.next < $0.iterations }) else {
                pthread_cond_wait(condition, mutex)
                continue
            }
            runNextIteration(of: batch)
        }
        pthread_mutex_unlock(mutex)
    }

    /// Takes the batch's next iteration and runs it without the lock. Called, and returns,
    /// with `mutex` held; wakes the waiters when it was the batch's last.
    private func runNextIteration(of batch: Batch) {
        let i = batch.next
        batch.next += 1
        pthread_mutex_unlock(mutex)
        batch.body(i)
        pthread_mutex_lock(mutex)
        batch.unfinished -= 1
        if batch.unfinished == 0 { pthread_cond_broadcast(condition) }
    }
}
