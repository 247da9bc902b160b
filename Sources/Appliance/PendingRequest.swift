import ControlProtocol
import System

/// One control-socket request on its way from the server's thread to the controller and its
/// reply on the way back. Exactly one of two things happens to it: the controller claims it
/// and answers, or its deadline passes unclaimed and the server answers "busy" — a request
/// that was told "busy" is never carried out later.
public final class PendingRequest: Sendable {
    public let request: ControlRequest
    /// Past this, an unclaimed request expires.
    public let deadline: Deadline

    private enum Stage {
        case waiting
        case claimed
        case answered(ControlReply)
        case expired
    }
    private let stage = Locked(Stage.waiting)
    private let onAnswer: @Sendable () -> Void

    /// `onAnswer` is called (on the answering thread) once the reply is there.
    public init(_ request: ControlRequest, deadline: Deadline, onAnswer: @escaping @Sendable () -> Void = {}) {
        self.request = request
        self.deadline = deadline
        self.onAnswer = onAnswer
    }

    /// The controller takes the request; false when it has expired already (then it must not
    /// be carried out: its client was told "busy").
    public func claim() -> Bool {
        stage.withLock { s in
            guard case .waiting = s else { return false }
            s = .claimed
            return true
        }
    }

    /// The controller's reply to a claimed request.
    public func answer(_ reply: ControlReply) {
        stage.withLock { s in
            if case .claimed = s { s = .answered(reply) }
        }
        onAnswer()
    }

    /// The server gives up waiting: true when nobody had claimed it (so it will never run and
    /// "busy" may be sent); false when the controller is carrying it out right now.
    public func expire() -> Bool {
        stage.withLock { s in
            guard case .waiting = s else { return false }
            s = .expired
            return true
        }
    }

    /// Whether the controller has taken it (it can no longer expire: it is answered however
    /// long that takes, as `wait-saved` is once its photos are saved).
    public var isClaimed: Bool {
        stage.withLock { s in
            switch s {
            case .claimed, .answered: return true
            case .waiting, .expired: return false
            }
        }
    }

    /// The reply, once answered.
    public var reply: ControlReply? {
        stage.withLock { s in
            if case .answered(let reply) = s { return reply }
            return nil
        }
    }
}
