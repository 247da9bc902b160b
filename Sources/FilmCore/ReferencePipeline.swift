import Foundation
import Raster

/// The film pipeline written to be read: one function per stage, in `Double`, on one pixel
/// at a time. The fast path (`FilmLook`, `FilmRenderer`) bakes these same functions into
/// tables and is tested against this implementation.
public struct ReferencePipeline: Sendable {
    public let preset: Preset
    public let settings: RenderSettings
    private let master: MonotoneCubic
    private let red: MonotoneCubic
    private let green: MonotoneCubic
    private let blue: MonotoneCubic

    public init(preset: Preset, settings: RenderSettings = RenderSettings()) {
        self.preset = preset
        self.settings = settings
        master = MonotoneCubic(xs: ToneCurve.inputs, ys: preset.curves.master.points)
        red = MonotoneCubic(xs: ToneCurve.inputs, ys: preset.curves.red.points)
        green = MonotoneCubic(xs: ToneCurve.inputs, ys: preset.curves.green.points)
        blue = MonotoneCubic(xs: ToneCurve.inputs, ys: preset.curves.blue.points)
    }

    // MARK: Colour stages (everything a 3D LUT can hold)

    /// Exposure through film clamp, for one display-encoded colour (0…1 per channel).
    public func color(_ encoded: SIMD3<Double>) -> SIMD3<Double> {
        var linear = ColorMath.srgbToLinear(encoded)
        linear = Self.exposure(linear, stops: settings.ev + preset.grade.exposure)
        var c: SIMD3<Double>
        if let cube = preset.colorLUT {
            // A user LUT takes the place of grade, curves and split toning.
            let shaped = Self.shoulder(linear, peak: highlightPeak)
            c = ColorMath.clamp01(cube.apply(ColorMath.linearToSRGB(ColorMath.clamp01(shaped))))
        } else {
            linear = Self.whiteBalance(linear, temperature: preset.grade.temperature, tint: preset.grade.tint)
            linear = Self.saturation(linear, preset.grade.saturation)
            c = ColorMath.linearToSRGB(ColorMath.clamp01(Self.shoulder(linear, peak: highlightPeak)))
            c = curves(c)
            c = Self.splitTone(c, preset.splitTone)
        }
        c = Self.fade(c, preset.fade)
        return Self.clamp(c, preset.clamp)
    }

    /// What exposure multiplies linear light by before the film sees it (EV and the look's).
    public var exposureGain: Double { Foundation.pow(2, settings.ev + preset.grade.exposure) }

    /// An upper bound of the linear values exposure, white balance and saturation can make
    /// from inputs in 0…1 (saturation s moves a channel at most s times as far from luma).
    var highlightPeak: Double {
        let exposed = Foundation.pow(2, settings.ev + preset.grade.exposure)
        guard preset.colorLUT == nil else { return exposed }
        let gains = Self.whiteBalanceGains(temperature: preset.grade.temperature, tint: preset.grade.tint).max()
        return exposed * gains * max(1, preset.grade.saturation)
    }

    /// Film's shoulder: when exposure can push linear light past 1 (peak > 1), the range
    /// knee…peak is rolled off smoothly into knee…1 instead of clipping; below the knee, and
    /// whenever peak ≤ 1, values are untouched. Smooth highlights also keep the baked LUT exact.
    public static func shoulder(_ linear: SIMD3<Double>, peak: Double) -> SIMD3<Double> {
        guard peak > 1 else { return linear }
        let knee = max(0.5, 1 / peak)
        let width = 1 - knee
        let norm = Foundation.tanh((peak - knee) / width)
        func roll(_ x: Double) -> Double {
            x <= knee ? x : knee + width * Foundation.tanh((x - knee) / width) / norm
        }
        return SIMD3(roll(linear.x), roll(linear.y), roll(linear.z))
    }

    /// Multiplies linear light by 2^stops: +1 doubles it.
    public static func exposure(_ linear: SIMD3<Double>, stops: Double) -> SIMD3<Double> {
        linear * Foundation.pow(2, stops)
    }

