/// How text is set off from what is behind it.
public enum TextStyle: Sendable, Hashable {
    /// Just the glyphs.
    case plain
    /// A one-pixel (times the scale) border of this colour all round every glyph, so that
    /// text reads over any photo.
    case outline(Color)
    /// A copy of the glyphs in this colour one pixel (times the scale) down and to the right.
    case shadow(Color)
}

extension Canvas {
    /// Draws `text` in the built-in `BitmapFont` with the top-left of its first cell at
    /// `origin`, each font pixel a `scale`×`scale` square. "\n" starts a new line.
    ///
    /// Returns the width the text advanced (`BitmapFont.width(of:scale:)`, not counting an
    /// outline or shadow). Does not allocate.
    @discardableResult
    public mutating func draw(text: String, at origin: Point, scale: Int = 1, color: Color = .white,
                              style: TextStyle = .plain) -> Int {
        let s = BitmapFont.clampScale(scale)
        return withPixels { p in
            switch style {
            case .plain:
                break
            case .outline(let edge):
                p.drawText(text, x: origin.x, y: origin.y, scale: s, color: edge, grow: s)
            case .shadow(let shade):
                p.drawText(text, x: saturatingAdd(origin.x, s), y: saturatingAdd(origin.y, s), scale: s,
                           color: shade, grow: 0)
            }
            return p.drawText(text, x: origin.x, y: origin.y, scale: s, color: color, grow: 0)
        }
    }

    /// Draws `text` centred in `rect`: horizontally on its advance width less the trailing
    /// spacing column, vertically on its cap height (descenders hang below), so labels and
    /// badges look centred. Returns the rectangle of the text's cells.
    @discardableResult
    public mutating func draw(text: String, centeredIn rect: Rect, scale: Int = 1, color: Color = .white,
                              style: TextStyle = .plain) -> Rect {
        let s = BitmapFont.clampScale(scale)
        let w = BitmapFont.width(of: text, scale: s)
        let inkWidth = max(0, w - (BitmapFont.cellWidth - BitmapFont.glyphWidth) * s)
        let h = BitmapFont.height(of: text, scale: s)
        let inkHeight = max(0, h - BitmapFont.descent * s)
        let x = saturatingAdd(rect.x, saturatingAdd(rect.width, -inkWidth) / 2)
        let y = saturatingAdd(rect.y, saturatingAdd(rect.height, -inkHeight) / 2)
        draw(text: text, at: Point(x: x, y: y), scale: s, color: color, style: style)
        return Rect(x: x, y: y, width: w, height: h)
    }
}

extension Pixels {
    /// Draws the glyphs of `text`, each lit font pixel as a `scale`-pixel square grown by
    /// `grow` pixels on every side (the outline pass), one fill per horizontal run of lit
    /// pixels. Returns the advance width of the widest line.
    @discardableResult
    func drawText(_ text: String, x originX: Int, y originY: Int, scale s: Int, color: Color, grow: Int) -> Int {
        let advance = BitmapFont.cellWidth * s
        let lineStep = BitmapFont.lineHeight * s
        let rowsPerGlyph = BitmapFont.rowsPerGlyph
        let table = BitmapFont.rows
        return table.withUnsafeBufferPointer { rows in
            var penX = originX, penY = originY
            var lineWidth = 0, widest = 0
            for scalar in text.unicodeScalars {
                if scalar == "\n" {
                    widest = max(widest, lineWidth)
                    lineWidth = 0
                    penX = originX
                    penY = saturatingAdd(penY, lineStep)
                    continue
                }
                let glyph = BitmapFont.glyphIndex(scalar)
                if glyph < 0 { continue }
                // Only glyphs whose (grown) cell touches the image are drawn.
                if penX < width + grow, penX > -advance - grow, penY < height + grow,
                   penY > -BitmapFont.cellHeight * s - grow {
                    let first = glyph * rowsPerGlyph
                    for row in 0 ..< rowsPerGlyph {
                        let bits = Int(rows[first + row])
                        if bits == 0 { continue }
                        let y0 = penY + row * s - grow
                        var column = 0
                        while column < BitmapFont.glyphWidth {
                            if bits & (0x10 >> column) == 0 { column += 1; continue }
                            let start = column
                            while column < BitmapFont.glyphWidth, bits & (0x10 >> column) != 0 { column += 1 }
                            fill(x0: penX + start * s - grow, y0: y0, x1: penX + column * s + grow, y1: y0 + s + 2 * grow,
                                 color: color, alpha: 256)
                        }
                    }
                }
                penX = saturatingAdd(penX, advance)
                lineWidth = saturatingAdd(lineWidth, advance)
            }
            return max(widest, lineWidth)
        }
    }
}
