import Foundation
import ImageFiles

/// Which hand holds the camera: decides which side button is the shutter and where the
/// on-screen controls sit.
public enum Handedness: String, Codable, Sendable, Equatable, CaseIterable {
    case left, right
}

/// What the user changed and the camera remembers across restarts (`settings.json` in the
/// state directory). Versioned: a file of another version is moved aside, never misread.
public struct Settings: Codable, Equatable, Sendable {
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

    /// The first value that a well-formed file cannot hold, as "field: problem"; nil if all fine.
    func invalidField() -> String? {
        if !ControlRequest.isValidPresetID(preset) { return "preset: \"\(preset)\" is not a preset id" }
        for (id, v) in intensities.sorted(by: { $0.key < $1.key }) where !(0...1).contains(v) || !ControlRequest.isValidPresetID(id) {
            return "intensities.\(id): \(v) is not an intensity for a preset id (0…1)"
        }
        if !(0...15).contains(lensIndex) { return "lensIndex: \(lensIndex) is out of range (allowed 0…15)" }
        if !(-3...3).contains(ev) { return "ev: \(ev) is out of range (allowed -3…3)" }
        return nil
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
/// Not thread-safe: the daemon calls it from its one state owner.
public struct SettingsStore: Sendable {
    public static let fileName = "settings.json"
    public let directory: String
    public var path: String { (directory as NSString).appendingPathComponent(Self.fileName) }

    public init(directory: String) {
        self.directory = directory
    }

    /// The saved settings, or `defaults`; `warning` is one line to log when a bad file was moved aside
    /// (or could not be read).
    public func load(defaults: Settings) -> (settings: Settings, warning: String?) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
            if underlying?.code == Int(ENOENT) || (error as NSError).code == NSFileReadNoSuchFileError {
                return (defaults, nil)
            }
            return (defaults, "\(path): cannot be read (\(underlying.map { String(cString: strerror(Int32($0.code))) } ?? "\(error)")); using the default settings")
        }
        let problem: String
        switch Self.decode(data) {
        case .success(let settings): return (settings, nil)
        case .failure(let p): problem = p.reason
        }
        let stamp = Self.timestamp(Date())
        var aside = "\(path).bad-\(stamp)"
        var n = 1
        while FileManager.default.fileExists(atPath: aside) {
            n += 1
            aside = "\(path).bad-\(stamp)-\(n)"
        }
        if rename(path, aside) != 0 {
            let e = String(cString: strerror(errno))
            return (defaults, "\(path): \(problem); could not move it aside (\(e)); using the default settings")
        }
        return (defaults, "\(path): \(problem); moved to \((aside as NSString).lastPathComponent), using the default settings")
    }

    /// Writes `settings` atomically, replacing the previous file.
    public func save(_ settings: Settings) throws(SettingsError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let bytes: [UInt8]
        do {
            bytes = Array(try encoder.encode(settings)) + [0x0A]
        } catch {
            throw SettingsError(path: path, message: "cannot encode the settings (\(error))")
        }
        do {
            try AtomicFile.write(bytes, to: path, replace: true)
        } catch {
            throw SettingsError(path: path, message: "cannot be written (\(error))")
        }
    }

    static func decode(_ data: Data) -> Result<Settings, LoopixJSON.Problem> {
        let object: [String: Any]
        switch LoopixJSON.object(data) {
        case .success(let o): object = o
        case .failure(let problem): return .failure(LoopixJSON.Problem(reason: "is corrupt (\(problem.reason))"))
        }
        guard let v = object["version"] else { return .failure(LoopixJSON.Problem(reason: "is corrupt (no version)")) }
        guard let version = LoopixJSON.integer(v) else { return .failure(LoopixJSON.Problem(reason: "is corrupt (version is not a whole number)")) }
        guard version == Settings.currentVersion else {
            return .failure(LoopixJSON.Problem(reason: "has version \(version), which this Loopix does not read (it reads \(Settings.currentVersion))"))
        }
        let settings: Settings
        do {
            settings = try JSONDecoder().decode(Settings.self, from: data)
        } catch {
            return .failure(LoopixJSON.Problem(reason: "is corrupt (\(Self.describe(error)))"))
        }
        if let invalid = settings.invalidField() { return .failure(LoopixJSON.Problem(reason: "is corrupt (\(invalid))")) }
        return .success(settings)
    }

    private static func describe(_ error: Error) -> String {
        guard let e = error as? DecodingError else { return "\(error)" }
        func key(_ path: [CodingKey]) -> String { path.map(\.stringValue).joined(separator: ".") }
        switch e {
        case .keyNotFound(let k, let c): return "\(key(c.codingPath + [k])) is missing"
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c):
            return "\(key(c.codingPath)) has the wrong type or value"
        @unknown default: return "cannot be decoded"
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