    /// Channel gains for warm/cool (red against blue) and tint (green against magenta),
    /// normalised so that white keeps its luminance.
    public static func whiteBalanceGains(temperature: Double, tint: Double) -> SIMD3<Double> {
        let gains = SIMD3<Double>(1 + 0.3 * temperature, 1 - 0.2 * tint, 1 - 0.3 * temperature)
        return gains / ColorMath.luma(gains)
    }

    public static func whiteBalance(_ linear: SIMD3<Double>, temperature: Double, tint: Double) -> SIMD3<Double> {
        linear * whiteBalanceGains(temperature: temperature, tint: tint)
    }

    /// Moves each channel away from (s > 1) or towards (s < 1) the pixel's luminance; 0 is grey.
    /// Above 1, the boost eases off smoothly as a channel nears zero (a soft gamut limit: the
    /// smallest of the wanted boost and the room left, taken as a smooth 4-norm minimum), so
    /// saturated colours never clip, and primaries stay as they are.
    public static func saturation(_ linear: SIMD3<Double>, _ s: Double) -> SIMD3<Double> {
        if s == 1 { return linear }
        let y = ColorMath.luma(linear)
        var effective = s
        if s > 1 {
            let lowest = linear.min()
            // The saturation at which the lowest channel would fall to a tenth of luma.
            let room = lowest < y ? 0.9 * y / (y - lowest) - 1 : Double.infinity
            let wanted = s - 1
            effective = room <= 0 ? 1 : 1 + Foundation.pow(Foundation.pow(wanted, -4) + Foundation.pow(room, -4), -0.25)
        }
        return (SIMD3(repeating: y) + effective * (linear - SIMD3(repeating: y))).clamped(lowerBound: .zero, upperBound: SIMD3(repeating: .infinity))
    }

    /// The master curve on every channel, then each channel's own curve.
    public func curves(_ c: SIMD3<Double>) -> SIMD3<Double> {
        let m = SIMD3(master.evaluate(c.x), master.evaluate(c.y), master.evaluate(c.z))
        return SIMD3(red.evaluate(m.x), green.evaluate(m.y), blue.evaluate(m.z))
    }

    /// Adds the shadow hue to dark tones and the highlight hue to light ones as a chroma
    /// offset with zero luma, so brightness stays; `balance` moves the crossover.
    public static func splitTone(_ c: SIMD3<Double>, _ p: Preset.SplitTone) -> SIMD3<Double> {
        if p.shadowSaturation == 0 && p.highlightSaturation == 0 { return c }
        let l = ColorMath.luma(c)
        let pivot = 0.5 - 0.35 * p.balance
        let highlightWeight = ColorMath.smoothstep(pivot - 0.35, pivot + 0.35, l)
        let shadowWeight = (1 - highlightWeight) * ColorMath.smoothstep(0, 0.15, l)
        let highlightFalloff = highlightWeight * (1 - ColorMath.smoothstep(0.9, 1, l))
        func chroma(_ hue: Double) -> SIMD3<Double> {
            let tint = ColorMath.hueColor(hue)
            return tint - SIMD3(repeating: ColorMath.luma(tint))
        }
        let shift = 0.5 * p.shadowSaturation * shadowWeight * chroma(p.shadowHue)
            + 0.5 * p.highlightSaturation * highlightFalloff * chroma(p.highlightHue)
        return ColorMath.clamp01(c + shift)
    }

    /// Lifts black to `amount`, compressing the range above it.
    public static func fade(_ c: SIMD3<Double>, _ amount: Double) -> SIMD3<Double> {
        SIMD3(repeating: amount) + c * (1 - amount)
    }

    /// Maps 0…1 onto the clamp's black…white.
    public static func clamp(_ c: SIMD3<Double>, _ p: Preset.FilmClamp) -> SIMD3<Double> {
        ColorMath.clamp01(SIMD3(repeating: p.black) + c * (p.white - p.black))
    }

    // MARK: Spatial stages

    /// Vignette: scales display values by the mask at the pixel's centre.
    public static func vignette(_ c: SIMD3<Double>, x: Int, y: Int, width: Int, height: Int, _ p: Preset.Vignette) -> SIMD3<Double> {
        ColorMath.clamp01(c * p.mask(x: x, y: y, width: width, height: height))
    }

