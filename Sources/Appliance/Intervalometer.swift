import Foundation
import StrictJSON
import System

/// A timelapse schedule: a shot every `everySeconds` from `start`, `count` of them (nil: no
/// end) or until `stop`. Slots are wall-clock times (seconds since 1970), so a schedule resumes
/// after a restart or a power cut where it was: slot i is due at `start + i × every`; each slot
/// is shot at most once (the last slot handled is kept on disk before its shot is taken), a
/// slot that passed while the camera was off or busy is skipped and counted, never made up.
public struct Intervalometer: Sendable, Equatable {
    public struct Settings: Sendable, Equatable {
        public var everySeconds: Double
        public var count: Int?
        /// Wall-clock seconds since 1970; nil in the configuration: when the daemon starts it.
        public var start: Double?
        public var stop: Double?
        public init(everySeconds: Double, count: Int? = nil, start: Double? = nil, stop: Double? = nil) {
            self.everySeconds = everySeconds
            self.count = count
            self.start = start
            self.stop = stop
        }
    }

    public let everySeconds: Double
    public let count: Int?
    public let start: Double
    public let stop: Double?
    /// The last slot handled (shot or skipped); -1 before the first.
    public private(set) var lastSlot = -1
    public private(set) var taken = 0
    public private(set) var skipped = 0

    public init(_ settings: Settings, now: Double) {
        everySeconds = max(settings.everySeconds, 0.1)
        count = settings.count
        start = settings.start ?? now
        stop = settings.stop
    }

    /// What to do in this turn: shoot slot `slot` (the newest one due), having skipped the
    /// ones before it that were missed; nil when no slot is due.
    public mutating func due(now: Double) -> Int? {
        guard !isFinished(now: now), now >= start else { return nil }
        var slot = Int(((now - start) / everySeconds).rounded(.down))
        if let count { slot = min(slot, count - 1) }
        guard slot > lastSlot else { return nil }
        if let stop, start + Double(slot) * everySeconds > stop { return nil }
        skipped += slot - lastSlot - 1  // missed while off, busy or asleep
        lastSlot = slot
        return slot
    }

    /// The due slot's shot was taken (true) or refused (the camera busy: skipped, counted).
    public mutating func shot(_ taken: Bool) {
        if taken { self.taken += 1 } else { skipped += 1 }
    }

    /// Every slot handled, or past `stop`.
    public func isFinished(now: Double) -> Bool {
        if let count, lastSlot >= count - 1 { return true }
        if let stop, now > stop, start + Double(lastSlot + 1) * everySeconds > stop { return true }
        return false
    }

    /// The next slot's time, nil when finished.
    public func nextShot(now: Double) -> Double? {
        guard !isFinished(now: now) else { return nil }
        let next = start + Double(lastSlot + 1) * everySeconds
        if let stop, next > stop { return nil }
        return next
    }

    // MARK: Kept on disk (state/interval.json)

    public func json() -> JSONValue {
        var o = JSONObject([("everySeconds", .number(everySeconds)), ("start", .number(start)), ("lastSlot", .int(lastSlot)),
                            ("taken", .int(taken)), ("skipped", .int(skipped))])
        if let count { o["count"] = .int(count) }
        if let stop { o["stop"] = .number(stop) }
        return .object(o)
    }

    public static func parse(_ data: Data, source: String) throws(ConfigError) -> Intervalometer {
        func fail(_ field: String, _ message: String) -> ConfigError { ConfigError(source: source, field: field, message: message) }
        let root = try FieldError.parseObject(data, source: source)
        var r = JSONFields(root, fail: fail)
        guard let every = try r.number("everySeconds", in: 0.1...31_536_000, unit: " s"),
              let start = try r.number("start", in: 0...1e12) else { throw fail("", "needs everySeconds and start") }
        var i = Intervalometer(Settings(everySeconds: every, count: try r.integer("count", in: 1...10_000_000),
                                        start: start, stop: try r.number("stop", in: 0...1e12)), now: start)
        i.lastSlot = try r.integer("lastSlot", in: -1...Int(Int32.max)) ?? -1
        i.taken = try r.integer("taken", in: 0...Int(Int32.max)) ?? 0
        i.skipped = try r.integer("skipped", in: 0...Int(Int32.max)) ?? 0
        try r.rejectUnknown()
        return i
    }
}
