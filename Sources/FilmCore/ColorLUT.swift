/// Every per-pixel colour stage baked into one 3D table over 8-bit display-encoded input,
/// interpolated tetrahedrally in fixed point. An entry is one UInt64 holding the three
/// display values in 1/32nds of a level (0 … 255 × 32) in fields of 21 bits (red in the low
/// bits), so a 33³ table is 287 KB and stays in a Pi's L2 cache, and a lookup weighs four
/// whole entries — four multiplies — instead of twelve channels: a value times a weight
/// (≤ 256) and the sum of the four (whose weights add up to 256) stay below 2²¹, so no field
/// carries into the next.
public struct ColorLUT: Sendable {
    public static let defaultGridSize = 33
    /// The largest grid whose lattice indices (below n³) fit the 16-bit lanes of `ColorLUTCells`.
    public static let maxGridSize = 40
    public let gridSize: Int
    /// Steps of a level an entry's field counts, and the fields' width.
    static let fieldScale = 32
    static let fieldBits: UInt64 = 21
    static let fieldMask: UInt64 = (1 << 21) - 1
    let entries: [UInt64]
    /// The lattice index along an axis for an 8-bit level v and the fraction to the next
    /// point in 1/256ths: v·(n − 1)/255 split into whole and part, the top level at fraction
    /// 256 of the last cell. The pixel loop makes the same in vector lanes
    /// (`ColorLUTCells.lattice`); these are for tests and tools.
    func base(_ v: Int) -> Int { v == 255 ? gridSize - 2 : v * (gridSize - 1) / 255 }
    func fraction(_ v: Int) -> Int32 { v == 255 ? 256 : Int32((v * (gridSize - 1) % 255 * 256 + 127) / 255) }

    /// Samples `transform` (display-encoded 0…1 in and out) on the lattice.
    public init(gridSize: Int = defaultGridSize, transform: (SIMD3<Double>) -> SIMD3<Double>) {
        precondition(gridSize >= 2 && gridSize <= Self.maxGridSize, "LUT grid size out of range")
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
            var cells = ColorLUTCells()
            var px = 0
            while px < pixelCount {
                let lanes = cells.fill(lut, pixels: input + px &* 3, count: pixelCount &- px)
                for l in 0..<lanes {
                    let (r, g, b) = cells.value(lut, pixel: l), o = output + (px &+ l) &* 3
                    o[0] = UInt8(truncatingIfNeeded: (r &+ 128) &>> 8)
                    o[1] = UInt8(truncatingIfNeeded: (g &+ 128) &>> 8)
                    o[2] = UInt8(truncatingIfNeeded: (b &+ 128) &>> 8)
                }
                px &+= lanes
            }
        }
    }

    /// `body` with a raw pointer into the table.
    func withView<R>(_ body: (ColorLUTView) -> R) -> R {
        entries.withUnsafeBufferPointer { body(ColorLUTView(entries: $0.baseAddress!, gridSize: gridSize)) }
    }

    /// The LUT as `.cube` text, for tools that read that format (ffmpeg's lut3d, Resolve).
    public func cube(title: String?) -> CubeLUT {
        CubeLUT(title: title, size: gridSize, table: entries.map {
            let (r, g, b) = Self.unpack($0)
            return SIMD3<Float>(Float(r), Float(g), Float(b)) / Float(255 * Self.fieldScale)
        })
    }
}

/// A raw pointer into a `ColorLUT`, valid while the LUT is alive; used by the inner loops.
struct ColorLUTView {
    let entries: UnsafePointer<UInt64>
    let gridSize: Int
    /// The offset of the corner across the cell from its first: 1 + n + n².
    let diagonal: Int

    init(entries: UnsafePointer<UInt64>, gridSize n: Int) {
        self.entries = entries
        self.gridSize = n
        diagonal = 1 + n + n * n
    }

    /// Half of the last step in each field: sum/256 is in 1/32nds and the output in 1/256ths,
    /// so the output is sum >> 5, rounded by 16.
    static let rounding = ColorLUT.pack(16, 16, 16)
}

