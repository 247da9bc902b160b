import Appliance
import Foundation
import StrictJSON
import System

/// `loopixd --doctor` (and `loopix doctor`, which runs it): checks this machine against the
/// configuration and prints one line per finding with what to do. Exit status 0 when nothing
/// the configuration requires is missing, 1 when something is, 2 for a bad command line or
/// configuration.
public enum Doctor {
    public static let help = """
    Usage: loopix doctor [--json] [--config PATH]
           loopixd --doctor [--json] [--config PATH]

    Checks the board, config.txt, cameras, screens, GPIO lines, motion sensor, storage, the
    running daemon and its service, and the license, one line each with what to do. Changes
    nothing. Exit status: 0 all required parts found, 1 something required is missing.

      --json          one JSON object: {"ok": …, "version": …, "findings": [{"area", "level", "message", "advice"}]}
      --config PATH   the configuration to check against (default: /etc/loopix/loopix.json)
    """

    public static func main(_ arguments: [String], machine: Machine = LiveMachine()) -> Int32 {
        var json = false
        var configPath: String?
        var i = 0
        while i < arguments.count {
            switch arguments[i] {
            case "--doctor": break
            case "--json": json = true
            case "--config":
                guard i + 1 < arguments.count else { return usage("--config needs a path") }
                configPath = arguments[i + 1]
                i += 1
            case "--help", "-h":
                print(help)
                return 0
            default:
                return usage("unknown argument \(arguments[i])")
            }
            i += 1
        }
        let config: Config
        do { config = try Config.load(path: configPath) } catch {
            if json {
                print(JSONValue.object(JSONObject([("ok", .bool(false)), ("error", .string("\(error)"))])).serialized(.pretty))
            } else {
                Log.error("\(error)")
            }
            return 2
        }
        let findings = Examination(config: config, machine: machine).run()
        print(render(findings, config: config, json: json))
        return findings.contains { $0.level == .problem } ? 1 : 0
    }

    /// The report: one line per finding and a verdict, or the JSON object.
    public static func render(_ findings: [Finding], config: Config, json: Bool) -> String {
        let ok = !findings.contains { $0.level == .problem }
        if json {
            let report = JSONObject([("ok", .bool(ok)), ("version", .string(loopixVersion)), ("config", .string(config.source)),
                                     ("findings", .array(findings.map(\.json)))])
            return JSONValue.object(report).serialized(JSONValue.Style(sortedKeys: false, pretty: true))
        }
        let problems = findings.filter { $0.level == .problem }.count, warnings = findings.filter { $0.level == .warning }.count
        let verdict = ok ? "All required parts found" + (warnings > 0 ? " (\(warnings) warning\(warnings == 1 ? "" : "s"))." : ".")
                         : "\(problems) problem\(problems == 1 ? "" : "s") to fix before loopixd can work as configured."
        return (["Loopix \(loopixVersion) doctor, configuration: \(config.source)"] + findings.map(\.line) + [verdict]).joined(separator: "\n")
    }

    static func usage(_ message: String) -> Int32 {
        Log.error("doctor: \(message) (see loopix doctor --help)")
        return 2
    }
}
