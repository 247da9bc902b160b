/// Every per-pixel colour stage baked into one 3D table over 8-bit display-encoded input,
/// interpolated tetrahedrally in fixed point. An entry is one UInt64 holding the three
/// display values in 1/32nds of a level (0 … 255 × 32) in fields of 21 bits (red in the low
/// bits), so a 33³ table is 287 KB and stays in a Pi's L2 cache, and a lookup weighs four
/// whole entries — four multiplies — instead of twelve channels: a value times a weight
/// (≤ 256) and the sum of the four (whose weights add up to 256) stay below 2²¹, so no field
/// carries into the next.
public struct ColorLUT: Sendable {
    public static let defaultGridSize = 33
    public let gridSize: Int
    /// Steps of a level an entry's field counts, and the fields' width.
    static let fieldScale = 32
    static let fieldBits: UInt64 = 21
    static let fieldMask: UInt64 = (1 << 21) - 1
    let entries: [UInt64]
    /// Per 8-bit input level v, at [4v …]: the lattice index along the red, green and blue
    /// axes (multiplied by the axis's stride: 1, n, n²) and the fraction to the next point in
    /// 1/256ths — one table, so that the pixel loop keeps one pointer live for them, not four.
    /// Whole words, as the loop uses them: no widening of indices and weights in it.
    let levels: [Int]
    /// The lattice index along an axis for a level (`levels` without the strides).
    func base(_ v: Int) -> Int { levels[4 * v] }
    /// The fraction past `base(v)` for a level, in 1/256ths.
    func fraction(_ v: Int) -> Int32 { Int32(levels[4 * v + 3]) }
    /// See `ColorLUTView.corners`.
    let corners: [Int]

    /// Samples `transform` (display-encoded 0…1 in and out) on the lattice.
    public init(gridSize: Int = defaultGridSize, transform: (SIMD3<Double>) -> SIMD3<Double>) {
        precondition(gridSize >= 2 && gridSize <= 256, "LUT grid size out of range")
        self.gridSize = gridSize
        let n = gridSize, last = Double(n - 1)
        var entries = [UInt64](repeating: 0, count: n * n * n)
        let top = Double(255 * Self.fieldScale)
        for b in 0..<n {
            for g in 0..<n {
                for r in 0..<n {
                    let out = ColorMath.clamp01(transform(SIMD3(Double(r), Double(g), Double(b)) / last))
                    let q = (out * top).rounded(.toNearestOrAwayFromZero)
                    entries[r + g * n + b * n * n] = Self.pack(UInt64(q.x), UInt64(q.y), UInt64(q.z))
                }
            }
        }
        self.entries = entries
        var base = [Int](repeating: 0, count: 256), frac = [Int](repeating: 0, count: 256)
        for v in 0..<256 {
            let p = v * (n - 1)                       // position × 255
            var i = p / 255
            var f = ((p % 255) * 256 + 127) / 255      // fraction in 1/256ths
            if i >= n - 1 { i = n - 2; f = 256 }
            base[v] = i
            frac[v] = f
        }
        levels = (0..<256).flatMap { [base[$0], base[$0] * n, base[$0] * n * n, frac[$0]] }
        let x = 1, y = n, z = n * n
        corners = [z, 0, y, y, z, x, 0, x,
                   y + z, 0, y + z, x + y, x + z, x + z, 0, x + y]
    }

    static func pack(_ r: UInt64, _ g: UInt64, _ b: UInt64) -> UInt64 {
        r | g << fieldBits | b << (2 * fieldBits)
    }

    /// An entry's three fields (1/32nds of a level, or weighted sums of them).
    @inline(__always)
    static func unpack(_ e: UInt64) -> (UInt64, UInt64, UInt64) {
        (e & fieldMask, (e >> fieldBits) & fieldMask, e >> (2 * fieldBits))
    }

    /// The identity (for timing other stages alone).
    public static let identity = ColorLUT { $0 }

    /// Converts `pixelCount` 8-bit RGB pixels through the table, rounding to 8 bits; `input` and
    /// `output` may be the same buffer. Safe from several threads at once (it only reads).
    public func apply(_ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>, pixelCount: Int) {
        withView { lut in
            for px in 0..<pixelCount {
                let i = px &* 3
                let (r, g, b) = lut.lookup(Int(input[i]), Int(input[i &+ 1]), Int(input[i &+ 2]))
                output[i] = UInt8(truncatingIfNeeded: (r &+ 128) &>> 8)
                output[i &+ 1] = UInt8(truncatingIfNeeded: (g &+ 128) &>> 8)
                output[i &+ 2] = UInt8(truncatingIfNeeded: (b &+ 128) &>> 8)
            }
        }
    }

