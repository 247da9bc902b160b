import StrictJSON

/// One line of `loopix doctor`: what was found, how good that is, and what to do about it.
public struct Finding: Sendable, Equatable {
    public enum Area: String, Sendable, CaseIterable {
        case board, configTxt = "config.txt", camera, display, gpio, imu, storage, service, web, license
    }

    public enum Level: String, Sendable, Comparable {
        /// Works.
        case ok
        /// Worth knowing; nothing is wrong (headless, simulated camera, daemon not running).
        case info
        /// Loopix runs, but something a builder probably wants is missing.
        case warning
        /// Something the configuration requires is missing: `doctor` exits non-zero.
        case problem

        private var rank: Int { [.ok, .info, .warning, .problem].firstIndex(of: self)! }
        public static func < (a: Level, b: Level) -> Bool { a.rank < b.rank }
    }

    public var area: Area
    public var level: Level
    public var message: String
    /// What to do; nil when nothing needs doing.
    public var advice: String?

    public init(_ area: Area, _ level: Level, _ message: String, advice: String? = nil) {
        self.area = area
        self.level = level
        self.message = message
        self.advice = advice
    }

    /// `PROBLEM  camera      libcamera lists no camera → check the ribbon cable…`
    public var line: String {
        let tag = level.rawValue.uppercased().padding(toLength: 8, withPad: " ", startingAt: 0)
        let name = area.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)
        return "\(tag) \(name) \(message)" + (advice.map { " → \($0)" } ?? "")
    }

    public var json: JSONValue {
        var o = JSONObject([("area", .string(area.rawValue)), ("level", .string(level.rawValue)), ("message", .string(message))])
        if let advice { o["advice"] = .string(advice) }
        return .object(o)
    }
}
