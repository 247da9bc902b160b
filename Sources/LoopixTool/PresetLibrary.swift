import FilmCore
import Foundation

/// The built-in looks plus the user's JSON presets from a directory (each `*.json` file is
/// one preset; a preset's `cube` path is relative to its file).
public struct PresetLibrary: Sendable {
    public let presets: [Preset]
    /// Files that were rejected, one line each ("file: field: problem").
    public let problems: [String]

    /// The directory searched when none is given: $LOOPIX_PRESETS, else
    /// $XDG_CONFIG_HOME/loopix/presets (~/.config/loopix/presets).
    public static var defaultDirectory: String? {
        let env = ProcessInfo.processInfo.environment
        if let dir = env["LOOPIX_PRESETS"], !dir.isEmpty { return dir }
        if let config = env["XDG_CONFIG_HOME"], !config.isEmpty { return config + "/loopix/presets" }
        if let home = env["HOME"], !home.isEmpty { return home + "/.config/loopix/presets" }
        return nil
    }

    /// Loads the built-ins and every preset in `directory` (a missing directory is no error
    /// unless `required`). A bad file is listed in `problems` and skipped.
    public init(directory: String?, required: Bool = false) throws(ToolError) {
        var presets = BuiltinPresets.all
        var problems: [String] = []
        if let directory {
            let fm = FileManager.default
            var isDirectory: ObjCBool = false
            if fm.fileExists(atPath: directory, isDirectory: &isDirectory) {
                guard isDirectory.boolValue else { throw ToolError("\(directory): not a directory") }
                let names: [String]
                do { names = try fm.contentsOfDirectory(atPath: directory) } catch {
                    throw ToolError("\(directory): cannot list presets (\(Self.reason(error)))")
                }
                for name in names.sorted() where name.hasSuffix(".json") {
                    let path = directory + "/" + name
                    do {
                        let data = try Data(contentsOf: URL(fileURLWithPath: path))
                        let preset = try PresetParser.parse(data, source: path) { cube in
                            let cubePath = cube.hasPrefix("/") ? cube : directory + "/" + cube
                            return try String(contentsOfFile: cubePath, encoding: .utf8)
                        }
                        if presets.contains(where: { $0.id == preset.id }) {
                            problems.append("\(path): id: \"\(preset.id)\" is used by another preset; skipped")
                        } else {
                            presets.append(preset)
                        }
                    } catch let error as PresetError {
                        problems.append(error.description)
                    } catch {
                        problems.append("\(path): cannot read (\(Self.reason(error)))")
                    }
                }
            } else if required {
                throw ToolError("\(directory): no such presets directory")
            }
        }
        self.presets = presets
        self.problems = problems
    }

    public func preset(_ id: String) throws(ToolError) -> Preset {
        let key = id.lowercased()
        if let p = presets.first(where: { $0.id == key }) { return p }
        let ids = presets.map(\.id).joined(separator: ", ")
        throw .usage("unknown preset \"\(id)\" (available: \(ids))")
    }

    static func reason(_ error: Error) -> String {
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain,
           let message = strerror(Int32(underlying.code)) {
            return String(cString: message)
        }
        return ns.localizedDescription
    }
}
