import XCTest
@testable import ImageFiles

/// The sRGB → Display P3 table the photo writers use, against lcms2's own 8-bit transform.
final class DisplayP3Tests: XCTestCase {
    /// Every grey, every colour on a 17-level cube (the table's lattice and between it) and
    /// 200,000 random colours: no channel more than one level from lcms2's 8-bit transform,
    /// fewer than 2 % of them one level off (lcms2 rounds through its own lattice too).
    func testTableMatchesLcms2WithinOneLevel() throws {
        let table = try XCTUnwrap(DisplayP3Conversion.shared)
        let srgb = try XCTUnwrap(LcmsProfile.sRGB()), p3 = try XCTUnwrap(LcmsProfile.displayP3())
        let lcms = try XCTUnwrap(LcmsTransform(from: srgb, to: p3))
        var input: [UInt8] = []
        for v in 0..<256 { input += [UInt8(v), UInt8(v), UInt8(v)] }
        let steps = stride(from: 0, through: 255, by: 16).map { UInt8($0) } + [255]
        for r in steps { for g in steps { for b in steps { input += [r, g, b] } } }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200_000 { input += [UInt8.random(in: 0...255, using: &rng), UInt8.random(in: 0...255, using: &rng), UInt8.random(in: 0...255, using: &rng)] }
        var ours = input, theirs = input
        let pixels = input.count / 3
        input.withUnsafeBytes { src in
            ours.withUnsafeMutableBytes { table.apply(src.baseAddress!, $0.baseAddress!, pixelCount: pixels) }
            theirs.withUnsafeMutableBytes { lcms.apply(src.baseAddress!, $0.baseAddress!, pixelCount: pixels) }
        }
        var worst = 0, off = 0
        for i in input.indices {
            let d = abs(Int(ours[i]) - Int(theirs[i]))
            if d > worst {
                worst = d
                let p = i / 3 * 3
                print("worst so far \(d) at sRGB \(input[p..<p + 3].map { $0 }): table \(ours[p..<p + 3].map { $0 }), lcms2 \(theirs[p..<p + 3].map { $0 })")
            }
            if d > 0 { off += 1 }
        }
        print("sRGB → P3 table against lcms2: worst \(worst) levels, \(String(format: "%.2f", Double(off) / Double(input.count) * 100)) % of values off")
        XCTAssertLessThanOrEqual(worst, 1)
        XCTAssertLessThan(Double(off) / Double(input.count), 0.02)
        XCTAssertEqual(Array(ours[(255 * 3)..<(256 * 3)]), [255, 255, 255], "white stays white")
    }
}
