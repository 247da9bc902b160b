import XCTest
import FilmCore
@testable import Canvas
import Raster

final class CanvasDrawingTests: XCTestCase {
    func testFillWithHalfOpacityGivesTheMidpoint() {
        var canvas = Canvas(width: 4, height: 4, background: Color(r: 0, g: 100, b: 255))
        canvas.fill(canvas.bounds, color: Color(r: 255, g: 200, b: 0), opacity: 0.5)
        let p = canvas.pixel(x: 2, y: 2)!
        XCTAssertEqual(Double(p.r), 127.5, accuracy: 1)
        XCTAssertEqual(Double(p.g), 150, accuracy: 1)
        XCTAssertEqual(Double(p.b), 127.5, accuracy: 1)
        var unchanged = Canvas(width: 4, height: 4, background: .gray)
        unchanged.fill(unchanged.bounds, color: .white, opacity: 0)
        unchanged.fill(unchanged.bounds, color: .white, opacity: .nan)
        XCTAssertEqual(unchanged.pixel(x: 0, y: 0), .gray)
        unchanged.fill(Rect(x: 1, y: 1, width: 2, height: 1), color: .red, opacity: 1)
        XCTAssertEqual(unchanged.litPixels(background: .gray), [Point(x: 1, y: 1), Point(x: 2, y: 1)])
    }

    func testFillAndStrokeClipToTheImage() {
        var canvas = Canvas(width: 10, height: 8)
        canvas.fill(Rect(x: -5, y: -5, width: 8, height: 7), color: .white)
        XCTAssertEqual(Set(canvas.litPixels()), Set((0 ..< 2).flatMap { y in (0 ..< 3).map { Point(x: $0, y: y) } }))
        for rect in [Rect(x: 20, y: 0, width: 5, height: 5), Rect(x: -100, y: -100, width: 50, height: 50),
                     Rect(x: Int.max - 1, y: Int.max - 1, width: Int.max, height: 10),
                     Rect(x: Int.min, y: Int.min, width: Int.max, height: Int.max),
                     Rect(x: 2, y: 2, width: -3, height: 4)] {
            var c = Canvas(width: 10, height: 8)
            c.fill(rect, color: .white)
            c.strokeRect(rect, color: .white, width: 3)
            XCTAssertTrue(c.litPixels().isEmpty, "\(rect)")
        }
        var whole = Canvas(width: 10, height: 8)
        whole.fill(Rect(x: Int.min, y: Int.min, width: Int.max, height: Int.max).insetBy(dx: 0, dy: 0), color: .white)
        whole.fill(Rect(x: -1_000_000, y: -1_000_000, width: 3_000_000, height: 3_000_000), color: .white)
        XCTAssertEqual(whole.litPixels().count, 80)
    }

    func testStrokeRectDrawsABorderInside() {
        var canvas = Canvas(width: 12, height: 12)
        let rect = Rect(x: 2, y: 3, width: 8, height: 6)
        canvas.strokeRect(rect, color: .white, width: 2)
        for y in 0 ..< 12 {
            for x in 0 ..< 12 {
                let p = Point(x: x, y: y)
                let inner = rect.insetBy(dx: 2, dy: 2)
                let expected = rect.contains(p) && !inner.contains(p)
                XCTAssertEqual(canvas.pixel(x: x, y: y) == .white, expected, "\(p)")
            }
        }
        // Translucent: every border pixel blended exactly once.
        var translucent = Canvas(width: 12, height: 12)
        translucent.strokeRect(rect, color: .white, width: 3, opacity: 0.5)
        let values = Set(translucent.litPixels().map { translucent.pixel(x: $0.x, y: $0.y)! })
        XCTAssertEqual(values, [Color(gray: 128)])
        XCTAssertEqual(translucent.litPixels().count, 8 * 6)  // 3-px border of a 6-high rect fills it
    }

