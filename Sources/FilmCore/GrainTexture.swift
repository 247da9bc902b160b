import Foundation

/// The grain a film (`GrainModel`) shows through pixels of one size, as a precomputed noise
/// tile: a seamless square per colour channel, zero mean and unit variance, whose power
/// spectrum is the film's grain spectrum seen through the output pixel — the film spectrum
/// scaled to output pixels, multiplied by the pixel's box transfer and folded (aliased) onto
/// the output grid, exactly what area-averaging the film onto those pixels gives. A pixel
/// much larger than the grain sees finer, weaker grain; `apertureVariance` carries the
/// amplitude, the tile the texture. The tile is a Gaussian field (synthesised in the Fourier
/// domain); the film's grain is one too at these densities, where dozens of discs overlap.
///
/// The image is covered in 64-pixel blocks, each reading the tile at its own pseudo-random
/// offset (new for every grain frame, so the pattern never repeats and animation is free).
/// Neighbouring blocks overlap and cross-fade over the 16 pixels around their boundary, with
/// weights whose squares sum to one (cos/sin), so the variance and texture stay the same
/// everywhere and no block edge shows; inside a block one texel is read, as before blending.
public struct GrainTexture: Sendable {
    public static let tileSize = 256
    public static let blockSize = 64
    static let tileMask = tileSize - 1
    static let blockShift = 6
    /// Aliases folded onto the output grid in each direction.
    static let foldedAliases = 5

    public let grain: Preset.Grain
    public let seed: UInt64
    /// Film pixels per output pixel.
    public let scale: Double
    /// Grain variance per unit of unsaturated density through this output pixel.
    public let apertureVariance: Double
    /// tileSize² texels × 3 channels, interleaved; zero mean, unit variance.
    public let noise: [Float]
    /// The same noise for the fast path: 4 bytes per texel (r, g, b, unused), each the bit
    /// pattern of an Int8 = 32 × noise, clamped to ±127 (±4 standard deviations).
    let quantized: [UInt8]
    static let quantizationScale = 32.0
    /// 256 × 256: output level for (input level << 8 | noise + 128), noise in 1/32 σ — the
    /// film's density response at this pixel size, baked (it is per texture, so a renderer for
    /// a size whose texture is made already costs nothing to set up).
    let densityTable: [UInt8]

    public init(grain: Preset.Grain, seed: UInt64, scale: Double = 1) {
        self.init(model: GrainModel(grain), seed: seed, scale: scale)
    }

    public init(model: GrainModel, seed: UInt64, scale: Double) {
        grain = model.grain
        self.seed = seed
        self.scale = scale
        apertureVariance = model.apertureVariance(scale: scale)
        let n = Self.tileSize * Self.tileSize
        let mono = min(max(grain.monochromatic, 0), 1)
        let fieldCount = mono >= 1 ? 1 : mono > 0 ? 4 : 3
        var rng = SplitMix64(seed: seed ^ 0x6A09_E667_F3BC_C908)
        let fields = Self.synthesize(count: fieldCount, filter: Self.filter(model, scale: scale), &rng)
        // Channel c = √mono · shared + √(1 − mono) · own_c: cross-channel correlation = mono.
        var channels: [[Float]] = []
        if mono >= 1 {
            channels = [fields[0], fields[0], fields[0]]
        } else if mono > 0 {
            let a = Float(mono.squareRoot()), b = Float((1 - mono).squareRoot())
            channels = (1...3).map { c in (0..<n).map { a * fields[0][$0] + b * fields[c][$0] } }
        } else {
            channels = fields
        }
        var noise = [Float](repeating: 0, count: n * 3)
        var quantized = [UInt8](repeating: 0, count: n * 4)
        for i in 0..<n {
            for c in 0..<3 {
                let v = channels[c][i]
                noise[i * 3 + c] = v
                let q = min(max((Self.quantizationScale * Double(v)).rounded(), -127), 127)
                quantized[i * 4 + c] = UInt8(bitPattern: Int8(q))
            }
        }
        self.noise = noise
        self.quantized = quantized
        var table = [UInt8](repeating: 0, count: 256 * 256)
        for level in 0..<256 {
            for q in 0..<256 {
                let n = Double(q - 128) / Self.quantizationScale
                let out = GrainModel.apply(Double(level) / 255, noise: n, variance: apertureVariance)
                table[level << 8 | q] = UInt8((out * 255).rounded())
            }
        }
        densityTable = table
    }

