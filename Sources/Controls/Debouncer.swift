/// Software debouncing of switch contacts from timestamped edges: a line's new level counts
/// once it has held, with no further edge, for `period` nanoseconds. Pure logic; the caller
/// feeds edges (kernel timestamps) and calls `tick` when `nextDeadline` has passed.
///
/// With a zero period every edge that changes the level counts at once (and repeated edges of
/// the same direction, which a lost event or a glitch produce, count once).
public struct Debouncer: Sendable {
    public struct Change: Sendable, Equatable {
        public var line: Int
        public var level: Bool
        /// When the line reached this level (the edge's timestamp), ns.
        public var time: UInt64
        public init(line: Int, level: Bool, time: UInt64) {
            self.line = line
            self.level = level
            self.time = time
        }
    }

    private struct Line {
        var stable: Bool
        var raw: Bool
        var lastEdge: UInt64
        var pending: Bool
    }

    public let period: UInt64
    private var lines: [Int: Line] = [:]

    /// `levels`: each line's level at the start (true: high; a pulled-up button is released).
    public init(periodNanoseconds: UInt64, levels: [Int: Bool]) {
        period = periodNanoseconds
        for (line, level) in levels { lines[line] = Line(stable: level, raw: level, lastEdge: 0, pending: false) }
    }

    /// The debounced level of `line`.
    public func level(_ line: Int) -> Bool? { lines[line]?.stable }

    /// An edge: `line` went to `level` at `time`. Returns the changes it makes final (only
    /// with a zero period; otherwise changes come from `tick`).
    public mutating func edge(line: Int, level: Bool, at time: UInt64) -> [Change] {
        var l = lines[line] ?? Line(stable: !level, raw: !level, lastEdge: 0, pending: false)
        defer { lines[line] = l }
        l.raw = level
        l.lastEdge = time
        if period == 0 {
            l.pending = false
            guard l.stable != level else { return [] }
            l.stable = level
            return [Change(line: line, level: level, time: time)]
        }
        l.pending = true
        return []
    }

    /// The level read from the hardware at `time` (a resync after an idle spell or lost
    /// events): treated as an edge if it differs from the last edge seen.
    public mutating func observed(line: Int, level: Bool, at time: UInt64) -> [Change] {
        guard let l = lines[line], l.raw != level || (period == 0 && l.stable != level) else { return [] }
        return edge(line: line, level: level, at: time)
    }

    /// The earliest time a pending change becomes final, if any.
    public var nextDeadline: UInt64? {
        lines.values.filter(\.pending).map { $0.lastEdge &+ period }.min()
    }

    /// The changes final by `now`, in time order.
    public mutating func tick(at now: UInt64) -> [Change] {
        var out: [Change] = []
        for (line, var l) in lines where l.pending && now >= l.lastEdge &+ period {
            l.pending = false
            if l.stable != l.raw {
                l.stable = l.raw
                out.append(Change(line: line, level: l.raw, time: l.lastEdge))
            }
            lines[line] = l
        }
        return out.sorted { ($0.time, $0.line) < ($1.time, $1.line) }
    }
}
