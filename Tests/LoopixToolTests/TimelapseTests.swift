import FilmCore
import Foundation
import ImageFiles
import XCTest
@testable import LoopixTool
import Raster

/// `loopix timelapse`: photos in, an H.264 clip out, checked with ffprobe and ffmpeg.
final class TimelapseTests: XCTestCase {
    /// A photo of one colour, with a white band along its top (a crop's witness).
    func solid(_ color: SIMD3<UInt8>, width: Int, height: Int) -> RGBImage {
        var image = RGBImage(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width { image[x, y] = y < height / 10 ? SIMD3(255, 255, 255) : color }
        }
        return image
    }

    func ffmpegTool(_ name: String) throws -> String {
        let path = "/usr/bin/" + name
        guard FileManager.default.isExecutableFile(atPath: path) else { throw XCTSkip("\(name) is not installed (scripts/setup installs ffmpeg)") }
        return path
    }

    func testPhotosBecomeOneFrameEachInOrderAndABrokenOneIsLeftOut() throws {
        let ffprobe = try ffmpegTool("ffprobe"), ffmpeg = try ffmpegTool("ffmpeg")
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let colors: [SIMD3<UInt8>] = [[200, 40, 40], [40, 200, 40], [40, 40, 200], [200, 200, 40], [40, 200, 200], [128, 128, 128]]
        var inputs: [String] = []
        for (i, color) in colors.enumerated() {
            let path = dir + "/LPX_\(String(format: "%04d", i + 1)).JPG"
            // The fourth is square: cropped about its centre to the first one's 3:2, its white
            // top band falls outside the clip.
            let image = i == 3 ? solid(color, width: 400, height: 400) : solid(color, width: 600, height: 400)
            try ImageWriter.write(image, to: path, format: .jpeg, jpegQuality: 95, replace: true)
            inputs.append(path)
        }
        let broken = dir + "/LPX_0099.JPG"
        try Data("not a photo".utf8).write(to: URL(fileURLWithPath: broken))
        inputs.insert(broken, at: 2)
        let clip = dir + "/timelapse.mp4"
        var logged: [String] = []
        let failed = try TimelapseCommand.run(inputs + ["-o", clip, "--fps", "12", "--width", "300"]) { logged.append($0) }
        XCTAssertEqual(failed, 1, "\(logged)")
        XCTAssertTrue(logged.contains { $0.contains(broken) && $0.contains("left out") }, "\(logged)")

        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: ffprobe)
        probe.arguments = ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                           "stream=codec_name,width,height,r_frame_rate,nb_read_frames,pix_fmt", "-of", "json", clip]
        let out = Pipe()
        probe.standardOutput = out
        try probe.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        probe.waitUntilExit()
        let stream = try XCTUnwrap(((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["streams"] as? [[String: Any]])?.first)
        XCTAssertEqual(stream["codec_name"] as? String, "h264")
        XCTAssertEqual(stream["width"] as? Int, 300)
        XCTAssertEqual(stream["height"] as? Int, 200)
        XCTAssertEqual(stream["r_frame_rate"] as? String, "12/1")
        XCTAssertEqual(stream["nb_read_frames"] as? String, "\(colors.count)", "one frame a readable photo")

        // Every frame decoded: its centre is its photo's colour, in order; the square one has
        // no white along its top (cropped), the others do.
        let decode = Process()
        decode.executableURL = URL(fileURLWithPath: ffmpeg)
        decode.arguments = ["-v", "error", "-i", clip, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
        let raw = Pipe()
        decode.standardOutput = raw
        try decode.run()
        let pixels = [UInt8](raw.fileHandleForReading.readDataToEndOfFile())
        decode.waitUntilExit()
        let frameBytes = 300 * 200 * 3
        XCTAssertEqual(pixels.count, frameBytes * colors.count)
        for (i, color) in colors.enumerated() where pixels.count >= (i + 1) * frameBytes {
            let centre = i * frameBytes + (100 * 300 + 150) * 3
            for c in 0..<3 { XCTAssertEqual(Double(pixels[centre + c]), Double(color[c]), accuracy: 8, "frame \(i), channel \(c)") }
            let edge = i * frameBytes + (5 * 300 + 150) * 3
            let white = pixels[edge] > 230 && pixels[edge + 1] > 230 && pixels[edge + 2] > 230
            XCTAssertEqual(white, i != 3, "frame \(i)'s top")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".tmp") }
        XCTAssertEqual(leftovers, [], "no temporary file left behind")
    }

    func testAnExistingClipIsKeptAndNothingReadableIsAnError() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let photo = dir + "/a.png", clip = dir + "/t.mp4"
        try Fixtures.writePhoto(photo)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: clip))
        XCTAssertThrowsError(try TimelapseCommand.run([photo, "-o", clip]) { _ in }) { error in
            XCTAssertTrue("\(error)".contains("already exists"), "\(error)")
        }
        XCTAssertEqual(try String(contentsOfFile: clip, encoding: .utf8), "mine")
        let junk = dir + "/junk.jpg"
        try Data("junk".utf8).write(to: URL(fileURLWithPath: junk))
        XCTAssertThrowsError(try TimelapseCommand.run([junk, "-o", dir + "/none.mp4"]) { _ in }) { error in
            XCTAssertTrue("\(error)".contains("no photo could be read"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/none.mp4"))
        XCTAssertThrowsError(try TimelapseCommand.run([photo, "-o", dir + "/x.mp4", "--fps", "0"]) { _ in }) { error in
            XCTAssertEqual((error as? ToolError)?.status, 2, "a usage mistake")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".tmp") }, [])
    }
}