    func testLinesHitBothEndpoints() {
        let cases: [(Point, Point)] = [
            (Point(x: 1, y: 1), Point(x: 18, y: 13)), (Point(x: 18, y: 2), Point(x: 3, y: 14)),
            (Point(x: 5, y: 0), Point(x: 6, y: 14)), (Point(x: 0, y: 7), Point(x: 19, y: 7)),
            (Point(x: 9, y: 14), Point(x: 9, y: 0)), (Point(x: 4, y: 4), Point(x: 4, y: 4)),
        ]
        for (a, b) in cases {
            for width in [1, 3] {
                var canvas = Canvas(width: 20, height: 15)
                canvas.line(from: a, to: b, color: .white, width: width)
                XCTAssertEqual(canvas.pixel(x: a.x, y: a.y), .white, "\(a)→\(b) w\(width)\n\(canvas.asciiArt)")
                XCTAssertEqual(canvas.pixel(x: b.x, y: b.y), .white, "\(a)→\(b) w\(width)")
                if width == 1 {
                    // A 1-px line is connected and has one pixel per step of its longer axis.
                    let steps = max(abs(b.x - a.x), abs(b.y - a.y)) + 1
                    XCTAssertEqual(canvas.litPixels().count, steps, "\(a)→\(b)\n\(canvas.asciiArt)")
                }
            }
        }
        var thick = Canvas(width: 20, height: 15)
        thick.line(from: Point(x: 2, y: 7), to: Point(x: 17, y: 7), color: .white, width: 3)
        XCTAssertEqual(Set(thick.litPixels().map(\.y)), [6, 7, 8])
    }

    func testTranslucentDiagonalLineBlendsEachPixelOnce() {
        var canvas = Canvas(width: 30, height: 30)
        canvas.line(from: Point(x: 2, y: 3), to: Point(x: 27, y: 21), color: .white, width: 4, opacity: 0.5)
        let values = Set(canvas.litPixels().map { canvas.pixel(x: $0.x, y: $0.y)! })
        XCTAssertEqual(values, [Color(gray: 128)])
    }

    func testLinesFarOutsideDoNotCrashAndOnlyTouchTheImage() {
        var canvas = Canvas(width: 20, height: 15)
        canvas.line(from: Point(x: -1_000_000_000, y: -5), to: Point(x: 1_000_000_000, y: 20), color: .white)
        XCTAssertFalse(canvas.litPixels().isEmpty, "a line crossing the image shows")
        canvas.line(from: Point(x: Int.min, y: Int.min), to: Point(x: Int.max, y: Int.max), color: .white, width: 5)
        canvas.line(from: Point(x: Int.min, y: 3), to: Point(x: Int.max, y: 3), color: .white, width: Int.max)
        canvas.line(from: Point(x: -50, y: -50), to: Point(x: -10, y: -30), color: .white, width: 2)
        canvas.line(from: Point(x: 100, y: 0), to: Point(x: 100, y: 10), color: .white)
        XCTAssertEqual(canvas.image.pixels.count, 20 * 15 * 3)
    }

    func testTextPartlyOrFullyOutsideOnlyTouchesInBoundsPixels() {
        let text = "Storage full\n+1.3 EV"
        let styles = [TextStyle.plain, .outline(.red), .shadow(.blue)]
        // Clipped drawing equals the same text drawn unclipped into a larger canvas, cropped.
        for origin in [Point(x: -30, y: -4), Point(x: 15, y: 10), Point(x: -500, y: 2), Point(x: 3, y: -500),
                       Point(x: 40, y: 15), Point(x: 49, y: 19), Point(x: -180, y: -40)] {
            for style in styles {
                var small = Canvas(width: 50, height: 20)
                small.draw(text: text, at: origin, scale: 2, style: style)
                var big = Canvas(width: 1300, height: 1100)
                big.draw(text: text, at: Point(x: origin.x + 600, y: origin.y + 550), scale: 2, style: style)
                for y in 0 ..< 20 {
                    for x in 0 ..< 50 {
                        XCTAssertEqual(small.pixel(x: x, y: y), big.pixel(x: x + 600, y: y + 550), "\(origin) \(x),\(y)")
                    }
                }
            }
        }
        // Absurd origins and scales: nothing to see, nothing breaks.
        for origin in [Point(x: Int.max, y: Int.max), Point(x: Int.min, y: Int.min), Point(x: Int.max - 3, y: 0),
                       Point(x: Int.min + 1, y: 5), Point(x: 0, y: Int.max - 10)] {
            for style in styles {
                var canvas = Canvas(width: 50, height: 20)
                canvas.draw(text: text, at: origin, scale: 1000, style: style)
                XCTAssertTrue(canvas.litPixels().isEmpty, "\(origin)")
            }
        }
        var huge = Canvas(width: 10, height: 10)
        huge.draw(text: "W", at: Point(x: -3, y: -3), scale: Int.max, style: .outline(.black))
        XCTAssertFalse(huge.litPixels().isEmpty)
    }

