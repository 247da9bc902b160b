import FilmCore
import Foundation
import System
import XCTest
@testable import ImageFiles
import Raster

final class CodecTests: XCTestCase {
    func testJPEGRoundTripWithExif() throws {
        let dir = try temporaryDirectory(self)
        let path = dir + "/p.jpg"
        let original = smoothImage(width: 123, height: 77)
        try ImageWriter.write(original, to: path, format: .jpeg, metadata: sampleMetadata, jpegQuality: 95)
        let decoded = try ImageReader.read(path: path)
        XCTAssertEqual(decoded.width, 123)
        XCTAssertEqual(decoded.height, 77)
        XCTAssertLessThan(meanAbsoluteError(original, decoded), 3)

        // SOI then APP1 "Exif\0\0".
        let bytes = try fileBytes(path)
        XCTAssertEqual(Array(bytes[0..<4]), [0xFF, 0xD8, 0xFF, 0xE1])
        let length = Int(bytes[4]) << 8 | Int(bytes[5])
        let payload = Array(bytes[6..<(4 + length)])
        XCTAssertTrue(payload.starts(with: Array("Exif".utf8) + [0, 0]))
        let tags = try ExifReader.tags(payload)
        XCTAssertEqual(tags["Make"], "Raspberry Pi")
        XCTAssertEqual(tags["ISOSpeedRatings"], "400")
        XCTAssertEqual(tags["ColorSpace"], "65535", "uncalibrated: the ICC profile says Display P3")
        XCTAssertEqual(tags["Software"], "Loopix \(loopixVersion) (Portra 400)")

        // The Display P3 profile in APP2 ICC_PROFILE, one chunk (sequence 1 of 1).
        let marker = Array("ICC_PROFILE".utf8) + [0]
        // (Spelled out for Swift 6.0's type checker, which gives up on the one-line closure.)
        func isICCSegment(_ i: Int) -> Bool {
            guard bytes[i] == 0xFF, bytes[i + 1] == 0xE2 else { return false }
            let name: [UInt8] = Array(bytes[(i + 4)..<(i + 4 + marker.count)])
            return name == marker
        }
        let at = try XCTUnwrap((0..<(bytes.count - marker.count - 4)).first(where: isICCSegment))
        let segment = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
        XCTAssertEqual([bytes[at + 16], bytes[at + 17]], [1, 1])
        let icc = Array(bytes[(at + 18)..<(at + 2 + segment)])
        XCTAssertEqual(ICCProfile.description(icc), "Display P3")
        XCTAssertEqual(icc, ICCProfile.displayP3())
        // Stored as P3: a saturated sRGB red is less saturated in P3's numbers.
        var red = RGBImage(width: 16, height: 16)
        red.pixels.withUnsafeMutableBytes { p in for i in stride(from: 0, to: p.count, by: 3) { p[i] = 255; p[i + 1] = 0; p[i + 2] = 0 } }
        let redPath = dir + "/red.jpg"
        try ImageWriter.write(red, to: redPath, format: .jpeg, metadata: nil, jpegQuality: 100)
        let raw = try JPEGCodec.decode(try fileBytes(redPath), path: redPath, limit: PixelLimit(maxPixels: 1 << 20, origin: "test"), applyProfile: false)
        XCTAssertLessThan(raw.image.pixels[0], 240, "P3 numbers for sRGB red (about 234, 51, 35)")
        XCTAssertGreaterThan(raw.image.pixels[1], 30)
        XCTAssertEqual(Int(try ImageReader.read(path: redPath).pixels[0]), 255, accuracy: 2)
    }

    /// A JPEG's EXIF orientation is applied while decoding: the picture comes out as viewers
    /// show it, and the EXIF handed out still says how it was stored.
    func testJPEGOrientationIsAppliedOnRead() throws {
        let dir = try temporaryDirectory(self)
        let stored = quadrants(width: 40, height: 24)
        for orientation in 1...8 {
            let path = dir + "/o\(orientation).jpg"
            try ImageWriter.write(stored, to: path, format: .jpeg, metadata: PhotoMetadata(orientation: orientation), jpegQuality: 95)
            let photo = try ImageReader.readPhoto(path: path)
            let expected = applyExifOrientation(stored, orientation)
            XCTAssertEqual(photo.image.width, expected.width, "orientation \(orientation)")
            XCTAssertEqual(photo.image.height, expected.height, "orientation \(orientation)")
            if photo.image.width == expected.width {
                let error = meanAbsoluteError(photo.image, expected)
                XCTAssertLessThan(error, 6, "orientation \(orientation): error \(error)")
            }
            XCTAssertEqual(try ExifReader.tags(try XCTUnwrap(photo.exif))["Orientation"], "\(orientation)")
        }
    }

