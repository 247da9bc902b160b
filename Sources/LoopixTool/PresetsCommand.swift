import FilmCore
import Foundation
import ImageFiles
import StrictJSON

/// `loopix presets`: the looks, their tier and a line on each.
public enum PresetsCommand {
    public static let help = """
    Usage: loopix presets [--json] [--presets-dir DIR]
           loopix presets --cube PRESET -o FILE.cube

    Lists the film looks: id, name, tier (free or pro) and a one-line description, built-in
    ones first, then the user's presets. --json prints the same as a JSON array.
    --cube writes a look's colour stages as a 33³ .cube 3D LUT (for ffmpeg, Resolve…).
    """

    public static func run(_ words: [String], output: (String) -> Void = { print($0) }) throws(ToolError) {
        let args = try Arguments(words, valued: ["--presets-dir": "presets-dir", "--cube": "cube", "-o": "output", "--output": "output"],
                                 flags: ["--json": "json"])
        guard args.operands.isEmpty else { throw .usage("presets: unexpected argument \"\(args.operands[0])\"") }
        let directory = args.value("presets-dir") ?? PresetLibrary.defaultDirectory
        let library = try PresetLibrary.load(directory: directory, required: args.value("presets-dir") != nil)
        for problem in library.problems { FileHandle.standardError.write(Data("loopix: warning: \(problem)\n".utf8)) }
        if let id = args.value("cube") {
            guard let out = args.value("output") else { throw .usage("presets --cube needs -o FILE.cube") }
            let look = FilmLook(preset: try library.look(id), settings: RenderSettings(grainEnabled: false))
            do { try look.cube().text.write(toFile: out, atomically: true, encoding: .utf8) } catch {
                throw ToolError("\(out): cannot write (\(PresetLibrary.reason(error)))")
            }
            return
        }
        if args.flag("json") {
            let rows: [JSONValue] = library.presets.map {
                ["id": .string($0.id), "name": .string($0.name), "tier": .string($0.tier.rawValue),
                 "category": .string($0.category.rawValue), "description": .string($0.description)]
            }
            output(JSONValue.array(rows).serialized(.pretty))
            return
        }
        let idWidth = library.presets.map(\.id.count).max() ?? 0
        let nameWidth = library.presets.map(\.name.count).max() ?? 0
        for p in library.presets {
            output(pad(p.id, idWidth) + "  " + pad(p.name, nameWidth) + "  " + pad(p.tier.rawValue, 4) + "  " + p.description)
        }
    }

    static func pad(_ s: String, _ width: Int) -> String { s + String(repeating: " ", count: max(0, width - s.count)) }
}