    /// Grain: each channel's value is a transmittance T; its optical density D = −log10 T is
    /// moved by `noise` (unit variance) times the density deviation the film gives that tone
    /// through this output's pixel (`variance`, the texture's `apertureVariance`).
    public static func grain(_ c: SIMD3<Double>, noise: SIMD3<Double>, variance: Double) -> SIMD3<Double> {
        SIMD3(GrainModel.apply(c.x, noise: noise.x, variance: variance), GrainModel.apply(c.y, noise: noise.y, variance: variance),
              GrainModel.apply(c.z, noise: noise.z, variance: variance))
    }

    /// out = original + intensity × (graded − original).
    public static func blend(original: SIMD3<Double>, graded: SIMD3<Double>, intensity: Double) -> SIMD3<Double> {
        original + intensity * (graded - original)
    }

    // MARK: Whole images

    /// Renders an image stage by stage. `grain` supplies the texture (nil: no grain).
    public func render(_ image: RGBImage, grain: GrainTexture?, grainFrame: UInt64 = 0) -> RGBImage {
        var out = image
        let useGrain = settings.grainEnabled && !preset.grain.isOff && grain != nil
        // Light first: halation and the date stamp, on the scene's linear light.
        let stamp = settings.dateStamp.flatMap(DateStamp.init)?.light(frameWidth: image.width, frameHeight: image.height)
        let light: [SIMD3<Double>]? = preset.halation.isOff && stamp == nil ? nil
            : HalationReference.light(image, halation: preset.halation, gain: exposureGain, extra: stamp.map { s in { s.at($0, $1) } })
        for y in 0..<image.height {
            for x in 0..<image.width {
                let p = image[x, y]
                let original = SIMD3<Double>(Double(p.x), Double(p.y), Double(p.z)) / 255
                let exposed = light.map { ColorMath.linearToSRGB(ColorMath.clamp01($0[y * image.width + x])) } ?? original
                var c = color(exposed)
                c = Self.vignette(c, x: x, y: y, width: image.width, height: image.height, preset.vignette)
                if useGrain, let grain {
                    c = Self.grain(c, noise: grain.noise(x: x, y: y, frame: grainFrame), variance: grain.apertureVariance)
                }
                // The stamp is the camera's, not the look's: the original carries it too.
                let shown = stamp.map { ColorMath.linearToSRGB(ColorMath.clamp01(ColorMath.srgbToLinear(original) + $0.at(x, y))) } ?? original
                c = Self.blend(original: shown, graded: c, intensity: settings.intensity)
                let q = (ColorMath.clamp01(c) * 255).rounded(.toNearestOrEven)
                out[x, y] = SIMD3(UInt8(q.x), UInt8(q.y), UInt8(q.z))
            }
        }
        return out
    }
}

extension Preset.Vignette {
    /// Squared-radius scale per axis: 1 for an ellipse that follows the frame, the axis's share
    /// of the longer side for a circle; `roundness` blends the two.
    func axisScales(width: Int, height: Int) -> (x: Double, y: Double) {
        let longer = Double(max(width, height))
        let circleX = Double(width) / longer, circleY = Double(height) / longer
        return (1 + roundness * (circleX - 1), 1 + roundness * (circleY - 1))
    }

    /// Normalised coordinate of pixel centre `i` along an axis of `n` pixels: −1 … 1.
    static func axisCoordinate(_ i: Int, _ n: Int) -> Double {
        (Double(i) + 0.5 - Double(n) / 2) / (Double(n) / 2)
    }

    /// The mask as a function of the squared radius (0 at the centre, 1 at an edge's middle).
    public func mask(radiusSquared r2: Double) -> Double {
        let r = r2.squareRoot()
        let t = ColorMath.smoothstep(midpoint, midpoint + max(feather, 0.01), r)
        return max(0, 1 - amount * t)
    }

    /// The multiplier at pixel (x, y) of a width × height frame: 1 inside `midpoint`.
    public func mask(x: Int, y: Int, width: Int, height: Int) -> Double {
        if amount == 0 { return 1 }
        let s = axisScales(width: width, height: height)
        let u = Self.axisCoordinate(x, width) * s.x, v = Self.axisCoordinate(y, height) * s.y
        return mask(radiusSquared: u * u + v * v)
    }
}