    /// √(output spectrum) on the tile's frequency grid: the film spectrum in output pixels,
    /// times the pixel's box transfer, folded over `foldedAliases` aliases each way.
    static func filter(_ model: GrainModel, scale k: Double) -> [Double] {
        let s = tileSize, half = s / 2, fold = foldedAliases
        // sinc² of (i/s + n) for every grid index and alias.
        let sinc2: [[Double]] = (0...half).map { i in
            (-fold...fold).map { n in
                let v = GrainSpectrum.sinc(Double(i) / Double(s) + Double(n))
                return v * v
            }
        }
        var out = [Double](repeating: 0, count: s * s)
        // The spectrum is radial and the box symmetric: compute one eighth, mirror the rest.
        for i in 0...half {
            for j in 0...i {
                let fx = Double(i) / Double(s), fy = Double(j) / Double(s)
                var sum = 0.0
                for nx in -fold...fold {
                    let ax = fx + Double(nx), wx = sinc2[i][nx + fold]
                    for ny in -fold...fold {
                        let ay = fy + Double(ny)
                        sum += model.spectrum((ax * ax + ay * ay).squareRoot() / k) * wx * sinc2[j][ny + fold]
                    }
                }
                let h = (sum / (k * k)).squareRoot()
                for (a, b) in [(i, j), (j, i)] {
                    for (u, v) in [(a, b), (s - a, b), (a, s - b), (s - a, s - b)] {
                        out[(v & (s - 1)) * s + (u & (s - 1))] = h
                    }
                }
            }
        }
        return out
    }

    /// `count` independent Gaussian fields with the filter's spectrum: complex white noise,
    /// filtered, transformed back; real and imaginary parts are two independent fields.
    static func synthesize(count: Int, filter: [Double], _ rng: inout SplitMix64) -> [[Float]] {
        let fft = FFT2D(size: tileSize)
        var fields: [[Float]] = []
        while fields.count < count {
            var re = filter.map { $0 * rng.gaussian() }
            var im = filter.map { $0 * rng.gaussian() }
            fft.transform(&re, &im, inverse: true)
            for part in [re, im] where fields.count < count {
                var f = part.map(Float.init)
                normalize(&f)
                fields.append(f)
            }
        }
        return fields
    }

    /// Scales a field to zero mean and unit variance.
    static func normalize(_ v: inout [Float]) {
        var sum = 0.0, sum2 = 0.0
        for x in v { sum += Double(x); sum2 += Double(x) * Double(x) }
        let mean = sum / Double(v.count)
        let sd = max((sum2 / Double(v.count) - mean * mean).squareRoot(), 1e-12)
        let m = Float(mean), s = Float(1 / sd)
        for i in v.indices { v[i] = (v[i] - m) * s }
    }

    // MARK: Reading

    /// The tile offset of block (bx, by) at a grain frame.
    @inline(__always)
    static func blockOffset(seed: UInt64, frame: UInt64, bx: Int, by: Int) -> (x: Int, y: Int) {
        let h = SplitMix64.hash(seed, frame, UInt64(truncatingIfNeeded: bx), UInt64(truncatingIfNeeded: by))
        return (Int(truncatingIfNeeded: h) & tileMask, Int(truncatingIfNeeded: h >> 32) & tileMask)
    }

    /// Where frame coordinate `c` sits between block centres: the first of the two blocks it
    /// blends and its position 0…63 past that block's centre.
    @inline(__always)
    static func blendPosition(_ c: Int) -> (block: Int, position: Int) {
        let t = c - blockSize / 2
        return (t >> blockShift, t & (blockSize - 1))
    }

    /// Pixels over which two neighbouring blocks cross-fade, centred on their boundary;
    /// elsewhere one block is read alone, which is most pixels and the cheapest.
    static let blendBand = 16

    /// Cross-fade weights (first block, second block) at a position past the first's centre;
    /// their squares sum to one.
    static func blendWeights(_ position: Int) -> (Double, Double) {
        let start = (blockSize - blendBand) / 2
        if position < start { return (1, 0) }
        if position >= start + blendBand { return (0, 1) }
        let a = (Double(position - start) + 0.5) / Double(blendBand) * Double.pi / 2
        return (Foundation.cos(a), Foundation.sin(a))
    }

    /// The same weights in 1/128ths for the fast path, by position: small enough that a texel
    /// (±127) times each of two weights, summed, fits a 16-bit lane (127 × 181 < 2¹⁵).
    static let fixedBlendWeights: [(Int32, Int32)] = (0..<blockSize).map {
        let w = blendWeights($0)
        return (Int32((w.0 * 128).rounded()), Int32((w.1 * 128).rounded()))
    }

