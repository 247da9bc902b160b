import Foundation

/// Logging for journald: one line per event on standard error, prefixed with its syslog
/// priority (`<3>` error, `<4>` warning, `<6>` info) so that journald keeps the levels.
public enum Log {
    public enum Level: Int32, Sendable {
        case error = 3
        case warning = 4
        case info = 6
    }

    /// Tests and tools can route log lines elsewhere; the default writes to stderr.
    nonisolated(unsafe) public static var sink: @Sendable (Level, String) -> Void = { level, message in
        let line = "<\(level.rawValue)>\(message.replacingOccurrences(of: "\n", with: " "))\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    public static func error(_ message: String) { sink(.error, message) }
    public static func warning(_ message: String) { sink(.warning, message) }
    public static func info(_ message: String) { sink(.info, message) }
}
