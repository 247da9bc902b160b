import FilmCore
import Foundation
import XCTest
@testable import ImageFiles
import Raster

/// Raw negatives: the simulated sensor's mosaic written as DNG through libtiff, read by
/// software no one here wrote (exiftool, libraw's dcraw_emu) and by our own libraw develop.
final class DNGTests: XCTestCase {
    let recipe = DevelopRecipe(presetID: "portra400", presetName: "Kodak Portra 400", intensity: 0.75,
                               grainSeed: 0xDEAD_BEEF_1234, grainFrame: 42, dateStamp: "'26 12 02")

    /// A real photograph at a size that keeps the tests quick, its mosaic written as DNG.
    func negative(orientation: Int = 1) throws -> (original: RGBImage, path: String, dir: String) {
        let photo = try ImageReader.read(path: try samplePath("rocket.jpg"))
        let original = shrink(photo, width: 640)
        let dir = try temporaryDirectory(self)
        let path = dir + "/LPX_0001.DNG"
        var meta = PhotoMetadata()
        meta.make = "Loopix"
        meta.model = "Loopix camera (imx477)"
        meta.orientation = orientation
        meta.date = Date(timeIntervalSince1970: 1_796_000_000)
        meta.exposureTime = 1.0 / 125
        meta.iso = 400
        meta.focalLength = 6
        meta.focalLength35mm = 33
        meta.lensModel = "6 mm CS"
        try RawNegative.write(BayerMosaic.simulatedSensor(of: original), to: path, metadata: meta, recipe: recipe,
                              uniqueCameraModel: "Loopix imx477")
        return (original, path, dir)
    }

    func shrink(_ image: RGBImage, width: Int) -> RGBImage {
        let height = image.height * width / image.width & ~1  // a CFA block is 2×2
        var out = RGBImage(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width { out[x, y] = image[x * image.width / width, y * image.height / height] }
        }
        return out
    }

    func meanColor(_ image: RGBImage) -> SIMD3<Double> {
        var sum = SIMD3<Double>(repeating: 0)
        for i in stride(from: 0, to: image.pixels.count, by: 3) {
            sum += SIMD3(Double(image.pixels[i]), Double(image.pixels[i + 1]), Double(image.pixels[i + 2]))
        }
        return sum / Double(image.width * image.height)
    }

