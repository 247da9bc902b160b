import XCTest
@testable import FilmCore

/// Grain, measured statistically on what the fast path renders (flat grey frames, so every
/// change is grain): density mean and deviation, spatial and cross-channel correlation,
/// animation, and the absence of tiling.
final class GrainTests: XCTestCase {
    func grainPreset(amount: Double = 0.5, size: Double = 1, roughness: Double = 0.5, clumping: Double = 0,
                     monochromatic: Double = 0) -> Preset {
        var p = BuiltinPresets.clean
        p.grain = Preset.Grain(amount: amount, size: size, roughness: roughness, clumping: clumping, monochromatic: monochromatic)
        return p
    }

    /// Density change of one channel of a flat frame of `level` after grain.
    func densityNoise(_ preset: Preset, level: UInt8 = 128, width: Int = 192, height: Int = 128, frame: UInt64 = 0,
                      channel: Int = 1, seed: UInt64 = 1) -> [Double] {
        let out = TestImages.render(TestImages.flat(width, height, level), preset, RenderSettings(grainSeed: seed), frame: frame)
        let base = GrainModel.density(Double(level) / 255)
        return Stats.density(Stats.channel(out, channel)).map { $0 - base }
    }

    func testDensityNoiseHasZeroMeanAndDeviationRisingWithAmount() {
        var previous = 0.0
        for amount in [0.2, 0.5, 1.0] {
            let noise = densityNoise(grainPreset(amount: amount))
            let sd = Stats.sd(noise)
            let expected = GrainModel.densityDeviation(128.0 / 255, Preset.Grain(amount: amount))
            XCTAssertEqual(Stats.mean(noise), 0, accuracy: 0.1 * expected, "zero mean in density at amount \(amount)")
            XCTAssertEqual(sd, expected, accuracy: 0.12 * expected, "σ_D at amount \(amount)")
            XCTAssertGreaterThan(sd, previous * 1.5)
            previous = sd
        }
        XCTAssertEqual(Stats.sd(densityNoise(grainPreset(amount: 0))), 0, "amount 0 leaves the frame alone")
    }

    func testDeviationFollowsTheDensityResponseCurve() {
        let preset = grainPreset(amount: 0.6)
        let levels: [UInt8] = [40, 128, 215]
        let measured = levels.map { Stats.sd(densityNoise(preset, level: $0)) }
        let expected = levels.map { GrainModel.densityDeviation(Double($0) / 255, preset.grain) }
        for i in levels.indices {
            XCTAssertEqual(measured[i], expected[i], accuracy: 0.15 * expected[i] + 0.002, "level \(levels[i])")
        }
        XCTAssertGreaterThan(measured[1], measured[0], "midtones grainier than shadows")
        XCTAssertGreaterThan(measured[1], measured[2], "midtones grainier than highlights")
    }

    func testAutocorrelationWidthGrowsWithSize() {
        var previous = -1.0
        for size in [0.5, 1.0, 2.0, 4.0] {
            let noise = densityNoise(grainPreset(amount: 0.5, size: size, roughness: 0))
            let c = Stats.autocorrelation(noise, width: 192, height: 128, lag: 1)
            XCTAssertGreaterThan(c, previous + 0.05, "lag-1 correlation at size \(size): \(c)")
            previous = c
        }
        XCTAssertLessThan(Stats.autocorrelation(densityNoise(grainPreset(size: 0.5, roughness: 0)), width: 192, height: 128, lag: 3), 0.2)
    }

    func testCrossChannelCorrelationFollowsMonochromatic() {
        for mono in [0.0, 0.5, 1.0] {
            let preset = grainPreset(amount: 0.5, monochromatic: mono)
            let out = TestImages.render(TestImages.flat(192, 128, 128), preset)
            let r = Stats.channel(out, 0), b = Stats.channel(out, 2)
            XCTAssertEqual(Stats.correlation(r, b), mono, accuracy: 0.1, "monochromatic \(mono)")
        }
    }

    func testConsecutiveFramesCorrelateAsTheRateSays() {
        let preset = grainPreset(amount: 0.5)
        let look = FilmLook(preset: preset)
        let renderer = FilmRenderer(look: look, width: 64, height: 48)
        let flat = TestImages.flat(64, 48, 128)
        for rate in [1.0, 0.5, 0.25, 0.0] {
            var clock = GrainClock()
            var previous: [Double]? = nil
            var correlations: [Double] = []
            for _ in 0..<40 {
                var frame = flat
                renderer.render(&frame, grainFrame: clock.advance(rate: rate))
                let values = Stats.channel(frame, 1)
                if let previous { correlations.append(Stats.correlation(previous, values)) }
                previous = values
            }
            XCTAssertEqual(Stats.mean(correlations), 1 - rate, accuracy: 0.12, "rate \(rate)")
        }
    }

    func testGrainClockCountsWholeFrames() {
        var clock = GrainClock()
        for _ in 0..<100 { _ = clock.advance(rate: 0.25) }
        XCTAssertEqual(clock.frame, 25)
        var frozen = GrainClock()
        for _ in 0..<10 { _ = frozen.advance(rate: 0) }
        XCTAssertEqual(frozen.frame, 0)
    }

    func testNoCorrelationPeakAtTheTilePeriod() {
        let width = GrainTexture.tileSize * 3, height = 64
        let noise = densityNoise(grainPreset(amount: 0.5, size: 1.5), width: width, height: height)
        let atPeriod = Stats.autocorrelation(noise, width: width, height: height, lag: GrainTexture.tileSize)
        let atTwice = Stats.autocorrelation(noise, width: width, height: height, lag: 2 * GrainTexture.tileSize)
        XCTAssertLessThan(abs(atPeriod), 0.05, "correlation at the tile period: \(atPeriod)")
        XCTAssertLessThan(abs(atTwice), 0.08, "correlation at twice the tile period: \(atTwice)")
    }

    func testTextureIsNormalisedAndSeedDependent() {
        let g = Preset.Grain(amount: 0.5, size: 1, clumping: 0.5, monochromatic: 0.3)
        let a = GrainTexture(grain: g, seed: 1), b = GrainTexture(grain: g, seed: 2)
        let values = a.noise.map(Double.init)
        XCTAssertEqual(Stats.mean(values), 0, accuracy: 0.01)
        XCTAssertEqual(Stats.sd(values), 1, accuracy: 0.02)
        XCTAssertNotEqual(a.noise, b.noise)
        XCTAssertEqual(a.noise, GrainTexture(grain: g, seed: 1).noise, "deterministic")
    }

    func testDifferentFramesDifferAndTheSameFrameRepeats() {
        let preset = grainPreset()
        let a = TestImages.render(TestImages.flat(64, 64, 100), preset, frame: 1)
        XCTAssertEqual(a, TestImages.render(TestImages.flat(64, 64, 100), preset, frame: 1))
        XCTAssertNotEqual(a, TestImages.render(TestImages.flat(64, 64, 100), preset, frame: 2))
    }
}
