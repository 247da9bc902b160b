#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ControlProtocol
import Foundation
import StrictJSON
import System

/// A control-socket failure: the socket path, what was being done and why, on one line.
public struct ControlSocketError: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let message: String
    /// The errno, when a system call failed.
    public let errno: Errno?

    public init(path: String, message: String, errno: Errno? = nil) {
        self.path = path
        self.message = message
        self.errno = errno
    }

    static func system(_ path: String, _ action: String, _ e: Int32) -> ControlSocketError {
        ControlSocketError(path: path, message: "cannot \(action): \(Errno(e).message)", errno: Errno(e))
    }

    public var description: String { "\(path): \(message)" }
}

/// The daemon's control socket: a Unix stream socket speaking the line protocol documented on
/// `ControlRequest`.
///
/// Threading: one `poll(2)` loop on a thread of its own (`WorkerThread`); every socket is
/// non-blocking, and the loop never waits for anyone. A parsed request becomes a
/// `PendingRequest` handed to `dispatch` (the controller's inbox) with a deadline; the
/// controller's answer wakes the loop, which writes it. Replies go out per client in request
/// order; a request not claimed by its deadline is answered "busy" and never carried out.
/// `close()` (or deinit) stops the loop, closes every connection and removes the socket file.
///
/// Limits, so that no client can hurt the daemon or the other clients:
/// - a request line is at most `maxLineLength` bytes (a longer one gets an error reply and the
///   connection is closed);
/// - at most `maxInFlight` requests of one client wait for the controller; the server stops
///   reading that client until one is answered (a pipelining client waits its turn, the
///   others are served meanwhile);
/// - a client whose unread replies exceed `maxPendingOutput` bytes (beyond what the kernel
///   buffers, which is kept small) is dropped;
/// - a request line must arrive whole within `lineTimeout` seconds of its first byte (half a
///   line never holds a connection);
/// - a connection idle for `idleTimeout` seconds (nothing in progress, nothing sent) is closed;
/// - at most `maxClients` connections. When every one is taken, a new client takes the place of,
///   in this order: the connection whose unfinished line has waited longest; the one idle the
///   longest, once idle for `evictAfter` seconds; the one that has only been waiting longest
///   (for `wait-saved`'s photos). Only when there is none of these does it get "too many
///   connections" and is closed: requests that finish hold a slot, waiting and stalling do not;
/// - a connection being closed gets `lingerSeconds` to read its last reply.
/// Replies are sent with `MSG_NOSIGNAL`, so a client that vanishes never raises SIGPIPE.
///
/// Setting up: a stale socket file (nobody answers on it) is replaced; a live one (another
/// daemon answers) or a path that is not a socket is refused. The socket is bound under a
/// temporary name, given mode 0660 (and the configured group), then renamed into place, so it
/// never exists with looser permissions.
public final class ControlServer: Sendable {
    /// Where requests go: the controller's inbox (`ControllerHandle.submit`).
    public typealias Dispatch = @Sendable (PendingRequest) -> Void
    /// A synchronous answer (for tests and tools that have no controller).
    public typealias Handler = @Sendable (ControlRequest) -> ControlReply

    public struct Limits: Sendable {
        public var maxClients = 16
        public var maxLineLength = 4096
        public var maxInFlight = 16
        public var maxPendingOutput = 64 * 1024
        /// Seconds from a request line's first byte to its newline.
        public var lineTimeout: Double = 10
        /// Seconds a connection may sit with nothing in progress.
        public var idleTimeout: Double = 60
        /// A new client may push out one idle this long when every slot is taken.
        public var evictAfter: Double = 5
        public var lingerSeconds: Double = 5
        public init() {}
    }

    public let path: String
    private let loop: ControlServerLoop
    private let thread = Locked<WorkerThread?>(nil)
    private let started = Locked(false)

    /// Creates and binds the socket (not yet accepting: call `start()`). `timeout(request)` is
    /// how long a request may wait for the controller before "busy".
    public init(path: String, group: String? = nil, limits: Limits = Limits(),
                timeout: @escaping @Sendable (ControlRequest) -> Double = { $0.answerTimeout },
                dispatch: @escaping Dispatch) throws(ControlSocketError) {
        self.path = path
        let bound = try Self.bind(path: path, group: group)
        let listening = OpenFile(owning: bound.fd, size: 0)
        let wakeup: WakeupPipe
        do { wakeup = try WakeupPipe() } catch {
            listening.close()
            unlink(path)
            throw .system(path, "create the wake-up pipe", error.rawValue)
        }
        loop = ControlServerLoop(path: path, listening: listening, socketIdentity: bound.identity, wakeup: wakeup,
                                 dispatch: dispatch, timeout: timeout, limits: limits)
    }

