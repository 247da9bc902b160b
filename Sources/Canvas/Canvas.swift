import Raster

/// Software drawing onto an `RGBImage`: filled and stroked rectangles, lines, bitmap text and
/// image blits, for contact sheets and the on-screen overlay over the live preview.
///
/// Everything clips to the image: shapes, text and images may lie partly or wholly outside
/// it (at any coordinate) and only the pixels inside are touched. `opacity` (0…1) blends the
/// colour over what is there, in display-encoded sRGB like the rest of the overlay.
/// Drawing does not allocate (except `drawScaled`, which builds small weight tables).
public struct Canvas: Sendable {
    public var image: RGBImage

    public init(image: RGBImage) {
        self.image = image
    }

    /// A new canvas filled with `background`.
    public init(width: Int, height: Int, background: Color = .black) {
        self.image = RGBImage(width: width, height: height)
        if background != .black { clear(background) }
    }

    public var width: Int { image.width }
    public var height: Int { image.height }
    public var bounds: Rect { Rect(x: 0, y: 0, width: image.width, height: image.height) }

    /// The colour at (x, y), or nil outside the image.
    public func pixel(x: Int, y: Int) -> Color? {
        guard x >= 0, y >= 0, x < image.width, y < image.height else { return nil }
        return Color(image[x, y])
    }

    /// Fills the whole image with `color`.
    public mutating func clear(_ color: Color) {
        fill(bounds, color: color)
    }

    /// Fills `rect` (clipped) with `color` at `opacity`.
    public mutating func fill(_ rect: Rect, color: Color, opacity: Double = 1) {
        let alpha = Canvas.alpha(opacity)
        guard alpha > 0, !rect.isEmpty else { return }
        withPixels { $0.fill(x0: rect.x, y0: rect.y, x1: rect.maxX, y1: rect.maxY, color: color, alpha: alpha) }
    }

    /// Outlines `rect` with a border `width` pixels thick drawn inside it (the sides do not
    /// overlap, so a translucent border blends evenly).
    public mutating func strokeRect(_ rect: Rect, color: Color, width: Int = 1, opacity: Double = 1) {
        let alpha = Canvas.alpha(opacity)
        guard alpha > 0, !rect.isEmpty, width > 0 else { return }
        let t = min(width, rect.width / 2 + rect.width & 1, rect.height / 2 + rect.height & 1)
        let x0 = rect.x, y0 = rect.y, x1 = rect.maxX, y1 = rect.maxY
        let innerY0 = saturatingAdd(y0, t), innerY1 = max(innerY0, saturatingAdd(y1, -t))
        withPixels { p in
            p.fill(x0: x0, y0: y0, x1: x1, y1: innerY0, color: color, alpha: alpha)                 // top
            p.fill(x0: x0, y0: innerY1, x1: x1, y1: y1, color: color, alpha: alpha)                 // bottom
            p.fill(x0: x0, y0: innerY0, x1: min(saturatingAdd(x0, t), x1), y1: innerY1, color: color, alpha: alpha)  // left
            p.fill(x0: max(saturatingAdd(x1, -t), saturatingAdd(x0, t)), y0: innerY0, x1: x1, y1: innerY1,
                   color: color, alpha: alpha)                                                    // right
        }
    }

    /// Draws a straight line that covers both end points, `width` pixels thick (measured
    /// across the line, centred on it). Horizontal and vertical lines are exact rectangles;
    /// other lines are Bresenham lines with a span of pixels at each step, so no pixel is
    /// blended twice.
    public mutating func line(from a: Point, to b: Point, color: Color, width: Int = 1, opacity: Double = 1) {
        let alpha = Canvas.alpha(opacity)
        guard alpha > 0, width > 0 else { return }
        let w = min(width, 1 << 16)
        let before = (w - 1) / 2
        if a.y == b.y || a.x == b.x {
            // Axis-aligned: a rectangle. Clamp the long side first (exact, and no overflow).
            let x0 = max(min(a.x, b.x), -1), x1 = min(max(a.x, b.x), image.width)
            let y0 = max(min(a.y, b.y), -1), y1 = min(max(a.y, b.y), image.height)
            guard x0 <= x1, y0 <= y1 else { return }
            let rect = a.y == b.y
                ? Rect(x: x0, y: saturatingAdd(a.y, -before), width: x1 - x0 + 1, height: w)
                : Rect(x: saturatingAdd(a.x, -before), y: y0, width: w, height: y1 - y0 + 1)
            fill(rect, color: color, opacity: opacity)
            return
        }
        // Span across the major axis that gives a perpendicular thickness of `w`.
        let fdx = Double(b.x) - Double(a.x), fdy = Double(b.y) - Double(a.y)
        let major = max(abs(fdx), abs(fdy))
        let span = w == 1 ? 1 : max(1, roundToInt(Double(w) * squareRoot(fdx * fdx + fdy * fdy) / major))
        // Clip to the image grown by the span so that huge coordinates cost nothing.
        let margin = Double(span + 1)
        guard let (p0, p1) = Canvas.clipSegment(
            Double(a.x), Double(a.y), Double(b.x), Double(b.y),
            minX: -margin, minY: -margin, maxX: Double(image.width) + margin, maxY: Double(image.height) + margin)
        else { return }
        let spanBefore = (span - 1) / 2
        withPixels { p in
            var x = p0.x, y = p0.y
            let dx = abs(p1.x - x), dy = -abs(p1.y - y)
            let sx = x < p1.x ? 1 : -1, sy = y < p1.y ? 1 : -1
            let xMajor = dx >= -dy
            var err = dx + dy
            while true {
                if xMajor {
                    p.fill(x0: x, y0: y - spanBefore, x1: x + 1, y1: y - spanBefore + span, color: color, alpha: alpha)
                } else {
                    p.fill(x0: x - spanBefore, y0: y, x1: x - spanBefore + span, y1: y + 1, color: color, alpha: alpha)
                }
                if x == p1.x && y == p1.y { break }
                let e2 = 2 * err
                if e2 >= dy { err += dy; x += sx }
                if e2 <= dx { err += dx; y += sy }
            }
        }
    }

