import Foundation
import Video
import XCTest
import ControlProtocol
@testable import Appliance

final class ConfigTests: XCTestCase {
    private func parse(_ json: String, source: String = "/etc/loopix/loopix.json") throws(ConfigError) -> Config {
        try Config.parse(Data(json.utf8), source: source)
    }

    private func error(_ json: String) -> String? {
        do { _ = try parse(json); return nil } catch { return error.description }
    }

    func testDefaults() throws {
        let c = Config.defaults
        XCTAssertEqual(c.board, "auto")
        XCTAssertEqual(c.camera.backend, .auto)
        XCTAssertFalse(c.camera.required)
        XCTAssertEqual(c.camera.simulatedStillWidth, 4056)
        XCTAssertEqual(c.camera.simulatedStillHeight, 3040)
        XCTAssertEqual(c.display.width, 800)
        XCTAssertEqual(c.display.height, 480)
        XCTAssertEqual(c.storage.directory, "/var/lib/loopix/photos")
        XCTAssertEqual(c.storage.reserveMB, 50)
        XCTAssertEqual(c.state.directory, "/var/lib/loopix")
        XCTAssertEqual(c.socket.path, "/run/loopix/control.sock")
        XCTAssertNil(c.socket.group)
        XCTAssertNil(c.license.publicKey)
        XCTAssertEqual(c.license.file, "/var/lib/loopix/license.json")
        XCTAssertNil(c.capture.queueLength, "auto: from the memory")
        XCTAssertEqual(c.capture.format, .heic)
        XCTAssertEqual(c.capture.heicQuality, 70)
        XCTAssertEqual(c.capture.jpegQuality, 90)
        XCTAssertEqual(c.capture.x265Preset, "ultrafast")
        // An empty object is the defaults too.
        var parsed = try parse("{}")
        parsed.source = c.source
        XCTAssertEqual(parsed, c)
    }

