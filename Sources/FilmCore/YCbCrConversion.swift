/// BT.601 limited-range Y′CbCr to the engine's 8-bit RGB: the camera preview's first step.
/// It lives beside the engine, not in the camera module, because its row loop is vector code
/// and FilmCore is the module optimised in debug builds too (see `Package.swift`).
///
/// Every channel is within 0.57 of a level of the exact BT.601 matrix (R = 1.164 (Y − 16) +
/// 1.596 (Cr − 128), G = … − 0.392 (Cb − 128) − 0.813 (Cr − 128), B = … + 2.017 (Cb − 128))
/// for every Y, Cb and Cr (checked over all 2²⁴ once; `YCbCrConversionTests` checks half a
/// million): the vector path within 0.565, the one-pixel path within 0.5, so the two may
/// differ by a level on a few pixels.
public enum BT601 {
    /// Where a row's chroma samples are: I420's own Cb and Cr planes, or NV12's one plane of
    /// Cb, Cr pairs.
    public enum ChromaLayout {
        case planar(cb: UnsafePointer<UInt8>, cr: UnsafePointer<UInt8>)
        case interleaved(UnsafePointer<UInt8>)
    }

    /// One row whose pixels are the source's columns (the preview stream is configured at the
    /// screen's size): pixels x and x + 1 share chroma sample x / 2. Eight pixels at a time
    /// in 16-bit lanes, then the last few one by one; `width` × 3 bytes are written to `rgb`.
    public static func convertRow(luma: UnsafePointer<UInt8>, chroma: ChromaLayout, width: Int, into rgb: UnsafeMutablePointer<UInt8>) {
        switch chroma {
        case let .planar(cb, cr):
            let x = eightAtATime(luma: luma, width: width, into: rgb) { c in
                (UnsafeRawPointer(cb + c).loadUnaligned(as: SIMD4<UInt8>.self),
                 UnsafeRawPointer(cr + c).loadUnaligned(as: SIMD4<UInt8>.self))
            }
            oneAtATime(from: x, luma: luma, width: width, into: rgb) { (cb[$0], cr[$0]) }
        case let .interleaved(cbcr):
            let x = eightAtATime(luma: luma, width: width, into: rgb) { c in
                let pairs = UnsafeRawPointer(cbcr + c &* 2).loadUnaligned(as: SIMD8<UInt8>.self)
                return (pairs.evenHalf, pairs.oddHalf)
            }
            oneAtATime(from: x, luma: luma, width: width, into: rgb) { (cbcr[$0 &* 2], cbcr[$0 &* 2 &+ 1]) }
        }
    }

    /// One pixel, for rows that are scaled or cropped (columns picked from a table).
    @inlinable @inline(__always)
    public static func store(y: UInt8, cb: UInt8, cr: UInt8, to d: UnsafeMutablePointer<UInt8>) {
        store(y: y, chroma: chroma(cb: cb, cr: cr), to: d)
    }

    /// What a Cb, Cr pair adds to red, green and blue, in 16.16 fixed point.
    @usableFromInline @inline(__always)
    static func chroma(cb: UInt8, cr: UInt8) -> (r: Int32, g: Int32, b: Int32) {
        let dU = Int32(cb) &- 128, dV = Int32(cr) &- 128
        return (104595 &* dV, -25690 &* dU &- 53281 &* dV, 132186 &* dU)
    }

    /// One pixel in 16.16 fixed point, rounded. Wrapping arithmetic: no sum here leaves ±2³¹
    /// (luma ≤ 239 · 76284, chroma ≤ 128 · 132186).
    @usableFromInline @inline(__always)
    static func store(y: UInt8, chroma c: (r: Int32, g: Int32, b: Int32), to d: UnsafeMutablePointer<UInt8>) {
        let l = (Int32(y) &- 16) &* 76284 &+ 32768
        d[0] = UInt8(clamping: (l &+ c.r) &>> 16)
        d[1] = UInt8(clamping: (l &+ c.g) &>> 16)
        d[2] = UInt8(clamping: (l &+ c.b) &>> 16)
    }

    /// Pixels `x ..< width` two at a time (a pair shares `chromaAt(x / 2)`), the last alone.
    @inline(__always)
    private static func oneAtATime(from start: Int, luma: UnsafePointer<UInt8>, width: Int, into d: UnsafeMutablePointer<UInt8>,
                                   chromaAt: (Int) -> (UInt8, UInt8)) {
        var x = start
        while x < width {
            let (cb, cr) = chromaAt(x &>> 1)
            let c = chroma(cb: cb, cr: cr)
            store(y: luma[x], chroma: c, to: d + x &* 3)
            if x &+ 1 < width { store(y: luma[x &+ 1], chroma: c, to: d + (x &* 3 &+ 3)) }
            x &+= 2
        }
    }

