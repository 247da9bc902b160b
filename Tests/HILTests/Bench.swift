import BoardIO
import Controls
import Foundation
import XCTest

/// The hardware-in-the-loop bench as the tests see it: scripts/hil/guest sets `LOOPIX_HIL=1`
/// and describes the devices it made in `LOOPIX_HIL_*` variables. Outside the bench every test
/// skips, saying why.
enum Bench {
    static let environment = ProcessInfo.processInfo.environment

    /// Skips unless inside the bench VM and `device` exists there.
    static func require(_ device: String) throws {
        try requireBench()
        guard FileManager.default.fileExists(atPath: device) else {
            throw XCTSkip("\(device) does not exist in this VM")
        }
    }

    /// Skips unless inside the bench VM.
    static func requireBench() throws {
        guard environment["LOOPIX_HIL"] == "1" else {
            throw XCTSkip("not inside the HIL bench (LOOPIX_HIL unset): run scripts/hil/run")
        }
    }

    /// A `LOOPIX_HIL_*` value the guest sets (skips outside the bench).
    static func value(_ name: String) throws -> String {
        try requireBench()
        guard let v = environment[name], !v.isEmpty else {
            throw XCTSkip("\(name) is not set: scripts/hil/guest sets it")
        }
        return v
    }

    /// The full path of a tool on PATH; inside the bench a missing tool is a failure
    /// (scripts/setup installs them all), not a skip.
    static func tool(_ name: String) throws -> String {
        let dirs = (environment["PATH"] ?? "/usr/bin:/bin:/usr/sbin:/sbin").split(separator: ":")
            .map(String.init) + ["/usr/sbin", "/sbin"]
        for d in dirs where access("\(d)/\(name)", X_OK) == 0 {
            return "\(d)/\(name)"
        }
        XCTFail("\(name) is not installed (scripts/setup installs it)")
        throw XCTSkip("no \(name)")
    }

    struct Output { var status: Int32; var stdout: String; var stderr: String }

    /// Runs a tool to completion (killed after `timeout` seconds) and returns what it printed.
    static func run(_ name: String, _ arguments: [String], timeout: TimeInterval = 60) throws -> Output {
        let running = try Running(name, arguments)
        return running.wait(timeout: timeout)
    }

    /// A tool running in the background; its stdout and stderr are collected as it goes.
    final class Running: @unchecked Sendable {
        let process = Process()
        let input = Pipe()
        private let lock = NSLock()
        private var out = Data(), err = Data()
        private let done = DispatchGroup()

        init(_ name: String, _ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: try Bench.tool(name))
            process.arguments = arguments
            let o = Pipe(), e = Pipe()
            process.standardOutput = o
            process.standardError = e
            process.standardInput = input
            for (pipe, isOut) in [(o, true), (e, false)] {
                done.enter()
                let handle = pipe.fileHandleForReading
                Thread.detachNewThread { [self] in
                    while true {
                        let chunk = handle.availableData
                        if chunk.isEmpty { break }
                        lock.lock()
                        if isOut { out.append(chunk) } else { err.append(chunk) }
                        lock.unlock()
                    }
                    done.leave()
                }
            }
            try process.run()
        }

        var stdout: String { lock.lock(); defer { lock.unlock() }; return String(decoding: out, as: UTF8.self) }

        /// Waits until `condition` holds for the output so far, at most `timeout` seconds.
        func waitForOutput(timeout: TimeInterval, _ condition: (String) -> Bool) -> Bool {
            let end = Date(timeIntervalSinceNow: timeout)
            while Date() < end {
                if condition(stdout) { return true }
                if !process.isRunning { return condition(stdout) }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return condition(stdout)
        }

        /// Closes its standard input, waits for it to exit (terminating it after `timeout`).
        func wait(timeout: TimeInterval) -> Output {
            try? input.fileHandleForWriting.close()
            let end = Date(timeIntervalSinceNow: timeout)
            while process.isRunning && Date() < end { Thread.sleep(forTimeInterval: 0.02) }
            if process.isRunning {
                process.terminate()
                Thread.sleep(forTimeInterval: 0.5)
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            }
            process.waitUntilExit()
            _ = done.wait(timeout: .now() + 5)
            lock.lock(); defer { lock.unlock() }
            return Output(status: process.terminationStatus,
                          stdout: String(decoding: out, as: UTF8.self),
                          stderr: String(decoding: err, as: UTF8.self))
        }
    }

    /// Writes `bench.json` into `directory`: the bench as a board, its buttons and the flash
    /// being gpio-sim's lines found by name (scripts/hil/gpio-lines), on `LOOPIX_HIL_GPIO_CHIP`.
    static func writeBoardFile(in directory: String) throws {
        let chip = try value("LOOPIX_HIL_GPIO_CHIP")
        var pins: [String] = []
        for name in ControlPin.allCases.map(\.rawValue) + ["flash"] {
            pins.append("\"\(name)\": \(try GPIOChipInfo.findLine(named: name).offset)")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try """
        { "id": "bench", "name": "Loopix HIL bench", "gpioChip": ["/dev/\(chip)"], "pins": { \(pins.joined(separator: ", ")) } }
        """.write(toFile: directory + "/bench.json", atomically: true, encoding: .utf8)
    }
}
