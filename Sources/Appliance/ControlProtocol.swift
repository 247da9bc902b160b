import Foundation

// The control socket's line protocol. See `ControlRequest` for the documentation.

/// An optional request id, echoed in the reply: a string or a whole number.
public enum ControlRequestID: Sendable, Equatable {
    case string(String)
    case number(Int)

    var json: String {
        switch self {
        case .string(let s): return LoopixJSON.quote(s)
        case .number(let n): return String(n)
        }
    }
}

/// A request that could not be understood, as one line (sent back as the reply's `error`).
public enum ControlProtocolError: Error, Equatable, CustomStringConvertible {
    case notJSON
    case notObject
    case notUTF8
    case missingCommand
    case unknownCommand(String)
    case missingField(command: String, field: String)
    case wrongType(command: String, field: String, expected: String)
    case outOfRange(command: String, field: String, value: String, allowed: String)
    case unknownField(command: String, field: String)
    case lineTooLong(limit: Int)

    public var description: String {
        switch self {
        case .notJSON: return "request is not valid JSON (send one JSON object per line)"
        case .notObject: return "request must be a JSON object, e.g. {\"cmd\":\"status\"}"
        case .notUTF8: return "request is not valid UTF-8"
        case .missingCommand: return "request has no \"cmd\" string"
        case .unknownCommand(let c):
            return "unknown cmd \"\(c)\" (known: \(ControlRequest.commands.joined(separator: ", ")))"
        case .missingField(let c, let f): return "\(c): \"\(f)\" is missing"
        case .wrongType(let c, let f, let e): return "\(c): \"\(f)\" must be \(e)"
        case .outOfRange(let c, let f, let v, let a): return "\(c): \"\(f)\" \(v) is out of range (allowed \(a))"
        case .unknownField(let c, let f): return "\(c): unknown field \"\(f)\""
        case .lineTooLong(let limit): return "request line longer than \(limit) bytes; closing the connection"
        }
    }
}

/// A command for the daemon, from the control socket (`loopix ctl`) or a script.
///
/// **Protocol.** A Unix stream socket (default `/run/loopix/control.sock`, mode 0660). Each
/// request is one JSON object on one line (UTF-8, ending in `\n`, at most 4096 bytes); each
/// gets exactly one reply line, in order. An optional `"id"` (string or whole number) is echoed
/// in the reply. Unknown fields are errors.
///
/// | request | meaning |
/// |---|---|
/// | `{"cmd":"status"}` | current state (preset, intensity, ev, lens, mode, grid, handedness, camera, storage…) |
/// | `{"cmd":"capture"}` | press the shutter |
/// | `{"cmd":"preset","name":"portra"}` | choose a look (id: a–z, 0–9, -; 1…32 characters) |
/// | `{"cmd":"intensity","value":70}` | look intensity in percent, 0…100 |
/// | `{"cmd":"ev","value":-1.3}` | exposure compensation in stops, −3…3 |
/// | `{"cmd":"lens","index":1}` | choose a lens, 0…15 |
/// | `{"cmd":"mode","value":"photo"}` | `photo` or `video` |
/// | `{"cmd":"grid","value":true}` | rule-of-thirds grid on or off |
/// | `{"cmd":"handedness","value":"left"}` | `left` or `right` |
/// | `{"cmd":"snapshot","path":"/tmp/x.png"}` | save the current preview frame as PNG (absolute path) |
/// | `{"cmd":"simulate","fault":"stall","seconds":3}` | simulated camera only: `stall` (no frames) or `disconnect`, 0…60 s |
///
/// Replies: `{"ok":true, ...}` with command-specific fields, or `{"ok":false,"error":"one line"}`;
/// `"id"` follows `"ok"` when the request had one. A line longer than 4096 bytes gets an error
/// reply and the connection is closed; so does a client beyond the 16th.
public enum ControlRequest: Sendable, Equatable {
    public enum Mode: String, Sendable, Equatable, CaseIterable { case photo, video }
    public enum Fault: String, Sendable, Equatable, CaseIterable { case stall, disconnect }

    /// How long the daemon waits for the preview loop to answer before replying "busy": a
    /// capture takes the still first, which can take seconds (a long exposure, a pipeline
    /// reconfigured for the still and back); everything else is answered between two frames.
    public var answerTimeout: Double {
        if case .capture = self { return 30 }
        return 5
    }

    case status
    case capture
    case preset(String)
    /// Percent, 0…100.
    case intensity(Double)
    /// Stops, −3…3.
    case ev(Double)
    case lens(Int)
    case mode(Mode)
    case grid(Bool)
    case handedness(Handedness)
    /// Absolute path of a PNG to write.
    case snapshot(path: String)
    case simulate(fault: Fault, seconds: Double)

