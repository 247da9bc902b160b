#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// Why a control request got no reply, on one line naming the socket.
public struct ControlClientError: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let message: String
    public var description: String { "\(path): \(message)" }
}

/// Sends one request line to the daemon's control socket and returns its reply line
/// (used by `loopix ctl`; handy for scripts and tests).
public enum ControlClient {
    public static let defaultSocketPath = "/run/loopix/control.sock"

    /// `$LOOPIX_SOCKET` if set, else the default path.
    public static func socketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let p = environment["LOOPIX_SOCKET"], !p.isEmpty { return p }
        return defaultSocketPath
    }

    public static func send(_ request: ControlRequest, id: ControlRequestID? = nil, socketPath: String,
                            timeout: Double = 5) throws(ControlClientError) -> String {
        try send(line: request.jsonLine(id: id), socketPath: socketPath, timeout: timeout)
    }

    /// Sends `line` (a newline is added if missing) and returns the first reply line, without
    /// its newline. Gives up after `timeout` seconds in all.
    public static func send(line: String, socketPath: String, timeout: Double = 5) throws(ControlClientError) -> String {
        func fail(_ message: String) -> ControlClientError { ControlClientError(path: socketPath, message: message) }
        let deadline = Date().addingTimeInterval(timeout)
        func remainingMilliseconds() -> Int32 {
            Int32(max(0, min(Double(Int32.max), deadline.timeIntervalSinceNow * 1000)))
        }
        let fd = UnixSocket.makeSocket()
        guard fd >= 0 else { throw fail("cannot create a socket: \(String(cString: strerror(errno)))") }
        defer { Glibc.close(fd) }
        var e = UnixSocket.connect(fd, path: socketPath)
        if e == EAGAIN || e == EINPROGRESS {
            let r = UnixSocket.wait(fd, events: Int16(POLLOUT), milliseconds: remainingMilliseconds())
            if r == 0 { throw fail("the daemon did not accept the connection within \(LoopixJSON.format(timeout)) s") }
            var err: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
            e = err
        }
        switch e {
        case 0: break
        case ENOENT: throw fail("no such socket (is loopixd running? set --socket or $LOOPIX_SOCKET)")
        case ECONNREFUSED: throw fail("nobody is listening (is loopixd running?)")
        case EACCES, EPERM: throw fail("permission denied (is this user in the socket's group?)")
        case ENAMETOOLONG: throw fail("socket path too long")
        default: throw fail("cannot connect: \(String(cString: strerror(e)))")
        }

        var out = Array(line.utf8)
        if out.last != 0x0A { out.append(0x0A) }
        var sent = 0
        while sent < out.count {
            let n = out.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, out.count - sent, UnixSocket.sendFlags) }
            if n > 0 { sent += n; continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                if UnixSocket.wait(fd, events: Int16(POLLOUT), milliseconds: remainingMilliseconds()) <= 0 {
                    throw fail("timed out sending the request")
                }
                continue
            }
            throw fail("cannot send the request: \(String(cString: strerror(errno)))")
        }

        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let nl = reply.firstIndex(of: 0x0A) {
                return String(decoding: reply[..<nl], as: UTF8.self)
            }
            guard reply.count < 1 << 20 else { throw fail("reply longer than 1 MiB") }
            let r = UnixSocket.wait(fd, events: Int16(POLLIN), milliseconds: remainingMilliseconds())
            if r == 0 { throw fail("no reply within \(LoopixJSON.format(timeout)) s") }
            if r < 0 { throw fail("cannot wait for the reply: \(String(cString: strerror(errno)))") }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { reply.append(contentsOf: buffer[0..<n]); continue }
            if n == 0 {
                if !reply.isEmpty { return String(decoding: reply, as: UTF8.self) }
                throw fail("the daemon closed the connection without replying")
            }
            if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
            throw fail("cannot read the reply: \(String(cString: strerror(errno)))")
        }
    }
}
