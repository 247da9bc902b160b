import FilmCore
import Foundation
import XCTest
@testable import ImageFiles
import Raster

/// Every shape of HEIC file the writer makes is checked by software no one here wrote: GPAC's
/// Compliance Warden (`../shared/tools/miaf/cw`, the MIAF reference checker, which also runs
/// the HEIF and ISOBMFF rules) must find no error and no warning, and libheif's `heif-convert`
/// must decode it to the picture that was written.
final class ConformanceTests: XCTestCase {
    /// Even sizes up to 512 are one coded picture, the primary item itself.
    func testSingleImageWithExif() throws {
        try check(smoothImage(width: 300, height: 200), metadata: sampleMetadata, expect: .single)
    }

    /// Odd or tiny images are a 1×1 grid whose one tile (a multiple of 64) is cropped.
    func testOneTileGridsForOddAndTinySizes() throws {
        try check(smoothImage(width: 33, height: 17), metadata: sampleMetadata, expect: .grid(tiles: 1))
        try check(smoothImage(width: 427, height: 301), metadata: nil, expect: .grid(tiles: 1))
    }

    /// Larger images are grids of 512×512 tiles; the last column and row are cropped.
    func testGridOfSeveralTilesWithAndWithoutExif() throws {
        try check(smoothImage(width: 1030, height: 523), metadata: sampleMetadata, expect: .grid(tiles: 6))
        // A contact sheet: no metadata at all.
        try check(smoothImage(width: 700, height: 530), metadata: nil, expect: .grid(tiles: 4))
    }

    /// The colour described by nclx alone (no ICC profile), single picture and grid.
    func testWithoutICCProfile() throws {
        try check(smoothImage(width: 300, height: 200), metadata: sampleMetadata, embedICC: false, expect: .single)
        try check(smoothImage(width: 600, height: 530), metadata: nil, embedICC: false, expect: .grid(tiles: 4))
    }

    /// Orientation becomes essential irot/imir on the primary item, single picture and grid.
    func testTransformations() throws {
        for orientation in [6, 7] {
            var metadata = sampleMetadata
            metadata.orientation = orientation
            try check(smoothImage(width: 128, height: 64), metadata: metadata, expect: .single)
            try check(smoothImage(width: 600, height: 300), metadata: metadata, expect: .grid(tiles: 2))
        }
    }

    enum Shape: Equatable {
        case single
        case grid(tiles: Int)
    }

    /// Writes `image`, checks the file's shape, runs cw on it and decodes it with heif-convert.
    func check(_ image: RGBImage, metadata: PhotoMetadata?, embedICC: Bool = true, expect shape: Shape,
               file: StaticString = #filePath, line: UInt = #line) throws {
        let cw = try sharedTool("tools/miaf/cw", what: "GPAC's MIAF/HEIF conformance check (Compliance Warden)")
        let heifConvert = try installedTool("heif-convert", package: "libheif-examples")
        let dir = try temporaryDirectory(self)
        let name = "\(image.width)x\(image.height)-\(metadata == nil ? "bare" : "exif")-\(embedICC ? "icc" : "nclx")"
        let path = dir + "/\(name).heic"
        let bytes = try HEICCodec.encode(image, metadata: metadata, options: HEICOptions(quality: 0.95),
                                         embedICC: embedICC, path: path)
        try writeFile(path, bytes)
        XCTAssertEqual(try itemTypes(bytes), expectedItems(shape, exif: metadata != nil), name, file: file, line: line)

        let problems = try conformanceProblems(cw: cw, path: path)
        XCTAssertEqual(problems, [], "\(name): cw found problems", file: file, line: line)

        let png = dir + "/\(name).png"
        let converted = try runProgram(heifConvert, [path, png])
        XCTAssertEqual(converted.status, 0, "heif-convert \(name): \(converted.stdout) \(converted.stderr)", file: file, line: line)
        let swap = (metadata?.orientation ?? 1) >= 5
        // heif-convert writes the stored Display P3 values, tagged with the ICC profile when the
        // file has one (it ignores nclx); libheif in-process decodes through either.
        var decodings = [("libheif", try ImageReader.read(path: path))]
        if embedICC { decodings.append(("heif-convert", try ImageReader.read(path: png))) }
        for (decoder, decoded) in decodings {
            XCTAssertEqual(decoded.width, swap ? image.height : image.width, "\(name) by \(decoder)", file: file, line: line)
            XCTAssertEqual(decoded.height, swap ? image.width : image.height, "\(name) by \(decoder)", file: file, line: line)
            if !swap, decoded.width == image.width, decoded.height == image.height {
                // (4:2:0 costs most on the tiny image's steep gradients; a misplaced tile costs tens.)
                let error = meanAbsoluteError(image, decoded)
                XCTAssertLessThan(error, 5, "\(name) by \(decoder): mean absolute error \(error)", file: file, line: line)
            }
        }
    }

    func expectedItems(_ shape: Shape, exif: Bool) -> [String] {
        let images: [String]
        switch shape {
        case .single: images = ["hvc1"]
        case .grid(let tiles): images = ["grid"] + Array(repeating: "hvc1", count: tiles)
        }
        return images + (exif ? ["Exif"] : [])
    }

    /// The item types in iinf, in order.
    func itemTypes(_ file: [UInt8]) throws -> [String] {
        let meta = try XCTUnwrap(BoxReader.find("meta", in: file[...]))
        let iinf = try XCTUnwrap(BoxReader.find("iinf", in: meta.dropFirst(4)))
        var types: [String] = []
        var rest = iinf.dropFirst(6) // FullBox header, 16-bit entry count
        while let infe = BoxReader.findWhole("infe", in: rest) {
            let body = infe.dropFirst(8)
            // version 2: version/flags (4), item_ID (2), protection index (2), item_type (4)
            types.append(String(decoding: body.dropFirst(8).prefix(4), as: UTF8.self))
            rest = rest[infe.endIndex...]
        }
        return types
    }
}

/// cw's errors and warnings for `path` as "spec rule N: description" lines, from its JSON
/// report. A report that does not cover miaf, heif and isobmff is itself a problem. The one
/// warning accepted is heif rule 21 about an upper-case `.HEIC` extension (DCF file names).
func conformanceProblems(cw: String, path: String) throws -> [String] {
    let result = try runProgram(cw, ["-s", "miaf", "-f", "json", path])
    guard let json = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
          let validations = json["validation"] as? [[String: Any]] else {
        return ["cw gave no JSON report (status \(result.status)): \(result.stdout.prefix(300)) \(result.stderr.prefix(300))"]
    }
    var problems: [String] = []
    var checked: Set<String> = []
    for validation in validations {
        let spec = validation["specification"] as? String ?? "?"
        checked.insert(spec)
        for (kind, key) in [("error", "errors"), ("warning", "warnings")] {
            guard let entries = validation[key] as? [[String: Any]] else {
                problems.append("\(spec): no \(key) list in the report")
                continue
            }
            for entry in entries {
                let rule = entry["rule"] as? String ?? "?"
                let description = entry["description"] as? String ?? "?"
                if kind == "warning", spec == "heif", rule == "21", description.contains(".HEIC") { continue }
                problems.append("\(spec) \(kind) rule \(rule): \(description)")
            }
        }
    }
    for spec in ["miaf", "heif", "isobmff"] where !checked.contains(spec) {
        problems.append("cw did not check \(spec)")
    }
    return problems
}
