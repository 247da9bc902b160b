import Canvas
import FilmCore
import Foundation
import ImageFiles
import StrictJSON
import Raster

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

    /// The shots put into a template's holes (each filling its hole, cropped to its aspect
    /// from the middle), under the template's frame: its opaque pixels cover the shots, its
    /// transparent ones show them, its translucent ones blend.
    public static func compose(_ shots: [RGBImage], template: BoothTemplate) -> RGBImage {
        let frame = template.frame
        var canvas = Canvas(width: frame.width, height: frame.height, background: .white)
        for (shot, hole) in zip(shots, template.holes) {
            canvas.drawScaled(image: cropped(shot, toAspectOf: hole), into: hole)
        }
        var out = canvas.image
        for i in 0..<(frame.width * frame.height) {
            let a = UInt32(template.alpha[i])
            guard a > 0 else { continue }
            for c in 0..<3 {
                let k = 3 * i + c
                out.pixels[k] = UInt8((UInt32(frame.pixels[k]) * a + UInt32(out.pixels[k]) * (255 - a) + 127) / 255)
            }
        }
        return out
    }

    /// The middle of `image` with the aspect of `rect` (the whole image when they match).
    static func cropped(_ image: RGBImage, toAspectOf rect: Rect) -> RGBImage {
        let target = Double(rect.width) / Double(rect.height), aspect = Double(image.width) / Double(image.height)
        var w = image.width, h = image.height
        if aspect > target { w = max(1, Int((Double(h) * target).rounded())) } else { h = max(1, Int((Double(w) / target).rounded())) }
        if w == image.width && h == image.height { return image }
        let x0 = (image.width - w) / 2, y0 = (image.height - h) / 2
        var out = RGBImage(width: w, height: h)
        for y in 0..<h {
            let src = ((y0 + y) * image.width + x0) * 3
            out.pixels.replaceSubrange((y * w * 3)..<((y + 1) * w * 3), with: image.pixels[src..<(src + w * 3)])
        }
        return out
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

/// A collage template: a frame drawn over the shots (a PNG whose transparent holes show them)
/// and where each shot goes, from a small JSON file beside it:
///
/// ```json
/// { "image": "wedding.png",
///   "holes": [ { "x": 60, "y": 60, "width": 840, "height": 630 },
///              { "x": 60, "y": 750, "width": 840, "height": 630 } ] }
/// ```
/// `image` is relative to the JSON file; holes are in the PNG's pixels, in shot order, inside
/// the picture; there are at least as many as the session's shots.
public struct BoothTemplate: Sendable, Equatable {
    public var frame: RGBImage
    /// One byte a pixel: 0 transparent (the shot shows), 255 opaque (the frame covers it).
    public var alpha: [UInt8]
    public var holes: [Rect]

    /// The largest template picture taken (a 6×4 inch print at 600 dpi is 3600×2400).
    static let pixelLimit = PixelLimit(maxPixels: 6000 * 6000, origin: "for a collage template")

    /// Reads the JSON file at `path` and its PNG; `shots` is how many holes are needed.
    public static func load(path: String, shots: Int) throws(ConfigError) -> BoothTemplate {
        func fail(_ field: String, _ message: String) -> ConfigError { ConfigError(source: path, field: field, message: message) }
        guard let data = FileManager.default.contents(atPath: path) else { throw fail("", "cannot read the template file") }
        let root = try FieldError.parseObject(data, source: path)
        var r = JSONFields(root, fail: fail)
        let image = try r.string("image")
        guard let holesValue = r.value("holes") else { throw fail("holes", "is missing") }
        try r.rejectUnknown(allowed: "image, holes")
        let imagePath = image.hasPrefix("/") ? image : ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(image)
        let picture: (image: RGBImage, alpha: [UInt8])
        do { picture = try ImageReader.readPNGWithAlpha(path: imagePath, limit: pixelLimit) } catch {
            throw fail("image", "\(error)")
        }
        guard case .array(let items) = holesValue else { throw fail("holes", "must be a list of {x, y, width, height}") }
        var holes: [Rect] = []
        for (i, item) in items.enumerated() {
            guard case .object(let object) = item else { throw fail("holes[\(i)]", "must be an object {x, y, width, height}") }
            var h = JSONFields(object, prefix: "holes[\(i)]", fail: fail)
            let x = try h.integer("x", in: 0...(picture.image.width - 1)), y = try h.integer("y", in: 0...(picture.image.height - 1))
            let w = try h.integer("width", in: 1...picture.image.width), ht = try h.integer("height", in: 1...picture.image.height)
            try h.rejectUnknown(allowed: "x, y, width, height")
            guard let x, let y, let w, let ht else { throw fail("holes[\(i)]", "needs x, y, width and height") }
            guard x + w <= picture.image.width, y + ht <= picture.image.height else {
                throw fail("holes[\(i)]", "reaches outside the \(picture.image.width)×\(picture.image.height) picture")
            }
            holes.append(Rect(x: x, y: y, width: w, height: ht))
        }
        guard holes.count >= shots else {
            throw fail("holes", "has \(holes.count) hole\(holes.count == 1 ? "" : "s") for \(shots) shots (booth.shots)")
        }
        return BoothTemplate(frame: picture.image, alpha: picture.alpha, holes: holes)
    }
}
