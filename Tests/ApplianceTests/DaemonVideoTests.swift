#if canImport(Glibc)
import Glibc
#endif
import FilmCore
import Foundation
import ImageFiles
import XCTest
import Raster

/// Film video end to end: the real loopixd on the simulated camera, driven over its socket;
/// the clips checked with FFmpeg's own ffprobe and ffmpeg.
final class DaemonVideoTests: XCTestCase {
    static let video = #""video": { "width": 320, "height": 240, "encoder": "libx264", "x264Preset": "ultrafast", "bitrateMbps": 2 }"#

    /// One photo as the simulated camera's whole scene, so that every frame shows the same
    /// picture and its look can be compared with `loopix develop`'s.
    private func sceneDirectory(_ d: DaemonHarness) throws -> String {
        let dir = d.directory + "/scene"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var image = RGBImage(width: 320, height: 240)
        for y in 0..<240 {
            for x in 0..<320 {
                image[x, y] = SIMD3(UInt8(60 + x * 150 / 320), UInt8(90 + y * 100 / 240), UInt8(200 - x * 120 / 320))
            }
        }
        try ImageWriter.write(image, to: dir + "/scene.png", format: .png, replace: true)
        return dir
    }

    private func probe(_ path: String) throws -> [String: Any] {
        let (status, out, err) = try runTool("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-show_streams", "-show_format", "-of", "json", path])
        XCTAssertEqual(status, 0, err)
        return try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any] ?? [:]
    }

    private func video(_ json: [String: Any]) -> [String: Any] {
        ((json["streams"] as? [[String: Any]]) ?? []).first { $0["codec_type"] as? String == "video" } ?? [:]
    }

    /// Mean R, G, B of the decoded frames between `from` and `to` seconds (BT.709 limited range
    /// back to full-range RGB, as a player shows them).
    private func meanColour(_ path: String, from: Double, to: Double) throws -> SIMD3<Double> {
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("loopix-frames-\(UUID().uuidString.prefix(8)).rgb").path
        defer { unlink(raw) }
        let (status, _, err) = try runTool("/usr/bin/ffmpeg", ["-v", "error", "-y", "-ss", "\(from)", "-t", "\(to - from)", "-i", path,
                                                               "-vf", "scale=in_color_matrix=bt709:in_range=tv:out_range=pc",
                                                               "-pix_fmt", "rgb24", "-f", "rawvideo", raw])
        XCTAssertEqual(status, 0, err)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: raw))
        var sum = SIMD3<Double>.zero
        let count = bytes.count / 3
        bytes.withUnsafeBytes { b in
            for i in 0..<count { sum += SIMD3(Double(b[i * 3]), Double(b[i * 3 + 1]), Double(b[i * 3 + 2])) }
        }
        return sum / Double(max(count, 1))
    }

    private func developedMean(_ still: String, look: String, d: DaemonHarness) throws -> SIMD3<Double> {
        let out = d.directory + "/\(look).png"
        let (status, _, err) = try runTool(DaemonHarness.loopix,
                                           ["develop", still, "-p", look, "-o", out, "--presets-dir", d.directory])
        XCTAssertEqual(status, 0, err)
        let image = try ImageReader.read(path: out)
        var sum = SIMD3<Double>.zero
        for i in stride(from: 0, to: image.pixels.count, by: 3) {
            sum += SIMD3(Double(image.pixels[i]), Double(image.pixels[i + 1]), Double(image.pixels[i + 2]))
        }
        return sum / Double(image.pixelCount)
    }

    /// A still taken while the clip records (photo mode for a moment; the recording goes
    /// on): its undeveloped original shows what the camera saw at that time.
    private func stillDuringRecording(_ d: DaemonHarness) throws -> String {
        XCTAssertEqual(try d.request(#"{"cmd":"mode","value":"photo"}"#)["ok"] as? Bool, true)
        let photo = try XCTUnwrap(d.request(#"{"cmd":"capture"}"#)["path"] as? String, d.log(tail: 5))
        XCTAssertEqual(try d.request(#"{"cmd":"mode","value":"video"}"#)["ok"] as? Bool, true)
        // The original is written on the capture queue, after the still's conversion.
        let original = (photo as NSString).deletingPathExtension + ".PNG"
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: photo), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        return original
    }

    private func startWithScene(_ extra: String = "") throws -> DaemonHarness {
        let d = try DaemonHarness(extraConfig: Self.video + #", "capture": { "keepOriginal": true }"# + extra)
        var config = try String(contentsOfFile: d.configPath, encoding: .utf8)
        config = config.replacingOccurrences(of: #""backend": "simulated""#,
                                             with: #""backend": "simulated", "photosDirectory": "\#(try sceneDirectory(d))""#)
        try config.write(toFile: d.configPath, atomically: true, encoding: .utf8)
        try d.start()
        return d
    }

    /// Five seconds recorded over the socket, the look switched at 2 s: H.264 at the configured
    /// size at 30 fps (150 frames, within 2 %) with BT.709 tags, every frame decodable; grey
    /// (mono) once the new look is in, colour before.
    func testFiveSecondsRecordedWithALookSwitch() throws {
        let d = try startWithScene()
        defer { d.stop() }
        _ = try d.waitForStatus { $0["lookReady"] as? Bool == true }
        let started = try d.request(#"{"cmd":"record","action":"start"}"#)
        XCTAssertEqual(started["ok"] as? Bool, true, "\(started)")
        let t0 = Date()
        let clip = try XCTUnwrap(started["path"] as? String)
        XCTAssertTrue(clip.hasSuffix("/DCIM/100LOOPX/LPX_0001.MP4"), clip)
        Thread.sleep(forTimeInterval: 2)
        XCTAssertEqual(try d.request(#"{"cmd":"preset","name":"mono"}"#)["ok"] as? Bool, true)
        _ = try d.waitForStatus { $0["lookReady"] as? Bool == true }
        let monoFrom = Date().timeIntervalSince(t0) + 0.2
        Thread.sleep(forTimeInterval: max(0.5, 5 - Date().timeIntervalSince(t0)))
        XCTAssertEqual(try d.request(#"{"cmd":"status"}"#)["recording"] as? Bool, true)
        let stopped = try d.request(#"{"cmd":"record","action":"stop"}"#)
        let recorded = Date().timeIntervalSince(t0)
        XCTAssertEqual(stopped["recording"] as? Bool, false)
        XCTAssertEqual(stopped["path"] as? String, clip)

        let info = try probe(clip)
        let v = video(info)
        XCTAssertEqual(v["codec_name"] as? String, "h264")
        XCTAssertEqual(v["profile"] as? String, "High")
        XCTAssertEqual(v["width"] as? Int, 320)
        XCTAssertEqual(v["height"] as? Int, 240)
        for key in ["color_primaries", "color_transfer", "color_space"] { XCTAssertEqual(v[key] as? String, "bt709", key) }
        XCTAssertEqual(v["color_range"] as? String, "tv")
        let duration = Double((info["format"] as? [String: Any])?["duration"] as? String ?? "") ?? 0
        let frames = Int(v["nb_read_frames"] as? String ?? "") ?? 0
        XCTAssertEqual(duration, recorded, accuracy: 0.3, "as long as it recorded")
        XCTAssertEqual(Double(frames) / duration, 30, accuracy: 1, "30 frames a second: \(frames) in \(duration) s; \(d.log(tail: 5))")
        XCTAssertEqual(Double(frames), duration * 30, accuracy: duration * 30 * 0.02, "no more than 2 % of the frames missing")
        let (status2, _, err) = try runTool("/usr/bin/ffmpeg", ["-v", "error", "-i", clip, "-fps_mode", "passthrough", "-f", "null", "-"])
        XCTAssertEqual(status2, 0)
        XCTAssertEqual(err, "", "every frame decodes")
        XCTAssertEqual((info["format"] as? [String: Any]).flatMap { ($0["tags"] as? [String: String])?["title"] }, "Kodak Portra 400",
                       "the look it began with")
        let before = try meanColour(clip, from: 0.5, to: 1.8)
        let after = try meanColour(clip, from: monoFrom, to: min(duration - 0.1, monoFrom + 1.5))
        XCTAssertLessThan(abs(after.x - after.z), 2, "mono is grey: \(after)")
        XCTAssertGreaterThan(abs(before.x - before.z), 8, "Portra is not: \(before)")
    }

    /// Each look in the clip is the look `loopix develop` gives the same picture: the clip's
    /// mean colour around a still taken while it records, against that still developed with
    /// the look (within 6 levels: grain averages out; the YUV round trip and the simulated
    /// light's drift — ±15 % over 30 s — within ±0.4 s cost a little).
    func testTheClipsLooksAreTheLooksLoopixDevelopGives() throws {
        let d = try startWithScene()
        defer { d.stop() }
        _ = try d.waitForStatus { $0["lookReady"] as? Bool == true }
        let clip = try XCTUnwrap(d.request(#"{"cmd":"record","action":"start"}"#)["path"] as? String)
        let t0 = Date()
        Thread.sleep(forTimeInterval: 1)
        let tBefore = Date().timeIntervalSince(t0)
        let stillBefore = try stillDuringRecording(d)
        XCTAssertEqual(try d.request(#"{"cmd":"preset","name":"mono"}"#)["ok"] as? Bool, true)
        _ = try d.waitForStatus { $0["lookReady"] as? Bool == true }
        Thread.sleep(forTimeInterval: 0.5)
        let tAfter = Date().timeIntervalSince(t0)
        let stillAfter = try stillDuringRecording(d)
        Thread.sleep(forTimeInterval: 1)
        _ = try d.request(#"{"cmd":"record","action":"stop"}"#)
        let portra = try developedMean(stillBefore, look: "portra", d: d)
        let mono = try developedMean(stillAfter, look: "mono", d: d)
        let before = try meanColour(clip, from: max(0.2, tBefore - 0.4), to: tBefore + 0.1)
        let after = try meanColour(clip, from: tAfter - 0.3, to: tAfter + 0.2)
        for c in 0..<3 {
            XCTAssertEqual(before[c], portra[c], accuracy: 6, "Portra, channel \(c)")
            XCTAssertEqual(after[c], mono[c], accuracy: 6, "mono, channel \(c)")
        }
    }

    /// Intensity 0 %: the clip's frames are the camera's own picture.
    func testAtZeroIntensityTheClipIsTheCamerasPicture() throws {
        let d = try startWithScene()
        defer { d.stop() }
        _ = try d.waitForStatus { $0["lookReady"] as? Bool == true }
        XCTAssertEqual(try d.request(#"{"cmd":"intensity","value":0}"#)["ok"] as? Bool, true)
        let clip = try XCTUnwrap(d.request(#"{"cmd":"record","action":"start"}"#)["path"] as? String)
        Thread.sleep(forTimeInterval: 1)
        let still = try ImageReader.read(path: try stillDuringRecording(d))
        Thread.sleep(forTimeInterval: 1)
        _ = try d.request(#"{"cmd":"record","action":"stop"}"#)
        var stillMean = SIMD3<Double>.zero
        for i in stride(from: 0, to: still.pixels.count, by: 3) {
            stillMean += SIMD3(Double(still.pixels[i]), Double(still.pixels[i + 1]), Double(still.pixels[i + 2]))
        }
        stillMean /= Double(still.pixelCount)
        let frames = try meanColour(clip, from: 0.7, to: 1.3)
        for c in 0..<3 { XCTAssertEqual(frames[c], stillMean[c], accuracy: 3, "channel \(c) after the YUV round trip") }
    }

    /// `kill -9` 3.5 s into a recording: the clip plays up to its last whole fragment (≥ 2.5 s).
    /// The next start goes on numbering after it.
    func testAKilledDaemonLeavesAPlayableClip() throws {
        let d = try DaemonHarness(extraConfig: Self.video)
        try d.start()
        let clip = try XCTUnwrap(d.request(#"{"cmd":"record","action":"start"}"#)["path"] as? String)
        Thread.sleep(forTimeInterval: 3.5)
        kill(d.process!.processIdentifier, SIGKILL)
        d.process!.waitUntilExit()
        let info = try probe(clip)
        let duration = Double((info["format"] as? [String: Any])?["duration"] as? String ?? "") ?? 0
        XCTAssertGreaterThanOrEqual(duration, 2.5)
        let (status, _, err) = try runTool("/usr/bin/ffmpeg", ["-v", "error", "-i", clip, "-fps_mode", "passthrough", "-f", "null", "-"])
        XCTAssertEqual(status, 0)
        XCTAssertEqual(err, "")
        try d.start()
        defer { d.stop() }
        let next = try XCTUnwrap(d.request(#"{"cmd":"capture"}"#)["path"] as? String)
        XCTAssertTrue(next.hasSuffix("LPX_0002.HEIC"), "\(next): the clip's number is not used again")
    }

    /// A finished clip is a saved file like a photo: `wait-saved` prints its path and the
    /// after-save command gets it, whole (ffmpeg decodes every frame of what the hook saw).
    func testAFinishedClipGoesToTheAfterSaveCommandAndToWaitingScripts() throws {
        let tools = try makeTempDirectory(self)
        let hook = tools + "/hook"
        try "#!/bin/bash\ncp \"$1\" \(tools)/seen.mp4\n".write(toFile: hook, atomically: true, encoding: .utf8)
        chmod(hook, 0o755)
        let d = try DaemonHarness(extraConfig: Self.video + #", "capture": { "afterSave": { "command": ["\#(hook)", "{path}"] } }"#)
        try d.start()
        defer { d.stop() }
        let (waiter, out) = try startWaitSaved(1, socket: d.socketPath)
        let clip = try XCTUnwrap(d.request(#"{"cmd":"record","action":"start"}"#)["path"] as? String)
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertTrue(waiter.isRunning, "a clip being recorded is not saved yet")
        _ = try d.request(#"{"cmd":"record","action":"stop"}"#)
        let deadline = Date().addingTimeInterval(30)
        while waiter.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(printed, clip + "\n")
        let status = try d.waitForStatus(timeout: 30) { ($0["afterSave"] as? [String: Any])?["succeeded"] as? Int == 1 }
        XCTAssertEqual((status["afterSave"] as? [String: Any])?["succeeded"] as? Int, 1, "\(status)\n\(d.log())")
        let (decoded, _, err) = try runTool("/usr/bin/ffmpeg", ["-v", "error", "-i", tools + "/seen.mp4", "-f", "null", "-"])
        XCTAssertEqual(decoded, 0)
        XCTAssertEqual(err, "", "the hook's copy is the whole clip")
    }

    /// SIGTERM while recording: the clip is finished (trailer written) before the daemon exits.
    func testSIGTERMFinishesTheClip() throws {
        let d = try DaemonHarness(extraConfig: Self.video)
        try d.start()
        let clip = try XCTUnwrap(d.request(#"{"cmd":"capture"}"#)["path"] as? String, "capture in photo mode first")
        XCTAssertTrue(clip.hasSuffix(".HEIC"))
        XCTAssertEqual(try d.request(#"{"cmd":"mode","value":"video"}"#)["ok"] as? Bool, true)
        let started = try d.request(#"{"cmd":"capture"}"#)
        XCTAssertEqual(started["recording"] as? Bool, true, "in video mode the shutter starts recording: \(started)")
        let path = try XCTUnwrap(started["path"] as? String)
        Thread.sleep(forTimeInterval: 2)
        XCTAssertEqual(d.stop(), 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertNotNil(bytes.suffix(64).range(of: Data("mfro".utf8)), "the trailer (mfra) is written: a complete, seekable file")
        let duration = Double((try probe(path)["format"] as? [String: Any])?["duration"] as? String ?? "") ?? 0
        XCTAssertEqual(duration, 2, accuracy: 0.5)
        XCTAssertTrue(d.log().contains("recording saved: \(path)"), d.log())
    }

    /// The storage filling up mid-recording ends the clip cleanly: it plays, nothing else is
    /// left behind, the daemon goes on and says why the recording stopped.
    func testAFullDiskEndsTheRecordingCleanly() throws {
        let d = try DaemonHarness(extraConfig: #""video": { "width": 640, "height": 480, "encoder": "libx264", "x264Preset": "ultrafast", "bitrateMbps": 3 }"#)
        try FileManager.default.createDirectory(atPath: d.photos, withIntermediateDirectories: true)
        guard mount("tmpfs", d.photos, "tmpfs", 0, "size=3m") == 0 else {
            throw XCTSkip("cannot mount a small tmpfs here (\(String(cString: strerror(errno))))")
        }
        defer { umount2(d.photos, Int32(MNT_DETACH)) }
        try d.start()
        defer { d.stop() }
        let clip = try XCTUnwrap(d.request(#"{"cmd":"record","action":"start"}"#)["path"] as? String)
        let ended = try d.waitForStatus(timeout: 30) { $0["recording"] as? Bool == false }
        XCTAssertEqual(ended["recording"] as? Bool, false, "the recording stopped by itself")
        XCTAssertTrue(d.log().contains("Storage full: recording stopped") || d.log().contains("storage full"), d.log())
        let folder = (clip as NSString).deletingLastPathComponent
        let left = try FileManager.default.contentsOfDirectory(atPath: folder)
        XCTAssertTrue(left.allSatisfy { $0 == "LPX_0001.MP4" }, "\(left)")
        if left.contains("LPX_0001.MP4") {
            let (status, _, err) = try runTool("/usr/bin/ffmpeg", ["-v", "error", "-i", clip, "-fps_mode", "passthrough", "-f", "null", "-"])
            XCTAssertEqual(status, 0)
            XCTAssertEqual(err, "")
        }
        XCTAssertEqual(try d.request(#"{"cmd":"status"}"#)["ok"] as? Bool, true, "still running")
    }

    /// A camera that stalls for three seconds mid-recording is restarted and the recording
    /// goes on: one clip, every frame decodable, as long as the time it covered.
    func testARecordingRidesOutACameraStall() throws {
        let d = try DaemonHarness(extraConfig: Self.video)
        try d.start()
        defer { d.stop() }
        let clip = try XCTUnwrap(d.request(#"{"cmd":"record","action":"start"}"#)["path"] as? String)
        let t0 = Date()
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertEqual(try d.request(#"{"cmd":"simulate","fault":"stall","seconds":3}"#)["ok"] as? Bool, true)
        Thread.sleep(forTimeInterval: 5)
        XCTAssertEqual(try d.request(#"{"cmd":"status"}"#)["recording"] as? Bool, true, "still recording after the stall: \(d.log(tail: 8))")
        XCTAssertEqual(try d.request(#"{"cmd":"record","action":"stop"}"#)["ok"] as? Bool, true)
        let recorded = Date().timeIntervalSince(t0)
        let duration = Double((try probe(clip)["format"] as? [String: Any])?["duration"] as? String ?? "") ?? 0
        XCTAssertEqual(duration, recorded, accuracy: 0.6)
        let (status, _, err) = try runTool("/usr/bin/ffmpeg", ["-v", "error", "-i", clip, "-fps_mode", "passthrough", "-f", "null", "-"])
        XCTAssertEqual(status, 0)
        XCTAssertEqual(err, "")
    }

    /// A microphone that is not there is a warning and a clip without sound, never a lost recording.
    func testAMissingMicrophoneGivesASilentClip() throws {
        let d = try DaemonHarness(extraConfig: #""video": { "width": 320, "height": 240, "encoder": "libx264", "x264Preset": "ultrafast", "audio": { "device": "hw:99,0" } }"#)
        try d.start()
        defer { d.stop() }
        let clip = try XCTUnwrap(d.request(#"{"cmd":"record","action":"start"}"#)["path"] as? String)
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertEqual(try d.request(#"{"cmd":"record","action":"stop"}"#)["ok"] as? Bool, true)
        XCTAssertTrue(d.log().contains("<4>microphone hw:99,0: cannot open it for recording"), d.log())
        let streams = (try probe(clip)["streams"] as? [[String: Any]]) ?? []
        XCTAssertEqual(streams.map { $0["codec_type"] as? String }, ["video"])
    }
}

/// Runs a program; its status, standard output and standard error.
func runTool(_ executable: String, _ arguments: [String]) throws -> (Int32, String, String) {
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
