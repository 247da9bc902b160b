import XCTest
import FilmCore
@testable import Canvas

final class BitmapFontTests: XCTestCase {
    func testGlyphPixelsLandInsideItsCellAtTheOrigin() {
        var canvas = Canvas(width: 40, height: 30)
        let origin = Point(x: 7, y: 5)
        for scalar in "Ag@|_y".unicodeScalars {
            canvas.clear(.black)
            canvas.draw(text: String(scalar), at: origin, scale: 2, color: .white)
            let cell = Rect(origin: origin, width: BitmapFont.cellWidth * 2, height: BitmapFont.cellHeight * 2)
            let lit = canvas.litPixels()
            XCTAssertFalse(lit.isEmpty, "\(scalar)")
            for p in lit { XCTAssertTrue(cell.contains(p), "\(scalar) lit \(p) outside \(cell)") }
            // The spacing column stays clear so neighbouring glyphs never touch.
            XCTAssertTrue(lit.allSatisfy { $0.x < origin.x + BitmapFont.glyphWidth * 2 }, "\(scalar)")
        }
    }

    func testTextWidthIsCountTimesAdvanceTimesScale() {
        for scale in 1 ... 4 {
            for text in ["Kodak Portra 400", "CineStill 800T", "+1.3 EV", "26 mm", "", "×°−…"] {
                let expected = text.unicodeScalars.count * BitmapFont.cellWidth * scale
                XCTAssertEqual(BitmapFont.width(of: text, scale: scale), expected, text)
                var canvas = Canvas(width: 8, height: 8)
                XCTAssertEqual(canvas.draw(text: text, at: .zero, scale: scale), expected, text)
            }
        }
        XCTAssertEqual(BitmapFont.width(of: "AE-L\nStorage full", scale: 2), 12 * 6 * 2)
        XCTAssertEqual(BitmapFont.height(of: "AE-L\nStorage full", scale: 2),
                       (BitmapFont.lineHeight + BitmapFont.cellHeight) * 2)
    }

    func testScaleTwoQuadruplesTheLitPixels() {
        for text in ["A", "g", "Ilford HP5 Plus", "…"] {
            var one = Canvas(width: 120, height: 10)
            var two = Canvas(width: 240, height: 20)
            one.draw(text: text, at: .zero, scale: 1)
            two.draw(text: text, at: .zero, scale: 2)
            XCTAssertGreaterThan(one.litPixels().count, 0)
            XCTAssertEqual(two.litPixels().count, one.litPixels().count * 4, text)
            // And every scale-2 pixel is its scale-1 pixel magnified.
            for p in two.litPixels() { XCTAssertEqual(one.pixel(x: p.x / 2, y: p.y / 2), .white, text) }
        }
    }

    func testEveryPrintableGlyphLightsAndAllBitmapsAreDistinct() {
        var seen: [[UInt8]: Character] = [:]
        for value in UInt32(0x21) ... 0x7E {
            let character = Character(Unicode.Scalar(value)!)
            let canvas = renderGlyph(String(character))
            XCTAssertFalse(canvas.litPixels().isEmpty, "\(character) lights nothing")
            if let other = seen[canvas.image.pixels] {
                XCTFail("\(character) looks exactly like \(other)")
            }
            seen[canvas.image.pixels] = character
        }
        XCTAssertTrue(renderGlyph(" ").litPixels().isEmpty)
        for extra in ["×", "°", "−", "…", "±", "µ"] {
            XCTAssertTrue(BitmapFont.hasGlyph(for: extra.unicodeScalars.first!), extra)
            let canvas = renderGlyph(extra)
            XCTAssertFalse(canvas.litPixels().isEmpty, extra)
            XCTAssertNil(seen[canvas.image.pixels], "\(extra) looks like \(seen[canvas.image.pixels].map(String.init) ?? "")")
            seen[canvas.image.pixels] = Character(extra)
        }
        XCTAssertNotEqual(renderGlyph("×").image, renderGlyph("x").image)
        XCTAssertNotEqual(renderGlyph("−").image, renderGlyph("-").image)
    }

