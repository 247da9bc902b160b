import Foundation

/// Advances the grain pattern with an integer frame counter, never a float clock.
/// `rate` 1 gives a new pattern every frame; 0.25 every fourth frame on average; 0 freezes it.
/// The motion sensor sets the rate (a still camera: slow grain).
public struct GrainClock: Sendable, Equatable {
    public private(set) var frame: UInt64 = 0
    /// Fraction of a grain frame carried over, in 1/65536ths.
    private var carry: UInt32 = 0

    public init() {}

    /// Called once per displayed frame; returns the grain frame to render.
    public mutating func advance(rate: Double) -> UInt64 {
        let step = UInt32((min(max(rate, 0), 1) * 65536).rounded())
        carry += step
        frame &+= UInt64(carry >> 16)
        carry &= 0xFFFF
        return frame
    }
}

/// SplitMix64: a small, fast, well-distributed deterministic generator.
struct SplitMix64 {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    mutating func unit() -> Double { (Double(next() >> 11) + 1) / 9_007_199_254_740_992 }

    /// Standard normal (Box–Muller).
    mutating func gaussian() -> Double {
        (-2 * Foundation.log(unit())).squareRoot() * Foundation.cos(2 * Double.pi * unit())
    }

    /// A stateless hash of several words (for per-block, per-frame offsets).
    static func hash(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: UInt64) -> UInt64 {
        var g = SplitMix64(seed: a ^ (b &* 0x9E37_79B9_7F4A_7C15))
        _ = g.next()
        g.state ^= c &* 0xC2B2_AE3D_27D4_EB4F
        _ = g.next()
        g.state ^= d &* 0x1656_67B1_9E37_79F9
        return g.next()
    }
}
