/// Which edges of the trigger line fire it.
public enum TriggerEdge: String, Sendable, Equatable, CaseIterable {
    /// High to low: a switch or an open-collector output pulling a pulled-up line to ground.
    case falling
    case rising
    case both
}

/// The trigger line's edges to trigger times: edges of the chosen kind, each at its own kernel
/// timestamp, debounced on the leading edge (an edge within `debounceNanoseconds` of the last
/// accepted one is contact bounce), so the time kept is the first edge's, never a later bounce's.
public struct TriggerLogic: Sendable, Equatable {
    public let edge: TriggerEdge
    public let debounceNanoseconds: UInt64
    private var lastAccepted: UInt64?

    public init(edge: TriggerEdge, debounceNanoseconds: UInt64) {
        self.edge = edge
        self.debounceNanoseconds = debounceNanoseconds
    }

    /// The trigger time for an edge (`rising`: the line went high), nil when it does not fire.
    public mutating func edge(rising: Bool, at time: UInt64) -> UInt64? {
        if let last = lastAccepted, time >= last, time - last < debounceNanoseconds {
            return nil  // bounce of the edge just accepted (either direction)
        }
        switch edge {
        case .falling where rising, .rising where !rising: return nil
        default: break
        }
        lastAccepted = time
        return time
    }
}
