import ControlProtocol
import FilmCore
import Foundation
import ImageFiles
import XCTest
@testable import LoopixTool
#if canImport(Glibc)
import Glibc
#endif

/// A Pi Zero 2 W has 512 MB for everything: the real `loopix develop` of a 12 MP photo to
/// HEIC, and the real `loopixd` taking three 12 MP photos in a row, each under a 300 MB memory
/// limit (a cgroup, swap included; RLIMIT_DATA where no cgroup can be made), succeed. Each test
/// first shows that the same kind of limit does stop a program that takes 400 MB, so that a
/// limit that is not enforced cannot pass for one that is met.
final class MemoryLimitTests: XCTestCase {
    static let limit = 300 << 20
    static let width = 4056, height = 3040

    func testDevelopOf12MPToHEICFitsIn300MB() throws {
        let loopix = try builtLoopix()
        try assertLimitIsEnforced()
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = dir + "/still.jpg", output = dir + "/still.heic"
        try write12MPStill(input)

        let memory = try MemoryLimit.make(limitBytes: Self.limit)
        defer { memory.remove() }
        let (sh, words) = memory.wrap(loopix, ["develop", input, "-o", output, "-p", "portra", "--force", "--presets-dir", dir])
        let stderrPath = dir + "/stderr"
        // Started from a small loopix in between: a child's peak from wait4 would otherwise
        // start from this test process's resident memory.
        let run = try Subprocess.runAlone(me: loopix, sh, words, work: dir, stderrPath: stderrPath)
        let stderr = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        print("develop 12 MP → HEIC under the limit: exit \(run.status) in \(String(format: "%.1f", run.seconds)) s, "
              + "peak RSS \(run.peakRSS >> 20) MB; \(memory.summary)")
        XCTAssertEqual(run.status, 0, "loopix develop under \(Self.limit >> 20) MB: \(stderr)")
        if let kills = memory.oomKills { XCTAssertEqual(kills, 0, memory.summary) }
        // The cgroup is not charged for file pages another cgroup brought in first (the
        // binary, its libraries); the resident set counts them.
        XCTAssertLessThan(run.peakRSS, Self.limit, "loopix develop's peak resident set")
        if let left = memory.processes { XCTAssertEqual(left, [], "nothing left in the cgroup") }
        let developed = try ImageReader.read(path: output)
        XCTAssertEqual([developed.width, developed.height], [Self.width, Self.height])
    }

