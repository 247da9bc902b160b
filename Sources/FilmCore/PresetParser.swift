import Foundation
import StrictJSON

/// Why a user preset was rejected.
public typealias PresetError = FieldError

/// Reads user presets from JSON (schema version 1), checking every field:
///
/// ```json
/// { "version": 1, "id": "my-look", "name": "My Look", "description": "…",
///   "grade": { "exposure": 0, "temperature": 0.1, "tint": 0, "saturation": 0.9 },
///   "curves": { "master": [0.02, 0.26, 0.52, 0.77, 0.97], "red": [...], "green": [...], "blue": [...] },
///   "splitTone": { "shadowHue": 190, "shadowSaturation": 0.1, "highlightHue": 35, "highlightSaturation": 0.1, "balance": 0 },
///   "fade": 0.03, "clamp": { "black": 0.01, "white": 0.98 },
///   "vignette": { "amount": 0.2, "midpoint": 0.5, "roundness": 0.3, "feather": 0.6 },
///   "grain": { "amount": 0.3, "size": 1.2, "roughness": 0.5, "clumping": 0.2, "monochromatic": 0.3,
///              "gaussian": 1, "simplex": 0.15, "worley": 0.3 },
///   "halation": { "amount": 0.3, "radius": 0.01, "threshold": 0.7, "green": 0.2, "blue": 0.02 },
///   "cube": "my-look.cube" }
/// ```
/// Every section and field but `version`, `id` and `name` is optional (defaults: no change).
/// Unknown fields are errors, so a typo never passes silently. `cube` names a `.cube` file
/// (relative to the preset's directory) whose LUT replaces grade, curves and split toning.
public enum PresetParser {
    public struct Range: Sendable {
        public let lower: Double
        public let upper: Double
    }

    /// The allowed range of every numeric field, by dotted path.
    public static let ranges: [String: Range] = [
        "grade.exposure": Range(lower: -2, upper: 2), "grade.temperature": Range(lower: -1, upper: 1),
        "grade.tint": Range(lower: -1, upper: 1), "grade.saturation": Range(lower: 0, upper: 2),
        "splitTone.shadowHue": Range(lower: 0, upper: 360), "splitTone.shadowSaturation": Range(lower: 0, upper: 1),
        "splitTone.highlightHue": Range(lower: 0, upper: 360), "splitTone.highlightSaturation": Range(lower: 0, upper: 1),
        "splitTone.balance": Range(lower: -1, upper: 1),
        "fade": Range(lower: 0, upper: 0.3),
        "clamp.black": Range(lower: 0, upper: 0.5), "clamp.white": Range(lower: 0.5, upper: 1),
        "vignette.amount": Range(lower: -1, upper: 1), "vignette.midpoint": Range(lower: 0, upper: 1.5),
        "vignette.roundness": Range(lower: 0, upper: 1), "vignette.feather": Range(lower: 0, upper: 1),
        "grain.amount": Range(lower: 0, upper: 1), "grain.size": Range(lower: 0.5, upper: 4),
        "grain.roughness": Range(lower: 0, upper: 1), "grain.clumping": Range(lower: 0, upper: 1),
        "grain.monochromatic": Range(lower: 0, upper: 1), "grain.gaussian": Range(lower: 0, upper: 1),
        "grain.simplex": Range(lower: 0, upper: 1), "grain.worley": Range(lower: 0, upper: 1),
        "halation.amount": Range(lower: 0, upper: 1), "halation.radius": Range(lower: 0.001, upper: 0.05),
        "halation.threshold": Range(lower: 0.1, upper: 1), "halation.green": Range(lower: 0, upper: 1),
        "halation.blue": Range(lower: 0, upper: 1),
    ]

