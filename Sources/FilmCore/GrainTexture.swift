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
    /// The same noise for the fast path: 3 bytes per texel (r, g, b), each the bit pattern of
    /// an Int8 = 32 × noise, clamped to ±127 (±4 standard deviations). Each tile row is
    /// followed by its first `blockSize` texels again, so that any read of up to a block's
    /// width is contiguous, wherever in the row it starts; rows are `tileRowStride` bytes apart.
    let quantized: [UInt8]
    static let quantizationScale = 32.0
    /// Bytes a texel takes in `quantized` and in a grain row: r, g, b, laid out as the image's
    /// pixels, so that the pixel loop reads a row's levels and its grain byte for byte.
    static let texelBytes = 3
    /// A tile row's bytes (its period), and the bytes from one row of `quantized` to the next.
    static let tileRowBytes = tileSize * texelBytes
    static let tileRowStride = (tileSize + blockSize) * texelBytes
    /// 256 × 256: output level for (input level << 8 | texel byte), the texel's noise in
    /// 1/32 σ as an Int8 bit pattern (so the pixel loop indexes with the byte as it is) — the
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
        var quantized = [UInt8](repeating: 0, count: Self.tileSize * Self.tileRowStride)
        for i in 0..<n {
            let (y, x) = i.quotientAndRemainder(dividingBy: Self.tileSize), at = Self.quantizedIndex(x: x, y: y)
            for c in 0..<3 {
                let v = channels[c][i]
                noise[i * 3 + c] = v
                let q = min(max((Self.quantizationScale * Double(v)).rounded(), -127), 127)
                quantized[at + c] = UInt8(bitPattern: Int8(q))
            }
        }
        for y in 0..<Self.tileSize { // the padding: each row's start again
            let row = y * Self.tileRowStride
            for k in 0..<(Self.blockSize * Self.texelBytes) { quantized[row + Self.tileRowBytes + k] = quantized[row + k] }
        }
        self.noise = noise
        self.quantized = quantized
        var table = [UInt8](repeating: 0, count: 256 * 256)
        for level in 0..<256 {
            for q in 0..<256 {
                let n = Double(Int8(truncatingIfNeeded: q)) / Self.quantizationScale
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

    /// Where texel (x, y) of the tile starts in `quantized` (coordinates wrap).
    @inline(__always)
    static func quantizedIndex(x: Int, y: Int) -> Int { (y & tileMask) * tileRowStride + (x & tileMask) * texelBytes }

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
    static let fixedBlendWeights: [(Int16, Int16)] = (0..<blockSize).map {
        let w = blendWeights($0)
        return (Int16((w.0 * 128).rounded()), Int16((w.1 * 128).rounded()))
    }

    /// Bytes in a block's width of texels.
    static let blockBytes = blockSize * texelBytes

    /// `fixedBlendWeights` by byte position past a block's centre (byte b is pixel b / 3's),
    /// planar: the first block's weights in [b], the second's in [blockBytes + b].
    static let bandWeights: [Int16] = (0..<blockBytes).map { fixedBlendWeights[$0 / texelBytes].0 }
        + (0..<blockBytes).map { fixedBlendWeights[$0 / texelBytes].1 }

    // The mixes of two texels a, b with weights wa, wb in 1/128ths: (a × wa + b × wb + 64) >> 7.
    // Texels are within ±127 and a pair of weights sums to at most 181, so a mix is within
    // ±180 and a mix of two mixes (the corners, where four blocks meet) within ±32 644: all
    // fits 16-bit lanes. Only the final mix is clamped to the texel range.
    //
    // The mixing loops below are written a byte at a time on purpose (`inVectors`): LLVM
    // vectorises each, 16 or 8 bytes a step (sign-extending unpacks, 16-bit multiplies), and makes
    // the clamp and the narrowing one saturating pack (`packsswb` on x86-64; on arm64 a
    // saturating narrow).
    // Written out with SIMD types, the clamp took eight mask operations a half: Swift's SIMD
    // types have no saturating narrow. They are kept out of line: inlined, their vector
    // bodies, tails and overlap checks crowded the row loop they sit in (grain + blend 30.5
    // → 28.9 instructions a pixel out of line).

    @inline(__always)
    static func mix(_ a: Int16, _ wa: Int16, _ b: Int16, _ wb: Int16) -> Int16 { (a &* wa &+ b &* wb &+ 64) &>> 7 }

    @inline(__always)
    static func clampedTexel(_ n: Int16) -> UInt8 { UInt8(bitPattern: Int8(truncatingIfNeeded: n > 127 ? 127 : n < -128 ? -128 : n)) }

    @inline(__always)
    static func texel(_ p: UnsafePointer<UInt8>, _ k: Int) -> Int16 { Int16(Int8(bitPattern: p[k])) }

    /// `out[k] = byte(k)` for k in 0 ..< count, sixteen at a time into a vector in registers,
    /// each stored at once, then eight, then one at a time. Written into a local vector, the
    /// bytes need no check that `out` overlaps what `byte` reads (LLVM makes that check before
    /// a plain loop over `out`, 45 instructions a call, for runs of 48 to 72 bytes), and they
    /// vectorise. (Sixteen at a time with no eight after them made `mixRows`, whose runs are
    /// 72 bytes, slower; with the eight, the mixes take 4.1 → 3.6 instructions a pixel.)
    @inline(__always)
    static func inVectors(_ out: UnsafeMutablePointer<UInt8>, count: Int, _ byte: (Int) -> UInt8) {
        var k = 0
        while k &+ 16 <= count {
            var sixteen = SIMD16<UInt8>()
            for j in 0..<16 { sixteen[j] = byte(k &+ j) }
            UnsafeMutableRawPointer(out + k).storeBytes(of: sixteen, as: SIMD16<UInt8>.self)
            k &+= 16
        }
        while k &+ 8 <= count {
            var eight = SIMD8<UInt8>()
            for j in 0..<8 { eight[j] = byte(k &+ j) }
            UnsafeMutableRawPointer(out + k).storeBytes(of: eight, as: SIMD8<UInt8>.self)
            k &+= 8
        }
        while k < count {
            out[k] = byte(k)
            k &+= 1
        }
    }

    /// `count` bytes of a tile row copied to `out`, 16 at a time (the last 16 ending at
    /// `count`, so they may copy some twice). Inline on purpose: the runs are 72 bytes or so,
    /// and a call to `memmove` for each, through the PLT, cost more than the copy.
    @inline(__always)
    static func copyBytes(_ out: UnsafeMutablePointer<UInt8>, _ p: UnsafePointer<UInt8>, count: Int) {
        guard count >= 16 else {
            var k = 0
            while k < count { out[k] = p[k]; k &+= 1 }
            return
        }
        @inline(__always) func sixteen(_ k: Int) {
            UnsafeMutableRawPointer(out + k).storeBytes(of: UnsafeRawPointer(p + k).loadUnaligned(as: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
        }
        var k = 0
        while k &+ 16 < count {
            sixteen(k)
            k &+= 16
        }
        sixteen(count &- 16)
    }

    /// `count` bytes of two tile rows p, q mixed with one pair of weights (where block rows
    /// blend), into `out`.
    @inline(never)
    static func mixRows(_ out: UnsafeMutablePointer<UInt8>, _ p: UnsafePointer<UInt8>, _ wp: Int16,
                        _ q: UnsafePointer<UInt8>, _ wq: Int16, count: Int) {
        inVectors(out, count: count) { k in clampedTexel(mix(texel(p, k), wp, texel(q, k), wq)) }
    }

    /// `count` bytes of a left block's row p and a right block's q mixed with weights by byte
    /// (`bandWeights` from the first byte's position on), into `out`.
    @inline(never)
    static func mixBand(_ out: UnsafeMutablePointer<UInt8>, _ p: UnsafePointer<UInt8>, _ q: UnsafePointer<UInt8>,
                        weights wp: UnsafePointer<Int16>, _ wq: UnsafePointer<Int16>, count: Int) {
        inVectors(out, count: count) { k in clampedTexel(mix(texel(p, k), wp[k], texel(q, k), wq[k])) }
    }

    /// `count` bytes where four blocks meet: the upper blocks' rows (a left, c right) mixed by
    /// byte like `mixBand`, the lower blocks' (d, e) likewise, then the two by wy0, wy1.
    @inline(never)
    static func mixCorner(_ out: UnsafeMutablePointer<UInt8>, _ a: UnsafePointer<UInt8>, _ c: UnsafePointer<UInt8>,
                          _ d: UnsafePointer<UInt8>, _ e: UnsafePointer<UInt8>,
                          weights wa: UnsafePointer<Int16>, _ wc: UnsafePointer<Int16>, _ wy0: Int16, _ wy1: Int16, count: Int) {
        inVectors(out, count: count) { k in
            let top = mix(texel(a, k), wa[k], texel(c, k), wc[k]), bottom = mix(texel(d, k), wa[k], texel(e, k), wc[k])
            return clampedTexel(mix(top, wy0, bottom, wy1))
        }
    }

    /// The block rows an output row reads and their weights: the upper and lower where block
    /// rows blend (both weights non-zero), else the one block row read, twice.
    struct BlockRows: Equatable {
        let upper: Int, lower: Int
        let upperWeight: Int16, lowerWeight: Int16
        var blend: Bool { upper != lower }

        /// Output row `frameY`'s; `weights` is `fixedBlendWeights`.
        @inline(__always)
        init(frameY: Int, weights: UnsafePointer<(Int16, Int16)>) {
            let by = blendPosition(frameY)
            (upperWeight, lowerWeight) = weights[by.position]
            if upperWeight != 0 && lowerWeight != 0 {
                (upper, lower) = (by.block, by.block &+ 1)
            } else {
                upper = by.block &+ (lowerWeight == 0 ? 0 : 1)
                lower = upper
            }
        }
    }

    /// One run of a grain row, from one block's centre to the next's: the left block's bytes
    /// [from, bandFrom), the band where it and the right block mix [bandFrom, bandTo), the
    /// right block's [bandTo, to) (output bytes). Where the two blocks' bytes are read from
    /// is the same for every row of a block row, so it is worked out once for all of them: each
    /// block's byte offset in a tile row (the left's at `from`, the right's at `bandFrom`;
    /// from there on contiguous, within the padding of `quantized`) and its tile-row offset,
    /// for the upper and the lower block row.
    struct Run {
        var from = 0, bandFrom = 0, bandTo = 0, to = 0
        /// `bandWeights` index of the band's first byte.
        var weights = 0
        var left = BlockSpots(), right = BlockSpots()
    }

    /// Where a block's bytes are read, in the upper and the lower block row: a byte offset in a
    /// tile row and a tile-row offset (added to the output row's).
    struct BlockSpots {
        var upperX = 0, upperY = 0, lowerX = 0, lowerY = 0

        /// The same block's spots `bytes` further on (wrapped within the tile row).
        @inline(__always)
        func advanced(by bytes: Int) -> BlockSpots {
            BlockSpots(upperX: wrapped(upperX &+ bytes), upperY: upperY, lowerX: wrapped(lowerX &+ bytes), lowerY: lowerY)
        }
    }

    /// Runs a row of `width` pixels can have (blocks it meets, and one more).
    static func runCapacity(width: Int) -> Int { width / blockSize + 2 }

    /// `i` mod `tileRowBytes` for i ≥ 0, unsigned: no sign fix-up after the division.
    @inline(__always)
    static func wrapped(_ i: Int) -> Int { Int(bitPattern: UInt(bitPattern: i) % UInt(tileRowBytes)) }

    /// The runs of every output row that reads block rows `rows` (`runCapacity(width:)` at
    /// most), into `runs`; returns how many.
    static func planRow(_ runs: UnsafeMutablePointer<Run>, width: Int, windowX: Int, rows: BlockRows, seed: UInt64,
                        frame: UInt64) -> Int {
        let n = texelBytes
        let bandStart = (blockSize - blendBand) / 2, bandEnd = bandStart + blendBand
        // Block column bx's spots for output byte 0: x in bytes (this window's), y in tile rows.
        func column(_ bx: Int) -> BlockSpots {
            let u = blockOffset(seed: seed, frame: frame, bx: bx, by: rows.upper)
            let l = rows.blend ? blockOffset(seed: seed, frame: frame, bx: bx, by: rows.lower) : u
            return BlockSpots(upperX: ((u.x &+ windowX) & tileMask) &* n, upperY: u.y, lowerX: ((l.x &+ windowX) & tileMask) &* n, lowerY: l.y)
        }
        var x = 0, count = 0
        var left = column(blendPosition(windowX).block)
        while x < width {
            let bx = blendPosition(x &+ windowX)
            let end = min(x &+ blockSize &- bx.position, width)
            let right = column(bx.block &+ 1) // the next run's left
            // The band's weights are by position past the left block's centre (in bytes here).
            let first = (x &- bx.position) &* n
            var run = Run()
            run.from = x &* n
            run.to = end &* n
            run.bandFrom = min(max(first &+ bandStart &* n, run.from), run.to)
            run.bandTo = min(max(first &+ bandEnd &* n, run.from), run.to)
            run.weights = run.bandFrom &- first
            run.left = left.advanced(by: run.from)
            run.right = right.advanced(by: run.bandFrom)
            runs[count] = run
            count &+= 1
            x = end
            left = right
        }
        return count
    }

    /// Writes one output row's grain into `out` (3 bytes a pixel, like the tile's texels):
    /// what `noise(x:y:frame:)` gives, quantised. Inside a block it copies a tile row; the
    /// 16-pixel bands between blocks (across and down) mix two tile rows, or four where blocks
    /// meet. It works on bytes throughout: output byte b reads byte (b + offset) mod
    /// tileRowBytes of a tile row, which is pixel b / 3's texel, channel b mod 3. `runs` are
    /// `planRow`'s for `rows`, the row's block rows; `tile` is `quantized`, `bandWeights`
    /// `bandWeights`.
    @inline(__always)
    static func fillRow(_ out: UnsafeMutablePointer<UInt8>, runs: UnsafePointer<Run>, count: Int, frameY: Int, rows: BlockRows,
                        tile: UnsafePointer<UInt8>, bandWeights: UnsafePointer<Int16>) {
        @inline(__always) func bytes(_ y: Int, _ x: Int) -> UnsafePointer<UInt8> {
            tile + (((frameY &+ y) & tileMask) &* tileRowStride &+ x)
        }
        @inline(__always) func upper(_ b: BlockSpots) -> UnsafePointer<UInt8> { bytes(b.upperY, b.upperX) }
        @inline(__always) func lower(_ b: BlockSpots) -> UnsafePointer<UInt8> { bytes(b.lowerY, b.lowerX) }
        let wy0 = rows.upperWeight, wy1 = rows.lowerWeight
        for r in 0..<count {
            let run = runs[r]
            let skip = run.bandFrom &- run.from, bandBytes = run.bandTo &- run.bandFrom
            let wl = bandWeights + run.weights, wr = wl + blockBytes
            let a = upper(run.left), c = upper(run.right)
            if !rows.blend {
                // Inside a row of blocks (most rows): one tile row a block, and the band blends
                // the left and right blocks only.
                copyBytes(out + run.from, a, count: skip)
                mixBand(out + run.bandFrom, a + skip, c, weights: wl, wr, count: bandBytes)
                copyBytes(out + run.bandTo, c + bandBytes, count: run.to &- run.bandTo)
            } else {
                let d = lower(run.left), e = lower(run.right)
                mixRows(out + run.from, a, wy0, d, wy1, count: skip)
                mixCorner(out + run.bandFrom, a + skip, c, d + skip, e, weights: wl, wr, wy0, wy1, count: bandBytes)
                mixRows(out + run.bandTo, c + bandBytes, wy0, e + bandBytes, wy1, count: run.to &- run.bandTo)
            }
        }
    }

    /// One row planned and filled (`planRow`, `fillRow`), for a caller that does not keep the
    /// plan; `weights` is `fixedBlendWeights`.
    static func fillRow(_ out: UnsafeMutablePointer<UInt8>, width: Int, windowX: Int, frameY: Int, seed: UInt64, frame: UInt64,
                        tile: UnsafePointer<UInt8>, weights: UnsafePointer<(Int16, Int16)>, bandWeights: UnsafePointer<Int16>) {
        let rows = BlockRows(frameY: frameY, weights: weights)
        withUnsafeTemporaryAllocation(of: Run.self, capacity: runCapacity(width: width)) { runs in
            let count = planRow(runs.baseAddress!, width: width, windowX: windowX, rows: rows, seed: seed, frame: frame)
            fillRow(out, runs: runs.baseAddress!, count: count, frameY: frameY, rows: rows, tile: tile, bandWeights: bandWeights)
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
