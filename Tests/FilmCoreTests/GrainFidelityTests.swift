import XCTest
@testable import FilmCore

/// Grain as the film makes it, whatever the output size: no block seams, no cell network, and
/// a small render (a preview) that shows what the full-size photo shows when scaled down to it.
final class GrainFidelityTests: XCTestCase {
    /// 18 % grey, display-encoded.
    static let grey: UInt8 = 118

    /// Density change of the green channel of a flat grey window after grain.
    func densityNoise(_ preset: Preset, window: FrameWindow, width: Int, height: Int, seed: UInt64 = 3) -> [Double] {
        let out = TestImages.render(TestImages.flat(width, height, Self.grey), preset, RenderSettings(grainSeed: seed), window: window)
        let base = GrainModel.density(Double(Self.grey) / 255)
        return Stats.density(Stats.channel(out, 1)).map { $0 - base }
    }

    func grainyPresets() -> [Preset] { BuiltinPresets.all.filter { !$0.grain.isOff } }

    // MARK: Seams

    /// Neighbouring pixels differ no more across a 64-pixel block boundary (or a block centre,
    /// where the cross-fade changes pair) than anywhere else, at every output size.
    func testNoSeamsAtBlockBoundariesForEveryPresetAndSize() {
        let frames: [(w: Int, h: Int, name: String)] = [(4056, 3040, "12 MP"), (1920, 1080, "1080p"), (800, 480, "800×480")]
        var worst = (ratio: 0.0, what: "")
        for preset in grainyPresets() {
            for f in frames {
                let width = min(f.w, 768), height = min(f.h, 480)
                let window = FrameWindow(frameWidth: f.w, frameHeight: f.h, x: (f.w - width) / 2, y: (f.h - height) / 2)
                let noise = densityNoise(preset, window: window, width: width, height: height)
                let columns = noise, rows = Stats.transpose(noise, width: width, height: height)
                for phase in [0, GrainTexture.blockSize / 2] {
                    let c = Stats.neighbourDifference(columns, width: width, height: height, originX: window.x,
                                                      period: GrainTexture.blockSize, phase: phase)
                    let r = Stats.neighbourDifference(rows, width: height, height: width, originX: window.y,
                                                      period: GrainTexture.blockSize, phase: phase)
                    for (ratio, axis) in [(c.at / c.elsewhere, "columns"), (r.at / r.elsewhere, "rows")] {
                        XCTAssertLessThanOrEqual(ratio, 1.05, "\(preset.name) at \(f.name), \(axis) phase \(phase)")
                        if ratio > worst.ratio { worst = (ratio, "\(preset.name) \(f.name) \(axis) phase \(phase)") }
                    }
                }
            }
        }
        print("seam ratio, worst: \(String(format: "%.3f", worst.ratio)) (\(worst.what))")
    }

    // MARK: The preview predicts the photo

    /// For every preset: a window of a 4000 × 2400 develop of flat grey, area-averaged 5:1, and
    /// the same window rendered directly in an 800 × 480 frame agree in RMS grain within 15 %
    /// and in radially averaged power spectrum within ±2 dB over the band. RMS is taken above
    /// the 8-bit rounding each render adds (1/12 of a level², 1/25 of that after averaging).
    func testPreviewAgreesWithTheDownscaledPhotoForEveryPreset() {
        let factor = 5, size = 192, patch = 64
        let big = FrameWindow(frameWidth: 800 * factor, frameHeight: 480 * factor, x: 300 * factor, y: 140 * factor)
        let small = FrameWindow(frameWidth: 800, frameHeight: 480, x: 300, y: 140)
        var worstRMS = (0.0, ""), worstDB = (0.0, "")
        for preset in grainyPresets() {
            let photo = TestImages.render(TestImages.flat(size * factor, size * factor, Self.grey), preset, window: big)
            let down = TestImages.boxDownscale(Stats.channel(photo, 1), width: size * factor, height: size * factor, factor: factor)
            let preview = Stats.channel(TestImages.render(TestImages.flat(size, size, Self.grey), preset, window: small), 1)
            // In density, above the rounding floor.
            let perLevel = 1 / (Double(Self.grey) * Foundation.log(10))
            let downD = down.map { GrainModel.density($0 / 255) }, previewD = preview.map { GrainModel.density($0 / 255) }
            let floor = perLevel * perLevel / 12
            let rmsDown = max(Stats.sd(downD) * Stats.sd(downD) - floor / 25, 0).squareRoot()
            let rmsPreview = max(Stats.sd(previewD) * Stats.sd(previewD) - floor, 0).squareRoot()
            let rmsError = abs(rmsPreview / rmsDown - 1)
            XCTAssertLessThanOrEqual(rmsError, 0.15, "\(preset.name): RMS preview \(rmsPreview), photo scaled down \(rmsDown)")
            if rmsError > worstRMS.0 { worstRMS = (rmsError, preset.name) }

            let a = Stats.radialSpectrum(downD, width: size, height: size, size: patch)
            let b = Stats.radialSpectrum(previewD, width: size, height: size, size: patch)
            // The band: from 3 cycles per patch to Nyquist, less the rounding floor's white power.
            for i in 3...(patch / 2) {
                let pa = a[i] - floor / 25, pb = b[i] - floor
                guard pa > 0, pb > 0 else { XCTFail("\(preset.name): no grain power at \(i)/\(patch)"); continue }
                let dB = abs(10 * Foundation.log10(pb / pa))
                XCTAssertLessThanOrEqual(dB, 2, "\(preset.name): spectrum at \(i)/\(patch) cycles per pixel")
                if dB > worstDB.0 { worstDB = (dB, "\(preset.name) at \(i)/\(patch)") }
            }
        }
        print("preview vs photo scaled down: worst RMS \(String(format: "%.1f", 100 * worstRMS.0)) % (\(worstRMS.1)), "
              + "worst spectrum \(String(format: "%.2f", worstDB.0)) dB (\(worstDB.1))")
    }