    /// Parses one preset. `loadCube` reads the text of the `.cube` file a preset names
    /// (the caller resolves the path and does the I/O); its errors are reported as the `cube` field's.
    public static func parse(_ data: Data, source: String,
                             loadCube: (String) throws -> String = { _ in throw CocoaError(.fileNoSuchFile) }) throws(PresetError) -> Preset {
        func fail(_ field: String, _ message: String) -> PresetError {
            PresetError(source: source, field: field, message: message)
        }
        let root = try FieldError.parseObject(data, source: source)
        var reader = Reader(JSONFields(root, source: source))
        guard let version = try reader.fields.integer("version", in: Int.min...Int.max) else { throw fail("version", "is missing") }
        guard version == Preset.currentVersion else {
            throw fail("version", "\(version) is not supported (this Loopix reads version \(Preset.currentVersion))")
        }
        let id = try reader.string("id")
        guard (1...32).contains(id.count), id.allSatisfy({ ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "-" }) else {
            throw fail("id", "\"\(id)\" must be 1 to 32 characters of a–z, 0–9 and -")
        }
        guard BuiltinPresets.named(id) == nil else {
            throw fail("id", "\"\(id)\" is the id of a built-in preset; choose another")
        }
        let name = try reader.string("name")
        guard (1...48).contains(name.count) else { throw fail("name", "must be 1 to 48 characters") }
        let description = try reader.optionalString("description") ?? "User preset"

        // A field the file leaves out keeps the value Preset's own initialisers give it: the
        // defaults are written once, there.
        var preset = Preset(id: id, name: name, tier: .pro, category: .user, description: description)
        try reader.section("grade") { r throws(PresetError) in
            preset.grade.exposure = try r.number("exposure", default: preset.grade.exposure)
            preset.grade.temperature = try r.number("temperature", default: preset.grade.temperature)
            preset.grade.tint = try r.number("tint", default: preset.grade.tint)
            preset.grade.saturation = try r.number("saturation", default: preset.grade.saturation)
        }
        try reader.section("curves") { r throws(PresetError) in
            preset.curves.master = try r.curve("master")
            preset.curves.red = try r.curve("red")
            preset.curves.green = try r.curve("green")
            preset.curves.blue = try r.curve("blue")
        }
        try reader.section("splitTone") { r throws(PresetError) in
            preset.splitTone.shadowHue = try r.number("shadowHue", default: preset.splitTone.shadowHue)
            preset.splitTone.shadowSaturation = try r.number("shadowSaturation", default: preset.splitTone.shadowSaturation)
            preset.splitTone.highlightHue = try r.number("highlightHue", default: preset.splitTone.highlightHue)
            preset.splitTone.highlightSaturation = try r.number("highlightSaturation", default: preset.splitTone.highlightSaturation)
            preset.splitTone.balance = try r.number("balance", default: preset.splitTone.balance)
        }
        preset.fade = try reader.number("fade", default: preset.fade)
        try reader.section("clamp") { r throws(PresetError) in
            preset.clamp.black = try r.number("black", default: preset.clamp.black)
            preset.clamp.white = try r.number("white", default: preset.clamp.white)
        }
        try reader.section("vignette") { r throws(PresetError) in
            preset.vignette.amount = try r.number("amount", default: preset.vignette.amount)
            preset.vignette.midpoint = try r.number("midpoint", default: preset.vignette.midpoint)
            preset.vignette.roundness = try r.number("roundness", default: preset.vignette.roundness)
            preset.vignette.feather = try r.number("feather", default: preset.vignette.feather)
        }
        try reader.section("grain") { r throws(PresetError) in
            let d = preset.grain
            preset.grain.amount = try r.number("amount", default: d.amount)
            preset.grain.size = try r.number("size", default: d.size)
            preset.grain.roughness = try r.number("roughness", default: d.roughness)
            preset.grain.clumping = try r.number("clumping", default: d.clumping)
            preset.grain.monochromatic = try r.number("monochromatic", default: d.monochromatic)
            preset.grain.gaussian = try r.number("gaussian", default: d.gaussian)
            preset.grain.simplex = try r.number("simplex", default: d.simplex)
            preset.grain.worley = try r.number("worley", default: d.worley)
        }
        try reader.section("halation") { r throws(PresetError) in
            let d = preset.halation
            preset.halation.amount = try r.number("amount", default: d.amount)
            preset.halation.radius = try r.number("radius", default: d.radius)
            preset.halation.threshold = try r.number("threshold", default: d.threshold)
            preset.halation.green = try r.number("green", default: d.green)
            preset.halation.blue = try r.number("blue", default: d.blue)
        }
        if let cubePath = try reader.optionalString("cube") {
            let text: String
            do { text = try loadCube(cubePath) } catch {
                throw fail("cube", "cannot read \(cubePath): \(Self.reason(error))")
            }
            do { preset.colorLUT = try CubeLUT(parsing: text) } catch {
                throw fail("cube", "\(cubePath): \(error.description)")
            }
        }
        guard preset.clamp.white > preset.clamp.black else {
            throw fail("clamp.white", "must be above clamp.black")
        }
        try reader.rejectUnknown()
        return preset
    }

    private static func reason(_ error: Error) -> String {
        if let error = error as? CocoaError, let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError {
            return underlying.localizedDescription
        }
        return String(describing: error)
    }

    /// The strict field reader, plus the two things presets add: ranges by dotted path and tone curves.
    private struct Reader {
        var fields: JSONFields<FieldError>

        init(_ fields: JSONFields<FieldError>) { self.fields = fields }

        mutating func string(_ key: String) throws(PresetError) -> String { try fields.string(key) }
        mutating func optionalString(_ key: String) throws(PresetError) -> String? { try fields.optionalString(key) }

        mutating func number(_ key: String, default fallback: Double) throws(PresetError) -> Double {
            let p = fields.path(key)
            let range = PresetParser.ranges[p].map { $0.lower...$0.upper } ?? -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude
            return try fields.number(key, in: range) ?? fallback
        }

        mutating func curve(_ key: String) throws(PresetError) -> ToneCurve {
            guard let v = fields.value(key) else { return .identity }
            let p = fields.path(key)
            guard case .array(let array) = v, array.count == 5 else {
                throw fields.fail(p, "must be 5 numbers (shadows, darks, midtones, lights, highlights)")
            }
            var points: [Double] = []
            for (i, element) in array.enumerated() {
                guard case .number(let x) = element, (0...1).contains(x) else {
                    throw fields.fail("\(p)[\(i)]", "must be a number from 0 to 1")
                }
                if let last = points.last, x < last {
                    throw fields.fail("\(p)[\(i)]", "\(JSONValue.format(x)) is below the point before it; a tone curve must not fall")
                }
                points.append(x)
            }
            return ToneCurve(points: points)
        }

        mutating func section(_ key: String, _ body: (inout Reader) throws(PresetError) -> Void) throws(PresetError) {
            try fields.section(key) { f throws(PresetError) in
                var reader = Reader(f)
                try body(&reader)
                f = reader.fields
            }
        }

        func rejectUnknown() throws(PresetError) { try fields.rejectUnknown(allowed: "") }
    }
}
