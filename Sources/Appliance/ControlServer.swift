#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// A control-socket failure: the socket path, what was being done and why, on one line.
public struct ControlSocketError: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let message: String
    /// The errno, when a system call failed.
    public let errno: Int32?

    public init(path: String, message: String, errno: Int32? = nil) {
        self.path = path
        self.message = message
        self.errno = errno
    }

    static func system(_ path: String, _ action: String, _ e: Int32) -> ControlSocketError {
        ControlSocketError(path: path, message: "cannot \(action): \(String(cString: strerror(e)))", errno: e)
    }

    public var description: String { "\(path): \(message)" }
}

/// Helpers for Unix-domain socket addresses and system calls (EINTR retried).
enum UnixSocket {
    /// `sun_path` holds 108 bytes including the terminating NUL.
    static let maxPathBytes = 107

    static func withAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R? {
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

    /// A new non-blocking, close-on-exec stream socket (`socket(2)`), or -1 with errno set.
    static func makeSocket() -> Int32 {
        #if canImport(Glibc)
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
        let type = SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC
        #endif
        return socket(AF_UNIX, type, 0)
    }

    /// `connect(2)` retried on EINTR; returns 0 or an errno (EINPROGRESS/EAGAIN for a
    /// non-blocking socket that must wait).
    static func connect(_ fd: Int32, path: String) -> Int32 {
        let rc: Int32? = withAddress(path) { addr, len in
            while true {
                if Glibc.connect(fd, addr, len) == 0 { return 0 }
                if errno != EINTR { return errno }
            }
        }
        return rc ?? ENAMETOOLONG
    }

    /// Waits for `events` on one fd up to `milliseconds`; returns revents (0 on timeout), or -1.
    static func wait(_ fd: Int32, events: Int16, milliseconds: Int32) -> Int16 {
        var p = pollfd(fd: fd, events: events, revents: 0)
        while true {
            let rc = poll(&p, 1, milliseconds)
            if rc >= 0 { return rc == 0 ? 0 : p.revents }
            if errno != EINTR { return -1 }
        }
    }

    /// Makes `fd` non-blocking and close-on-exec (`fcntl`).
    static func configure(_ fd: Int32) -> Bool {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { return false }
        let fdFlags = fcntl(fd, F_GETFD)
        return fdFlags >= 0 && fcntl(fd, F_SETFD, fdFlags | FD_CLOEXEC) == 0
    }

    static var sendFlags: Int32 { Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT) }
}

/// The daemon's control socket: a Unix stream socket speaking the line protocol documented on
/// `ControlRequest`.
///
/// Threading: `start()` runs one `poll(2)` loop on a thread of its own; every socket is
/// non-blocking, so the loop never blocks on a client, and nothing blocks the daemon. Each
/// request line is handed to `handler`, **called on the server's thread**, one request at a
/// time; the daemon makes it thread-safe (e.g. by hopping to its state owner) and keeps it
/// short (it must not wait for a capture to finish). `close()` (or deinit) stops the loop,
/// closes every connection and removes the socket file.
///
/// Limits, so that no client can hurt the daemon: a request line is at most `maxLineLength`
/// bytes (a longer one gets an error reply and the connection is closed); at most
/// `maxClients` connections (another one gets an error line and is closed); a client whose
/// unread replies exceed `maxPendingOutput` bytes is dropped; a connection being closed gets
/// `lingerSeconds` to read its last reply. Replies are sent with `MSG_NOSIGNAL`, so a client
/// that vanishes never raises SIGPIPE.
///
/// Setting up: a stale socket file (nobody answers on it) is replaced; a live one (another
/// daemon answers) or a path that is not a socket is refused. The socket is bound under a
/// temporary name, given mode 0660 (and the configured group), then renamed into place, so it
/// never exists with looser permissions.
public final class ControlServer: @unchecked Sendable {
    // @unchecked Sendable: `lock` guards `state`; everything else is immutable after init.
    // The loop's own mutable state lives in `ControlServerLoop`, touched by one thread only.

    public typealias Handler = @Sendable (ControlRequest) -> ControlReply