/// Eight pixels' tetrahedra, made in vector lanes: per pixel, the lattice indices of the four
/// corners that weigh in and their weights. Tetrahedral interpolation picks, for fractions
/// sorted f1 ≥ f2 ≥ f3, the cell's first corner c000, A (one step along the axis of the
/// largest fraction), B (steps along all but the axis of the smallest) and c111, weighted
/// 256 − f1, f1 − f2, f2 − f3 and f3. Where fractions tie the corner the tie leaves open
/// has weight 0, so any choice gives the same sum. Made eight at a time this is about a
/// quarter of the lookup's instructions that it was one pixel at a time (compares, sorts and
/// index sums in scalar registers, with spills); the four table loads stay scalar (neither
/// SSE2 nor NEON gathers).
struct ColorLUTCells {
    // Read back lane by lane through raw pointers at these offsets (`weightsOffset`; the
    // layout is checked in FastPathTests).
    // Lattice indices are below n³ ≤ 40³ (`ColorLUT.maxGridSize`), so they take 16-bit lanes
    // like the weights: half the vector work of 32-bit lanes, and SSE2 multiplies 16-bit lanes
    // in one instruction.
    var node = SIMD8<UInt16>(), cornerA = SIMD8<UInt16>(), cornerB = SIMD8<UInt16>()
    var w0 = SIMD8<UInt16>(), wA = SIMD8<UInt16>(), wB = SIMD8<UInt16>(), w1 = SIMD8<UInt16>()
    static let weightsOffset = 48

