import FilmCore
import Foundation
import XCTest
@testable import ImageFiles

/// Readers refuse images larger than the pixel limit before allocating them; the crafted
/// PNG and JPEG bombs run through `loopix develop` in LoopixToolTests.DevelopLimitTests.
final class PixelLimitTests: XCTestCase {
    /// Every format is refused by its declared size, in one line naming the file and the limit.
    func testEveryFormatIsCheckedAgainstTheLimit() throws {
        let dir = try temporaryDirectory(self)
        let image = smoothImage(width: 96, height: 64) // 6144 pixels
        let tight = PixelLimit(maxPixels: 6143, origin: "for this test")
        for format in ImageFormat.allCases {
            let path = dir + "/photo.\(format.fileExtension)"
            try ImageWriter.write(image, to: path, format: format)
            let error = assertImageFileError(path) { _ = try ImageReader.read(path: path, limit: tight) }
            XCTAssertEqual(error, .tooLarge(path: path, format: format, width: 96, height: 64, limit: tight))
            XCTAssertEqual(error?.description, "\(path): 96×64 pixels (0.00614 MP) exceeds the limit of 0.00614 MP for this test")
            let read = try ImageReader.read(path: path, limit: PixelLimit(maxPixels: 6144, origin: "for this test"))
            XCTAssertEqual(read.width, 96, "\(format) at exactly the limit")
        }
    }

    /// A grid whose descriptor claims far more than its ispe: libheif 1.15 would allocate the
    /// descriptor's canvas, so the reader checks that too.
    func testHEICGridCanvasLargerThanItsIspeIsRefused() throws {
        let honest = try ImageWriter.encode(smoothImage(width: 33, height: 17), format: .heic, metadata: nil,
                                            heic: HEICOptions(), jpegQuality: 92)
        XCTAssertTrue(try XCTUnwrap(HEIFCanvas.primarySize(in: honest)) == (33, 17), "a 1×1 grid of 33×17")
        var bomb = honest
        let grid: [UInt8] = [0, 0, 0, 0, 0, 33, 0, 17] // version, flags, rows-1, columns-1, 33, 17
        let at = try XCTUnwrap(bomb.firstRange(of: Array("idat".utf8) + grid)).lowerBound + 4
        bomb.replaceSubrange((at + 4)..<(at + 8), with: [0x75, 0x30, 0x75, 0x30]) // 30000×30000
        XCTAssertTrue(try XCTUnwrap(HEIFCanvas.primarySize(in: bomb)) == (30000, 30000))
        let dir = try temporaryDirectory(self)
        try writeFile(dir + "/bomb.heic", bomb)
        let info = try HEICInfo.read(path: dir + "/bomb.heic")
        XCTAssertEqual(info.width * info.height, 33 * 17, "ispe still says 33×17")
        let error = assertImageFileError(dir + "/bomb.heic") { _ = try ImageReader.read(path: dir + "/bomb.heic") }
        guard case .tooLarge(_, .heic, 30000, 30000, _)? = error else {
            return XCTFail("expected .tooLarge for the 30000×30000 canvas, got \(String(describing: error))")
        }
        // A single coded picture has no canvas of its own.
        let single = try ImageWriter.encode(smoothImage(width: 300, height: 200), format: .heic, metadata: sampleMetadata,
                                            heic: HEICOptions(), jpegQuality: 92)
        XCTAssertNil(HEIFCanvas.primarySize(in: single))
    }

    /// A JPEG whose frame header claims more rows than its data holds fails cleanly, and the
    /// frame it claimed is never touched: only the rows that were really decoded.
    func testJPEGWithTruncatedDataFailsWithoutTouchingTheClaimedFrame() throws {
        var jpeg = try ImageWriter.encode(smoothImage(width: 64, height: 48), format: .jpeg, metadata: nil,
                                          heic: HEICOptions(), jpegQuality: 90)
        let sof = try XCTUnwrap(jpeg.firstRange(of: [0xFF, 0xC0])).lowerBound
        jpeg.replaceSubrange((sof + 5)..<(sof + 9), with: [0x75, 0x30, 0x75, 0x30]) // 30000×30000: 2.7 GB of RGB
        let dir = try temporaryDirectory(self)
        try writeFile(dir + "/cut.jpg", jpeg)
        let before = peakResidentBytes()
        let error = assertImageFileError(dir + "/cut.jpg") {
            _ = try ImageReader.read(path: dir + "/cut.jpg", limit: PixelLimit(megapixels: 1000, origin: "for this test"))
        }
        guard case .decode(_, .jpeg, _, _)? = error else { return XCTFail("expected .decode, got \(String(describing: error))") }
        let grown = peakResidentBytes() - before
        XCTAssertLessThan(grown, 100 << 20, "peak memory grew by \(grown >> 20) MB")
    }

    /// The limit follows the memory a develop may use (256 MB, or half a smaller machine's):
    /// a 12 MP photo fits even on a 512 MB Pi Zero 2 W (Linux sees about 425 MB of it), a 196 MP
    /// one nowhere; the camera's own 12 MP negative fits the full budget.
    func testLimitFollowsTheMemoryADevelopMayUse() {
        let piZero = PixelLimit.pixels(forBudget: PixelLimit.budget(forMemory: 425 << 20))
        XCTAssertGreaterThan(piZero, 4056 * 3040, "a 12 MP HQ camera photo fits on a Pi Zero 2 W")
        let full = PixelLimit.pixels(forBudget: PixelLimit.developBudget)
        XCTAssertEqual(PixelLimit.budget(forMemory: 64 << 30), PixelLimit.developBudget, "a large machine: the budget, not half of it")
        XCTAssertLessThan(full, 196_000_000 / 6, "a 196 MP PNG is refused")
        XCTAssertGreaterThan(PixelLimit(maxPixels: full, origin: "").maxRawPhotosites, 4056 * 3040, "the HQ camera's negative fits")
        // The model against what was measured (release build, peak RSS in MiB): never below it,
        // at most 15 % above. A 12 MP photo, a 48 MP one, the HQ camera's 12.3 MP negative.
        func model(_ pixels: Int, raw: Bool = false) -> Double {
            Double(PixelLimit.fixedBytes + pixels * (raw ? PixelLimit.rawBytesPerPhotosite : PixelLimit.bytesPerPixel)) / Double(1 << 20)
        }
        for (predicted, measured) in [(model(12_000_000), 130.4), (model(48_000_000), 338.1), (model(12_330_240, raw: true), 240.3)] {
            XCTAssertGreaterThanOrEqual(predicted, measured)
            XCTAssertLessThanOrEqual(predicted, measured * 1.15)
        }
        XCTAssertEqual(PixelLimit.forThisMachine.maxPixels, PixelLimit.pixels(forBudget: PixelLimit.budget(forMemory: PixelLimit.machineMemory())))
    }
}

/// This process's peak resident set size so far, in bytes (getrusage's ru_maxrss is in KiB).
func peakResidentBytes() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Int(usage.ru_maxrss) * 1024
}
