import FilmCore
import XCTest
@testable import Camera
@testable import PixelFormats
import Raster

/// What the libcamera backend does without a camera: pixel formats and the lens table.
final class PixelConversionTests: XCTestCase {
    func testPackedFormatsLandInRGBOrder() throws {
        // One pixel of pure red in each packed layout, 2×1 frames with padding in the stride.
        let cases: [(CameraPixelFormat, [UInt8], Int)] = [
            (.xrgb8888, [0, 0, 255, 0, 0, 0, 255, 0, 9, 9], 10),   // memory B G R X
            (.rgb888, [0, 0, 255, 0, 0, 255, 9, 9], 8),           // memory B G R
            (.bgr888, [255, 0, 0, 255, 0, 0, 9, 9], 8),           // memory R G B
        ]
        for (format, bytes, stride) in cases {
            let converter = FrameConverter(format: format, sourceWidth: 2, sourceHeight: 1, stride: stride, width: 2, height: 1)
            var image = RGBImage(width: 2, height: 1)
            try bytes.withUnsafeBytes { try converter.convert($0, into: &image) }
            XCTAssertEqual(image[0, 0], SIMD3(255, 0, 0), "\(format)")
            XCTAssertEqual(image[1, 0], SIMD3(255, 0, 0), "\(format)")
        }
    }

    func testYUVGreyAndColourDecodeWithBT601() throws {
        // 2×2 I420: Y = 126 (mid grey, limited range), U = V = 128 → grey ≈ 128.
        let i420: [UInt8] = [126, 126, 126, 126, 128, 128]
        var image = RGBImage(width: 2, height: 2)
        try i420.withUnsafeBytes {
            try FrameConverter(format: .yuv420, sourceWidth: 2, sourceHeight: 2, stride: 2, width: 2, height: 2).convert($0, into: &image)
        }
        XCTAssertEqual(Int(image[1, 1].x), 128, accuracy: 1)
        XCTAssertEqual(image[1, 1].x, image[1, 1].z)
        // NV12 red: Y 81, U 90, V 240 (BT.601 limited) → about (255, 0, 0).
        let nv12: [UInt8] = [81, 81, 81, 81, 90, 240]
        try nv12.withUnsafeBytes {
            try FrameConverter(format: .nv12, sourceWidth: 2, sourceHeight: 2, stride: 2, width: 2, height: 2).convert($0, into: &image)
        }
        XCTAssertGreaterThan(image[0, 0].x, 240)
        XCTAssertLessThan(image[0, 0].y, 15)
        XCTAssertLessThan(image[0, 0].z, 15)
    }

    /// Frames whose columns are the destination's (the preview's usual case, converted two
    /// pixels a chroma sample) decode every pixel as BT.601 says: an odd width, a padded stride
    /// and a vertical crop, both planar and semi-planar.
    func testUnscaledRowsDecodeEveryPixelAsBT601() throws {
        let w = 37, stride = 40, sourceHeight = 12, h = 8 // rows 2…9 of 12
        var bytes = [UInt8](repeating: 0, count: stride * sourceHeight * 3 / 2)
        var state: UInt64 = 7
        for i in bytes.indices {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            bytes[i] = UInt8(truncatingIfNeeded: state >> 56)
        }
        let lumaSize = stride * sourceHeight, chromaStride = stride / 2
        for format in [CameraPixelFormat.yuv420, .nv12] {
            var image = RGBImage(width: w, height: h)
            try bytes.withUnsafeBytes {
                try FrameConverter(format: format, sourceWidth: w, sourceHeight: sourceHeight, stride: stride, width: w, height: h)
                    .convert($0, into: &image)
            }
            for y in 0..<h {
                for x in 0..<w {
                    let sy = y + 2
                    let (u, v): (UInt8, UInt8) = format == .yuv420
                        ? (bytes[lumaSize + sy / 2 * chromaStride + x / 2], bytes[lumaSize + chromaStride * sourceHeight / 2 + sy / 2 * chromaStride + x / 2])
                        : (bytes[lumaSize + sy / 2 * stride + x / 2 * 2], bytes[lumaSize + sy / 2 * stride + x / 2 * 2 + 1])
                    let l = 1.164 * (Double(bytes[sy * stride + x]) - 16), cb = Double(u) - 128, cr = Double(v) - 128
                    let expected = [l + 1.596 * cr, l - 0.392 * cb - 0.813 * cr, l + 2.017 * cb].map { min(max($0, 0), 255) }
                    let got = image[x, y]
                    for c in 0..<3 {
                        XCTAssertEqual(Double(got[c]), expected[c], accuracy: 0.6, "\(format) pixel (\(x), \(y)) channel \(c)")
                    }
                }
            }
        }
    }

