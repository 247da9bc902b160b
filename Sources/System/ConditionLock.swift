#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A lock with a condition to wait on (a `pthread_mutex_t` and a `pthread_cond_t` that never
/// move: they live in their own allocations): for a thread that sleeps until another one has
/// something for it.
public final class ConditionLock: @unchecked Sendable {
    // @unchecked: the lock and the condition are only touched through pthread calls.
    private let mutex = Lock()
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)  // deadlines are MonotonicClock's
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
    }

    public func lock() { mutex.lock() }
    public func unlock() { mutex.unlock() }

    /// Runs `body` holding the lock.
    public func withLock<R>(_ body: () throws -> R) rethrows -> R { try mutex.withLock(body) }

    /// With the lock held: releases it until `broadcast` (or a spurious wake-up), then holds it again.
    public func wait() { pthread_cond_wait(condition, mutex.mutex) }

    /// With the lock held: as `wait`, but at most until `deadline`; false when it passed.
    @discardableResult
    public func wait(until deadline: Deadline) -> Bool {
        guard deadline != .never else {
            wait()
            return true
        }
        var ts = timespec(tv_sec: Int(deadline.nanoseconds / 1_000_000_000), tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex.mutex, &ts) != ETIMEDOUT
    }

    /// Wakes every thread waiting (call with the lock held, or not).
    public func broadcast() { pthread_cond_broadcast(condition) }
}
