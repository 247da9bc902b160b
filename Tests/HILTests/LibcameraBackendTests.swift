import Camera
import FilmCore
import Foundation
import ImageFiles
import XCTest
import Raster

/// The libcamera backend against libcamera's vimc pipeline on real kernel drivers (the bench).
final class LibcameraBackendTests: XCTestCase {
    func vimcCamera() throws -> (LibcameraManager, LibcameraCamera) {
        try Bench.require("/dev/media0")
        let manager = try LibcameraManager()
        let camera = try LibcameraCamera(manager: manager)
        return (manager, camera)
    }

    func testTheVimcCameraIsALens() throws {
        let (manager, camera) = try vimcCamera()
        let infos = manager.cameras()
        XCTAssertTrue(infos.contains { $0.id.contains("vimc") }, "\(infos)")
        XCTAssertEqual(camera.lenses.count, infos.count)
        let lens = try XCTUnwrap(camera.lenses.first)
        XCTAssertTrue(lens.label.hasSuffix(" mm"))
        XCTAssertGreaterThan(lens.stillWidth, 0)
        XCTAssertEqual(camera.lenses.map(\.focalLength35mm), camera.lenses.map(\.focalLength35mm).sorted())
    }

    func testAHundredPreviewFramesWithRisingSequenceNumbers() throws {
        let (_, camera) = try vimcCamera()
        try camera.start(lens: 0, previewWidth: 640, previewHeight: 480)
        defer { camera.stop() }
        var frame = RGBImage(width: 640, height: 480)
        var sequences: [UInt64] = []
        for _ in 0..<100 {
            sequences.append(try camera.nextPreviewFrame(into: &frame, timeout: 5).sequence)
        }
        XCTAssertEqual(sequences.count, 100)
        XCTAssertTrue(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }, "\(sequences)")
        XCTAssertGreaterThan(Set(frame.pixels).count, 4, "vimc's colour bars, not a blank frame")
    }

    func testViewfinderAndStillConfigureAndAStillBecomesAHEIC() throws {
        let (_, camera) = try vimcCamera()
        try camera.start(lens: 0, previewWidth: 640, previewHeight: 480)
        defer { camera.stop() }
        var frame = RGBImage(width: 640, height: 480)
        _ = try camera.nextPreviewFrame(into: &frame, timeout: 5)
        let captured = try camera.captureStill()
        var (still, metadata) = (try captured.image(), captured.metadata)
        XCTAssertGreaterThan(still.width, 640, "a still is larger than the preview")
        // The largest the pipeline streams: vimc's scaler gives 4092×2160 of its 4096×2160 array.
        XCTAssertGreaterThanOrEqual(still.width, camera.lenses[0].stillWidth - 8, "full sensor width")
        XCTAssertGreaterThanOrEqual(still.height, camera.lenses[0].stillHeight - 8, "full sensor height")
        XCTAssertGreaterThan(metadata.exposureTime, 0)
        // The preview goes on after the still.
        _ = try camera.nextPreviewFrame(into: &frame, timeout: 5)
        FilmRenderer(look: FilmLook(preset: BuiltinPresets.portra), width: still.width, height: still.height)
            .render(&still, grainFrame: 0, threads: 2)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vimc-\(UUID().uuidString).heic").path
        try ImageWriter.write(still, to: path, format: .heic, metadata: PhotoMetadata(presetName: "Kodak Portra 400"))
        let info = try HEICInfo.read(path: path)
        XCTAssertEqual(info.width, still.width)
        XCTAssertEqual(info.nclxPrimaries, 12)
    }

    func testTwentyStopStartsLeakNoFileDescriptorsOrMemory() throws {
        let (_, camera) = try vimcCamera()
        var frame = RGBImage(width: 320, height: 240)
        func openFDs() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }
        func residentPages() -> Int {
            let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
            return Int(statm.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        // One round first, so lazily made things (libcamera's threads, IPA) are counted before.
        try camera.start(lens: 0, previewWidth: 320, previewHeight: 240)
        _ = try camera.nextPreviewFrame(into: &frame, timeout: 5)
        camera.stop()
        let fds = openFDs(), pages = residentPages()
        for _ in 0..<20 {
            try camera.start(lens: 0, previewWidth: 320, previewHeight: 240)
            _ = try camera.nextPreviewFrame(into: &frame, timeout: 5)
            camera.stop()
        }
        XCTAssertEqual(openFDs(), fds, "file descriptors after 20 stop/starts")
        XCTAssertLessThan(residentPages() - pages, 2048, "resident memory grew by \(residentPages() - pages) pages")
    }

    func testTheDaemonOnTheVimcCameraTakesAPhotoThroughLoopixCtl() throws {
        try Bench.require("/dev/media0")
        let daemon = try BenchDaemon(name: "vimc", sections: """
            "camera": { "backend": "libcamera", "required": true },
            "display": { "backend": "headless", "width": 160, "height": 120 }
            """)
        let status = try daemon.waitForStatus(seconds: 60) { $0.contains("\"camera\": \"ok\"") }
        XCTAssertTrue(status.contains("\"camera\": \"ok\""), "the daemon runs on the vimc camera: \(status)")
        // The still comes from the pipeline reconfigured for it, in a debug build under emulation.
        let capture = try daemon.ctl(["capture", "--timeout", "60"])
        XCTAssertEqual(capture.status, 0, capture.output)
        let photo = daemon.directory + "/photos/DCIM/100LOOPX/LPX_0001.HEIC"
        // A debug build developing ~9 MP under software emulation: minutes, not seconds (the
        // smallest preview leaves the development most of the two CPUs).
        let started = Date()
        let saved = started.addingTimeInterval(720)
        while !FileManager.default.fileExists(atPath: photo) && Date() < saved { Thread.sleep(forTimeInterval: 0.2) }
        print("hil: the photo was saved \(Int(Date().timeIntervalSince(started))) s after the capture was answered")
        let info = try HEICInfo.read(path: photo)
        XCTAssertGreaterThan(info.width, 480)
    }

    /// Three seconds recorded from the vimc camera through libcamera: the clip is H.264 and
    /// every frame of it decodes. (A debug build under emulation grades few frames a second;
    /// the clip's timing stays real, so it still lasts about three seconds.)
    func testTheDaemonRecordsAClipFromTheVimcCamera() throws {
        try Bench.require("/dev/media0")
        let daemon = try BenchDaemon(name: "vimc-video", sections: """
            "camera": { "backend": "libcamera", "required": true },
            "display": { "backend": "headless", "width": 160, "height": 120 },
            "video": { "width": 320, "height": 240, "encoder": "libx264", "x264Preset": "ultrafast", "bitrateMbps": 2 }
            """)
        let ready = try daemon.waitForStatus(seconds: 60) { $0.contains("\"camera\": \"ok\"") }
        XCTAssertTrue(ready.contains("\"camera\": \"ok\""), "the daemon runs on the vimc camera: \(ready)")
        let start = try daemon.ctl(["record", "start", "--timeout", "60"])
        XCTAssertEqual(start.status, 0, start.output)
        Thread.sleep(forTimeInterval: 3)
        let stop = try daemon.ctl(["record", "stop", "--timeout", "60"])
        XCTAssertEqual(stop.status, 0, stop.output)
        let clip = daemon.directory + "/photos/DCIM/100LOOPX/LPX_0001.MP4"
        XCTAssertTrue(stop.output.contains(clip), stop.output)
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
        probe.arguments = ["-v", "error", "-count_frames", "-show_entries", "stream=codec_name,nb_read_frames:format=duration", "-of", "csv=p=0", clip]
        let out = Pipe()
        probe.standardOutput = out
        try probe.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        probe.waitUntilExit()
        print("hil: the vimc clip: \(text.split(separator: "\n").joined(separator: "; "))")
        XCTAssertTrue(text.hasPrefix("h264,"), text)

        // Every frame decoded by ffprobe (not muxed again: the clip's timestamps are the
        // camera's, a variable frame rate that a constant-rate output would complain about).
        let decode = Process()
        decode.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
        decode.arguments = ["-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", clip]
        let err = Pipe()
        decode.standardError = err
        try decode.run()
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        decode.waitUntilExit()
        XCTAssertEqual(decode.terminationStatus, 0)
        XCTAssertEqual(errors, "", "every frame decodes")
        let frames = Int(text.split(separator: "\n").first?.split(separator: ",").last ?? "") ?? 0
        XCTAssertGreaterThan(frames, 0)
    }
}
