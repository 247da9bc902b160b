import FilmCore
import Foundation
import System
import XCTest
@testable import ImageFiles

final class BadInputTests: XCTestCase {
    func testTruncatedJPEG() throws {
        let dir = try temporaryDirectory(self)
        let bytes = try ImageWriter.encode(smoothImage(width: 64, height: 64), format: .jpeg, metadata: nil,
                                           heic: HEICOptions(), jpegQuality: 90)
        let path = dir + "/cut.jpg"
        try writeFile(path, Array(bytes.prefix(bytes.count / 2)))
        let error = assertImageFileError(path) { _ = try ImageReader.read(path: path) }
        XCTAssertTrue(error?.description.contains("JPEG") ?? false, "\(String(describing: error))")
    }

    func testGarbageJPEG() throws {
        let dir = try temporaryDirectory(self)
        let path = dir + "/garbage.jpg"
        var generator = SystemRandomNumberGenerator()
        try writeFile(path, [0xFF, 0xD8, 0xFF] + (0..<2000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        assertImageFileError(path) { _ = try ImageReader.read(path: path) }
    }

    func testMissingFile() throws {
        let dir = try temporaryDirectory(self)
        let error = assertImageFileError(dir + "/nope.heic") { _ = try ImageReader.read(path: dir + "/nope.heic") }
        XCTAssertEqual(error?.errno, Errno(ENOENT))
        XCTAssertThrowsError(try HEICInfo.read(path: dir + "/nope.heic"))
    }

    func testTextFileNamedPNG() throws {
        let dir = try temporaryDirectory(self)
        let path = dir + "/notes.png"
        try writeFile(path, Array("just some text\n".utf8))
        let error = assertImageFileError(path) { _ = try ImageReader.read(path: path) }
        guard case .unknownFormat? = error else { return XCTFail("expected .unknownFormat, got \(String(describing: error))") }
        try writeFile(path, [])
        assertImageFileError(path) { _ = try ImageReader.read(path: path) }
    }

    func testCorruptPNGBody() throws {
        let dir = try temporaryDirectory(self)
        var bytes = try ImageWriter.encode(smoothImage(width: 64, height: 64), format: .png, metadata: nil,
                                           heic: HEICOptions(), jpegQuality: 90)
        bytes = Array(bytes.prefix(bytes.count / 2))
        let path = dir + "/cut.png"
        try writeFile(path, bytes)
        assertImageFileError(path) { _ = try ImageReader.read(path: path) }
    }

    func testUnwritableDirectory() throws {
        // Tests run as root, so permissions do not stop us: use a parent that is a regular file.
        let dir = try temporaryDirectory(self)
        try writeFile(dir + "/plainfile", [1, 2, 3])
        let path = dir + "/plainfile/out.heic"
        let error = assertImageFileError(path) {
            try ImageWriter.write(smoothImage(width: 16, height: 16), to: path, format: .png)
        }
        XCTAssertEqual(error?.errno, Errno(ENOTDIR))
        let missing = dir + "/no/such/dir/out.jpg"
        let error2 = assertImageFileError(missing) {
            try ImageWriter.write(smoothImage(width: 16, height: 16), to: missing, format: .jpeg)
        }
        XCTAssertEqual(error2?.errno, Errno(ENOENT))
    }

    func testExistingFileIsNotReplaced() throws {
        let dir = try temporaryDirectory(self)
        let path = dir + "/keep.png"
        try writeFile(path, [42, 42, 42])
        let error = assertImageFileError(path) {
            try ImageWriter.write(smoothImage(width: 16, height: 16), to: path, format: .png)
        }
        XCTAssertEqual(error, .alreadyExists(path: path))
        XCTAssertEqual(try fileBytes(path), [42, 42, 42])
        XCTAssertEqual(directoryContents(dir), ["keep.png"])

        try ImageWriter.write(smoothImage(width: 16, height: 16), to: path, format: .png, replace: true)
        XCTAssertEqual(try ImageReader.read(path: path), smoothImage(width: 16, height: 16))
    }

    func testBadMetadataIsAnError() throws {
        var metadata = sampleMetadata
        metadata.orientation = 9
        XCTAssertThrowsError(try ImageWriter.encode(smoothImage(width: 8, height: 8), format: .jpeg, metadata: metadata,
                                                    heic: HEICOptions(), jpegQuality: 90))
        XCTAssertThrowsError(try ImageWriter.encode(smoothImage(width: 8, height: 8), format: .jpeg, metadata: nil,
                                                    heic: HEICOptions(), jpegQuality: 0))
        XCTAssertThrowsError(try ExifReader.tags([1, 2, 3, 4, 5]))
    }
}
