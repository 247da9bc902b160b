/// Vector helpers for the per-pixel loops, written so that LLVM emits them inline as the
/// unpack, pack, min and max instructions they are:
/// - conversions lane by lane: the standard library's generic `init(truncatingIfNeeded:)`
///   between SIMD types is specialised but left a call there (its body is a 16-step loop when
///   the inliner looks at it), and the call costs more than the conversion;
/// - 8 lanes of 16 bits, one SSE or NEON register: on 16 such lanes LLVM narrowed the second
///   half byte by byte (some 40 instructions for one pack on x86-64's baseline SSE2).
/// Clamps are not here: `pointwiseMin`/`pointwiseMax` stay calls and scalar `min`/`max` lane
/// by lane became branches; a plain loop over bytes with the clamp in it, which LLVM
/// vectorises itself, gets a saturating pack instead (see `GrainTexture.mixRows`).
extension SIMD8 where Scalar == UInt16 {
    @inline(__always)
    init(widening v: SIMD8<UInt8>) {
        self.init(UInt16(v[0]), UInt16(v[1]), UInt16(v[2]), UInt16(v[3]), UInt16(v[4]), UInt16(v[5]), UInt16(v[6]), UInt16(v[7]))
    }
}

extension SIMD8 where Scalar == Int32 {
    @inline(__always)
    init(widening v: SIMD8<UInt16>) {
        self.init(Int32(v[0]), Int32(v[1]), Int32(v[2]), Int32(v[3]), Int32(v[4]), Int32(v[5]), Int32(v[6]), Int32(v[7]))
    }

    /// Sign-extended (a mask of all ones stays all ones).
    @inline(__always)
    init(widening v: SIMD8<Int16>) {
        self.init(Int32(v[0]), Int32(v[1]), Int32(v[2]), Int32(v[3]), Int32(v[4]), Int32(v[5]), Int32(v[6]), Int32(v[7]))
    }
}

extension SIMD8 where Scalar == UInt8 {
    /// The low byte of each lane.
    @inline(__always)
    init(lowBytes v: SIMD8<UInt16>) {
        self.init(UInt8(truncatingIfNeeded: v[0]), UInt8(truncatingIfNeeded: v[1]), UInt8(truncatingIfNeeded: v[2]), UInt8(truncatingIfNeeded: v[3]),
                  UInt8(truncatingIfNeeded: v[4]), UInt8(truncatingIfNeeded: v[5]), UInt8(truncatingIfNeeded: v[6]), UInt8(truncatingIfNeeded: v[7]))
    }
}
