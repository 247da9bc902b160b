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

    /// 8.8 fixed-point output for one 8-bit RGB input (tetrahedral interpolation).
    @inline(__always)
    func lookup(_ r: Int, _ g: Int, _ b: Int) -> SIMD4<Int32> {
        let base = Int(redBase[r] &+ greenBase[g] &+ blueBase[b])
        let fx = fraction[r], fy = fraction[g], fz = fraction[b]
        let p = entries + base
        let c000 = SIMD4<Int32>(truncatingIfNeeded: p[0])
        let c111 = SIMD4<Int32>(truncatingIfNeeded: p[1 &+ strideG &+ strideB])
        var acc = c000 &* 256
        if fx >= fy {
            if fy >= fz {          // x ≥ y ≥ z
                let c100 = SIMD4<Int32>(truncatingIfNeeded: p[1]), c110 = SIMD4<Int32>(truncatingIfNeeded: p[1 &+ strideG])
                acc &+= (c100 &- c000) &* fx &+ (c110 &- c100) &* fy &+ (c111 &- c110) &* fz
            } else if fx >= fz {   // x ≥ z > y
                let c100 = SIMD4<Int32>(truncatingIfNeeded: p[1]), c101 = SIMD4<Int32>(truncatingIfNeeded: p[1 &+ strideB])
                acc &+= (c100 &- c000) &* fx &+ (c101 &- c100) &* fz &+ (c111 &- c101) &* fy
            } else {               // z > x ≥ y
                let c001 = SIMD4<Int32>(truncatingIfNeeded: p[strideB]), c101 = SIMD4<Int32>(truncatingIfNeeded: p[1 &+ strideB])
                acc &+= (c001 &- c000) &* fz &+ (c101 &- c001) &* fx &+ (c111 &- c101) &* fy
            }
        } else {
            if fz >= fy {          // z ≥ y > x
                let c001 = SIMD4<Int32>(truncatingIfNeeded: p[strideB]), c011 = SIMD4<Int32>(truncatingIfNeeded: p[strideG &+ strideB])
                acc &+= (c001 &- c000) &* fz &+ (c011 &- c001) &* fy &+ (c111 &- c011) &* fx
            } else if fz >= fx {   // y > z ≥ x
                let c010 = SIMD4<Int32>(truncatingIfNeeded: p[strideG]), c011 = SIMD4<Int32>(truncatingIfNeeded: p[strideG &+ strideB])
                acc &+= (c010 &- c000) &* fy &+ (c011 &- c010) &* fz &+ (c111 &- c011) &* fx
            } else {               // y > x > z
                let c010 = SIMD4<Int32>(truncatingIfNeeded: p[strideG]), c110 = SIMD4<Int32>(truncatingIfNeeded: p[1 &+ strideG])
                acc &+= (c010 &- c000) &* fy &+ (c110 &- c010) &* fx &+ (c111 &- c110) &* fz
            }
        }
        return (acc &+ 128) &>> 8
    }
}
