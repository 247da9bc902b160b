import Foundation
import XCTest
import FilmCore
import ImageFiles
@testable import LoopixTool
import Raster

/// Decompression bombs given to the real `loopix develop` process: refused by their declared
/// size in one line, at once, without the process's memory growing (peak RSS from wait4).
final class DevelopLimitTests: XCTestCase {
    func testBombsAreRefusedQuicklyWithoutMemory() throws {
        let loopix = try builtLoopix()
        let dir = try Fixtures.temporaryDirectory()
        let png = dir + "/bomb.png", jpeg = dir + "/bomb.jpg"
        try Data(try pngBomb()).write(to: URL(fileURLWithPath: png))
        try Data(try jpegBomb()).write(to: URL(fileURLWithPath: jpeg))
        XCTAssertLessThan(try Data(contentsOf: URL(fileURLWithPath: png)).count, 1024, "a 1 KB PNG")
        // The same process with nothing to decode: start-up and the preset library.
        let baseline = try develop(loopix, [dir + "/missing.png", "-o", dir + "/missing.heic"], in: dir)

        let limit = "\(PixelLimit.forThisMachine) \(PixelLimit.forThisMachine.origin); see --max-megapixels"
        for (path, claim) in [(png, "65535×65535 pixels (4295 MP)"), (jpeg, "65500×65500 pixels (4290 MP)")] {
            let run = try develop(loopix, [path, "-o", dir + "/out.heic"], in: dir)
            XCTAssertEqual(run.result.status, 1)
            XCTAssertEqual(run.stderr, "loopix: \(path): \(claim) exceeds the limit of \(limit)\n")
            assertCheap(run.result, than: baseline.result, path)
        }
        // With the limit lifted, the headers' promise meets data that ends at once: PNG's
        // image data is too short for any deflate stream, JPEG's rows end in the first MCU row.
        for (path, problem) in [(png, "bytes of image data cannot hold 65535×65535 pixels"),
                                (jpeg, "Corrupt JPEG data: premature end of data segment")] {
            let run = try develop(loopix, [path, "-o", dir + "/out.heic", "--max-megapixels", "5000"], in: dir)
            XCTAssertEqual(run.result.status, 1)
            XCTAssertTrue(run.stderr.hasPrefix("loopix: \(path): cannot read "), run.stderr)
            XCTAssertTrue(run.stderr.contains(problem), run.stderr)
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
            assertCheap(run.result, than: baseline.result, path + " with --max-megapixels 5000")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/out.heic"))
    }

    /// A photo within the old 200 MP cap but beyond what a develop may hold in its memory
    /// (196 MP: about 1.2 GB to develop) is refused by its declared size, cheaply.
    func testAPhotoBeyondTheMemoryADevelopMayUseIsRefused() throws {
        let loopix = try builtLoopix()
        let dir = try Fixtures.temporaryDirectory()
        let png = dir + "/big.png"
        try Data(try pngBomb(width: 14000, height: 14000)).write(to: URL(fileURLWithPath: png))
        let baseline = try develop(loopix, [dir + "/missing.png", "-o", dir + "/missing.heic"], in: dir)
        let run = try develop(loopix, [png, "-o", dir + "/out.heic"], in: dir)
        XCTAssertEqual(run.result.status, 1)
        XCTAssertEqual(run.stderr, "loopix: \(png): 14000×14000 pixels (196 MP) exceeds the limit of \(PixelLimit.forThisMachine) "
                       + "\(PixelLimit.forThisMachine.origin); see --max-megapixels\n")
        XCTAssertTrue(PixelLimit.forThisMachine.origin.hasPrefix("for the "), PixelLimit.forThisMachine.origin)
        assertCheap(run.result, than: baseline.result, png)
    }

    func testABatchGoesOnPastBombsToTheOrdinaryPhoto() throws {
        let loopix = try builtLoopix()
        let dir = try Fixtures.temporaryDirectory()
        try Data(try pngBomb()).write(to: URL(fileURLWithPath: dir + "/a.png"))
        try Fixtures.writePhoto(dir + "/b.png")
        try Data(try jpegBomb()).write(to: URL(fileURLWithPath: dir + "/c.jpg"))
        let run = try develop(loopix, [dir + "/a.png", dir + "/b.png", dir + "/c.jpg", "--out-dir", dir + "/out", "-p", "mono"], in: dir)
        XCTAssertEqual(run.result.status, 1)
        let lines = run.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, run.stderr)
        XCTAssertTrue(lines[0].hasPrefix("loopix: \(dir)/a.png: 65535×65535 pixels"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix("loopix: \(dir)/c.jpg: 65500×65500 pixels"), lines[1])
        XCTAssertEqual(lines.last, "developed 1 of 3 with \(BuiltinPresets.mono.name) (2 failed)")
        let developed = try ImageReader.read(path: dir + "/out/b.heic")
        XCTAssertEqual(developed.width, 96)
        XCTAssertEqual(developed.height, 64)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir + "/out"), ["b.heic"])
    }

    func testMaxMegapixelsSetsTheLimit() throws {
        let dir = try Fixtures.temporaryDirectory()
        try Fixtures.writePhoto(dir + "/in.png") // 96×64
        var log: [String] = []
        let words = [dir + "/in.png", "-o", dir + "/out.png", "--presets-dir", dir, "--max-megapixels", "0.006"]
        XCTAssertEqual(try DevelopCommand.run(DevelopCommand.parse(words), log: { log.append($0) }), 1)
        XCTAssertEqual(log, ["loopix: \(dir)/in.png: 96×64 pixels (0.00614 MP) exceeds the limit of 0.006 MP set by --max-megapixels"])
        log = []
        XCTAssertEqual(try DevelopCommand.run(DevelopCommand.parse(words.dropLast() + ["0.0062"]), log: { log.append($0) }), 0, "\(log)")
        XCTAssertThrowsError(try DevelopCommand.parse(["a.jpg", "--max-megapixels", "0"])) { error in
            XCTAssertEqual(error as? ToolError, ToolError.usage("--max-megapixels must be a number from 0.001 to 100000, not \"0\""))
        }
        XCTAssertTrue(DevelopCommand.help.contains("--max-megapixels N"))
    }

    // MARK: - Helpers

    func builtLoopix() throws -> String {
        guard FileManager.default.isExecutableFile(atPath: Fixtures.loopix) else {
            throw XCTSkip("\(Fixtures.loopix) not built (run swift build first)")
        }
        return Fixtures.loopix
    }

    func develop(_ loopix: String, _ words: [String], in dir: String) throws -> (result: Subprocess.Result, stderr: String) {
        let stderrPath = dir + "/stderr-\(UUID().uuidString)"
        let result = try Subprocess.run(loopix, ["develop"] + words + ["--presets-dir", dir], stderrPath: stderrPath)
        return (result, try String(contentsOfFile: stderrPath, encoding: .utf8))
    }

    /// Refused within a second and within 100 MB of what a run with nothing to decode needs.
    func assertCheap(_ run: Subprocess.Result, than baseline: Subprocess.Result, _ what: String,
                     file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertLessThan(run.seconds, 1, "\(what) took \(run.seconds) s", file: file, line: line)
        let grown = run.peakRSS - baseline.peakRSS
        XCTAssertLessThan(grown, 100 << 20, "\(what): peak memory \(run.peakRSS >> 20) MB, \(grown >> 20) MB above a run with nothing to decode",
                          file: file, line: line)
    }

    /// A valid PNG signature and IHDR (with its CRC) claiming 65535×65535 RGB, then the image
    /// data of a real 4×4 PNG and IEND: under 100 bytes.
    func pngBomb(width: Int = 65535, height: Int = 65535) throws -> [UInt8] {
        let small = try ImageWriter.encode(RGBImage(width: 4, height: 4), format: .png, metadata: nil, heic: HEICOptions(), jpegQuality: 90)
        let idat = try XCTUnwrap(pngChunks(small).first { $0.type == "IDAT" }).data
        let ihdr = be32(width) + be32(height) + [8, 2, 0, 0, 0] // 8-bit RGB, deflate, no filter method, not interlaced
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + pngChunk("IHDR", ihdr) + pngChunk("IDAT", idat) + pngChunk("IEND", [])
    }

    /// A real JPEG (libjpeg's, 64×48) with its SOF0 frame size patched to 65500×65500.
    func jpegBomb() throws -> [UInt8] {
        var jpeg = try ImageWriter.encode(RGBImage(width: 64, height: 48), format: .jpeg, metadata: nil, heic: HEICOptions(), jpegQuality: 90)
        var i = 2 // after SOI: marker segments FF xx, length (including itself)
        while i + 4 <= jpeg.count, jpeg[i + 1] != 0xC0 {
            i += 2 + (Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3]))
        }
        XCTAssertLessThan(i + 9, jpeg.count, "no SOF0 in libjpeg's output")
        jpeg.replaceSubrange((i + 5)..<(i + 9), with: [0xFF, 0xDC, 0xFF, 0xDC]) // height, width: 65500
        return jpeg
    }

    func pngChunks(_ png: [UInt8]) -> [(type: String, data: [UInt8])] {
        var chunks: [(String, [UInt8])] = []
        var i = 8
        while i + 12 <= png.count {
            let length = png[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) }
            chunks.append((String(decoding: png[(i + 4)..<(i + 8)], as: UTF8.self), Array(png[(i + 8)..<(i + 8 + length)])))
            i += 12 + length
        }
        return chunks
    }

    func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return be32(data.count) + typed + be32(Int(crc32(typed)))
    }

    func be32(_ v: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) } }

    /// CRC-32 (ISO 3309, as PNG uses it), bit by bit.
    func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
