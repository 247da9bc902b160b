import ControlProtocol
import Foundation
import ImageFiles
import StrictJSON
import System

/// What the user changed and the camera remembers across restarts (`settings.json` in the
/// state directory). Versioned: a file of another version is moved aside, never misread.
public struct Settings: Equatable, Sendable {
    public static let currentVersion = 1

    public var version: Int = Settings.currentVersion
    /// The id of the current look.
    public var preset: String
    /// Intensity per look id, 0…1; a look not listed uses the configured default.
    public var intensities: [String: Double]
    public var lensIndex: Int
    /// Exposure compensation in stops, −3…3.
    public var ev: Double
    public var grid: Bool
    public var handedness: Handedness
    public var onboardingDone: Bool

    public init(preset: String = "portra", intensities: [String: Double] = [:], lensIndex: Int = 0,
                ev: Double = 0, grid: Bool = false, handedness: Handedness = .right,
                onboardingDone: Bool = false) {
        self.preset = preset
        self.intensities = intensities
        self.lensIndex = lensIndex
        self.ev = ev
        self.grid = grid
        self.handedness = handedness
        self.onboardingDone = onboardingDone
    }

    /// First-start settings from the configuration's `defaults` section (its intensity, a
    /// percentage, is stored for the default preset).
    public init(defaults: Config.DefaultsSection) {
        self.init(preset: defaults.preset, intensities: [defaults.preset: defaults.intensity / 100],
                  ev: defaults.ev, grid: defaults.grid, handedness: defaults.handedness)
    }

    /// The intensity (0…1) of look `preset`; `fallback` for a look the user never adjusted
    /// (the daemon passes the configuration's `defaults.intensity` / 100).
    public func intensity(for preset: String, fallback: Double = 1) -> Double {
        intensities[preset] ?? fallback
    }
}

/// A settings file that could not be written: the path and the problem.
public struct SettingsError: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let message: String
    public var description: String { "\(path): \(message)" }
}

/// Loads and saves `Settings` as `settings.json` in the state directory. Saving is atomic
/// (a temporary file, fsync, rename: `AtomicFile`), so a power cut leaves the old or the new
/// file, never half of one. Loading never fails: a missing file gives the defaults; a corrupt
/// file, a file of another version or one with impossible values is renamed to
/// `settings.json.bad-<UTC timestamp>` and the defaults are used, with a warning for the log.
/// A path that cannot hold the file (a directory in its place, a read-only or missing state
/// directory) is reported once; saving is then not tried again until `retry()` (SIGHUP).
/// Not thread-safe: the daemon saves from one queue.
public final class SettingsStore: Sendable {
    public static let fileName = "settings.json"
    public let directory: String
    public var path: String { (directory as NSString).appendingPathComponent(Self.fileName) }
    /// Why saving is off, once it failed for a reason that retrying will not cure.
    private let broken = Locked<String?>(nil)

    public init(directory: String) {
        self.directory = directory
    }

    /// The saved settings, or `defaults`; `warning` is one line to log when a bad file was moved
    /// aside (or could not be read).
    public func load(defaults: Settings) -> (settings: Settings, warning: String?) {
        let bytes: [UInt8]
        switch Self.read(path) {
        case .success(let b): bytes = b
        case .failure(let e) where e == .noSuchFile: return (defaults, nil)
        case .failure(let e):
            return (defaults, "\(path): cannot be read (\(e)); using the default settings")
        }
        let problem: String
        switch Self.decode(bytes) {
        case .success(let settings): return (settings, nil)
        case .failure(let p): problem = p.message
        }
        let stamp = Self.timestamp(Date())
        var aside = "\(path).bad-\(stamp)"
        var n = 1
        while FileManager.default.fileExists(atPath: aside) {
            n += 1
            aside = "\(path).bad-\(stamp)-\(n)"
        }
        if rename(path, aside) != 0 {
            return (defaults, "\(path): \(problem); could not move it aside (\(Errno.current)); using the default settings")
        }
        return (defaults, "\(path): \(problem); moved to \((aside as NSString).lastPathComponent), using the default settings")
    }

