/// An 8-bit RGB image: rows top to bottom, pixels interleaved R, G, B with no padding,
/// display-encoded with the sRGB transfer function and sRGB (Rec. 709) primaries.
///
/// This is the engine's exchange format: files decode into it, the film engine renders it,
/// the HEIC writer converts it to Display P3 on the way out.
public struct RGBImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// `width * height * 3` bytes.
    public var pixels: [UInt8]

    public static let channels = 3

    /// A black image.
    public init(width: Int, height: Int) {
        precondition(width > 0 && height > 0, "image dimensions must be positive")
        self.width = width
        self.height = height
        self.pixels = [UInt8](repeating: 0, count: width * height * 3)
    }

    /// An image over existing pixels; `pixels.count` must be `width * height * 3`.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0, "image dimensions must be positive")
        precondition(pixels.count == width * height * 3, "pixel buffer does not match \(width)×\(height) RGB")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    public var pixelCount: Int { width * height }

    @inlinable
    public subscript(x: Int, y: Int) -> SIMD3<UInt8> {
        get {
            let i = (y * width + x) * 3
            return SIMD3(pixels[i], pixels[i + 1], pixels[i + 2])
        }
        set {
            let i = (y * width + x) * 3
            pixels[i] = newValue.x
            pixels[i + 1] = newValue.y
            pixels[i + 2] = newValue.z
        }
    }
}