    /// The weights of four pixels from each position on, one per byte lane of their texels
    /// (r, g, b, unused): the first block's in [2p], the second's in [2p + 1].
    static let laneBlendWeights: [SIMD16<Int16>] = (0..<blockSize).flatMap { p in
        let w = (0..<4).map { fixedBlendWeights[min(p + $0, blockSize - 1)] }
        return [SIMD16<Int16>((0..<16).map { Int16(w[$0 / 4].0) }), SIMD16<Int16>((0..<16).map { Int16(w[$0 / 4].1) })]
    }

    /// Four pixels' texels of two tile rows mixed with per-lane weights in 1/128ths, rounded
    /// and clamped to the texel range, into `out` (16 bytes: the unused bytes too).
    @inline(__always)
    static func mixFour(_ out: UnsafeMutablePointer<UInt8>, _ p: UnsafePointer<UInt8>, _ wp: SIMD16<Int16>,
                        _ q: UnsafePointer<UInt8>, _ wq: SIMD16<Int16>) {
        let a = SIMD16<Int16>(widening: UnsafeRawPointer(p).loadUnaligned(as: SIMD16<Int8>.self))
        let b = SIMD16<Int16>(widening: UnsafeRawPointer(q).loadUnaligned(as: SIMD16<Int8>.self))
        let n = (a &* wp &+ b &* wq &+ 64) &>> 7
        let clamped = pointwiseMin(pointwiseMax(n, SIMD16(repeating: -128)), SIMD16(repeating: 127))
        UnsafeMutableRawPointer(out).storeBytes(of: SIMD16<Int8>(lowBytes: clamped), as: SIMD16<Int8>.self)
    }

