import FilmCore
@testable import Canvas

extension Canvas {
    /// Coordinates of pixels that differ from `background`.
    func litPixels(background: Color = .black) -> [Point] {
        var points: [Point] = []
        for y in 0 ..< height {
            for x in 0 ..< width where pixel(x: x, y: y) != background {
                points.append(Point(x: x, y: y))
            }
        }
        return points
    }

    /// The image as ASCII art, "#" for anything not black (for failure messages).
    var asciiArt: String {
        (0 ..< height).map { y in
            String((0 ..< width).map { x in pixel(x: x, y: y) == .black ? "." : "#" })
        }.joined(separator: "\n")
    }
}

/// A glyph rendered alone at scale 1 in a cell-sized canvas.
func renderGlyph(_ text: String, scale: Int = 1) -> Canvas {
    var canvas = Canvas(width: BitmapFont.cellWidth * scale, height: BitmapFont.cellHeight * scale)
    canvas.draw(text: text, at: .zero, scale: scale, color: .white)
    return canvas
}
