import Foundation

/// Colour arithmetic shared by the reference pipeline, LUT baking and grain tables.
/// Working space: linear Rec. 709 / sRGB primaries, D65.
public enum ColorMath {
    /// Rec. 709 luminance weights (linear light) — also used on encoded values as "luma".
    public static let lumaWeights = SIMD3<Double>(0.2126, 0.7152, 0.0722)

    /// The sRGB electro-optical transfer function: encoded 0…1 → linear light.
    @inlinable
    public static func srgbToLinear(_ v: Double) -> Double {
        v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    /// Inverse of `srgbToLinear`: linear light → encoded 0…1 (negative inputs give 0).
    @inlinable
    public static func linearToSRGB(_ v: Double) -> Double {
        if v <= 0 { return 0 }
        return v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055
    }

    @inlinable
    public static func srgbToLinear(_ c: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(srgbToLinear(c.x), srgbToLinear(c.y), srgbToLinear(c.z))
    }

    @inlinable
    public static func linearToSRGB(_ c: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(linearToSRGB(c.x), linearToSRGB(c.y), linearToSRGB(c.z))
    }

    @inlinable
    public static func luma(_ c: SIMD3<Double>) -> Double { (c * lumaWeights).sum() }

    @inlinable
    public static func clamp01(_ c: SIMD3<Double>) -> SIMD3<Double> {
        c.clamped(lowerBound: SIMD3(repeating: 0), upperBound: SIMD3(repeating: 1))
    }

    @inlinable
    public static func clamp01(_ v: Double) -> Double { min(max(v, 0), 1) }

    /// Hermite smoothstep: 0 below `lo`, 1 above `hi`, smooth in between.
    @inlinable
    public static func smoothstep(_ lo: Double, _ hi: Double, _ x: Double) -> Double {
        if hi <= lo { return x < lo ? 0 : 1 }
        let t = clamp01((x - lo) / (hi - lo))
        return t * t * (3 - 2 * t)
    }

    /// A fully saturated colour of the given hue (degrees) at lightness 0.5 (HSL).
    public static func hueColor(_ degrees: Double) -> SIMD3<Double> {
        let h = (degrees.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360) / 60
        let x = 1 - abs(h.truncatingRemainder(dividingBy: 2) - 1)
        switch Int(h) {
        case 0: return SIMD3(1, x, 0)
        case 1: return SIMD3(x, 1, 0)
        case 2: return SIMD3(0, 1, x)
        case 3: return SIMD3(0, x, 1)
        case 4: return SIMD3(x, 0, 1)
        default: return SIMD3(1, 0, x)
        }
    }
}
