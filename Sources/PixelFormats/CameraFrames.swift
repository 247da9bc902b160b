import FilmCore
import Raster

/// Camera pixel formats (DRM fourcc, as libcamera names them) converted to the engine's 8-bit
/// RGB, scaled to the destination size by nearest neighbour through column/row tables computed
/// once per size pair (`FrameConverter`), so a frame costs one pass and no allocation.
public enum CameraPixelFormat: Sendable, Equatable {
    /// Memory order B, G, R, X (DRM XRGB8888, little-endian).
    case xrgb8888
    /// Memory order B, G, R (DRM RGB888).
    case rgb888
    /// Memory order R, G, B (DRM BGR888).
    case bgr888
    /// Planar Y, then U and V at half size (I420), BT.601 limited range.
    case yuv420
    /// Y plane, then interleaved U/V at half size, BT.601 limited range.
    case nv12

    public init?(fourcc: UInt32) {
        func code(_ s: String) -> UInt32 {
            var v: UInt32 = 0
            for (i, b) in s.utf8.enumerated() { v |= UInt32(b) << (8 * UInt32(i)) }
            return v
        }
        switch fourcc {
        case code("XR24"): self = .xrgb8888
        case code("RG24"): self = .rgb888
        case code("BG24"): self = .bgr888
        case code("YU12"): self = .yuv420
        case code("NV12"): self = .nv12
        default: return nil
        }
    }
}

/// Converts frames of one source geometry into RGB images of one destination size.
/// A frame whose buffer does not hold what its format, size and stride say.
public struct FrameMismatch: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public struct FrameConverter: Sendable {
    public let format: CameraPixelFormat
    public let sourceWidth: Int
    public let sourceHeight: Int
    /// Bytes per row of the first plane.
    public let stride: Int
    public let width: Int
    public let height: Int
    private let columns: [Int]
    private let rows: [Int]
    /// Every destination column is its source column (no horizontal scaling or crop): the
    /// YUV loops then take whole rows eight pixels at a time (`BT601.convertRow`).
    private let columnsAreSource: Bool

    public init(format: CameraPixelFormat, sourceWidth: Int, sourceHeight: Int, stride: Int, width: Int, height: Int) {
        self.format = format
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.stride = stride
        self.width = width
        self.height = height
        // Centre-crop to the destination's aspect ratio, then sample.
        let scale = min(Double(sourceWidth) / Double(width), Double(sourceHeight) / Double(height))
        let x0 = (Double(sourceWidth) - scale * Double(width)) / 2, y0 = (Double(sourceHeight) - scale * Double(height)) / 2
        columns = (0..<width).map { min(sourceWidth - 1, Int(x0 + (Double($0) + 0.5) * scale)) }
        rows = (0..<height).map { min(sourceHeight - 1, Int(y0 + (Double($0) + 0.5) * scale)) }
        columnsAreSource = columns.enumerated().allSatisfy { $0.offset == $0.element }
    }

    /// Bytes a frame needs at least.
    public var minimumLength: Int {
        switch format {
        case .xrgb8888, .rgb888, .bgr888: return stride * (sourceHeight - 1) + sourceWidth * (format == .xrgb8888 ? 4 : 3)
        case .yuv420, .nv12: return stride * sourceHeight + (stride / 2) * chromaRows * 2
        }
    }

    /// Rows of a 4:2:0 frame's chroma: one for every two luma rows, and one for an odd last row
    /// (as FFmpeg and libcamera size the planes).
    private var chromaRows: Int { (sourceHeight + 1) / 2 }

    /// Converts `source` into `image` (width × height), in strips of rows on up to `threads`
    /// workers. Throws, leaving `image` as it was, when the buffer is shorter than
    /// `minimumLength` (a truncated or misdescribed frame) or a 4:2:0 frame's stride is odd or
    /// narrower than its width (its chroma rows, half the stride, would not hold them), so that
    /// such a frame is never counted as delivered.
    public func convert(_ source: UnsafeRawBufferPointer, into image: inout RGBImage, threads: Int = 1,
                        parallel: any ParallelWork = DispatchParallelWork()) throws(FrameMismatch) {
        precondition(image.width == width && image.height == height, "destination is not the converter's size")
        if format == .yuv420 || format == .nv12, stride % 2 != 0 || stride < sourceWidth {
            throw FrameMismatch("a \(sourceWidth)×\(sourceHeight) 4:2:0 frame came with rows \(stride) bytes apart: an even stride of at least its width expected")
        }
        guard source.count >= minimumLength, let base = source.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw FrameMismatch("a \(sourceWidth)×\(sourceHeight) frame arrived in \(source.count) bytes, \(minimumLength) expected")
        }
        image.pixels.withUnsafeMutableBufferPointer { out in
            // Addresses, not pointers (which are not Sendable): both buffers outlive the call and
            // each band writes only its own rows.
            let src = UInt(bitPattern: base), dst = UInt(bitPattern: out.baseAddress!)
            parallel.performInBands(rows: height, threads: threads) { rows in
                self.convertRows(rows, source: UnsafePointer(bitPattern: src)!, destination: UnsafeMutablePointer(bitPattern: dst)!)
            }
        }
    }

    /// Rows `range` of the image, one loop per source format.
    private func convertRows(_ range: Range<Int>, source base: UnsafePointer<UInt8>, destination dst: UnsafeMutablePointer<UInt8>) {
        let width = self.width, stride = self.stride, sourceHeight = self.sourceHeight
        columns.withUnsafeBufferPointer { cols in
            rows.withUnsafeBufferPointer { rowIndex in
                switch format {
                case .xrgb8888, .rgb888, .bgr888:
                    let bpp = format == .xrgb8888 ? 4 : 3
                    let swap = format != .bgr888
                    for y in range {
                        let row = base + rowIndex[y] * stride, d = dst + y * width * 3
                        for x in 0..<width {
                            let p = row + cols[x] * bpp
                            d[x * 3] = swap ? p[2] : p[0]
                            d[x * 3 + 1] = p[1]
                            d[x * 3 + 2] = swap ? p[0] : p[2]
                        }
                    }
                case .yuv420:
                    let chromaStride = stride / 2
                    let uPlane = base + stride * sourceHeight, vPlane = uPlane + chromaStride * chromaRows
                    for y in range {
                        let sy = rowIndex[y], d = dst + y * width * 3
                        let yRow = base + sy * stride, uRow = uPlane + (sy / 2) * chromaStride, vRow = vPlane + (sy / 2) * chromaStride
                        if columnsAreSource {
                            BT601.convertRow(luma: yRow, chroma: .planar(cb: uRow, cr: vRow), width: width, into: d)
                        } else {
                            for x in 0..<width {
                                let sx = cols[x]
                                BT601.store(y: yRow[sx], cb: uRow[sx >> 1], cr: vRow[sx >> 1], to: d + x * 3)
                            }
                        }
                    }
                case .nv12:
                    let chroma = base + stride * sourceHeight
                    for y in range {
                        let sy = rowIndex[y], d = dst + y * width * 3
                        let yRow = base + sy * stride, uvRow = chroma + (sy / 2) * stride
                        if columnsAreSource {
                            BT601.convertRow(luma: yRow, chroma: .interleaved(uvRow), width: width, into: d)
                        } else {
                            for x in 0..<width {
                                let sx = cols[x], c = (sx >> 1) * 2
                                BT601.store(y: yRow[sx], cb: uvRow[c], cr: uvRow[c + 1], to: d + x * 3)
                            }
                        }
                    }
                }
            }
        }
    }
}