    /// Sub-pixel grain averages down instead of growing, yet the coarse stocks still show grain
    /// in an 800 × 480 preview: at least one 8-bit level RMS on 18 % grey.
    func testSmallOutputsSeeWeakerGrainButCoarseStocksStillShow() {
        for preset in [BuiltinPresets.delta3200, BuiltinPresets.panf50] {
            let model = GrainModel(preset.grain)
            let kept = model.apertureVariance(scale: 5) / model.apertureVariance(scale: 1)
            print("\(preset.name): \(String(format: "%.0f", 100 * kept)) % of the grain variance kept at 1/5 the size")
            XCTAssertLessThan(kept, preset.grain.size < 1 ? 0.3 : 0.9, preset.name)
        }
        // Crystals alone, far smaller than the pixel: variance falls as the pixel's area grows
        // (Selwyn's law, σ·√area constant).
        let fine = GrainModel(Preset.Grain(amount: 0.5, size: 0.5, simplex: 0, worley: 0))
        let ratio = fine.apertureVariance(scale: 16) / fine.apertureVariance(scale: 8)
        XCTAssertEqual(ratio, 0.25, accuracy: 0.03, "sub-pixel crystals average down as 1/area")
        for preset in [BuiltinPresets.delta3200, BuiltinPresets.hp5, BuiltinPresets.trix400] {
            let window = FrameWindow(frameWidth: 800, frameHeight: 480, x: 200, y: 100)
            let out = TestImages.render(TestImages.flat(256, 256, Self.grey), preset, window: window)
            let levels = Stats.sd(Stats.channel(out, 1))
            XCTAssertGreaterThan(levels, 1, "\(preset.name) at 800×480: \(levels) levels RMS")
        }
    }

    // MARK: Blobs, not a cell web

    /// A cell network hides from second-order statistics (autocorrelation, power spectrum) but
    /// not from fourth-order ones. Any linear filter of a Gaussian random field (random blobs)
    /// gives Gaussian values, excess kurtosis 0, as do phase-randomised copies of any field.
    /// Cellular (Worley) noise is cones with creases between them: its curvature is nearly
    /// constant inside a cell and piles up on the borders, so Laplacian-of-Gaussian responses at
    /// the clump scale are strongly platykurtic. The score is the largest |excess kurtosis of the
    /// field's LoG − that of phase-randomised copies| at σ 1.5 and 2 pixels.
    static func webScore(_ field: [Double], size: Int) -> Double {
        var rng = SplitMix64(seed: 11)
        let copies = (0..<3).map { _ in WebMeasure.phaseRandomised(field, size: size, &rng) }
        return [1.5, 2.0].map { sigma in
            let own = WebMeasure.excessKurtosis(WebMeasure.laplacianOfGaussian(field, size: size, sigma: sigma))
            let null = Stats.mean(copies.map { WebMeasure.excessKurtosis(WebMeasure.laplacianOfGaussian($0, size: size, sigma: sigma)) })
            return abs(own - null)
        }.max()!
    }

    func testTheCellWebDetectorSeesTheOldDelta3200Grain() {
        let old = WebMeasure.legacyCellularGrain(BuiltinPresets.delta3200.grain, size: 256)
        let score = Self.webScore(old, size: 256)
        print("web score of the old Delta 3200 grain (Gaussian + Worley layers): \(String(format: "%.2f", score))")
        XCTAssertGreaterThan(score, 0.25, "the detector must flag a cell network")
    }

    func testClumpedStocksAreBlobsNotACellWeb() {
        let window = FrameWindow(frameWidth: 4056, frameHeight: 3040, x: 1500, y: 1200)
        for preset in [BuiltinPresets.delta3200, BuiltinPresets.hp5, BuiltinPresets.trix400] {
            let noise = densityNoise(preset, window: window, width: 256, height: 256)
            let score = Self.webScore(noise, size: 256)
            print("web score of \(preset.name): \(String(format: "%.3f", score))")
            XCTAssertLessThan(score, 0.12, "\(preset.name) grain has the curvature statistics of a cell network")
        }
    }
}

