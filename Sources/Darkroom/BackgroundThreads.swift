import FilmCore
import Glibc
import System
import Raster

/// A few threads of low priority (nice +10: the kernel gives the preview's threads the CPU
/// first), started once and kept. `perform` hands the iterations out to them and to the
/// calling thread, which takes its share too — so a `perform` inside a `perform` (the HEIC
/// writer's tiles inside a capture job) cannot deadlock, whatever the pool's size. Threads
/// created by the work (x265's) inherit the low priority. Built on System's `WorkerThread`
/// and `ConditionLock`.
public final class BackgroundThreads: ParallelWork, @unchecked Sendable {
    // @unchecked: `batches` and `stopping` are only touched under `guarded`.

    /// One `perform` call: the next iteration to hand out and how many are still running.
    private final class Batch: @unchecked Sendable {
        // @unchecked: the counters are only touched under the owning pool's lock.
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
    public private(set) var threadCount = 0
    private var batches: [Batch] = []
    private var stopping = false
    private let guarded = ConditionLock()
    private var threads: [WorkerThread] = []

    /// `threads` helper threads (the caller makes one more while it waits). A helper that
    /// cannot be started is one fewer; the caller still works.
    public init(threads count: Int) {
        for i in 0..<max(0, count) {
            // Each helper holds the pool until `shutdown` stops it.
            let helper = try? WorkerThread(name: "loopix.bg\(i)") { [self] _ in
                // Linux keeps the nice value per thread: this lowers this thread alone.
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceness)
                helperLoop()
            }
            if let helper { threads.append(helper) }
        }
        threadCount = threads.count
    }

    /// Stops the helpers and waits for them (they hold the pool alive until then).
    public func shutdown() {
        guarded.withLock {
            stopping = true
            guarded.broadcast()
        }
        for thread in threads { thread.stop() }
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
            guarded.lock()
            if iterations > 1 || !callerWorks {
                batches.append(batch)
                guarded.broadcast()
            }
            // Take iterations until none are left, then wait for the ones others run.
            while true {
                if callerWorks && batch.next < batch.iterations {
                    runNextIteration(of: batch)
                } else if batch.unfinished > 0 {
                    guarded.wait()
                } else {
                    break
                }
            }
            batches.removeAll { $0 === batch }
            guarded.unlock()
        }
    }

    private func helperLoop() {
        guarded.lock()
        while !stopping {
            guard let batch = batches.first(where: { $0.next < $0.iterations }) else {
                guarded.wait()
                continue
            }
            runNextIteration(of: batch)
        }
        guarded.unlock()
    }

    /// Takes the batch's next iteration and runs it without the lock. Called, and returns,
    /// with the lock held; wakes the waiters when it was the batch's last.
    private func runNextIteration(of batch: Batch) {
        let i = batch.next
        batch.next += 1
        guarded.unlock()
        batch.body(i)
        guarded.lock()
        batch.unfinished -= 1
        if batch.unfinished == 0 { guarded.broadcast() }
    }
}
