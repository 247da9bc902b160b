import FilmCore

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
    }

    /// Bytes a frame needs at least.
    public var minimumLength: Int {
        switch format {
        case .xrgb8888, .rgb888, .bgr888: return stride * (sourceHeight - 1) + sourceWidth * (format == .xrgb8888 ? 4 : 3)
        case .yuv420, .nv12: return stride * sourceHeight + (stride / 2) * (sourceHeight / 2) * 2
        }
    }

    /// Converts `source` into `image` (width × height). Throws, leaving `image` as it was, when
    /// the buffer is shorter than `minimumLength` (a truncated or misdescribed frame), so that
    /// such a frame is never counted as delivered.
    public func convert(_ source: UnsafeRawBufferPointer, into image: inout RGBImage) throws(CameraError) {
        precondition(image.width == width && image.height == height, "destination is not the converter's size")
        guard source.count >= minimumLength, let base = source.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw .failed("a \(sourceWidth)×\(sourceHeight) frame arrived in \(source.count) bytes, \(minimumLength) expected")
        }
        let width = self.width, stride = self.stride
        columns.withUnsafeBufferPointer { cols in
            rows.withUnsafeBufferPointer { rowIndex in
                image.pixels.withUnsafeMutableBufferPointer { out in
                    let dst = out.baseAddress!
                    for y in 0..<height {
                        let sy = rowIndex[y]
                        let d = dst + y * width * 3
                        switch format {
                        case .xrgb8888, .rgb888, .bgr888:
                            let bpp = format == .xrgb8888 ? 4 : 3
                            let swap = format != .bgr888
                            let row = base + sy * stride
                            for x in 0..<width {
                                let p = row + cols[x] * bpp
                                d[x * 3] = swap ? p[2] : p[0]
                                d[x * 3 + 1] = p[1]
                                d[x * 3 + 2] = swap ? p[0] : p[2]
                            }
                        case .yuv420, .nv12:
                            let yRow = base + sy * stride
                            let chromaBase = base + stride * sourceHeight
                            let chromaStride = format == .nv12 ? stride : stride / 2
                            let uPlane = chromaBase
                            let vPlane = chromaBase + chromaStride * (sourceHeight / 2)
                            for x in 0..<width {
                                let sx = cols[x]
                                let yv = Int(yRow[sx])
                                let u: Int, v: Int
                                if format == .nv12 {
                                    let c = uPlane + (sy / 2) * chromaStride + (sx / 2) * 2
                                    u = Int(c[0])
                                    v = Int(c[1])
                                } else {
                                    u = Int(uPlane[(sy / 2) * chromaStride + sx / 2])
                                    v = Int(vPlane[(sy / 2) * chromaStride + sx / 2])
                                }
                                // BT.601 limited range in 16.16 fixed point.
                                let c = (yv - 16) * 76284
                                let dU = u - 128, dV = v - 128
                                let r = (c + 104595 * dV) >> 16
                                let g = (c - 25690 * dU - 53281 * dV) >> 16
                                let b = (c + 132186 * dU) >> 16
                                d[x * 3] = UInt8(clamping: r)
                                d[x * 3 + 1] = UInt8(clamping: g)
                                d[x * 3 + 2] = UInt8(clamping: b)
                            }
                        }
                    }
                }
            }
        }
    }
}
