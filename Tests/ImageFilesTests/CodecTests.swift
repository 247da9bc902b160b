import FilmCore
import Foundation
import XCTest
@testable import ImageFiles

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
        XCTAssertEqual(tags["ColorSpace"], "1")
        XCTAssertEqual(tags["Software"], "Loopix (Portra 400)")
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
