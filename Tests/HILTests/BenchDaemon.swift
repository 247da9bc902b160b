import Foundation
import XCTest

/// The host-built `loopixd` run inside the bench VM on a configuration of the test's, in a
/// temporary directory of its own (photos, state, control socket); `ctl` talks to it through
/// `loopix ctl`. Terminated (SIGTERM, then waited for) on deinit.
final class BenchDaemon {
    let directory: String
    let process = Process()
    private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// `sections`: the JSON members besides storage, state and socket (which point into the
    /// temporary directory), e.g. `"camera": {…}, "display": {…}`.
    init(name: String, sections: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("loopixd-\(name)-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let config = """
        { \(sections),
          "storage": { "directory": "\(directory)/photos", "reserveMB": 0 }, "state": { "directory": "\(directory)/state" },
          "socket": { "path": "\(directory)/control.sock" } }
        """
        try config.write(toFile: directory + "/loopix.json", atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: root + "/.build/debug/loopixd")
        process.arguments = ["--config", directory + "/loopix.json"]
        try process.run()
    }

    deinit {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// `loopix ctl WORDS…`: its exit status and output.
    func ctl(_ words: [String]) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: root + "/.build/debug/loopix")
        p.arguments = ["ctl"] + words + ["--socket", directory + "/control.sock"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }

    /// `loopix ctl status`: its output, and its fields when that is a JSON object (nil when the
    /// daemon answered with none: busy, or gone).
    func status() throws -> (output: String, fields: [String: Any]?) {
        let output = try ctl(["status"]).output
        return (output, try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    /// What the daemon is doing, for a test's failure message: whether it still runs (or how it
    /// ended) and, while it runs, every thread's stack from gdb (which the bench VM sees on the
    /// host's filesystem), so that a daemon that stopped answering says where it stands.
    func diagnosis() -> String {
        guard process.isRunning else {
            return "loopixd ended: \(process.terminationReason == .uncaughtSignal ? "signal" : "exit status") \(process.terminationStatus)"
        }
        let gdb = Process()
        gdb.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        gdb.arguments = ["-k", "5", "30", "gdb", "-p", "\(process.processIdentifier)", "-batch", "-nx", "-ex", "thread apply all bt 16"]
        let out = Pipe()
        gdb.standardOutput = out
        gdb.standardError = out
        guard (try? gdb.run()) != nil else { return "loopixd runs (/usr/bin/timeout could not start gdb)" }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        gdb.waitUntilExit()
        let lines = text.split(separator: "\n")
        let stacks = lines.filter { $0.hasPrefix("Thread ") || $0.hasPrefix("#") }
        guard !stacks.isEmpty else {
            return "loopixd runs; gdb showed no threads (exit status \(gdb.terminationStatus)): " + lines.suffix(3).joined(separator: " / ")
        }
        return "loopixd runs; its threads:\n" + stacks.joined(separator: "\n")
    }

    /// Polls `loopix ctl status` until its output satisfies `condition` (or `seconds` pass, or
    /// the daemon exits); returns the last output.
    func waitForStatus(seconds: TimeInterval, _ condition: (String) -> Bool) throws -> String {
        var last = ""
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline {
            let status = try ctl(["status"])
            last = status.output
            if status.status == 0 && condition(last) { return last }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return last
    }
}
