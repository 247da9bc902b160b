import XCTest
@testable import FilmCore

/// Grain, measured statistically on what the fast path renders (flat grey frames, so every
/// change is grain): density mean and deviation, spatial and cross-channel correlation,
/// animation, and the absence of tiling. Frames are windows of the 12 MP reference frame, so a
/// pixel is a film pixel and the grain is the preset's own, unaveraged.
final class GrainTests: XCTestCase {
    func grainPreset(amount: Double = 0.5, size: Double = 1, roughness: Double = 0.5, clumping: Double = 0,
                     monochromatic: Double = 0) -> Preset {
        var p = BuiltinPresets.clean
        p.grain = Preset.Grain(amount: amount, size: size, roughness: roughness, clumping: clumping, monochromatic: monochromatic)
        return p
    }

    static let window = FrameWindow(frameWidth: TestImages.referenceFrame.width, frameHeight: TestImages.referenceFrame.height,
                                    x: 1000, y: 1000)

    /// Density change of one channel of a flat frame of `level` after grain.
    func densityNoise(_ preset: Preset, level: UInt8 = 128, width: Int = 192, height: Int = 128, frame: UInt64 = 0,
                      channel: Int = 1, seed: UInt64 = 1) -> [Double] {
        let out = TestImages.render(TestImages.flat(width, height, level), preset, RenderSettings(grainSeed: seed),
                                    window: Self.window, frame: frame)
        let base = GrainModel.density(Double(level) / 255)
        return Stats.density(Stats.channel(out, channel)).map { $0 - base }
    }

    func testDensityNoiseHasZeroMeanAndDeviationRisingWithAmount() {
        var previous = 0.0
        for amount in [0.2, 0.5, 1.0] {
            let noise = densityNoise(grainPreset(amount: amount), width: 384, height: 256)
            let sd = Stats.sd(noise)
            let expected = GrainModel(Preset.Grain(amount: amount)).densityDeviation(value: 128.0 / 255)
            XCTAssertEqual(Stats.mean(noise), 0, accuracy: 0.1 * expected, "zero mean in density at amount \(amount)")
            XCTAssertEqual(sd, expected, accuracy: 0.12 * expected, "σ_D at amount \(amount)")
            XCTAssertGreaterThan(sd, previous * 1.5)
            previous = sd
        }
        XCTAssertEqual(Stats.sd(densityNoise(grainPreset(amount: 0))), 0, "amount 0 leaves the frame alone")
    }

    func testDeviationFollowsTheDensityCurve() {
        let preset = grainPreset(amount: 0.6)
        let model = GrainModel(preset.grain)
        // Display levels 215, 128, 40: densities 0.07, 0.30, 0.80.
        let levels: [UInt8] = [215, 128, 40]
        let measured = levels.map { Stats.sd(densityNoise(preset, level: $0)) }
        let expected = levels.map { model.densityDeviation(value: Double($0) / 255) }
        for i in levels.indices {
            XCTAssertEqual(measured[i], expected[i], accuracy: 0.15 * expected[i] + 0.002, "level \(levels[i])")
        }
        XCTAssertGreaterThan(measured[1], measured[0], "denser tones grainier near the film base")
        XCTAssertGreaterThan(measured[2], measured[1])
    }

