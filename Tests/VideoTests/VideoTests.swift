#if canImport(Glibc)
import Glibc
#endif
import CFFmpeg
import FilmCore
import System
import Foundation
import XCTest
@testable import Video
@testable import Recording
import Raster

/// What ffprobe (FFmpeg's, not ours) says about a file: the first video stream, the format.
struct Probe {
    let stream: [String: Any]
    let format: [String: Any]
    let frames: Int
    let streams: [[String: Any]]

    init(_ path: String) throws {
        let (status, out, err) = try runProgram("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-show_streams", "-show_format",
                                                              "-of", "json", path])
        guard status == 0, let json = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any] else {
            throw XCTSkip("ffprobe failed on \(path): \(err)")
        }
        streams = json["streams"] as? [[String: Any]] ?? []
        stream = streams.first { $0["codec_type"] as? String == "video" } ?? [:]
        format = json["format"] as? [String: Any] ?? [:]
        frames = Int(stream["nb_read_frames"] as? String ?? "") ?? -1
    }

    var duration: Double { Double(format["duration"] as? String ?? "") ?? -1 }
    var tags: [String: String] { format["tags"] as? [String: String] ?? [:] }
    func field(_ key: String) -> String? { stream[key].map { "\($0)" } }

    /// The display rotation players apply (ffprobe reports it counter-clockwise).
    var rotation: Double? {
        let sideData = stream["side_data_list"] as? [[String: Any]] ?? []
        for d in sideData where d["side_data_type"] as? String == "Display Matrix" {
            if let r = d["rotation"] as? Double { return r }
            if let r = d["rotation"] as? Int { return Double(r) }
        }
        return nil
    }
}

/// Runs a program; its status, standard output and standard error.
func runProgram(_ executable: String, _ arguments: [String]) throws -> (Int32, String, String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}

/// FFmpeg decodes every frame of `path` without a word on standard error. `-fps_mode
/// passthrough` keeps every frame (the default would silently drop one that shares a 1/fps
/// slot with another), so ffmpeg's null muxer complains about any two frames in one slot.
func decodesCleanly(_ path: String) throws -> String {
    let (status, _, err) = try runProgram("/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-fps_mode", "passthrough", "-f", "null", "-"])
    return status == 0 ? err : "exit \(status): \(err)"
}

final class ClipWriterTests: XCTestCase {
    private func directory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("loopix-video-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        return dir
    }

    private func settings(_ width: Int = 320, _ height: Int = 240) -> VideoSettings {
        var s = VideoSettings()
        s.width = width
        s.height = height
        s.encoder = .libx264
        s.x264Preset = "ultrafast"
        s.bitrate = 2_000_000
        return s
    }

    private let metadata = ClipMetadata(creationTime: 1_796_000_000, look: "Kodak Tri-X 400", cameraModel: "Loopix camera (test)", rotation: 0)

