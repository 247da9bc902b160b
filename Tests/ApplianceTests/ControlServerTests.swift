#if canImport(Glibc)
import Glibc
#endif
import ControlProtocol
import Foundation
import System
import XCTest
@testable import Appliance

/// A test client on a raw Unix socket: sends any bytes, reads reply lines with a deadline.
final class RawClient {
    let socket: FileDescriptor
    var fd: Int32 { socket.rawValue }
    private var buffer: [UInt8] = []

    init(path: String) throws {
        socket = try UnixSocket.makeSocket()
        if let e = UnixSocket.connect(socket, path: path) {
            throw SystemError(path, "connect", e)
        }
    }

    /// Waits for `events` up to `milliseconds`: revents, 0 on timeout.
    func wait(_ events: Int16, milliseconds: Int32) -> Int16 {
        (try? socket.poll(events, milliseconds: milliseconds)) ?? -1
    }

    /// Sends everything (waiting up to `timeout` for room); false if the peer is gone or slow.
    @discardableResult
    func send(_ bytes: [UInt8], timeout: Double = 2) -> Bool {
        var sent = 0
        let deadline = Date().addingTimeInterval(timeout)
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, UnixSocket.sendFlags) }
            if n > 0 { sent += n; continue }
            if n < 0 && (errno == EAGAIN || errno == EINTR) {
                if Date() > deadline { return false }
                _ = wait(Int16(POLLOUT), milliseconds: 50)
                continue
            }
            return false
        }
        return true
    }

    func send(_ text: String) { send(Array(text.utf8)) }

    /// The next line, nil at end of stream or after `timeout`.
    func readLine(timeout: Double = 5) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let nl = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeFirst(nl + 1)
                return line
            }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return nil }
            if wait(Int16(POLLIN), milliseconds: Int32(left * 1000) + 1) <= 0 { continue }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { buffer.append(contentsOf: chunk[0..<n]) }
            else if n == 0 { return nil }
            else if errno != EAGAIN && errno != EINTR { return nil }
        }
    }

    /// True when the server closes the connection within `timeout` (remaining data is discarded).
    func waitForClose(timeout: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while deadline.timeIntervalSinceNow > 0 {
            if wait(Int16(POLLIN), milliseconds: 100) <= 0 { continue }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) { return true }
        }
        return false
    }
}

private func object(_ line: String?) -> [String: Any] {
    guard let line, let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return [:] }
    return o
}

final class ControlServerTests: XCTestCase {
    /// The handler used by these tests: replies with the command and its argument.
    static let echo: ControlServer.Handler = { request in
        switch request {
        case .preset(let name): return .success(["cmd": "preset", "name": .string(name)])
        case .lens(let i) where i > 1: return .failure("no lens \(i) (this camera has 2)")
        default: return .success(["cmd": .string(request.command)])
        }
    }

    private func makeServer(_ dir: String, maxClients: Int = 16, maxPendingOutput: Int = 256 * 1024,
                            handler: @escaping ControlServer.Handler = ControlServerTests.echo) throws -> ControlServer {
        var limits = ControlServer.Limits()
        limits.maxClients = maxClients
        limits.maxPendingOutput = maxPendingOutput
        limits.lingerSeconds = 1
        let server = try ControlServer(path: "\(dir)/control.sock", limits: limits, handler: handler)
        server.start()
        addTeardownBlock { server.close() }
        return server
    }

    func testRequestAndReply() throws {
        let dir = try makeTempDirectory(self)
        let server = try makeServer(dir)
        let reply = object(try ControlClient.send(.preset("portra"), id: .number(42), socketPath: server.path))
        XCTAssertEqual(reply["ok"] as? Bool, true)
        XCTAssertEqual(reply["name"] as? String, "portra")
        XCTAssertEqual(reply["id"] as? Int, 42)
        let failure = object(try ControlClient.send(.lens(3), socketPath: server.path))
        XCTAssertEqual(failure["ok"] as? Bool, false)
        XCTAssertEqual(failure["error"] as? String, "no lens 3 (this camera has 2)")
        let bad = object(try ControlClient.send(line: "{\"cmd\":\"zoom\",\"id\":\"z\"}", socketPath: server.path))
        XCTAssertEqual(bad["ok"] as? Bool, false)
        XCTAssertEqual(bad["id"] as? String, "z", "the id is echoed on errors too")
        XCTAssertTrue((bad["error"] as? String ?? "").hasPrefix("unknown cmd \"zoom\""))
    }

