import Foundation
import XCTest
import Canvas
import FilmCore
import ImageFiles
@testable import LoopixTool

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