    public static let commands = ["status", "capture", "preset", "intensity", "ev", "lens", "mode",
                                  "grid", "handedness", "snapshot", "simulate"]
    public static let maxLensIndex = 15
    public static let maxSimulateSeconds: Double = 60

    /// The command word, e.g. "preset".
    public var command: String {
        switch self {
        case .status: return "status"
        case .capture: return "capture"
        case .preset: return "preset"
        case .intensity: return "intensity"
        case .ev: return "ev"
        case .lens: return "lens"
        case .mode: return "mode"
        case .grid: return "grid"
        case .handedness: return "handedness"
        case .snapshot: return "snapshot"
        case .simulate: return "simulate"
        }
    }

    /// A preset id as the protocol and configuration accept it: 1…32 of a–z, 0–9 and -.
    public static func isValidPresetID(_ id: String) -> Bool {
        (1...32).contains(id.utf8.count)
            && id.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }

    /// Parses one request line (without or with its trailing newline).
    public static func parse(line: some StringProtocol) -> Result<ControlRequest, ControlProtocolError> {
        parseWithID(line: Array(line.utf8)).request
    }

    public static func parse(line: [UInt8]) -> Result<ControlRequest, ControlProtocolError> {
        parseWithID(line: line).request
    }

    /// Parses one request line and also returns its `id` (when one could be read, even if the
    /// request itself is bad, so that an error reply can carry it).
    public static func parseWithID(line: [UInt8]) -> (id: ControlRequestID?, request: Result<ControlRequest, ControlProtocolError>) {
        guard String(validating: line, as: UTF8.self) != nil else { return (nil, .failure(.notUTF8)) }
        let value: Any
        do {
            value = try JSONSerialization.jsonObject(with: Data(line), options: [])
        } catch {
            return (nil, .failure(.notJSON))
        }
        guard let object = value as? [String: Any] else { return (nil, .failure(.notObject)) }
        var id: ControlRequestID? = nil
        if let raw = object["id"] {
            if let s = raw as? String { id = .string(s) }
            else if let n = LoopixJSON.integer(raw) { id = .number(n) }
            else { return (nil, .failure(.wrongType(command: "request", field: "id", expected: "a string or a whole number"))) }
        }
        return (id, parse(object: object))
    }

    private static func parse(object: [String: Any]) -> Result<ControlRequest, ControlProtocolError> {
        guard let cmd = object["cmd"] as? String else { return .failure(.missingCommand) }
        var fields = object
        fields["cmd"] = nil
        fields["id"] = nil
        func take(_ f: String) throws(ControlProtocolError) -> Any {
            guard let v = fields.removeValue(forKey: f), !(v is NSNull) else { throw .missingField(command: cmd, field: f) }
            return v
        }
        func number(_ f: String, _ range: ClosedRange<Double>, unit: String = "") throws(ControlProtocolError) -> Double {
            let v = try take(f)
            guard let x = LoopixJSON.number(v) else { throw .wrongType(command: cmd, field: f, expected: "a number") }
            guard range.contains(x) else {
                throw .outOfRange(command: cmd, field: f, value: LoopixJSON.format(x),
                                  allowed: "\(LoopixJSON.format(range.lowerBound))…\(LoopixJSON.format(range.upperBound))\(unit)")
            }
            return x
        }
        func choice<T: RawRepresentable & CaseIterable>(_ f: String, _ t: T.Type) throws(ControlProtocolError) -> T where T.RawValue == String {
            let names = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
            guard let s = try take(f) as? String else { throw .wrongType(command: cmd, field: f, expected: names) }
            guard let t = T(rawValue: s) else { throw .outOfRange(command: cmd, field: f, value: "\"\(s)\"", allowed: names) }
            return t
        }
        do throws(ControlProtocolError) {
            let request: ControlRequest
            switch cmd {
            case "status": request = .status
            case "capture": request = .capture
            case "preset":
                guard let name = try take("name") as? String else { throw .wrongType(command: cmd, field: "name", expected: "a string") }
                guard isValidPresetID(name) else {
                    throw ControlProtocolError.outOfRange(command: cmd, field: "name", value: LoopixJSON.quote(String(name.prefix(40))),
                                                          allowed: "1 to 32 characters of a–z, 0–9 and -")
                }
                request = .preset(name)
            case "intensity": request = .intensity(try number("value", 0...100, unit: " %"))
            case "ev": request = .ev(try number("value", -3...3, unit: " stops"))
            case "lens":
                let v = try take("index")
                guard let x = LoopixJSON.number(v) else { throw .wrongType(command: cmd, field: "index", expected: "a whole number") }
                guard let n = LoopixJSON.integer(v) else { throw .wrongType(command: cmd, field: "index", expected: "a whole number, not \(LoopixJSON.format(x))") }
                guard (0...maxLensIndex).contains(n) else {
                    throw .outOfRange(command: cmd, field: "index", value: String(n), allowed: "0…\(maxLensIndex)")
                }
                request = .lens(n)
            case "mode": request = .mode(try choice("value", Mode.self))
            case "grid":
                guard let b = LoopixJSON.bool(try take("value")) else { throw .wrongType(command: cmd, field: "value", expected: "true or false") }
                request = .grid(b)
            case "handedness": request = .handedness(try choice("value", Handedness.self))
            case "snapshot":
                guard let path = try take("path") as? String else { throw .wrongType(command: cmd, field: "path", expected: "a string") }
                guard path.hasPrefix("/"), !path.contains("\0"), path.utf8.count <= 4000 else {
                    throw .wrongType(command: cmd, field: "path", expected: "an absolute file path")
                }
                request = .snapshot(path: path)
            case "simulate":
                let fault = try choice("fault", Fault.self)
                request = .simulate(fault: fault, seconds: try number("seconds", 0...maxSimulateSeconds, unit: " s"))
            default:
                throw ControlProtocolError.unknownCommand(String(cmd.prefix(40)))
            }
            if let extra = fields.keys.sorted().first {
                throw ControlProtocolError.unknownField(command: cmd, field: String(extra.prefix(40)))
            }
            return .success(request)
        } catch {
            return .failure(error)
        }
    }