    /// A frame of odd height has a chroma row for its last luma row alone: the planes are
    /// sized and found that way (the V plane starts after 4 rows of U for 7 rows of luma), the
    /// last row decodes with its own chroma, and a buffer one chroma row short is refused, as is
    /// an odd stride.
    func testOddHeightFramesHaveAChromaRowForTheLastRow() throws {
        let w = 6, stride = 8, h = 7, chromaRows = 4, chromaStride = stride / 2
        let lumaSize = stride * h
        for format in [CameraPixelFormat.yuv420, .nv12] {
            var bytes = [UInt8](repeating: 16, count: lumaSize + chromaStride * chromaRows * 2)
            // Neutral chroma everywhere but the last chroma row: strong red (V) there.
            for i in lumaSize..<bytes.count { bytes[i] = 128 }
            for x in 0..<(w / 2) {
                if format == .yuv420 {
                    bytes[lumaSize + chromaStride * chromaRows + 3 * chromaStride + x] = 240
                } else {
                    bytes[lumaSize + 3 * stride + x * 2 + 1] = 240
                }
            }
            for i in 0..<lumaSize { bytes[i] = 126 }
            let converter = FrameConverter(format: format, sourceWidth: w, sourceHeight: h, stride: stride, width: w, height: h)
            XCTAssertEqual(converter.minimumLength, bytes.count, "\(format)")
            var image = RGBImage(width: w, height: h)
            try bytes.withUnsafeBytes { try converter.convert($0, into: &image) }
            for y in 0..<h {
                for x in 0..<w {
                    let p = image[x, y]
                    if y == h - 1 {
                        XCTAssertGreaterThan(Int(p[0]), Int(p[1]) + 100, "\(format): the last row's red, at \(x)")
                    } else {
                        XCTAssertEqual(Int(p[0]), Int(p[1]), accuracy: 1, "\(format): grey at (\(x), \(y))")
                    }
                }
            }
            let short = [UInt8](bytes.dropLast(chromaStride))
            XCTAssertThrowsError(try short.withUnsafeBytes { try converter.convert($0, into: &image) }, "\(format): one chroma row short")
            // An odd stride (chroma rows of half of it would not hold the last sample) is refused.
            let odd = FrameConverter(format: format, sourceWidth: 5, sourceHeight: h, stride: 5, width: 5, height: h)
            var small = RGBImage(width: 5, height: h)
            let plenty = [UInt8](repeating: 128, count: 5 * h * 3)
            XCTAssertThrowsError(try plenty.withUnsafeBytes { try odd.convert($0, into: &small) }, "\(format): odd stride")
        }
    }

    func testScalingCentreCropsToTheDestinationAspect() throws {
        // A 4×2 source whose left and right quarters are black, middle white, into 2×2: the
        // 2:1 frame is cropped to its centre square, so all white.
        var src = [UInt8](repeating: 0, count: 4 * 2 * 3)
        for y in 0..<2 { for x in 1...2 { for c in 0..<3 { src[(y * 4 + x) * 3 + c] = 255 } } }
        var image = RGBImage(width: 2, height: 2)
        try src.withUnsafeBytes {
            try FrameConverter(format: .bgr888, sourceWidth: 4, sourceHeight: 2, stride: 12, width: 2, height: 2).convert($0, into: &image)
        }
        XCTAssertEqual(Set(image.pixels), [255])
    }