    /// `body` with raw pointers into the table.
    func withView<R>(_ body: (ColorLUTView) -> R) -> R {
        entries.withUnsafeBufferPointer { e in
        levels.withUnsafeBufferPointer { l in
        corners.withUnsafeBufferPointer { c in
            body(ColorLUTView(entries: e.baseAddress!, levels: l.baseAddress!, corners: c.baseAddress!, gridSize: gridSize))
        }}}
    }

    /// The LUT as `.cube` text, for tools that read that format (ffmpeg's lut3d, Resolve).
    public func cube(title: String?) -> CubeLUT {
        CubeLUT(title: title, size: gridSize, table: entries.map {
            let (r, g, b) = Self.unpack($0)
            return SIMD3<Float>(Float(r), Float(g), Float(b)) / Float(255 * Self.fieldScale)
        })
    }
}

/// Raw pointers into a `ColorLUT`, valid while the LUT is alive; used by the inner loop.
struct ColorLUTView {
    let entries: UnsafePointer<UInt64>
    /// `ColorLUT.levels`.
    let levels: UnsafePointer<Int>
    /// The offset of the corner across the cell from its first: 1 + n + n².
    let diagonal: Int

    /// Offsets of the tetrahedron's two middle corners, A at [k] and B at [8 + k], for the
    /// ordering index k = (fx ≥ fy) << 2 | (fy ≥ fz) << 1 | (fx ≥ fz) (k = 1 and 6 cannot occur).
    let corners: UnsafePointer<Int>

    init(entries: UnsafePointer<UInt64>, levels: UnsafePointer<Int>, corners: UnsafePointer<Int>, gridSize n: Int) {
        self.entries = entries
        self.levels = levels
        self.corners = corners
        diagonal = 1 + n + n * n
    }

    /// 8.8 fixed-point output (0 … 65280) for one 8-bit RGB input: tetrahedral interpolation
    /// without branches. The tetrahedron's corners are c000, A (the axis of the largest fraction),
    /// B (the two largest axes) and c111, weighted 256 − f1, f1 − f2, f2 − f3 and f3 for the
    /// fractions sorted f1 ≥ f2 ≥ f3.
    @inline(__always)
    func lookup(_ r: Int, _ g: Int, _ b: Int) -> (Int32, Int32, Int32) {
        let lr = levels + r &* 4, lg = levels + g &* 4, lb = levels + b &* 4
        let node = lr[0] &+ lg[1] &+ lb[2]
        let fx = lr[3], fy = lg[3], fz = lb[3]
        // Which of the six tetrahedra: three comparisons index the corner table.
        let k = (fx >= fy ? 4 : 0) | (fy >= fz ? 2 : 0) | (fx >= fz ? 1 : 0)
        let oA = corners[k], oB = corners[k &+ 8]
        let f1 = max(fx, max(fy, fz)), f3 = min(fx, min(fy, fz))
        let f2 = fx &+ fy &+ fz &- f1 &- f3
        let w0 = UInt64(bitPattern: Int64(256 &- f1)), wA = UInt64(bitPattern: Int64(f1 &- f2))
        let wB = UInt64(bitPattern: Int64(f2 &- f3)), w1 = UInt64(bitPattern: Int64(f3))
        // All three channels at once: each field is Σ value × weight < 2²¹ (see `ColorLUT`).
        // The rounding term makes each field's sum/256 × 8 (1/32nds to 1/256ths) round.
        let sum = entries[node] &* w0 &+ entries[node &+ oA] &* wA &+ entries[node &+ oB] &* wB
            &+ entries[node &+ diagonal] &* w1 &+ Self.rounding
        let (r, g, b) = ColorLUT.unpack(sum)
        return (Int32(truncatingIfNeeded: r &>> 5), Int32(truncatingIfNeeded: g &>> 5), Int32(truncatingIfNeeded: b &>> 5))
    }

    /// Half of the last step in each field: sum/256 is in 1/32nds and the output in 1/256ths,
    /// so the output is sum >> 5, rounded by 16.
    static let rounding = ColorLUT.pack(16, 16, 16)
}
