import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// loopixd as a systemd service sees it: the sd_notify messages on `$NOTIFY_SOCKET`, received
/// here on a datagram socket the way systemd receives them.
final class DaemonServiceTests: XCTestCase {
    /// A datagram socket standing in for systemd's notification socket.
    final class NotifySocket {
        let path: String
        let fd: Int32
        private(set) var messages: [(time: Date, text: String)] = []

        init(path: String) throws {
            self.path = path
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            guard fd >= 0 else { throw POSIXError(.EIO) }
            var addr = sockaddr_un()
            addr.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &addr.sun_path) { raw in
                for (i, b) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = b }
            }
            let r = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard r == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            var tv = timeval(tv_sec: 0, tv_usec: 100_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        /// Receives until `condition` holds on the messages so far or `timeout` passes.
        @discardableResult
        func wait(timeout: Double, until condition: ([String]) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while Date() < deadline {
                if condition(messages.map(\.text)) { return true }
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n > 0 { messages.append((Date(), String(decoding: buffer[0..<n], as: UTF8.self))) }
            }
            return condition(messages.map(\.text))
        }

        /// Every `KEY=value` field of every message, in order.
        var fields: [String] { messages.flatMap { $0.text.split(separator: "\n").map(String.init) } }
    }

    /// READY once serving, STATUS lines a person can read, RELOADING/READY around SIGHUP,
    /// watchdog pings at half the timeout while the loop runs (also while the camera is
    /// stalled: an absent camera is not a hang), STOPPING on SIGTERM.
    func testTheDaemonTalksToSystemd() throws {
        let d = try DaemonHarness()
        let notify = try NotifySocket(path: d.directory + "/notify.sock")
        try d.start(environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"])

        XCTAssertTrue(notify.wait(timeout: 30) { $0.contains { $0.hasPrefix("READY=1") } }, "no READY=1: \(notify.fields)")
        XCTAssertTrue(notify.wait(timeout: 10) { $0.contains { $0.contains("STATUS=") && $0.contains("0 saved") } },
                      "no status line: \(notify.fields)")
        let status = notify.fields.last { $0.hasPrefix("STATUS=") && $0.contains("saved") } ?? ""
        XCTAssertTrue(status.hasPrefix("STATUS=Kodak Portra 400 · "), "status names the look, then the lens: \(status)")

        // Pings at about half of WATCHDOG_USEC, also through a camera stall.
        XCTAssertEqual(try d.request(#"{"cmd":"simulate","fault":"stall","seconds":3}"#)["ok"] as? Bool, true)
        let pingsBefore = notify.messages.filter { $0.text == "WATCHDOG=1" }.count
        notify.wait(timeout: 3) { _ in false }
        let pings = notify.messages.filter { $0.text == "WATCHDOG=1" }
        XCTAssertGreaterThanOrEqual(pings.count - pingsBefore, 4, "pings during 3 s of camera stall at a 1 s watchdog: \(pings.count - pingsBefore)")
        let gaps = zip(pings.dropFirst(), pings).map { $0.time.timeIntervalSince($1.time) }
        XCTAssertLessThan(gaps.max() ?? 0, 0.9, "the longest gap between pings must stay under the 1 s timeout: \(gaps)")

        // A photo shows up in the status line.
        XCTAssertEqual(try d.request(#"{"cmd":"capture"}"#)["ok"] as? Bool, true)
        XCTAssertTrue(notify.wait(timeout: 20) { $0.contains { $0.contains("STATUS=") && $0.contains("1 saved") } },
                      "status after a photo: \(notify.fields.filter { $0.hasPrefix("STATUS=") })")

        // SIGHUP: RELOADING=1 (with the time, as systemd wants for Type=notify-reload), then READY=1.
        let beforeReload = notify.messages.count
        kill(d.process!.processIdentifier, SIGHUP)
        XCTAssertTrue(notify.wait(timeout: 10) { $0.dropFirst(beforeReload).contains { $0 == "READY=1" } },
                      "reload: \(notify.messages.dropFirst(beforeReload).map(\.text))")
        let reload = notify.messages.dropFirst(beforeReload).map(\.text)
        let reloading = reload.firstIndex { $0.hasPrefix("RELOADING=1\nMONOTONIC_USEC=") }
        XCTAssertNotNil(reloading, "RELOADING=1 with MONOTONIC_USEC: \(reload)")
        if let reloading { XCTAssertLessThan(reloading, reload.lastIndex(of: "READY=1")!) }

        // SIGTERM: STOPPING=1, then a clean exit.
        XCTAssertEqual(d.stop(), 0)
        notify.wait(timeout: 1) { $0.contains { $0.hasPrefix("STOPPING=1") } }
        XCTAssertTrue(notify.fields.contains("STOPPING=1"), "STOPPING=1: \(notify.fields.suffix(4))")
    }

    /// `--version` prints the version the photos carry.
    func testVersion() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: DaemonHarness.executable)
        p.arguments = ["--version"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        p.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(p.terminationStatus, 0)
        XCTAssertTrue(text.hasPrefix("loopixd "), text)
        XCTAssertNotNil(text.range(of: #"^loopixd \d+\.\d+\.\d+"#, options: .regularExpression), text)
    }
}
