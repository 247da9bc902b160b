#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLoopixSys

/// A named thread that runs a device's loop until asked to stop, and a `stop()` that waits for
/// it: the shape the IMU reader, the GPIO reader and the control server share. The loop gets a
/// `WorkerThread.Token` to ask whether it should go on; it must return within a short bound of
/// `stop()` (poll with a timeout, or poll `token.wakeup` beside its own fds).
public final class WorkerThread: Sendable {
    /// What the running loop sees.
    public final class Token: Sendable {
        private let stopping = Locked(false)
        /// Written to by `stop()`, so a loop blocked in `poll(2)` on its read end wakes at once.
        public let wakeup: WakeupPipe?

        init(wakeup: WakeupPipe?) { self.wakeup = wakeup }

        public var shouldStop: Bool { stopping.withLock { $0 } }

        func requestStop() {
            stopping.withLock { $0 = true }
            wakeup?.signal()
        }
    }

    private final class Start {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    public let name: String
    private let token: Token
    /// The thread to join; nil once joined.
    private let thread: Locked<pthread_t?>
    private let finished = Locked(false)

    /// Starts `body` on a new thread called `name` (the first 15 bytes show in `ps`/`top`).
    /// With `wakeup: true` the token carries a pipe the loop can poll beside its own fds.
    public init(name: String, wakeup: Bool = false, _ body: @escaping @Sendable (Token) -> Void) throws(SystemError) {
        self.name = name
        var pipe: WakeupPipe?
        if wakeup {
            do { pipe = try WakeupPipe() } catch { throw SystemError(name, "create a wake-up pipe", error) }
        }
        let token = Token(wakeup: pipe)
        let finished = self.finished
        self.token = token
        let start = Unmanaged.passRetained(Start(name: name) {
            body(token)
            finished.withLock { $0 = true }
        }).toOpaque()
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { arg in
            let start = Unmanaged<Start>.fromOpaque(arg!).takeRetainedValue()
            CLoopixSys_setThreadName(start.name)
            start.body()
            return nil
        }, start)
        guard rc == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw SystemError(name, "start a thread", Errno(rc))
        }
        thread = Locked(tid)
    }

    deinit { stop() }

    /// Whether the loop has returned (by itself, or after `stop()`).
    public var isFinished: Bool { finished.withLock { $0 } }

    /// Asks the loop to stop and waits until it has returned. Idempotent; must not be called
    /// from the loop itself.
    public func stop() {
        token.requestStop()
        let tid = thread.withLock { t -> pthread_t? in
            defer { t = nil }
            return t
        }
        if let tid { pthread_join(tid, nil) }
    }
}

/// A pipe that wakes a thread blocked in `poll(2)`: `signal()` writes a byte (never blocks;
/// a full pipe already wakes), the loop polls `readFD` and calls `drain()`.
public final class WakeupPipe: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    public init() throws(Errno) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw Errno.current }
        for fd in fds {
            let fl = fcntl(fd, F_GETFL)
            let fdfl = fcntl(fd, F_GETFD)
            guard fl >= 0, fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0, fdfl >= 0, fcntl(fd, F_SETFD, fdfl | FD_CLOEXEC) == 0 else {
                let e = Errno.current
                close(fds[0])
                close(fds[1])
                throw e
            }
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// The end to poll for `POLLIN`.
    public var readFD: Int32 { readEnd }

    public func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe (after poll said it is readable).
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while buffer.withUnsafeMutableBytes({ read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
    }
}