    public let path: String
    private let loop: ControlServerLoop
    private let lock = NSLock()
    private enum State { case ready, running(Thread, DispatchSemaphore), closed }
    private var state = State.ready

    /// Creates and binds the socket (not yet accepting: call `start()`).
    public init(path: String, group: String? = nil, maxClients: Int = 16, maxLineLength: Int = 4096,
                maxPendingOutput: Int = 256 * 1024, lingerSeconds: Double = 5,
                handler: @escaping Handler) throws(ControlSocketError) {
        self.path = path
        let listenFD = try Self.bind(path: path, group: group)
        var fds: [Int32] = [-1, -1]
        // pipe2/accept4 need _GNU_SOURCE, which Glibc's module does not define: pipe + fcntl.
        guard pipe(&fds) == 0, UnixSocket.configure(fds[0]), UnixSocket.configure(fds[1]) else {
            let e = errno
            Glibc.close(listenFD.fd)
            unlink(path)
            throw .system(path, "create the wake-up pipe", e)
        }
        loop = ControlServerLoop(path: path, listenFD: listenFD.fd, socketIdentity: listenFD.identity,
                                 wakeRead: fds[0], wakeWrite: fds[1], handler: handler,
                                 maxClients: maxClients, maxLineLength: maxLineLength,
                                 maxPendingOutput: maxPendingOutput, lingerSeconds: lingerSeconds)
    }

    deinit { close() }

    /// Starts the loop thread. Calling it again (or after `close()`) does nothing.
    public func start() {
        lock.lock()
        defer { lock.unlock() }
        guard case .ready = state else { return }
        let done = DispatchSemaphore(value: 0)
        let loop = self.loop
        let thread = Thread {
            loop.run()
            done.signal()
        }
        thread.name = "loopix-control"
        state = .running(thread, done)
        thread.start()
    }

    /// How many connections are open now (for tests and status).
    public var clientCount: Int { loop.clientCount }

    /// Stops the loop, closes every connection and removes the socket file (if it is still
    /// ours). Waits for the loop to finish unless called from the loop's own thread (from the
    /// handler), in which case the loop finishes after the current request.
    public func close() {
        lock.lock()
        let previous = state
        state = .closed
        lock.unlock()
        switch previous {
        case .closed: return
        case .ready: loop.teardown()
        case .running(let thread, let done):
            loop.wake()
            if Thread.current != thread { done.wait() }
        }
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
            let probe = UnixSocket.makeSocket()
            if probe >= 0 {
                let e = UnixSocket.connect(probe, path: path)
                Glibc.close(probe)
                if e == 0 || e == EAGAIN || e == EINPROGRESS {
                    throw ControlSocketError(path: path, message: "another daemon is already listening on this socket")
                }
                guard e == ECONNREFUSED || e == ENOENT else { throw .system(path, "check the existing socket", e) }
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
        let fd = UnixSocket.makeSocket()
        guard fd >= 0 else { throw .system(path, "create a socket", errno) }
        func fail(_ action: String, _ e: Int32) -> ControlSocketError {
            Glibc.close(fd)
            unlink(tmp)
            return .system(path, action, e)
        }
        let rc: Int32 = UnixSocket.withAddress(tmp) { addr, len in Glibc.bind(fd, addr, len) == 0 ? 0 : errno } ?? ENAMETOOLONG
        if rc != 0 {
            Glibc.close(fd)
            throw .system(path, "bind a socket in \(dir)", rc)
        }
        if chmod(tmp, 0o660) != 0 { throw fail("set the socket's mode to 0660", errno) }
        if let gid, chown(tmp, uid_t.max, gid) != 0 { throw fail("give the socket to group \(group ?? "")", errno) }
        if listen(fd, 16) != 0 { throw fail("listen", errno) }
        if rename(tmp, path) != 0 { throw fail("move the socket into place", errno) }
        var now = stat()
        guard stat(path, &now) == 0 else {
            let e = errno
            Glibc.close(fd)
            throw .system(path, "check the new socket", e)
        }
        return (fd, (now.st_dev, now.st_ino))
    }

    static func lookupGroup(_ name: String) -> gid_t? {
        if let n = UInt32(name) { return gid_t(n) }
        var entry = group()
        var result: UnsafeMutablePointer<group>? = nil
        var buffer = [CChar](repeating: 0, count: 16384)
        let rc = getgrnam_r(name, &entry, &buffer, buffer.count, &result)
        guard rc == 0, result != nil else { return nil }
        return entry.gr_gid
    }
}

/// The server's event loop and every connection's state. Owns the listening socket, the
/// wake-up pipe and every client socket; all of them are closed in `teardown()`, once.
/// `@unchecked Sendable`: after `start()` only the loop thread touches it (apart from `wake()`,
/// a write to a pipe, and `clientCount`, an atomic-enough read guarded by `countLock`).
final class ControlServerLoop: @unchecked Sendable {
    final class Client {
        let fd: Int32
        var input: [UInt8] = []
        var output: [UInt8] = []
        var outputStart = 0
        /// Set once the client must go: no more reading; close when the output is sent.
        var closing = false
        var closingDeadline: Double = .infinity
        init(fd: Int32) { self.fd = fd }
        var pending: Int { output.count - outputStart }
    }