    /// Every reader hands out the file's EXIF; a damaged orientation is ignored, not an error.
    func testReadersHandOutEXIF() throws {
        let dir = try temporaryDirectory(self)
        let image = smoothImage(width: 64, height: 64)
        try ImageWriter.write(image, to: dir + "/p.heic", format: .heic, metadata: sampleMetadata)
        try ImageWriter.write(image, to: dir + "/p.jpg", format: .jpeg, metadata: sampleMetadata)
        for path in [dir + "/p.heic", dir + "/p.jpg"] {
            let tags = try ExifReader.tags(try XCTUnwrap(ImageReader.readPhoto(path: path).exif, path))
            XCTAssertEqual(tags["Model"], "IMX477", path)
        }
        try ImageWriter.write(image, to: dir + "/p.png", format: .png, metadata: sampleMetadata)
        XCTAssertNil(try ImageReader.readPhoto(path: dir + "/p.png").exif, "our PNGs carry no metadata")
        XCTAssertNil(ExifReader.orientation([0x49, 0x49, 0x2A, 0, 8, 0, 0, 0]), "no IFD entries")
        XCTAssertNil(ExifReader.orientation([1, 2, 3]))

        // An APP1 "Exif" block whose TIFF header is damaged: the picture reads, without EXIF.
        var damaged = try fileBytes(dir + "/p.jpg")
        let tiff = try XCTUnwrap(damaged.firstRange(of: Array("Exif".utf8) + [0, 0, 0x49, 0x49])).upperBound - 2
        damaged.replaceSubrange(tiff..<(tiff + 2), with: Array("XX".utf8))
        try writeFile(dir + "/damaged.jpg", damaged)
        let photo = try ImageReader.readPhoto(path: dir + "/damaged.jpg")
        XCTAssertNil(photo.exif)
        XCTAssertEqual(photo.image.width, 64)
    }

    func testPNGRoundTripIsLossless() throws {
        let dir = try temporaryDirectory(self)
        let original = smoothImage(width: 97, height: 41)
        try ImageWriter.write(original, to: dir + "/p.png", format: .png, metadata: sampleMetadata)
        XCTAssertEqual(try ImageReader.read(path: dir + "/p.png"), original)
    }

    func testFormatIsDetectedByContentNotExtension() throws {
        let dir = try temporaryDirectory(self)
        let original = smoothImage(width: 20, height: 10)
        try ImageWriter.write(original, to: dir + "/really-a-png.jpg", format: .png)
        XCTAssertEqual(try ImageReader.read(path: dir + "/really-a-png.jpg"), original)
    }

    func testSamples() throws {
        let rocket = try ImageReader.read(path: try samplePath("rocket.jpg"))
        XCTAssertEqual(rocket.width, 640)
        XCTAssertEqual(rocket.height, 427)
        let astronaut = try ImageReader.read(path: try samplePath("astronaut.png"))
        XCTAssertEqual(astronaut.width, 512)
        XCTAssertEqual(astronaut.height, 512)
        for image in [rocket, astronaut] {
            let mean = image.pixels.reduce(0) { $0 + Int($1) } / image.pixels.count
            XCTAssertTrue((20...235).contains(mean), "implausible mean level \(mean)")
        }
    }

    func testExtensionsAndProfile() {
        XCTAssertEqual(ImageFormat(pathExtension: "HEIF"), .heic)
        XCTAssertEqual(ImageFormat(pathExtension: "JPeG"), .jpeg)
        XCTAssertEqual(ImageFormat(pathExtension: "jpg"), .jpeg)
        XCTAssertEqual(ImageFormat(pathExtension: "png"), .png)
        XCTAssertNil(ImageFormat(pathExtension: "tiff"))
        XCTAssertEqual(ImageFormat.jpeg.fileExtension, "jpg")
        XCTAssertEqual(ICCProfile.description(ICCProfile.displayP3()), "Display P3")
        XCTAssertNil(ICCProfile.description([1, 2, 3]))
    }
}
