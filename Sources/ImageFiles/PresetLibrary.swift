import FilmCore
import Foundation
import System

/// The built-in looks plus the user's JSON presets from a directory (each `*.json` file is
/// one preset; a preset's `cube` path is relative to its file). `loopix` and `loopixd` read
/// the same way, so a look made for one works in the other.
public struct PresetLibrary: Sendable {
    /// Why the directory (or a preset asked for) cannot be used, on one line.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public let description: String
        /// True when the caller named something that does not exist (a usage mistake).
        public let isUsage: Bool
        init(_ description: String, usage: Bool = false) {
            self.description = description
            isUsage = usage
        }
    }

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
    public init(directory: String?, required: Bool = false) throws(Failure) {
        var presets = BuiltinPresets.all
        var problems: [String] = []
        if let directory {
            let fm = FileManager.default
            var isDirectory: ObjCBool = false
            if fm.fileExists(atPath: directory, isDirectory: &isDirectory) {
                guard isDirectory.boolValue else { throw Failure("\(directory): not a directory") }
                let names: [String]
                do { names = try fm.contentsOfDirectory(atPath: directory) } catch {
                    throw Failure("\(directory): cannot list presets (\(Self.reason(error)))")
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
                throw Failure("\(directory): no such presets directory", usage: true)
            }
        }
        self.presets = presets
        self.problems = problems
    }

    public func preset(_ id: String) throws(Failure) -> Preset {
        let key = id.lowercased()
        if let p = presets.first(where: { $0.id == key }) { return p }
        let ids = presets.map(\.id).joined(separator: ", ")
        throw Failure("unknown preset \"\(id)\" (available: \(ids))", usage: true)
    }

    /// A file error as one short phrase: the errno text when there is one.
    public static func reason(_ error: Error) -> String {
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain,
           case let code = Int32(underlying.code) {
            return Errno(code).message
        }
        return ns.localizedDescription
    }
}
