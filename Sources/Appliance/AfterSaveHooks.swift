#if canImport(Glibc)
import Glibc
#endif
import Foundation
import System

/// What runs after each photo is saved (`capture.afterSave`): a command as an argv array, run
/// without a shell, at most `running` at once, each stopped after `timeoutSeconds`.
public struct AfterSaveSettings: Sendable, Equatable {
    /// The program (an absolute path) and its arguments. Every argument that is exactly
    /// `{path}` becomes the saved file's path; without one, the path is the last argument.
    public var command: [String]
    public var timeoutSeconds: Double = 300
    /// Hooks running at once.
    public var running = 2
    /// Saved photos waiting for a free slot; beyond that a photo's hook is skipped (counted).
    public var waiting = 64

    public static let placeholder = "{path}"

    public init(command: [String]) { self.command = command }

    /// The argv for one saved file: the path is one argument, whatever characters it holds.
    public func arguments(for path: String) -> [String] {
        command.contains(Self.placeholder) ? command.map { $0 == Self.placeholder ? path : $0 } : command + [path]
    }
}

/// Runs the after-save command for each saved photo, on a thread of its own, so the camera never
/// waits for an upload: `saved(_:)` only queues. A hook that fails or runs out of time is one
/// log line; the photo is saved already. Each hook runs under a keeper process
/// (`KeptProcess`) that everything it starts stays under, even through `setsid` or a
/// double fork: a hook has finished when all of it has, and its time limit (or the daemon
/// stopping, or dying) ends all of it: SIGTERM, then SIGKILL 5 s later.
public final class AfterSaveHooks: Sendable {
    public struct Counts: Sendable, Equatable {
        public var running = 0, waiting = 0, succeeded = 0, failed = 0, skipped = 0
    }

    private struct Child {
        let pid: pid_t
        let path: String
        let deadline: UInt64
        var killAt: UInt64?
    }
    private struct State {
        var queue: [String] = []
        var children: [Child] = []
        var counts = Counts()
    }

    public let settings: AfterSaveSettings
    private let state = Locked(State())
    private let worker = Locked<WorkerThread?>(nil)
    /// Wakes the thread when a photo is queued (it otherwise looks at its children every 50 ms).
    private let queued: WakeupPipe
    static let killGraceNs: UInt64 = 5_000_000_000

    public init(settings: AfterSaveSettings) throws(SystemError) {
        self.settings = settings
        do { queued = try WakeupPipe() } catch { throw SystemError("after-save hooks", "create a wake-up pipe", error) }
        let thread = try WorkerThread(name: "loopix.hooks", wakeup: true) { [state, settings, queued] token in
            Self.run(token: token, queued: queued, state: state, settings: settings)
        }
        worker.withLock { $0 = thread }
    }

    /// Queues the hook for a saved file; never blocks.
    public func saved(_ path: String) {
        let skipped = state.withLock { s -> Bool in
            guard s.queue.count < settings.waiting else {
                s.counts.skipped += 1
                return true
            }
            s.queue.append(path)
            s.counts.waiting = s.queue.count
            return false
        }
        queued.signal()
        if skipped {
            Log.warning("after-save hook skipped for \(path): \(settings.waiting) photos already waiting for one")
        }
    }

    public var counts: Counts { state.withLock { $0.counts } }

    /// Stops the thread; hooks still running are sent SIGTERM, those waiting are not run.
    /// Only the first call does this (the daemon's shutdown stops the hooks, then deinit does).
    public func stop() {
        let thread = worker.withLock { t -> WorkerThread? in
            defer { t = nil }
            return t
        }
        guard let thread else { return }
        thread.stop()
        let (running, waiting) = state.withLock { s -> (Int, Int) in
            for child in s.children { kill(child.pid, SIGTERM) }  // the keeper ends all of the hook
            return (s.children.count, s.queue.count)
        }
        if running + waiting > 0 {
            Log.warning("after-save hooks: \(running) stopped, \(waiting) not run (the daemon is stopping)")
        }
    }

