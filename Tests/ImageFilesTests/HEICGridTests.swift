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

    /// Each x265 preset codes with its own CTU and intra transform depth (x265's presets
    /// table), not the fixed CTU 64 and depth 2 libheif's plugin puts in their place: read
    /// back from the sequence parameter set the file carries.
    func testTilesAreCodedWithThePresetsOwnCTUAndIntraTransformDepth() throws {
        let image = smoothImage(width: 128, height: 128)
        // (preset, CTU, max_transform_hierarchy_depth_intra = x265's tu-intra-depth − 1)
        for (preset, ctu, depth) in [("ultrafast", 32, 0), ("veryfast", 32, 0), ("medium", 64, 0), ("slower", 64, 1)] {
            let file = try ImageWriter.encode(image, format: .heic, metadata: nil,
                                              heic: HEICOptions(x265Preset: preset), jpegQuality: 90)
            let hvcC = try XCTUnwrap(BoxReader.find("hvcC", in: try ipco(file)), preset)
            let sps = try XCTUnwrap(HEVCSequenceParameters(hvcC: Array(hvcC)), "\(preset): no SPS readable in hvcC")
            XCTAssertEqual(sps.width, 128, preset)
            XCTAssertEqual(sps.ctuSize, ctu, preset)
            XCTAssertEqual(sps.maxIntraTransformDepth, depth, preset)
        }
        XCTAssertNil(HEICOptions.x265PresetDepths("quick"))
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

/// The fields of an HEVC sequence parameter set (ITU-T H.265 7.3.2.2) up to the intra
/// transform depth, read from an hvcC box's payload; nil if it is not one this reader knows
/// (sub-layers, a truncated NAL).
struct HEVCSequenceParameters {
    var width = 0, height = 0, ctuSize = 0, maxIntraTransformDepth = 0

    init?(hvcC: [UInt8]) {
        // hvcC: 22 bytes of configuration, the number of arrays, then per array its NAL type,
        // count and length-prefixed NAL units.
        guard hvcC.count > 23 else { return nil }
        var i = 23, found: [UInt8]?
        for _ in 0..<Int(hvcC[22]) where found == nil {
            guard i + 3 <= hvcC.count else { return nil }
            let type = hvcC[i] & 0x3F, count = Int(hvcC[i + 1]) << 8 | Int(hvcC[i + 2])
            i += 3
            for _ in 0..<count {
                guard i + 2 <= hvcC.count else { return nil }
                let length = Int(hvcC[i]) << 8 | Int(hvcC[i + 1])
                guard i + 2 + length <= hvcC.count else { return nil }
                if type == 33, found == nil { found = Array(hvcC[(i + 2)..<(i + 2 + length)]) }
                i += 2 + length
            }
        }
        guard let nal = found, nal.count > 2 else { return nil }
        // The RBSP: the 2-byte NAL header off, emulation prevention bytes (00 00 03) out.
        var rbsp: [UInt8] = [], zeros = 0
        for b in nal.dropFirst(2) {
            if zeros >= 2 && b == 3 { zeros = 0; continue }
            rbsp.append(b)
            zeros = b == 0 ? zeros + 1 : 0
        }
        var bits = BitReader(bytes: rbsp)
        _ = bits.read(4) // sps_video_parameter_set_id
        guard bits.read(3) == 0 else { return nil } // sps_max_sub_layers_minus1: none
        _ = bits.read(1)
        _ = bits.read(96) // profile_tier_level without sub-layers
        _ = bits.ue() // sps_seq_parameter_set_id
        if bits.ue() == 3 { _ = bits.read(1) } // chroma_format_idc, separate_colour_plane_flag
        width = bits.ue()
        height = bits.ue()
        if bits.read(1) == 1 { for _ in 0..<4 { _ = bits.ue() } } // conformance window
        _ = bits.ue(); _ = bits.ue(); _ = bits.ue() // bit depths, log2_max_pic_order_cnt_lsb_minus4
        _ = bits.read(1) // sps_sub_layer_ordering_info_present_flag (one sub-layer either way)
        _ = bits.ue(); _ = bits.ue(); _ = bits.ue()
        let minCoding = bits.ue() + 3, codingRange = bits.ue()
        ctuSize = 1 << (minCoding + codingRange)
        _ = bits.ue(); _ = bits.ue() // transform block sizes
        _ = bits.ue() // max_transform_hierarchy_depth_inter
        maxIntraTransformDepth = bits.ue()
        guard !bits.overrun else { return nil }
    }

    struct BitReader {
        let bytes: [UInt8]
        var position = 0
        var overrun = false

        mutating func read(_ n: Int) -> Int {
            var v = 0
            for _ in 0..<n {
                guard position / 8 < bytes.count else { overrun = true; return v }
                v = v << 1 | Int(bytes[position / 8] >> (7 - position % 8) & 1)
                position += 1
            }
            return v
        }

        /// Exp-Golomb ue(v).
        mutating func ue() -> Int {
            var zeros = 0
            while read(1) == 0 && !overrun { zeros += 1 }
            return (1 << zeros) - 1 + read(zeros)
        }
    }
}
