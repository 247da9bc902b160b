import Foundation

/// Precomputed grain noise: a seamless square tile per colour channel, made of three layers
/// (a blurred Gaussian base, 2D simplex noise for large-scale tonal variation, Worley noise
/// for crystal clumping), normalised to zero mean and unit variance.
///
/// The image is covered in blocks of `blockSize` pixels; every block reads the tile at its
/// own pseudo-random offset, drawn afresh for each grain frame. So the pattern never repeats
/// at the tile period, and animating grain costs nothing per frame but a few hashes.
public struct GrainTexture: Sendable {
    public static let tileSize = 256
    public static let blockSize = 64
    static let tileMask = tileSize - 1
    static let blockShift = 6

    public let grain: Preset.Grain
    public let seed: UInt64
    /// tileSize² texels × 3 channels, interleaved; zero mean, unit variance.
    public let noise: [Float]
    /// The same noise quantised for the fast path: 4 bytes per texel (r, g, b, unused),
    /// value = 127.5 + 32 × noise, clamped to 0…255 (±4 standard deviations).
    let quantized: [UInt8]
    static let quantizationScale = 32.0

    public init(grain: Preset.Grain, seed: UInt64) {
        self.grain = grain
        self.seed = seed
        let n = Self.tileSize * Self.tileSize
        var rng = SplitMix64(seed: seed ^ 0x6A09_E667_F3BC_C908)
        let mono = min(max(grain.monochromatic, 0), 1)
        // Channel c = √mono · shared + √(1 − mono) · own_c: cross-channel correlation = mono.
        var channels = [[Float]]()
        let shared: [Float]? = mono > 0 ? Self.field(grain, &rng) : nil
        for _ in 0..<3 {
            if mono >= 1, let shared {
                channels.append(shared)
                continue
            }
            let own = Self.field(grain, &rng)
            if let shared {
                let a = Float(mono.squareRoot()), b = Float((1 - mono).squareRoot())
                channels.append((0..<n).map { a * shared[$0] + b * own[$0] })
            } else {
                channels.append(own)
            }
        }
        var noise = [Float](repeating: 0, count: n * 3)
        var quantized = [UInt8](repeating: 0, count: n * 4)
        for i in 0..<n {
            for c in 0..<3 {
                let v = channels[c][i]
                noise[i * 3 + c] = v
                let q = (127.5 + Self.quantizationScale * Double(v)).rounded()
                quantized[i * 4 + c] = UInt8(min(max(q, 0), 255))
            }
        }
        self.noise = noise
        self.quantized = quantized
    }

    /// The tile offset of block (bx, by) at a grain frame.
    @inline(__always)
    static func blockOffset(seed: UInt64, frame: UInt64, bx: Int, by: Int) -> (x: Int, y: Int) {
        let h = SplitMix64.hash(seed, frame, UInt64(truncatingIfNeeded: bx), UInt64(truncatingIfNeeded: by))
        return (Int(truncatingIfNeeded: h) & tileMask, Int(truncatingIfNeeded: h >> 32) & tileMask)
    }

    /// Noise (unit variance per channel) at image pixel (x, y) for a grain frame.
    public func noise(x: Int, y: Int, frame: UInt64) -> SIMD3<Double> {
        let o = Self.blockOffset(seed: seed, frame: frame, bx: x >> Self.blockShift, by: y >> Self.blockShift)
        let i = (((y + o.y) & Self.tileMask) * Self.tileSize + ((x + o.x) & Self.tileMask)) * 3
        return SIMD3(Double(noise[i]), Double(noise[i + 1]), Double(noise[i + 2]))
    }

    // MARK: Layers

