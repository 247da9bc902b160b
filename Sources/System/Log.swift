#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Logging for journald: one line per event on standard error, prefixed with its syslog
/// priority (`<3>` error, `<4>` warning, `<6>` info) so that journald keeps the levels.
/// Every module logs through this; tests route it elsewhere with `setSink`.
public enum Log {
    public enum Level: Int32, Sendable {
        case error = 3
        case warning = 4
        case info = 6
    }

    public typealias Sink = @Sendable (Level, String) -> Void

    /// Writes `<N>message\n` to standard error with one `write(2)`, so lines from several
    /// threads never interleave.
    public static let standardError: Sink = { level, message in
        var line = "<\(level.rawValue)>"
        for c in message.unicodeScalars { line.unicodeScalars.append(c == "\n" || c == "\r" ? " " : c) }
        line += "\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { raw in
            var done = 0
            while done < raw.count {
                let n = Glibc.write(2, raw.baseAddress! + done, raw.count - done)
                if n > 0 { done += n } else if n < 0 && errno == EINTR { continue } else { break }
            }
        }
    }

    private static let current = Locked<Sink>(standardError)

    /// Routes every later line to `sink` (tests collect lines this way); returns the previous one.
    @discardableResult
    public static func setSink(_ sink: @escaping Sink) -> Sink {
        current.withLock { s in
            let old = s
            s = sink
            return old
        }
    }

    public static func write(_ level: Level, _ message: String) {
        let sink = current.withLock { $0 }
        sink(level, message)
    }

    public static func error(_ message: String) { write(.error, message) }
    public static func warning(_ message: String) { write(.warning, message) }
    public static func info(_ message: String) { write(.info, message) }
}

/// Lets a repeated message through at most once per `interval` seconds and counts the ones it
/// held back, so a burst (307 refused shutter presses in 12 s) is a few lines, not hundreds:
/// `shutter refused: queue full (and 41 more like it)`.
public struct LogThrottle: Sendable {
    public let interval: Double
    private var nextAllowed: UInt64 = 0
    private var suppressed = 0

    public init(interval: Double) { self.interval = interval }

    /// The line to log now (with the count held back since the last one), or nil to stay quiet.
    public mutating func admit(_ message: String) -> String? {
        let now = MonotonicClock.now()
        guard now >= nextAllowed else {
            suppressed += 1
            return nil
        }
        nextAllowed = now + UInt64(interval * 1e9)
        defer { suppressed = 0 }
        return suppressed == 0 ? message : "\(message) (and \(suppressed) more like it)"
    }
}
