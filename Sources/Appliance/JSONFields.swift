import Foundation

/// Small JSON helpers shared by the configuration, license and control-socket code:
/// a strict field reader over `JSONSerialization` objects (unknown keys are errors) and a
/// writer with a fixed, documented output (used for the license's canonical payload and the
/// socket's reply lines, so neither depends on Foundation's formatting).
enum LoopixJSON {
    /// Parses `bytes` as one JSON object, or says why not (one line).
    struct Problem: Error { let reason: String }

    static func object(_ bytes: some Collection<UInt8>) -> Result<[String: Any], Problem> {
        let data = Data(bytes)
        let value: Any
        do {
            value = try JSONSerialization.jsonObject(with: data, options: [])
        } catch {
            return .failure(Problem(reason: "not valid JSON"))
        }
        guard let object = value as? [String: Any] else { return .failure(Problem(reason: "not a JSON object")) }
        return .success(object)
    }

    /// A JSON number (not a boolean, which Foundation also hands over as an NSNumber).
    static func number(_ v: Any) -> Double? {
        guard let n = v as? NSNumber, !isBool(n) else { return nil }
        let x = n.doubleValue
        return x.isFinite ? x : nil
    }

    static func integer(_ v: Any) -> Int? {
        guard let x = number(v), x == x.rounded(), abs(x) < 1e15 else { return nil }
        return Int(x)
    }

    static func bool(_ v: Any) -> Bool? {
        guard let n = v as? NSNumber, isBool(n) else { return nil }
        return n.boolValue
    }

    static func isBool(_ n: NSNumber) -> Bool {
        #if canImport(Darwin)
        return CFGetTypeID(n) == CFBooleanGetTypeID()
        #else
        return String(cString: n.objCType) == "c"
        #endif
    }

    /// `3`, `0.5`, `-1.3`: whole numbers without a fraction.
    static func format(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e15 ? String(Int(x)) : String(x)
    }

    /// A JSON string literal: `"` and `\` escaped, control characters as `\n`, `\r`, `\t` or
    /// `\u00XX`, everything else (including `/` and non-ASCII) as its UTF-8 bytes.
    static func quote(_ s: String) -> String {
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

/// Walks one JSON object, remembering which keys were read so unknown ones can be named.
/// `fail(path, message)` builds the caller's error.
struct StrictJSONReader<Failure: Error> {
    let object: [String: Any]
    let prefix: String
    let fail: (String, String) -> Failure
    private(set) var seen: Set<String> = []

    init(_ object: [String: Any], prefix: String = "", fail: @escaping (String, String) -> Failure) {
        self.object = object
        self.prefix = prefix
        self.fail = fail
    }

    func path(_ key: String) -> String { prefix.isEmpty ? key : "\(prefix).\(key)" }

    mutating func value(_ key: String) -> Any? {
        seen.insert(key)
        guard let v = object[key], !(v is NSNull) else { return nil }
        return v
    }

    mutating func string(_ key: String) throws(Failure) -> String {
        guard let s = try optionalString(key) else { throw fail(path(key), "is missing") }
        return s
    }

    mutating func optionalString(_ key: String) throws(Failure) -> String? {
        guard let v = value(key) else { return nil }
        guard let s = v as? String else { throw fail(path(key), "must be a string") }
        return s
    }

    mutating func bool(_ key: String) throws(Failure) -> Bool? {
        guard let v = value(key) else { return nil }
        guard let b = LoopixJSON.bool(v) else { throw fail(path(key), "must be true or false") }
        return b
    }

    mutating func integer(_ key: String, in range: ClosedRange<Int>) throws(Failure) -> Int? {
        guard let v = value(key) else { return nil }
        guard let x = LoopixJSON.number(v) else { throw fail(path(key), "must be a whole number") }
        guard let n = LoopixJSON.integer(v) else {
            throw fail(path(key), "\(LoopixJSON.format(x)) must be a whole number")
        }
        guard range.contains(n) else {
            throw fail(path(key), "\(n) is out of range (allowed \(range.lowerBound)…\(range.upperBound))")
        }
        return n
    }

    mutating func number(_ key: String, in range: ClosedRange<Double>) throws(Failure) -> Double? {
        guard let v = value(key) else { return nil }
        guard let x = LoopixJSON.number(v) else { throw fail(path(key), "must be a number") }
        guard range.contains(x) else {
            throw fail(path(key), "\(LoopixJSON.format(x)) is out of range (allowed \(LoopixJSON.format(range.lowerBound))…\(LoopixJSON.format(range.upperBound)))")
        }
        return x
    }

    mutating func choice<T: RawRepresentable>(_ key: String, _ type: T.Type, allowed: [T]) throws(Failure) -> T?
    where T.RawValue == String {
        guard let v = value(key) else { return nil }
        let names = allowed.map { $0.rawValue }.joined(separator: ", ")
        guard let s = v as? String else { throw fail(path(key), "must be one of \(names)") }
        guard let t = T(rawValue: s), allowed.contains(where: { $0.rawValue == t.rawValue }) else {
            throw fail(path(key), "\"\(s)\" is not one of \(names)")
        }
        return t
    }

    mutating func section(_ key: String, _ body: (inout StrictJSONReader) throws(Failure) -> Void) throws(Failure) {
        guard let v = value(key) else { return }
        guard let object = v as? [String: Any] else { throw fail(path(key), "must be an object") }
        var reader = StrictJSONReader(object, prefix: path(key), fail: fail)
        try body(&reader)
        try reader.rejectUnknown()
    }

    func rejectUnknown(allowed hint: String? = nil) throws(Failure) {
        if let unknown = object.keys.filter({ !seen.contains($0) }).sorted().first {
            let known = seen.sorted().joined(separator: ", ")
            throw fail(path(unknown), "unknown field (allowed: \(hint ?? known))")
        }
    }
}
