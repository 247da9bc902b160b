import Foundation
import System
import XCTest
import Canvas
import FilmCore
import ImageFiles
@testable import LoopixTool
import Raster

final class DevelopTests: XCTestCase {
    func develop(_ words: [String]) throws -> (failed: Int, log: [String]) {
        var log: [String] = []
        // An empty presets directory: the built-in looks only, whatever the machine has.
        let presets = try Fixtures.temporaryDirectory()
        let failed = try DevelopCommand.run(DevelopCommand.parse(words + ["--presets-dir", presets]), log: { log.append($0) })
        return (failed, log)
    }

    /// Every built-in look renders a real photograph: the float reference stays finite and
    /// inside 0…1 on every pixel, and the fast path's output is a real picture, not a blank.
    func testEveryBuiltInPresetRendersARealPhoto() throws {
        for name in ["rocket.jpg", "astronaut.png"] {
            let photo = try ImageReader.read(path: try Fixtures.sample(name))
            var small = Canvas(width: 96, height: 96 * photo.height / photo.width)
            small.drawScaled(image: photo, into: small.bounds)
            let image = small.image
            for preset in BuiltinPresets.all {
                let reference = ReferencePipeline(preset: preset)
                for i in stride(from: 0, to: image.pixels.count, by: 3) {
                    let c = reference.color(SIMD3(Double(image.pixels[i]), Double(image.pixels[i + 1]), Double(image.pixels[i + 2])) / 255)
                    guard c.x.isFinite && c.y.isFinite && c.z.isFinite, all(c .>= 0), all(c .<= 1) else {
                        return XCTFail("\(preset.id) on \(name): \(c) at byte \(i)")
                    }
                }
                var out = photo
                FilmRenderer(look: FilmLook(preset: preset), width: photo.width, height: photo.height).render(&out, grainFrame: 0, threads: 2)
                let mean = Double(out.pixels.reduce(0) { $0 + Int($1) }) / Double(out.pixels.count)
                let inputMean = Double(photo.pixels.reduce(0) { $0 + Int($1) }) / Double(photo.pixels.count)
                XCTAssertEqual(mean, inputMean, accuracy: 40, "\(preset.id) on \(name) keeps the exposure roughly")
                XCTAssertGreaterThan(Set(out.pixels).count, 100, "\(preset.id) on \(name) is not flat")
            }
        }
    }

