#if canImport(Glibc)
import Glibc
#endif
import System

/// Slows down guessing the web token: each address (an IPv6 client by its /64, which one
/// household or phone holds) has `freeTries` wrong tokens, then must wait before its next try:
/// 1 s, 2 s, 4 s … up to `maxDelay` after each further wrong one. A try during the wait is not
/// checked at all (the answer is 429 with Retry-After), so a wrong token costs the guesser time
/// and a right one in the wait does not tell it so. A right token clears the address's count.
///
/// At most `maxAddresses` are remembered; past that, the entry whose last failure is oldest is
/// forgotten first.
public final class TokenGuard: Sendable {
    public let freeTries: Int
    public let maxDelay: Double
    public let maxAddresses: Int

    private struct Failures {
        var count: Int
        var last: UInt64
    }
    private let table = Locked([[UInt8]: Failures]())
    private let now: @Sendable () -> UInt64

    public init(freeTries: Int = 5, maxDelay: Double = 60, maxAddresses: Int = 4096,
                clock: @escaping @Sendable () -> UInt64 = MonotonicClock.now) {
        self.freeTries = freeTries
        self.maxDelay = maxDelay
        self.maxAddresses = maxAddresses
        self.now = clock
    }

    /// Seconds the address must still wait before a token it sends is checked; 0 when it may try now.
    public func wait(for address: String) -> Double {
        let key = Self.key(address), t = now()
        return table.withLock { table in
            guard let f = table[key], f.count >= freeTries else { return 0 }
            let until = f.last + UInt64(delay(after: f.count) * 1e9)
            return t >= until ? 0 : Double(until - t) / 1e9
        }
    }

    /// A wrong token from the address.
    public func failed(_ address: String) {
        let key = Self.key(address), t = now()
        table.withLock { table in
            if table[key] == nil && table.count >= maxAddresses,
               let oldest = table.min(by: { $0.value.last < $1.value.last })?.key {
                table[oldest] = nil
            }
            table[key] = Failures(count: (table[key]?.count ?? 0) + 1, last: t)
        }
    }

    /// The right token from the address.
    public func succeeded(_ address: String) {
        let key = Self.key(address)
        table.withLock { $0[key] = nil }
    }

    /// Seconds to wait after the `count`th wrong token.
    private func delay(after count: Int) -> Double {
        min(maxDelay, Double(1 << min(count - freeTries, 30)))
    }

    /// The address as bytes: IPv4 whole, IPv6 by its first 64 bits; anything else as written.
    static func key(_ address: String) -> [UInt8] {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, address, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            // An IPv4 client on a dual-stack socket arrives as ::ffff:a.b.c.d: keep all of it.
            let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            return mapped ? Array(bytes[12...]) : Array(bytes[0..<8]) + [6]
        }
        return Array(address.utf8)
    }
}