    func testOutlineSurroundsTheGlyphAndShadowIsOffset() {
        var outlined = Canvas(width: 20, height: 20, background: .gray)
        outlined.draw(text: "I", at: Point(x: 5, y: 5), scale: 1, color: .white, style: .outline(.black))
        var plain = Canvas(width: 20, height: 20, background: .gray)
        plain.draw(text: "I", at: Point(x: 5, y: 5), scale: 1, color: .white)
        for p in plain.litPixels(background: .gray) {
            XCTAssertEqual(outlined.pixel(x: p.x, y: p.y), .white)
            // Every neighbour of a glyph pixel is glyph or outline.
            for dy in -1 ... 1 {
                for dx in -1 ... 1 {
                    XCTAssertNotEqual(outlined.pixel(x: p.x + dx, y: p.y + dy), .gray)
                }
            }
        }
        XCTAssertTrue(outlined.litPixels(background: .gray).contains { outlined.pixel(x: $0.x, y: $0.y) == .black })

        var shadowed = Canvas(width: 30, height: 30, background: .gray)
        shadowed.draw(text: "I", at: Point(x: 5, y: 5), scale: 2, color: .white, style: .shadow(.black))
        // Bottom-right corner of the I's bottom bar (x 5+2·3.., y 5+2·6..) casts a shadow 2 px away.
        XCTAssertEqual(shadowed.pixel(x: 5 + 2 * 4 - 1, y: 5 + 2 * 7 - 1), .white)
        XCTAssertEqual(shadowed.pixel(x: 5 + 2 * 4 + 1, y: 5 + 2 * 7 + 1), .black)
    }

    func testTextCenteredInRect() {
        var canvas = Canvas(width: 100, height: 40)
        let rect = Rect(x: 10, y: 5, width: 80, height: 30)
        canvas.draw(text: "AE-L", centeredIn: rect, scale: 2)
        let lit = canvas.litPixels()
        let minX = lit.map(\.x).min()!, maxX = lit.map(\.x).max()!
        let minY = lit.map(\.y).min()!, maxY = lit.map(\.y).max()!
        XCTAssertEqual(Double(minX - rect.x), Double(rect.maxX - 1 - maxX), accuracy: 1)
        XCTAssertEqual(Double(minY - rect.y), Double(rect.maxY - 1 - maxY), accuracy: 1)
        canvas.draw(text: "Storage full", centeredIn: Rect(x: Int.min, y: Int.min, width: Int.min, height: Int.max), scale: 3)
        canvas.draw(text: "Storage full", centeredIn: Rect(x: Int.max, y: 0, width: Int.max, height: -5), scale: 3)
    }

    func testBlitClipsAndCopies() {
        var source = RGBImage(width: 4, height: 3)
        for y in 0 ..< 3 { for x in 0 ..< 4 { source[x, y] = SIMD3(UInt8(x * 10), UInt8(y * 10), 7) } }
        var canvas = Canvas(width: 5, height: 5)
        canvas.draw(image: source, at: Point(x: 3, y: -1))
        XCTAssertEqual(canvas.pixel(x: 3, y: 0), Color(r: 0, g: 10, b: 7))
        XCTAssertEqual(canvas.pixel(x: 4, y: 1), Color(r: 10, g: 20, b: 7))
        XCTAssertEqual(canvas.litPixels().count, 4)
        for origin in [Point(x: -4, y: 0), Point(x: 5, y: 5), Point(x: Int.max, y: Int.min), Point(x: Int.min, y: 2)] {
            var c = Canvas(width: 5, height: 5)
            c.draw(image: source, at: origin)
            XCTAssertTrue(c.litPixels().isEmpty, "\(origin)")
        }
        var blended = Canvas(width: 5, height: 5, background: .white)
        blended.draw(image: RGBImage(width: 2, height: 2), at: .zero, opacity: 0.5)
        XCTAssertEqual(blended.pixel(x: 1, y: 1), Color(gray: 128))
        XCTAssertEqual(blended.pixel(x: 2, y: 2), .white)
    }