    // MARK: - Internals

    /// Opacity 0…1 as a blend weight 0…256 (NaN draws nothing).
    @inline(__always)
    static func alpha(_ opacity: Double) -> Int {
        guard opacity > 0 else { return 0 }
        guard opacity < 1 else { return 256 }
        return roundToInt(opacity * 256)
    }

    /// Liang–Barsky: the part of a segment inside a box, with integer end points.
    /// Unclipped end points are kept exactly.
    static func clipSegment(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double,
                            minX: Double, minY: Double, maxX: Double, maxY: Double) -> (Point, Point)? {
        let inside0 = x0 >= minX && x0 <= maxX && y0 >= minY && y0 <= maxY
        let inside1 = x1 >= minX && x1 <= maxX && y1 >= minY && y1 <= maxY
        if inside0 && inside1 {
            return (Point(x: Int(x0), y: Int(y0)), Point(x: Int(x1), y: Int(y1)))
        }
        let dx = x1 - x0, dy = y1 - y0
        var t0 = 0.0, t1 = 1.0
        // One edge: p is the segment's direction against it, q the start's distance inside.
        func clip(_ p: Double, _ q: Double) -> Bool {
            if p == 0 { return q >= 0 }
            let r = q / p
            if p < 0 { t0 = max(t0, r) } else { t1 = min(t1, r) }
            return true
        }
        guard clip(-dx, x0 - minX), clip(dx, maxX - x0), clip(-dy, y0 - minY), clip(dy, maxY - y0) else { return nil }
        guard t0 <= t1 else { return nil }
        func point(_ t: Double) -> Point {
            Point(x: roundToInt(min(max(x0 + t * dx, minX), maxX)), y: roundToInt(min(max(y0 + t * dy, minY), maxY)))
        }
        return (inside0 ? Point(x: Int(x0), y: Int(y0)) : point(t0), inside1 ? Point(x: Int(x1), y: Int(y1)) : point(t1))
    }

    /// Runs `body` with raw access to the pixels (no bounds checks inside: every `Pixels`
    /// operation clips itself).
    @inline(__always)
    mutating func withPixels<R>(_ body: (Pixels) -> R) -> R {
        let w = image.width, h = image.height
        return image.pixels.withUnsafeMutableBufferPointer { buffer in
            body(Pixels(base: buffer.baseAddress!, width: w, height: h))
        }
    }
}

/// An unowned view of an image's pixels, valid only inside `Canvas.withPixels`.
struct Pixels {
    let base: UnsafeMutablePointer<UInt8>
    let width: Int
    let height: Int

    /// Fills `x0 ..< x1` × `y0 ..< y1`, clipped; `alpha` 1…256 (256 = opaque).
    @inline(__always)
    func fill(x0: Int, y0: Int, x1: Int, y1: Int, color: Color, alpha: Int) {
        let cx0 = max(x0, 0), cy0 = max(y0, 0)
        let cx1 = min(x1, width), cy1 = min(y1, height)
        guard cx0 < cx1, cy0 < cy1 else { return }
        let n = cx1 - cx0
        if alpha >= 256 {
            let r = color.r, g = color.g, b = color.b
            for y in cy0 ..< cy1 {
                var p = base + (y * width + cx0) * 3
                for _ in 0 ..< n {
                    p[0] = r; p[1] = g; p[2] = b
                    p += 3
                }
            }
        } else {
            let inverse = 256 - alpha
            let r = Int(color.r) * alpha + 128, g = Int(color.g) * alpha + 128, b = Int(color.b) * alpha + 128
            for y in cy0 ..< cy1 {
                var p = base + (y * width + cx0) * 3
                for _ in 0 ..< n {
                    p[0] = UInt8(truncatingIfNeeded: (Int(p[0]) * inverse + r) >> 8)
                    p[1] = UInt8(truncatingIfNeeded: (Int(p[1]) * inverse + g) >> 8)
                    p[2] = UInt8(truncatingIfNeeded: (Int(p[2]) * inverse + b) >> 8)
                    p += 3
                }
            }
        }
    }
}