    /// The request as one protocol line (with its newline), e.g. `{"cmd":"ev","value":-1.3}\n`.
    public func jsonLine(id: ControlRequestID? = nil) -> String {
        var parts = ["\"cmd\":\(LoopixJSON.quote(command))"]
        if let id { parts.append("\"id\":\(id.json)") }
        switch self {
        case .status, .capture: break
        case .preset(let name): parts.append("\"name\":\(LoopixJSON.quote(name))")
        case .intensity(let v), .ev(let v): parts.append("\"value\":\(LoopixJSON.format(v))")
        case .lens(let i): parts.append("\"index\":\(i)")
        case .mode(let m): parts.append("\"value\":\(LoopixJSON.quote(m.rawValue))")
        case .grid(let b): parts.append("\"value\":\(b)")
        case .handedness(let h): parts.append("\"value\":\(LoopixJSON.quote(h.rawValue))")
        case .snapshot(let path): parts.append("\"path\":\(LoopixJSON.quote(path))")
        case .simulate(let fault, let seconds):
            parts.append("\"fault\":\(LoopixJSON.quote(fault.rawValue))")
            parts.append("\"seconds\":\(LoopixJSON.format(seconds))")
        }
        return "{" + parts.joined(separator: ",") + "}\n"
    }
}

/// A JSON value in a reply.
public indirect enum ControlValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null
    case array([ControlValue])
    case object([String: ControlValue])

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: ControlValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, ControlValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// Compact JSON; object keys in byte order; non-finite numbers as null.
    public var json: String {
        switch self {
        case .string(let s): return LoopixJSON.quote(s)
        case .int(let n): return String(n)
        case .double(let x): return x.isFinite ? LoopixJSON.format(x) : "null"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .array(let items): return "[" + items.map(\.json).joined(separator: ",") + "]"
        case .object(let fields):
            return "{" + fields.sorted { $0.key < $1.key }.map { "\(LoopixJSON.quote($0.key)):\($0.value.json)" }.joined(separator: ",") + "}"
        }
    }
}

/// One reply line: `{"ok":true,"id":…,…fields}` or `{"ok":false,"id":…,"error":"one line"}`.
public struct ControlReply: Sendable, Equatable {
    public var ok: Bool
    public var error: String?
    /// Command-specific fields (for `status`: the state). `ok`, `id` and `error` are reserved.
    public var fields: [String: ControlValue]
    public var id: ControlRequestID?

    public init(ok: Bool, error: String? = nil, fields: [String: ControlValue] = [:], id: ControlRequestID? = nil) {
        self.ok = ok
        self.error = error
        self.fields = fields
        self.id = id
    }

    public static func success(_ fields: [String: ControlValue] = [:]) -> ControlReply {
        ControlReply(ok: true, fields: fields)
    }

    /// A failure; the message is flattened to one line.
    public static func failure(_ message: String) -> ControlReply {
        let oneLine = message.split(whereSeparator: \.isNewline).joined(separator: " ")
        return ControlReply(ok: false, error: oneLine)
    }

    public static func failure(_ error: ControlProtocolError) -> ControlReply { failure(error.description) }

    /// The reply as compact JSON with a trailing newline.
    public var jsonLine: String {
        var parts = ["\"ok\":\(ok)"]
        if let id { parts.append("\"id\":\(id.json)") }
        if let error { parts.append("\"error\":\(LoopixJSON.quote(error))") }
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) where !["ok", "id", "error"].contains(key) {
            parts.append("\(LoopixJSON.quote(key)):\(value.json)")
        }
        return "{" + parts.joined(separator: ",") + "}\n"
    }
}
