import XCTest
@testable import FilmCore

/// Each colour stage's defining property, on the reference implementation.
final class ColorStageTests: XCTestCase {
    func testSRGBTransferRoundTrips() {
        for i in 0...255 {
            let v = Double(i) / 255
            XCTAssertEqual(ColorMath.linearToSRGB(ColorMath.srgbToLinear(v)), v, accuracy: 1e-12)
        }
        XCTAssertEqual(ColorMath.srgbToLinear(0.5), 0.214, accuracy: 0.001)
    }

    func testZeroEVIsIdentityAndPlusOneDoublesLinearLight() {
        let c = SIMD3<Double>(0.1, 0.25, 0.4)
        XCTAssertEqual(ReferencePipeline.exposure(c, stops: 0), c)
        XCTAssertEqual(ReferencePipeline.exposure(c, stops: 1), c * 2)
        XCTAssertEqual(ReferencePipeline.exposure(c, stops: -2), c / 4)
        // Through the whole colour pipeline of a neutral preset, 0 EV changes nothing.
        let neutral = ReferencePipeline(preset: BuiltinPresets.clean, settings: RenderSettings(ev: 0))
        for v in stride(from: 0.0, through: 1.0, by: 0.05) {
            let out = neutral.color(SIMD3(repeating: v))
            XCTAssertEqual(out.x, v, accuracy: 1e-9)
        }
        // +1 EV doubles the linear value (below clipping).
        let brighter = ReferencePipeline(preset: BuiltinPresets.clean, settings: RenderSettings(ev: 1))
        let mid = ColorMath.linearToSRGB(0.2)
        XCTAssertEqual(ColorMath.srgbToLinear(brighter.color(SIMD3(repeating: mid)).y), 0.4, accuracy: 1e-9)
    }

    func testWhiteBalanceWarmsAndKeepsWhiteLuminance() {
        let gains = ReferencePipeline.whiteBalanceGains(temperature: 0.5, tint: 0.2)
        XCTAssertGreaterThan(gains.x, gains.z, "warm means more red than blue")
        XCTAssertEqual(ColorMath.luma(gains), 1, accuracy: 1e-12)
        XCTAssertEqual(ReferencePipeline.whiteBalanceGains(temperature: 0, tint: 0), SIMD3(repeating: 1))
    }

    func testSaturationZeroGivesGreyAndOneIsIdentity() {
        let colors: [SIMD3<Double>] = [SIMD3(0.8, 0.1, 0.2), SIMD3(0.05, 0.6, 0.9), SIMD3(0.3, 0.3, 0.01)]
        for c in colors {
            let grey = ReferencePipeline.saturation(c, 0)
            XCTAssertEqual(grey.x, grey.y, accuracy: 1e-12)
            XCTAssertEqual(grey.y, grey.z, accuracy: 1e-12)
            XCTAssertEqual(ColorMath.luma(grey), ColorMath.luma(c), accuracy: 1e-12, "luminance is kept")
            XCTAssertEqual(ReferencePipeline.saturation(c, 1), c)
        }
        // A whole image under a saturation-0 preset comes out grey.
        var preset = BuiltinPresets.clean
        preset.grain.amount = 0
        preset.grade.saturation = 0
        let out = TestImages.render(TestImages.sweep(32, 32), preset)
        for i in stride(from: 0, to: out.pixels.count, by: 3) {
            XCTAssertLessThanOrEqual(abs(Int(out.pixels[i]) - Int(out.pixels[i + 1])), 1)
            XCTAssertLessThanOrEqual(abs(Int(out.pixels[i + 1]) - Int(out.pixels[i + 2])), 1)
        }
    }

    func testToneCurvesAreMonotonePassThroughTheirPointsAndNeverOvershoot() {
        let curves: [ToneCurve] = BuiltinPresets.all.flatMap { [$0.curves.master, $0.curves.red, $0.curves.green, $0.curves.blue] }
            + [ToneCurve(0, 0.1, 0.1, 0.9, 1), ToneCurve(0, 0, 0, 1, 1), ToneCurve(0.2, 0.2, 0.8, 0.8, 0.8)]
        for curve in curves {
            for (x, y) in zip(ToneCurve.inputs, curve.points) {
                XCTAssertEqual(curve(x), y, accuracy: 1e-12, "passes through (\(x), \(y))")
            }
            var previous = -Double.infinity
            for i in 0...1000 {
                let x = Double(i) / 1000
                let y = curve(x)
                XCTAssertGreaterThanOrEqual(y, previous - 1e-12, "monotone at \(x) for \(curve.points)")
                previous = y
                // No overshoot: within the segment's end values.
                let segment = min(Int(x * 4), 3)
                let lo = min(curve.points[segment], curve.points[segment + 1])
                let hi = max(curve.points[segment], curve.points[segment + 1])
                XCTAssertTrue(y >= lo - 1e-12 && y <= hi + 1e-12, "overshoot at \(x) for \(curve.points)")
            }
        }
    }

