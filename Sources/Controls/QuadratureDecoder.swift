/// Decodes a rotary encoder's two phases (A, B) into detents, from their edges, with a
/// transition table: of the 16 (previous, current) phase pairs, the four Gray-code steps
/// forward count +1, the four backward −1, the four with no change 0, and the four where
/// both phases changed at once are invalid (a missed edge): they are ignored, the state is
/// taken over, nothing is counted.
///
/// Clockwise (+) is A leading B: AB = 00 → 10 → 11 → 01 → 00. Steps are added up and turned
/// into detents only when the phases come back to a resting state (where the encoder clicks
/// into a detent): with `transitionsPerDetent` 4 that is the state it rested in at the start
/// (`restState`, 11 for pulled-up contacts that are open at the detent); with 2, that state
/// and its opposite; with 1, every state. Contact bounce on one phase (while the other is
/// steady) goes back and forth between two neighbouring states, adds up to nothing and
/// counts no step; a full turn from rest to rest counts exactly one.
///
/// Pure logic on timestamps; `EncoderAcceleration` scales detents for fast turns.
public struct QuadratureDecoder: Sendable {
    public enum Phase: Sendable { case a, b }

    /// 1, 2 or 4 transitions per detent.
    public let transitionsPerDetent: Int
    /// The phases (A << 1 | B) at a detent.
    public let restState: Int
    public private(set) var state: Int
    /// Steps since the last resting state.
    public private(set) var pending = 0
    /// Transitions where both phases changed at once (ignored).
    public private(set) var invalidTransitions = 0

    /// Position in the clockwise cycle of each state AB: 00 → 0, 01 → 3, 10 → 1, 11 → 2.
    private static let position = [0, 3, 1, 2]

    public init(transitionsPerDetent: Int = 4, a: Bool = true, b: Bool = true) {
        self.transitionsPerDetent = [1, 2, 4].contains(transitionsPerDetent) ? transitionsPerDetent : 4
        state = (a ? 2 : 0) | (b ? 1 : 0)
        restState = state
    }

    /// The step from `from` to `to`: +1, −1, 0, or nil when invalid (both phases changed).
    public static func step(from: Int, to: Int) -> Int? {
        switch (position[to & 3] - position[from & 3] + 4) % 4 {
        case 0: return 0
        case 1: return 1
        case 3: return -1
        default: return nil
        }
    }

    func isRest(_ s: Int) -> Bool {
        switch transitionsPerDetent {
        case 1: return true
        case 2: return s == restState || s == (restState ^ 3)
        default: return s == restState
        }
    }

    /// Phase `phase` went to `level`. Returns the detents completed (signed, usually 0 or ±1).
    public mutating func edge(_ phase: Phase, level: Bool) -> Int {
        let bit = phase == .a ? 2 : 1
        let next = level ? (state | bit) : (state & ~bit)
        return move(to: next)
    }

    /// Both phases as read from the hardware (a resync after lost events): moves there,
    /// counting a valid step as an edge would.
    public mutating func levels(a: Bool, b: Bool) -> Int {
        move(to: (a ? 2 : 0) | (b ? 1 : 0))
    }

    private mutating func move(to next: Int) -> Int {
        guard next != state else { return 0 }
        if let d = Self.step(from: state, to: next) {
            pending += d
        } else {
            invalidTransitions += 1
        }
        state = next
        guard isRest(next) else { return 0 }
        let n = pending
        pending = 0
        // A whole turn is ±transitionsPerDetent; a missed transition leaves a remainder:
        // round half away from zero (a turn that went at least half way counts).
        let q = Double(n) / Double(transitionsPerDetent)
        return Int(q.rounded(.toNearestOrAwayFromZero))
    }
}

/// Faster turns move further: detents turned faster than a tier's rate (detents per second,
/// measured over the last few detents in the same direction) are multiplied by its factor.
public struct EncoderAcceleration: Sendable, Equatable {
    public struct Tier: Sendable, Equatable {
        public var rate: Double
        public var factor: Int
        public init(rate: Double, factor: Int) {
            self.rate = rate
            self.factor = factor
        }
    }

    /// Ascending by rate. Default: over 10 detents/s ×2, over 25 detents/s ×4.
    public var tiers: [Tier]
    /// Detent times (ns) in the current direction, newest last.
    private var recent: [UInt64] = []
    private var direction = 0

    public init(tiers: [Tier] = [Tier(rate: 10, factor: 2), Tier(rate: 25, factor: 4)]) {
        self.tiers = tiers.sorted { $0.rate < $1.rate }
    }

    /// No acceleration: every detent is one step.
    public static let none = EncoderAcceleration(tiers: [])

    /// The rate (detents per second) of the turn so far, from the last four detents.
    public var rate: Double {
        guard recent.count >= 2, let first = recent.first, let last = recent.last, last > first else { return 0 }
        return Double(recent.count - 1) * 1e9 / Double(last - first)
    }

    /// `detents` turned at `time` (ns) → steps to apply.
    public mutating func apply(_ detents: Int, at time: UInt64) -> Int {
        guard detents != 0 else { return 0 }
        let sign = detents > 0 ? 1 : -1
        if sign != direction || (recent.last.map { time < $0 || time - $0 > 500_000_000 } ?? true) {
            recent.removeAll(keepingCapacity: true)
            direction = sign
        }
        for _ in 0..<min(abs(detents), 4) { recent.append(time) }
        if recent.count > 4 { recent.removeFirst(recent.count - 4) }
        let r = rate
        let factor = tiers.last { r > $0.rate }?.factor ?? 1
        return detents * factor
    }
}