    let path: String
    let listenFD: Int32
    let socketIdentity: (dev_t, ino_t)
    let wakeRead: Int32
    let wakeWrite: Int32
    let handler: ControlServer.Handler
    let maxClients: Int
    let maxLineLength: Int
    let maxPendingOutput: Int
    let lingerSeconds: Double
    private var clients: [Client] = []
    private let countLock = NSLock()
    private var count = 0
    private var tornDown = false
    private var readBuffer = [UInt8](repeating: 0, count: 16384)

    init(path: String, listenFD: Int32, socketIdentity: (dev_t, ino_t), wakeRead: Int32, wakeWrite: Int32,
         handler: @escaping ControlServer.Handler, maxClients: Int, maxLineLength: Int,
         maxPendingOutput: Int, lingerSeconds: Double) {
        self.path = path
        self.listenFD = listenFD
        self.socketIdentity = socketIdentity
        self.wakeRead = wakeRead
        self.wakeWrite = wakeWrite
        self.handler = handler
        self.maxClients = maxClients
        self.maxLineLength = maxLineLength
        self.maxPendingOutput = maxPendingOutput
        self.lingerSeconds = lingerSeconds
    }

    var clientCount: Int {
        countLock.lock()
        defer { countLock.unlock() }
        return count
    }

    private func updateCount() {
        countLock.lock()
        count = clients.count
        countLock.unlock()
    }