    func testConfusableCharactersDiffer() {
        for (a, b) in [("O", "0"), ("l", "1"), ("I", "l"), ("I", "1"), ("l", "|"), ("S", "5"), ("B", "8"),
                       ("Z", "2"), ("g", "q"), ("g", "9"), ("D", "O"), ("u", "v"), ("i", "l"), ("!", "|")] {
            XCTAssertNotEqual(renderGlyph(a).image, renderGlyph(b).image, "\(a) vs \(b)")
        }
    }

    func testDescendersUseTheRowsBelowTheBaseline() {
        for letter in ["g", "j", "p", "q", "y"] {
            let lit = renderGlyph(letter).litPixels()
            XCTAssertTrue(lit.contains { $0.y >= BitmapFont.capHeight }, "\(letter) has no descender")
        }
        for letter in ["A", "a", "x", "0"] {
            XCTAssertTrue(renderGlyph(letter).litPixels().allSatisfy { $0.y < BitmapFont.capHeight }, letter)
        }
    }

    func testUnknownCharactersDrawTheReplacementBox() {
        let box = renderGlyph("\u{4E2D}")
        XCTAssertFalse(BitmapFont.hasGlyph(for: "\u{4E2D}"))
        XCTAssertEqual(renderGlyph("😀").image, box.image)
        XCTAssertEqual(renderGlyph("\u{7}").image, box.image)
        // A hollow box: the full outline of the 5×7 glyph area, empty inside.
        for x in 0 ..< 5 {
            XCTAssertEqual(box.pixel(x: x, y: 0), .white)
            XCTAssertEqual(box.pixel(x: x, y: 6), .white)
        }
        for y in 0 ..< 7 {
            XCTAssertEqual(box.pixel(x: 0, y: y), .white)
            XCTAssertEqual(box.pixel(x: 4, y: y), .white)
        }
        XCTAssertEqual(box.pixel(x: 2, y: 3), .black)
        for value in UInt32(0x21) ... 0x7E {
            XCTAssertNotEqual(renderGlyph(String(Unicode.Scalar(value)!)).image, box.image)
        }
        // Typographic look-alikes fold to ASCII rather than boxes.
        XCTAssertEqual(renderGlyph("’").image, renderGlyph("'").image)
        XCTAssertEqual(renderGlyph("–").image, renderGlyph("-").image)
    }

    func testScaleForCapHeight() {
        XCTAssertEqual(BitmapFont.scale(forCapHeight: 1), 1)
        XCTAssertEqual(BitmapFont.scale(forCapHeight: 7), 1)
        XCTAssertEqual(BitmapFont.scale(forCapHeight: 14), 2)
        XCTAssertEqual(BitmapFont.scale(forCapHeight: 20), 2)
        XCTAssertEqual(BitmapFont.scale(forCapHeight: 21), 3)
        XCTAssertEqual(BitmapFont.scale(forCapHeight: -5), 1)
        for px in 7 ... 100 {
            XCTAssertLessThanOrEqual(BitmapFont.scale(forCapHeight: px) * BitmapFont.capHeight, px)
        }
    }

    func testTruncatedFitsWithEllipsis() {
        let name = "Kodak Portra 400"
        XCTAssertEqual(BitmapFont.truncated(name, toWidth: 1000, scale: 1), name)
        let short = BitmapFont.truncated(name, toWidth: 60, scale: 1)
        XCTAssertEqual(short, "Kodak Por…")
        XCTAssertLessThanOrEqual(BitmapFont.width(of: short, scale: 1), 60)
        XCTAssertEqual(BitmapFont.truncated(name, toWidth: 41, scale: 1), "Kodak…")  // no "Kodak …"
        XCTAssertEqual(BitmapFont.truncated(name, toWidth: 5, scale: 1), "")
    }
}