    /// Reads a whole small file, saying why not as an errno.
    private static func read(_ path: String) -> Result<[UInt8], Errno> {
        let fd: FileDescriptor
        do { fd = try .open(path, O_RDONLY) } catch { return .failure(error) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8192)
        let raw = fd.rawValue
        while out.count < 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(raw, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(Errno.current)
            }
            if n == 0 { break }
            out += chunk[0..<n]
        }
        return .success(out)
    }

    /// Writes `settings` atomically, replacing the previous file. After a failure that will
    /// not cure itself (`EISDIR`, `EACCES`, `EROFS`, `ENOENT`, `ENOTDIR`) it does nothing until
    /// `retry()`; the first such failure is the one thrown.
    public func save(_ settings: Settings) throws(SettingsError) {
        if broken.withLock({ $0 }) != nil { return }
        let bytes = Array((settings.json.serialized(.pretty) + "\n").utf8)
        do {
            try AtomicFile.write(bytes, to: path, replace: true)
        } catch {
            let permanent = [EISDIR, EACCES, EROFS, ENOENT, ENOTDIR, EPERM].contains((error as? ImageFileError)?.errno?.rawValue ?? 0)
            let message = "cannot be written (\(error))" + (permanent ? "; settings are kept in memory only until this is fixed (then send SIGHUP)" : "")
            if permanent { broken.withLock { $0 = message } }
            throw SettingsError(path: path, message: message)
        }
    }

    /// Tries saving again after a permanent failure (the configuration was reloaded).
    public func retry() { broken.withLock { $0 = nil } }

    /// Why a settings file was not used: "is corrupt (ev: 7 is out of range …)", "has version 9, …".
    struct Problem: Error { let message: String }

    static func decode(_ bytes: [UInt8]) -> Result<Settings, Problem> {
        do throws(FieldError) {
            let object = try FieldError.parseObject(bytes, source: "settings")
            var r = JSONFields(object) { field, message in FieldError(source: "settings", field: field, message: message) }
            guard let version = try r.integer("version", in: Int.min...Int.max) else { throw r.fail("version", "is missing") }
            guard version == Settings.currentVersion else {
                return .failure(Problem(message: "has version \(version), which this Loopix does not read (it reads \(Settings.currentVersion))"))
            }
            var intensities: [String: Double] = [:]
            switch try r.required("intensities") {
            case .object(let table):
                for (id, value) in table.members {
                    guard ControlRequest.isValidPresetID(id) else { throw r.fail("intensities.\(id)", "is not a preset id") }
                    intensities[id] = try JSONFields<FieldError>.number(value, in: 0...1, at: "intensities.\(id)", fail: r.fail)
                }
            case let other: throw r.fail("intensities", "must be an object of preset id → intensity, not \(other.kind)")
            }
            let preset = try r.string("preset")
            guard ControlRequest.isValidPresetID(preset) else { throw r.fail("preset", "\(JSONValue.quote(preset)) is not a preset id") }
            // Every field is written every time: one that is missing means a damaged file.
            func need<T>(_ value: T?, _ key: String) throws(FieldError) -> T {
                guard let value else { throw r.fail(key, "is missing") }
                return value
            }
            let settings = Settings(preset: preset, intensities: intensities,
                                    lensIndex: try need(r.integer("lensIndex", in: 0...15), "lensIndex"),
                                    ev: try need(r.number("ev", in: -3...3), "ev"),
                                    grid: try need(r.bool("grid"), "grid"),
                                    handedness: try need(r.choice("handedness", Handedness.self), "handedness"),
                                    onboardingDone: try need(r.bool("onboardingDone"), "onboardingDone"))
            try r.rejectUnknown()
            return .success(settings)
        } catch {
            return .failure(Problem(message: "is corrupt (\(error.field.isEmpty ? error.message : "\(error.field): \(error.message)"))"))
        }
    }

    static func timestamp(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return f.string(from: date)
    }
}

extension Settings {
    /// The file's JSON.
    var json: JSONValue {
        var table = JSONObject()
        for (id, v) in intensities.sorted(by: { $0.key < $1.key }) { table[id] = .number(v) }
        return .object(JSONObject([
            ("version", .int(version)), ("preset", .string(preset)), ("intensities", .object(table)),
            ("lensIndex", .int(lensIndex)), ("ev", .number(ev)), ("grid", .bool(grid)),
            ("handedness", .string(handedness.rawValue)), ("onboardingDone", .bool(onboardingDone)),
        ]))
    }
}
