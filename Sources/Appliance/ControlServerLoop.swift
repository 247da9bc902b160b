#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ControlProtocol
import Foundation
import StrictJSON
import System

/// The server's event loop and every connection's state. Owns the listening socket and every
/// client socket; all are closed in `teardown()`, once. `@unchecked Sendable`: after `start()`
/// only the loop thread touches the clients; `clientCount`, `stopping` and the wake-up pipe
/// are the thread-safe ways in.
final class ControlServerLoop: @unchecked Sendable {
    /// A client's request or error, in the order it came: replied to when it is its turn.
    enum Slot {
        case ready(ControlReply)
        case pending(PendingRequest, ControlRequestID?)
    }

    final class Client {
        let socket: FileDescriptor
        var input: [UInt8] = []
        var output: [UInt8] = []
        var outputStart = 0
        var slots: [Slot] = []
        var inFlight = 0
        /// No more input will come (end of stream).
        var eof = false
        /// The peer is gone: nothing can be written any more.
        var gone = false
        /// The server closes it once its replies are out (or `closingDeadline` passes).
        var closing = false
        var closingDeadline = Deadline.never
        /// When it last sent something or had a reply written (monotonic ns).
        var lastActivity = MonotonicClock.now()
        /// When the unfinished line in `input` began (monotonic ns); nil when there is none.
        var lineStarted: UInt64?

        init(fd: Int32) { socket = FileDescriptor(owning: fd) }
        var fd: Int32 { socket.rawValue }
        var pending: Int { output.count - outputStart }
        /// Nothing asked and unanswered, nothing unsent (half a line asks nothing).
        var idle: Bool { slots.isEmpty && pending == 0 && !hasCompleteLine }
        /// Only waiting: every request it made is claimed and waits on events (`wait-saved`),
        /// nothing unsent, no line to read.
        var onlyWaiting: Bool {
            !slots.isEmpty && pending == 0 && !hasCompleteLine && slots.allSatisfy {
                guard case .pending(let p, _) = $0, case .waitSaved = p.request else { return false }
                return p.isClaimed && p.reply == nil
            }
        }
        /// Nanoseconds since its last activity, as of `now`.
        func idleTime(at now: UInt64) -> UInt64 { now > lastActivity ? now - lastActivity : 0 }
        var hasCompleteLine: Bool { input.contains(0x0A) }
    }

    let path: String
    /// The listening socket, closed by `teardown`.
    let listening: OpenFile
    var listenFD: Int32 { listening.rawValue }
    let socketIdentity: (dev_t, ino_t)
    let wakeup: WakeupPipe
    let dispatch: ControlServer.Dispatch
    let timeout: @Sendable (ControlRequest) -> Double
    let limits: ControlServer.Limits
    let stopping = Locked(false)
    private var clients: [Client] = []
    private let count = Locked(0)
    private let tornDown = Locked(false)
    private var readBuffer = [UInt8](repeating: 0, count: 16384)

    init(path: String, listening: OpenFile, socketIdentity: (dev_t, ino_t), wakeup: WakeupPipe,
         dispatch: @escaping ControlServer.Dispatch, timeout: @escaping @Sendable (ControlRequest) -> Double,
         limits: ControlServer.Limits) {
        self.path = path
        self.listening = listening
        self.socketIdentity = socketIdentity
        self.wakeup = wakeup
        self.dispatch = dispatch
        self.timeout = timeout
        self.limits = limits
    }

    var clientCount: Int { count.withLock { $0 } }

    private func updateCount() {
        let n = clients.count
        count.withLock { $0 = n }
    }

    /// Whether to read from `c` now: not past its end, not closing, room for another request
    /// and no complete line still waiting in its buffer (so the buffer stays small).
    private func wantsInput(_ c: Client) -> Bool {
        !c.eof && !c.closing && !c.gone && c.inFlight < limits.maxInFlight && !c.hasCompleteLine
    }