    func wake() {
        var byte: UInt8 = 1
        _ = Glibc.write(wakeWrite, &byte, 1)
    }

    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    func run() {
        var fds: [pollfd] = []
        while true {
            fds.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
            fds.append(pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0))
            for c in clients {
                var events: Int16 = 0
                if !c.closing { events |= Int16(POLLIN) }
                if c.pending > 0 { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: c.fd, events: events, revents: 0))
            }
            let lingering = clients.contains { $0.closing }
            let rc = poll(&fds, nfds_t(fds.count), lingering ? 250 : -1)
            if rc < 0 {
                if errno == EINTR { continue }
                break
            }
            if fds[0].revents != 0 { break }
            // Clients first (their indexes match `fds`), then new connections.
            let snapshot = clients
            for (i, c) in snapshot.enumerated() {
                let revents = fds[i + 2].revents
                if revents & Int16(POLLNVAL) != 0 { drop(c); continue }
                if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0, !c.closing { readFrom(c) }
                if revents & Int16(POLLOUT) != 0 { flush(c) }
                if revents & Int16(POLLERR) != 0 { drop(c) }
                else if c.closing, c.pending == 0 || (revents & Int16(POLLHUP) != 0 && revents & Int16(POLLIN) == 0) { drop(c) }
            }
            if fds[1].revents & Int16(POLLIN) != 0 { acceptClients() }
            if lingering {
                let t = Self.now()
                for c in clients where c.closing && t > c.closingDeadline { drop(c) }
            }
            updateCount()
        }
        teardown()
    }

    /// Closes everything this loop owns and removes the socket file if it is still ours. Once.
    func teardown() {
        guard !tornDown else { return }
        tornDown = true
        for c in clients { Glibc.close(c.fd) }
        clients.removeAll()
        updateCount()
        Glibc.close(listenFD)
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
        var st = stat()
        if lstat(path, &st) == 0, st.st_dev == socketIdentity.0, st.st_ino == socketIdentity.1 {
            unlink(path)
        }
    }

    private func acceptClients() {
        for _ in 0..<64 {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return  // EAGAIN, or a transient error (EMFILE, ECONNABORTED): try on the next wake-up.
            }
            guard UnixSocket.configure(fd) else {
                Glibc.close(fd)
                continue
            }
            if clients.count >= maxClients {
                let line = ControlReply.failure("too many connections (at most \(maxClients)); try again later").jsonLine
                _ = Array(line.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, UnixSocket.sendFlags) }
                Glibc.close(fd)
                continue
            }
            clients.append(Client(fd: fd))
        }
    }

    private func readFrom(_ c: Client) {
        var n: Int
        repeat {
            n = readBuffer.withUnsafeMutableBytes { recv(c.fd, $0.baseAddress, $0.count, 0) }
        } while n < 0 && errno == EINTR
        if n < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { return }
            drop(c)
            return
        }
        if n == 0 {
            // End of input: a last line without its newline still counts.
            if !c.input.isEmpty {
                let line = c.input
                c.input.removeAll()
                if line.count > maxLineLength { tooLong(c) } else { handle(line, for: c) }
            }
            startClosing(c)
            flush(c)
            return
        }
        c.input.append(contentsOf: readBuffer[0..<n])
        var start = 0
        while !c.closing, let nl = c.input[start...].firstIndex(of: 0x0A) {
            let length = nl - start
            if length > maxLineLength { tooLong(c); break }
            handle(Array(c.input[start..<nl]), for: c)
            start = nl + 1
        }
        if c.closing {
            c.input.removeAll()
        } else {
            c.input.removeFirst(start)
            if c.input.count > maxLineLength { tooLong(c) }
        }
        flush(c)
    }

    private func tooLong(_ c: Client) {
        c.input.removeAll()
        enqueue(ControlReply.failure(.lineTooLong(limit: maxLineLength)), to: c)
        startClosing(c)
    }

    private func startClosing(_ c: Client) {
        guard !c.closing else { return }
        c.closing = true
        c.closingDeadline = Self.now() + lingerSeconds
    }

    private func handle(_ rawLine: [UInt8], for c: Client) {
        var line = rawLine[...]
        if line.last == 0x0D { line = line.dropLast() }
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }  // blank lines are ignored
        let (id, parsed) = ControlRequest.parseWithID(line: Array(line))
        var reply: ControlReply
        switch parsed {
        case .success(let request): reply = handler(request)
        case .failure(let error): reply = .failure(error)
        }
        reply.id = id
        enqueue(reply, to: c)
    }

    private func enqueue(_ reply: ControlReply, to c: Client) {
        guard c.fd >= 0 else { return }
        c.output.append(contentsOf: reply.jsonLine.utf8)
        if c.pending > maxPendingOutput {
            flush(c)
            if c.pending > maxPendingOutput { drop(c) }
        }
    }

    private func flush(_ c: Client) {
        while c.pending > 0 {
            let n = c.output.withUnsafeBytes { raw in
                send(c.fd, raw.baseAddress! + c.outputStart, c.pending, UnixSocket.sendFlags)
            }
            if n > 0 {
                c.outputStart += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
            drop(c)  // EPIPE, ECONNRESET…: the client is gone.
            return
        }
        if c.outputStart > 0 && (c.pending == 0 || c.outputStart > 65536) {
            c.output.removeFirst(c.outputStart)
            c.outputStart = 0
        }
    }

    private func drop(_ c: Client) {
        guard let index = clients.firstIndex(where: { $0 === c }) else { return }
        clients.remove(at: index)
        Glibc.close(c.fd)
        c.closing = true
        c.output.removeAll()
        c.outputStart = 0
    }
}
