import ControlProtocol
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The daemon as a hostile but fair client finds it: no client stalls the socket for the others,
/// snapshots only ever create new files where allowed, a nearly full disk refuses a photo it
/// cannot keep, a reload says what it applied, a second daemon touches nothing.
final class DaemonRobustnessTests: XCTestCase {
    /// A raw connection that sends and never reads.
    private func connect(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { throw SystemErrorForTest("connect \(path): errno \(errno)") }
        return fd
    }

    private func ctl(_ d: DaemonHarness, _ request: ControlRequest, timeout: Double = 90) throws -> (reply: String, seconds: Double) {
        let t0 = Date()
        let reply = try ControlClient.send(request, socketPath: d.socketPath, timeout: timeout)
        return (reply, Date().timeIntervalSince(t0))
    }

    /// 963 requests from one client that never reads its replies: another client's `status` is
    /// answered at once (it took 32 s when each request waited for a frame), and the flooder
    /// is dropped once its unread replies pass the limit.
    func testAFloodingClientThatNeverReadsStallsNobody() throws {
        let d = try DaemonHarness()
        try d.start()
        defer { d.stop() }
        let flooder = try connect(d.socketPath)
        defer { close(flooder) }
        let flood = Array(String(repeating: "{\"cmd\":\"status\"}\n", count: 963).utf8)
        let sender = Thread {
            var sent = 0
            while sent < flood.count {
                let n = flood.withUnsafeBytes { send(flooder, $0.baseAddress! + sent, flood.count - sent, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { break }
                sent += n
            }
        }
        sender.start()
        Thread.sleep(forTimeInterval: 0.5)
        for _ in 0..<5 {
            let (reply, seconds) = try ctl(d, .status)
            XCTAssertTrue(reply.hasPrefix("{\"ok\":true"), reply)
            XCTAssertLessThan(seconds, 2, "status waited \(seconds) s behind the flooding client")
        }
        // The flooder never reads: its replies pile up until it is dropped.
        var dropped = false
        let deadline = Date().addingTimeInterval(30)
        while !dropped && Date() < deadline {
            if d.log().contains("dropped a client that does not read its replies") { dropped = true }
            Thread.sleep(forTimeInterval: 0.2)
        }
        XCTAssertTrue(dropped, d.log())
        XCTAssertTrue(try ctl(d, .status).reply.hasPrefix("{\"ok\":true"))
    }

    /// Sixteen idle connections take every slot; a seventeenth client pushes out the one idle
    /// the longest (after 5 s) instead of being locked out, and `loopix ctl` reads the server's
    /// own line when it is refused rather than reporting a broken pipe.
    func testIdleConnectionsDoNotLockOthersOut() throws {
        let d = try DaemonHarness()
        try d.start()
        defer { d.stop() }
        var idle: [Int32] = []
        defer { idle.forEach { close($0) } }
        for _ in 0..<16 { idle.append(try connect(d.socketPath)) }
        // At once, every slot is busy with a connection that has been idle for less than 5 s:
        // refused, and the client gets the server's own line (not "Broken pipe").
        let (refused, _) = try ctl(d, .status, timeout: 5)
        XCTAssertEqual(refused, #"{"ok":false,"error":"too many connections (at most 16); try again later"}"#)
        Thread.sleep(forTimeInterval: 5.5)
        let (reply, seconds) = try ctl(d, .status, timeout: 10)
        XCTAssertTrue(reply.hasPrefix("{\"ok\":true"), reply)
        XCTAssertLessThan(seconds, 2)
    }

    /// A snapshot never replaces a file — not a photo, not the settings — never writes through
    /// a symbolic link, and only lands in a directory the configuration allows.
    func testSnapshotsOnlyCreateNewFilesWhereAllowed() throws {
        let d = try DaemonHarness()
        try d.start()
        defer { d.stop() }
        let photo = try XCTUnwrap(try d.request(#"{"cmd":"capture"}"#)["path"] as? String)
        _ = try d.waitForStatus { $0["queue"] as? Int == 0 }
        let photoBytes = try Data(contentsOf: URL(fileURLWithPath: photo))
        func snapshot(_ path: String) throws -> [String: Any] {
            try d.request("{\"cmd\":\"snapshot\",\"path\":\(JSONString(path))}")
        }
        // Outside the allowed directory: /etc, /dev.
        for target in ["/etc/cron.d/loopix-test", "/dev/full"] {
            let reply = try snapshot(target)
            XCTAssertEqual(reply["ok"] as? Bool, false, target)
            XCTAssertTrue((reply["error"] as? String ?? "").contains("snapshots may only be written to \(d.directory)"), "\(reply)")
        }
        // Where the photos and the state are kept, never — even inside an allowed directory
        // (the harness allows its whole directory, photos and state included).
        for target in [photo, d.photos + "/DCIM/100LOOPX/LPX_0002.HEIC", d.state + "/settings.json", d.state + "/counter.png"] {
            let reply = try snapshot(target)
            XCTAssertEqual(reply["ok"] as? Bool, false, target)
            XCTAssertTrue((reply["error"] as? String ?? "").hasSuffix("snapshots never go where the photos or the daemon's state are kept"), "\(reply)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: d.state + "/settings.json"))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: photo)), photoBytes, "the photo is untouched")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/etc/cron.d/loopix-test"))
        // Inside it: a new file is fine, the same name again is refused.
        let fresh = d.directory + "/snap.png"
        XCTAssertEqual(try snapshot(fresh)["ok"] as? Bool, true)
        let again = try snapshot(fresh)
        XCTAssertEqual(again["ok"] as? Bool, false)
        XCTAssertTrue((again["error"] as? String ?? "").contains("a snapshot never replaces a file"), "\(again)")
        // A symbolic link at the name (to a file elsewhere) is never followed.
        let victim = d.directory + "/victim.txt"
        try "keep me".write(toFile: victim, atomically: true, encoding: .utf8)
        let link = d.directory + "/link.png"
        XCTAssertEqual(symlink(victim, link), 0)
        XCTAssertEqual(try snapshot(link)["ok"] as? Bool, false)
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "keep me")
        // A directory inside the allowed one is fine; a symbolic link out of it is not.
        try FileManager.default.createDirectory(atPath: d.directory + "/sub", withIntermediateDirectories: true)
        XCTAssertEqual(try snapshot(d.directory + "/sub/x.png")["ok"] as? Bool, true)
        let escape = d.directory + "/escape"
        XCTAssertEqual(symlink("/etc", escape), 0)
        XCTAssertEqual(try snapshot(escape + "/loopix-x.png")["ok"] as? Bool, false)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/etc/loopix-x.png"))
    }

    /// Free space above the reserve but below one photo: the capture is refused ("Storage
    /// full") instead of answered ok and then lost; a temporary file left by a save that a
    /// power cut interrupted is removed at start.
    func testANearlyFullDiskRefusesAPhotoItCannotKeepAndLeftoversAreCleaned() throws {
        let d = try DaemonHarness(stillWidth: 1600, stillHeight: 1200)
        try FileManager.default.createDirectory(atPath: d.photos, withIntermediateDirectories: true)
        guard mount("tmpfs", d.photos, "tmpfs", 0, "size=2m") == 0 else {
            throw XCTSkip("cannot mount a small tmpfs here (\(String(cString: strerror(errno))))")
        }
        defer { umount2(d.photos, Int32(MNT_DETACH)) }
        let folder = d.photos + "/DCIM/100LOOPX"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let leftover = folder + "/.LPX_0015.HEIC.3k2j1h.tmp"
        _ = FileManager.default.createFile(atPath: leftover, contents: Data(count: 700_000))
        try d.start()
        defer { d.stop() }
        XCTAssertFalse(FileManager.default.fileExists(atPath: leftover), "the leftover temporary file is removed at start")
        XCTAssertTrue(d.log().contains("removed 1 temporary file left by a save that was cut short"), d.log())
        // 2 MB free, a 1600×1200 photo is expected to take about 2.4 MB: refused, not lost.
        let reply = try d.request(#"{"cmd":"capture"}"#)
        XCTAssertEqual(reply["ok"] as? Bool, false, "\(reply)")
        XCTAssertEqual(reply["error"] as? String, "Storage full")
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertFalse(d.log().contains("photo lost"), d.log())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), [])
    }

    /// A burst of refused shutter presses is a few log lines, not one per press.
    func testRefusalsAreThrottledInTheLog() throws {
        let d = try DaemonHarness(stillWidth: 1600, stillHeight: 1200, extraConfig: #""capture": { "queueLength": 1 }"#)
        try d.start()
        defer { d.stop() }
        var refused = 0
        for _ in 0..<60 where (try d.request(#"{"cmd":"capture"}"#))["ok"] as? Bool == false { refused += 1 }
        XCTAssertGreaterThan(refused, 30)
        let lines = d.log(tail: 10_000).split(separator: "\n").filter { $0.contains("shutter refused") }
        XCTAssertLessThanOrEqual(lines.count, 3, lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains { $0.contains("more like it") } || lines.count == 1, lines.joined(separator: "\n"))
    }

    /// SIGHUP applies what can change while running and names what needs a restart.
    func testReloadSaysWhatItAppliedAndWhatNeedsARestart() throws {
        let d = try DaemonHarness()
        try d.start()
        defer { d.stop() }
        var config = try String(contentsOfFile: d.configPath, encoding: .utf8)
        config = config.replacingOccurrences(of: #""reserveMB": 0"#, with: #""reserveMB": 7"#)
            .replacingOccurrences(of: #""width": 480"#, with: #""width": 640"#)
        try config.write(toFile: d.configPath, atomically: true, encoding: .utf8)
        kill(d.process!.processIdentifier, SIGHUP)
        let deadline = Date().addingTimeInterval(10)
        while !d.log().contains("reloaded") && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        let line = d.log().split(separator: "\n").first { $0.contains("reloaded") }.map(String.init) ?? d.log()
        XCTAssertTrue(line.hasSuffix("applied storage.reserveMB; needs a restart to take effect: display.width"), line)
        // A broken file keeps the running configuration, with the reason and where.
        try "{\n  \"storage\": {\"reserveMB\": 5},\n}".write(toFile: d.configPath, atomically: true, encoding: .utf8)
        kill(d.process!.processIdentifier, SIGHUP)
        Thread.sleep(forTimeInterval: 1)
        XCTAssertTrue(d.log().contains("line 3, column 1: trailing comma before '}'; keeping the previous configuration"), d.log())
        XCTAssertEqual(try d.request(#"{"cmd":"status"}"#)["ok"] as? Bool, true)
    }

    /// A second daemon on the same state directory stops with one line and touches nothing:
    /// not the first one's settings, not its socket.
    func testASecondDaemonTouchesNothing() throws {
        let d = try DaemonHarness()
        try d.start()
        defer { d.stop() }
        XCTAssertEqual(try d.request(#"{"cmd":"preset","name":"hp5"}"#)["ok"] as? Bool, true)
        Thread.sleep(forTimeInterval: 0.5)
        let settings = try Data(contentsOf: URL(fileURLWithPath: d.state + "/settings.json"))
        let second = Process()
        second.executableURL = URL(fileURLWithPath: DaemonHarness.executable)
        second.arguments = ["--config", d.configPath]
        let err = Pipe()
        second.standardError = err
        try second.run()
        second.waitUntilExit()
        let output = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(second.terminationStatus, 1)
        XCTAssertTrue(output.contains("another loopixd is running with state directory \(d.state)"), output)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: d.state + "/settings.json")), settings)
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: d.state).contains { $0.contains(".bad-") })
        XCTAssertEqual(try d.request(#"{"cmd":"status"}"#)["preset"] as? String, "hp5", "the first one carries on")
    }

    /// `--check-config` checks what the daemon would trip over at start: a socket group that
    /// does not exist.
    func testCheckConfigFindsAMissingSocketGroup() throws {
        let d = try DaemonHarness(extraConfig: #""license": { "file": "license.json" }"#)
        var config = try String(contentsOfFile: d.configPath, encoding: .utf8)
        config = config.replacingOccurrences(of: #""path": ""#, with: #""group": "no-such-group-loopix", "path": ""#)
        try config.write(toFile: d.configPath, atomically: true, encoding: .utf8)
        let (status, output) = try d.runDaemon(["--check-config"])
        XCTAssertEqual(status, 1, output)
        XCTAssertEqual(output, "<3>\(d.configPath): socket.group: there is no group \"no-such-group-loopix\" on this machine (create it, or leave socket.group out)\n")
    }

    /// What the daemon would trip over, `--check-config` names by its key: a default look that
    /// does not exist, a photo or state directory that is a file. The daemon itself stops on the
    /// look and the state directory with the same line, and runs with a storage directory that
    /// is a file, refusing each photo with one clear line.
    func testCheckConfigAndTheDaemonNameLooksAndDirectoriesThatCannotBe() throws {
        let look = try DaemonHarness(extraConfig: #""defaults": { "preset": "no-such-look" }"#)
        let problem = "\(look.configPath): defaults.preset: there is no look \"no-such-look\" (built in, or a preset in /etc/loopix/presets)"
        XCTAssertEqual(try look.runDaemon(["--check-config"]).output, "<3>\(problem)\n")
        let started = try look.runDaemon(["--simulate", "--headless"])
        XCTAssertEqual(started.status, 2)
        XCTAssertTrue(started.output.contains("<3>\(problem)\n"), started.output)

        let files = try DaemonHarness()
        FileManager.default.createFile(atPath: files.photos, contents: Data("x".utf8))
        FileManager.default.createFile(atPath: files.state, contents: Data("x".utf8))
        let check = try files.runDaemon(["--check-config"])
        XCTAssertEqual(check.status, 1)
        XCTAssertEqual(check.output, "<3>\(files.configPath): storage.directory: \(files.photos) is a file, not a directory\n"
                       + "<3>\(files.configPath): state.directory: \(files.state) is a file, not a directory\n")
        let noState = try files.runDaemon(["--simulate", "--headless"])
        XCTAssertEqual(noState.status, 1)
        XCTAssertTrue(noState.output.contains("\(files.state) is a file, not a directory"), noState.output)
        XCTAssertFalse(noState.output.contains("Permission denied"), noState.output)

        try FileManager.default.removeItem(atPath: files.state)
        try files.start()
        defer { files.stop() }
        let reply = try files.request(#"{"cmd":"capture"}"#)
        XCTAssertEqual(reply["ok"] as? Bool, false)
        XCTAssertEqual(reply["error"] as? String, "Storage unavailable")
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertTrue(files.log().contains("shutter refused: storage unavailable (\(files.photos)/DCIM/100LOOPX: cannot create the directory: "
                                           + "\(files.photos) is a file, not a directory)"), files.log())
        XCTAssertFalse(files.log().contains("NSCocoaErrorDomain"), files.log())
        XCTAssertTrue(files.log().contains("storage.directory: \(files.photos) is a file, not a directory; no photo can be saved until it is one"), files.log())
    }

    /// A directory where settings.json should be: one clear line, not an error on every change.
    func testASettingsPathThatIsADirectoryIsReportedOnce() throws {
        let d = try DaemonHarness()
        try FileManager.default.createDirectory(atPath: d.state + "/settings.json", withIntermediateDirectories: true)
        try d.start()
        defer { d.stop() }
        for value in [10, 20, 30, 40] {
            XCTAssertEqual(try d.request("{\"cmd\":\"intensity\",\"value\":\(value)}")["ok"] as? Bool, true)
        }
        Thread.sleep(forTimeInterval: 0.5)
        let lines = d.log().split(separator: "\n").filter { $0.contains("settings.json") }
        XCTAssertTrue(lines.first?.contains("cannot be read (Is a directory (errno 21))") ?? false, lines.joined(separator: "\n"))
        let saves = lines.filter { $0.contains("settings not saved") }
        XCTAssertEqual(saves.count, 1, lines.joined(separator: "\n"))
        XCTAssertTrue(saves[0].contains("Is a directory"), String(saves[0]))
    }

    /// The daemon offers the user's presets as `loopix develop` does, reports a bad one in
    /// one line, and picks up a new one on SIGHUP.
    func testTheDaemonReadsTheUserPresetsAndRereadsThemOnReload() throws {
        let d = try DaemonHarness(extraConfig: #""presetsDirectory": "looks""#)
        let looks = d.directory + "/looks"
        try FileManager.default.createDirectory(atPath: looks, withIntermediateDirectories: true)
        try #"{ "version": 1, "id": "warm-day", "name": "Warm Day", "grade": { "temperature": 0.3 } }"#
            .write(toFile: looks + "/warm.json", atomically: true, encoding: .utf8)
        try #"{ "version": 1, "id": "loud", "name": "Loud", "grain": { "amount": 3 } }"#
            .write(toFile: looks + "/loud.json", atomically: true, encoding: .utf8)
        try d.start()
        defer { d.stop() }
        XCTAssertEqual(try d.request(#"{"cmd":"preset","name":"warm-day"}"#)["ok"] as? Bool, true)
        XCTAssertEqual(try d.request(#"{"cmd":"status"}"#)["presetName"] as? String, "Warm Day")
        XCTAssertTrue(d.log().contains("<4>preset skipped: \(looks)/loud.json: grain.amount: 3 is out of range (allowed 0…1)"), d.log())
        XCTAssertEqual(try d.request(#"{"cmd":"preset","name":"cool-night"}"#)["error"] as? String, "unknown preset \"cool-night\"")
        try #"{ "version": 1, "id": "cool-night", "name": "Cool Night", "grade": { "temperature": -0.3 } }"#
            .write(toFile: looks + "/cool.json", atomically: true, encoding: .utf8)
        kill(d.process!.processIdentifier, SIGHUP)
        let deadline = Date().addingTimeInterval(10)
        while !d.log().contains("reloaded") && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        XCTAssertEqual(try d.request(#"{"cmd":"preset","name":"cool-night"}"#)["ok"] as? Bool, true, d.log())
    }
}

/// An error with a message, for test set-up that fails.
struct SystemErrorForTest: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// `s` as a JSON string literal.
func JSONString(_ s: String) -> String {
    "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}