    func testPartialLinesAndPipelining() throws {
        let dir = try makeTempDirectory(self)
        let server = try makeServer(dir)
        let c = try RawClient(path: server.path)
        c.send("{\"cmd\":\"st")
        Thread.sleep(forTimeInterval: 0.05)
        c.send("atus\",\"id\":1}\r\n\n   \n{\"cmd\":\"capture\",\"id\":2}\n{\"cmd\":\"ev\",\"value\":9,\"id\":3}\n")
        XCTAssertEqual(c.readLine(), "{\"ok\":true,\"id\":1,\"cmd\":\"status\"}")
        XCTAssertEqual(c.readLine(), "{\"ok\":true,\"id\":2,\"cmd\":\"capture\"}")
        XCTAssertEqual(c.readLine(), "{\"ok\":false,\"id\":3,\"error\":\"ev: \\\"value\\\" 9 is out of range (allowed -3…3 stops)\"}")
        // A last line without a newline is answered when the client stops writing.
        c.send("{\"cmd\":\"grid\",\"value\":true}")
        shutdown(c.fd, Int32(SHUT_WR))
        XCTAssertEqual(c.readLine(), "{\"ok\":true,\"cmd\":\"grid\"}")
        XCTAssertTrue(c.waitForClose())
    }

    func testOversizedLineGetsErrorAndClose() throws {
        let dir = try makeTempDirectory(self)
        let server = try makeServer(dir)
        let c = try RawClient(path: server.path)
        c.send([UInt8](repeating: 0x61, count: 5000))
        XCTAssertEqual(c.readLine(), "{\"ok\":false,\"error\":\"request line longer than 4096 bytes; closing the connection\"}")
        XCTAssertTrue(c.waitForClose())
        // Exactly at the limit is fine (and an error only because it is not JSON).
        let d = try RawClient(path: server.path)
        d.send([UInt8](repeating: 0x61, count: 4096) + [0x0A])
        XCTAssertEqual(object(d.readLine())["error"] as? String, "request is not valid JSON (line 1, column 1: expected a value, found 'a'; send one JSON object per line)")
        d.send("{\"cmd\":\"status\"}\n")
        XCTAssertEqual(object(d.readLine())["ok"] as? Bool, true)
    }

    func testSocketModeAndCleanClose() throws {
        let dir = try makeTempDirectory(self)
        let server = try makeServer(dir)
        var st = stat()
        XCTAssertEqual(lstat(server.path, &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFSOCK)
        XCTAssertEqual(st.st_mode & 0o777, 0o660)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["control.sock"], "no temporary names left")
        server.close()
        XCTAssertNotEqual(lstat(server.path, &st), 0, "close() removes the socket file")
        XCTAssertThrowsError(try ControlClient.send(.status, socketPath: server.path, timeout: 1)) { error in
            XCTAssertEqual("\(error)", "\(server.path): no such socket (is loopixd running? set --socket or $LOOPIX_SOCKET)")
        }
    }

    func testStaleSocketIsReplacedButLiveOneIsNot() throws {
        let dir = try makeTempDirectory(self)
        let path = "\(dir)/control.sock"
        // A socket file nobody listens on (a daemon that crashed).
        let stale = try UnixSocket.makeSocket()
        XCTAssertEqual(UnixSocket.withAddress(path) { bind(stale.rawValue, $0, $1) }, 0)
        _ = consume stale
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        let server = try makeServer(dir)
        XCTAssertEqual(object(try ControlClient.send(.status, socketPath: path))["ok"] as? Bool, true)
        // A second daemon on the same path is refused and leaves the first one working.
        XCTAssertThrowsError(try ControlServer(path: path, handler: Self.echo)) { error in
            XCTAssertEqual("\(error)", "\(path): another daemon is already listening on this socket")
        }
        XCTAssertEqual(object(try ControlClient.send(.status, socketPath: path))["ok"] as? Bool, true)
        server.close()
        // A path that is not a socket is refused, not deleted.
        _ = FileManager.default.createFile(atPath: path, contents: Data("keep".utf8))
        XCTAssertThrowsError(try ControlServer(path: path, handler: Self.echo)) { error in
            XCTAssertEqual("\(error)", "\(path): exists and is not a socket; remove it or choose another socket path")
        }
        XCTAssertEqual(FileManager.default.contents(atPath: path), Data("keep".utf8))
        XCTAssertThrowsError(try ControlServer(path: "\(dir)/x.sock", group: "no-such-group-loopix", handler: Self.echo)) { error in
            XCTAssertEqual("\(error)", "\(dir)/x.sock: socket.group: no group named \"no-such-group-loopix\"")
        }
    }

