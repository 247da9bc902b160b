import Canvas
import FilmCore

/// Puts a photobooth session's shots together on white paper: a strip (one column) or a grid
/// (two columns), each shot at the size it comes in (the first's; the others are scaled to
/// it), with a caption under them (the look and the date).
public enum BoothCollage {
    /// The copy of each shot kept for the collage: at most this size, the shot's aspect kept.
    public static let shotWidth = 1200, shotHeight = 900

    public static func compose(_ shots: [RGBImage], layout: BoothSettings.Layout, caption: String) -> RGBImage {
        guard let first = shots.first else { return RGBImage(width: 1, height: 1) }
        let cellW = first.width, cellH = first.height
        let columns = layout == .grid && shots.count > 1 ? 2 : 1
        let rows = (shots.count + columns - 1) / columns
        let margin = max(8, cellW / 24)
        let scale = max(1, BitmapFont.scale(forCapHeight: margin * 2 / 3))
        let footer = BitmapFont.cellHeight * scale + 2 * margin
        var canvas = Canvas(width: columns * cellW + (columns + 1) * margin,
                            height: rows * cellH + (rows + 1) * margin + footer - margin, background: .white)
        for (i, shot) in shots.enumerated() {
            let cell = Rect(x: margin + (i % columns) * (cellW + margin), y: margin + (i / columns) * (cellH + margin),
                            width: cellW, height: cellH)
            if shot.width == cellW && shot.height == cellH {
                canvas.draw(image: shot, at: Point(x: cell.x, y: cell.y))
            } else {
                canvas.drawScaled(image: shot, into: cell.aspectFit(width: shot.width, height: shot.height))
            }
        }
        let text = BitmapFont.truncated(caption, toWidth: canvas.width - 2 * margin, scale: scale)
        let band = Rect(x: 0, y: canvas.height - footer, width: canvas.width, height: footer)
        canvas.draw(text: text, centeredIn: band, scale: scale, color: Color(gray: 60))
        return canvas.image
    }

    /// `image` fitted into `width` × `height` (black bars where the aspects differ): the review
    /// screen's picture.
    public static func letterbox(_ image: RGBImage, width: Int, height: Int) -> RGBImage {
        var out = RGBImage(width: width, height: height)
        AreaDownscaler(sourceWidth: image.width, sourceHeight: image.height, width: width, height: height).shrink(image, into: &out)
        return out
    }

    /// A copy of `image` no larger than `width` × `height`, its aspect kept (averaging, so the
    /// grain looks as it does at that size).
    public static func shrink(_ image: RGBImage, toFit width: Int, _ height: Int) -> RGBImage {
        let scale = min(1, min(Double(width) / Double(image.width), Double(height) / Double(image.height)))
        let w = max(1, Int((Double(image.width) * scale).rounded())), h = max(1, Int((Double(image.height) * scale).rounded()))
        if w == image.width && h == image.height { return image }
        var out = RGBImage(width: w, height: h)
        AreaDownscaler(sourceWidth: image.width, sourceHeight: image.height, width: w, height: h).shrink(image, into: &out)
        return out
    }
}
