#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An open file (or socket) shared by reference, where a `~Copyable` `FileDescriptor` cannot go
/// (optionals, results, a response handed between threads, a loop's listening socket), and its
/// size when opened. Its one owner is
/// this object: the descriptor is closed when the last reference goes, unless it was handed on
/// with `release()` to a new owner (a C library that closes it).
public final class OpenFile: @unchecked Sendable {
    // @unchecked: `descriptor` changes only in `release`, under `lock`.
    private let lock = Lock()
    private var descriptor: Int32
    public let size: UInt64

    /// Takes ownership of `fd` (open, and not owned elsewhere).
    public init(owning fd: Int32, size: UInt64) {
        descriptor = fd
        self.size = size
    }

    /// Opens `name` in `directory` (or `path` when `directory` is nil) read-only without
    /// following a link at the name, and keeps it only when it is a regular file (and, with
    /// `nonEmpty`, not empty); nil otherwise.
    public static func regular(_ name: String, in directory: Int32? = nil, nonEmpty: Bool = false) -> OpenFile? {
        let fd = directory.map { openat($0, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) } ?? open(name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, !nonEmpty || st.st_size > 0 else {
            _ = Glibc.close(fd)
            return nil
        }
        return OpenFile(owning: fd, size: UInt64(st.st_size))
    }

    /// The descriptor, for calls that read it; valid while this object lives and has not
    /// released it.
    public var rawValue: Int32 { lock.withLock { descriptor } }

    /// `fstat(2)`.
    public func status() -> stat? {
        var st = stat()
        return fstat(rawValue, &st) == 0 ? st : nil
    }

    /// Hands the descriptor to a new owner; this object no longer closes it.
    public func release() -> Int32 {
        lock.withLock {
            defer { descriptor = -1 }
            return descriptor
        }
    }

    /// Closes it now (a listening socket that must stop accepting at once); later calls, and
    /// the deinit, do nothing.
    public func close() {
        let fd = release()
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    deinit {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
    }
}
