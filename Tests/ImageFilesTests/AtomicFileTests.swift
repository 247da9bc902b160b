import Foundation
import XCTest
@testable import ImageFiles

final class AtomicFileTests: XCTestCase {
    struct Boom: Error {}

    func testBodyThrowingMidwayLeavesNothing() throws {
        let dir = try temporaryDirectory(self)
        XCTAssertThrowsError(try AtomicFile.write(to: dir + "/x.bin", replace: false) { write in
            try [UInt8](repeating: 7, count: 1000).withUnsafeBytes { try write($0) }
            throw Boom()
        }) { XCTAssertTrue($0 is Boom) }
        XCTAssertEqual(directoryContents(dir), [])
    }

    func testWritesInPieces() throws {
        let dir = try temporaryDirectory(self)
        try AtomicFile.write(to: dir + "/x.bin", replace: false) { write in
            try [UInt8]([1, 2]).withUnsafeBytes { try write($0) }
            try [UInt8]([3]).withUnsafeBytes { try write($0) }
        }
        XCTAssertEqual(try fileBytes(dir + "/x.bin"), [1, 2, 3])
        XCTAssertEqual(directoryContents(dir), ["x.bin"])
    }

    func testNoReplaceNeverOverwrites() throws {
        let dir = try temporaryDirectory(self)
        try AtomicFile.write([1], to: dir + "/a", replace: false)
        XCTAssertThrowsError(try AtomicFile.write([2], to: dir + "/a", replace: false)) {
            XCTAssertEqual($0 as? ImageFileError, .alreadyExists(path: dir + "/a"))
        }
        XCTAssertEqual(try fileBytes(dir + "/a"), [1])
        XCTAssertEqual(directoryContents(dir), ["a"])
        try AtomicFile.write([3], to: dir + "/a", replace: true)
        XCTAssertEqual(try fileBytes(dir + "/a"), [3])
        XCTAssertEqual(directoryContents(dir), ["a"])
    }

    func testNoReplaceRaceIsDetectedAtRename() throws {
        // The file appears while the body runs (after the early existence check): the
        // no-replace rename must refuse, keep the other file and remove the temp.
        let dir = try temporaryDirectory(self)
        let path = dir + "/raced"
        XCTAssertThrowsError(try AtomicFile.write(to: path, replace: false) { write in
            try writeFile(path, [9])
            try [UInt8]([1]).withUnsafeBytes { try write($0) }
        }) { XCTAssertEqual($0 as? ImageFileError, .alreadyExists(path: path)) }
        XCTAssertEqual(try fileBytes(path), [9])
        XCTAssertEqual(directoryContents(dir), ["raced"])
    }

    func testLeftoverTempFileDoesNotBlock() throws {
        let dir = try temporaryDirectory(self)
        try writeFile(dir + "/.photo.heic.tmp", [0])
        try writeFile(dir + "/.photo.heic.abc.tmp", [0])
        try ImageWriter.write(smoothImage(width: 10, height: 10), to: dir + "/photo.heic", format: .png)
        XCTAssertEqual(directoryContents(dir), [".photo.heic.abc.tmp", ".photo.heic.tmp", "photo.heic"])
    }

    func testRelativeBareName() throws {
        let dir = try temporaryDirectory(self)
        let old = FileManager.default.currentDirectoryPath
        _ = FileManager.default.changeCurrentDirectoryPath(dir)
        defer { _ = FileManager.default.changeCurrentDirectoryPath(old) }
        try AtomicFile.write([5], to: "bare.bin", replace: false)
        XCTAssertEqual(try fileBytes(dir + "/bare.bin"), [5])
    }
}
