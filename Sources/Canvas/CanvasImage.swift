import Raster

extension Canvas {
    /// Copies `source` pixel for pixel with its top-left corner at `origin`, clipped, blended
    /// at `opacity`.
    public mutating func draw(image source: RGBImage, at origin: Point, opacity: Double = 1) {
        let alpha = Canvas.alpha(opacity)
        guard alpha > 0 else { return }
        let dst = Rect(origin: origin, width: source.width, height: source.height)
        guard let clip = dst.intersection(bounds) else { return }
        let sx0 = clip.x - origin.x, sy0 = clip.y - origin.y
        let sw = source.width, n = clip.width * 3
        source.pixels.withUnsafeBufferPointer { src in
            let srcBase = src.baseAddress!
            withPixels { p in
                for row in 0 ..< clip.height {
                    let s = srcBase + ((sy0 + row) * sw + sx0) * 3
                    let d = p.base + ((clip.y + row) * p.width + clip.x) * 3
                    if alpha >= 256 {
                        d.update(from: s, count: n)
                    } else {
                        let inverse = 256 - alpha
                        for i in 0 ..< n {
                            d[i] = UInt8(truncatingIfNeeded: (Int(d[i]) * inverse + Int(s[i]) * alpha + 128) >> 8)
                        }
                    }
                }
            }
        }
    }

    /// Resamples `source` to fill `rect` (clipped), stretching it if the aspect ratios differ
    /// (use `rect.aspectFit(width:height:)` to letterbox). Every destination pixel is the
    /// exact area-weighted average of the source pixels it covers (a box filter), which is
    /// what makes good thumbnails; enlarging gives crisp, nearest-neighbour-like blocks.
    /// Rectangles over 2²⁰ pixels on a side draw nothing.
    public mutating func drawScaled(image source: RGBImage, into rect: Rect) {
        let limit = 1 << 20
        guard !rect.isEmpty, rect.width <= limit, rect.height <= limit,
              let clip = rect.intersection(bounds) else { return }
        let columns = BoxWeights(source: source.width, destination: rect.width,
                                 range: (clip.x - rect.x) ..< (clip.maxX - rect.x))
        let rows = BoxWeights(source: source.height, destination: rect.height,
                              range: (clip.y - rect.y) ..< (clip.maxY - rect.y))
        var accumulator = [Float](repeating: 0, count: clip.width * 3)
        let sw = source.width
        source.pixels.withUnsafeBufferPointer { src in
            let srcBase = src.baseAddress!
            accumulator.withUnsafeMutableBufferPointer { acc in
                withPixels { p in
                    for dy in 0 ..< clip.height {
                        for i in 0 ..< acc.count { acc[i] = 0 }
                        for k in rows.start[dy] ..< rows.start[dy + 1] {
                            let wy = rows.weights[k]
                            let srcRow = srcBase + rows.sourceIndex[k] * sw * 3
                            for dx in 0 ..< clip.width {
                                var r: Float = 0, g: Float = 0, b: Float = 0
                                for j in columns.start[dx] ..< columns.start[dx + 1] {
                                    let wx = columns.weights[j]
                                    let s = srcRow + columns.sourceIndex[j] * 3
                                    r += wx * Float(s[0])
                                    g += wx * Float(s[1])
                                    b += wx * Float(s[2])
                                }
                                acc[dx * 3] += wy * r
                                acc[dx * 3 + 1] += wy * g
                                acc[dx * 3 + 2] += wy * b
                            }
                        }
                        let d = p.base + ((clip.y + dy) * p.width + clip.x) * 3
                        for i in 0 ..< acc.count {
                            d[i] = UInt8(min(max(acc[i] + 0.5, 0), 255))
                        }
                    }
                }
            }
        }
    }
}

/// The box-filter weights along one axis: destination pixel `i` (of `range`) is the sum over
/// `k` in `start[i] ..< start[i+1]` of `weights[k]` × source pixel `sourceIndex[k]`.
struct BoxWeights {
    var start: [Int] = [0]
    var sourceIndex: [Int] = []
    var weights: [Float] = []

    init(source: Int, destination: Int, range: Range<Int>) {
        // Destination pixel i covers [i·source, (i+1)·source) in units of 1/destination
        // source pixels; source pixel s covers [s·destination, (s+1)·destination).
        for i in range {
            let a = i * source, b = (i + 1) * source
            let first = a / destination
            let end = min(source, (b + destination - 1) / destination)
            for s in first ..< end {
                let overlap = min(b, (s + 1) * destination) - max(a, s * destination)
                if overlap > 0 {
                    sourceIndex.append(s)
                    weights.append(Float(overlap) / Float(source))
                }
            }
            start.append(sourceIndex.count)
        }
    }
}
