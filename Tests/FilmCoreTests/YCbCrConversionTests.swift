import XCTest
import FilmCore

/// `BT601`: every pixel of a row, in the eight-pixel blocks and in the pixels after them,
/// against the BT.601 matrix in doubles, for both chroma layouts.
final class YCbCrConversionTests: XCTestCase {
    /// The exact matrix, rounded to the nearest level and clamped, as a real number.
    private func expected(y: UInt8, cb: UInt8, cr: UInt8) -> [Double] {
        let l = 1.164 * (Double(y) - 16), u = Double(cb) - 128, v = Double(cr) - 128
        return [l + 1.596 * v, l - 0.392 * u - 0.813 * v, l + 2.017 * u].map { min(max($0, 0), 255) }
    }

    /// Rows of 256 pixels (32 blocks of eight) in which every luma level appears and every
    /// chroma sample differs from its neighbours (so a sample given to the wrong pair shows),
    /// 2,048 of them: Y, Cb and Cr over their whole range, out-of-range codes included.
    func testEveryPixelOfARowIsWithinSixTenthsOfALevel() {
        let width = 256
        var luma = [UInt8](repeating: 0, count: width), cb = [UInt8](repeating: 0, count: width / 2)
        var cr = cb, pairs = [UInt8](repeating: 0, count: width)
        var planar = [UInt8](repeating: 0, count: width * 3), interleaved = planar
        var worst = 0.0
        for row in 0..<2048 {
            for x in 0..<width { luma[x] = UInt8(truncatingIfNeeded: x &* 73 &+ row &* 37) }
            for j in 0..<(width / 2) {
                cb[j] = UInt8(truncatingIfNeeded: j &* 7 &+ row &* 13)
                cr[j] = UInt8(truncatingIfNeeded: j &* 11 &+ row &* 29 &+ 5)
                pairs[j * 2] = cb[j]
                pairs[j * 2 + 1] = cr[j]
            }
            convert(luma: luma, cb: cb, cr: cr, pairs: pairs, width: width, planar: &planar, interleaved: &interleaved)
            for x in 0..<width {
                let e = expected(y: luma[x], cb: cb[x / 2], cr: cr[x / 2])
                for c in 0..<3 {
                    worst = max(worst, abs(Double(planar[x * 3 + c]) - e[c]))
                    XCTAssertEqual(planar[x * 3 + c], interleaved[x * 3 + c], "row \(row) pixel \(x) channel \(c): the layouts disagree")
                }
            }
            if worst > 0.6 { break }
        }
        XCTAssertLessThanOrEqual(worst, 0.6, "the worst channel's distance from BT.601")
    }

    /// Widths 1…40: the blocks of eight, then the one or two pixels a chroma sample after them,
    /// an odd last pixel with a chroma sample of its own, and not a byte written past the row.
    func testRowsOfEveryShortWidthConvertEachPixelAndNoMore() {
        for width in 1...40 {
            let chromaCount = (width + 1) / 2
            let luma = (0..<width).map { UInt8(truncatingIfNeeded: 20 &+ $0 &* 57) }
            let cb = (0..<chromaCount).map { UInt8(truncatingIfNeeded: 40 &+ $0 &* 91) }
            let cr = (0..<chromaCount).map { UInt8(truncatingIfNeeded: 200 &+ $0 &* 45) }
            let pairs = (0..<chromaCount).flatMap { [cb[$0], cr[$0]] }
            var planar = [UInt8](repeating: 0xA5, count: width * 3 + 8), interleaved = planar
            convert(luma: luma, cb: cb, cr: cr, pairs: pairs, width: width, planar: &planar, interleaved: &interleaved)
            for x in 0..<width {
                let e = expected(y: luma[x], cb: cb[x / 2], cr: cr[x / 2])
                for c in 0..<3 {
                    XCTAssertEqual(Double(planar[x * 3 + c]), e[c], accuracy: 0.6, "width \(width) pixel \(x) channel \(c), planar")
                    XCTAssertEqual(Double(interleaved[x * 3 + c]), e[c], accuracy: 0.6, "width \(width) pixel \(x) channel \(c), interleaved")
                }
            }
            XCTAssertEqual(Array(planar[(width * 3)...]), [UInt8](repeating: 0xA5, count: 8), "width \(width): bytes past the row")
            XCTAssertEqual(Array(interleaved[(width * 3)...]), [UInt8](repeating: 0xA5, count: 8), "width \(width): bytes past the row")
        }
    }

    /// The one-pixel form (scaled rows) is the same matrix.
    func testOnePixelAtATimeIsTheSameMatrix() {
        var out = [UInt8](repeating: 0, count: 3)
        for y in stride(from: 0, through: 255, by: 3) {
            for cb in stride(from: 0, through: 255, by: 15) {
                for cr in stride(from: 0, through: 255, by: 15) {
                    out.withUnsafeMutableBufferPointer { BT601.store(y: UInt8(y), cb: UInt8(cb), cr: UInt8(cr), to: $0.baseAddress!) }
                    let e = expected(y: UInt8(y), cb: UInt8(cb), cr: UInt8(cr))
                    for c in 0..<3 { XCTAssertEqual(Double(out[c]), e[c], accuracy: 0.6, "Y \(y) Cb \(cb) Cr \(cr) channel \(c)") }
                }
            }
        }
    }

    private func convert(luma: [UInt8], cb: [UInt8], cr: [UInt8], pairs: [UInt8], width: Int,
                         planar: inout [UInt8], interleaved: inout [UInt8]) {
        luma.withUnsafeBufferPointer { l in
            cb.withUnsafeBufferPointer { u in
                cr.withUnsafeBufferPointer { v in
                    pairs.withUnsafeBufferPointer { p in
                        planar.withUnsafeMutableBufferPointer {
                            BT601.convertRow(luma: l.baseAddress!, chroma: .planar(cb: u.baseAddress!, cr: v.baseAddress!), width: width, into: $0.baseAddress!)
                        }
                        interleaved.withUnsafeMutableBufferPointer {
                            BT601.convertRow(luma: l.baseAddress!, chroma: .interleaved(p.baseAddress!), width: width, into: $0.baseAddress!)
                        }
                    }
                }
            }
        }
    }
}