    func testTooManyClients() throws {
        let dir = try makeTempDirectory(self)
        let server = try makeServer(dir, maxClients: 2)
        let a = try RawClient(path: server.path)
        let b = try RawClient(path: server.path)
        a.send("{\"cmd\":\"status\"}\n")
        b.send("{\"cmd\":\"status\"}\n")
        XCTAssertNotNil(a.readLine())
        XCTAssertNotNil(b.readLine())
        let c = try RawClient(path: server.path)
        XCTAssertEqual(c.readLine(), "{\"ok\":false,\"error\":\"too many connections (at most 2); try again later\"}")
        XCTAssertTrue(c.waitForClose())
        a.send("{\"cmd\":\"capture\"}\n")
        XCTAssertEqual(object(a.readLine())["cmd"] as? String, "capture", "the others carry on")
    }

    func testSlowClientIsDropped() throws {
        let dir = try makeTempDirectory(self)
        let big = String(repeating: "x", count: 2000)
        let server = try makeServer(dir, maxPendingOutput: 16 * 1024) { _ in .success(["blob": .string(big)]) }
        let slow = try RawClient(path: server.path)
        // Ask for far more than the socket buffers and the output limit hold, never reading.
        let request = Array(String(repeating: "{\"cmd\":\"status\"}\n", count: 200).utf8)
        var dropped = false
        for _ in 0..<200 where !dropped {
            if !slow.send(request, timeout: 0.2) { dropped = true }
        }
        XCTAssertTrue(dropped || slow.waitForClose(timeout: 5), "a client that never reads is dropped")
        let deadline = Date().addingTimeInterval(5)
        while server.clientCount > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        XCTAssertEqual(server.clientCount, 0)
        XCTAssertEqual(object(try ControlClient.send(.status, socketPath: server.path))["ok"] as? Bool, true)
    }

    /// 10,000 random and malformed lines over many connections; the server stays up and keeps
    /// answering every well-formed line correctly.
    func testGarbageDoesNotHurtTheServer() throws {
        let dir = try makeTempDirectory(self)
        let server = try makeServer(dir)
        var rng = SystemRandomNumberGenerator()
        let started = Date()
        var linesSent = 0
        var connection = 0
        while linesSent < 10_000 && Date().timeIntervalSince(started) < 60 {
            connection += 1
            let c = try RawClient(path: server.path)
            let kind = connection % 5
            switch kind {
            case 0:
                // Random bytes with newlines, sent in random fragments; nothing read back; closed early.
                for _ in 0..<100 {
                    let bytes = (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                    c.send(bytes + [0x0A], timeout: 0.2)
                    linesSent += 1
                }
            case 1:
                // A huge line: error, closed.
                c.send([UInt8](repeating: UInt8(ascii: "{"), count: Int.random(in: 4097...20000, using: &rng)), timeout: 0.5)
                linesSent += 1
                XCTAssertTrue(c.waitForClose())
            case 2:
                // A partial line, then the connection just goes away.
                c.send("{\"cmd\":\"preset\",\"na")
                linesSent += 1
            default:
                // Checked: valid requests mixed with invalid UTF-8, bad JSON and bad fields; every line
                // gets exactly one reply, in order, and valid ones get the right reply.
                var expected: [(id: Int, ok: Bool)] = []
                var payload: [UInt8] = []
                for i in 0..<100 {
                    switch Int.random(in: 0..<5, using: &rng) {
                    case 0: payload += Array("{\"cmd\":\"preset\",\"name\":\"p\(i)\",\"id\":\(i)}\n".utf8); expected.append((i, true))
                    case 1: payload += [0x7B, 0xC3, 0x28, 0xFF, 0x7D, 0x0A]; expected.append((-1, false))
                    case 2: payload += Array("{\"cmd\":\"ev\",\"value\":\"x\",\"id\":\(i)}\n".utf8); expected.append((i, false))
                    case 3: payload += Array("{\"cmd\":[{\"a\":\(i)\n".utf8); expected.append((-1, false))
                    default: payload += Array("x\(String(repeating: "\u{7}\"\\", count: Int.random(in: 0...500, using: &rng)))\n".utf8); expected.append((-1, false))
                    }
                    linesSent += 1
                }
                // In random fragments.
                var offset = 0
                while offset < payload.count {
                    let n = min(payload.count - offset, Int.random(in: 1...700, using: &rng))
                    XCTAssertTrue(c.send(Array(payload[offset..<offset + n])))
                    offset += n
                }
                for e in expected {
                    let reply = object(c.readLine())
                    XCTAssertEqual(reply["ok"] as? Bool, e.ok)
                    if e.id >= 0 { XCTAssertEqual(reply["id"] as? Int, e.id) }
                    if e.ok { XCTAssertEqual(reply["name"] as? String, "p\(e.id)") }
                    else { XCTAssertFalse((reply["error"] as? String ?? "").isEmpty) }
                }
            }
        }
        XCTAssertGreaterThanOrEqual(linesSent, 10_000)
        // Still alive and answering.
        let reply = object(try ControlClient.send(.preset("portra"), id: .string("after"), socketPath: server.path))
        XCTAssertEqual(reply["ok"] as? Bool, true)
        XCTAssertEqual(reply["id"] as? String, "after")
        XCTAssertEqual(reply["name"] as? String, "portra")
        let deadline = Date().addingTimeInterval(5)
        while server.clientCount > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        XCTAssertEqual(server.clientCount, 0, "every connection was cleaned up")
    }