    /// One channel's field: the preset's mix of the three layers, normalised.
    static func field(_ g: Preset.Grain, _ rng: inout SplitMix64) -> [Float] {
        let n = tileSize * tileSize
        var mix = [Float](repeating: 0, count: n)
        let size = min(max(g.size, 0.5), 4)
        func add(_ layer: [Float], _ weight: Double) {
            let w = Float(weight)
            for i in 0..<n { mix[i] += w * layer[i] }
        }
        if g.gaussian > 0 { add(gaussianLayer(size: size, roughness: g.roughness, &rng), g.gaussian) }
        if g.simplex > 0 { add(simplexLayer(scale: 12 * size, &rng), g.simplex) }
        let worleyWeight = g.worley * (1 + 2 * g.clumping)
        if worleyWeight > 0 { add(worleyLayer(cell: 2.5 * size, &rng), worleyWeight) }
        if !(g.gaussian > 0 || g.simplex > 0 || worleyWeight > 0) {
            add(gaussianLayer(size: size, roughness: g.roughness, &rng), 1)
        }
        normalize(&mix)
        return mix
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

    /// White Gaussian noise blurred to the grain radius; `roughness` mixes in a version blurred
    /// half as much, for a coarser, crisper texture.
    static func gaussianLayer(size: Double, roughness: Double, _ rng: inout SplitMix64) -> [Float] {
        let n = tileSize * tileSize
        var white = [Float](repeating: 0, count: n)
        for i in 0..<n { white[i] = Float(rng.gaussian()) }
        var smooth = blur(white, sigma: 0.6 * size)
        normalize(&smooth)
        let r = min(max(roughness, 0), 1)
        if r == 0 { return smooth }
        var rough = blur(white, sigma: 0.3 * size)
        normalize(&rough)
        return (0..<n).map { Float(1 - r) * smooth[$0] + Float(r) * rough[$0] }
    }

    /// Separable Gaussian blur that wraps around the tile's edges (keeps it seamless).
    static func blur(_ v: [Float], sigma: Double) -> [Float] {
        if sigma < 0.25 { return v }
        let radius = Int((3 * sigma).rounded(.up))
        var kernel = (-radius...radius).map { Float(Foundation.exp(-Double($0 * $0) / (2 * sigma * sigma))) }
        let total = kernel.reduce(0, +)
        kernel = kernel.map { $0 / total }
        let s = tileSize, mask = tileMask
        var tmp = [Float](repeating: 0, count: v.count)
        var out = [Float](repeating: 0, count: v.count)
        for y in 0..<s {
            for x in 0..<s {
                var acc: Float = 0
                for k in -radius...radius { acc += kernel[k + radius] * v[y * s + ((x + k) & mask)] }
                tmp[y * s + x] = acc
            }
        }
        for y in 0..<s {
            for x in 0..<s {
                var acc: Float = 0
                for k in -radius...radius { acc += kernel[k + radius] * tmp[((y + k) & mask) * s + x] }
                out[y * s + x] = acc
            }
        }
        return out
    }

    /// 2D simplex noise with features about `scale` pixels across, made seamless by blending
    /// the field with its copies one tile away (weights whose squares sum to one, so the
    /// variance stays even across the tile).
    static func simplexLayer(scale: Double, _ rng: inout SplitMix64) -> [Float] {
        let simplex = Simplex2D(&rng)
        let s = tileSize, p = Double(tileSize)
        var out = [Float](repeating: 0, count: s * s)
        for y in 0..<s {
            let v = Double(y) / p
            for x in 0..<s {
                let u = Double(x) / p
                let fx = Double(x) / scale, fy = Double(y) / scale, px = p / scale
                let a = simplex.noise(fx, fy), b = simplex.noise(fx - px, fy)
                let c = simplex.noise(fx, fy - px), d = simplex.noise(fx - px, fy - px)
                let value = ((1 - u) * (1 - v)).squareRoot() * a + (u * (1 - v)).squareRoot() * b
                    + ((1 - u) * v).squareRoot() * c + (u * v).squareRoot() * d
                out[y * s + x] = Float(value)
            }
        }
        normalize(&out)
        return out
    }

    /// Worley (cellular) noise: one random feature point per cell; the value rises near a
    /// point, so texture gathers in clumps like developed silver crystals. The cell count
    /// divides the tile, so it wraps seamlessly.
    static func worleyLayer(cell: Double, _ rng: inout SplitMix64) -> [Float] {
        let s = tileSize
        let cells = max(2, Int((Double(s) / cell).rounded()))
        let c = Double(s) / Double(cells)
        var points = [SIMD2<Double>](repeating: .zero, count: cells * cells)
        for i in points.indices { points[i] = SIMD2(rng.unit(), rng.unit()) * c }
        var out = [Float](repeating: 0, count: s * s)
        for y in 0..<s {
            let cy = Int(Double(y) / c)
            for x in 0..<s {
                let cx = Int(Double(x) / c)
                var best = Double.infinity
                for dy in -1...1 {
                    for dx in -1...1 {
                        let ix = cx + dx, iy = cy + dy
                        let wx = (ix + cells) % cells, wy = (iy + cells) % cells
                        let point = points[wy * cells + wx] + SIMD2(Double(ix), Double(iy)) * c
                        let d = SIMD2(Double(x) + 0.5, Double(y) + 0.5) - point
                        best = min(best, (d * d).sum())
                    }
                }
                out[y * s + x] = Float(-best.squareRoot() / c)
            }
        }
        normalize(&out)
        return out
    }
}

/// Classic 2D simplex noise (Perlin's simplex lattice) over a shuffled permutation table.
struct Simplex2D {
    private var perm = [Int](repeating: 0, count: 512)
    private static let gradients: [SIMD2<Double>] = (0..<8).map {
        let a = Double($0) * Double.pi / 4
        return SIMD2(Foundation.cos(a), Foundation.sin(a))
    }

    init(_ rng: inout SplitMix64) {
        var p = Array(0..<256)
        for i in stride(from: 255, to: 0, by: -1) {
            let j = Int(rng.next() % UInt64(i + 1))
            p.swapAt(i, j)
        }
        for i in 0..<512 { perm[i] = p[i & 255] }
    }

    func noise(_ x: Double, _ y: Double) -> Double {
        let f2 = 0.5 * (3.0.squareRoot() - 1), g2 = (3 - 3.0.squareRoot()) / 6
        let s = (x + y) * f2
        let i = Int((x + s).rounded(.down)), j = Int((y + s).rounded(.down))
        let t = Double(i + j) * g2
        let x0 = x - (Double(i) - t), y0 = y - (Double(j) - t)
        let (i1, j1) = x0 > y0 ? (1, 0) : (0, 1)
        let x1 = x0 - Double(i1) + g2, y1 = y0 - Double(j1) + g2
        let x2 = x0 - 1 + 2 * g2, y2 = y0 - 1 + 2 * g2
        let ii = i & 255, jj = j & 255
        func corner(_ dx: Double, _ dy: Double, _ h: Int) -> Double {
            let t = 0.5 - dx * dx - dy * dy
            if t < 0 { return 0 }
            let g = Self.gradients[h & 7]
            return t * t * t * t * (g.x * dx + g.y * dy)
        }
        let n0 = corner(x0, y0, perm[ii + perm[jj]])
        let n1 = corner(x1, y1, perm[ii + i1 + perm[jj + j1]])
        let n2 = corner(x2, y2, perm[ii + 1 + perm[jj + 1]])
        return 70 * (n0 + n1 + n2)
    }
}
