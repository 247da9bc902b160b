import ControlProtocol
import Foundation
import StrictJSON

/// `loopix ctl`: one request to the running daemon over its control socket.
public enum CtlCommand {
    public static let help = """
    Usage: loopix ctl COMMAND [ARGUMENT] [--socket PATH] [--timeout SECONDS]

    Sends one command to the running loopixd over its control socket (default
    /run/loopix/control.sock, or $LOOPIX_SOCKET) and prints the reply.

    Commands:
      status                  the camera's state (pretty JSON)
      capture                 press the shutter
      preset NAME             choose a look (see loopix presets)
      intensity N             look intensity, 0–100 %
      ev N                    exposure compensation, −3…3 stops
      lens N                  choose a lens (0 is the first)
      mode photo|video
      grid on|off
      booth on|off
      handedness left|right
      snapshot FILE           save the preview frame as PNG (the daemon writes FILE)
      record start|stop|toggle  record a clip (start switches to video mode)
      interval start [N] --every S  a photo every S seconds (N of them, or until stopped);
                              the schedule survives restarts
      interval stop
      wait-saved [N]          wait until the next N photos (default 1) are saved, complete
                              on disk; print their paths, one a line (no time limit
                              unless --timeout is given)

    Exit status: 0 when the daemon says ok, 1 when it reports an error (printed on one line)
    or cannot be reached, 2 for a usage mistake.
    """

    /// Turns the words after `ctl` into a request.
    public static func request(_ operands: [String], every: String? = nil,
                               currentDirectory: String = FileManager.default.currentDirectoryPath) throws(ToolError) -> ControlRequest {
        guard let command = operands.first else { throw .usage("ctl needs a command (try loopix ctl --help)") }
        let rest = Array(operands.dropFirst())
        func argument(_ what: String) throws(ToolError) -> String {
            guard rest.count == 1 else {
                throw .usage(rest.isEmpty ? "ctl \(command) needs \(what)" : "ctl \(command) takes one argument, not \(rest.count)")
            }
            return rest[0]
        }
        func number(_ what: String, _ range: ClosedRange<Double>) throws(ToolError) -> Double {
            let text = try argument(what)
            guard let v = Double(text), range.contains(v) else {
                throw .usage("ctl \(command): \(what) must be a number from \(format(range.lowerBound)) to \(format(range.upperBound)), not \"\(text)\"")
            }
            return v
        }
        switch command {
        case "status", "capture":
            guard rest.isEmpty else { throw .usage("ctl \(command) takes no argument") }
            return command == "status" ? .status : .capture
        case "preset":
            let name = try argument("a preset id")
            guard ControlRequest.isValidPresetID(name) else { throw .usage("ctl preset: \"\(name)\" is not a preset id (see loopix presets)") }
            return .preset(name)
        case "intensity": return .intensity(try number("the intensity", 0...100))
        case "ev": return .ev(try number("the EV", -3...3))
        case "lens":
            let text = try argument("a lens number")
            guard let i = Int(text), (0...ControlRequest.maxLensIndex).contains(i) else {
                throw .usage("ctl lens: the lens must be a whole number from 0 to \(ControlRequest.maxLensIndex), not \"\(text)\"")
            }
            return .lens(i)
        case "mode":
            let text = try argument("photo or video")
            guard let m = ControlRequest.Mode(rawValue: text) else { throw .usage("ctl mode: \"\(text)\" is not photo or video") }
            return .mode(m)
        case "grid":
            switch try argument("on or off") {
            case "on", "true": return .grid(true)
            case "off", "false": return .grid(false)
            case let other: throw .usage("ctl grid: \"\(other)\" is not on or off")
            }
        case "booth":
            switch try argument("on or off") {
            case "on", "true": return .booth(true)
            case "off", "false": return .booth(false)
            case let other: throw .usage("ctl booth: \"\(other)\" is not on or off")
            }
        case "handedness":
            let text = try argument("left or right")
            guard let h = Handedness(rawValue: text) else { throw .usage("ctl handedness: \"\(text)\" is not left or right") }
            return .handedness(h)
        case "record":
            let text = try argument("start, stop or toggle")
            guard let action = ControlRequest.RecordAction(rawValue: text) else {
                throw .usage("ctl record: \"\(text)\" is not start, stop or toggle")
            }
            return .record(action)
        case "interval":
            switch rest.first {
            case "stop":
                guard rest.count == 1 else { throw .usage("ctl interval stop takes no argument") }
                return .interval(.stop)
            case "start":
                guard rest.count <= 2 else { throw .usage("ctl interval start takes at most a count") }
                guard let text = every, let seconds = Double(text), ControlRequest.intervalSeconds.contains(seconds) else {
                    throw .usage("ctl interval start needs --every SECONDS (0.5 to 86400)")
                }
                var count: Int?
                if rest.count == 2 {
                    guard let n = Int(rest[1]), (1...ControlRequest.maxIntervalCount).contains(n) else {
                        throw .usage("ctl interval start: the count must be a whole number from 1 to \(ControlRequest.maxIntervalCount), not \"\(rest[1])\"")
                    }
                    count = n
                }
                return .interval(.start(everySeconds: seconds, count: count))
            default:
                throw .usage("ctl interval needs start or stop")
            }
        case "wait-saved":
            guard rest.count <= 1 else { throw .usage("ctl wait-saved takes at most one argument, not \(rest.count)") }
            guard let text = rest.first else { return .waitSaved(count: 1) }
            guard let n = Int(text), (1...ControlRequest.maxWaitSaved).contains(n) else {
                throw .usage("ctl wait-saved: the count must be a whole number from 1 to \(ControlRequest.maxWaitSaved), not \"\(text)\"")
            }
            return .waitSaved(count: n)
        case "snapshot":
            let file = try argument("a file name")
            let path = file.hasPrefix("/") ? file : (currentDirectory as NSString).appendingPathComponent(file)
            return .snapshot(path: (path as NSString).standardizingPath)
        default:
            throw .usage("ctl: unknown command \"\(command)\" (try loopix ctl --help)")
        }
    }

