/// Every per-pixel colour stage baked into one 3D table over 8-bit display-encoded input,
/// interpolated tetrahedrally in fixed point. Entries are 8.8 fixed-point display values
/// (0 … 255 × 256) packed as four UInt16 (the fourth unused), 8 bytes each, so a 33³ table
/// is 287 KB and stays in a Pi's L2 cache.
public struct ColorLUT: Sendable {
    public static let defaultGridSize = 33
    public let gridSize: Int
    let entries: [SIMD4<UInt16>]
    /// Per 8-bit input level: the lattice index along the axis (already multiplied by the
    /// axis stride for green and blue) and the fraction to the next point in 1/256ths.
    let redBase: [Int32]
    let greenBase: [Int32]
    let blueBase: [Int32]
    let fraction: [Int32]
    /// See `ColorLUTView.corners`.
    let corners: [Int32]

    /// Samples `transform` (display-encoded 0…1 in and out) on the lattice.
    public init(gridSize: Int = defaultGridSize, transform: (SIMD3<Double>) -> SIMD3<Double>) {
        precondition(gridSize >= 2 && gridSize <= 256, "LUT grid size out of range")
        self.gridSize = gridSize
        let n = gridSize, last = Double(n - 1)
        var entries = [SIMD4<UInt16>](repeating: .zero, count: n * n * n)
        for b in 0..<n {
            for g in 0..<n {
                for r in 0..<n {
                    let out = ColorMath.clamp01(transform(SIMD3(Double(r), Double(g), Double(b)) / last))
                    let q = (out * Double(65280)).rounded(.toNearestOrAwayFromZero)
                    entries[r + g * n + b * n * n] = SIMD4(UInt16(q.x), UInt16(q.y), UInt16(q.z), 0)
                }
            }
        }
        self.entries = entries
        var base = [Int32](repeating: 0, count: 256), frac = [Int32](repeating: 0, count: 256)
        for v in 0..<256 {
            let p = v * (n - 1)                       // position × 255
            var i = p / 255
            var f = ((p % 255) * 256 + 127) / 255      // fraction in 1/256ths
            if i >= n - 1 { i = n - 2; f = 256 }
            base[v] = Int32(i)
            frac[v] = Int32(f)
        }
        redBase = base
        greenBase = base.map { $0 * Int32(n) }
        blueBase = base.map { $0 * Int32(n * n) }
        fraction = frac
        let x = Int32(1), y = Int32(n), z = Int32(n * n)
        corners = [z, 0, y, y, z, x, 0, x,
                   y + z, 0, y + z, x + y, x + z, x + z, 0, x + y]
    }

    /// The identity (for timing other stages alone).
    public static let identity = ColorLUT { $0 }

    /// The LUT as `.cube` text, for tools that read that format (ffmpeg's lut3d, Resolve).
    public func cube(title: String?) -> CubeLUT {
        CubeLUT(title: title, size: gridSize, table: entries.map {
            SIMD3<Float>(Float($0.x), Float($0.y), Float($0.z)) / 65280
        })
    }
}

/// Raw pointers into a `ColorLUT`, valid while the LUT is alive; used by the inner loop.
struct ColorLUTView {
    let entries: UnsafePointer<SIMD4<UInt16>>
    let redBase: UnsafePointer<Int32>
    let greenBase: UnsafePointer<Int32>
    let blueBase: UnsafePointer<Int32>
    let fraction: UnsafePointer<Int32>
    let strideG: Int
    let strideB: Int

    /// Offsets of the tetrahedron's two middle corners, A at [k] and B at [8 + k], for the
    /// ordering index k = (fx ≥ fy) << 2 | (fy ≥ fz) << 1 | (fx ≥ fz) (k = 1 and 6 cannot occur).
    let corners: UnsafePointer<Int32>

    init(entries: UnsafePointer<SIMD4<UInt16>>, redBase: UnsafePointer<Int32>, greenBase: UnsafePointer<Int32>,
         blueBase: UnsafePointer<Int32>, fraction: UnsafePointer<Int32>, corners: UnsafePointer<Int32>, gridSize n: Int) {
        self.entries = entries
        self.corners = corners
        self.redBase = redBase
        self.greenBase = greenBase
        self.blueBase = blueBase
        self.fraction = fraction
        strideG = n
        strideB = n * n
    }

    /// 8.8 fixed-point output for one 8-bit RGB input: tetrahedral interpolation without
    /// branches. The tetrahedron's corners are c000, A (the axis of the largest fraction),
    /// B (the two largest axes) and c111, weighted 256 − f1, f1 − f2, f2 − f3 and f3 for the
    /// fractions sorted f1 ≥ f2 ≥ f3.
    @inline(__always)
    func lookup(_ r: Int, _ g: Int, _ b: Int) -> (Int32, Int32, Int32) {
        let node = Int(redBase[r] &+ greenBase[g] &+ blueBase[b])
        let fx = fraction[r], fy = fraction[g], fz = fraction[b]
        // Which of the six tetrahedra: three comparisons index the corner table.
        let k = Int((fx >= fy ? 4 : 0) | (fy >= fz ? 2 : 0) | (fx >= fz ? 1 : 0) as Int32)
        let oA = Int(corners[k]), oB = Int(corners[k &+ 8])
        let f1 = max(fx, max(fy, fz)), f3 = min(fx, min(fy, fz))
        let f2 = fx &+ fy &+ fz &- f1 &- f3
        let w0 = 256 &- f1, wA = f1 &- f2, wB = f2 &- f3
        // Four UInt16 per node (r, g, b, unused).
        let e = UnsafeRawPointer(entries).assumingMemoryBound(to: UInt16.self)
        let p0 = e + node &* 4, pA = e + (node &+ oA) &* 4, pB = e + (node &+ oB) &* 4
        let p1 = e + (node &+ 1 &+ strideG &+ strideB) &* 4
        @inline(__always) func channel(_ c: Int) -> Int32 {
            (Int32(p0[c]) &* w0 &+ Int32(pA[c]) &* wA &+ Int32(pB[c]) &* wB &+ Int32(p1[c]) &* f3 &+ 128) &>> 8
        }
        return (channel(0), channel(1), channel(2))
    }
}
