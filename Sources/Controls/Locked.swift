import Foundation

/// A value guarded by a lock: the one escape hatch from Sendable checking that the device
/// twins (simulated camera, scripted motion) share.
///
/// `Synchronization.Mutex` would do, but it needs macOS 15; `NSLock` works wherever Swift 6.0
/// runs. Every access to `value` goes through `withLock`, so the unchecked conformance holds.
public final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    public init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value. Keep it short: no sleeping, no I/O.
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