    /// Writes one output row's grain into `out` (4 bytes a pixel, like the tile's texels):
    /// what `noise(x:y:frame:)` gives, quantised. Inside a block it copies tile rows; the
    /// 16-pixel bands between blocks blend two or four of them (two: four pixels at a time in
    /// 16-bit lanes). `weights` is `fixedBlendWeights`, `lanes` `laneBlendWeights`; `tile` is
    /// `quantized`.
    static func fillRow(_ out: UnsafeMutablePointer<UInt8>, width: Int, windowX: Int, frameY: Int, seed: UInt64, frame: UInt64,
                        tile: UnsafePointer<UInt8>, weights: UnsafePointer<(Int32, Int32)>, lanes: UnsafePointer<SIMD16<Int16>>) {
        let by = blendPosition(frameY)
        let (wy0, wy1) = weights[by.position]
        let rowBytes = tileSize * 4
        let bandStart = (blockSize - blendBand) / 2, bandEnd = bandStart + blendBand
        @inline(__always) func mix(_ a: UInt8, _ wa: Int32, _ b: UInt8, _ wb: Int32) -> UInt8 {
            let n = (Int32(Int8(bitPattern: a)) &* wa &+ Int32(Int8(bitPattern: b)) &* wb &+ 64) &>> 7
            return UInt8(bitPattern: Int8(min(max(n, -128), 127)))
        }
        /// Pixels from..<to mixed from two tile rows (texels at px + offset, wrapping) with the
        /// weights `lanesAt`/`weightsAt` give for a pixel: four pixels at a time in 16-bit lanes
        /// where neither row wraps within them, one at a time elsewhere.
        @inline(__always) func mixRows(_ p: UnsafePointer<UInt8>, _ po: Int, _ q: UnsafePointer<UInt8>, _ qo: Int, _ from: Int, _ to: Int,
                                       lanesAt: (Int) -> (SIMD16<Int16>, SIMD16<Int16>), weightsAt: (Int) -> (Int32, Int32)) {
            var px = from
            while px < to {
                let sp = (px &+ po) & tileMask, sq = (px &+ qo) & tileMask
                if px &+ 4 <= to && sp &+ 4 <= tileSize && sq &+ 4 <= tileSize {
                    let (wp, wq) = lanesAt(px)
                    mixFour(out + px &* 4, p + sp &* 4, wp, q + sq &* 4, wq)
                    px &+= 4
                } else {
                    let (wp, wq) = weightsAt(px)
                    for k in 0..<3 { out[px &* 4 &+ k] = mix(p[sp &* 4 &+ k], wp, q[sq &* 4 &+ k], wq) }
                    px &+= 1
                }
            }
        }
        let wy = (SIMD16<Int16>(repeating: Int16(truncatingIfNeeded: wy0)), SIMD16<Int16>(repeating: Int16(truncatingIfNeeded: wy1)))
        var x = 0
        while x < width {
            let bx = blendPosition(x + windowX)
            let end = min(x + blockSize - bx.position, width)
            // The tile rows (and x offsets) of the four blocks around this run.
            func block(_ dx: Int, _ dy: Int) -> (UnsafePointer<UInt8>, Int) {
                let o = blockOffset(seed: seed, frame: frame, bx: bx.block + dx, by: by.block + dy)
                return (tile + ((frameY + o.y) & tileMask) * rowBytes, o.x + windowX)
            }
            let (a, ao) = block(0, 0), (c, co) = block(1, 0), (d, dOffset) = block(0, 1), (e, eo) = block(1, 1)
            // One column of blocks (left: a over d, right: c over e) over pixels lo..<hi.
            func column(_ upper: UnsafePointer<UInt8>, _ uo: Int, _ lower: UnsafePointer<UInt8>, _ lo: Int, _ from: Int, _ to: Int) {
                if wy1 == 0 || wy0 == 0 {
                    // Inside a row of blocks: copies of a tile row, split where it wraps.
                    let (row, offset) = wy1 == 0 ? (upper, uo) : (lower, lo)
                    var px = from
                    while px < to {
                        let start = (px &+ offset) & tileMask
                        let n = min(to - px, tileSize - start)
                        (out + px * 4).update(from: row + start * 4, count: n * 4)
                        px += n
                    }
                } else {
                    mixRows(upper, uo, lower, lo, from, to, lanesAt: { _ in wy }, weightsAt: { _ in (wy0, wy1) })
                }
            }
            let p0 = bx.position
            let bandFrom = min(max(x + bandStart - p0, x), end), bandTo = min(max(x + bandEnd - p0, x), end)
            column(a, ao, d, dOffset, x, bandFrom)
            if wy1 == 0 || wy0 == 0 {
                // Inside a row of blocks (most rows): the band blends the left and right blocks only.
                let (left, lo, right, ro) = wy1 == 0 ? (a, ao, c, co) : (d, dOffset, e, eo)
                let first = x - p0 // the band's weights are by position past the first block's centre
                mixRows(left, lo, right, ro, bandFrom, bandTo,
                        lanesAt: { px in (lanes[2 &* (px &- first)], lanes[2 &* (px &- first) &+ 1]) },
                        weightsAt: { px in weights[px &- first] })
            } else {
                for px in bandFrom..<bandTo {
                    let (wx0, wx1) = weights[px - x + p0]
                    let ta = a + ((px &+ ao) & tileMask) &* 4, tc = c + ((px &+ co) & tileMask) &* 4
                    let td = d + ((px &+ dOffset) & tileMask) &* 4, te = e + ((px &+ eo) & tileMask) &* 4
                    for k in 0..<3 {
                        let top = Int32(Int8(bitPattern: ta[k])) &* wx0 &+ Int32(Int8(bitPattern: tc[k])) &* wx1
                        let bottom = Int32(Int8(bitPattern: td[k])) &* wx0 &+ Int32(Int8(bitPattern: te[k])) &* wx1
                        let n = (top &* wy0 &+ bottom &* wy1 &+ 8192) &>> 14
                        out[px &* 4 &+ k] = UInt8(bitPattern: Int8(min(max(n, -128), 127)))
                    }
                }
            }
            column(c, co, e, eo, bandTo, end)
            x = end
        }
    }

    /// Noise (unit variance per channel) at frame pixel (x, y) for a grain frame.
    public func noise(x: Int, y: Int, frame: UInt64) -> SIMD3<Double> {
        let px = Self.blendPosition(x), py = Self.blendPosition(y)
        let wx = Self.blendWeights(px.position), wy = Self.blendWeights(py.position)
        var sum = SIMD3<Double>.zero
        for (dy, weightY) in [(0, wy.0), (1, wy.1)] {
            for (dx, weightX) in [(0, wx.0), (1, wx.1)] {
                let o = Self.blockOffset(seed: seed, frame: frame, bx: px.block + dx, by: py.block + dy)
                let i = (((y + o.y) & Self.tileMask) * Self.tileSize + ((x + o.x) & Self.tileMask)) * 3
                sum += weightX * weightY * SIMD3(Double(noise[i]), Double(noise[i + 1]), Double(noise[i + 2]))
            }
        }
        return sum
    }
}
