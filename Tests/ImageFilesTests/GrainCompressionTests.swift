import FilmCore
import Foundation
@testable import ImageFiles
import XCTest
import Raster

/// Film grain is what a compressor most likes to throw away. At the default qualities the grain
/// a photo was developed with must still be in the file: its RMS in the decoded photo within
/// 10 % of the developed image's, for a fine stock and for the coarse ones.
final class GrainCompressionTests: XCTestCase {
    static let width = 1024, height = 768

    /// A flat 18 % grey developed with `preset`, with grain and without.
    static func developed(_ preset: Preset) -> (grainy: RGBImage, clean: RGBImage) {
        var grey = RGBImage(width: width, height: height)
        grey.pixels.withUnsafeMutableBytes { p in for i in 0..<p.count { p[i] = 118 } }
        func render(_ grain: Bool) -> RGBImage {
            var image = grey
            let look = FilmLook(preset: preset, settings: RenderSettings(intensity: 1, grainEnabled: grain))
            // A window of the 12 MP frame a photo is: the grain a photo file has to keep.
            let window = FrameWindow(frameWidth: 4056, frameHeight: 3040, x: 1000, y: 1000)
            FilmRenderer(look: look, width: width, height: height, window: window).render(&image, grainFrame: 0, threads: 2)
            return image
        }
        return (render(true), render(false))
    }

    /// The RMS of `image − clean` in luma, away from the edges: the grain (the look without
    /// grain is subtracted, vignette and tone curve with it).
    static func grainRMS(_ image: RGBImage, clean: RGBImage) -> Double {
        var sum = 0.0, n = 0
        for y in 16..<(height - 16) {
            for x in 16..<(width - 16) {
                let i = (y * width + x) * 3
                func luma(_ p: [UInt8]) -> Double { 0.2126 * Double(p[i]) + 0.7152 * Double(p[i + 1]) + 0.0722 * Double(p[i + 2]) }
                let d = luma(image.pixels) - luma(clean.pixels)
                sum += d * d
                n += 1
            }
        }
        return (sum / Double(n)).squareRoot()
    }

    func testGrainSurvivesTheDefaultQualities() throws {
        for preset in [BuiltinPresets.portra, BuiltinPresets.trix400, BuiltinPresets.delta3200] {
            let (grainy, clean) = Self.developed(preset)
            let developed = Self.grainRMS(grainy, clean: clean)
            XCTAssertGreaterThan(developed, 1, "\(preset.name) has grain to keep")
            for format in [ImageFormat.heic, .jpeg] {
                let bytes = try ImageWriter.encode(grainy, format: format, metadata: nil, heic: HEICOptions(), jpegQuality: 90)
                let limit = PixelLimit(maxPixels: 1 << 24, origin: "test")
                let decoded = format == .heic ? try HEICCodec.decode(bytes, path: "<memory>", limit: limit).image
                                              : try JPEGCodec.decode(bytes, path: "<memory>", limit: limit).image
                let kept = Self.grainRMS(decoded, clean: clean) / developed
                XCTAssertEqual(kept, 1, accuracy: 0.10, "\(preset.name) \(format): grain RMS \(String(format: "%.2f", developed)) developed, ×\(String(format: "%.3f", kept)) after the file (\(bytes.count / 1024) KiB)")
            }
        }
    }
}