    /// Selwyn's shape: RMS granularity rises from D-min (as √D, Siedentopf), peaks, and falls
    /// towards D-max where the emulsion is used up.
    func testGranularityRisesFromDMinAndFallsTowardsDMax() {
        let variance = GrainModel(grainPreset().grain).referenceVariance
        let sigma = stride(from: 0.05, through: 2.95, by: 0.05).map { GrainModel.densityDeviation(density: $0, variance: variance) }
        let peak = sigma.indices.max { sigma[$0] < sigma[$1] }!
        let peakDensity = 0.05 * Double(peak + 1)
        XCTAssertGreaterThan(peakDensity, 0.8, "the peak is in the mid densities: \(peakDensity)")
        XCTAssertLessThan(peakDensity, 2.0)
        for i in 1..<sigma.count {
            if i <= peak { XCTAssertGreaterThanOrEqual(sigma[i], sigma[i - 1]) } else { XCTAssertLessThan(sigma[i], sigma[i - 1]) }
        }
        XCTAssertEqual(sigma[3] / sigma[0], 2, accuracy: 0.15, "√D near the film base: σ(0.2)/σ(0.05) ≈ 2")
        XCTAssertLessThan(sigma.last!, 0.25 * sigma[peak])
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
            let out = TestImages.render(TestImages.flat(192, 128, 128), preset, window: Self.window)
            let r = Stats.channel(out, 0), b = Stats.channel(out, 2)
            XCTAssertEqual(Stats.correlation(r, b), mono, accuracy: 0.1, "monochromatic \(mono)")
        }
    }

    func testConsecutiveFramesCorrelateAsTheRateSays() {
        let preset = grainPreset(amount: 0.5)
        let look = FilmLook(preset: preset)
        let renderer = FilmRenderer(look: look, width: 64, height: 48, window: Self.window)
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
        let a = TestImages.render(TestImages.flat(64, 64, 100), preset, window: Self.window, frame: 1)
        XCTAssertEqual(a, TestImages.render(TestImages.flat(64, 64, 100), preset, window: Self.window, frame: 1))
        XCTAssertNotEqual(a, TestImages.render(TestImages.flat(64, 64, 100), preset, window: Self.window, frame: 2))
    }

    /// The fast path's grain rows — tile rows copied inside blocks, two mixed in the bands
    /// between blocks, four where blocks meet, in vector lanes where no tile row wraps within
    /// four pixels and one pixel at a time where one does — against `noise(x:y:frame:)`'s
    /// blend of the same quantised texels with exact weights: equal in the copies, within a
    /// level (1/32 σ) and a half where two blocks mix and two levels where four do (weights
    /// in 1/128ths, two roundings). A whole block
    /// period of rows, at window offsets that move the wraps about.
    func testGrainRowsAreTheTexturesNoiseQuantisedInBlocksBandsAndCorners() {
        let texture = GrainTexture(grain: Preset.Grain(amount: 0.5, size: 1, clumping: 0.3, monochromatic: 0.2), seed: 7)
        let width = 300
        var row = [UInt8](repeating: 0, count: width * GrainTexture.texelBytes)
        var worst = 0.0, checked = [0, 0, 0] // pixels read from one, two and four blocks
        for (windowX, windowY) in [(0, 0), (37, 21), (1001, 999)] {
            for y in windowY..<(windowY + GrainTexture.blockSize) {
                texture.quantized.withUnsafeBufferPointer { tile in
                    GrainTexture.fixedBlendWeights.withUnsafeBufferPointer { weights in
                        GrainTexture.bandWeights.withUnsafeBufferPointer { bandWeights in
                            GrainTexture.fillRow(&row, width: width, windowX: windowX, frameY: y, seed: texture.seed, frame: 5,
                                                 tile: tile.baseAddress!, weights: weights.baseAddress!, bandWeights: bandWeights.baseAddress!)
                        }
                    }
                }
                let wy = GrainTexture.blendWeights(GrainTexture.blendPosition(y).position)
                for px in 0..<width {
                    let wx = GrainTexture.blendWeights(GrainTexture.blendPosition(px + windowX).position)
                    let blocks = (wx.0 * wx.1 == 0 ? 1 : 2) * (wy.0 * wy.1 == 0 ? 1 : 2)
                    checked[blocks / 2] += 1
                    let expected = quantisedNoise(texture, x: px + windowX, y: y, frame: 5)
                    let fixed = fixedPointNoise(texture, x: px + windowX, y: y, frame: 5)
                    for k in 0..<3 {
                        XCTAssertEqual(row[px * GrainTexture.texelBytes + k], fixed[k], "(\(px + windowX), \(y)): the fixed-point formula, vector or not")
                        let got = Double(Int8(bitPattern: row[px * GrainTexture.texelBytes + k]))
                        let error = abs(got - expected[k])
                        worst = max(worst, error)
                        if blocks == 1 {
                            XCTAssertEqual(got, expected[k], "a copied texel at (\(px + windowX), \(y)), channel \(k)")
                        }
                        XCTAssertLessThanOrEqual(error, blocks == 4 ? 2 : 1.5, "(\(px + windowX), \(y)) from \(blocks) blocks, channel \(k)")
                    }
                }
            }
        }
        XCTAssertTrue(checked.allSatisfy { $0 > 1000 }, "every kind of pixel checked: \(checked)")
        XCTAssertGreaterThan(worst, 0.4, "the mixes do round")
    }

    /// Each row of the fast path's tile is followed by its first block's width of texels again
    /// (so a run of grain reads it without wrapping), and the rest of the row is the texture's
    /// noise quantised.
    func testTheTileRowsArePaddedWithTheirOwnStart() {
        let texture = GrainTexture(grain: Preset.Grain(amount: 0.5, size: 1, clumping: 0.3, monochromatic: 0.2), seed: 3)
        let stride = GrainTexture.tileRowStride, n = GrainTexture.texelBytes
        XCTAssertEqual(texture.quantized.count, GrainTexture.tileSize * stride)
        for y in [0, 1, 128, 255] {
            let row = Array(texture.quantized[(y * stride)..<((y + 1) * stride)])
            XCTAssertEqual(Array(row[GrainTexture.tileRowBytes...]), Array(row[0..<(GrainTexture.blockSize * n)]), "row \(y)")
            for x in [0, 63, 64, 255] {
                for c in 0..<3 {
                    let v = Double(texture.noise[(y * GrainTexture.tileSize + x) * 3 + c]) * GrainTexture.quantizationScale
                    XCTAssertEqual(Double(Int8(bitPattern: row[x * n + c])), min(max(v.rounded(), -127), 127), "(\(x), \(y)), channel \(c)")
                }
            }
        }
    }

    /// The three mixing loops, which LLVM vectorises (8 bytes a step, then a tail a byte at a
    /// time), at every length up to 70 bytes and at texels and weights that push a mix past the texel range:
    /// each byte is the mix in 32-bit arithmetic, clamped to −128…127 (so the vector code's
    /// saturating pack is the clamp): mixes up to ±180 and corners up to ±255 included.
    func testTheMixLoopsAreTheClampedMixAtEveryLength() {
        var rng = SplitMix64(seed: 11)
        let extremes: [Int8] = [-128, -127, 127, 126, 0, 1, -1]
        func bytes(_ n: Int) -> [UInt8] {
            (0..<n).map { i in UInt8(bitPattern: i % 3 == 0 ? extremes[Int(rng.next() % 7)] : Int8(truncatingIfNeeded: rng.next())) }
        }
        let full = GrainTexture.fixedBlendWeights.max { $0.0 + $0.1 < $1.0 + $1.1 }!
        XCTAssertEqual(Int(full.0) + Int(full.1), 181, "the weights' largest sum, which mixes past ±127")
        func expected(_ a: UInt8, _ wa: Int16, _ b: UInt8, _ wb: Int16) -> Int32 {
            (Int32(Int8(bitPattern: a)) * Int32(wa) + Int32(Int8(bitPattern: b)) * Int32(wb) + 64) >> 7
        }
        func clamp(_ v: Int32) -> UInt8 { UInt8(bitPattern: Int8(min(max(v, -128), 127))) }
        var saturated = 0
        for count in 0...70 {
            let a = bytes(count), c = bytes(count), d = bytes(count), e = bytes(count)
            // Weight pairs as the bands have them (a pair sums to at most 181), the largest half the time.
            let pairs = (0..<count).map { _ in rng.next() % 2 == 0 ? full : GrainTexture.fixedBlendWeights[Int(rng.next() % 64)] }
            let wa = pairs.map(\.0), wc = pairs.map(\.1)
            var rows = [UInt8](repeating: 0, count: count), band = rows, corner = rows
            GrainTexture.mixRows(&rows, a, full.0, c, full.1, count: count)
            GrainTexture.mixBand(&band, a, c, weights: wa, wc, count: count)
            GrainTexture.mixCorner(&corner, a, c, d, e, weights: wa, wc, full.0, full.1, count: count)
            for k in 0..<count {
                let m = expected(a[k], full.0, c[k], full.1)
                if abs(m) > 127 { saturated += 1 }
                XCTAssertEqual(rows[k], clamp(m), "rows, byte \(k) of \(count)")
                XCTAssertEqual(band[k], clamp(expected(a[k], wa[k], c[k], wc[k])), "band, byte \(k) of \(count)")
                let top = expected(a[k], wa[k], c[k], wc[k]), bottom = expected(d[k], wa[k], e[k], wc[k])
                XCTAssertEqual(corner[k], clamp((top * Int32(full.0) + bottom * Int32(full.1) + 64) >> 7), "corner, byte \(k) of \(count)")
            }
        }
        XCTAssertGreaterThan(saturated, 100, "mixes beyond the texel range were checked")
    }

    /// The fast path's arithmetic written out for one pixel, one channel at a time: texel
    /// mixes in 1/128ths, the two across first where four blocks meet, clamped at the end.
    func fixedPointNoise(_ texture: GrainTexture, x: Int, y: Int, frame: UInt64) -> [UInt8] {
        let px = GrainTexture.blendPosition(x), py = GrainTexture.blendPosition(y)
        let (wx0, wx1) = GrainTexture.fixedBlendWeights[px.position], (wy0, wy1) = GrainTexture.fixedBlendWeights[py.position]
        func texel(_ dx: Int, _ dy: Int, _ k: Int) -> Int16 {
            let o = GrainTexture.blockOffset(seed: texture.seed, frame: frame, bx: px.block + dx, by: py.block + dy)
            let i = GrainTexture.quantizedIndex(x: x + o.x, y: y + o.y)
            return Int16(Int8(bitPattern: texture.quantized[i + k]))
        }
        return (0..<3).map { k in
            func across(_ dy: Int) -> Int16 {
                wx1 == 0 ? texel(0, dy, k) : wx0 == 0 ? texel(1, dy, k) : GrainTexture.mix(texel(0, dy, k), wx0, texel(1, dy, k), wx1)
            }
            let n = wy1 == 0 ? across(0) : wy0 == 0 ? across(1) : GrainTexture.mix(across(0), wy0, across(1), wy1)
            return GrainTexture.clampedTexel(n)
        }
    }

    /// What `noise(x:y:frame:)` computes, from the quantised texels (in 1/32 σ, clamped to
    /// ±127) instead of the exact ones, clamped to the texel range as the fast path's are.
    func quantisedNoise(_ texture: GrainTexture, x: Int, y: Int, frame: UInt64) -> SIMD3<Double> {
        let px = GrainTexture.blendPosition(x), py = GrainTexture.blendPosition(y)
        let wx = GrainTexture.blendWeights(px.position), wy = GrainTexture.blendWeights(py.position)
        var sum = SIMD3<Double>.zero
        for (dy, weightY) in [(0, wy.0), (1, wy.1)] {
            for (dx, weightX) in [(0, wx.0), (1, wx.1)] where weightX * weightY != 0 {
                let o = GrainTexture.blockOffset(seed: texture.seed, frame: frame, bx: px.block + dx, by: py.block + dy)
                let i = GrainTexture.quantizedIndex(x: x + o.x, y: y + o.y)
                let texel = SIMD3((0..<3).map { Double(Int8(bitPattern: texture.quantized[i + $0])) })
                sum += weightX * weightY * texel
            }
        }
        return sum.clamped(lowerBound: SIMD3(repeating: -128), upperBound: SIMD3(repeating: 127))
    }
}
