import Controls
import System

/// What `ButtonInput` and `TriggerInput` share: the thread that reads the lines and the locked
/// queue it fills, which `drain()` empties. The thread is stopped (and waited for) on deinit.
final class InputThread: Sendable {
    private let events: Locked<[InputEvent]>
    private let thread: WorkerThread

    /// Starts `run` on a thread called `threadName`; `events` is the queue it fills, `input`
    /// the input's name for the error.
    init(_ threadName: String, input: String, events: Locked<[InputEvent]>,
         _ run: @escaping @Sendable (WorkerThread.Token) -> Void) throws(GPIOError) {
        self.events = events
        do {
            thread = try WorkerThread(name: threadName, run)
        } catch {
            throw GPIOError(errno: error.errno, what: "\(input): starting the reading thread")
        }
    }

    deinit { thread.stop() }

    /// The events queued since the last call, oldest first.
    func drain() -> [InputEvent] {
        events.withLock { q in
            defer { q.removeAll(keepingCapacity: true) }
            return q
        }
    }

    func stop() { thread.stop() }

    var isRunning: Bool { !thread.isFinished }
}
