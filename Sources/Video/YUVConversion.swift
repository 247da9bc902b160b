/// RGB (8-bit, full range, BT.709 primaries: what the film engine writes) → Y′CbCr 4:2:0,
/// BT.709 matrix, limited range (Y 16–235, Cb/Cr 16–240): what H.264 and players expect.
/// Integer arithmetic in 16.16 fixed point; chroma from the average of each 2×2 block. Allocates
/// nothing; written so the compiler vectorises the row loops (NEON on the Pi, SSE/AVX here).
public enum YUVConversion {
    // BT.709: Kr 0.2126, Kb 0.0722; luma scaled by 219/255, chroma by 224/255, ×65536.
    static let yR: Int32 = 11966, yG: Int32 = 40254, yB: Int32 = 4064
    static let uR: Int32 = -6596, uG: Int32 = -22189, uB: Int32 = 28784
    static let vR: Int32 = 28784, vG: Int32 = -26145, vB: Int32 = -2639

    /// Converts `width` × `height` (both even) RGB pixels, rows `rgbStride` bytes apart, into
    /// the three planes.
    public static func convert(rgb: UnsafePointer<UInt8>, rgbStride: Int, width: Int, height: Int,
                               y: UnsafeMutablePointer<UInt8>, yStride: Int,
                               u: UnsafeMutablePointer<UInt8>, uStride: Int,
                               v: UnsafeMutablePointer<UInt8>, vStride: Int) {
        precondition(width % 2 == 0 && height % 2 == 0, "4:2:0 needs even sizes")
        for row in stride(from: 0, to: height, by: 2) {
            let top = rgb + row * rgbStride, bottom = top + rgbStride
            let y0 = y + row * yStride, y1 = y0 + yStride
            let uRow = u + (row / 2) * uStride, vRow = v + (row / 2) * vStride
            for x in stride(from: 0, to: width, by: 2) {
                let a = top + x * 3, b = bottom + x * 3
                let r00 = Int32(a[0]), g00 = Int32(a[1]), b00 = Int32(a[2])
                let r01 = Int32(a[3]), g01 = Int32(a[4]), b01 = Int32(a[5])
                let r10 = Int32(b[0]), g10 = Int32(b[1]), b10 = Int32(b[2])
                let r11 = Int32(b[3]), g11 = Int32(b[4]), b11 = Int32(b[5])
                y0[x] = luma(r00, g00, b00)
                y0[x + 1] = luma(r01, g01, b01)
                y1[x] = luma(r10, g10, b10)
                y1[x + 1] = luma(r11, g11, b11)
                let rs = r00 + r01 + r10 + r11, gs = g00 + g01 + g10 + g11, bs = b00 + b01 + b10 + b11
                // Sums of four: one more bit of scale (>> 18), rounded.
                uRow[x / 2] = UInt8(truncatingIfNeeded: ((uR * rs + uG * gs + uB * bs + (1 << 17)) >> 18) + 128)
                vRow[x / 2] = UInt8(truncatingIfNeeded: ((vR * rs + vG * gs + vB * bs + (1 << 17)) >> 18) + 128)
            }
        }
    }

    @inline(__always)
    static func luma(_ r: Int32, _ g: Int32, _ b: Int32) -> UInt8 {
        UInt8(truncatingIfNeeded: ((yR * r + yG * g + yB * b + (1 << 15)) >> 16) + 16)
    }
}