    func run(_ token: WorkerThread.Token) {
        var fds: [pollfd] = []
        while !token.shouldStop && !stopping.withLock({ $0 }) {
            fds.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wakeup.readFD, events: Int16(POLLIN), revents: 0))
            fds.append(pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0))
            var next = Deadline.never
            for c in clients {
                var events: Int16 = 0
                if wantsInput(c) { events |= Int16(POLLIN) }
                if c.pending > 0 && !c.gone { events |= Int16(POLLOUT) }
                // A socket polled for nothing is left out: a hung-up peer would report POLLHUP
                // on every round while its requests are still being answered.
                fds.append(pollfd(fd: events == 0 ? -1 : c.fd, events: events, revents: 0))
                next = min(next, deadline(of: c))
            }
            let rc = poll(&fds, nfds_t(fds.count), next.pollTimeout)
            if rc < 0 {
                if errno == EINTR { continue }
                Log.error("\(path): poll failed (\(Errno.current)); the control socket stops answering")
                break
            }
            if fds[0].revents != 0 { wakeup.drain() }
            // Clients first (their indexes match `fds`), then new connections.
            let snapshot = clients
            for (i, c) in snapshot.enumerated() {
                let revents = fds[i + 2].revents
                if revents & Int16(POLLNVAL) != 0 { drop(c); continue }
                if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { readFrom(c) }
                if revents & Int16(POLLHUP | POLLERR) != 0 {
                    // Gone both ways: what it sent is still answered (a script may fire a
                    // capture and hang up), but nothing is written back.
                    c.gone = true
                    c.eof = true
                    c.output.removeAll()
                    c.outputStart = 0
                }
            }
            if fds[1].revents & Int16(POLLIN) != 0 { acceptClients() }
            // Answers that came back, "busy" for expired requests, new lines, idle and linger limits.
            for c in clients {
                collectReplies(c)
                processInput(c)
                collectReplies(c)  // errors found in new lines go out in the same round
                flush(c)
                guard clients.contains(where: { $0 === c }) else { continue }
                // A client gone with only claimed requests left (a wait-saved nobody reads): what
                // it asked for is under way already; its answers would go nowhere.
                if c.gone && c.slots.allSatisfy({ if case .pending(let p, _) = $0 { return p.isClaimed } else { return false } }) {
                    drop(c)
                    continue
                }
                let now = MonotonicClock.now()
                if !c.closing, let started = c.lineStarted, now >= started + UInt64(limits.lineTimeout * 1e9) {
                    c.input.removeAll()
                    c.lineStarted = nil
                    enqueue(.failure("a request line must end with a newline within \(JSONValue.format(limits.lineTimeout)) s; closing the connection"), to: c)
                    startClosing(c)
                    flush(c)
                    guard clients.contains(where: { $0 === c }) else { continue }
                }
                if c.closing && c.slots.isEmpty && (c.pending == 0 || c.closingDeadline.hasPassed) { drop(c); continue }
                if !c.closing && !c.eof && c.idle && c.idleTime(at: now) >= UInt64(limits.idleTimeout * 1e9) {
                    enqueue(.failure("idle for \(JSONValue.format(limits.idleTimeout)) s; closing the connection"), to: c)
                    startClosing(c)
                    flush(c)
                }
            }
            updateCount()
        }
        teardown()
    }

    /// The earliest moment the loop must look at `c` again without being woken.
    private func deadline(of c: Client) -> Deadline {
        var d = c.closing ? c.closingDeadline : Deadline.never
        for slot in c.slots {
            // Only a request nobody has claimed can expire; a claimed one wakes the loop when answered.
            if case .pending(let p, _) = slot, p.reply == nil, !p.isClaimed { d = min(d, p.deadline) }
        }
        if !c.closing && c.idle {
            d = min(d, Deadline(nanoseconds: c.lastActivity + UInt64(limits.idleTimeout * 1e9)))
        }
        if !c.closing, let started = c.lineStarted {
            d = min(d, Deadline(nanoseconds: started + UInt64(limits.lineTimeout * 1e9)))
        }
        return d
    }

    /// Closes everything this loop owns and removes the socket file if it is still ours. Once.
    func teardown() {
        let first = tornDown.withLock { t -> Bool in
            defer { t = true }
            return !t
        }
        guard first else { return }
        for c in clients { drop(c) }  // each Client's FileDescriptor closes its socket
        updateCount()
        listening.close()
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
            let client = Client(fd: fd)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            do { try client.socket.setNonBlocking() } catch { continue }
            // Keep the kernel's share of unread replies small, so the output limit means something.
            var size: Int32 = 16 * 1024
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            if clients.count >= limits.maxClients && !evictOne() {
                let line = ControlReply.failure("too many connections (at most \(limits.maxClients)); try again later").jsonLine
                _ = Array(line.utf8).withUnsafeBytes { try? UnixSocket.send(fd, $0) }
                continue  // `client` goes out of scope: closed
            }
            clients.append(client)
        }
    }

    /// Makes room for a new client by closing one connection that holds a slot without using it:
    /// the longest-stalled unfinished line, else the longest idle (once idle `evictAfter`
    /// seconds), else the longest waiter. False when every connection is doing work.
    private func evictOne() -> Bool {
        let now = MonotonicClock.now()
        let open = clients.filter { !$0.closing && !$0.gone }
        if let victim = open.filter({ $0.lineStarted != nil && $0.idle }).min(by: { $0.lineStarted! < $1.lineStarted! }) {
            evict(victim, "closing a connection whose request line is unfinished: another client needs the slot")
            return true
        }
        let minimum = UInt64(limits.evictAfter * 1e9)
        if let victim = open.filter({ $0.idle && $0.idleTime(at: now) >= minimum }).min(by: { $0.lastActivity < $1.lastActivity }) {
            evict(victim, "closing an idle connection: another client needs the slot")
            return true
        }
        if let victim = open.filter(\.onlyWaiting).min(by: { $0.lastActivity < $1.lastActivity }) {
            // Its waits are let go here; the controller's answers, when they come, go nowhere.
            var reply = ControlReply.failure("closing a connection that was only waiting: another client needs the slot; ask again")
            if case .pending(_, let id)? = victim.slots.first { reply.id = id }
            evict(victim, reply)
            return true
        }
        return false
    }

    private func evict(_ victim: Client, _ why: String) { evict(victim, ControlReply.failure(why)) }

    private func evict(_ victim: Client, _ reply: ControlReply) {
        enqueue(reply, to: victim)
        flush(victim)
        drop(victim)
    }

    /// Reads what is there (one `recv`); end of stream sets `eof`.
    private func readFrom(_ c: Client) {
        guard !c.eof else { return }
        var n: Int
        repeat {
            n = readBuffer.withUnsafeMutableBytes { recv(c.fd, $0.baseAddress, $0.count, 0) }
        } while n < 0 && errno == EINTR
        if n < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { return }
            c.eof = true
            c.gone = true
            return
        }
        c.lastActivity = MonotonicClock.now()
        if n == 0 { c.eof = true; return }
        if !c.closing { c.input.append(contentsOf: readBuffer[0..<n]) }
    }

    /// Turns complete lines into requests while the client has room for more; a last line
    /// without its newline counts at the end of the stream.
    private func processInput(_ c: Client) {
        guard !c.closing else { return }
        var start = 0
        while c.inFlight < limits.maxInFlight, let nl = c.input[start...].firstIndex(of: 0x0A) {
            if nl - start > limits.maxLineLength { tooLong(c); return }
            handle(Array(c.input[start..<nl]), for: c)
            start = nl + 1
        }
        if start > 0 { c.input.removeFirst(start) }
        if !c.hasCompleteLine && c.input.count > limits.maxLineLength { tooLong(c); return }
        if c.eof && !c.hasCompleteLine && c.inFlight < limits.maxInFlight {
            if !c.input.isEmpty {
                handle(c.input, for: c)
                c.input.removeAll()
            }
            startClosing(c)
        }
        // The clock of an unfinished line starts with its first byte (or when the server reads
        // again, if it had stopped reading this client while its requests were answered).
        if c.input.isEmpty || c.hasCompleteLine || c.inFlight >= limits.maxInFlight {
            c.lineStarted = nil
        } else if c.lineStarted == nil {
            c.lineStarted = MonotonicClock.now()
        }
    }

    private func tooLong(_ c: Client) {
        c.input.removeAll()
        c.slots.append(.ready(.failure(.lineTooLong(limit: limits.maxLineLength))))
        startClosing(c)
    }

    private func startClosing(_ c: Client) {
        guard !c.closing else { return }
        c.closing = true
        c.closingDeadline = .after(seconds: limits.lingerSeconds)
    }

    private func handle(_ rawLine: [UInt8], for c: Client) {
        var line = rawLine[...]
        if line.last == 0x0D { line = line.dropLast() }
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }  // blank lines are ignored
        let (id, parsed) = ControlRequest.parseWithID(line: Array(line))
        switch parsed {
        case .failure(let error):
            var reply = ControlReply.failure(error)
            reply.id = id
            c.slots.append(.ready(reply))
        case .success(let request):
            let wakeup = self.wakeup
            let pending = PendingRequest(request, deadline: .after(seconds: timeout(request))) { wakeup.signal() }
            c.slots.append(.pending(pending, id))
            c.inFlight += 1
            dispatch(pending)
        }
    }

    /// Moves the replies that are due, in order, from the front of the client's slots to its
    /// output: answered requests, errors, and "busy" for requests whose deadline passed unclaimed.
    private func collectReplies(_ c: Client) {
        while let first = c.slots.first {
            var reply: ControlReply
            switch first {
            case .ready(let r):
                reply = r
            case .pending(let p, let id):
                if let answered = p.reply {
                    reply = answered
                } else if p.deadline.hasPassed, p.expire() {
                    reply = .failure("busy: the daemon did not answer in \(JSONValue.format(timeout(p.request))) s")
                } else {
                    return
                }
                reply.id = id
                c.inFlight -= 1
            }
            c.slots.removeFirst()
            c.lastActivity = MonotonicClock.now()
            if !c.gone { enqueue(reply, to: c) }
            guard clients.contains(where: { $0 === c }) else { return }
        }
    }

    private func enqueue(_ reply: ControlReply, to c: Client) {
        c.output.append(contentsOf: reply.jsonLine.utf8)
        if c.pending > limits.maxPendingOutput {
            flush(c)
            if c.pending > limits.maxPendingOutput {
                Log.warning("\(path): dropped a client that does not read its replies (\(c.pending) bytes unread)")
                drop(c)
            }
        }
    }

    private func flush(_ c: Client) {
        guard !c.gone, clients.contains(where: { $0 === c }) else { return }
        let fd = c.fd
        while c.pending > 0 {
            let start = c.outputStart
            let sent: Result<Int, Errno> = c.output.withUnsafeBytes { raw in
                do throws(Errno) { return .success(try UnixSocket.send(fd, UnsafeRawBufferPointer(rebasing: raw[start...]))) } catch { return .failure(error) }
            }
            guard case .success(let n) = sent else {
                // EPIPE, ECONNRESET…: the client is gone; what it asked for is still carried out.
                c.gone = true
                c.output.removeAll()
                c.outputStart = 0
                return
            }
            if n == 0 { break }
            c.outputStart += n
        }
        if c.outputStart > 0 && (c.pending == 0 || c.outputStart > 65536) {
            c.output.removeFirst(c.outputStart)
            c.outputStart = 0
        }
    }

    /// Forgets the client; its socket closes with the last reference. Requests it still had
    /// waiting are let go: unclaimed ones never run, claimed ones finish unheard.
    private func drop(_ c: Client) {
        guard let index = clients.firstIndex(where: { $0 === c }) else { return }
        clients.remove(at: index)
        c.closing = true
        c.gone = true
        c.output.removeAll()
        c.outputStart = 0
        for slot in c.slots { if case .pending(let p, _) = slot { _ = p.expire() } }
        c.slots.removeAll()
        c.inFlight = 0
    }
}
