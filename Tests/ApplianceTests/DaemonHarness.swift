import ControlProtocol
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Starts the real `loopixd` (headless, simulated camera) in a temporary directory and talks
/// to it over its control socket, as a photobooth script would.
final class DaemonHarness {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    /// Where `swift build` put the test bundle and, beside it, loopixd and loopix: `.build/debug`,
    /// or wherever `--build-path` and the target triple put them (`.build-arm64/debug` for the
    /// arm64 tests), not a fixed `.build/debug`.
    static let productsDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
    static var executable: String { productsDirectory + "/loopixd" }
    static var loopix: String { productsDirectory + "/loopix" }

    let directory: String
    var configPath: String { directory + "/loopix.json" }
    var socketPath: String { directory + "/control.sock" }
    var photos: String { directory + "/photos" }
    var state: String { directory + "/state" }
    private(set) var process: Process?
    let logPath: String

    /// `extra` is merged into the configuration (JSON object text without braces, e.g. `"capture": {...}`).
    init(stillWidth: Int = 320, stillHeight: Int = 240, extraConfig: String = "") throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw XCTSkip("\(Self.executable) is not built (swift build --build-tests builds it)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("loopixd-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        logPath = directory + "/daemon.log"
        let config = """
        { "camera": { "backend": "simulated", "simulatedStillWidth": \(stillWidth), "simulatedStillHeight": \(stillHeight) },
          "display": { "backend": "headless", "width": 480, "height": 320 },
          "storage": { "directory": "\(directory)/photos", "reserveMB": 0 },
          "state": { "directory": "\(directory)/state" },
          "socket": { "path": "\(directory)/control.sock" },
          "snapshot": { "directories": ["\(directory)"] }\(extraConfig.isEmpty ? "" : ",\n  " + extraConfig) }
        """
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// `environment` is added to the test's own (e.g. `NOTIFY_SOCKET`).
    func start(environment: [String: String] = [:]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.executable)
        p.arguments = ["--config", configPath]
        if !environment.isEmpty {
            p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        p.standardError = log
        p.standardOutput = log
        try p.run()
        process = p
        // Wait for the socket to answer.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let reply = try? request(#"{"cmd":"status"}"#), reply["ok"] as? Bool == true { return }
            guard p.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw NSError(domain: "loopixd", code: 1, userInfo: [NSLocalizedDescriptionKey: "loopixd did not come up; its log:\n" + self.log(tail: 20)])
    }

    /// `loopix ctl WORDS… --socket` this daemon's: its exit status and output.
    func ctl(_ words: [String]) throws -> (status: Int32, output: String) {
        try Self.run(Self.loopix, ["ctl"] + words + ["--socket", socketPath])
    }

    /// `loopixd --config` this harness's configuration with `arguments` (e.g. `--check-config`),
    /// run to its end: its exit status and what it wrote (standard error and output).
    func runDaemon(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try Self.run(Self.executable, ["--config", configPath] + arguments)
    }

    /// Runs a program to its end: its exit status and its output (standard output and error).
    private static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }

    func log(tail: Int = 40) -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(tail).joined(separator: "\n")
    }

    /// Sends SIGTERM and waits for the exit status.
    @discardableResult
    func stop(timeout: Double = 120) -> Int32 {
        guard let p = process else { return -1 }
        kill(p.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(timeout)
        while p.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
        process = nil
        return p.terminationStatus
    }

    deinit {
        if let p = process, p.isRunning { kill(p.processIdentifier, SIGKILL) }
    }

    /// One request line, one reply line.
    func request(_ line: String, timeout: Double = 10) throws -> [String: Any] {
        let reply = try Self.exchange(line, socketPath: socketPath, timeout: timeout)
        guard let object = try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any] else {
            throw NSError(domain: "loopix", code: 1, userInfo: [NSLocalizedDescriptionKey: "not a JSON object: \(reply)"])
        }
        return object
    }

    /// Polls `status` until `condition` holds (or the time is up); returns the last status.
    @discardableResult
    func waitForStatus(timeout: Double = 60, _ condition: ([String: Any]) -> Bool) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        var last: [String: Any] = [:]
        while Date() < deadline {
            last = try request(#"{"cmd":"status"}"#)
            if condition(last) { return last }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return last
    }

    static func exchange(_ line: String, socketPath: String, timeout: Double) throws -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in socketPath.utf8.prefix(raw.count - 1).enumerated() { raw[i] = b }
        }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard ok == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !reply.contains(10) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw POSIXError(.ETIMEDOUT) }
            reply += buffer[0..<n]
        }
        return String(decoding: reply.prefix(while: { $0 != 10 }), as: UTF8.self)
    }
}