    func testValidFile() throws {
        let key = try KeyPair.generate().publicKey
        let hex = key.map { String(format: "%02x", $0) }.joined()
        let c = try parse("""
        { "board": "pi-zero-hat",
          "camera": { "backend": "simulated", "required": true, "simulatedStillWidth": 640, "simulatedStillHeight": 480, "photosDirectory": "samples" },
          "display": { "backend": "headless", "width": 1024, "height": 600 },
          "storage": { "directory": "/data/photos", "reserveMB": 0 },
          "state": { "directory": "/data/state" },
          "socket": { "path": "/tmp/x.sock", "group": "loopix" },
          "license": { "publicKey": "\(hex)", "file": "/data/license.json" },
          "defaults": { "preset": "trix400", "intensity": 70, "ev": -1.5, "handedness": "left", "grid": true },
          "capture": { "queueLength": 16, "format": "heic+jpeg", "heicQuality": 75, "jpegQuality": 85, "x265Preset": "medium" } }
        """, source: "/etc/loopix/loopix.json")
        XCTAssertEqual(c.board, "pi-zero-hat")
        XCTAssertEqual(c.camera.backend, .simulated)
        XCTAssertTrue(c.camera.required)
        XCTAssertEqual(c.camera.simulatedStillWidth, 640)
        XCTAssertEqual(c.camera.photosDirectory, "/etc/loopix/samples", "relative paths are relative to the file")
        XCTAssertEqual(c.display.backend, .headless)
        XCTAssertEqual(c.display.width, 1024)
        XCTAssertEqual(c.storage.reserveMB, 0)
        XCTAssertEqual(c.socket.group, "loopix")
        XCTAssertEqual(c.license.publicKey, key)
        XCTAssertEqual(c.defaults.preset, "trix400")
        XCTAssertEqual(c.defaults.intensity, 70)
        XCTAssertEqual(c.defaults.ev, -1.5)
        XCTAssertEqual(c.defaults.handedness, .left)
        XCTAssertTrue(c.defaults.grid)
        XCTAssertEqual(c.capture.queueLength, 16)
        XCTAssertEqual(c.capture.format, .heicAndJPEG)
        XCTAssertEqual(c.capture.jpegQuality, 85)
        XCTAssertEqual(c.capture.x265Preset, "medium")
        XCTAssertNil(try parse(#"{"capture": {"queueLength": "auto"}}"#).capture.queueLength)
        XCTAssertEqual(error(#"{"capture": {"queueLength": "lots"}}"#),
                       "/etc/loopix/loopix.json: capture.queueLength: must be a number from 1 to 64 or \"auto\", not \"lots\"")
        XCTAssertEqual(error(#"{"capture": {"format": "png"}}"#),
                       "/etc/loopix/loopix.json: capture.format: \"png\" is not one of \"heic\", \"jpeg\", \"heic+jpeg\"")
        // Base64 keys too.
        let b64 = try parse("{\"license\":{\"publicKey\":\"\(Data(key).base64EncodedString())\"}}")
        XCTAssertEqual(b64.license.publicKey, key)
    }

    func testUnknownKeysAreNamed() {
        XCTAssertEqual(error("{\"colour\": 1}"),
                       "/etc/loopix/loopix.json: colour: unknown field (allowed: board, boardsDirectory, presetsDirectory, mode, booth, gpio, imu, camera, display, storage, state, socket, license, defaults, capture, video, snapshot, web)")
        XCTAssertEqual(error("{\"display\": {\"widht\": 800}}")?.hasPrefix("/etc/loopix/loopix.json: display.widht: unknown field"), true)
    }

    func testOutOfRange() {
        XCTAssertEqual(error("{\"display\": {\"width\": 99999}}"),
                       "/etc/loopix/loopix.json: display.width: 99999 is out of range (allowed 160…3840)")
        XCTAssertEqual(error("{\"camera\": {\"simulatedStillHeight\": 10}}"),
                       "/etc/loopix/loopix.json: camera.simulatedStillHeight: 10 is out of range (allowed 64…8192)")
        XCTAssertEqual(error("{\"defaults\": {\"ev\": 4}}"),
                       "/etc/loopix/loopix.json: defaults.ev: 4 is out of range (allowed -3…3)")
        XCTAssertEqual(error("{\"capture\": {\"queueLength\": 0}}"),
                       "/etc/loopix/loopix.json: capture.queueLength: 0 is out of range (allowed 1…64)")
        XCTAssertEqual(error("{\"storage\": {\"reserveMB\": 10001}}"),
                       "/etc/loopix/loopix.json: storage.reserveMB: 10001 is out of range (allowed 0…10000)")
        XCTAssertEqual(error("{\"storage\": {\"reserveMB\": 1e30}}"),
                       "/etc/loopix/loopix.json: storage.reserveMB: 1e+30 is out of range (allowed 0…10000)", "whole, but too large")
        XCTAssertEqual(error("{\"storage\": {\"reserveMB\": -1e300}}"),
                       "/etc/loopix/loopix.json: storage.reserveMB: -1e+300 is out of range (allowed 0…10000)")
        XCTAssertEqual(error("{\"camera\": {\"backend\": \"v4l2\"}}"),
                       "/etc/loopix/loopix.json: camera.backend: \"v4l2\" is not one of \"auto\", \"libcamera\", \"simulated\"")
        XCTAssertEqual(error("{\"defaults\": {\"handedness\": \"both\"}}"),
                       "/etc/loopix/loopix.json: defaults.handedness: \"both\" is not one of \"left\", \"right\"")
        XCTAssertEqual(error("{\"capture\": {\"x265Preset\": \"turbo\"}}")?.contains("capture.x265Preset: \"turbo\" is not one of ultrafast"), true)
        XCTAssertEqual(error("{\"license\": {\"publicKey\": \"abcd\"}}"),
                       "/etc/loopix/loopix.json: license.publicKey: must be a 32-byte Ed25519 public key in base64 or hex")
    }

    func testWrongTypes() {
        XCTAssertEqual(error("{\"display\": {\"width\": \"800\"}}"), "/etc/loopix/loopix.json: display.width: must be a whole number, not a string")
        XCTAssertEqual(error("{\"display\": {\"width\": 800.5}}"), "/etc/loopix/loopix.json: display.width: 800.5 must be a whole number")
        XCTAssertEqual(error("{\"camera\": {\"required\": 1}}"), "/etc/loopix/loopix.json: camera.required: must be true or false, not a number")
        XCTAssertEqual(error("{\"display\": 3}"), "/etc/loopix/loopix.json: display: must be an object, not a number")
        XCTAssertEqual(error("{\"board\": true}"), "/etc/loopix/loopix.json: board: must be a string, not true or false")
        XCTAssertEqual(error("{\"defaults\": {\"grid\": \"yes\"}}"), "/etc/loopix/loopix.json: defaults.grid: must be true or false, not a string")
        XCTAssertEqual(error("[1,2]"), "/etc/loopix/loopix.json: not valid JSON: line 1, column 1: expected a JSON object ({…}), found an array")
        XCTAssertEqual(error("{nope"), "/etc/loopix/loopix.json: not valid JSON: line 1, column 2: expected a member name in double quotes, found 'n'")
        XCTAssertEqual(error("{\n  \"board\": \"pi4b\",\n}"), "/etc/loopix/loopix.json: not valid JSON: line 3, column 1: trailing comma before '}'", "a syntax error says where")
    }

    func testMissingFiles() throws {
        let dir = try makeTempDirectory(self)
        XCTAssertThrowsError(try Config.load(path: "\(dir)/nope.json")) { error in
            XCTAssertEqual((error as? ConfigError)?.description, "\(dir)/nope.json: no such file")
        }
        // A file that is there is read.
        try Data("{\"board\":\"x\"}".utf8).write(to: URL(fileURLWithPath: "\(dir)/c.json"))
        let c = try Config.load(path: "\(dir)/c.json")
        XCTAssertEqual(c.board, "x")
        XCTAssertEqual(c.source, "\(dir)/c.json")
        if !FileManager.default.fileExists(atPath: Config.defaultPath) {
            let d = try Config.load()
            XCTAssertEqual(d.board, "auto")
            XCTAssertEqual(d.notes.first, "/etc/loopix/loopix.json does not exist; using the built-in defaults")
        }
    }

    func testCameraBackendResolution() throws {
        var c = Config()
        XCTAssertEqual(try c.resolveCameraBackend(cameraPresent: true).backend, .libcamera)
        let fallback = try c.resolveCameraBackend(cameraPresent: false)
        XCTAssertEqual(fallback.backend, .simulated)
        XCTAssertNotNil(fallback.note, "auto says when it falls back")
        c.camera.required = true
        XCTAssertThrowsError(try c.resolveCameraBackend(cameraPresent: false))
        c.camera.backend = .libcamera
        c.camera.required = false
        XCTAssertThrowsError(try c.resolveCameraBackend(cameraPresent: false))
        c.camera.backend = .simulated
        XCTAssertEqual(try c.resolveCameraBackend(cameraPresent: true).backend, .simulated)
    }

    /// The booth's printing, flash and template: each a choice or a path, checked.
    func testBoothSection() throws {
        let c = try Config.parse(Data(#"{ "booth": { "print": "button", "flash": "session", "template": "frames/wedding.json" } }"#.utf8), source: "/etc/loopix/loopix.json")
        XCTAssertEqual(c.booth.print, .button)
        XCTAssertEqual(c.booth.flash, .session)
        XCTAssertEqual(c.booth.template, "/etc/loopix/frames/wedding.json", "relative to the configuration")
        XCTAssertEqual(Config.defaults.booth.print, .off)
        XCTAssertEqual(Config.defaults.booth.flash, .off)
        XCTAssertNil(Config.defaults.booth.template)
        XCTAssertThrowsError(try Config.parse(Data(#"{ "booth": { "print": "always" } }"#.utf8), source: "c.json")) { e in
            XCTAssertEqual("\(e)", #"c.json: booth.print: "always" is not one of "off", "auto", "button""#)
        }
        XCTAssertThrowsError(try Config.parse(Data(#"{ "booth": { "flash": true } }"#.utf8), source: "c.json")) { e in
            XCTAssertEqual("\(e)", #"c.json: booth.flash: must be one of "off", "exposure", "session""#)
        }
        XCTAssertThrowsError(try Config.parse(Data(#"{ "booth": { "template": "" } }"#.utf8), source: "c.json")) { e in
            XCTAssertEqual("\(e)", "c.json: booth.template: must not be empty")
        }
    }

    /// capture.afterSave: an argv list whose program is an absolute path; limits checked.
    func testAfterSaveSection() throws {
        let c = try Config.parse(Data(#"{ "capture": { "afterSave": { "command": ["/usr/bin/rclone", "copy", "{path}", "nas:"], "timeoutSeconds": 60, "running": 1, "waiting": 10 } } }"#.utf8), source: "c.json")
        let hook = try XCTUnwrap(c.capture.afterSave)
        XCTAssertEqual(hook.command, ["/usr/bin/rclone", "copy", "{path}", "nas:"])
        XCTAssertEqual([hook.timeoutSeconds, Double(hook.running), Double(hook.waiting)], [60, 1, 10])
        XCTAssertNil(Config.defaults.capture.afterSave)
        XCTAssertThrowsError(try Config.parse(Data(#"{ "capture": { "afterSave": { "command": ["rclone", "copy"] } } }"#.utf8), source: "c.json")) { e in
            XCTAssertEqual("\(e)", #"c.json: capture.afterSave.command: "rclone" must be an absolute path (no PATH search, no shell)"#)
        }
        XCTAssertThrowsError(try Config.parse(Data(#"{ "capture": { "afterSave": { "command": [] } } }"#.utf8), source: "c.json")) { e in
            XCTAssertTrue("\(e)".hasPrefix("c.json: capture.afterSave.command: "), "\(e)")
        }
        XCTAssertThrowsError(try Config.parse(Data(#"{ "capture": { "afterSave": { "command": ["/bin/true"], "running": 0 } } }"#.utf8), source: "c.json")) { e in
            XCTAssertEqual("\(e)", "c.json: capture.afterSave.running: 0 is out of range (allowed 1…8)")
        }
        XCTAssertThrowsError(try Config.parse(Data(#"{ "capture": { "afterSave": { "command": ["/bin/true"], "shell": true } } }"#.utf8), source: "c.json")) { e in
            XCTAssertTrue("\(e)".hasPrefix("c.json: capture.afterSave.shell: unknown field"), "\(e)")
        }
    }

    /// capture.interval: a schedule started with the daemon; times are ISO 8601 with an offset.
    func testIntervalSection() throws {
        let c = try Config.parse(Data(#"{ "capture": { "interval": { "everySeconds": 300, "count": 12, "start": "2026-12-24T06:00:00+01:00", "stop": "2026-12-24T18:00:00+01:00" } } }"#.utf8), source: "c.json")
        let s = try XCTUnwrap(c.capture.interval)
        XCTAssertEqual(s.everySeconds, 300)
        XCTAssertEqual(s.count, 12)
        XCTAssertEqual(s.start, 1_798_088_400)
        XCTAssertEqual(s.stop, 1_798_131_600)
        XCTAssertThrowsError(try Config.parse(Data(#"{ "capture": { "interval": { "everySeconds": 60, "start": "tomorrow" } } }"#.utf8), source: "c.json")) { e in
            XCTAssertTrue("\(e)".hasPrefix("c.json: capture.interval.start: \"tomorrow\" is not an ISO 8601 time"), "\(e)")
        }
        XCTAssertThrowsError(try Config.parse(Data(#"{ "capture": { "interval": { "count": 3 } } }"#.utf8), source: "c.json")) { e in
            XCTAssertEqual("\(e)", "c.json: capture.interval.everySeconds: is missing")
        }
    }

    /// The video section: defaults by board, every key checked.
    func testVideoSection() throws {
        let full = try Config.parse(Data(#"{ "video": { "width": 1280, "height": 720, "fps": 25, "bitrateMbps": 6, "encoder": "libx264", "x264Preset": "veryfast", "keyframeInterval": 2, "audio": { "device": "plughw:1,0", "channels": 2 } } }"#.utf8), source: "v.json")
        let v = full.videoSettings
        XCTAssertEqual([v.width, v.height, v.framesPerSecond, v.bitrate], [1280, 720, 25, 6_000_000])
        XCTAssertEqual(v.encoder, .libx264)
        XCTAssertEqual(v.x264Preset, "veryfast")
        XCTAssertEqual(v.keyframeInterval, 2)
        XCTAssertEqual(v.audio?.device, "plughw:1,0")
        XCTAssertEqual(v.audio?.channels, 2)
        // Defaults: 1080p30 at 16 Mbit/s, no sound; 720p on the boards too slow for 1080p.
        let standard = Config.defaults.videoSettings
        XCTAssertEqual([standard.width, standard.height, standard.framesPerSecond, standard.bitrate], [1920, 1080, 30, 16_000_000])
        XCTAssertNil(standard.audio)
        XCTAssertEqual(standard.encoder, .auto)
        var zero = Config.defaults
        zero.board = "pi-zero-2w"
        XCTAssertEqual([zero.videoSettings.width, zero.videoSettings.height], [1280, 720])
        XCTAssertEqual(zero.videoSettings.bitrate, 7_111_111)
        let silent = try Config.parse(Data(#"{ "video": { "audio": { "enabled": false, "device": "hw:1" } } }"#.utf8), source: "v.json")
        XCTAssertNil(silent.videoSettings.audio)
        XCTAssertEqual(error(#"{"video": {"width": 1281, "height": 720}}"#), "/etc/loopix/loopix.json: video.width: 1281 must be even (4:2:0 video)")
        XCTAssertEqual(error(#"{"video": {"width": 1280}}"#), "/etc/loopix/loopix.json: video.height: is missing (give both or neither)")
        XCTAssertEqual(error(#"{"video": {"fps": 120}}"#), "/etc/loopix/loopix.json: video.fps: 120 is out of range (allowed 1…60)")
        XCTAssertEqual(error(#"{"video": {"encoder": "nvenc"}}"#),
                       "/etc/loopix/loopix.json: video.encoder: \"nvenc\" is not one of \"auto\", \"v4l2m2m\", \"libx264\"")
        XCTAssertEqual(error(#"{"video": {"audio": {"device": ""}}}"#), "/etc/loopix/loopix.json: video.audio.device: must not be empty")
    }


    /// A default look that does not exist, and photo or state directories that are files, are
    /// problems named by their key (what `--check-config` reports and the daemon stops on).
    func testLooksAndDirectoriesThatCannotBe() throws {
        let dir = try makeTempDirectory(self)
        FileManager.default.createFile(atPath: dir + "/file", contents: Data("x".utf8))
        var config = try parse("""
            { "defaults": { "preset": "no-such-look" }, "presetsDirectory": "\(dir)/looks",
              "storage": { "directory": "\(dir)/file" }, "state": { "directory": "\(dir)/file/state" } }
            """)
        XCTAssertEqual(config.presetProblem(lookIDs: ["portra", "clean"]),
                       "/etc/loopix/loopix.json: defaults.preset: there is no look \"no-such-look\" (built in, or a preset in \(dir)/looks)")
        XCTAssertEqual(config.directoryProblems(), [
            "/etc/loopix/loopix.json: storage.directory: \(dir)/file is a file, not a directory",
            "/etc/loopix/loopix.json: state.directory: \(dir)/file is a file, not a directory",
        ])
        let problems = config.environmentProblems()
        XCTAssertEqual(problems.count, 3, "\(problems)")
        XCTAssertTrue(problems.contains { $0.contains("defaults.preset") })
        config.defaults.preset = "portra"
        config.storage.directory = dir + "/photos/new"
        config.state.directory = dir
        XCTAssertNil(config.presetProblem(lookIDs: ["portra"]))
        XCTAssertEqual(config.environmentProblems(), [], "a directory that does not exist yet is made at start")
    }

    /// A gallery whose address for phones is this machine's loopback is warned about: no phone
    /// can follow its QR codes.
    func testALoopbackGalleryAddressIsAWarning() throws {
        let loopback = try parse(#"{ "web": { "enabled": true, "address": "127.0.0.1" } }"#)
        XCTAssertEqual(loopback.warnings, ["/etc/loopix/loopix.json: web.address: 127.0.0.1 is this camera's loopback address: no phone can "
            + "reach the gallery, and the QR codes carry it; listen on 0.0.0.0 (every interface) or set web.url"])
        XCTAssertEqual(try parse(#"{ "web": { "enabled": true, "address": "::1" } }"#).warnings.count, 1)
        XCTAssertEqual(try parse(#"{ "web": { "enabled": true, "url": "http://localhost:8080" } }"#).warnings,
                       ["/etc/loopix/loopix.json: web.url: http://localhost:8080/ is this camera's loopback address: no phone can open it, "
                        + "and the QR codes carry it; give the address phones reach"])
        XCTAssertEqual(try parse(#"{ "web": { "enabled": true, "url": "http://[::1]:80/" } }"#).warnings.count, 1)
        // Told where phones reach it, listening on loopback behind a proxy is fine.
        XCTAssertEqual(try parse(#"{ "web": { "enabled": true, "address": "127.0.0.1", "url": "http://camera.local/" } }"#).warnings, [])
        XCTAssertEqual(try parse(#"{ "web": { "enabled": true } }"#).warnings, [])
        XCTAssertEqual(try parse(#"{ "web": { "enabled": false, "address": "127.0.0.1" } }"#).warnings, [])
    }
}