    /// A request the controller has not taken by its deadline is answered "busy" and is never
    /// carried out afterwards; one it has taken is answered, however long it takes.
    func testARequestToldBusyIsNeverCarriedOut() throws {
        let dir = try makeTempDirectory(self)
        let inbox = Locked<[PendingRequest]>([])
        let server = try ControlServer(path: "\(dir)/control.sock", timeout: { _ in 0.3 }) { p in inbox.withLock { $0.append(p) } }
        server.start()
        defer { server.close() }
        let c = try RawClient(path: server.path)
        c.send("{\"cmd\":\"capture\",\"id\":1}\n")
        XCTAssertEqual(c.readLine(), "{\"ok\":false,\"id\":1,\"error\":\"busy: the daemon did not answer in 0.3 s\"}")
        let late = try XCTUnwrap(inbox.withLock { $0.first })
        XCTAssertFalse(late.claim(), "the controller comes too late: it must not take the photo")
        // Claimed in time but slow to answer: the answer arrives, no "busy".
        c.send("{\"cmd\":\"status\",\"id\":2}\n")
        var pending: PendingRequest?
        while pending == nil { pending = inbox.withLock { $0.count > 1 ? $0[1] : nil }; usleep(1000) }
        XCTAssertTrue(pending!.claim())
        // Long past its deadline (as a wait-saved is): the server sleeps until the answer comes,
        // it does not spin on the expired deadline.
        // The server thread's own CPU time (other tests' threads may be busy in this process).
        func cpuSeconds() -> Double {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            var ticks = 0
            for task in tasks where (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.hasPrefix("loopix.control") == true {
                // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
                guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                      let close = stat.lastIndex(of: ")") else { continue }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                if fields.count > 12 { ticks += (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) }
            }
            return Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
        let cpuBefore = cpuSeconds()
        Thread.sleep(forTimeInterval: 2)
        XCTAssertLessThan(cpuSeconds() - cpuBefore, 0.5, "the server waited without using the CPU")
        pending!.answer(.success(["slow": true]))
        XCTAssertEqual(c.readLine(), "{\"ok\":true,\"id\":2,\"slow\":true}")

        // A client that hangs up while its claimed request waits is let go at once (its
        // answer would go nowhere); the request itself is the controller's to finish.
        var quitter: RawClient? = try RawClient(path: server.path)
        quitter?.send("{\"cmd\":\"wait-saved\",\"count\":5}\n")
        var waiting: PendingRequest?
        while waiting == nil { waiting = inbox.withLock { $0.count > 2 ? $0[2] : nil }; usleep(1000) }
        XCTAssertTrue(waiting!.claim())
        XCTAssertEqual(server.clientCount, 2)
        quitter = nil  // closes its socket
        let deadline = Date().addingTimeInterval(5)
        while server.clientCount > 1 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        XCTAssertEqual(server.clientCount, 1, "the gone client's connection is closed")
        waiting!.answer(.success(["paths": .array([])]))
        c.send("{\"cmd\":\"status\",\"id\":3}\n")
        var third: PendingRequest?
        while third == nil { third = inbox.withLock { $0.count > 3 ? $0[3] : nil }; usleep(1000) }
        XCTAssertTrue(third!.claim())
        third!.answer(.success([:]))
        XCTAssertEqual(c.readLine(), "{\"ok\":true,\"id\":3}", "the others are served as before")
    }

    /// A client that pipelines many requests waits its turn (at most `maxInFlight` of its
    /// requests wait for the controller at once) while another client is served at once.
    func testAPipeliningClientDoesNotHoldOthersOff() throws {
        let dir = try makeTempDirectory(self)
        let inbox = Locked<[PendingRequest]>([])
        var limits = ControlServer.Limits()
        limits.maxInFlight = 4
        let server = try ControlServer(path: "\(dir)/control.sock", limits: limits) { p in inbox.withLock { $0.append(p) } }
        server.start()
        defer { server.close() }
        let greedy = try RawClient(path: server.path)
        greedy.send(String(repeating: "{\"cmd\":\"status\"}\n", count: 100))
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(inbox.withLock { $0.count }, 4, "no more than maxInFlight of one client's requests reach the controller")
        let polite = try RawClient(path: server.path)
        polite.send("{\"cmd\":\"grid\",\"value\":true,\"id\":\"p\"}\n")
        var mine: PendingRequest?
        let deadline = Date().addingTimeInterval(2)
        while mine == nil && Date() < deadline {
            mine = inbox.withLock { $0.first { $0.request == .grid(true) } }
            usleep(1000)
        }
        let request = try XCTUnwrap(mine, "the second client's request went to the controller straight away")
        XCTAssertTrue(request.claim())
        request.answer(.success([:]))
        XCTAssertEqual(polite.readLine(), "{\"ok\":true,\"id\":\"p\"}")
        // Answering the greedy client's requests lets the next ones through, in order.
        var answered = 0
        let end = Date().addingTimeInterval(10)
        while answered < 100 && Date() < end {
            for p in inbox.withLock({ q -> [PendingRequest] in defer { q.removeAll() }; return q }) where p.claim() {
                answered += 1
                p.answer(.success(["n": .int(answered)]))
            }
            usleep(1000)
        }
        XCTAssertEqual(answered, 100)
        for n in 1...100 { XCTAssertEqual(greedy.readLine(), "{\"ok\":true,\"n\":\(n)}") }
    }

    /// Idle connections are closed after the idle timeout; when every slot is taken, a new
    /// client pushes out the one idle the longest (once it has been idle long enough).
    func testIdleConnectionsTimeOutAndMakeRoom() throws {
        let dir = try makeTempDirectory(self)
        var limits = ControlServer.Limits()
        limits.maxClients = 2
        limits.evictAfter = 0.3
        limits.idleTimeout = 1.5
        let server = try ControlServer(path: "\(dir)/control.sock", limits: limits, handler: Self.echo)
        server.start()
        defer { server.close() }
        let a = try RawClient(path: server.path)
        let b = try RawClient(path: server.path)
        a.send("{\"cmd\":\"status\"}\n")
        XCTAssertNotNil(a.readLine())
        Thread.sleep(forTimeInterval: 0.5)
        b.send("{\"cmd\":\"status\"}\n")
        XCTAssertNotNil(b.readLine())
        // `a` has been idle the longest: the third client takes its place.
        let c = try RawClient(path: server.path)
        c.send("{\"cmd\":\"status\"}\n")
        XCTAssertEqual(c.readLine(), "{\"ok\":true,\"cmd\":\"status\"}")
        XCTAssertEqual(a.readLine(), "{\"ok\":false,\"error\":\"closing an idle connection: another client needs the slot\"}")
        XCTAssertTrue(a.waitForClose())
        // Left alone, the others are closed after the idle timeout, with a last line saying so.
        XCTAssertEqual(c.readLine(timeout: 5), "{\"ok\":false,\"error\":\"idle for 1.5 s; closing the connection\"}")
        XCTAssertTrue(c.waitForClose())
        XCTAssertTrue(b.waitForClose())
        let deadline = Date().addingTimeInterval(5)
        while server.clientCount > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        XCTAssertEqual(server.clientCount, 0)
    }

    /// `loopix ctl`'s client reads the server's "too many connections" line even when its own
    /// request hits a closed socket.
    func testARefusedClientReadsTheServersReason() throws {
        let dir = try makeTempDirectory(self)
        var limits = ControlServer.Limits()
        limits.maxClients = 1
        limits.evictAfter = 3600
        let server = try ControlServer(path: "\(dir)/control.sock", limits: limits, handler: Self.echo)
        server.start()
        defer { server.close() }
        let holder = try RawClient(path: server.path)
        holder.send("{\"cmd\":\"status\"}\n")
        XCTAssertNotNil(holder.readLine())
        for _ in 0..<20 {
            XCTAssertEqual(try ControlClient.send(.status, socketPath: server.path, timeout: 5),
                           "{\"ok\":false,\"error\":\"too many connections (at most 1); try again later\"}")
        }
    }


    /// Half a request line is closed after `lineTimeout` from its first byte, however slowly it
    /// keeps trickling in; and when every slot is taken, such stalled lines are the first to go.
    func testHalfALineNeverHoldsAConnection() throws {
        let dir = try makeTempDirectory(self)
        var limits = ControlServer.Limits()
        limits.maxClients = 3
        limits.evictAfter = 3600
        limits.lineTimeout = 1
        let server = try ControlServer(path: "\(dir)/control.sock", limits: limits, handler: Self.echo)
        server.start()
        defer { server.close() }
        // Three clients that each start a line and keep adding a byte to it.
        let stalled = try (0..<3).map { _ in try RawClient(path: server.path) }
        for c in stalled { c.send("{\"cmd\":") }
        Thread.sleep(forTimeInterval: 0.2)
        // A fourth is served at once: the line that stalled first gives up its slot.
        let visitor = try RawClient(path: server.path)
        visitor.send("{\"cmd\":\"status\"}\n")
        XCTAssertEqual(visitor.readLine(), "{\"ok\":true,\"cmd\":\"status\"}")
        XCTAssertEqual(stalled[0].readLine(),
                       "{\"ok\":false,\"error\":\"closing a connection whose request line is unfinished: another client needs the slot\"}")
        XCTAssertTrue(stalled[0].waitForClose())
        // The others trickle a byte every 0.2 s: still closed one second after their first byte.
        let start = Date()
        var closed: [String?] = [nil, nil]
        while Date().timeIntervalSince(start) < 3 && closed.contains(where: { $0 == nil }) {
            for (i, c) in stalled.dropFirst().enumerated() where closed[i] == nil {
                c.send(" ")
                if c.wait(Int16(POLLIN), milliseconds: 0) > 0 { closed[i] = c.readLine(timeout: 1) }
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 2.5)
        for line in closed {
            XCTAssertEqual(line, "{\"ok\":false,\"error\":\"a request line must end with a newline within 1 s; closing the connection\"}")
        }
        // A line that is finished in time is answered as ever.
        let slow = try RawClient(path: server.path)
        slow.send("{\"cmd\":")
        Thread.sleep(forTimeInterval: 0.5)
        slow.send("\"status\"}\n")
        XCTAssertEqual(slow.readLine(), "{\"ok\":true,\"cmd\":\"status\"}")
    }

    /// Clients waiting for photos that never come (`wait-saved`) cannot take every connection:
    /// a new client takes the place of the one that has waited longest, which is told so.
    func testWaitersDoNotLockOthersOut() throws {
        let dir = try makeTempDirectory(self)
        var limits = ControlServer.Limits()
        limits.maxClients = 3
        limits.evictAfter = 3600
        let held = Locked<[PendingRequest]>([])
        let server = try ControlServer(path: "\(dir)/control.sock", limits: limits) { pending in
            guard pending.claim() else { return }
            if case .waitSaved = pending.request {
                held.withLock { $0.append(pending) }  // photos that never come
            } else {
                pending.answer(ControlServerTests.echo(pending.request))
            }
        }
        server.start()
        defer { server.close() }
        let waiters = try (0..<3).map { _ in try RawClient(path: server.path) }
        for (i, w) in waiters.enumerated() {
            w.send("{\"cmd\":\"wait-saved\",\"id\":\(i)}\n")
            Thread.sleep(forTimeInterval: 0.05)
        }
        let deadline = Date().addingTimeInterval(5)
        while held.withLock({ $0.count }) < 3 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(held.withLock { $0.count }, 3)
        for _ in 0..<2 {
            let visitor = try RawClient(path: server.path)
            visitor.send("{\"cmd\":\"capture\"}\n")
            XCTAssertEqual(visitor.readLine(), "{\"ok\":true,\"cmd\":\"capture\"}")
        }
        // The two who waited longest were let go, with their request's id; the newest waits on.
        for (i, w) in waiters.prefix(2).enumerated() {
            XCTAssertEqual(w.readLine(), "{\"ok\":false,\"id\":\(i),\"error\":\"closing a connection that was only waiting: another client needs the slot; ask again\"}")
            XCTAssertTrue(w.waitForClose())
        }
        XCTAssertEqual(waiters[2].wait(Int16(POLLIN), milliseconds: 200), 0)
    }
}
