#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A mutual-exclusion lock (a `pthread_mutex_t` that never moves: it lives in its own
/// allocation). `Synchronization.Mutex` would do on Linux, but this works the same on every
/// Swift 6.0 platform.
public final class Lock: @unchecked Sendable {
    // @unchecked: the mutex is only touched through pthread calls, which are thread-safe.
    /// Internal: `ConditionLock` waits on it.
    let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` holding the lock. Keep it short: no sleeping, no I/O, no waiting.
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A value guarded by a lock: the one escape hatch from Sendable checking for state shared
/// between threads. Every access to the value goes through `withLock`, so the unchecked
/// conformance holds.
public final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = Lock()

    public init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value. Keep it short: no sleeping, no I/O.
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
