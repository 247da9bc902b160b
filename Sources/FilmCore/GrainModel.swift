import Foundation

/// How film grain changes a tone: in the optical-density domain (D = −log10 T), with a
/// density response that is strongest in the midtones and weaker in deep shadows and
/// highlights, as in a real emulsion where few grains are developed at either end.
public enum GrainModel {
    /// Density standard deviation at the response peak for `amount` 1.
    public static let densityDeviationAtFullAmount = 0.12
    /// The darkest transmittance taken into density (D ≤ 3).
    static let minimumTransmittance = 0.001

    /// Response 0…1 of a tone (display value 0…1): a bell peaking in the midtones; clumping
    /// moves the peak towards the dense (dark) tones, where crystals cluster.
    public static func response(_ value: Double, clumping: Double) -> Double {
        let peak = 0.5 - 0.15 * clumping
        let d = value - peak
        return Foundation.exp(-(d * d) / (2 * 0.22 * 0.22))
    }

    /// Density standard deviation for a tone.
    public static func densityDeviation(_ value: Double, _ g: Preset.Grain) -> Double {
        densityDeviationAtFullAmount * g.amount * response(value, clumping: g.clumping)
    }

    public static func density(_ transmittance: Double) -> Double {
        -Foundation.log10(max(transmittance, minimumTransmittance))
    }

    /// One channel: T → D, D + σ(T)·noise, back to T (clamped to 0…1).
    public static func apply(_ value: Double, noise: Double, _ g: Preset.Grain) -> Double {
        let d = density(value) + densityDeviation(value, g) * noise
        return ColorMath.clamp01(Foundation.pow(10, -d))
    }
}

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
