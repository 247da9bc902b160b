import Camera
import FilmCore
import Foundation
import ImageFiles
import XCTest
@testable import Appliance
import Raster

/// Raw negatives end to end: `capture.raw` on the simulated camera saves a DNG beside the
/// photo, which `loopix develop` develops again, as the camera did (`--same`) or with another look.
final class DaemonRawTests: XCTestCase {
    /// Mean over the pixels of their largest less their smallest channel.
    func chroma(_ image: RGBImage) -> Double {
        var sum = 0
        for i in stride(from: 0, to: image.pixels.count, by: 3) {
            let r = image.pixels[i], g = image.pixels[i + 1], b = image.pixels[i + 2]
            sum += Int(max(r, g, b)) - Int(min(r, g, b))
        }
        return Double(sum) / Double(image.pixelCount)
    }

    func loopix(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let (status, out, err) = try runTool(DaemonHarness.loopix, arguments)
        return (status, out + err)
    }

    func testTheNegativeBesideThePhotoDevelopsAgainAsTakenAndWithAnotherLook() throws {
        let d = try DaemonHarness(extraConfig: #""capture": { "raw": true }"#)
        try d.start()
        defer { d.stop() }
        _ = try d.request(#"{"cmd":"preset","name":"portra"}"#)
        _ = try d.request(#"{"cmd":"intensity","value":80}"#)
        let path = try XCTUnwrap(d.request(#"{"cmd":"capture"}"#)["path"] as? String)
        try d.waitForStatus { $0["saved"] as? Int == 1 }
        let negative = (path as NSString).deletingPathExtension + ".DNG"
        XCTAssertTrue(FileManager.default.fileExists(atPath: negative), "the DNG beside \(path)\n\(d.log())")
        let recipe = try XCTUnwrap(try RawNegative.recipe(path: negative), "the recipe in the DNG's XMP")
        XCTAssertEqual(recipe.presetID, "portra")
        XCTAssertEqual(recipe.intensity, 0.8)
        XCTAssertEqual(recipe.grainSeed, RenderSettings().grainSeed)

        // As taken: the same look, intensity, grain seed and frame, from the recipe.
        let same = d.directory + "/same.heic"
        let again = try loopix(["develop", "--same", negative, "-o", same])
        XCTAssertEqual(again.status, 0, again.output)
        let photo = try ImageReader.read(path: path), redeveloped = try ImageReader.read(path: same)
        XCTAssertEqual(redeveloped.width, photo.width)
        XCTAssertEqual(redeveloped.height, photo.height)
        let difference = means(redeveloped) - means(photo)
        var sum = 0
        for i in 0..<photo.pixels.count { sum += abs(Int(photo.pixels[i]) - Int(redeveloped.pixels[i])) }
        let error = Double(sum) / Double(photo.pixels.count)
        print("raw: develop --same against the camera's photo: mean colour off by \(difference), mean absolute error \(error) levels")
        for c in 0..<3 { XCTAssertLessThan(abs(difference[c]), 1.5, "channel \(c): the same look") }
        XCTAssertLessThan(error, 6, "pixel by pixel: the same grain (demosaicing and HEIC's loss differ)")
        // And it says how it was taken, as the camera's photo does (through the DNG's EXIF IFD).
        let taken = try ExifReader.tags(try XCTUnwrap(try ImageReader.readPhoto(path: path).exif))
        let redone = try ExifReader.tags(try XCTUnwrap(try ImageReader.readPhoto(path: same).exif))
        for tag in ["ISOSpeedRatings", "FocalLength", "Model"] { XCTAssertEqual(redone[tag], taken[tag], tag) }
        XCTAssertEqual(Double(redone["ExposureTime"] ?? "") ?? 0, Double(taken["ExposureTime"] ?? "") ?? -1, accuracy: 1e-5)

        // With another look: Tri-X is black and white.
        let bw = d.directory + "/trix.heic"
        let trix = try loopix(["develop", negative, "-p", "trix400", "-o", bw])
        XCTAssertEqual(trix.status, 0, trix.output)
        let grey = chroma(try ImageReader.read(path: bw)), colour = chroma(photo)
        print("raw: mean chroma of the Portra photo \(colour), of the Tri-X develop \(grey) levels")
        XCTAssertLessThan(grey, 2, "Tri-X: no colour")
        XCTAssertGreaterThan(colour, 8, "the photo has colour, so the looks differ")

        // --same takes everything from the negative; a look given with it is a usage error.
        let both = try loopix(["develop", "--same", negative, "-p", "trix400", "-o", d.directory + "/x.heic"])
        XCTAssertEqual(both.status, 2, both.output)
        XCTAssertTrue(both.output.contains("--same"), both.output)
        // A photo without a recipe (the HEIC itself) cannot be developed --same.
        let heic = try loopix(["develop", "--same", path, "-o", d.directory + "/y.heic"])
        XCTAssertEqual(heic.status, 1)
        XCTAssertTrue(heic.output.contains(path) && heic.output.contains("recipe"), heic.output)
    }

    /// A DNG that cannot be written (the camera gave no raw frame, or a file is in the way)
    /// is reported, and the photo is saved all the same.
    func testANegativeThatCannotBeSavedLosesNoPhoto() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("raw-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var image = RGBImage(width: 64, height: 48)
        for i in image.pixels.indices { image.pixels[i] = UInt8(i % 251) }
        let lens = Lens(id: "sim", sensorModel: "sim", focalLength: 4.7, focalLength35mm: 26, stillWidth: 64, stillHeight: 48)
        func job(_ name: String, raw: Bool) -> CaptureJob {
            var still = CapturedStill(image: image, metadata: FrameMetadata())
            if raw { still.raw = { BayerMosaic.simulatedSensor(of: $0) } }
            var job = CaptureJob(still: still, lens: lens, preset: BuiltinPresets.all[0], intensity: 1, grainSeed: 7, grainFrame: 3,
                                 orientation: 1, watermark: false, path: dir + "/\(name).HEIC", date: Date())
            job.saveRaw = true
            return job
        }
        let none = try CaptureQueue.develop(job("LPX_0001", raw: false), encoding: .init(), threads: 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/LPX_0001.HEIC"))
        XCTAssertTrue(none.rawProblem?.contains("no raw frame") == true, "\(none.rawProblem ?? "nil")")

        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: dir + "/LPX_0002.DNG"))
        let blocked = try CaptureQueue.develop(job("LPX_0002", raw: true), encoding: .init(), threads: 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/LPX_0002.HEIC"))
        XCTAssertTrue(blocked.rawProblem?.contains("LPX_0002.DNG") == true, "\(blocked.rawProblem ?? "nil")")
        XCTAssertEqual(try String(contentsOfFile: dir + "/LPX_0002.DNG", encoding: .utf8), "someone else's", "left untouched")

        let saved = try CaptureQueue.develop(job("LPX_0003", raw: true), encoding: .init(), threads: 1)
        XCTAssertNil(saved.rawProblem)
        XCTAssertEqual(try RawNegative.recipe(path: dir + "/LPX_0003.DNG")?.grainFrame, 3)
        XCTAssertGreaterThan(saved.bytes, Int64(64 * 48 * 2), "the DNG's bytes are counted")
    }
}