    /// Pixels from 0 in blocks of eight, each block's four chroma samples from
    /// `chromaAt(x / 2)`; returns where the blocks stopped.
    ///
    /// In 16-bit lanes, in 1/32 of a level: Y − 16 and the chroma offsets are scaled by 128
    /// (239 · 128 fits) and multiplied keeping the high 16 bits (SSE2 `pmulhw`, NEON `smull` +
    /// narrowing), by each coefficient × 32/128 × 65536. Blue's 2.017 × 8192 does not fit a lane,
    /// so blue takes Cb × 64 (the 2) plus 0.017's product. The sums stay within ±17,200; then
    /// + 16, a shift by 5, a clamp to 0…255 written as masks (`LaneConversion.swift`) and the
    /// three channels interleaved: on x86-64 LLVM makes that shuffles and two stores; on
    /// aarch64 lane moves and byte stores (about 25 instructions a pixel there, against 12.4).
    /// Built instead as two vectors from the three, the loop came out longer on aarch64 and
    /// the same on x86-64.
    @inline(__always)
    private static func eightAtATime(luma: UnsafePointer<UInt8>, width: Int, into d: UnsafeMutablePointer<UInt8>,
                                     chromaAt: (Int) -> (SIMD4<UInt8>, SIMD4<UInt8>)) -> Int {
        var x = 0
        while x &+ 8 <= width {
            let y = unsafeBitCast(SIMD8<UInt16>(widening: UnsafeRawPointer(luma + x).loadUnaligned(as: SIMD8<UInt8>.self)), to: SIMD8<Int16>.self)
            let (cb4, cr4) = chromaAt(x &>> 1)
            let cb = SIMD8<Int16>(pairing: cb4) &- 128, cr = SIMD8<Int16>(pairing: cr4) &- 128
            let l = ((y &- 16) &<< 7).highProduct(19071) &+ 16
            let cb128 = cb &<< 7, cr128 = cr &<< 7
            let r = (l &+ cr128.highProduct(26149)) &>> 5
            let g = (l &- cb128.highProduct(6423) &- cr128.highProduct(13320)) &>> 5
            let b = (l &+ (cb &<< 6) &+ cb128.highProduct(279)) &>> 5
            var planes = (SIMD8<UInt8>(lowBytes: r.clampedToUInt8), SIMD8<UInt8>(lowBytes: g.clampedToUInt8),
                          SIMD8<UInt8>(lowBytes: b.clampedToUInt8))
            let o = d + x &* 3
            withUnsafeBytes(of: &planes) { p in
                for i in 0..<8 {
                    o[i &* 3] = p[i]
                    o[i &* 3 &+ 1] = p[8 &+ i]
                    o[i &* 3 &+ 2] = p[16 &+ i]
                }
            }
            x &+= 8
        }
        return x
    }
}

private extension SIMD8 where Scalar == UInt8 {
    /// Lanes 0, 2, 4, 6 (NV12's Cb of four pairs).
    @inline(__always) var evenHalf: SIMD4<UInt8> { SIMD4(self[0], self[2], self[4], self[6]) }
    /// Lanes 1, 3, 5, 7 (their Cr).
    @inline(__always) var oddHalf: SIMD4<UInt8> { SIMD4(self[1], self[3], self[5], self[7]) }
}

private extension SIMD8 where Scalar == Int16 {
    /// Four chroma samples, each for the two pixels that share it.
    @inline(__always)
    init(pairing v: SIMD4<UInt8>) {
        self.init(Int16(v[0]), Int16(v[0]), Int16(v[1]), Int16(v[1]), Int16(v[2]), Int16(v[2]), Int16(v[3]), Int16(v[3]))
    }

    /// The high 16 bits of each lane's product with `k`: lane by lane in 32 bits, which LLVM
    /// recognises as one `pmulhw` (NEON: `smull`, `smull2`, `uzp2`).
    @inline(__always)
    func highProduct(_ k: Int16) -> SIMD8<Int16> {
        let k = Int32(k)
        @inline(__always) func h(_ i: Int) -> Int16 { Int16(truncatingIfNeeded: (Int32(self[i]) &* k) &>> 16) }
        return SIMD8(h(0), h(1), h(2), h(3), h(4), h(5), h(6), h(7))
    }

    /// Each lane clamped to 0…255, for lanes within ±16383, as masks (min(x, 255) is
    /// x − max(x − 255, 0); max(x, 0) is x & ~(x >> 15)).
    @inline(__always)
    var clampedToUInt8: SIMD8<UInt16> {
        let over = self &- 255
        let top = self &- (over & ~(over &>> 15))
        return unsafeBitCast(top & ~(top &>> 15), to: SIMD8<UInt16>.self)
    }
}