    /// A moving test picture, different every frame.
    private func picture(_ n: Int, width: Int, height: Int) -> RGBImage {
        var image = RGBImage(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                image[x, y] = SIMD3(UInt8(truncatingIfNeeded: x + n * 4), UInt8(truncatingIfNeeded: y * 2), UInt8(truncatingIfNeeded: (x ^ y) + n))
            }
        }
        return image
    }

    private func write(_ writer: ClipWriter, frames: Range<Int>, fps: Double = 30) throws {
        for n in frames {
            let image = picture(n, width: writer.width, height: writer.height)
            try image.pixels.withUnsafeBufferPointer { try writer.encode(rgb: $0.baseAddress!, stride: writer.width * 3, time: Double(n) / fps) }
        }
    }

    /// 150 frames at 30 fps: H.264 High, 4:2:0, BT.709 tagged in the stream (limited range),
    /// 5 s long, every frame decodable; the tags name the look and the camera.
    func testAClipIsH264HighInBT709WithEveryFrameAndTheRightDuration() throws {
        let path = try directory() + "/LPX_0001.MP4"
        let writer = try ClipWriter(path: path, settings: settings(), metadata: metadata, encoderName: "libx264")
        try write(writer, frames: 0..<150)
        try writer.finish()
        let probe = try Probe(path)
        XCTAssertEqual(probe.field("codec_name"), "h264")
        XCTAssertEqual(probe.field("profile"), "High")
        XCTAssertEqual(probe.field("pix_fmt"), "yuv420p")
        XCTAssertEqual(probe.field("width"), "320")
        XCTAssertEqual(probe.field("height"), "240")
        XCTAssertEqual(probe.field("color_primaries"), "bt709")
        XCTAssertEqual(probe.field("color_transfer"), "bt709")
        XCTAssertEqual(probe.field("color_space"), "bt709")
        XCTAssertEqual(probe.field("color_range"), "tv")
        XCTAssertEqual(probe.frames, 150)
        XCTAssertEqual(probe.duration, 5, accuracy: 0.05)
        XCTAssertEqual(probe.field("avg_frame_rate"), "30/1")
        XCTAssertEqual(probe.tags["title"], "Kodak Tri-X 400")
        XCTAssertEqual(probe.tags["model"], "Loopix camera (test)")
        XCTAssertEqual(probe.tags["creation_time"], "2026-11-30T00:53:20.000000Z")
        XCTAssertEqual(try decodesCleanly(path), "")
        // A complete file ends in the fragment index (mfra): players can seek in it.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertNotNil(bytes.suffix(64).range(of: Data("mfro".utf8)), "the file ends with the mfra index")
        XCTAssertNil(probe.rotation)
    }

    /// Frames that bunch up behind a stall (a loaded machine delivers three within a few
    /// milliseconds) keep to the clip's 1/30 s grid: the one whose slot is taken is left out,
    /// every packet time is a whole frame period, they only rise, and ffmpeg — which checks its
    /// own 1/30 s slots — decodes the clip without a word. The gap after a stall stays a gap.
    func testBunchedFramesKeepToTheFrameGrid() throws {
        let path = try directory() + "/LPX_0001.MP4"
        let writer = try ClipWriter(path: path, settings: settings(), metadata: metadata, encoderName: "libx264")
        // Split up for Swift 6.0.3's type checker (Debian 13's), which gives up on one expression.
        let steady: [Double] = (0..<30).map { Double($0) / 30 }
        let bunched: [Double] = [1.5, 1.501, 1.502, 1.52, 1.55]
        let after: [Double] = (47..<90).map { Double($0) / 30 + 0.004 }
        let times = steady + bunched + after
        var written = 0
        for (n, time) in times.enumerated() {
            let image = picture(n, width: writer.width, height: writer.height)
            if try image.pixels.withUnsafeBufferPointer({ try writer.encode(rgb: $0.baseAddress!, stride: writer.width * 3, time: time) }) {
                written += 1
            }
        }
        try writer.finish()
        // 1.5, 1.501 and 1.502 share slot 45; 1.52 is slot 46; 1.55 is slot 47, which the
        // next frame (47/30 + 4 ms) also rounds to.
        XCTAssertEqual(written, times.count - 3)
        XCTAssertEqual(writer.frames, written)
        XCTAssertEqual(try decodesCleanly(path), "")
        let (status, out, err) = try runProgram("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                                    "packet=pts_time", "-of", "csv=p=0", path])
        XCTAssertEqual(status, 0, err)
        let pts = out.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }.sorted()
        XCTAssertEqual(pts.count, written)
        for (a, b) in zip(pts, pts.dropFirst()) {
            XCTAssertGreaterThanOrEqual(b - a, 1.0 / 30 - 1e-4, "\(a) → \(b)")
            XCTAssertEqual(((b - a) * 30).rounded(), (b - a) * 30, accuracy: 1e-3, "a whole number of frame periods: \(a) → \(b)")
        }
        XCTAssertEqual(pts.last ?? 0, 89.0 / 30, accuracy: 1e-3, "real time kept")
    }

    /// Keyframes — and so fragments, what a power cut can cost — come every second of the
    /// clip's time, not every 30 frames: at 15 frames a second (every other slot dropped, as on
    /// a machine that cannot keep up) they still fall at 0, 1, 2 and 3 s.
    func testKeyframesComeByTimeWhenFramesAreDropped() throws {
        try assertKeyframesAtWholeSeconds(framesPerSecond: 15, frames: 60)
    }

    /// At the full frame rate too: each second's first frame a keyframe, and no others (x264's
    /// own keyframes by count come at twice the interval, a backstop only).
    func testKeyframesComeEverySecondAtTheFullFrameRate() throws {
        try assertKeyframesAtWholeSeconds(framesPerSecond: 30, frames: 120)
    }

    private func assertKeyframesAtWholeSeconds(framesPerSecond: Double, frames: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let path = try directory() + "/LPX_0001.MP4"
        let writer = try ClipWriter(path: path, settings: settings(), metadata: metadata, encoderName: "libx264")
        for n in 0..<frames {
            let image = picture(n, width: writer.width, height: writer.height)
            try image.pixels.withUnsafeBufferPointer { _ = try writer.encode(rgb: $0.baseAddress!, stride: writer.width * 3, time: Double(n) / framesPerSecond) }
        }
        try writer.finish()
        let (status, out, err) = try runProgram("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                                    "packet=pts_time,flags", "-of", "csv=p=0", path])
        XCTAssertEqual(status, 0, err)
        let keys = out.split(separator: "\n").compactMap { line -> Double? in
            let fields = line.split(separator: ",")
            guard fields.count >= 2, fields[1].hasPrefix("K") else { return nil }
            return Double(fields[0])
        }.sorted()
        let seconds = Int((Double(frames) / framesPerSecond).rounded(.up))
        XCTAssertEqual(keys.count, seconds, "\(keys)", file: file, line: line)
        for (k, t) in keys.enumerated() { XCTAssertEqual(t, Double(k), accuracy: 0.07, "keyframe \(k) at \(t) s", file: file, line: line) }
        XCTAssertEqual(try decodesCleanly(path), "", file: file, line: line)
    }

    /// Flat colours come back as they went in (BT.709 limited range both ways, as a player
    /// decodes them), within the YUV round trip's rounding.
    func testColoursSurviveTheRoundTrip() throws {
        let path = try directory() + "/flat.MP4"
        let colours: [SIMD3<UInt8>] = [SIMD3(200, 100, 50), SIMD3(128, 128, 128), SIMD3(30, 160, 220)]
        var s = settings(64, 64)
        s.bitrate = 8_000_000
        let writer = try ClipWriter(path: path, settings: s, metadata: metadata, encoderName: "libx264")
        for (n, colour) in colours.enumerated() {
            var image = RGBImage(width: 64, height: 64)
            for y in 0..<64 { for x in 0..<64 { image[x, y] = colour } }
            for k in 0..<30 {
                try image.pixels.withUnsafeBufferPointer { try writer.encode(rgb: $0.baseAddress!, stride: 64 * 3, time: Double(n * 30 + k) / 30) }
            }
        }
        try writer.finish()
        let raw = path + ".rgb"
        let (status, _, err) = try runProgram("/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-vf", "scale=in_color_matrix=bt709:in_range=tv:out_range=pc",
                                                           "-pix_fmt", "rgb24", "-f", "rawvideo", raw])
        XCTAssertEqual(status, 0, err)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let frame = 64 * 64 * 3
        for (n, colour) in colours.enumerated() {
            let centre = (n * 30 + 15) * frame + (32 * 64 + 32) * 3
            for c in 0..<3 {
                XCTAssertEqual(Int(bytes[centre + c]), Int(colour[c]), accuracy: 3, "colour \(n) channel \(c)")
            }
        }
    }

    /// Sound and picture stay together: a flash in the picture and a click in the sound, both
    /// at 1.5 s, come out of FFmpeg's decoder within a frame of each other (the AAC encoder's
    /// priming is taken back by the muxer's edit list).
    func testSoundStaysInSyncWithThePicture() throws {
        let path = try directory() + "/sync.MP4"
        var s = settings(64, 48)
        s.audio = AudioSettings(device: "unused: samples come from the test")
        let writer = try ClipWriter(path: path, settings: s, metadata: metadata, encoderName: "libx264")
        let rate = 48_000
        var sound = [Int16](repeating: 0, count: rate / 30)
        for n in 0..<90 {
            var image = RGBImage(width: 64, height: 48)
            if n == 45 { for i in image.pixels.indices { image.pixels[i] = 255 } }
            try image.pixels.withUnsafeBufferPointer { try writer.encode(rgb: $0.baseAddress!, stride: 64 * 3, time: Double(n) / 30) }
            for i in sound.indices { sound[i] = n == 45 && i < 240 ? (i % 2 == 0 ? 20_000 : -20_000) : 0 }
            try sound.withUnsafeBufferPointer { try writer.encodeAudio($0.baseAddress!, count: sound.count, channels: 1, time: Double(n) / 30) }
        }
        try writer.finish()
        let streams = try Probe(path).streams.map { $0["codec_name"] as? String }
        XCTAssertEqual(streams, ["h264", "aac"])
        // The click: the first loud sample of the decoded sound.
        let pcm = path + ".pcm"
        var (status, _, err) = try runProgram("/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-map", "0:a", "-f", "s16le", "-ac", "1", "-ar", "48000", pcm])
        XCTAssertEqual(status, 0, err)
        let samples = try Data(contentsOf: URL(fileURLWithPath: pcm)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let click = try XCTUnwrap(samples.firstIndex { abs(Int($0)) > 8000 })
        // The flash: the first bright decoded frame.
        let raw = path + ".gray"
        (status, _, err) = try runProgram("/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-map", "0:v", "-fps_mode", "passthrough", "-pix_fmt", "gray", "-f", "rawvideo", raw])
        XCTAssertEqual(status, 0, err)
        let frames = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let flash = try XCTUnwrap((0..<(frames.count / (64 * 48))).first { frames[$0 * 64 * 48 + 24 * 64 + 32] > 128 })
        XCTAssertEqual(Double(click) / Double(rate), 1.5, accuracy: 0.025, "the click is heard at 1.5 s")
        XCTAssertEqual(Double(flash) / 30, 1.5, accuracy: 0.001, "the flash is seen at 1.5 s")
    }

    /// A portrait clip carries a display matrix, so it plays upright.
    func testAPortraitClipCarriesItsRotation() throws {
        let path = try directory() + "/portrait.MP4"
        var m = metadata
        m.rotation = ClipMetadata.rotation(exifOrientation: 6)
        XCTAssertEqual(m.rotation, 90)
        let writer = try ClipWriter(path: path, settings: settings(), metadata: m, encoderName: "libx264")
        try write(writer, frames: 0..<10)
        try writer.finish()
        XCTAssertEqual(try Probe(path).rotation, -90, "ffprobe's counter-clockwise degrees: a quarter turn clockwise")
    }

    /// Cut off without its trailer (the process killed at 3.5 s): the fragments written so far
    /// play and decode without error.
    func testAClipCutOffMidwayPlaysUpToItsLastFragment() throws {
        let path = try directory() + "/killed.MP4"
        var writer: ClipWriter? = try ClipWriter(path: path, settings: settings(), metadata: metadata, encoderName: "libx264")
        try write(writer!, frames: 0..<105)
        let synced = writer!.safeLength
        writer = nil  // no finish: what kill -9 leaves (the muxer's unwritten fragment is lost)
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        XCTAssertEqual(Int64(size), synced, "nothing but whole fragments reached the file")
        let probe = try Probe(path)
        XCTAssertGreaterThanOrEqual(probe.frames, 90, "3 whole one-second fragments")
        XCTAssertGreaterThanOrEqual(probe.duration, 2.9)
        XCTAssertEqual(try decodesCleanly(path), "")
    }

    /// When the storage fills up, the clip ends at its last whole fragment: nothing half-written.
    func testAFullDiskEndsTheClipAtItsLastWholeFragment() throws {
        let dir = try directory() + "/small"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        guard mount("tmpfs", dir, "tmpfs", 0, "size=1600k") == 0 else {
            throw XCTSkip("cannot mount a small tmpfs here (\(String(cString: strerror(errno))))")
        }
        defer { umount2(dir, Int32(MNT_DETACH)) }
        let path = dir + "/LPX_0002.MP4"
        var s = settings(640, 480)
        s.bitrate = 4_000_000
        let writer = try ClipWriter(path: path, settings: s, metadata: metadata, encoderName: "libx264")
        var failure: VideoError?
        do { try write(writer, frames: 0..<600) } catch { failure = error as? VideoError }
        guard case .storageFull(let what)? = failure else { return XCTFail("expected storage full, got \(String(describing: failure))") }
        XCTAssertTrue(what.contains("no space left"), what)
        XCTAssertTrue(writer.cutToLastFragment(), "at least one whole fragment fitted")
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        XCTAssertEqual(Int64(size), writer.safeLength)
        XCTAssertEqual(try decodesCleanly(path), "")
        XCTAssertGreaterThan(try Probe(path).frames, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["LPX_0002.MP4"], "no other file left")
    }

    /// A clip that ends before its first fragment was whole has nothing to play: it is removed.
    func testAClipWithoutAWholeFragmentIsRemoved() throws {
        let path = try directory() + "/short.MP4"
        let writer = try ClipWriter(path: path, settings: settings(), metadata: metadata, encoderName: "libx264")
        try write(writer, frames: 0..<10)
        XCTAssertFalse(writer.cutToLastFragment())
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    /// An existing file is never replaced, and an encoder FFmpeg does not have is a clear error
    /// that leaves nothing behind.
    func testAnExistingFileOrAMissingEncoderIsAClearError() throws {
        let dir = try directory()
        let existing = dir + "/taken.MP4"
        _ = FileManager.default.createFile(atPath: existing, contents: Data("keep".utf8))
        XCTAssertThrowsError(try ClipWriter(path: existing, settings: settings(), metadata: metadata, encoderName: "libx264")) { error in
            XCTAssertEqual("\(error)", "\(existing): cannot create the clip: File exists (errno 17)")
        }
        XCTAssertEqual(FileManager.default.contents(atPath: existing), Data("keep".utf8))
        let path = dir + "/nope.MP4"
        XCTAssertThrowsError(try ClipWriter(path: path, settings: settings(), metadata: metadata, encoderName: "h264_nonesuch")) { error in
            XCTAssertEqual("\(error)", "no H.264 encoder: FFmpeg has no encoder named h264_nonesuch")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    /// `auto` takes the hardware encoder only where a V4L2 encoder device is there.
    func testAutoPrefersTheHardwareEncoderOnlyWhereThereIsOne() {
        XCTAssertEqual(EncoderChoice.auto.candidates(devices: []), ["libx264"])
        let withDevice = EncoderChoice.auto.candidates(devices: ["/dev/video11"])
        XCTAssertEqual(withDevice.last, "libx264")
        XCTAssertEqual(withDevice.first, avcodec_find_encoder_by_name("h264_v4l2m2m") != nil ? "h264_v4l2m2m" : "libx264")
        XCTAssertEqual(EncoderChoice.libx264.candidates(devices: ["/dev/video11"]), ["libx264"])
    }
}

final class AudioCaptureTests: XCTestCase {
    /// ALSA's null device (no clock: it hands out silence at once) is read through the same
    /// path a USB microphone is: opened, read on its own thread, taken in chunks with a time.
    func testSamplesAreReadFromAnALSADevice() throws {
        var settings = AudioSettings(device: "null")
        settings.channels = 2
        let capture = try AudioCapture(settings, capacitySeconds: 0.5)
        var buffer: [Int16] = []
        var got: (startNs: UInt64?, failure: String?) = (nil, nil)
        let deadline = Date().addingTimeInterval(5)
        while got.startNs == nil && Date() < deadline {
            usleep(20_000)
            got = capture.take(into: &buffer)
        }
        capture.stop()
        XCTAssertNil(got.failure)
        XCTAssertNotNil(got.startNs)
        XCTAssertFalse(buffer.isEmpty)
        XCTAssertEqual(buffer.count % 2, 0, "whole stereo frames")
        XCTAssertLessThanOrEqual(buffer.count, 48_000, "never more than the half second kept")
    }

    func testAMissingDeviceIsAClearError() {
        XCTAssertThrowsError(try AudioCapture(AudioSettings(device: "hw:99,0"))) { error in
            XCTAssertTrue("\(error)".hasPrefix("microphone hw:99,0: cannot open it for recording: "), "\(error)")
        }
    }
}

final class RecorderTests: XCTestCase {
    /// An encoder that cannot keep up (100 ms a frame against 33 ms): frames are dropped, never
    /// queued without bound, and the clip's duration is still the real time it covered.
    func testASlowEncoderDropsFramesAndKeepsRealTime() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("loopix-rec-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var s = VideoSettings()
        s.width = 160
        s.height = 120
        s.encoder = .libx264
        s.x264Preset = "ultrafast"
        let start = MonotonicClock.now()
        let recorder = try Recorder(path: dir + "/slow.MP4", settings: s, metadata: ClipMetadata(creationTime: 0, look: "x", cameraModel: "y", rotation: 0),
                                    encoderName: "libx264", startNs: start, encodeDelay: 0.1)
        var offered = 0
        let frameNs: UInt64 = 33_333_333
        for n in 0..<60 {
            let due = start + UInt64(n) * frameNs
            while MonotonicClock.now() < due { usleep(1000) }
            offered += 1
            if let frame = recorder.takeBuffer() { recorder.submit(frame, timestampNs: due) }
        }
        let p = recorder.stop()
        XCTAssertTrue(p.finished)
        XCTAssertNil(p.failure)
        XCTAssertEqual(p.framesWritten + p.framesDropped, offered)
        XCTAssertGreaterThan(p.framesDropped, 20, "about two of three frames are dropped")
        XCTAssertLessThanOrEqual(p.framesWritten, 30)
        let probe = try Probe(dir + "/slow.MP4")
        XCTAssertEqual(probe.frames, p.framesWritten)
        XCTAssertEqual(probe.duration, 2, accuracy: 0.25, "the clip lasts as long as the time it covered")
    }
}