/// The statistics behind the cell-web test.
enum WebMeasure {
    static func excessKurtosis(_ v: [Double]) -> Double {
        let m = Stats.mean(v)
        var s2 = 0.0, s4 = 0.0
        for x in v {
            let d = (x - m) * (x - m)
            s2 += d
            s4 += d * d
        }
        s2 /= Double(v.count)
        s4 /= Double(v.count)
        return s4 / (s2 * s2) - 3
    }

    /// The field blurred by a Gaussian of `sigma`, then its five-point Laplacian (wrapping).
    static func laplacianOfGaussian(_ f: [Double], size: Int, sigma: Double) -> [Double] {
        let b = blur(f, size: size, sigma: sigma)
        var out = [Double](repeating: 0, count: b.count)
        for y in 0..<size {
            let up = ((y + size - 1) % size) * size, down = ((y + 1) % size) * size
            for x in 0..<size {
                let left = (x + size - 1) % size, right = (x + 1) % size
                out[y * size + x] = b[y * size + left] + b[y * size + right] + b[up + x] + b[down + x] - 4 * b[y * size + x]
            }
        }
        return out
    }

    /// The field with its Fourier amplitudes kept and its phases replaced by those of white noise.
    static func phaseRandomised(_ f: [Double], size: Int, _ rng: inout SplitMix64) -> [Double] {
        let fft = FFT2D(size: size)
        var re = f, im = [Double](repeating: 0, count: f.count)
        fft.transform(&re, &im)
        var nre = (0..<f.count).map { _ in rng.gaussian() }, nim = [Double](repeating: 0, count: f.count)
        fft.transform(&nre, &nim)
        for i in re.indices {
            let amplitude = (re[i] * re[i] + im[i] * im[i]).squareRoot()
            let n = max((nre[i] * nre[i] + nim[i] * nim[i]).squareRoot(), 1e-300)
            re[i] = amplitude * nre[i] / n
            im[i] = amplitude * nim[i] / n
        }
        fft.transform(&re, &im, inverse: true)
        return re.map { $0 / Double(f.count) }
    }

    /// The grain field Loopix drew before grain was defined on the film (for the detector's
    /// positive control): blurred Gaussian noise plus Worley cellular noise (cells 2.5 × the
    /// grain size, weighted worley·(1 + 2·clumping)), each normalised; the faint simplex
    /// mottle is left out, it has no edges.
    static func legacyCellularGrain(_ g: Preset.Grain, size: Int) -> [Double] {
        var rng = SplitMix64(seed: 5)
        let s = min(max(g.size, 0.5), 4)
        var gaussian = (0..<(size * size)).map { _ in rng.gaussian() }
        gaussian = blur(gaussian, size: size, sigma: 0.6 * s)
        let cell = 2.5 * s, cells = max(2, Int((Double(size) / cell).rounded())), c = Double(size) / Double(cells)
        let points = (0..<(cells * cells)).map { _ in SIMD2(rng.unit(), rng.unit()) * c }
        var worley = [Double](repeating: 0, count: size * size)
        for y in 0..<size {
            for x in 0..<size {
                let cx = Int(Double(x) / c), cy = Int(Double(y) / c)
                var best = Double.infinity
                for dy in -1...1 {
                    for dx in -1...1 {
                        let ix = cx + dx, iy = cy + dy
                        let p = points[((iy + cells) % cells) * cells + (ix + cells) % cells] + SIMD2(Double(ix), Double(iy)) * c
                        let d = SIMD2(Double(x) + 0.5, Double(y) + 0.5) - p
                        best = min(best, (d * d).sum())
                    }
                }
                worley[y * size + x] = -best.squareRoot() / c
            }
        }
        let a = normalised(gaussian), b = normalised(worley)
        let w = g.worley * (1 + 2 * g.clumping)
        return normalised(a.indices.map { g.gaussian * a[$0] + w * b[$0] })
    }

    static func normalised(_ v: [Double]) -> [Double] {
        let m = Stats.mean(v), s = Stats.sd(v)
        return v.map { ($0 - m) / s }
    }

    /// Separable Gaussian blur wrapping around the edges.
    static func blur(_ v: [Double], size: Int, sigma: Double) -> [Double] {
        let radius = Int((3 * sigma).rounded(.up))
        let kernel = (-radius...radius).map { Foundation.exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = kernel.reduce(0, +)
        var tmp = v, out = v
        for y in 0..<size {
            for x in 0..<size {
                var acc = 0.0
                for k in -radius...radius { acc += kernel[k + radius] * v[y * size + (x + k + size) % size] }
                tmp[y * size + x] = acc / total
            }
        }
        for y in 0..<size {
            for x in 0..<size {
                var acc = 0.0
                for k in -radius...radius { acc += kernel[k + radius] * tmp[((y + k + size) % size) * size + x] }
                out[y * size + x] = acc / total
            }
        }
        return out
    }
}