    func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        guard let path = ["/usr/bin/", "/bin/"].map({ $0 + tool }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("\(tool) is not installed (scripts/setup installs it)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func testTheSimulatedSensorsMosaicHasEachFiltersLevel() {
        var image = RGBImage(width: 4, height: 2)
        image[0, 0] = SIMD3(255, 0, 0)      // red under the red filter: clipped to white · neutral
        image[1, 0] = SIMD3(0, 128, 0)      // green under green
        image[1, 1] = SIMD3(0, 0, 255)      // blue under blue
        image[0, 1] = SIMD3(255, 0, 255)    // green filter sees no green: black
        let mosaic = BayerMosaic.simulatedSensor(of: image)
        XCTAssertEqual(mosaic.pattern, .rggb)
        XCTAssertEqual(mosaic.samples[0], UInt16(256 + (0.52 * 3839).rounded()))
        XCTAssertEqual(mosaic.samples[1], UInt16(256 + (ColorMath.srgbToLinear(128.0 / 255) * 3839).rounded()))
        XCTAssertEqual(mosaic.samples[4 + 1], UInt16(256 + (0.71 * 3839).rounded()))
        XCTAssertEqual(mosaic.samples[4], 256)
        // The colour matrix takes D65's white to the as-shot neutral.
        let white = SIMD3(0.95047, 1.0, 1.08883)
        for row in 0..<3 {
            let v = (0..<3).reduce(0.0) { $0 + mosaic.colorMatrix[row * 3 + $1] * white[$1] }
            XCTAssertEqual(v, mosaic.asShotNeutral[row], accuracy: 0.002)
        }
    }

    func testCSI2PackedLevelsUnpack() throws {
        // 10-bit: four pixels 0x3FF, 0x000, 0x155, 0x2AA → high bytes FF 00 55 AA, low bits 11 00 01 10.
        let ten: [UInt8] = [0xFF, 0x00, 0x55, 0xAA, 0b10_01_00_11, 0xEE]  // one byte of row padding
        let unpacked10 = try XCTUnwrap(ten.withUnsafeBytes { BayerMosaic.unpackCSI2($0, width: 4, height: 1, stride: 6, bits: 10) })
        XCTAssertEqual(unpacked10, [0x3FF, 0x000, 0x155, 0x2AA])
        // 12-bit: 0xABC, 0x123 → AB 12, then low nibbles C (first, low) and 3.
        let twelve: [UInt8] = [0xAB, 0x12, 0x3C, 0x00, 0x10, 0x0F]
        let unpacked12 = try XCTUnwrap(twelve.withUnsafeBytes { BayerMosaic.unpackCSI2($0, width: 2, height: 2, stride: 3, bits: 12) })
        XCTAssertEqual(unpacked12, [0xABC, 0x123, 0x00F, 0x100])
        XCTAssertNil(ten.withUnsafeBytes { BayerMosaic.unpackCSI2($0, width: 4, height: 2, stride: 6, bits: 10) }, "too short")
        XCTAssertNil(ten.withUnsafeBytes { BayerMosaic.unpackCSI2($0, width: 4, height: 1, stride: 6, bits: 8) }, "not 10 or 12 bits")
    }

    func testExiftoolReadsTheTagsARawConverterNeeds() throws {
        let (_, path, _) = try negative(orientation: 6)
        let result = try run("exiftool", ["-j", "-n", "-a", "-G1", path])
        XCTAssertEqual(result.status, 0, result.output)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]]).first ?? [:]
        func tag(_ name: String) -> String { json[name].map { "\($0)" } ?? "absent" }
        XCTAssertEqual(tag("IFD0:DNGVersion"), "1 4 0 0")
        XCTAssertEqual(tag("IFD0:PhotometricInterpretation"), "32803")
        XCTAssertEqual(tag("IFD0:CFAPattern2"), "0 1 1 2")
        XCTAssertEqual(tag("IFD0:BlackLevel"), "256")
        XCTAssertEqual(tag("IFD0:WhiteLevel"), "4095")
        XCTAssertEqual(tag("IFD0:Orientation"), "6")
        XCTAssertEqual(tag("IFD0:CalibrationIlluminant1"), "21")
        XCTAssertEqual(tag("IFD0:UniqueCameraModel"), "Loopix imx477")
        XCTAssertEqual(tag("IFD0:ImageDescription"), "Kodak Portra 400")
        let neutral = tag("IFD0:AsShotNeutral").split(separator: " ").compactMap { Double($0) }
        XCTAssertEqual(neutral.count, 3, tag("IFD0:AsShotNeutral"))
        for (got, want) in zip(neutral, [0.52, 1.0, 0.71]) { XCTAssertEqual(got, want, accuracy: 0.001) }
        XCTAssertEqual(tag("IFD0:ColorMatrix1").split(separator: " ").count, 9)
        XCTAssertEqual(tag("XMP-loopix:Look"), "portra400", "the recipe is in the XMP: \(json.keys.filter { $0.hasPrefix("XMP") })")
        XCTAssertEqual(tag("XMP-loopix:GrainSeed"), String(0xDEAD_BEEF_1234))
        // How it was exposed, in its EXIF IFD.
        XCTAssertEqual(Double(tag("ExifIFD:ExposureTime")) ?? 0, 1.0 / 125, accuracy: 1e-6, "libtiff writes rationals from floats")
        XCTAssertEqual(tag("ExifIFD:ISO"), "400")
        XCTAssertEqual(tag("ExifIFD:FocalLength"), "6")
        XCTAssertEqual(tag("ExifIFD:FocalLengthIn35mmFormat"), "33")
        XCTAssertEqual(tag("ExifIFD:LensModel"), "6 mm CS")
        XCTAssertTrue(tag("ExifIFD:DateTimeOriginal").hasPrefix("20"), tag("ExifIFD:DateTimeOriginal"))
    }

    func testDcrawEmuDevelopsItToTheOriginalsColour() throws {
        let (original, path, dir) = try negative()
        // As our own develop: camera white balance, sRGB output with sRGB's curve, no brightening.
        let result = try run("dcraw_emu", ["-w", "-o", "1", "-g", "2.4", "12.92", "-W", "-q", "3", path])
        XCTAssertEqual(result.status, 0, result.output)
        let ppm = try fileBytes(dir + "/LPX_0001.DNG.ppm")
        let developed = try XCTUnwrap(parsePPM(ppm), "dcraw_emu's PPM")
        XCTAssertEqual(developed.width, original.width)
        XCTAssertEqual(developed.height, original.height)
        let mean = meanColor(developed) - meanColor(original)
        let error = meanAbsoluteError(developed, original)
        print("dng: dcraw_emu against the original: mean colour off by \(mean), mean absolute error \(error) levels")
        for c in 0..<3 { XCTAssertLessThan(abs(mean[c]), 1.5, "channel \(c)'s mean level") }
        XCTAssertLessThan(error, 4, "per pixel (demosaicing loses detail at edges)")
    }

    func testOurLibrawDevelopMatchesTheOriginalAndIsUpright() throws {
        let (original, path, _) = try negative()
        let read = try RawNegative.develop(path: path)
        let developed = read.image
        XCTAssertEqual(read.make, "Loopix")
        XCTAssertEqual(read.model, "Loopix camera (imx477)")
        XCTAssertEqual(read.captureDate, Date(timeIntervalSince1970: 1_796_000_000), "DateTime, local time both ways")
        XCTAssertEqual(read.exposureTime ?? 0, 1.0 / 125, accuracy: 1e-6)
        XCTAssertEqual(read.iso, 400)
        let mean = meanColor(developed) - meanColor(original)
        let error = meanAbsoluteError(developed, original)
        print("dng: libraw develop against the original: mean colour off by \(mean), mean absolute error \(error) levels")
        for c in 0..<3 { XCTAssertLessThan(abs(mean[c]), 1.5, "channel \(c)'s mean level") }
        XCTAssertLessThan(error, 4)
        // Orientation 6 (rotate 90° clockwise to view): libraw gives the picture upright.
        let (_, turned, _) = try negative(orientation: 6)
        let upright = try RawNegative.develop(path: turned).image
        XCTAssertEqual(upright.width, original.height)
        XCTAssertEqual(upright.height, original.width)
        XCTAssertThrowsError(try RawNegative.develop(path: path, limit: PixelLimit(maxPixels: 1000, origin: "(test)"))) { error in
            XCTAssertTrue("\(error)".contains(path) && "\(error)".contains("exceed"), "\(error)")
        }
    }

    func testTheRecipeComesBackFromTheXMP() throws {
        let (_, path, _) = try negative()
        XCTAssertEqual(try RawNegative.recipe(path: path), recipe)
        XCTAssertNil(try RawNegative.recipe(xmp: "<x:xmpmeta/>", path: path), "no Loopix namespace: no recipe")
        let broken = RawNegative.xmp(recipe).replacingOccurrences(of: "loopix:intensity=\"0.75\"", with: "loopix:intensity=\"lots\"")
        assertImageFileError(path) { _ = try RawNegative.recipe(xmp: broken, path: path) }
        // A name with XML's special characters survives.
        var odd = recipe
        odd.presetName = "My \"Tri-X\" & <push>"
        XCTAssertEqual(try RawNegative.recipe(xmp: RawNegative.xmp(odd), path: path), odd)
    }

    func testNotARawFileIsOneClearError() throws {
        let dir = try temporaryDirectory(self)
        let path = dir + "/fake.DNG"
        try writeFile(path, Array("not a raw file at all".utf8))
        assertImageFileError(path) { _ = try RawNegative.develop(path: path) }
        assertImageFileError(path) { _ = try RawNegative.recipe(path: path) }
    }

    /// A binary PPM (P6, maxval 255).
    func parsePPM(_ bytes: [UInt8]) -> RGBImage? {
        var fields: [String] = [], i = 0
        while fields.count < 4, i < bytes.count {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
            var word = ""
            while i < bytes.count, !(bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09) { word.append(Character(UnicodeScalar(bytes[i]))); i += 1 }
            fields.append(word)
        }
        i += 1
        guard fields.count == 4, fields[0] == "P6", let w = Int(fields[1]), let h = Int(fields[2]), fields[3] == "255",
              bytes.count - i >= w * h * 3 else { return nil }
        var image = RGBImage(width: w, height: h)
        image.pixels = Array(bytes[i..<(i + w * h * 3)])
        return image
    }
}