    /// Sends the request; prints the reply (status pretty-printed). Throws on ok:false.
    public static func run(_ words: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                           output: (String) -> Void = { print($0) }) throws(ToolError) {
        let args = try Arguments(words, valued: ["--socket": "socket", "--timeout": "timeout", "--every": "every"], flags: [:])
        let request = try request(args.operands, every: args.value("every"))
        let socket = args.value("socket") ?? ControlClient.socketPath(environment: environment)
        // Longer than the daemon's own wait for the answer, so that its "busy" reply arrives.
        // wait-saved waits for photos nobody has taken yet: no limit unless one is given.
        let waits = if case .waitSaved = request { true } else { false }
        let timeout = try args.double("timeout", in: 0.1...(waits ? 31_536_000 : 600)) ?? (waits ? 31_536_000 : request.answerTimeout + 5)
        let line: String
        do {
            line = try ControlClient.send(request, socketPath: socket, timeout: timeout)
        } catch {
            throw ToolError(error.description)
        }
        guard let reply = try? JSONParser.parseObject(Array(line.utf8)), case .bool(let ok)? = reply["ok"] else {
            throw ToolError("\(socket): the daemon's reply is not a protocol reply: \(line.prefix(200))")
        }
        guard ok else {
            var message = "failed"
            if case .string(let m)? = reply["error"] { message = m }
            throw ToolError("\(request.command): \(message)")
        }
        if case .status = request {
            output(JSONValue.object(reply).serialized(.pretty))
        } else if case .waitSaved = request, case .array(let paths)? = reply["paths"] {
            for case .string(let path) in paths { output(path) }
        } else {
            output(line)
        }
    }

    private static func format(_ x: Double) -> String { x == x.rounded() ? String(Int(x)) : String(x) }
}