    func testSplitToningTintsShadowsAndHighlightsApart() {
        let p = Preset.SplitTone(shadowHue: 200, shadowSaturation: 1, highlightHue: 30, highlightSaturation: 1)
        let dark = ReferencePipeline.splitTone(SIMD3(repeating: 0.25), p)
        let light = ReferencePipeline.splitTone(SIMD3(repeating: 0.8), p)
        XCTAssertGreaterThan(dark.z, dark.x, "shadows go blue-cyan")
        XCTAssertGreaterThan(light.x, light.z, "highlights go orange")
        XCTAssertEqual(ColorMath.luma(dark), 0.25, accuracy: 0.01, "luma is kept")
        XCTAssertEqual(ReferencePipeline.splitTone(SIMD3(repeating: 0.4), Preset.SplitTone()), SIMD3(repeating: 0.4))
    }

    func testFadeLiftsBlackToItsLevel() {
        for amount in [0.0, 0.05, 0.2] {
            XCTAssertEqual(ReferencePipeline.fade(.zero, amount), SIMD3(repeating: amount))
            XCTAssertEqual(ReferencePipeline.fade(SIMD3(repeating: 1), amount).x, 1, accuracy: 1e-12)
        }
        var preset = BuiltinPresets.clean
        preset.grain.amount = 0
        preset.fade = 0.2
        let out = TestImages.render(TestImages.flat(8, 8, 0), preset)
        XCTAssertEqual(Int(out.pixels[0]), 51, "black lifted to 0.2 × 255")
    }

    func testFilmClampBoundsTheOutput() {
        var preset = BuiltinPresets.clean
        preset.grain.amount = 0
        preset.grade.saturation = 1.8
        preset.grade.exposure = 1
        preset.clamp = Preset.FilmClamp(black: 0.1, white: 0.8)
        let out = TestImages.render(TestImages.sweep(64, 64), preset)
        let lo = UInt8((0.1 * 255).rounded()), hi = UInt8((0.8 * 255).rounded())
        XCTAssertGreaterThanOrEqual(out.pixels.min()!, lo)
        XCTAssertLessThanOrEqual(out.pixels.max()!, hi)
        XCTAssertEqual(out.pixels.min()!, lo, "black reaches the black point")
        XCTAssertEqual(out.pixels.max()!, hi, "white reaches the white point")
    }

    func testVignetteIsRadiallySymmetricAndLeavesTheCentreAlone() {
        for roundness in [0.0, 1.0] {
            let v = Preset.Vignette(amount: 0.6, midpoint: 0.4, roundness: roundness, feather: 0.5)
            let w = 90, h = 60
            for y in 0..<h {
                for x in 0..<w {
                    let m = v.mask(x: x, y: y, width: w, height: h)
                    XCTAssertEqual(m, v.mask(x: w - 1 - x, y: y, width: w, height: h), accuracy: 1e-12)
                    XCTAssertEqual(m, v.mask(x: x, y: h - 1 - y, width: w, height: h), accuracy: 1e-12)
                }
            }
            XCTAssertEqual(v.mask(x: w / 2, y: h / 2, width: w, height: h), 1, "centre untouched")
            XCTAssertLessThan(v.mask(x: 0, y: 0, width: w, height: h), 0.5, "corners darkened")
        }
        // A circle (roundness 1): equal distances from the centre give equal masks.
        let circle = Preset.Vignette(amount: 0.6, midpoint: 0.3, roundness: 1, feather: 0.6)
        XCTAssertEqual(circle.mask(x: 80, y: 50, width: 200, height: 100),
                       circle.mask(x: 100, y: 30, width: 200, height: 100), accuracy: 1e-9)
        // Rendered: the centre pixel of a flat image is unchanged, the corner darker.
        var preset = BuiltinPresets.clean
        preset.grain.amount = 0
        preset.vignette = Preset.Vignette(amount: 0.5, midpoint: 0.3, roundness: 0, feather: 0.5)
        let out = TestImages.render(TestImages.flat(41, 31, 200), preset)
        XCTAssertEqual(out[20, 15], SIMD3(repeating: 200))
        XCTAssertLessThan(out[0, 0].x, 140)
        XCTAssertEqual(out[0, 0], out[40, 30])
    }

    /// A negative amount lightens the corners: the fast path clamps there at white instead of
    /// wrapping, and with either sign it stays within a level of the reference pipeline.
    func testALighteningVignetteClampsAtWhiteAndFollowsTheReference() {
        var preset = BuiltinPresets.clean
        preset.grain.amount = 0
        preset.halation.amount = 0
        preset.vignette = Preset.Vignette(amount: -0.8, midpoint: 0.2, roundness: 0, feather: 0.4)
        let bright = TestImages.render(TestImages.flat(41, 31, 240), preset)
        XCTAssertEqual(bright[0, 0], SIMD3(repeating: 255), "clamped at white")
        XCTAssertEqual(bright[20, 15], SIMD3(repeating: 240), "centre untouched")
        let dark = TestImages.render(TestImages.flat(41, 31, 100), preset)
        XCTAssertGreaterThan(dark[0, 0].x, 150, "corners lightened")
        for amount in [-0.8, 0.6] {
            preset.vignette.amount = amount
            let input = TestImages.sweep(96, 72)
            let settings = RenderSettings(grainEnabled: false)
            let fast = TestImages.render(input, preset, settings)
            let reference = ReferencePipeline(preset: preset, settings: settings).render(input, grain: nil)
            let worst = zip(fast.pixels, reference.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
            XCTAssertLessThanOrEqual(worst, 1, "amount \(amount)")
        }
    }
}
