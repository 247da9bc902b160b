@testable import FilmCore
import Raster

/// Small synthetic images for tests (debug builds are slow: keep them a few hundred pixels).
enum TestImages {
    static func flat(_ width: Int, _ height: Int, _ value: UInt8) -> RGBImage {
        RGBImage(width: width, height: height, pixels: [UInt8](repeating: value, count: width * height * 3))
    }

    /// Every channel combination: red across, green down, blue in 8×8 tiles — covers the cube.
    static func sweep(_ width: Int = 128, _ height: Int = 128) -> RGBImage {
        var image = RGBImage(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                let r = UInt8(x * 255 / (width - 1)), g = UInt8(y * 255 / (height - 1))
                let b = UInt8(((x / 8 + y / 8) * 37) & 255)
                image[x, y] = SIMD3(r, g, b)
            }
        }
        return image
    }

    /// Uniformly random colours.
    static func random(_ width: Int, _ height: Int, seed: UInt64 = 7) -> RGBImage {
        var rng = SplitMix64(seed: seed)
        return RGBImage(width: width, height: height, pixels: (0..<(width * height * 3)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
    }

    static func render(_ image: RGBImage, _ preset: Preset, _ settings: RenderSettings = RenderSettings(),
                       frame: UInt64 = 0, threads: Int = 1) -> RGBImage {
        var out = image
        FilmRenderer(look: FilmLook(preset: preset, settings: settings), width: image.width, height: image.height)
            .render(&out, grainFrame: frame, threads: threads)
        return out
    }
}

/// Statistics over plain arrays.
enum Stats {
    static func mean(_ v: [Double]) -> Double { v.reduce(0, +) / Double(v.count) }

    static func sd(_ v: [Double]) -> Double {
        let m = mean(v)
        return (v.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(v.count)).squareRoot()
    }

    static func correlation(_ a: [Double], _ b: [Double]) -> Double {
        let ma = mean(a), mb = mean(b)
        var sab = 0.0, saa = 0.0, sbb = 0.0
        for i in a.indices {
            sab += (a[i] - ma) * (b[i] - mb)
            saa += (a[i] - ma) * (a[i] - ma)
            sbb += (b[i] - mb) * (b[i] - mb)
        }
        return sab / (saa * sbb).squareRoot()
    }

    /// One channel of an image as doubles, row-major.
    static func channel(_ image: RGBImage, _ c: Int) -> [Double] {
        stride(from: c, to: image.pixels.count, by: 3).map { Double(image.pixels[$0]) }
    }

    /// Optical density of 8-bit values.
    static func density(_ v: [Double]) -> [Double] { v.map { GrainModel.density($0 / 255) } }

    /// Horizontal autocorrelation at `lag` of a width × height field.
    static func autocorrelation(_ f: [Double], width: Int, height: Int, lag: Int) -> Double {
        var a: [Double] = [], b: [Double] = []
        for y in 0..<height {
            for x in 0..<(width - lag) {
                a.append(f[y * width + x])
                b.append(f[y * width + x + lag])
            }
        }
        return correlation(a, b)
    }
}

extension TestImages {
    /// The 12 MP reference frame (4056 × 3040): one of its pixels is one film pixel.
    static let referenceFrame = (width: 4056, height: 3040)

    /// Renders `image` as the part of a frame that `window` says (grain and vignette follow
    /// the whole frame).
    static func render(_ image: RGBImage, _ preset: Preset, _ settings: RenderSettings = RenderSettings(),
                       window: FrameWindow, frame: UInt64 = 0) -> RGBImage {
        var out = image
        FilmRenderer(look: FilmLook(preset: preset, settings: settings), width: image.width, height: image.height, window: window)
            .render(&out, grainFrame: frame)
        return out
    }

    /// Averages each `factor` × `factor` block of one channel (light adds up in transmittance).
    static func boxDownscale(_ v: [Double], width: Int, height: Int, factor: Int) -> [Double] {
        let w = width / factor, h = height / factor
        var out = [Double](repeating: 0, count: w * h)
        for y in 0..<(h * factor) {
            for x in 0..<(w * factor) { out[(y / factor) * w + x / factor] += v[y * width + x] }
        }
        let area = Double(factor * factor)
        return out.map { $0 / area }
    }
}

extension Stats {
    /// The periodograms of a field's `size` × `size` patches (mean removed per patch): every
    /// frequency point's radial frequency (cycles per pixel) and power.
    static func periodogram(_ f: [Double], width: Int, height: Int, size: Int) -> [(frequency: Double, power: Double)] {
        let fft = FFT2D(size: size)
        var out: [(frequency: Double, power: Double)] = []
        for py in stride(from: 0, through: height - size, by: size) {
            for px in stride(from: 0, through: width - size, by: size) {
                var re = [Double](repeating: 0, count: size * size), im = re
                for y in 0..<size { for x in 0..<size { re[y * size + x] = f[(py + y) * width + px + x] } }
                let m = mean(re)
                re = re.map { $0 - m }
                fft.transform(&re, &im)
                for v in 0..<size {
                    for u in 0..<size {
                        let fu = fft.frequency(u), fv = fft.frequency(v), i = v * size + u
                        out.append(((fu * fu + fv * fv).squareRoot(), (re[i] * re[i] + im[i] * im[i]) / Double(size * size)))
                    }
                }
            }
        }
        return out
    }

    /// Radially averaged power spectrum over the field's `size` × `size` patches: element i is
    /// the mean power at radius i/size cycles per pixel, i = 0 … size/2.
    static func radialSpectrum(_ f: [Double], width: Int, height: Int, size: Int) -> [Double] {
        var sums = [Double](repeating: 0, count: size / 2 + 1), counts = sums
        for p in periodogram(f, width: width, height: height, size: size) {
            let bin = Int((p.frequency * Double(size)).rounded())
            guard bin <= size / 2 else { continue }
            sums[bin] += p.power
            counts[bin] += 1
        }
        return zip(sums, counts).map { $1 > 0 ? $0 / $1 : 0 }
    }

    /// Mean absolute difference between horizontal neighbours (x−1, x) whose x has
    /// `x mod period == phase` (frame coordinates, `originX` the window's), and over all others.
    static func neighbourDifference(_ f: [Double], width: Int, height: Int, originX: Int, period: Int,
                                    phase: Int) -> (at: Double, elsewhere: Double) {
        var at = 0.0, atCount = 0.0, other = 0.0, otherCount = 0.0
        for y in 0..<height {
            for x in 1..<width {
                let d = abs(f[y * width + x] - f[y * width + x - 1])
                if (x + originX) % period == phase { at += d; atCount += 1 } else { other += d; otherCount += 1 }
            }
        }
        return (at / atCount, other / otherCount)
    }

    /// The field transposed (to measure rows with the column functions).
    static func transpose(_ f: [Double], width: Int, height: Int) -> [Double] {
        var out = [Double](repeating: 0, count: f.count)
        for y in 0..<height { for x in 0..<width { out[x * height + y] = f[y * width + x] } }
        return out
    }
}
