import Foundation

/// A value guarded by a lock: the module's one escape hatch from Sendable checking.
///
/// `Synchronization.Mutex` would do, but it needs macOS 15; `NSLock` works wherever Swift 6.0
/// runs. Every access to `value` goes through `withLock`, so the unchecked conformance holds.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value. Keep it short: no sleeping, no I/O.
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
