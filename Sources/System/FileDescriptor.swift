#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An open file descriptor with exactly one owner: it cannot be copied, and it is closed when
/// its owner lets go of it (`deinit`) unless it was closed or handed on (`take`) before.
/// Calls retry EINTR and throw `Errno`.
public struct FileDescriptor: ~Copyable {
    /// The raw descriptor, for calls this type does not wrap; valid while `self` lives.
    public let rawValue: Int32

    /// Takes ownership of `rawValue` (which must be open and not owned elsewhere).
    public init(owning rawValue: Int32) { self.rawValue = rawValue }

    deinit { _ = Glibc.close(rawValue) }

    /// `open(2)` with `O_CLOEXEC` added.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(Errno) -> FileDescriptor {
        switch retryingInterrupts({ Glibc.open(path, flags | O_CLOEXEC, mode) }) {
        case .success(let fd): return FileDescriptor(owning: fd)
        case .failure(let e): throw e
        }
    }

    /// `openat(2)` relative to this directory, with `O_CLOEXEC` added.
    public func openAt(_ name: String, _ flags: Int32, mode: mode_t = 0o644) throws(Errno) -> FileDescriptor {
        switch retryingInterrupts({ Glibc.openat(rawValue, name, flags | O_CLOEXEC, mode) }) {
        case .success(let fd): return FileDescriptor(owning: fd)
        case .failure(let e): throw e
        }
    }

    /// Gives the raw descriptor to the caller, who then owns it; `self` no longer closes it.
    public consuming func take() -> Int32 {
        let fd = rawValue
        discard self
        return fd
    }

    /// Closes now and reports a failure (`close` errors matter for files just written).
    public consuming func close() throws(Errno) {
        let fd = rawValue
        discard self
        if Glibc.close(fd) != 0 && errno != EINTR { throw Errno.current }
    }

    /// `read(2)` into `buffer`; 0 at end of file. Retries EINTR.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        switch retryingInterrupts({ Glibc.read(rawValue, buffer.baseAddress, buffer.count) }) {
        case .success(let n): return n
        case .failure(let e): throw e
        }
    }

    /// `write(2)` of all of `bytes` (short writes continue). Retries EINTR.
    public func writeAll(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var done = 0
        while done < bytes.count {
            switch retryingInterrupts({ Glibc.write(rawValue, bytes.baseAddress! + done, bytes.count - done) }) {
            case .success(let n): done += n
            case .failure(let e): throw e
            }
        }
    }

    /// `fsync(2)`.
    public func sync() throws(Errno) {
        if case .failure(let e) = retryingInterrupts({ fsync(rawValue) }) { throw e }
    }

    /// `fstat(2)`.
    public func status() throws(Errno) -> stat {
        var st = stat()
        if fstat(rawValue, &st) != 0 { throw Errno.current }
        return st
    }

    /// Sets `O_NONBLOCK` (and keeps the other status flags).
    public func setNonBlocking() throws(Errno) {
        let flags = fcntl(rawValue, F_GETFL)
        guard flags >= 0, fcntl(rawValue, F_SETFL, flags | O_NONBLOCK) == 0 else { throw Errno.current }
    }

    /// Waits for `events` (`POLLIN`, `POLLOUT`) up to `milliseconds` (−1: forever); returns
    /// revents, 0 on timeout.
    public func poll(_ events: Int16, milliseconds: Int32) throws(Errno) -> Int16 {
        var p = pollfd(fd: rawValue, events: events, revents: 0)
        switch retryingInterrupts({ Glibc.poll(&p, 1, milliseconds) }) {
        case .success(let n): return n == 0 ? 0 : p.revents
        case .failure(let e): throw e
        }
    }
}
