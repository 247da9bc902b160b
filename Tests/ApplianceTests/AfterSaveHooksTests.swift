import Foundation
import System
import XCTest
@testable import Appliance

/// The after-save command, run for real (bash scripts the tests write): the path arrives as one
/// argument whatever it holds, a hook that hangs is stopped at its time limit, a failing one is
/// counted and logged, too many waiting are skipped, and none of it blocks the caller.
final class AfterSaveHooksTests: XCTestCase {
    private func script(_ dir: String, _ name: String, _ body: String) throws -> String {
        let path = dir + "/" + name
        try "#!/bin/bash\n\(body)\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    private func waitFor(_ hooks: AfterSaveHooks, seconds: Double = 20, _ done: (AfterSaveHooks.Counts) -> Bool) -> AfterSaveHooks.Counts {
        let deadline = Date().addingTimeInterval(seconds)
        while !done(hooks.counts) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return hooks.counts
    }

    func testTheFileNameIsOneArgumentAndCannotInjectAnything() throws {
        let dir = try makeTempDirectory(self)
        // Writes each argument on a line of its own (NUL-separated, so newlines in a name show).
        let record = try script(dir, "record", #"printf '%s\0' "$@" > "$OUT.args"; printf '%s' "$LOOPIX_PATH" > "$OUT.env""#)
        setenv("OUT", dir + "/seen", 1)
        defer { unsetenv("OUT") }
        let hostile = dir + "/a b; touch \(dir)/INJECTED $(touch \(dir)/INJECTED2) `id`\n'\"*.HEIC"
        var settings = AfterSaveSettings(command: [record, "--to", AfterSaveSettings.placeholder, "remote:photos"])
        settings.timeoutSeconds = 10
        let hooks = try AfterSaveHooks(settings: settings)
        defer { hooks.stop() }
        hooks.saved(hostile)
        XCTAssertEqual(waitFor(hooks) { $0.succeeded == 1 }.succeeded, 1)
        let args = try String(contentsOfFile: dir + "/seen.args", encoding: .utf8).split(separator: "\0", omittingEmptySubsequences: false)
        XCTAssertEqual(args.dropLast().map(String.init), ["--to", hostile, "remote:photos"], "the path is one argument, in place of {path}")
        XCTAssertEqual(try String(contentsOfFile: dir + "/seen.env", encoding: .utf8), hostile, "and LOOPIX_PATH")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/INJECTED"), "no shell ran the name")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/INJECTED2"))
        XCTAssertEqual(AfterSaveSettings(command: ["/bin/echo"]).arguments(for: "/p/x.HEIC"), ["/bin/echo", "/p/x.HEIC"], "without {path}, the path comes last")
    }

    func testAHookThatHangsIsStoppedAtItsLimitAndAFailingOneIsCounted() throws {
        let dir = try makeTempDirectory(self)
        // Ignores SIGTERM and starts a child: the whole group is killed after the grace.
        let hang = try script(dir, "hang", "case \"$1\" in *fail*) exit 3;; esac; trap '' TERM; sleep 600 & sleep 600")
        var settings = AfterSaveSettings(command: [hang])
        settings.timeoutSeconds = 1
        settings.running = 2
        let hooks = try AfterSaveHooks(settings: settings)
        defer { hooks.stop() }
        let started = Date()
        hooks.saved(dir + "/LPX_0001.HEIC")
        hooks.saved(dir + "/fail.HEIC")
        let counts = waitFor(hooks, seconds: 30) { $0.failed == 2 }
        let took = Date().timeIntervalSince(started)
        XCTAssertEqual(counts.failed, 2, "\(counts)")
        XCTAssertEqual(counts.running, 0)
        XCTAssertGreaterThan(took, 1, "the hang ran until its limit")
        XCTAssertLessThan(took, 15, "and was killed with its children (SIGTERM ignored, SIGKILL 5 s later)")
        let pgrep = Process()
        pgrep.executableURL = URL(fileURLWithPath: "/usr/bin/pgrep")
        pgrep.arguments = ["-f", "sleep 600"]
        pgrep.standardOutput = FileHandle.nullDevice
        try pgrep.run()
        pgrep.waitUntilExit()
        XCTAssertEqual(pgrep.terminationStatus, 1, "no sleep of the hook's group is left")
    }

    func testSavedNeverBlocksAndTooManyWaitingAreSkipped() throws {
        let dir = try makeTempDirectory(self)
        let slow = try script(dir, "slow", "sleep 2")
        var settings = AfterSaveSettings(command: [slow])
        settings.running = 1
        settings.waiting = 2
        let hooks = try AfterSaveHooks(settings: settings)
        defer { hooks.stop() }
        hooks.saved(dir + "/LPX_0001.HEIC")
        XCTAssertEqual(waitFor(hooks) { $0.running == 1 }.running, 1)
        for i in 2...6 { hooks.saved(dir + "/LPX_000\(i).HEIC") }
        // saved() returned five times while the one slot was still taken: it queues or skips,
        // it never waits for a hook to finish.
        let meanwhile = hooks.counts
        XCTAssertEqual(meanwhile.running, 1, "\(meanwhile)")
        XCTAssertEqual(meanwhile.succeeded, 0, "the first hook still runs: \(meanwhile)")
        XCTAssertEqual(meanwhile.waiting, 2, "\(meanwhile)")
        XCTAssertEqual(meanwhile.skipped, 3, "\(meanwhile)")
        let counts = waitFor(hooks, seconds: 30) { $0.succeeded + $0.skipped == 6 && $0.running == 0 }
        XCTAssertEqual(counts.skipped, 3, "one running, two waiting, three skipped: \(counts)")
        XCTAssertEqual(counts.succeeded, 3, "\(counts)")
        XCTAssertEqual(counts.failed, 0)
    }

    func testStoppingTwiceStopsAndWarnsOnce() throws {
        let dir = try makeTempDirectory(self)
        let slow = try script(dir, "slow", "sleep 30")
        let hooks = try AfterSaveHooks(settings: AfterSaveSettings(command: [slow]))
        hooks.saved(dir + "/LPX_0001.HEIC")
        XCTAssertEqual(waitFor(hooks) { $0.running == 1 }.running, 1)
        let lines = Locked<[String]>([])
        let old = Log.setSink { _, message in
            if message.hasPrefix("after-save hooks:") { lines.withLock { $0.append(message) } }
        }
        defer { Log.setSink(old) }
        hooks.stop()
        hooks.stop()
        XCTAssertEqual(lines.withLock { $0 }, ["after-save hooks: 1 stopped, 0 not run (the daemon is stopping)"])
    }

    func testAProgramThatCannotStartIsOneFailure() throws {
        let hooks = try AfterSaveHooks(settings: AfterSaveSettings(command: ["/nonexistent/rclone", "copy"]))
        defer { hooks.stop() }
        hooks.saved("/p/LPX_0001.HEIC")
        XCTAssertEqual(waitFor(hooks) { $0.failed == 1 }.failed, 1)
    }

    /// A hook that escapes its process group and session (`setsid`, a double fork) is still
    /// ended by its time limit, whole; and the daemon stopping ends a running hook whole too.
    func testAHookThatCallsSetsidCannotOutliveItsLimitOrTheDaemon() throws {
        let dir = try makeTempDirectory(self)
        // Starts a new session in the background (writing its pid), then waits on it.
        let escape = try script(dir, "escape", """
            setsid bash -c 'echo $$ > "$0"; exec sleep 600' "$1.pid" &
            ( setsid bash -c 'echo $$ > "$0"; exec sleep 600' "$1.pid2" & )
            wait
            """)
        var settings = AfterSaveSettings(command: [escape])
        settings.timeoutSeconds = 1
        let hooks = try AfterSaveHooks(settings: settings)
        defer { hooks.stop() }
        hooks.saved(dir + "/LPX_0001")
        let pids = try [dir + "/LPX_0001.pid", dir + "/LPX_0001.pid2"].map { try waitForPID(in: $0) }
        for pid in pids { XCTAssertEqual(kill(pid, 0), 0, "the escaped process runs") }
        let counts = waitFor(hooks, seconds: 20) { $0.failed == 1 }
        XCTAssertEqual(counts.failed, 1, "stopped at its limit: \(counts)")
        for pid in pids { XCTAssertTrue(isGone(pid), "pid \(pid) outlived the hook's limit") }

        // A hook running when the daemon stops is ended, whole, though nobody waits for it.
        var patient = AfterSaveSettings(command: [escape])
        patient.timeoutSeconds = 600
        let running = try AfterSaveHooks(settings: patient)
        running.saved(dir + "/LPX_0002")
        let more = try [dir + "/LPX_0002.pid", dir + "/LPX_0002.pid2"].map { try waitForPID(in: $0) }
        running.stop()
        for pid in more { XCTAssertTrue(isGone(pid), "pid \(pid) outlived the daemon's hooks") }
    }

    /// The pid a script wrote to `path`, once it is there.
    private func waitForPID(in path: String) throws -> pid_t {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), text.hasSuffix("\n"),
               let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) { return pid }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw XCTSkip("no pid in \(path) after 10 s")
    }

    /// True once `pid` is no more (or a zombie, which only its parent's wait removes), within 10 s.
    private func isGone(_ pid: pid_t) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if kill(pid, 0) != 0 { return true }
            if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
               let close = stat.lastIndex(of: ")"), stat[stat.index(close, offsetBy: 2)] == "Z" { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }
}