    /// A server that answers each request at once on its own thread with `handler`.
    public convenience init(path: String, group: String? = nil, limits: Limits = Limits(),
                            handler: @escaping Handler) throws(ControlSocketError) {
        try self.init(path: path, group: group, limits: limits) { pending in
            if pending.claim() { pending.answer(handler(pending.request)) }
        }
    }

    deinit { close() }

    /// Starts the loop thread. Calling it again (or after `close()`) does nothing.
    public func start() {
        let first = started.withLock { s -> Bool in
            defer { s = true }
            return !s
        }
        guard first else { return }
        let loop = self.loop
        do {
            let t = try WorkerThread(name: "loopix.control") { token in loop.run(token) }
            thread.withLock { $0 = t }
        } catch {
            Log.error("\(path): \(error); the control socket does not answer")
        }
    }

    /// How many connections are open now (for tests and status).
    public var clientCount: Int { loop.clientCount }

    /// Stops the loop, closes every connection and removes the socket file (if it is still ours).
    public func close() {
        let t = thread.withLock { t -> WorkerThread? in
            defer { t = nil }
            return t
        }
        started.withLock { $0 = true }
        if let t {
            loop.stopping.withLock { $0 = true }  // before the wake-up, which the loop may be draining now
            loop.wakeup.signal()
            t.stop()
        }
        loop.teardown()
    }

    /// Binds the listening socket: stale check, temporary name, mode, group, rename.
    private static func bind(path: String, group: String?) throws(ControlSocketError) -> (fd: Int32, identity: (dev_t, ino_t)) {
        guard path.utf8.count <= UnixSocket.maxPathBytes else {
            throw ControlSocketError(path: path, message: "socket path is \(path.utf8.count) bytes long (at most \(UnixSocket.maxPathBytes))")
        }
        var gid: gid_t? = nil
        if let group {
            guard let g = lookupGroup(group) else {
                throw ControlSocketError(path: path, message: "socket.group: no group named \"\(group)\"")
            }
            gid = g
        }
        var st = stat()
        if lstat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFSOCK else {
                throw ControlSocketError(path: path, message: "exists and is not a socket; remove it or choose another socket path")
            }
            if let probe = try? UnixSocket.makeSocket() {
                let e = UnixSocket.connect(probe, path: path)
                if e == nil || e == .wouldBlock || e == Errno(EINPROGRESS) {
                    throw ControlSocketError(path: path, message: "another daemon is already listening on this socket")
                }
                guard e == Errno(ECONNREFUSED) || e == .noSuchFile else { throw .system(path, "check the existing socket", e!.rawValue) }
            }
            // Stale: the rename below replaces it.
        } else if errno != ENOENT {
            throw .system(path, "look at the socket path", errno)
        }

        let directory = (path as NSString).deletingLastPathComponent
        let dir = directory.isEmpty ? "." : directory
        let tmp = "\(dir)/.lx\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        guard tmp.utf8.count <= UnixSocket.maxPathBytes else {
            throw ControlSocketError(path: path, message: "socket path is too long to bind safely (its directory must leave room for a temporary name)")
        }
        let socket: FileDescriptor
        do { socket = try UnixSocket.makeSocket() } catch { throw .system(path, "create a socket", error.rawValue) }
        let fd = socket.rawValue
        func fail(_ action: String, _ e: Int32) -> ControlSocketError {
            unlink(tmp)
            return .system(path, action, e)
        }
        let rc: Int32 = UnixSocket.withAddress(tmp) { addr, len in Glibc.bind(fd, addr, len) == 0 ? 0 : errno } ?? ENAMETOOLONG
        if rc != 0 { throw .system(path, "bind a socket in \(dir)", rc) }
        if chmod(tmp, 0o660) != 0 { throw fail("set the socket's mode to 0660", errno) }
        if let gid, chown(tmp, uid_t.max, gid) != 0 { throw fail("give the socket to group \(group ?? "")", errno) }
        if listen(fd, 16) != 0 { throw fail("listen", errno) }
        if rename(tmp, path) != 0 { throw fail("move the socket into place", errno) }
        var now = stat()
        guard stat(path, &now) == 0 else { throw .system(path, "check the new socket", errno) }
        return (socket.take(), (now.st_dev, now.st_ino))
    }

    public static func lookupGroup(_ name: String) -> gid_t? {
        if let n = UInt32(name) { return gid_t(n) }
        var entry = group()
        var result: UnsafeMutablePointer<group>? = nil
        var buffer = [CChar](repeating: 0, count: 16384)
        let rc = getgrnam_r(name, &entry, &buffer, buffer.count, &result)
        guard rc == 0, result != nil else { return nil }
        return entry.gr_gid
    }
}
