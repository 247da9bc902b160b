import FilmCore
import Foundation
import System
import XCTest
@testable import ImageFiles

/// Images larger than one 512×512 tile are written as a HEIF grid assembled by ImageFiles.
final class HEICGridTests: XCTestCase {
    func testGridRoundTrip() throws {
        let dir = try temporaryDirectory(self)
        let path = dir + "/grid.heic"
        let original = smoothImage(width: 701, height: 523) // 2×2 tiles, odd sizes, padded edges
        try ImageWriter.write(original, to: path, format: .heic, metadata: sampleMetadata)
        let info = try HEICInfo.read(path: path)
        XCTAssertEqual(info.width, 701)
        XCTAssertEqual(info.height, 523)
        XCTAssertEqual(info.nclxPrimaries, 12)
        XCTAssertEqual(info.nclxTransfer, 13)
        XCTAssertEqual(info.nclxMatrix, 6)
        XCTAssertEqual(info.nclxFullRange, true)
        XCTAssertEqual(info.iccProfile.flatMap(ICCProfile.description), "Display P3")
        let tags = try ExifReader.tags(try XCTUnwrap(info.exif))
        XCTAssertEqual(tags["Make"], "Raspberry Pi")
        XCTAssertEqual(tags["Software"], "Loopix \(loopixVersion) (Portra 400)")
        XCTAssertEqual(tags["PixelXDimension"], "701")
        let decoded = try ImageReader.read(path: path)
        XCTAssertEqual(decoded.width, 701)
        XCTAssertEqual(decoded.height, 523)
        let error = meanAbsoluteError(original, decoded)
        XCTAssertLessThan(error, 3, "mean absolute error \(error)")
    }

    /// Tiles encoded on several threads at once make the very same file as one after another,
    /// and no more encoders than asked for are ever alive together.
    func testParallelTilesAreTheSameBytesAndBounded() throws {
        // Grain-like content, so that every tile is a real encode (not flat).
        var image = smoothImage(width: 1600, height: 1100) // 4×3 tiles, a padded bottom row
        var rng = SystemRandomNumberGenerator()
        image.pixels.withUnsafeMutableBytes { p in
            for i in stride(from: 0, to: p.count, by: 7) { p[i] = p[i] &+ UInt8.random(in: 0...24, using: &rng) }
        }
        HEICGrid.liveEncoders.withLock { $0 = (0, 0) }
        let one = try ImageWriter.encode(image, format: .heic, metadata: sampleMetadata, heic: HEICOptions(encoders: 1), jpegQuality: 90)
        XCTAssertEqual(HEICGrid.liveEncoders.withLock { $0.peak }, 1)
        for encoders in [2, 3, 16] {
            HEICGrid.liveEncoders.withLock { $0 = (0, 0) }
            let many = try ImageWriter.encode(image, format: .heic, metadata: sampleMetadata, heic: HEICOptions(encoders: encoders), jpegQuality: 90)
            XCTAssertEqual(many, one, "\(encoders) encoders: the same bytes as one")
            let peak = HEICGrid.liveEncoders.withLock { $0.peak }
            XCTAssertLessThanOrEqual(peak, min(encoders, 12), "\(encoders) encoders allowed, \(peak) were alive at once")
            XCTAssertEqual(HEICGrid.liveEncoders.withLock { $0.now }, 0, "every encoder freed")
        }
    }

    /// A failing tile fails the whole save with its error (and frees every encoder).
    func testATileThatFailsFailsTheSave() throws {
        let image = smoothImage(width: 1100, height: 600)
        XCTAssertThrowsError(try ImageWriter.encode(image, format: .heic, metadata: nil,
                                                    heic: HEICOptions(x265Preset: "not-a-preset", encoders: 4), jpegQuality: 90)) { error in
            XCTAssertTrue("\(error)".contains("preset"), "\(error)")
        }
        XCTAssertEqual(HEICGrid.liveEncoders.withLock { $0.now }, 0)
    }

    /// Every EXIF orientation becomes irot/imir boxes that libheif applies on decoding, for a
    /// one-tile and a multi-tile grid.
    func testOrientationsMatchExifSemantics() throws {
        let dir = try temporaryDirectory(self)
        for (w, h) in [(48, 32), (600, 530)] {
            let stored = quadrants(width: w, height: h)
            for orientation in 1...8 {
                let path = dir + "/o\(orientation)-\(w).heic"
                var metadata = PhotoMetadata()
                metadata.orientation = orientation
                try ImageWriter.write(stored, to: path, format: .heic, metadata: metadata, heic: HEICOptions(quality: 0.95))
                let decoded = try ImageReader.read(path: path)
                let expected = applyExifOrientation(stored, orientation)
                if [2, 4, 5, 7].contains(orientation) {
                    // imir mode 1 flips left↔right (EXIF 2), 0 top↔bottom.
                    let file = try fileBytes(path)
                    let mirror = try XCTUnwrap(BoxReader.find("imir", in: try ipco(file)), "no imir box")
                    XCTAssertEqual(mirror.first, orientation == 2 ? 1 : 0, "orientation \(orientation)")
                }
                XCTAssertEqual(decoded.width, expected.width, "orientation \(orientation), \(w)×\(h)")
                XCTAssertEqual(decoded.height, expected.height, "orientation \(orientation), \(w)×\(h)")
                if decoded.width == expected.width, decoded.height == expected.height {
                    let error = meanAbsoluteError(decoded, expected)
                    XCTAssertLessThan(error, 6, "orientation \(orientation), \(w)×\(h): error \(error)")
                }
            }
        }
    }

    func ipco(_ file: [UInt8]) throws -> ArraySlice<UInt8> {
        let meta = try XCTUnwrap(BoxReader.find("meta", in: file[...]))
        let iprp = try XCTUnwrap(BoxReader.find("iprp", in: meta.dropFirst(4)))
        return try XCTUnwrap(BoxReader.find("ipco", in: iprp))
    }
}

/// The gate that keeps x265's first encoder from being opened beside another (its primitive
/// table is filled on first use, and a second encoder would run on a half-filled table).
final class FirstUseGateTests: XCTestCase {
    func testBodiesTakeTurnsUntilOneSucceedsThenRunTogether() throws {
        let gate = FirstUseGate()
        let running = Locked((now: 0, peak: 0, calls: 0))
        @Sendable func body(fail: Bool) throws {
            let first = running.withLock { r -> Bool in
                r.now += 1
                r.peak = max(r.peak, r.now)
                r.calls += 1
                return r.calls == 1
            }
            Thread.sleep(forTimeInterval: 0.05)
            running.withLock { $0.now -= 1 }
            if fail && first { throw CocoaError(.fileNoSuchFile) }
        }
        // The first body fails: the next one still runs alone.
        DispatchQueue.concurrentPerform(iterations: 3) { _ in try? gate.once { try body(fail: true) } }
        XCTAssertEqual(running.withLock { $0.peak }, 1, "one at a time before a success")
        running.withLock { $0 = (0, 0, 0) }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in try? gate.once { try body(fail: false) } }
        XCTAssertGreaterThan(running.withLock { $0.peak }, 1, "together once one has succeeded")
    }
}
