import XCTest
import Foundation
import FilmCore
@testable import Canvas

/// Renders every glyph (and a few overlay samples) at scale 3 for a human to look at.
/// Set LOOPIX_GLYPH_SHEET=/tmp/glyphs.ppm to write the sheet as a binary PPM; otherwise the
/// test only checks that the sheet renders.
final class GlyphSheetTests: XCTestCase {
    func testRenderGlyphSheet() throws {
        let lines = [
            " !\"#$%&'()*+,-./0123456789:;<=>?",
            "@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_",
            "`abcdefghijklmnopqrstuvwxyz{|}~",
            "× ° − … ± µ \u{4E2D} O0 Il1| S5 B8 Z2",
            "Kodak Portra 400  CineStill 800T",
            "Ilford HP5 Plus  +1.3 EV  26 mm  AE-L",
            "Storage full  1/250 s  f/2.8  ISO 400",
        ]
        let scale = 3
        let text = lines.joined(separator: "\n")
        var canvas = Canvas(width: BitmapFont.width(of: text, scale: scale) + 24,
                            height: BitmapFont.height(of: text, scale: scale) + 24 + 60,
                            background: Color(gray: 24))
        canvas.draw(text: text, at: Point(x: 12, y: 12), scale: scale, color: .white)
        // Overlay samples over a busy background.
        let y0 = canvas.height - 60
        for x in stride(from: 0, to: canvas.width, by: 4) {
            canvas.line(from: Point(x: x, y: y0), to: Point(x: x + 40, y: canvas.height - 1),
                        color: x % 8 == 0 ? .white : .orange, width: 2)
        }
        canvas.draw(text: "Storage full", at: Point(x: 12, y: y0 + 8), scale: 2, color: .white, style: .outline(.black))
        canvas.draw(text: "+1.3 EV", at: Point(x: 200, y: y0 + 8), scale: 2, color: .yellow, style: .shadow(.black))
        canvas.fill(Rect(x: 340, y: y0 + 4, width: 70, height: 28), color: .black, opacity: 0.6)
        canvas.draw(text: "AE-L", centeredIn: Rect(x: 340, y: y0 + 4, width: 70, height: 28), scale: 2, color: .white)
        XCTAssertFalse(canvas.litPixels(background: Color(gray: 24)).isEmpty)

        guard let path = ProcessInfo.processInfo.environment["LOOPIX_GLYPH_SHEET"] else { return }
        var data = Data("P6\n\(canvas.width) \(canvas.height)\n255\n".utf8)
        data.append(contentsOf: canvas.image.pixels)
        try data.write(to: URL(fileURLWithPath: path))
    }
}
