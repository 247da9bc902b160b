import FilmCore
import Foundation
import ImageFiles
import XCTest
@testable import Appliance
import Raster

/// Collage templates: a PNG frame with transparent holes and a JSON file of where the shots go.
final class BoothTemplateTests: XCTestCase {
    /// A 300×200 frame, opaque red, with two transparent 100×100 holes and a half-transparent
    /// band across the bottom; written through libpng with its alpha channel.
    private func writeTemplate(in directory: String, holes: String = #"[{"x":20,"y":20,"width":100,"height":100},{"x":160,"y":20,"width":100,"height":100}]"#) throws -> String {
        let w = 300, h = 200
        var frame = RGBImage(width: w, height: h)
        var alpha = [UInt8](repeating: 255, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                let i = y * w + x
                frame.pixels[3 * i] = 200
                let inHole = (20..<120).contains(y) && ((20..<120).contains(x) || (160..<260).contains(x))
                if inHole { alpha[i] = 0 }
                if y >= 180 { alpha[i] = 128 }
            }
        }
        try ImageWriter.writePNG(frame, alpha: alpha, to: directory + "/frame.png", replace: true)
        let json = directory + "/frame.json"
        try #"{ "image": "frame.png", "holes": \#(holes) }"#.write(toFile: json, atomically: true, encoding: .utf8)
        return json
    }

    private func solid(_ width: Int, _ height: Int, _ rgb: (UInt8, UInt8, UInt8)) -> RGBImage {
        var image = RGBImage(width: width, height: height)
        for i in 0..<(width * height) { (image.pixels[3 * i], image.pixels[3 * i + 1], image.pixels[3 * i + 2]) = rgb }
        return image
    }

    private func pixel(_ image: RGBImage, _ x: Int, _ y: Int) -> [UInt8] {
        let i = (y * image.width + x) * 3
        return Array(image.pixels[i..<(i + 3)])
    }

    func testShotsFillTheHolesUnderTheFrame() throws {
        let dir = try makeTempDirectory(self)
        let template = try BoothTemplate.load(path: try writeTemplate(in: dir), shots: 2)
        XCTAssertEqual(template.holes.count, 2)
        XCTAssertEqual(template.frame.width, 300)
        // A 4:3 shot, green on the left half and blue on the right: cropped to the square hole
        // from the middle, so both colours show and nothing is squeezed.
        var first = solid(400, 300, (0, 255, 0))
        for y in 0..<300 { for x in 200..<400 { (first.pixels[(y * 400 + x) * 3 + 1], first.pixels[(y * 400 + x) * 3 + 2]) = (0, 255) } }
        let second = solid(640, 480, (255, 255, 0))
        let collage = BoothCollage.compose([first, second], template: template)
        XCTAssertEqual([collage.width, collage.height], [300, 200], "the template's size")
        XCTAssertEqual(pixel(collage, 5, 5), [200, 0, 0], "the opaque frame covers")
        XCTAssertEqual(pixel(collage, 30, 70), [0, 255, 0], "the first shot's left half in the first hole")
        XCTAssertEqual(pixel(collage, 110, 70), [0, 0, 255], "its right half")
        XCTAssertEqual(pixel(collage, 210, 70), [255, 255, 0], "the second shot in the second hole")
        XCTAssertEqual(pixel(collage, 140, 70), [200, 0, 0], "between the holes: the frame")
        XCTAssertEqual(pixel(collage, 150, 190), [227, 127, 127], "half-transparent frame over the paper white")
        let png = dir + "/collage.png"
        try ImageWriter.write(collage, to: png, format: .png)
        XCTAssertEqual(try ImageReader.read(path: png), collage)
    }

    func testABadTemplateIsOneLineNamingTheFileAndTheProblem() throws {
        let dir = try makeTempDirectory(self)
        let json = try writeTemplate(in: dir)
        XCTAssertThrowsError(try BoothTemplate.load(path: json, shots: 3)) { e in
            XCTAssertEqual("\(e)", "\(json): holes: has 2 holes for 3 shots (booth.shots)")
        }
        let outside = try writeTemplate(in: dir, holes: #"[{"x":250,"y":20,"width":100,"height":100}]"#)
        XCTAssertThrowsError(try BoothTemplate.load(path: outside, shots: 1)) { e in
            XCTAssertEqual("\(e)", "\(outside): holes[0]: reaches outside the 300×200 picture")
        }
        let incomplete = try writeTemplate(in: dir, holes: #"[{"x":0,"y":0,"width":10}]"#)
        XCTAssertThrowsError(try BoothTemplate.load(path: incomplete, shots: 1)) { e in
            XCTAssertEqual("\(e)", "\(incomplete): holes[0]: needs x, y, width and height")
        }
        try #"{ "image": "missing.png", "holes": [] }"#.write(toFile: dir + "/m.json", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try BoothTemplate.load(path: dir + "/m.json", shots: 1)) { e in
            XCTAssertTrue("\(e)".hasPrefix("\(dir)/m.json: image: "), "\(e)")
            XCTAssertTrue("\(e)".contains("missing.png"), "\(e)")
        }
        try ImageWriter.write(RGBImage(width: 4, height: 4), to: dir + "/photo.jpg", format: .jpeg)
        try #"{ "image": "photo.jpg", "holes": [] }"#.write(toFile: dir + "/j.json", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try BoothTemplate.load(path: dir + "/j.json", shots: 1)) { e in
            XCTAssertTrue("\(e)".contains("not a PNG"), "\(e)")
        }
        XCTAssertThrowsError(try BoothTemplate.load(path: dir + "/none.json", shots: 1)) { e in
            XCTAssertEqual("\(e)", "\(dir)/none.json: cannot read the template file")
        }
    }
}
