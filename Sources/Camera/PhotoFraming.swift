import FilmCore
import Raster

/// How the simulated camera frames a photo: the widest lens sees the largest centred crop of
/// the photo with the output's aspect ratio; a lens of `f` mm-equivalent sees the centre
/// 13/f of that (the same zoom as the synthetic scene).
enum PhotoFraming {
    /// The source rectangle (x, y, width, height in source pixels) a lens sees.
    static func crop(sourceWidth: Int, sourceHeight: Int, outputWidth: Int, outputHeight: Int, zoom: Double)
        -> (x: Double, y: Double, width: Double, height: Double)
    {
        let sw = Double(sourceWidth), sh = Double(sourceHeight)
        let aspect = Double(outputWidth) / Double(outputHeight)
        var w = sw, h = sw / aspect
        if h > sh { h = sh; w = sh * aspect }
        w /= zoom
        h /= zoom
        return ((sw - w) / 2, (sh - h) / 2, w, h)
    }

    /// `source` cropped to `crop` and scaled to outputWidth × outputHeight: an area average
    /// when shrinking, nearest pixel when enlarging. Returns the RGB bytes.
    static func resample(_ source: RGBImage, crop: (x: Double, y: Double, width: Double, height: Double),
                         outputWidth: Int, outputHeight: Int) -> [UInt8] {
        func ranges(count: Int, origin: Double, extent: Double, limit: Int) -> [Range<Int>] {
            (0..<count).map { i in
                let a = origin + extent * Double(i) / Double(count)
                let b = origin + extent * Double(i + 1) / Double(count)
                var lo = min(max(Int(a.rounded(.down)), 0), limit - 1)
                var hi = min(max(Int(b.rounded(.up)), lo + 1), limit)
                if hi - lo > 1 && b - a < 1 {
                    // Enlarging: the one source pixel under the output pixel's centre.
                    lo = min(max(Int(((a + b) / 2).rounded(.down)), 0), limit - 1)
                    hi = lo + 1
                }
                return lo..<hi
            }
        }
        let columns = ranges(count: outputWidth, origin: crop.x, extent: crop.width, limit: source.width)
        let rows = ranges(count: outputHeight, origin: crop.y, extent: crop.height, limit: source.height)
        var out = [UInt8](repeating: 0, count: outputWidth * outputHeight * 3)
        let sw = source.width
        source.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for (oy, ry) in rows.enumerated() {
                    for (ox, rx) in columns.enumerated() {
                        var r = 0, g = 0, b = 0
                        for sy in ry {
                            var i = (sy * sw + rx.lowerBound) * 3
                            for _ in rx {
                                r += Int(src[i]); g += Int(src[i + 1]); b += Int(src[i + 2])
                                i += 3
                            }
                        }
                        let n = ry.count * rx.count
                        let o = (oy * outputWidth + ox) * 3
                        dst[o] = UInt8((r + n / 2) / n)
                        dst[o + 1] = UInt8((g + n / 2) / n)
                        dst[o + 2] = UInt8((b + n / 2) / n)
                    }
                }
            }
        }
        return out
    }
}
