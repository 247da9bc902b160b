/// Where and why a JSON text is not valid, on one line: `line 3, column 14: expected ',' or
/// '}' after an object member`.
public struct JSONSyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// 1-based line and column (columns count bytes).
    public let line: Int
    public let column: Int
    public let message: String

    public var description: String { "line \(line), column \(column): \(message)" }
}

/// The one JSON reader of Loopix (configuration, settings, presets, lens tables, board files,
/// licenses, control-socket requests): RFC 8259, strictly — no comments, no trailing commas,
/// no NaN, no duplicate keys, valid UTF-8 — and every error says where it is.
public enum JSONParser {
    /// Nesting deeper than this is refused (the parser recurses; no legitimate file comes close).
    public static let maximumDepth = 64

    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    public static func parse<C: Collection<UInt8>>(_ bytes: C) throws(JSONSyntaxError) -> JSONValue {
        let array = Array(bytes)
        // (A Result rather than a typed throw through withUnsafeBufferPointer, which Swift 6.0
        // still sees as an untyped rethrow.)
        let result = array.withUnsafeBufferPointer { buffer -> Result<JSONValue, JSONSyntaxError> in
            var p = Parser(bytes: buffer)
            do throws(JSONSyntaxError) {
                p.skipSpace()
                let value = try p.value(depth: 0)
                p.skipSpace()
                guard p.at >= buffer.count else { throw p.error("unexpected \(p.describeCurrent()) after the JSON value") }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses an object (the shape of every Loopix document), or says why not.
    public static func parseObject<C: Collection<UInt8>>(_ bytes: C) throws(JSONSyntaxError) -> JSONObject {
        let value = try parse(bytes)
        guard case .object(let object) = value else {
            throw JSONSyntaxError(line: 1, column: 1, message: "expected a JSON object ({…}), found \(value.kind)")
        }
        return object
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        func error(_ message: String, at offset: Int? = nil) -> JSONSyntaxError {
            let end = min(offset ?? at, bytes.count)
            var line = 1, column = 1
            for i in 0..<end {
                if bytes[i] == 0x0A { line += 1; column = 1 } else { column += 1 }
            }
            return JSONSyntaxError(line: line, column: column, message: message)
        }

        func describeCurrent() -> String {
            guard at < bytes.count else { return "end of text" }
            let b = bytes[at]
            if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
            let hex = String(b, radix: 16, uppercase: true)
            return "byte 0x" + (hex.count == 1 ? "0" + hex : hex)
        }

        mutating func skipSpace() {
            while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
        }

        mutating func value(depth: Int) throws(JSONSyntaxError) -> JSONValue {
            guard depth < JSONParser.maximumDepth else { throw error("nested deeper than \(JSONParser.maximumDepth) levels") }
            guard at < bytes.count else { throw error("expected a value, found the end of the text") }
            switch bytes[at] {
            case 0x7B: return .object(try object(depth: depth))
            case 0x5B: return .array(try array(depth: depth))
            case 0x22: return .string(try string())
            case 0x74: try literal("true"); return .bool(true)
            case 0x66: try literal("false"); return .bool(false)
            case 0x6E: try literal("null"); return .null
            case 0x2D, 0x30...0x39: return .number(try number())
            case 0xEF where at + 2 < bytes.count && bytes[at + 1] == 0xBB && bytes[at + 2] == 0xBF:
                throw error("a byte-order mark is not allowed in JSON; save the file as UTF-8 without BOM")
            default: throw error("expected a value, found \(describeCurrent())")
            }
        }

        mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
            let start = at
            let w = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            for b in w {
                guard at < bytes.count, bytes[at] == b else {
                    throw error("expected '\(word)'", at: start)
                }
                at += 1
            }
        }

        mutating func object(depth: Int) throws(JSONSyntaxError) -> JSONObject {
            at += 1  // {
            var object = JSONObject()
            skipSpace()
            if at < bytes.count, bytes[at] == 0x7D { at += 1; return object }
            while true {
                skipSpace()
                guard at < bytes.count, bytes[at] == 0x22 else {
                    throw error(at < bytes.count && bytes[at] == 0x7D ? "trailing comma before '}'" : "expected a member name in double quotes, found \(describeCurrent())")
                }
                let keyStart = at
                let key = try string()
                guard object[key] == nil else { throw error("duplicate key \(JSONValue.quote(key))", at: keyStart) }
                skipSpace()
                guard at < bytes.count, bytes[at] == 0x3A else { throw error("expected ':' after member name \(JSONValue.quote(key)), found \(describeCurrent())") }
                at += 1
                skipSpace()
                object[key] = try value(depth: depth + 1)
                skipSpace()
                guard at < bytes.count else { throw error("unterminated object: expected ',' or '}', found the end of the text") }
                if bytes[at] == 0x2C { at += 1; continue }
                if bytes[at] == 0x7D { at += 1; return object }
                throw error("expected ',' or '}' after an object member, found \(describeCurrent())")
            }
        }

        mutating func array(depth: Int) throws(JSONSyntaxError) -> [JSONValue] {
            at += 1  // [
            var items: [JSONValue] = []
            skipSpace()
            if at < bytes.count, bytes[at] == 0x5D { at += 1; return items }
            while true {
                skipSpace()
                if at < bytes.count, bytes[at] == 0x5D { throw error("trailing comma before ']'") }
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard at < bytes.count else { throw error("unterminated array: expected ',' or ']', found the end of the text") }
                if bytes[at] == 0x2C { at += 1; continue }
                if bytes[at] == 0x5D { at += 1; return items }
                throw error("expected ',' or ']' after an array element, found \(describeCurrent())")
            }
        }

        mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
            guard at + 4 <= bytes.count else { throw error("incomplete \\u escape") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let b = bytes[at]
                let d: UInt32
                switch b {
                case 0x30...0x39: d = UInt32(b - 0x30)
                case 0x41...0x46: d = UInt32(b - 0x41 + 10)
                case 0x61...0x66: d = UInt32(b - 0x61 + 10)
                default: throw error("\\u must be followed by four hexadecimal digits")
                }
                v = v << 4 | d
                at += 1
            }
            return v
        }

        mutating func string() throws(JSONSyntaxError) -> String {
            let open = at
            at += 1  // "
            var scalars = String.UnicodeScalarView()
            var runStart = at
            func flushRun(_ p: inout Parser, _ end: Int) throws(JSONSyntaxError) {
                guard end > runStart else { return }
                let run = UnsafeBufferPointer(rebasing: p.bytes[runStart..<end])
                guard let s = String(validating: run, as: UTF8.self) else {
                    throw p.error("string is not valid UTF-8", at: runStart)
                }
                scalars.append(contentsOf: s.unicodeScalars)
            }
            while true {
                guard at < bytes.count else { throw error("unterminated string", at: open) }
                let b = bytes[at]
                if b == 0x22 {
                    try flushRun(&self, at)
                    at += 1
                    return String(scalars)
                }
                if b < 0x20 { throw error("control character (byte 0x\(String(b, radix: 16))) in a string; write it as an escape") }
                if b != 0x5C { at += 1; continue }
                try flushRun(&self, at)
                at += 1
                guard at < bytes.count else { throw error("unterminated string", at: open) }
                let e = bytes[at]
                at += 1
                switch e {
                case 0x22: scalars.append("\"")
                case 0x5C: scalars.append("\\")
                case 0x2F: scalars.append("/")
                case 0x62: scalars.append("\u{08}")
                case 0x66: scalars.append("\u{0C}")
                case 0x6E: scalars.append("\n")
                case 0x72: scalars.append("\r")
                case 0x74: scalars.append("\t")
                case 0x75:
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard at + 1 < bytes.count, bytes[at] == 0x5C, bytes[at + 1] == 0x75 else {
                            throw error("lone UTF-16 surrogate \\u\(String(code, radix: 16)) (not a character)")
                        }
                        at += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid UTF-16 surrogate pair") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(code) {
                        throw error("lone UTF-16 surrogate \\u\(String(code, radix: 16)) (not a character)")
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("\\u escape is not a character") }
                    scalars.append(scalar)
                default:
                    throw error("unknown escape '\\\(Character(Unicode.Scalar(e)))' in a string", at: at - 2)
                }
                runStart = at
            }
        }

        mutating func number() throws(JSONSyntaxError) -> Double {
            let start = at
            func digits(_ p: inout Parser) -> Int {
                let s = p.at
                while p.at < p.bytes.count, (0x30...0x39).contains(p.bytes[p.at]) { p.at += 1 }
                return p.at - s
            }
            if bytes[at] == 0x2D { at += 1 }
            guard at < bytes.count, (0x30...0x39).contains(bytes[at]) else { throw error("expected a digit after '-'") }
            if bytes[at] == 0x30 {
                at += 1
                if at < bytes.count, (0x30...0x39).contains(bytes[at]) { throw error("numbers must not have leading zeros", at: start) }
            } else {
                _ = digits(&self)
            }
            if at < bytes.count, bytes[at] == 0x2E {
                at += 1
                guard digits(&self) > 0 else { throw error("expected a digit after '.'") }
            }
            if at < bytes.count, bytes[at] == 0x65 || bytes[at] == 0x45 {
                at += 1
                if at < bytes.count, bytes[at] == 0x2B || bytes[at] == 0x2D { at += 1 }
                guard digits(&self) > 0 else { throw error("expected a digit in the exponent") }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
            guard let x = Double(text), x.isFinite else { throw error("number \(text) is too large", at: start) }
            return x
        }
    }
}
