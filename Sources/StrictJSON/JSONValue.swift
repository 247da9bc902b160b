/// A JSON document as a value. Objects keep their members in the order they were written and
/// never hold a key twice (the parser refuses duplicates).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// A whole number that a `Double` holds exactly (|n| < 2⁵³), else nil.
    public var integer: Int? {
        guard case .number(let x) = self, x == x.rounded(), abs(x) < 9_007_199_254_740_992 else { return nil }
        return Int(x)
    }

    /// What a value is, for error messages: "a string", "null", "an object"…
    public var kind: String {
        switch self {
        case .null: return "null"
        case .bool: return "true or false"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A JSON object: members in their written order, looked up by key.
public struct JSONObject: Sendable, Equatable {
    public private(set) var keys: [String] = []
    private var values: [String: JSONValue] = [:]

    public init() {}

    public init(_ members: [(String, JSONValue)]) {
        for (k, v) in members { self[k] = v }
    }

    public subscript(key: String) -> JSONValue? {
        get { values[key] }
        set {
            if let newValue {
                if values.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if values.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    public var count: Int { keys.count }
    public var members: [(key: String, value: JSONValue)] { keys.map { ($0, values[$0]!) } }

    public static func == (a: JSONObject, b: JSONObject) -> Bool { a.values == b.values }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
    public init(nilLiteral: ()) { self = .null }

    public static func int(_ n: Int) -> JSONValue { .number(Double(n)) }
}

// MARK: Writing

extension JSONValue {
    /// How `serialized` lays the text out.
    public struct Style: Sendable {
        /// Objects' keys in byte order (otherwise as written).
        public var sortedKeys: Bool
        /// Two-space indentation and one member per line.
        public var pretty: Bool
        public init(sortedKeys: Bool = true, pretty: Bool = false) {
            self.sortedKeys = sortedKeys
            self.pretty = pretty
        }
        public static let compact = Style()
        public static let pretty = Style(pretty: true)
    }

    /// The value as JSON text (no trailing newline). Non-finite numbers are written as null;
    /// whole numbers without a fraction (`3`, not `3.0`).
    public func serialized(_ style: Style = .compact) -> String {
        var out = ""
        write(to: &out, style: style, depth: 0)
        return out
    }

    private func write(to out: inout String, style: Style, depth: Int) {
        func newline(_ d: Int) {
            guard style.pretty else { return }
            out += "\n" + String(repeating: "  ", count: d)
        }
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let x): out += JSONValue.format(x)
        case .string(let s): out += JSONValue.quote(s)
        case .array(let items):
            guard !items.isEmpty else { out += "[]"; return }
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                newline(depth + 1)
                item.write(to: &out, style: style, depth: depth + 1)
            }
            newline(depth)
            out += "]"
        case .object(let object):
            guard object.count > 0 else { out += "{}"; return }
            out += "{"
            let keys = style.sortedKeys ? object.keys.sorted() : object.keys
            for (i, key) in keys.enumerated() {
                if i > 0 { out += "," }
                newline(depth + 1)
                out += JSONValue.quote(key) + (style.pretty ? ": " : ":")
                object[key]!.write(to: &out, style: style, depth: depth + 1)
            }
            newline(depth)
            out += "}"
        }
    }

    /// `3`, `0.5`, `-1.3`: whole numbers without a fraction; non-finite as `null`.
    public static func format(_ x: Double) -> String {
        guard x.isFinite else { return "null" }
        return x == x.rounded() && abs(x) < 1e15 ? String(Int(x)) : String(x)
    }

    /// A JSON string literal: `"` and `\` escaped, control characters as `\n`, `\r`, `\t` or
    /// `\u00XX`, everything else (including `/` and non-ASCII) as its UTF-8 bytes.
    public static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
