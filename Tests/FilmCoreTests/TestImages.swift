@testable import FilmCore

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