    deinit { stop() }

    // MARK: The thread

    private static func run(token: WorkerThread.Token, queued: WakeupPipe, state: Locked<State>, settings: AfterSaveSettings) {
        var poller = [pollfd(fd: token.wakeup?.readFD ?? -1, events: Int16(POLLIN), revents: 0),
                      pollfd(fd: queued.readFD, events: Int16(POLLIN), revents: 0)]
        while !token.shouldStop {
            startWaiting(state: state, settings: settings)
            reap(state: state, settings: settings)
            _ = poll(&poller, 2, 50)  // children are polled: waitpid(-1) would reap others' too
            token.wakeup?.drain()
            queued.drain()
        }
    }

    private static func startWaiting(state: Locked<State>, settings: AfterSaveSettings) {
        while true {
            let next = state.withLock { s -> String? in
                guard s.children.count < settings.running, !s.queue.isEmpty else { return nil }
                let path = s.queue.removeFirst()
                s.counts.waiting = s.queue.count
                return path
            }
            guard let path = next else { return }
            switch spawn(settings.arguments(for: path), path: path) {
            case .success(let pid):
                let deadline = MonotonicClock.now() + UInt64(settings.timeoutSeconds * 1e9)
                state.withLock { s in
                    s.children.append(Child(pid: pid, path: path, deadline: deadline))
                    s.counts.running = s.children.count
                }
            case .failure(let error):
                state.withLock { $0.counts.failed += 1 }
                Log.error("after-save hook for \(path): cannot start \(settings.command[0]) (\(error))")
            }
        }
    }

    private static func reap(state: Locked<State>, settings: AfterSaveSettings) {
        let now = MonotonicClock.now()
        let children = state.withLock { $0.children }
        for child in children {
            var status: Int32 = 0
            let r = waitpid(child.pid, &status, WNOHANG)
            if r == child.pid || (r < 0 && errno == ECHILD) {
                let ok = r == child.pid && status & 0x7f == 0 && (status >> 8) & 0xff == 0
                state.withLock { s in
                    s.children.removeAll { $0.pid == child.pid }
                    s.counts.running = s.children.count
                    if ok { s.counts.succeeded += 1 } else { s.counts.failed += 1 }
                }
                if !ok {
                    let why = child.killAt != nil ? "stopped after \(format(settings.timeoutSeconds)) s (its time limit)"
                        : status & 0x7f != 0 ? "killed by signal \(status & 0x7f)" : "exited with status \((status >> 8) & 0xff)"
                    Log.warning("after-save hook for \(child.path): \(why); the photo is saved")
                }
                continue
            }
            if child.killAt == nil && now >= child.deadline {
                kill(child.pid, SIGTERM)  // the keeper: SIGTERM to all of the hook, SIGKILL after the grace
                state.withLock { s in
                    if let i = s.children.firstIndex(where: { $0.pid == child.pid }) { s.children[i].killAt = now + killGraceNs + 2_000_000_000 }
                }
            } else if let killAt = child.killAt, now >= killAt {
                // A keeper that did not end its hook in time (it should never come to this).
                kill(-child.pid, SIGKILL)
                kill(child.pid, SIGKILL)
            }
        }
    }

    /// The hook under its keeper (`KeptProcess`), with the daemon's environment and `LOOPIX_PATH`.
    private static func spawn(_ arguments: [String], path: String) -> Result<pid_t, Errno> {
        var environment = ProcessInfo.processInfo.environment
        environment["LOOPIX_PATH"] = path
        do throws(Errno) {
            return .success(try KeptProcess.spawn(arguments, environment: environment, graceMilliseconds: Int32(killGraceNs / 1_000_000)))
        } catch {
            return .failure(error)
        }
    }

    private static func format(_ x: Double) -> String { x == x.rounded() ? String(Int(x)) : String(x) }
}
