import Raster
/// A sensor's raw frame: one level a photosite behind a 2×2 colour filter array, with what a
/// raw converter needs to turn it into colour (a DNG's CFA pattern, black and white levels,
/// colour matrix and as-shot neutral).
public struct BayerMosaic: Sendable, Equatable {
    /// The 2×2 filter colours from the top-left photosite, row by row.
    public enum Pattern: String, Sendable, CaseIterable {
        case rggb, grbg, gbrg, bggr

        /// DNG CFAPattern: 0 red, 1 green, 2 blue, for the 2×2 block row by row.
        public var cfa: [UInt8] {
            switch self {
            case .rggb: return [0, 1, 1, 2]
            case .grbg: return [1, 0, 2, 1]
            case .gbrg: return [1, 2, 0, 1]
            case .bggr: return [2, 1, 1, 0]
            }
        }

        /// The filter colour (0 red, 1 green, 2 blue) at photosite (x, y).
        public func color(x: Int, y: Int) -> Int { Int(cfa[(y & 1) * 2 + (x & 1)]) }
    }

    public let width: Int
    public let height: Int
    /// `width * height` levels, row by row, `blackLevel` (no light) … `whiteLevel` (clipped).
    public var samples: [UInt16]
    public var pattern: Pattern
    public var bitDepth: Int
    public var blackLevel: Int
    public var whiteLevel: Int
    /// XYZ (D65) to the camera's native RGB, row by row: DNG ColorMatrix1 for illuminant D65.
    public var colorMatrix: [Double]
    /// The camera's native RGB of a neutral under the scene's light: DNG AsShotNeutral.
    public var asShotNeutral: SIMD3<Double>

    public init(width: Int, height: Int, samples: [UInt16], pattern: Pattern, bitDepth: Int, blackLevel: Int, whiteLevel: Int,
                colorMatrix: [Double], asShotNeutral: SIMD3<Double>) {
        precondition(width > 0 && height > 0 && samples.count == width * height && colorMatrix.count == 9, "a mosaic's size and matrix")
        self.width = width
        self.height = height
        self.samples = samples
        self.pattern = pattern
        self.bitDepth = bitDepth
        self.blackLevel = blackLevel
        self.whiteLevel = whiteLevel
        self.colorMatrix = colorMatrix
        self.asShotNeutral = asShotNeutral
    }

    /// XYZ (D65) to linear sRGB (IEC 61966-2-1).
    public static let xyzToLinearSRGB: [Double] = [3.2404542, -1.5371385, -0.4985314,
                                                   -0.9692660, 1.8760108, 0.0415560,
                                                   0.0556434, -0.2040259, 1.0572252]

    /// The simulated sensor's response to daylight: its red and blue photosites see this much
    /// of what its green ones do (so a neutral is not 1, 1, 1, as on a real sensor).
    public static let simulatedNeutral = SIMD3<Double>(0.52, 1.0, 0.71)

    /// The raw frame a sensor with linear-sRGB primaries (scaled by `simulatedNeutral`), 12 bits
    /// (black 256, white 4095, as the Pi's HQ camera) and an RGGB filter would have made of
    /// `image` (8-bit sRGB): the simulated camera's raw stream. An odd last row or column is
    /// left out (a CFA block is 2×2).
    public static func simulatedSensor(of image: RGBImage) -> BayerMosaic {
        let width = max(2, image.width & ~1), height = max(2, image.height & ~1)
        let black = 256, white = 4095, pattern = Pattern.rggb
        let neutral = simulatedNeutral
        // 8-bit sRGB level → photosite level, per filter colour.
        let range = Double(white - black)
        let levels: [[UInt16]] = (0..<3).map { c in
            (0..<256).map { v in UInt16(Double(black) + (ColorMath.srgbToLinear(Double(v) / 255) * neutral[c] * range).rounded()) }
        }
        var samples = [UInt16](repeating: 0, count: width * height)
        image.pixels.withUnsafeBufferPointer { src in
            samples.withUnsafeMutableBufferPointer { dst in
                for y in 0..<height {
                    let row = min(y, image.height - 1) * image.width * 3
                    for x in 0..<width {
                        let c = pattern.color(x: x, y: y)
                        dst[y * width + x] = levels[c][Int(src[row + min(x, image.width - 1) * 3 + c])]
                    }
                }
            }
        }
        var matrix = xyzToLinearSRGB
        for row in 0..<3 { for col in 0..<3 { matrix[row * 3 + col] *= neutral[row] } }
        return BayerMosaic(width: width, height: height, samples: samples, pattern: pattern, bitDepth: 12,
                           blackLevel: black, whiteLevel: white, colorMatrix: matrix, asShotNeutral: neutral)
    }

    /// Levels from a MIPI CSI-2 packed frame (libcamera's packed raw formats, as the Pi's
    /// pipeline gives them): 10-bit, four pixels in five bytes (their high 8 bits, then a
    /// byte of their low 2 bits, first pixel lowest); 12-bit, two pixels in three bytes (their
    /// high 8 bits, then a byte of their low 4 bits). `stride` is the bytes from one row to the
    /// next (≥ the packed row). Nil when `bits` is not 10 or 12 or the data is too short.
    public static func unpackCSI2(_ data: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, bits: Int) -> [UInt16]? {
        let rowBytes: Int
        switch bits {
        case 10: rowBytes = (width * 5 + 3) / 4
        case 12: rowBytes = (width * 3 + 1) / 2
        default: return nil
        }
        guard width > 0, height > 0, stride >= rowBytes, data.count >= stride * (height - 1) + rowBytes else { return nil }
        var out = [UInt16](repeating: 0, count: width * height)
        out.withUnsafeMutableBufferPointer { dst in
            for y in 0..<height {
                let row = y * stride
                for x in 0..<width {
                    if bits == 10 {
                        let group = row + (x / 4) * 5
                        let high = UInt16(data[group + x % 4]), low = UInt16(data[group + 4] >> (2 * UInt8(x % 4))) & 0x3
                        dst[y * width + x] = high << 2 | low
                    } else {
                        let group = row + (x / 2) * 3
                        let high = UInt16(data[group + x % 2]), low = UInt16(data[group + 2] >> (4 * UInt8(x % 2))) & 0xF
                        dst[y * width + x] = high << 4 | low
                    }
                }
            }
        }
        return out
    }
}
