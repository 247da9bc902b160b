#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Time that only moves forward (`CLOCK_MONOTONIC`), for every timeout and interval: a Pi has
/// no real-time clock, and its wall clock can jump by days when NTP first answers.
/// Kernel event timestamps (GPIO edges, V4L2 buffers, input events) use the same clock.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary point (boot).
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Seconds since the same point, as a Double.
    public static func seconds() -> Double { Double(now()) / 1e9 }
}

/// A point on the monotonic clock by which something must happen.
public struct Deadline: Comparable, Sendable, Hashable {
    /// `MonotonicClock.now()` nanoseconds.
    public let nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// `seconds` from now (negative and NaN count as now; huge values saturate).
    public static func after(seconds: Double) -> Deadline {
        let now = MonotonicClock.now()
        guard seconds > 0 else { return Deadline(nanoseconds: now) }
        let ns = seconds * 1e9
        let add = ns >= Double(UInt64.max - 1 - now) ? UInt64.max - 1 - now : UInt64(ns)  // never `.never` itself
        return Deadline(nanoseconds: now + add)
    }

    public static let never = Deadline(nanoseconds: .max)

    public var hasPassed: Bool { MonotonicClock.now() >= nanoseconds }

    /// Seconds left (0 once passed).
    public var remainingSeconds: Double {
        let now = MonotonicClock.now()
        return nanoseconds > now ? Double(nanoseconds - now) / 1e9 : 0
    }

    /// Milliseconds left, rounded up, as `poll(2)` takes them: 0 once passed, −1 for `never`,
    /// at most `Int32.max`.
    public var pollTimeout: Int32 {
        if self == .never { return -1 }
        let now = MonotonicClock.now()
        guard nanoseconds > now else { return 0 }
        let ms = (nanoseconds - now + 999_999) / 1_000_000
        return ms >= UInt64(Int32.max) ? Int32.max : Int32(ms)
    }

    public static func < (a: Deadline, b: Deadline) -> Bool { a.nanoseconds < b.nanoseconds }
}
