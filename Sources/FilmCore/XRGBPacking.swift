/// 8-bit RGB rows packed into a KMS scan-out buffer's XRGB8888 words (bytes B, G, R, 0xFF in
/// memory). Beside the engine, like `BT601`, because its row loop is vector code and FilmCore
/// is optimised in debug builds too.
public enum XRGB8888 {
    /// `width` pixels of `rgb` (3 bytes each) into `width` words of `out`, eight at a time where
    /// the row allows: two loads of the 24 bytes, the bytes reordered by lanes (LLVM's shuffles:
    /// about 6 instructions a pixel on SSE2 against 11 for the table walk), two stores.
    public static func pack(rgb: UnsafePointer<UInt8>, width: Int, into out: UnsafeMutablePointer<UInt32>) {
        var i = 0
        while i &+ 8 <= width {
            let s = rgb + i &* 3
            let a = UnsafeRawPointer(s).loadUnaligned(as: SIMD16<UInt8>.self)
            let b = UnsafeRawPointer(s + 16).loadUnaligned(as: SIMD8<UInt8>.self)
            let first = SIMD16<UInt8>(a[2], a[1], a[0], 255, a[5], a[4], a[3], 255, a[8], a[7], a[6], 255, a[11], a[10], a[9], 255)
            let second = SIMD16<UInt8>(a[14], a[13], a[12], 255, b[1], b[0], a[15], 255, b[4], b[3], b[2], 255, b[7], b[6], b[5], 255)
            UnsafeMutableRawPointer(out + i).storeBytes(of: first, as: SIMD16<UInt8>.self)
            UnsafeMutableRawPointer(out + (i &+ 4)).storeBytes(of: second, as: SIMD16<UInt8>.self)
            i &+= 8
        }
        while i < width {
            let s = rgb + i &* 3
            out[i] = 0xFF00_0000 | UInt32(s[0]) << 16 | UInt32(s[1]) << 8 | UInt32(s[2])
            i &+= 1
        }
    }
}
