import FilmCore
import ImageFiles
/// A failure the `loopix` command reports as one line and an exit status.
public struct ToolError: Error, CustomStringConvertible, Equatable {
    public let message: String
    /// 2 for a usage mistake, 1 for anything else.
    public let status: Int32

    public init(_ message: String, status: Int32 = 1) {
        self.message = message
        self.status = status
    }

    public static func usage(_ message: String) -> ToolError { ToolError(message, status: 2) }

    public var description: String { message }
}

/// Command-line words split into options and operands, for one subcommand.
/// Options are `-x VALUE`, `--name VALUE`, `--name=VALUE` or flags; `--` ends options.
struct Arguments {
    private(set) var operands: [String] = []
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// `valued`: options that take a value, each spelling mapped to one name: the long
    /// option without its dashes, so that messages can say `--name`.
    init(_ words: [String], valued: [String: String], flags knownFlags: [String: String]) throws(ToolError) {
        var i = 0
        var onlyOperands = false
        while i < words.count {
            let word = words[i]
            i += 1
            if onlyOperands || !word.hasPrefix("-") || word == "-" {
                operands.append(word)
                continue
            }
            if word == "--" { onlyOperands = true; continue }
            var name = word
            var inline: String? = nil
            if let eq = word.firstIndex(of: "="), word.hasPrefix("--") {
                name = String(word[..<eq])
                inline = String(word[word.index(after: eq)...])
            }
            if let canonical = valued[name] {
                if let inline {
                    values[canonical] = inline
                } else {
                    guard i < words.count else { throw .usage("\(name) needs a value") }
                    values[canonical] = words[i]
                    i += 1
                }
            } else if let canonical = knownFlags[name], inline == nil {
                flags.insert(canonical)
            } else {
                throw .usage("unknown option \(name)")
            }
        }
    }

    func value(_ name: String) -> String? { values[name] }
    func flag(_ name: String) -> Bool { flags.contains(name) }

    func double(_ name: String, in range: ClosedRange<Double>) throws(ToolError) -> Double? {
        guard let text = values[name] else { return nil }
        guard let v = Double(text), range.contains(v) else {
            throw .usage("--\(name) must be a number from \(format(range.lowerBound)) to \(format(range.upperBound)), not \"\(text)\"")
        }
        return v
    }

    func integer<T: FixedWidthInteger>(_ name: String, as: T.Type = Int.self) throws(ToolError) -> T? {
        guard let text = values[name] else { return nil }
        guard let v = T(text) else { throw .usage("--\(name) must be a whole number, not \"\(text)\"") }
        return v
    }

    private func format(_ x: Double) -> String { x == x.rounded() ? String(Int(x)) : String(x) }
}

extension ToolError {
    /// A presets directory or preset id that cannot be used (a usage mistake when the user
    /// named something that does not exist).
    init(_ failure: PresetLibrary.Failure) {
        self.init(failure.description, status: failure.isUsage ? 2 : 1)
    }
}

extension PresetLibrary {
    /// The library for a command: its failures become the command's errors.
    static func load(directory: String?, required: Bool = false) throws(ToolError) -> PresetLibrary {
        do { return try PresetLibrary(directory: directory, required: required) } catch { throw ToolError(error) }
    }

    func look(_ id: String) throws(ToolError) -> Preset {
        do { return try preset(id) } catch { throw ToolError(error) }
    }
}