    /// The cells of the next `min(count, 8)` RGB pixels at `pixels` (reading no byte past
    /// them); returns how many.
    @inline(__always)
    mutating func fill(_ lut: ColorLUTView, pixels: UnsafePointer<UInt8>, count: Int) -> Int {
        if count >= 8 {
            fill(lut, eight: pixels)
            return 8
        }
        var padded = SIMD32<UInt8>()
        withUnsafeMutableBytes(of: &padded) { $0.baseAddress!.copyMemory(from: pixels, byteCount: count * 3) }
        withUnsafeBytes(of: &padded) { fill(lut, eight: $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        return count
    }

    /// The lane that holds pixel `pixel` (0 ..< 8) of a group: 3 × pixel mod 8 (its own inverse).
    @inline(__always)
    static func lane(ofPixel pixel: Int) -> Int { (pixel &* 3) & 7 }

    /// The 24 bytes of eight pixels as three vectors of one channel each, pixel k in lane
    /// `lane(ofPixel: k)`. Read as three 8-byte vectors, channel c of pixel k is lane 3k + c
    /// of them, counted across all three; masking takes each channel's lanes from each vector
    /// where they lie (for red, lanes 0, 3, 6 of the first, 1, 4, 7 of the second, 2 and 5 of
    /// the third), so the lanes come out in the order 3k mod 8, and green and blue need only a
    /// rotation by one and two lanes to line up with red. Taken apart in pixel order, the
    /// three channels took about 60 SSE2 instructions; this way about 45.
    @inline(__always)
    static func channels(_ p: UnsafePointer<UInt8>) -> (r: SIMD8<UInt16>, g: SIMD8<UInt16>, b: SIMD8<UInt16>) {
        let front = UnsafeRawPointer(p).loadUnaligned(as: SIMD16<UInt8>.self)
        let a0 = SIMD8<UInt16>(widening: front.lowHalf), a1 = SIMD8<UInt16>(widening: front.highHalf)
        let a2 = SIMD8<UInt16>(widening: UnsafeRawPointer(p + 16).loadUnaligned(as: SIMD8<UInt8>.self))
        let x: UInt16 = 0xFFFF
        let m0 = SIMD8<UInt16>(x, 0, 0, x, 0, 0, x, 0), m1 = SIMD8<UInt16>(0, x, 0, 0, x, 0, 0, x)
        let m2 = SIMD8<UInt16>(0, 0, x, 0, 0, x, 0, 0)
        let r = (a0 & m0) | (a1 & m1) | (a2 & m2)
        let g = (a0 & m1) | (a1 & m2) | (a2 & m0)
        let b = (a0 & m2) | (a1 & m0) | (a2 & m1)
        return (r, SIMD8(g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[0]), SIMD8(b[2], b[3], b[4], b[5], b[6], b[7], b[0], b[1]))
    }

    @inline(__always)
    private mutating func fill(_ lut: ColorLUTView, eight p: UnsafePointer<UInt8>) {
        let (r, g, b) = Self.channels(p)
        let n = lut.gridSize
        let (ir, fx) = Self.lattice(r, gridSize: n), (ig, fy) = Self.lattice(g, gridSize: n), (ib, fz) = Self.lattice(b, gridSize: n)
        let ys = SIMD8<UInt16>(repeating: UInt16(truncatingIfNeeded: n)), zs = ys &* ys, xs = SIMD8<UInt16>(repeating: 1)
        let first = ir &+ (ig &+ ib &* ys) &* ys
        // All ones where the first fraction is the smaller (fractions are 0…256: no overflow).
        let xBelowY = (fx &- fy) &>> 15, yBelowZ = (fy &- fz) &>> 15, xBelowZ = (fx &- fz) &>> 15
        @inline(__always) func larger(_ a: SIMD8<Int16>, _ b: SIMD8<Int16>, aBelow: SIMD8<Int16>) -> SIMD8<Int16> { (a & ~aBelow) | (b & aBelow) }
        @inline(__always) func smaller(_ a: SIMD8<Int16>, _ b: SIMD8<Int16>, aBelow: SIMD8<Int16>) -> SIMD8<Int16> { (a & aBelow) | (b & ~aBelow) }
        let maxXY = larger(fx, fy, aBelow: xBelowY), minXY = smaller(fx, fy, aBelow: xBelowY)
        let f1 = larger(maxXY, fz, aBelow: (maxXY &- fz) &>> 15), f3 = smaller(minXY, fz, aBelow: (minXY &- fz) &>> 15)
        let f2 = fx &+ fy &+ fz &- f1 &- f3
        @inline(__always) func mask(_ m: SIMD8<Int16>) -> SIMD8<UInt16> { SIMD8<UInt16>(truncatingIfNeeded: m) }
        let largestX = mask(~xBelowY & ~xBelowZ), largestY = mask(xBelowY & ~yBelowZ)
        let smallestX = mask(xBelowY & xBelowZ), smallestY = mask(~xBelowY & yBelowZ)
        let alongLargest = (xs & largestX) | (ys & largestY) | (zs & ~(largestX | largestY))
        let alongSmallest = (xs & smallestX) | (ys & smallestY) | (zs & ~(smallestX | smallestY))
        node = first
        cornerA = first &+ alongLargest
        cornerB = first &+ (xs &+ ys &+ zs &- alongSmallest)
        w0 = SIMD8<UInt16>(truncatingIfNeeded: 256 &- f1)
        wA = SIMD8<UInt16>(truncatingIfNeeded: f1 &- f2)
        wB = SIMD8<UInt16>(truncatingIfNeeded: f2 &- f3)
        w1 = SIMD8<UInt16>(truncatingIfNeeded: f3)
    }

    /// `ColorLUT.base` and `fraction` of eight levels, for a grid of `n` points an axis:
    /// v · (n − 1) ≤ 65025, and the remainder × 256 + 127 ≤ 65151, so 16-bit lanes hold them,
    /// and x / 255 for x < 65280 is (x + 1 + x / 256) / 256.
    @inline(__always)
    static func lattice(_ v: SIMD8<UInt16>, gridSize n: Int) -> (SIMD8<UInt16>, SIMD8<Int16>) {
        @inline(__always) func div255(_ x: SIMD8<UInt16>) -> SIMD8<UInt16> { (x &+ 1 &+ (x &>> 8)) &>> 8 }
        let position = v &* SIMD8<UInt16>(repeating: UInt16(truncatingIfNeeded: n - 1)), i = div255(position)
        let top = (v &+ 1) &>> 8                   // 1 for level 255, in the last cell at 256
        let f = div255((position &- i &* 255) &<< 8 &+ 127) | top &<< 8
        return (i &- top, SIMD8<Int16>(truncatingIfNeeded: f))
    }

    /// Pixel `pixel`'s colour (0 ..< 8, of the group `fill` read) in 8.8 fixed point
    /// (0 … 65280): its four entries, weighted, all three channels at once (each field is
    /// Σ value × weight < 2²¹, see `ColorLUT`).
    @inline(__always)
    mutating func value(_ lut: ColorLUTView, pixel: Int) -> (Int32, Int32, Int32) {
        let l = Self.lane(ofPixel: pixel)
        return withUnsafeBytes(of: &self) { raw in
            let at = raw.baseAddress!
            let nodes = at.assumingMemoryBound(to: UInt16.self), cornersA = nodes + 8, cornersB = nodes + 16
            let weights = (at + Self.weightsOffset).assumingMemoryBound(to: UInt16.self)
            let e = lut.entries, first = Int(nodes[l])
            let sum = e[first] &* UInt64(weights[l]) &+ e[Int(cornersA[l])] &* UInt64(weights[8 &+ l])
                &+ e[Int(cornersB[l])] &* UInt64(weights[16 &+ l]) &+ e[first &+ lut.diagonal] &* UInt64(weights[24 &+ l])
                &+ ColorLUTView.rounding
            let (r, g, b) = ColorLUT.unpack(sum)
            return (Int32(truncatingIfNeeded: r &>> 5), Int32(truncatingIfNeeded: g &>> 5), Int32(truncatingIfNeeded: b &>> 5))
        }
    }
}
