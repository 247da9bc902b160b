import Raster

/// Shrinks frames of one size into a smaller one by averaging every source pixel under each
/// destination pixel (a box filter over its footprint), letterboxed to keep the aspect ratio
/// (black bars). Fine detail such as film grain averages down the way the eye sees it at that
/// size, instead of sparkling as nearest-neighbour sampling would. The spans are computed
/// once per pair of sizes; a frame costs one pass over the source and allocates nothing.
/// Used from one thread (it keeps one row of sums).
public final class AreaDownscaler {
    public let sourceWidth: Int
    public let sourceHeight: Int
    public let width: Int
    public let height: Int
    /// The picture's rectangle inside the destination (the rest is black).
    public let content: Rect
    /// For each destination column (within `content`) the first source column and how many.
    private let columnStart: [Int32]
    private let columnCount: [Int32]
    private let rowStart: [Int32]
    private let rowCount: [Int32]
    /// Row sums for one destination row, reused: R, G, B per destination column.
    private let scratch: UnsafeMutablePointer<UInt32>

    public init(sourceWidth: Int, sourceHeight: Int, width: Int, height: Int) {
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.width = width
        self.height = height
        let scale = min(Double(width) / Double(sourceWidth), Double(height) / Double(sourceHeight))
        let w = max(1, min(width, Int((Double(sourceWidth) * scale).rounded())))
        let h = max(1, min(height, Int((Double(sourceHeight) * scale).rounded())))
        content = Rect(x: (width - w) / 2, y: (height - h) / 2, width: w, height: h)
        func spans(_ destination: Int, _ source: Int) -> ([Int32], [Int32]) {
            var starts: [Int32] = [], counts: [Int32] = []
            for i in 0..<destination {
                let a = i * source / destination
                let b = max(a + 1, (i + 1) * source / destination)
                starts.append(Int32(a))
                counts.append(Int32(min(b, source) - a))
            }
            return (starts, counts)
        }
        (columnStart, columnCount) = spans(w, sourceWidth)
        (rowStart, rowCount) = spans(h, sourceHeight)
        scratch = .allocate(capacity: w * 3)
    }

    deinit { scratch.deallocate() }

    /// Writes the shrunk `source` (sourceWidth × sourceHeight) into `destination` (width ×
    /// height), bars black.
    public func shrink(_ source: RGBImage, into destination: inout RGBImage) {
        precondition(source.width == sourceWidth && source.height == sourceHeight, "source is not the downscaler's size")
        precondition(destination.width == width && destination.height == height, "destination is not the downscaler's size")
        let c = content, outWidth = width, sums = scratch
        source.pixels.withUnsafeBufferPointer { src in
            destination.pixels.withUnsafeMutableBufferPointer { dst in
                let s = src.baseAddress!, d = dst.baseAddress!
                // Bars.
                if c.width != outWidth || c.height != height { d.update(repeating: 0, count: outWidth * height * 3) }
                columnStart.withUnsafeBufferPointer { cs in
                    columnCount.withUnsafeBufferPointer { cc in
                        for y in 0..<c.height {
                            sums.update(repeating: 0, count: c.width * 3)
                            let r0 = Int(rowStart[y]), rn = Int(rowCount[y])
                            for sy in r0..<(r0 + rn) {
                                let row = s + sy * sourceWidth * 3
                                for x in 0..<c.width {
                                    var p = row + Int(cs[x]) * 3
                                    var r: UInt32 = 0, g: UInt32 = 0, b: UInt32 = 0
                                    for _ in 0..<Int(cc[x]) {
                                        r &+= UInt32(p[0]); g &+= UInt32(p[1]); b &+= UInt32(p[2])
                                        p += 3
                                    }
                                    sums[x * 3] &+= r; sums[x * 3 + 1] &+= g; sums[x * 3 + 2] &+= b
                                }
                            }
                            let out = d + ((c.y + y) * outWidth + c.x) * 3
                            for x in 0..<c.width {
                                let n = UInt32(rn) * UInt32(cc[x])
                                let half = n / 2
                                out[x * 3] = UInt8((sums[x * 3] + half) / n)
                                out[x * 3 + 1] = UInt8((sums[x * 3 + 1] + half) / n)
                                out[x * 3 + 2] = UInt8((sums[x * 3 + 2] + half) / n)
                            }
                        }
                    }
                }
            }
        }
    }
}