    func testDaemonTakesThree12MPPhotosInARowIn300MB() throws {
        let loopixd = (Fixtures.loopix as NSString).deletingLastPathComponent + "/loopixd"
        guard FileManager.default.isExecutableFile(atPath: loopixd) else {
            throw XCTSkip("\(loopixd) is not built (swift build --build-tests builds it)")
        }
        try assertLimitIsEnforced()
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socket = dir + "/control.sock"
        try """
        { "board": "none", "camera": { "backend": "simulated", "simulatedStillWidth": \(Self.width), "simulatedStillHeight": \(Self.height) },
          "display": { "backend": "headless", "width": 800, "height": 480 },
          "storage": { "directory": "\(dir)/photos", "reserveMB": 0 }, "state": { "directory": "\(dir)/state" },
          "socket": { "path": "\(socket)" } }
        """.write(toFile: dir + "/loopix.json", atomically: true, encoding: .utf8)

        let memory = try MemoryLimit.make(limitBytes: Self.limit)
        defer { memory.remove() }
        let (sh, words) = memory.wrap(loopixd, ["--config", dir + "/loopix.json"])
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: sh)
        daemon.arguments = words
        let logPath = dir + "/daemon.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        daemon.standardOutput = log
        daemon.standardError = log
        let started = Date()
        try daemon.run()
        defer {
            if daemon.isRunning {
                kill(daemon.processIdentifier, SIGKILL)
                daemon.waitUntilExit()
            }
        }
        func tail() -> String {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            return "\(memory.summary)\nloopixd's log:\n" + text.split(separator: "\n").suffix(20).joined(separator: "\n")
        }
        func status() -> [String: Any]? {
            guard let line = try? ControlClient.send(line: #"{"cmd":"status"}"#, socketPath: socket, timeout: 5) else { return nil }
            return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }

        var up = status()
        while up?["camera"] as? String != "ok" {
            guard daemon.isRunning, Date().timeIntervalSince(started) < 60 else {
                return XCTFail("loopixd did not come up on the simulated camera under the limit (last status \(String(describing: up)))\n\(tail())")
            }
            usleep(100_000)
            up = status()
        }
        var paths: [String] = []
        for n in 1...3 {
            let reply = try ControlClient.send(line: #"{"cmd":"capture"}"#, socketPath: socket, timeout: 10)
            let object = (try? JSONSerialization.jsonObject(with: Data(reply.utf8))) as? [String: Any]
            guard object?["ok"] as? Bool == true, let path = object?["path"] as? String else {
                return XCTFail("capture \(n) refused: \(reply)\n\(tail())")
            }
            paths.append(path)
            let pressed = Date()
            var last = status()
            while last?["saved"] as? Int != n {
                guard daemon.isRunning, Date().timeIntervalSince(pressed) < 300 else {
                    return XCTFail("photo \(n) not saved (running: \(daemon.isRunning), last status \(String(describing: last)))\n\(tail())")
                }
                usleep(100_000)
                last = status()
            }
            print("photo \(n) saved \(String(format: "%.1f", Date().timeIntervalSince(pressed))) s after the press")
        }
        XCTAssertTrue(daemon.isRunning, tail())
        let final = try XCTUnwrap(status(), "no status after three photos\n\(tail())")
        XCTAssertEqual(final["saved"] as? Int, 3)
        XCTAssertEqual(final["camera"] as? String, "ok")
        // The daemon's own peak resident memory, before it goes.
        // The cgroup is not charged for file pages (the binary, its libraries) that another
        // cgroup brought into the page cache first; the resident set counts them.
        let hwm = StillBench.residentBytes(daemon.processIdentifier, "VmHWM")
        XCTAssertGreaterThan(hwm, 0, "loopixd's VmHWM in /proc/\(daemon.processIdentifier)/status")
        XCTAssertLessThan(hwm, Self.limit, "loopixd's peak resident set")

        kill(daemon.processIdentifier, SIGTERM)
        let stopping = Date()
        while daemon.isRunning && Date().timeIntervalSince(stopping) < 60 { usleep(50_000) }
        XCTAssertFalse(daemon.isRunning, "loopixd still running 60 s after SIGTERM")
        if !daemon.isRunning {
            XCTAssertEqual(daemon.terminationReason, .exit, "loopixd was killed by signal \(daemon.terminationStatus)\n\(tail())")
            XCTAssertEqual(daemon.terminationStatus, 0, tail())
        }
        print("loopixd, three 12 MP photos under the limit: \(String(format: "%.1f", Date().timeIntervalSince(started))) s, "
              + "peak RSS (VmHWM) \(hwm >> 20) MB; \(memory.summary)")
        if let kills = memory.oomKills { XCTAssertEqual(kills, 0, tail()) }

        XCTAssertEqual(Set(paths).count, 3, "\(paths)")
        for path in paths {
            XCTAssertTrue(FileManager.default.fileExists(atPath: path), "\(path) not written")
        }
        let photo = try ImageReader.read(path: try XCTUnwrap(paths.last))
        XCTAssertEqual([photo.width, photo.height], [Self.width, Self.height])
    }

    // MARK: - Helpers

    func builtLoopix() throws -> String {
        guard FileManager.default.isExecutableFile(atPath: Fixtures.loopix) else {
            throw XCTSkip("\(Fixtures.loopix) not built (run swift build first)")
        }
        return Fixtures.loopix
    }

    /// Under a limit like the one the work runs under, `dd` with a 400 MB buffer (filled from
    /// /dev/zero, so every page is touched) is stopped — OOM-killed in a cgroup, refused its
    /// buffer under RLIMIT_DATA — and the same `dd` with 100 MB is not, so the wrapper itself works.
    func assertLimitIsEnforced(file: StaticString = #filePath, line: UInt = #line) throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (megabytes, stopped) in [(400, true), (100, false)] {
            let memory = try MemoryLimit.make(limitBytes: Self.limit)
            defer { memory.remove() }
            let (sh, words) = memory.wrap("/bin/dd", ["if=/dev/zero", "of=/dev/null", "bs=\(megabytes)M", "count=1", "iflag=fullblock"])
            let stderrPath = dir + "/dd-\(megabytes).txt"
            let run = try Subprocess.run(sh, words, stderrPath: stderrPath)
            let stderr = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
            if stopped && memory.kind == .dataRlimit {
                XCTAssertEqual(run.status, 1, "dd asking for \(megabytes) MB under \(Self.limit >> 20) MB should be refused its buffer, "
                               + "exited \(run.status): the limit is not enforced. \(memory.summary)", file: file, line: line)
                XCTAssertTrue(stderr.contains("memory exhausted"), "dd's error: \(stderr)", file: file, line: line)
            } else if stopped {
                XCTAssertEqual(run.status, 128 + SIGKILL, "dd touching \(megabytes) MB under \(Self.limit >> 20) MB should be OOM-killed, "
                               + "exited \(run.status): the limit is not enforced. \(memory.summary)", file: file, line: line)
                if let kills = memory.oomKills { XCTAssertEqual(kills, 1, memory.summary, file: file, line: line) }
            } else {
                XCTAssertEqual(run.status, 0, "dd touching \(megabytes) MB under \(Self.limit >> 20) MB. \(memory.summary)", file: file, line: line)
            }
        }
    }

    /// The sample photos tiled to 4056×3040 (a 12 MP Camera Module 3 still), as a JPEG.
    func write12MPStill(_ path: String) throws {
        _ = try Fixtures.sample("astronaut.png")
        let (photos, _) = BenchCommand.loadPhotos(Fixtures.samples)
        let still = BenchCommand.tile(photos, width: Self.width, height: Self.height)
        try ImageWriter.write(still, to: path, format: .jpeg, replace: true)
    }
}
