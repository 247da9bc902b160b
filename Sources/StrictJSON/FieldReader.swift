/// Why a JSON document (configuration, settings, a user preset, a board file, a request) was
/// rejected: where it came from, the field and what is allowed, on one line:
/// `looks/loud.json: grain.amount: 3 is out of range (allowed 0…1)`.
public struct FieldError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file (or other source) the document came from.
    public let source: String
    /// Dotted path of the field, e.g. "grain.amount"; empty for the document as a whole.
    public let field: String
    public let message: String

    public init(source: String, field: String, message: String) {
        self.source = source
        self.field = field
        self.message = message
    }

    public var description: String {
        field.isEmpty ? "\(source): \(message)" : "\(source): \(field): \(message)"
    }
}

/// Walks one JSON object, field by field, the same way for every Loopix document: a field that
/// is absent or `null` takes its default (or is "missing" when required), a value of the wrong
/// type or out of range is an error naming the field, and `rejectUnknown` names the first field
/// nobody asked for — so a typo never passes silently. `fail(path, message)` builds the
/// caller's error type.
public struct JSONFields<Failure: Error> {
    public let object: JSONObject
    public let prefix: String
    public let fail: (String, String) -> Failure
    private var seen: Set<String> = []

    public init(_ object: JSONObject, prefix: String = "", fail: @escaping (String, String) -> Failure) {
        self.object = object
        self.prefix = prefix
        self.fail = fail
    }

    /// The dotted path of `key` under this object.
    public func path(_ key: String) -> String { prefix.isEmpty ? key : "\(prefix).\(key)" }

    /// The field's value; nil when it is absent or null. Marks it as read.
    public mutating func value(_ key: String) -> JSONValue? {
        seen.insert(key)
        guard let v = object[key], v != .null else { return nil }
        return v
    }

    /// Fails with "is missing" when absent or null.
    public mutating func required(_ key: String) throws(Failure) -> JSONValue {
        guard let v = value(key) else { throw fail(path(key), "is missing") }
        return v
    }

    public mutating func string(_ key: String) throws(Failure) -> String {
        guard let s = try optionalString(key) else { throw fail(path(key), "is missing") }
        return s
    }

    public mutating func optionalString(_ key: String) throws(Failure) -> String? {
        guard let v = value(key) else { return nil }
        guard case .string(let s) = v else { throw fail(path(key), "must be a string, not \(v.kind)") }
        return s
    }

    /// A list of non-empty strings; nil when absent.
    public mutating func strings(_ key: String) throws(Failure) -> [String]? {
        guard let v = value(key) else { return nil }
        guard case .array(let items) = v else { throw fail(path(key), "must be a list of strings, not \(v.kind)") }
        var out: [String] = []
        for item in items {
            guard case .string(let text) = item, !text.isEmpty else { throw fail(path(key), "must be a list of non-empty strings") }
            out.append(text)
        }
        return out
    }

    public mutating func bool(_ key: String) throws(Failure) -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v else { throw fail(path(key), "must be true or false, not \(v.kind)") }
        return b
    }

    public mutating func integer(_ key: String, in range: ClosedRange<Int>) throws(Failure) -> Int? {
        guard let v = value(key) else { return nil }
        return try Self.integer(v, in: range, at: path(key), fail: fail)
    }

    public mutating func number(_ key: String, in range: ClosedRange<Double>, unit: String = "") throws(Failure) -> Double? {
        guard let v = value(key) else { return nil }
        return try Self.number(v, in: range, unit: unit, at: path(key), fail: fail)
    }

    /// A string that must be one of `T`'s raw values (all of them, or those in `allowed`).
    public mutating func choice<T: RawRepresentable & CaseIterable>(_ key: String, _ type: T.Type, allowed: [T]? = nil) throws(Failure) -> T?
    where T.RawValue == String {
        guard let v = value(key) else { return nil }
        let options = allowed ?? Array(T.allCases)
        let names = options.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        guard case .string(let s) = v else { throw fail(path(key), "must be one of \(names)") }
        guard let t = options.first(where: { $0.rawValue == s }) else {
            throw fail(path(key), "\(JSONValue.quote(String(s.prefix(40)))) is not one of \(names)")
        }
        return t
    }

    /// Reads a nested object with its own reader; its unknown fields are errors too.
    public mutating func section(_ key: String, _ body: (inout JSONFields) throws(Failure) -> Void) throws(Failure) {
        guard let v = value(key) else { return }
        guard case .object(let object) = v else { throw fail(path(key), "must be an object, not \(v.kind)") }
        var reader = JSONFields(object, prefix: path(key), fail: fail)
        try body(&reader)
        try reader.rejectUnknown()
    }

    /// Fails naming the first field (in written order) that was never read.
    public func rejectUnknown(allowed hint: String? = nil) throws(Failure) {
        if let unknown = object.keys.first(where: { !seen.contains($0) }) {
            let known = hint ?? seen.sorted().joined(separator: ", ")
            throw fail(path(String(unknown.prefix(40))), known.isEmpty ? "unknown field" : "unknown field (allowed: \(known))")
        }
    }

    // Value checks shared with callers that walk arrays.

    public static func integer(_ v: JSONValue, in range: ClosedRange<Int>, at path: String,
                               fail: (String, String) -> Failure) throws(Failure) -> Int {
        guard case .number(let x) = v else { throw fail(path, "must be a whole number, not \(v.kind)") }
        guard x == x.rounded() else { throw fail(path, "\(JSONValue.format(x)) must be a whole number") }
        guard let n = v.integer, range.contains(n) else { throw fail(path, "\(JSONValue.format(x)) is out of range (allowed \(range.lowerBound)…\(range.upperBound))") }
        return n
    }

    public static func number(_ v: JSONValue, in range: ClosedRange<Double>, unit: String = "", at path: String,
                              fail: (String, String) -> Failure) throws(Failure) -> Double {
        guard case .number(let x) = v else { throw fail(path, "must be a number, not \(v.kind)") }
        guard range.contains(x) else {
            throw fail(path, "\(JSONValue.format(x)) is out of range (allowed \(JSONValue.format(range.lowerBound))…\(JSONValue.format(range.upperBound))\(unit))")
        }
        return x
    }
}

extension JSONFields where Failure == FieldError {
    /// A reader whose errors name `source` (a file path) and the field.
    public init(_ object: JSONObject, source: String, prefix: String = "") {
        self.init(object, prefix: prefix) { FieldError(source: source, field: $0, message: $1) }
    }
}

extension FieldError {
    /// Parses `bytes` as a JSON object for a document from `source`; a syntax error names the
    /// source and where: `/etc/loopix/loopix.json: line 4, column 3: expected ',' or '}'…`.
    public static func parseObject<C: Collection<UInt8>>(_ bytes: C, source: String) throws(FieldError) -> JSONObject {
        do { return try JSONParser.parseObject(bytes) } catch {
            throw FieldError(source: source, field: "", message: "not valid JSON: \(error)")
        }
    }
}
