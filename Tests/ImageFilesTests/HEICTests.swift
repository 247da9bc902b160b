import FilmCore
import Foundation
import System
import XCTest
@testable import ImageFiles
import Raster

final class HEICTests: XCTestCase {
    func testRoundTripKeepsSizeColourProfilesAndExif() throws {
        let dir = try temporaryDirectory(self)
        let path = dir + "/photo.heic"
        let original = smoothImage(width: 301, height: 199) // odd: chroma rounds up
        try ImageWriter.write(original, to: path, format: .heic, metadata: sampleMetadata,
                              heic: HEICOptions(quality: 0.9, x265Preset: "ultrafast"))

        let info = try HEICInfo.read(path: path)
        XCTAssertEqual(info.width, 301)
        XCTAssertEqual(info.height, 199)
        XCTAssertEqual(info.nclxPrimaries, 12)
        XCTAssertEqual(info.nclxTransfer, 13)
        XCTAssertEqual(info.nclxMatrix, 6)
        XCTAssertEqual(info.nclxFullRange, true)
        let icc = try XCTUnwrap(info.iccProfile, "no ICC profile in the file")
        XCTAssertEqual(ICCProfile.description(icc), "Display P3")

        let exif = try XCTUnwrap(info.exif, "no EXIF in the file")
        XCTAssertTrue(exif.starts(with: [0x49, 0x49, 0x2A, 0x00]), "EXIF does not start with a TIFF header")
        let tags = try ExifReader.tags(exif)
        XCTAssertEqual(tags["Make"], "Raspberry Pi")
        XCTAssertEqual(tags["Model"], "IMX477")
        XCTAssertEqual(tags["LensModel"], "6mm CS")
        XCTAssertEqual(tags["FocalLength"], "6")
        XCTAssertEqual(tags["FocalLengthIn35mmFilm"], "33")
        XCTAssertEqual(tags["ExposureTime"], "0.008")
        XCTAssertEqual(tags["ISOSpeedRatings"], "400")
        XCTAssertEqual(tags["Orientation"], "1")
        XCTAssertEqual(tags["DateTimeOriginal"], ExifWriter.exifDateString(sampleMetadata.date!))
        XCTAssertEqual(tags["ImageDescription"], "Portra 400")
        XCTAssertEqual(tags["Software"], "Loopix \(loopixVersion) (Portra 400)")
        XCTAssertEqual(tags["ColorSpace"], "65535")

        // Through P3, YCbCr 4:2:0 and HEVC and back: a smooth image stays within 3 levels on average.
        let decoded = try ImageReader.read(path: path)
        XCTAssertEqual(decoded.width, 301)
        XCTAssertEqual(decoded.height, 199)
        let error = meanAbsoluteError(original, decoded)
        XCTAssertLessThan(error, 3, "mean absolute error \(error)")
    }

    func testStoredValuesAreDisplayP3() throws {
        // Pure sRGB red is (234, 51, 35) in Display P3 (sRGB TRC): the stored file must hold
        // the P3 values, which decoding converts back to about (255, 0, 0).
        var red = RGBImage(width: 64, height: 64)
        for i in stride(from: 0, to: red.pixels.count, by: 3) { red.pixels[i] = 255 }
        let bytes = try ImageWriter.encode(red, format: .heic, metadata: nil, heic: HEICOptions(quality: 0.95), jpegQuality: 92)
        let dir = try temporaryDirectory(self)
        try AtomicFile.write(bytes, to: dir + "/red.heic", replace: false)
        let decoded = try ImageReader.read(path: dir + "/red.heic")
        let centre = decoded[32, 32]
        XCTAssertGreaterThan(centre.x, 245)
        XCTAssertLessThan(centre.y, 15)
        XCTAssertLessThan(centre.z, 15)
    }

    func testOrientationBecomesTransformation() throws {
        let dir = try temporaryDirectory(self)
        var metadata = sampleMetadata
        metadata.orientation = 6 // rotate 90° clockwise to display
        try ImageWriter.write(smoothImage(width: 64, height: 32), to: dir + "/r.heic", format: .heic, metadata: metadata)
        let tags = try ExifReader.tags(try XCTUnwrap(HEICInfo.read(path: dir + "/r.heic").exif))
        XCTAssertEqual(tags["Orientation"], "6")
        let decoded = try ImageReader.read(path: dir + "/r.heic")
        XCTAssertEqual(decoded.width, 32)
        XCTAssertEqual(decoded.height, 64)
    }

    func testWithoutMetadataHasNoExif() throws {
        let dir = try temporaryDirectory(self)
        try ImageWriter.write(smoothImage(width: 33, height: 17), to: dir + "/a.heic", format: .heic)
        let info = try HEICInfo.read(path: dir + "/a.heic")
        XCTAssertNil(info.exif)
        XCTAssertEqual(info.width, 33)
        XCTAssertEqual(info.height, 17)
    }

    func testUnknownPresetAndQualityAreErrors() throws {
        let image = smoothImage(width: 16, height: 16)
        XCTAssertThrowsError(try ImageWriter.encode(image, format: .heic, metadata: nil,
                                                    heic: HEICOptions(x265Preset: "warp9"), jpegQuality: 92)) {
            XCTAssertTrue("\($0)".contains("warp9"), "\($0)")
        }
        XCTAssertThrowsError(try ImageWriter.encode(image, format: .heic, metadata: nil,
                                                    heic: HEICOptions(quality: 1.5), jpegQuality: 92))
        let dir = try temporaryDirectory(self)
        assertImageFileError(dir + "/bad.heic") {
            try ImageWriter.write(image, to: dir + "/bad.heic", format: .heic, heic: HEICOptions(x265Preset: "warp9"))
        }
        XCTAssertEqual(directoryContents(dir), [], "a failed encode must not leave a file")
    }

    func testTruncatedHEICIsAnError() throws {
        let dir = try temporaryDirectory(self)
        let bytes = try ImageWriter.encode(smoothImage(width: 64, height: 64), format: .heic, metadata: sampleMetadata,
                                           heic: HEICOptions(), jpegQuality: 92)
        for keep in [20, bytes.count / 3, bytes.count - 40] {
            let path = dir + "/cut\(keep).heic"
            try writeFile(path, Array(bytes.prefix(keep)))
            let error = assertImageFileError(path) { _ = try ImageReader.read(path: path) }
            if case .decode(_, let format, _, _)? = error { XCTAssertEqual(format, .heic) } else {
                XCTFail("expected .decode, got \(String(describing: error))")
            }
        }
    }
}
