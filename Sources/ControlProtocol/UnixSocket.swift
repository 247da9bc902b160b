#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import System

/// Unix-domain stream sockets as the control socket's server and client use them: addresses,
/// non-blocking close-on-exec sockets, connect and send with EINTR retried.
public enum UnixSocket {
    /// `sun_path` holds 108 bytes including the terminating NUL.
    public static let maxPathBytes = 107

    /// Calls `body` with `path` as a `sockaddr_un`; nil when the path does not fit.
    public static func withAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R? {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= maxPathBytes, !bytes.contains(0) else { return nil }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// A new non-blocking, close-on-exec stream socket (`socket(2)`).
    public static func makeSocket() throws(Errno) -> FileDescriptor {
        #if canImport(Glibc)
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
        let type = SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC
        #endif
        let fd = socket(AF_UNIX, type, 0)
        guard fd >= 0 else { throw Errno.current }
        return FileDescriptor(owning: fd)
    }

    /// `connect(2)` retried on EINTR; nil on success, else the errno (EINPROGRESS/EAGAIN for a
    /// non-blocking socket that must wait; ENAMETOOLONG for a path that does not fit).
    public static func connect(_ socket: borrowing FileDescriptor, path: String) -> Errno? {
        let fd = socket.rawValue
        let rc: Errno?? = withAddress(path) { addr, len in
            if case .failure(let e) = retryingInterrupts({ Glibc.connect(fd, addr, len) }) { return e }
            return nil
        }
        return rc ?? Errno(ENAMETOOLONG)
    }

    /// Flags for `send(2)`: never raise SIGPIPE, never block.
    public static var sendFlags: Int32 { Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT) }

    /// Sends as much of `bytes` as the socket takes now: the count sent (0 when it would block).
    public static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        switch retryingInterrupts({ Glibc.send(fd, bytes.baseAddress, bytes.count, sendFlags) }) {
        case .success(let n): return n
        case .failure(let e) where e == .wouldBlock: return 0
        case .failure(let e): throw e
        }
    }
}
