/// Conversions between vector types written lane by lane for the per-pixel loops: the
/// standard library's generic `init(truncatingIfNeeded:)` between SIMD16 types is specialised
/// but left a call there (its body is a 16-step loop when the inliner looks at it), and the
/// call costs more than the conversion. Lane by lane, LLVM sees 16 scalar conversions it
/// turns into the same unpack or pack instructions, inline.
extension SIMD16 where Scalar == UInt16 {
    @inline(__always)
    init(widening v: SIMD16<UInt8>) {
        self.init(UInt16(v[0]), UInt16(v[1]), UInt16(v[2]), UInt16(v[3]), UInt16(v[4]), UInt16(v[5]), UInt16(v[6]), UInt16(v[7]),
                  UInt16(v[8]), UInt16(v[9]), UInt16(v[10]), UInt16(v[11]), UInt16(v[12]), UInt16(v[13]), UInt16(v[14]), UInt16(v[15]))
    }
}

extension SIMD16 where Scalar == Int16 {
    @inline(__always)
    init(widening v: SIMD16<Int8>) {
        self.init(Int16(v[0]), Int16(v[1]), Int16(v[2]), Int16(v[3]), Int16(v[4]), Int16(v[5]), Int16(v[6]), Int16(v[7]),
                  Int16(v[8]), Int16(v[9]), Int16(v[10]), Int16(v[11]), Int16(v[12]), Int16(v[13]), Int16(v[14]), Int16(v[15]))
    }
}

extension SIMD16 where Scalar == UInt8 {
    /// The low byte of each lane.
    @inline(__always)
    init(lowBytes v: SIMD16<UInt16>) {
        self.init(UInt8(truncatingIfNeeded: v[0]), UInt8(truncatingIfNeeded: v[1]), UInt8(truncatingIfNeeded: v[2]), UInt8(truncatingIfNeeded: v[3]),
                  UInt8(truncatingIfNeeded: v[4]), UInt8(truncatingIfNeeded: v[5]), UInt8(truncatingIfNeeded: v[6]), UInt8(truncatingIfNeeded: v[7]),
                  UInt8(truncatingIfNeeded: v[8]), UInt8(truncatingIfNeeded: v[9]), UInt8(truncatingIfNeeded: v[10]), UInt8(truncatingIfNeeded: v[11]),
                  UInt8(truncatingIfNeeded: v[12]), UInt8(truncatingIfNeeded: v[13]), UInt8(truncatingIfNeeded: v[14]), UInt8(truncatingIfNeeded: v[15]))
    }
}

extension SIMD16 where Scalar == Int8 {
    /// The low byte of each lane.
    @inline(__always)
    init(lowBytes v: SIMD16<Int16>) {
        self.init(Int8(truncatingIfNeeded: v[0]), Int8(truncatingIfNeeded: v[1]), Int8(truncatingIfNeeded: v[2]), Int8(truncatingIfNeeded: v[3]),
                  Int8(truncatingIfNeeded: v[4]), Int8(truncatingIfNeeded: v[5]), Int8(truncatingIfNeeded: v[6]), Int8(truncatingIfNeeded: v[7]),
                  Int8(truncatingIfNeeded: v[8]), Int8(truncatingIfNeeded: v[9]), Int8(truncatingIfNeeded: v[10]), Int8(truncatingIfNeeded: v[11]),
                  Int8(truncatingIfNeeded: v[12]), Int8(truncatingIfNeeded: v[13]), Int8(truncatingIfNeeded: v[14]), Int8(truncatingIfNeeded: v[15]))
    }
}
