import StrictJSON

// The control socket's line protocol. See `ControlRequest` for the documentation.

/// An optional request id, echoed in the reply: a string or a whole number.
public enum ControlRequestID: Sendable, Equatable {
    case string(String)
    case number(Int)

    var json: String {
        switch self {
        case .string(let s): return JSONValue.quote(s)
        case .number(let n): return String(n)
        }
    }
}

/// Which hand holds the camera: decides which side button is the shutter and where the
/// on-screen controls sit.
public enum Handedness: String, Codable, Sendable, Equatable, CaseIterable {
    case left, right
}

/// A request that could not be understood, as one line (sent back as the reply's `error`).
public enum ControlProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    case notJSON(JSONSyntaxError)
    case notObject
    case notUTF8
    case missingCommand
    case unknownCommand(String)
    /// A field of `command` that is missing, of the wrong type, out of range or unknown.
    case field(command: String, field: String, message: String)
    case lineTooLong(limit: Int)

    public var description: String {
        switch self {
        case .notJSON(let e): return "request is not valid JSON (\(e); send one JSON object per line)"
        case .notObject: return "request must be a JSON object, e.g. {\"cmd\":\"status\"}"
        case .notUTF8: return "request is not valid UTF-8"
        case .missingCommand: return "request has no \"cmd\" string"
        case .unknownCommand(let c):
            return "unknown cmd \"\(c)\" (known: \(ControlRequest.commands.joined(separator: ", ")))"
        case .field(let c, let f, let m): return "\(c): \"\(f)\" \(m)"
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
/// | `{"cmd":"record","action":"start"}` | `start`, `stop` or `toggle` a recording (start switches to video mode) |
/// | `{"cmd":"booth","value":true}` | photobooth mode on or off |
///
/// Replies: `{"ok":true, ...}` with command-specific fields, or `{"ok":false,"error":"one line"}`;
/// `"id"` follows `"ok"` when the request had one. A line longer than 4096 bytes gets an error
/// reply and the connection is closed; so does a client beyond the 16th.
public enum ControlRequest: Sendable, Equatable {
    public enum Mode: String, Sendable, Equatable, CaseIterable { case photo, video }
    public enum Fault: String, Sendable, Equatable, CaseIterable { case stall, disconnect }
    public enum RecordAction: String, Sendable, Equatable, CaseIterable { case start, stop, toggle }

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
    /// Start, stop or toggle recording a clip.
    case record(RecordAction)
    /// Photobooth mode on or off.
    case booth(Bool)
    /// Answered once the next `count` photos are saved, with their paths.
    case waitSaved(count: Int)
    /// Starts a timelapse (a photo every `every` seconds, `count` of them or without end) or
    /// stops the one running.
    case interval(IntervalAction)

    public enum IntervalAction: Sendable, Equatable {
        case start(everySeconds: Double, count: Int?)
        case stop
    }
    public static let intervalSeconds: ClosedRange<Double> = 0.5...86_400
    public static let maxIntervalCount = 1_000_000

    public static let commands = ["status", "capture", "preset", "intensity", "ev", "lens", "mode",
                                  "grid", "handedness", "snapshot", "simulate", "record", "booth", "wait-saved", "interval"]
    public static let maxWaitSaved = 1000
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
        case .record: return "record"
        case .booth: return "booth"
        case .waitSaved: return "wait-saved"
        case .interval: return "interval"
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
        let value: JSONValue
        do { value = try JSONParser.parse(line) } catch { return (nil, .failure(.notJSON(error))) }
        guard case .object(var object) = value else { return (nil, .failure(.notObject)) }
        var id: ControlRequestID? = nil
        if let raw = object["id"], raw != .null {
            if case .string(let s) = raw { id = .string(s) }
            else if let n = raw.integer, abs(n) < 1_000_000_000_000_000 { id = .number(n) }
            else { return (nil, .failure(.field(command: "request", field: "id", message: "must be a string or a whole number"))) }
        }
        object["id"] = nil
        return (id, parse(object: object))
    }

    private static func parse(object: JSONObject) -> Result<ControlRequest, ControlProtocolError> {
        guard case .string(let cmd)? = object["cmd"] else { return .failure(.missingCommand) }
        var fields = object
        fields["cmd"] = nil
        var r = JSONFields(fields) { field, message in ControlProtocolError.field(command: cmd, field: field, message: message) }
        do throws(ControlProtocolError) {
            let request: ControlRequest
            switch cmd {
            case "status": request = .status
            case "capture": request = .capture
            case "preset":
                let name = try r.string("name")
                guard isValidPresetID(name) else {
                    throw .field(command: cmd, field: "name",
                                 message: "\(JSONValue.quote(String(name.prefix(40)))) is not a preset id (1 to 32 characters of a–z, 0–9 and -)")
                }
                request = .preset(name)
            case "intensity": request = .intensity(try required(r.number("value", in: 0...100, unit: " %"), "value", cmd))
            case "ev": request = .ev(try required(r.number("value", in: -3...3, unit: " stops"), "value", cmd))
            case "lens": request = .lens(try required(r.integer("index", in: 0...maxLensIndex), "index", cmd))
            case "mode": request = .mode(try required(r.choice("value", Mode.self), "value", cmd))
            case "grid": request = .grid(try required(r.bool("value"), "value", cmd))
            case "booth": request = .booth(try required(r.bool("value"), "value", cmd))
            case "handedness": request = .handedness(try required(r.choice("value", Handedness.self), "value", cmd))
            case "snapshot":
                let path = try r.string("path")
                guard path.hasPrefix("/"), !path.contains("\0"), path.utf8.count <= 4000 else {
                    throw .field(command: cmd, field: "path", message: "must be an absolute file path")
                }
                request = .snapshot(path: path)
            case "simulate":
                let fault = try required(r.choice("fault", Fault.self), "fault", cmd)
                request = .simulate(fault: fault, seconds: try required(r.number("seconds", in: 0...maxSimulateSeconds, unit: " s"), "seconds", cmd))
            case "record": request = .record(try required(r.choice("action", RecordAction.self), "action", cmd))
            case "wait-saved": request = .waitSaved(count: try r.integer("count", in: 1...maxWaitSaved) ?? 1)
            case "interval":
                switch try required(r.string("action") as String?, "action", cmd) {
                case "start":
                    let every = try required(r.number("every", in: intervalSeconds, unit: " s"), "every", cmd)
                    request = .interval(.start(everySeconds: every, count: try r.integer("count", in: 1...maxIntervalCount)))
                case "stop": request = .interval(.stop)
                case let other:
                    throw .field(command: cmd, field: "action", message: "\(JSONValue.quote(String(other.prefix(20)))) is not start or stop")
                }
            default:
                throw .unknownCommand(String(cmd.prefix(40)))
            }
            try r.rejectUnknown(allowed: "")
            return .success(request)
        } catch {
            return .failure(error)
        }
    }

    private static func required<T>(_ value: T?, _ field: String, _ cmd: String) throws(ControlProtocolError) -> T {
        guard let value else { throw .field(command: cmd, field: field, message: "is missing") }
        return value
    }

    /// The request as one protocol line (with its newline), e.g. `{"cmd":"ev","value":-1.3}\n`.
    public func jsonLine(id: ControlRequestID? = nil) -> String {
        var parts = ["\"cmd\":\(JSONValue.quote(command))"]
        if let id { parts.append("\"id\":\(id.json)") }
        switch self {
        case .status, .capture: break
        case .preset(let name): parts.append("\"name\":\(JSONValue.quote(name))")
        case .intensity(let v), .ev(let v): parts.append("\"value\":\(JSONValue.format(v))")
        case .lens(let i): parts.append("\"index\":\(i)")
        case .mode(let m): parts.append("\"value\":\(JSONValue.quote(m.rawValue))")
        case .grid(let b), .booth(let b): parts.append("\"value\":\(b)")
        case .handedness(let h): parts.append("\"value\":\(JSONValue.quote(h.rawValue))")
        case .snapshot(let path): parts.append("\"path\":\(JSONValue.quote(path))")
        case .simulate(let fault, let seconds):
            parts.append("\"fault\":\(JSONValue.quote(fault.rawValue))")
            parts.append("\"seconds\":\(JSONValue.format(seconds))")
        case .record(let action): parts.append("\"action\":\(JSONValue.quote(action.rawValue))")
        case .waitSaved(let count): parts.append("\"count\":\(count)")
        case .interval(.start(let every, let count)):
            parts.append("\"action\":\"start\"")
            parts.append("\"every\":\(JSONValue.format(every))")
            if let count { parts.append("\"count\":\(count)") }
        case .interval(.stop): parts.append("\"action\":\"stop\"")
        }
        return "{" + parts.joined(separator: ",") + "}\n"
    }
}

/// One reply line: `{"ok":true,"id":…,…fields}` or `{"ok":false,"id":…,"error":"one line"}`.
public struct ControlReply: Sendable, Equatable {
    public var ok: Bool
    public var error: String?
    /// Command-specific fields (for `status`: the state). `ok`, `id` and `error` are reserved.
    public var fields: [String: JSONValue]
    public var id: ControlRequestID?

    public init(ok: Bool, error: String? = nil, fields: [String: JSONValue] = [:], id: ControlRequestID? = nil) {
        self.ok = ok
        self.error = error
        self.fields = fields
        self.id = id
    }

    public static func success(_ fields: [String: JSONValue] = [:]) -> ControlReply {
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
        if let error { parts.append("\"error\":\(JSONValue.quote(error))") }
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) where !["ok", "id", "error"].contains(key) {
            parts.append("\(JSONValue.quote(key)):\(value.serialized())")
        }
        return "{" + parts.joined(separator: ",") + "}\n"
    }
}
