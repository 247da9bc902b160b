#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import StrictJSON
import System

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
    public static func socketPath(environment: [String: String]) -> String {
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
        let deadline = Deadline.after(seconds: timeout)
        let socket: FileDescriptor
        do { socket = try UnixSocket.makeSocket() } catch { throw fail("cannot create a socket: \(error)") }
        var e = UnixSocket.connect(socket, path: socketPath)
        if e == .wouldBlock || e == Errno(EINPROGRESS) {
            let r: Int16
            do { r = try socket.poll(Int16(POLLOUT), milliseconds: deadline.pollTimeout) } catch {
                throw fail("cannot wait for the connection: \(error)")
            }
            if r == 0 { throw fail("the daemon did not accept the connection within \(JSONValue.format(timeout)) s") }
            var err: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(socket.rawValue, SOL_SOCKET, SO_ERROR, &err, &len)
            e = err == 0 ? nil : Errno(err)
        }
        switch e?.rawValue {
        case nil: break
        case ENOENT: throw fail("no such socket (is loopixd running? set --socket or $LOOPIX_SOCKET)")
        case ECONNREFUSED: throw fail("nobody is listening (is loopixd running?)")
        case EACCES, EPERM: throw fail("permission denied (is this user in the socket's group?)")
        case ENAMETOOLONG: throw fail("socket path too long")
        default: throw fail("cannot connect: \(e!)")
        }

        var out = Array(line.utf8)
        if out.last != 0x0A { out.append(0x0A) }
        var sent = 0
        while sent < out.count {
            let fd = socket.rawValue
            let result: Result<Int, Errno> = out.withUnsafeBytes { raw in
                do throws(Errno) { return .success(try UnixSocket.send(fd, UnsafeRawBufferPointer(rebasing: raw[sent...]))) } catch { return .failure(error) }
            }
            let n: Int
            switch result {
            case .success(let count): n = count
            case .failure(let error):
                // The daemon may have answered and closed already (too many connections):
                // its line is still there to read.
                if error == .brokenPipe || error == .connectionReset, let reply = try? readLine(socket, deadline: deadline, timeout: timeout, fail: fail) {
                    return reply
                }
                throw fail("cannot send the request: \(error)")
            }
            if n > 0 { sent += n; continue }
            let r = (try? socket.poll(Int16(POLLOUT), milliseconds: deadline.pollTimeout)) ?? -1
            if r <= 0 { throw fail("timed out sending the request") }
        }
        return try readLine(socket, deadline: deadline, timeout: timeout, fail: fail)
    }

    private static func readLine(_ socket: borrowing FileDescriptor, deadline: Deadline, timeout: Double,
                                 fail: (String) -> ControlClientError) throws(ControlClientError) -> String {
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let nl = reply.firstIndex(of: 0x0A) {
                return String(decoding: reply[..<nl], as: UTF8.self)
            }
            guard reply.count < 1 << 20 else { throw fail("reply longer than 1 MiB") }
            let r: Int16
            do { r = try socket.poll(Int16(POLLIN), milliseconds: deadline.pollTimeout) } catch {
                throw fail("cannot wait for the reply: \(error)")
            }
            if r == 0 { throw fail("no reply within \(JSONValue.format(timeout)) s") }
            let fd = socket.rawValue
            let n = buffer.withUnsafeMutableBytes { raw in Glibc.read(fd, raw.baseAddress, raw.count) }
            if n < 0 {
                let error = Errno.current
                if error == .wouldBlock || error == .interrupted { continue }
                if error == .connectionReset, !reply.isEmpty { return String(decoding: reply, as: UTF8.self) }
                throw fail("cannot read the reply: \(error)")
            }
            if n > 0 { reply.append(contentsOf: buffer[0..<n]); continue }
            if !reply.isEmpty { return String(decoding: reply, as: UTF8.self) }
            throw fail("the daemon closed the connection without replying")
        }
    }
}
