import System

/// What other threads may do to the controller, which lives on its own thread: hand it
/// control-socket requests, ask it to stop or to reload the configuration. The controller
/// looks at these once per loop (at least every frame); nothing here waits for it.
public final class ControllerHandle: Sendable {
    private struct Inbox {
        var requests: [PendingRequest] = []
        var stop = false
        var reload = false
    }
    private let inbox = Locked(Inbox())

    public init() {}

    /// Queues a request for the controller (the control server's dispatch).
    public func submit(_ request: PendingRequest) {
        inbox.withLock { $0.requests.append(request) }
    }

    /// Asks the loop to stop after the current frame (SIGTERM, SIGINT).
    public func requestStop() {
        inbox.withLock { $0.stop = true }
    }

    /// Asks the loop to re-read the configuration (SIGHUP).
    public func requestReload() {
        inbox.withLock { $0.reload = true }
    }

    public var stopRequested: Bool { inbox.withLock { $0.stop } }

    /// The requests queued since the last call, oldest first.
    func takeRequests() -> [PendingRequest] {
        inbox.withLock { i in
            defer { i.requests.removeAll(keepingCapacity: true) }
            return i.requests
        }
    }

    /// Whether a reload was asked for since the last call.
    func takeReload() -> Bool {
        inbox.withLock { i in
            defer { i.reload = false }
            return i.reload
        }
    }
}