    func testDevelopsAPhotoToHEICInDisplayP3AndNeverOverwrites() throws {
        let dir = try Fixtures.temporaryDirectory()
        let input = dir + "/in.png", output = dir + "/out.heic"
        try Fixtures.writePhoto(input)
        XCTAssertEqual(try develop([input, "-p", "velvia50", "-i", "80", "-o", output]).failed, 0)
        let info = try HEICInfo.read(path: output)
        XCTAssertEqual(info.width, 96)
        XCTAssertEqual(info.height, 64)
        XCTAssertEqual(info.nclxPrimaries, 12, "P3-D65 primaries")
        XCTAssertEqual(info.nclxTransfer, 13, "sRGB transfer")
        XCTAssertEqual(ICCProfile.description(info.iccProfile ?? []), "Display P3")
        let tags = try ExifReader.tags(info.exif ?? [])
        XCTAssertTrue(tags.values.contains { $0.contains("Fujifilm Velvia 50") }, "the preset's name is in EXIF: \(tags)")

        let before = try Data(contentsOf: URL(fileURLWithPath: output))
        let again = try develop([input, "-p", "portra", "-o", output])
        XCTAssertEqual(again.failed, 1)
        XCTAssertEqual(again.log.first, "loopix: \(output): already exists (use --force to replace it)")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: output)), before, "untouched without --force")
        XCTAssertEqual(try develop([input, "-p", "portra", "-o", output, "--force"]).failed, 0)
        XCTAssertNotEqual(try Data(contentsOf: URL(fileURLWithPath: output)), before)
    }

    func testTheDevelopedLookMatchesTheEngine() throws {
        let dir = try Fixtures.temporaryDirectory()
        let input = dir + "/in.png", output = dir + "/out.png"
        try Fixtures.writePhoto(input)
        XCTAssertEqual(try develop([input, "-p", "trix400", "--grain-seed", "5", "-o", output]).failed, 0)
        var expected = try ImageReader.read(path: input)
        FilmRenderer(look: FilmLook(preset: BuiltinPresets.trix400, settings: RenderSettings(grainSeed: 5)), width: 96, height: 64)
            .render(&expected, grainFrame: 0)
        XCTAssertEqual(try ImageReader.read(path: output), expected, "PNG output is the engine's pixels exactly")
    }

    func testABatchGoesOnPastABadFileAndCountsIt() throws {
        let dir = try Fixtures.temporaryDirectory()
        try Fixtures.writePhoto(dir + "/a.png")
        try Fixtures.writePhoto(dir + "/c.png")
        try Data("this is not a JPEG".utf8).write(to: URL(fileURLWithPath: dir + "/b.jpg"))
        let result = try develop([dir + "/a.png", dir + "/b.jpg", dir + "/missing.png", dir + "/c.png",
                                  "--out-dir", dir + "/out", "--format", "jpeg"])
        XCTAssertEqual(result.failed, 2)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/out/a.jpg"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/out/c.jpg"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/out/b.jpg"))
        let errors = result.log.filter { $0.hasPrefix("loopix: ") }
        XCTAssertEqual(errors.count, 2)
        XCTAssertTrue(errors[0].contains("b.jpg"), errors[0])
        XCTAssertTrue(errors[1].contains("missing.png"), errors[1])
        XCTAssertFalse(errors.contains { $0.contains("\n") }, "one line each")
        XCTAssertEqual(result.log.last, "developed 2 of 4 with Kodak Portra 400 (2 failed)")
    }

    /// The developed HEIC keeps its source's capture time, camera, lens, exposure and GPS, as
    /// exiftool reads them, from a JPEG, a PNG (eXIf) and a developed HEIC. exiftool writes the
    /// sources' EXIF big-endian, so every number also crosses a byte-order change.
    func testDevelopKeepsTheSourceExif() throws {
        let dir = try Fixtures.temporaryDirectory()
        let tags = ["-Make=Fujifilm", "-Model=X-T5", "-LensModel=XF23mmF2 R WR", "-DateTimeOriginal=2021:05:06 07:08:09",
                    "-ExposureTime=1/250", "-FNumber=2.8", "-ISO=200", "-GPSLatitude=48.8584", "-GPSLatitudeRef=N",
                    "-GPSLongitude=2.2945", "-GPSLongitudeRef=E", "-Orientation#=1"]
        try Fixtures.writePhoto(dir + "/png.png")
        try ImageWriter.write(try ImageReader.read(path: dir + "/png.png"), to: dir + "/jpeg.jpg", format: .jpeg)
        for input in [dir + "/jpeg.jpg", dir + "/png.png"] {
            _ = try Fixtures.exiftool(["-q", "-overwrite_original"] + tags + [input])
            XCTAssertEqual(try Fixtures.exifTags(input)["ExifByteOrder"] as? String, "MM", "a big-endian source")
        }
        try Fixtures.writePhoto(dir + "/none.png") // no EXIF at all: today's date, no camera
        let inputs = [dir + "/jpeg.jpg", dir + "/png.png", dir + "/none.png"]
        XCTAssertEqual(try develop(inputs + ["--out-dir", dir + "/out", "-p", "portra"]).failed, 0)
        XCTAssertEqual(try develop([dir + "/out/jpeg.heic", "-o", dir + "/again.heic", "-p", "mono"]).failed, 0)

        for output in [dir + "/out/jpeg.heic", dir + "/out/png.heic", dir + "/again.heic"] {
            let read = try Fixtures.exifTags(output)
            XCTAssertEqual(read["DateTimeOriginal"] as? String, "2021:05:06 07:08:09", output)
            XCTAssertEqual(read["Make"] as? String, "Fujifilm", output)
            XCTAssertEqual(read["Model"] as? String, "X-T5", output)
            XCTAssertEqual(read["LensModel"] as? String, "XF23mmF2 R WR", output)
            XCTAssertEqual(read["ExposureTime"] as? Double, 0.004, output)
            XCTAssertEqual(read["FNumber"] as? Double, 2.8, output)
            XCTAssertEqual(read["ISO"] as? Int, 200, output)
            XCTAssertEqual(try XCTUnwrap(read["GPSLatitude"] as? Double, output), 48.8584, accuracy: 1e-4, output)
            XCTAssertEqual(try XCTUnwrap(read["GPSLongitude"] as? Double, output), 2.2945, accuracy: 1e-4, output)
            XCTAssertEqual(read["Orientation"] as? Int, 1, output)
            XCTAssertEqual(read["ImageWidth"] as? Int, 96, output)
        }
        XCTAssertEqual(try Fixtures.exifTags(dir + "/out/jpeg.heic")["ImageDescription"] as? String, BuiltinPresets.portra.name)
        XCTAssertEqual(try Fixtures.exifTags(dir + "/again.heic")["Software"] as? String, "Loopix \(loopixVersion) (\(BuiltinPresets.mono.name))")
        let bare = try Fixtures.exifTags(dir + "/out/none.heic")
        XCTAssertNil(bare["Make"])
        XCTAssertNil(bare["GPSLatitude"])
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy:MM:dd"
        let today = formatter.string(from: Date())
        XCTAssertTrue((bare["DateTimeOriginal"] as? String)?.hasPrefix(today) == true, "\(String(describing: bare["DateTimeOriginal"])) is today, \(today)")
    }

    /// A JPEG stored sideways with EXIF orientation 6 comes out upright: the corner marked in
    /// the stored top left is at the top right, and the file says orientation 1 (nothing for a
    /// viewer to turn again).
    func testAJPEGWithOrientationSixComesOutUpright() throws {
        let dir = try Fixtures.temporaryDirectory()
        var stored = RGBImage(width: 96, height: 64)
        for y in 0..<64 {
            for x in 0..<96 { stored[x, y] = x < 24 && y < 16 ? SIMD3(230, 30, 30) : SIMD3(128, 128, 128) }
        }
        try ImageWriter.write(stored, to: dir + "/sideways.jpg", format: .jpeg, jpegQuality: 95)
        _ = try Fixtures.exiftool(["-q", "-overwrite_original", "-Orientation#=6", dir + "/sideways.jpg"])
        XCTAssertEqual(try Fixtures.exifTags(dir + "/sideways.jpg")["Orientation"] as? Int, 6)

        XCTAssertEqual(try develop([dir + "/sideways.jpg", "-o", dir + "/upright.heic", "-p", "clean", "-i", "0"]).failed, 0)
        XCTAssertEqual(try Fixtures.exifTags(dir + "/upright.heic")["Orientation"] as? Int, 1)
        let upright = try ImageReader.read(path: dir + "/upright.heic")
        guard upright.width == 64, upright.height == 96 else {
            return XCTFail("developed \(upright.width)×\(upright.height), not upright 64×96")
        }
        func isRed(_ x: Int, _ y: Int) -> Bool { let p = upright[x, y]; return p.x > 180 && p.y < 90 && p.z < 90 }
        XCTAssertTrue(isRed(64 - 8, 8), "marked corner at the top right: \(upright[56, 8])")
        XCTAssertTrue(isRed(64 - 8, 20), "24 stored columns are 24 rows now")
        for (x, y) in [(8, 8), (8, 88), (56, 88), (40, 8), (56, 30)] {
            XCTAssertFalse(isRed(x, y), "(\(x), \(y)) is grey: \(upright[x, y])")
        }
    }

    func testDefaultOutputNameSitsBesideTheInput() throws {
        let dir = try Fixtures.temporaryDirectory()
        try Fixtures.writePhoto(dir + "/photo.png")
        XCTAssertEqual(try develop([dir + "/photo.png", "-p", "mono", "--format", "png"]).failed, 0)
        let out = try ImageReader.read(path: dir + "/photo-mono.png")
        for i in stride(from: 0, to: out.pixels.count, by: 3) {
            XCTAssertEqual(out.pixels[i], out.pixels[i + 2], "mono is grey")
        }
    }

    func testUnwritableOutputIsOneClearError() throws {
        let dir = try Fixtures.temporaryDirectory()
        try Fixtures.writePhoto(dir + "/in.png")
        try Data().write(to: URL(fileURLWithPath: dir + "/file"))
        let result = try develop([dir + "/in.png", "-o", dir + "/file/out.heic"])
        XCTAssertEqual(result.failed, 1)
        XCTAssertTrue(result.log[0].hasPrefix("loopix: \(dir)/file/out.heic"), result.log[0])
    }

    func testOptionErrorsAreUsageErrors() {
        let cases: [([String], String)] = [
            (["a.jpg", "-i", "150"], "--intensity must be a number from 0 to 100, not \"150\""),
            (["a.jpg", "--ev", "x"], "--ev must be a number from -3 to 3, not \"x\""),
            (["a.jpg", "b.jpg", "-o", "x.heic"], "develop: -o takes one input; use --out-dir for several"),
            (["a.jpg", "-o", "x.gif"], "x.gif: unknown output extension \".gif\" (use .heic, .jpg or .png, or --format)"),
            (["a.jpg", "--bogus"], "unknown option --bogus"),
            ([], "develop: no input photos given"),
        ]
        for (words, message) in cases {
            XCTAssertThrowsError(try DevelopCommand.parse(words)) { error in
                XCTAssertEqual(error as? ToolError, ToolError.usage(message))
            }
        }
        XCTAssertThrowsError(try DevelopCommand.run(DevelopCommand.parse(["a.jpg", "-p", "nope", "--presets-dir", Fixtures.temporaryDirectory()]))) { error in
            XCTAssertTrue((error as? ToolError)?.message.hasPrefix("unknown preset \"nope\" (available: clean, mono, portra") == true, "\(error)")
        }
    }

    func testTheExecutableExitsNonZeroWithOneLineOnFailure() throws {
        guard FileManager.default.isExecutableFile(atPath: Fixtures.loopix) else {
            throw XCTSkip("\(Fixtures.loopix) not built (run swift build first)")
        }
        let dir = try Fixtures.temporaryDirectory()
        let r = try Fixtures.run(["develop", dir + "/missing.jpg", "-o", dir + "/out.heic"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("missing.jpg"), r.stderr)
        let usage = try Fixtures.run(["develop"])
        XCTAssertEqual(usage.status, 2)
        let help = try Fixtures.run(["develop", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.hasPrefix("Usage: loopix develop"))
    }
}
