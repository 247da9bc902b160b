#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An error number from a system call, as a value (the role swift-system's `Errno` plays):
/// prints as `strerror` text and the number, `No such file or directory (errno 2)`.
public struct Errno: Error, RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno`, read right after a failed call.
    public static var current: Errno { Errno(errno) }

    /// `strerror` text without the number: "No such file or directory".
    public var message: String { String(cString: strerror(rawValue)) }

    public var description: String { "\(message) (errno \(rawValue))" }

    public static let noSuchFile = Errno(ENOENT)
    public static let interrupted = Errno(EINTR)
    public static let wouldBlock = Errno(EAGAIN)
    public static let exists = Errno(EEXIST)
    public static let noSpace = Errno(ENOSPC)
    public static let busy = Errno(EBUSY)
    public static let permissionDenied = Errno(EACCES)
    public static let notPermitted = Errno(EPERM)
    public static let brokenPipe = Errno(EPIPE)
    public static let connectionReset = Errno(ECONNRESET)
    public static let invalid = Errno(EINVAL)
    public static let isDirectory = Errno(EISDIR)
    public static let tooManySymlinks = Errno(ELOOP)
}

/// A system call that failed: what it was done to, what was being done, and the errno — one
/// line, `"/var/lib/loopix/counter: cannot open for reading: Permission denied (errno 13)"`.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path, device or other thing the call was about.
    public let target: String
    /// What was being done, as a verb phrase ("open for reading", "bind a socket").
    public let action: String
    public let errno: Errno

    public init(_ target: String, _ action: String, _ errno: Errno) {
        self.target = target
        self.action = action
        self.errno = errno
    }

    public var description: String { "\(target): cannot \(action): \(errno)" }
}

/// Retries `body` while it fails with EINTR; returns its result or the errno it failed with.
/// `body` returns −1 (setting errno) on failure, as most system calls do.
@inlinable
public func retryingInterrupts<T: BinaryInteger>(_ body: () -> T) -> Result<T, Errno> {
    while true {
        let rc = body()
        if rc >= 0 { return .success(rc) }
        let e = errno
        if e != EINTR { return .failure(Errno(e)) }
    }
}