    func testScaledBlitOfUniformImageStaysUniform() {
        let source = RGBImage(width: 37, height: 23, pixels: [UInt8](repeating: 0, count: 37 * 23 * 3).enumerated().map {
            [UInt8(201), 64, 13][$0.offset % 3]
        })
        for rect in [Rect(x: 3, y: 2, width: 11, height: 7), Rect(x: 0, y: 0, width: 50, height: 40),
                     Rect(x: -5, y: -9, width: 17, height: 29)] {
            var canvas = Canvas(width: 40, height: 30)
            canvas.drawScaled(image: source, into: rect)
            let clip = rect.intersection(canvas.bounds)!
            for y in clip.y ..< clip.maxY {
                for x in clip.x ..< clip.maxX {
                    XCTAssertEqual(canvas.pixel(x: x, y: y), Color(r: 201, g: 64, b: 13), "\(rect) \(x),\(y)")
                }
            }
            XCTAssertEqual(canvas.litPixels().count, clip.width * clip.height)
        }
    }

    func testHalfSizeDownscaleAveragesTwoByTwoBlocks() {
        var source = RGBImage(width: 8, height: 6)
        for y in 0 ..< 6 { for x in 0 ..< 8 { source[x, y] = SIMD3(UInt8((x * 37 + y * 91) % 256), UInt8(x * 30), UInt8(y * 40)) } }
        var canvas = Canvas(width: 4, height: 3)
        canvas.drawScaled(image: source, into: canvas.bounds)
        for y in 0 ..< 3 {
            for x in 0 ..< 4 {
                var sum = SIMD3<Int>(0, 0, 0)
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    sum &+= SIMD3<Int>(truncatingIfNeeded: source[2 * x + dx, 2 * y + dy])
                }
                let p = canvas.pixel(x: x, y: y)!
                for (got, total) in [(p.r, sum.x), (p.g, sum.y), (p.b, sum.z)] {
                    XCTAssertEqual(Double(got), Double(total) / 4, accuracy: 0.51, "\(x),\(y)")
                }
            }
        }
    }

    func testScaledBlitOutsideOrDegenerateDoesNotCrash() {
        let source = RGBImage(width: 3, height: 3, pixels: [UInt8](repeating: 255, count: 27))
        var canvas = Canvas(width: 10, height: 10)
        for rect in [Rect(x: 20, y: 20, width: 5, height: 5), Rect(x: -10, y: 0, width: 5, height: 5),
                     Rect(x: 0, y: 0, width: 0, height: 4), Rect(x: Int.min, y: Int.min, width: Int.max, height: Int.max),
                     Rect(x: 5, y: 5, width: -3, height: -3)] {
            canvas.drawScaled(image: source, into: rect)
        }
        XCTAssertTrue(canvas.litPixels().isEmpty)
        canvas.drawScaled(image: source, into: Rect(x: 8, y: 8, width: 7, height: 7))  // upscale, clipped
        XCTAssertEqual(canvas.litPixels().count, 4)
    }

    func testAspectFit() {
        let cell = Rect(x: 10, y: 20, width: 200, height: 100)
        XCTAssertEqual(cell.aspectFit(width: 3000, height: 2000), Rect(x: 35, y: 20, width: 150, height: 100))
        XCTAssertEqual(cell.aspectFit(width: 4, height: 1), Rect(x: 10, y: 45, width: 200, height: 50))
    }
}