    /// Converted in bands on several threads, every format gives the same bytes as on one.
    func testBandsOnSeveralThreadsGiveTheSameImage() throws {
        let w = 96, h = 70
        var bytes = [UInt8](repeating: 0, count: w * 4 * h)
        for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: i &* 2654435761 >> 13) }
        for (format, stride) in [(CameraPixelFormat.xrgb8888, w * 4), (.bgr888, w * 3), (.yuv420, w), (.nv12, w)] {
            // Scaled down and centre-cropped, so the row and column tables are not the identity.
            let converter = FrameConverter(format: format, sourceWidth: w, sourceHeight: h, stride: stride, width: 60, height: 40)
            var one = RGBImage(width: 60, height: 40), three = RGBImage(width: 60, height: 40)
            try bytes.withUnsafeBytes { try converter.convert($0, into: &one) }
            try bytes.withUnsafeBytes { try converter.convert($0, into: &three, threads: 3) }
            XCTAssertEqual(one, three, "\(format)")
            XCTAssertNotEqual(Set(one.pixels).count, 1, "\(format): a picture, not one value")
        }
    }

    func testAShortBufferIsAnErrorAndLeavesTheImageAlone() {
        // A 2×2 BGR888 frame needs 12 bytes; 11 arrive (a truncated or misdescribed buffer).
        let src = [UInt8](repeating: 200, count: 11)
        var image = RGBImage(width: 2, height: 2, pixels: [UInt8](repeating: 7, count: 12))
        let converter = FrameConverter(format: .bgr888, sourceWidth: 2, sourceHeight: 2, stride: 6, width: 2, height: 2)
        let thrown: Error? = src.withUnsafeBytes { bytes in
            do { try converter.convert(bytes, into: &image) } catch { return error }
            return nil
        }
        XCTAssertEqual(thrown.map { "\($0)" }, "a 2×2 frame arrived in 11 bytes, 12 expected")
        XCTAssertEqual(Set(image.pixels), [7], "the frame is not counted: the buffer keeps what it had")
    }

    func testFourccCodes() {
        XCTAssertEqual(CameraPixelFormat(fourcc: 0x3432_5258), .xrgb8888)  // "XR24"
        XCTAssertEqual(CameraPixelFormat(fourcc: 0x3432_4742), .bgr888)    // "BG24"
        XCTAssertNil(CameraPixelFormat(fourcc: 0x5659_5559))                // "YUYV": not read
    }
}

final class LensTableTests: XCTestCase {
    func testKnownModulesGiveTheirEquivalentFocalLengths() throws {
        // Camera Module 3: 4608×2592 pixels of 1.4 µm → 7.4 mm diagonal; 4.74 mm → about 28 mm.
        let diagonal = try XCTUnwrap(LensTable.sensorDiagonal(pixelsWide: 4608, pixelsHigh: 2592, cellWidthNm: 1400, cellHeightNm: 1400))
        let cm3 = LensTable.builtIn.focalLengths(model: "imx708", sensorDiagonal: diagonal, override: nil)
        XCTAssertEqual(cm3.mm, 4.74)
        XCTAssertEqual(cm3.equivalent, 27.7, accuracy: 1)
        let wide = LensTable.builtIn.focalLengths(model: "imx708_wide", sensorDiagonal: diagonal, override: nil)
        XCTAssertLessThan(wide.equivalent, cm3.equivalent, "the wide module sorts first")
        // The HQ camera has no lens of its own: the configured one is used.
        let hq = LensTable.builtIn.focalLengths(model: "imx477", sensorDiagonal: 7.9, override: 16)
        XCTAssertEqual(hq.mm, 16)
        XCTAssertEqual(hq.equivalent, 16 * 43.267 / 7.9, accuracy: 0.01)
        XCTAssertFalse(LensTable.builtIn.focalLengths(model: "imx477", sensorDiagonal: 7.9, override: nil).known)
    }

    func testTheRepositoryLensTableMatchesTheBuiltInOne() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let table = try LensTable.load(path: root + "/boards/lenses.json")
        for (model, entry) in LensTable.builtIn.entries {
            XCTAssertEqual(table.entries[model]?.focalLength, entry.focalLength, model)
        }
    }
}
