import ControlProtocol
import Viewfinder
import Appliance
import Display
import FilmCore
import Foundation
import ImageFiles
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The daemon end to end on simulated devices: the real `loopixd` process, driven over its
/// control socket, checked through the files it writes and the frames it shows.
final class DaemonEndToEndTests: XCTestCase {
    func testPhotosThroughTheSocketAreFullResolutionP3HEICsWithTheLook() throws {
        let d = try DaemonHarness()
        try d.start()
        defer { d.stop() }
        XCTAssertEqual(try d.request(#"{"cmd":"lens","index":1}"#)["label"] as? String, "26 mm")
        XCTAssertEqual(try d.request(#"{"cmd":"ev","value":0.7}"#)["ev"] as? Double ?? 0, 2.0 / 3, accuracy: 1e-9, "snapped to thirds")
        XCTAssertEqual(try d.request(#"{"cmd":"preset","name":"portra"}"#)["ok"] as? Bool, true)
        XCTAssertEqual(try d.request(#"{"cmd":"intensity","value":70}"#)["intensity"] as? Int, 70)
        var paths: [String] = []
        for _ in 0..<3 {
            let reply = try d.request(#"{"cmd":"capture"}"#)
            XCTAssertEqual(reply["ok"] as? Bool, true, "\(reply)")
            if let path = reply["path"] as? String { paths.append(path) }
        }
        XCTAssertEqual(paths, (1...3).map { d.photos + "/DCIM/100LOOPX/LPX_000\($0).HEIC" })
        let status = try d.waitForStatus { $0["saved"] as? Int == 3 && $0["queue"] as? Int == 0 }
        XCTAssertEqual(status["saved"] as? Int, 3, d.log())
        for path in paths {
            let info = try HEICInfo.read(path: path)
            XCTAssertEqual(info.width, 320)
            XCTAssertEqual(info.height, 240)
            XCTAssertEqual(info.nclxPrimaries, 12)
            XCTAssertEqual(ICCProfile.description(info.iccProfile ?? []), "Display P3")
            let tags = try ExifReader.tags(info.exif ?? [])
            XCTAssertEqual(tags["ImageDescription"], "Kodak Portra 400")
            XCTAssertEqual(tags["FocalLengthIn35mmFilm"], "26", "\(tags)")
            XCTAssertNotNil(tags["ExposureTime"])
        }
        XCTAssertEqual(status["preset"] as? String, "portra")
        XCTAssertEqual(status["lens"] as? Int, 1)
    }

    func testSnapshotShowsTheGridAndThePresetNameWhereTheyBelong() throws {
        let d = try DaemonHarness()
        try d.start()
        defer { d.stop() }
        _ = try d.request(#"{"cmd":"preset","name":"trix400"}"#)
        _ = try d.request(#"{"cmd":"grid","value":true}"#)
        _ = try d.request(#"{"cmd":"handedness","value":"right"}"#)
        Thread.sleep(forTimeInterval: 2)   // the look compiles in the background
        let file = d.directory + "/snap.png"
        XCTAssertEqual(try d.request(#"{"cmd":"snapshot","path":"\#(file)"}"#)["ok"] as? Bool, true)
        let shot = try ImageReader.read(path: file)
        XCTAssertEqual(shot.width, 480)
        XCTAssertEqual(shot.height, 320)
        var model = OverlayModel.camera(presetName: "Kodak Tri-X 400", isPro: true, lensLabel: "13 mm")
        model.grid = true
        let layout = OverlayRenderer.layout(for: model, width: 480, height: 320)
        // The grid: along x = w/3 the pixels are lighter than 3 px beside it, on average.
        var onLine = 0, beside = 0
        for y in stride(from: 0, to: 320, by: 2) {
            onLine += Int(shot[160, y].x) + Int(shot[320, y].x)
            beside += Int(shot[157, y].x) + Int(shot[323, y].x)
        }
        XCTAssertGreaterThan(onLine, beside + 160 * 10, "grid lines at the thirds")
        // The preset name: white text with a dark outline inside its rectangle.
        let rect = try XCTUnwrap(layout.presetName)
        var white = 0, dark = 0
        for y in rect.y..<(rect.y + rect.height) {
            for x in rect.x..<(rect.x + rect.width) {
                let p = shot[x, y]
                if p.x > 230 && p.y > 230 && p.z > 230 { white += 1 }
                if p.x < 25 && p.y < 25 && p.z < 25 { dark += 1 }
            }
        }
        XCTAssertGreaterThan(white, 60, "name text drawn in \(rect)")
        XCTAssertGreaterThan(dark, 60, "its outline")
    }

    func testSettingsSurviveARestart() throws {
        let d = try DaemonHarness()
        try d.start()
        for line in [#"{"cmd":"preset","name":"hp5"}"#, #"{"cmd":"intensity","value":40}"#, #"{"cmd":"lens","index":2}"#,
                     #"{"cmd":"ev","value":-1}"#, #"{"cmd":"grid","value":true}"#, #"{"cmd":"handedness","value":"left"}"#] {
            XCTAssertEqual(try d.request(line)["ok"] as? Bool, true, line)
        }
        XCTAssertEqual(d.stop(), 0)
        try d.start()
        defer { d.stop() }
        let s = try d.request(#"{"cmd":"status"}"#)
        XCTAssertEqual(s["preset"] as? String, "hp5")
        XCTAssertEqual(s["intensity"] as? Int, 40)
        XCTAssertEqual(s["lens"] as? Int, 2)
        XCTAssertEqual(s["ev"] as? Double, -1)
        XCTAssertEqual(s["grid"] as? Bool, true)
        XCTAssertEqual(s["handedness"] as? String, "left")
        XCTAssertEqual(s["onboardingDone"] as? Bool, true)
    }

    func testACorruptSettingsFileFallsBackToDefaults() throws {
        let d = try DaemonHarness()
        try FileManager.default.createDirectory(atPath: d.state, withIntermediateDirectories: true)
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: d.state + "/settings.json"))
        try d.start()
        defer { d.stop() }
        let s = try d.request(#"{"cmd":"status"}"#)
        XCTAssertEqual(s["preset"] as? String, "portra", "the default look")
        XCTAssertEqual(s["onboardingDone"] as? Bool, false)
        let moved = try FileManager.default.contentsOfDirectory(atPath: d.state).filter { $0.hasPrefix("settings.json.bad") }
        XCTAssertEqual(moved.count, 1, "the corrupt file is kept aside")
        XCTAssertTrue(d.log().contains("<4>"), "a warning in the log:\n\(d.log())")
    }

    func testACameraStallIsRecovered() throws {
        let d = try DaemonHarness()
        try d.start()
        defer { d.stop() }
        XCTAssertEqual(try d.request(#"{"cmd":"simulate","fault":"stall","seconds":4}"#)["ok"] as? Bool, true)
        let down = try d.waitForStatus(timeout: 20) { ($0["camera"] as? String) != "ok" }
        XCTAssertNotEqual(down["camera"] as? String, "ok", "the stall is noticed")
        let up = try d.waitForStatus(timeout: 40) { ($0["camera"] as? String) == "ok" }
        XCTAssertEqual(up["camera"] as? String, "ok", "and recovered from:\n\(d.log())")
        XCTAssertEqual(try d.request(#"{"cmd":"capture"}"#)["ok"] as? Bool, true)
        XCTAssertTrue(d.log().contains("restarting"), d.log())
    }

    func testAFullQueueRefusesTheShutterOutLoud() throws {
        let d = try DaemonHarness(stillWidth: 1600, stillHeight: 1200, extraConfig: #""capture": { "queueLength": 1 }"#)
        try d.start()
        defer { d.stop() }
        let replies = try (0..<4).map { _ in try d.request(#"{"cmd":"capture"}"#) }
        XCTAssertEqual(replies[0]["ok"] as? Bool, true)
        let refused = replies.filter { $0["ok"] as? Bool == false }
        XCTAssertFalse(refused.isEmpty, "with one slot, rapid shots are refused")
        for r in refused { XCTAssertEqual(r["error"] as? String, "Busy: photo queue full") }
        let accepted = replies.count - refused.count
        XCTAssertEqual(try d.waitForStatus { $0["saved"] as? Int == accepted }["saved"] as? Int, accepted)
    }

    func testSIGTERMWithThreeQueuedPhotosFinishesAllThree() throws {
        let d = try DaemonHarness(stillWidth: 1600, stillHeight: 1200, extraConfig: #""capture": { "queueLength": 3 }"#)
        try d.start()
        for _ in 0..<3 { XCTAssertEqual(try d.request(#"{"cmd":"capture"}"#)["ok"] as? Bool, true) }
        let queued = try d.request(#"{"cmd":"status"}"#)["queue"] as? Int ?? 0
        XCTAssertGreaterThan(queued, 0, "photos still queued when the signal comes")
        XCTAssertEqual(d.stop(), 0)
        for n in 1...3 {
            let info = try HEICInfo.read(path: d.photos + "/DCIM/100LOOPX/LPX_000\(n).HEIC")
            XCTAssertEqual(info.width, 1600)
        }
        XCTAssertTrue(d.log().contains("finishing"), d.log())
    }

    func testTenThousandMalformedRequestsLeaveItAliveAndResponsive() throws {
        let d = try DaemonHarness()
        try d.start()
        defer { d.stop() }
        var rng = SystemRandomNumberGenerator()
        let samples = ["{", "}", "null", "[]", #"{"cmd":42}"#, #"{"cmd":"preset"}"#, #"{"cmd":"ev","value":"x"}"#,
                       #"{"cmd":"ev","value":99}"#, #"{"cmd":"lens","index":-1}"#, #"{"cmd":"warp"}"#, "\u{00}\u{ff}",
                       String(repeating: "a", count: 5000), #"{"cmd":"snapshot","path":"/nonexistent/dir/x.png"}"#]
        var sent = 0
        while sent < 10_000 {
            // A connection per 100 lines: each gets a mix of fixed and random garbage.
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var addr = sockaddr_un()
            addr.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &addr.sun_path) { raw in
                for (i, b) in d.socketPath.utf8.enumerated() { raw[i] = b }
            }
            _ = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            var batch: [UInt8] = []
            for _ in 0..<100 {
                if Bool.random(using: &rng) {
                    batch += Array(samples.randomElement(using: &rng)!.utf8)
                } else {
                    batch += (0..<Int.random(in: 0..<200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }.filter { $0 != 10 }
                }
                batch.append(10)
            }
            _ = batch.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            close(fd)
            sent += 100
        }
        let status = try d.request(#"{"cmd":"status"}"#)
        XCTAssertEqual(status["ok"] as? Bool, true, d.log())
        XCTAssertEqual(try d.request(#"{"cmd":"preset","name":"mono"}"#)["ok"] as? Bool, true)
        XCTAssertEqual(try d.request(#"{"cmd":"ev","value":99}"#)["ok"] as? Bool, false, "out of range is refused")
    }

    func testStorageFullIsReportedAndTheDaemonKeepsRunning() throws {
        let d = try DaemonHarness(extraConfig: "")
        // A 1 MB filesystem for the photos, filled up.
        try FileManager.default.createDirectory(atPath: d.photos, withIntermediateDirectories: true)
        guard mount("tmpfs", d.photos, "tmpfs", 0, "size=1m") == 0 else {
            throw XCTSkip("cannot mount a small tmpfs here (\(String(cString: strerror(errno))))")
        }
        defer { umount2(d.photos, Int32(MNT_DETACH)) }
        _ = FileManager.default.createFile(atPath: d.photos + "/filler", contents: Data(count: 1024 * 1024 - 4096))
        // Reserve 1 MB: the shutter is refused before anything is written.
        var config = try String(contentsOfFile: d.configPath, encoding: .utf8)
        config = config.replacingOccurrences(of: #""reserveMB": 0"#, with: #""reserveMB": 1"#)
        try config.write(toFile: d.configPath, atomically: true, encoding: .utf8)
        try d.start()
        defer { d.stop() }
        XCTAssertEqual(try d.request(#"{"cmd":"capture"}"#)["error"] as? String, "Storage full")
        // No reserve (reloaded with SIGHUP): the write itself runs out of space; the photo is
        // reported lost, nothing half-written stays under its name, the daemon goes on.
        config = config.replacingOccurrences(of: #""reserveMB": 1"#, with: #""reserveMB": 0"#)
        try config.write(toFile: d.configPath, atomically: true, encoding: .utf8)
        kill(d.process!.processIdentifier, SIGHUP)
        Thread.sleep(forTimeInterval: 1)
        let reply = try d.request(#"{"cmd":"capture"}"#)
        if reply["ok"] as? Bool == true, let path = reply["path"] as? String {
            _ = try d.waitForStatus(timeout: 30) { $0["queue"] as? Int == 0 }
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "no partial file under the final name")
            XCTAssertTrue(d.log().contains("photo lost"), d.log())
        } else {
            XCTAssertNotNil(reply["error"] as? String)
        }
        XCTAssertEqual(try d.request(#"{"cmd":"status"}"#)["ok"] as? Bool, true, "still running")
        XCTAssertTrue(d.log().contains("<4>shutter refused: storage full"), "a refusal is one warning line:\n\(d.log())")
    }
}

/// The look, the license and the watermark, end to end.
final class DaemonLookTests: XCTestCase {

    /// The daemon's photo has the look `loopix develop` gives the same still (kept as PNG):
    /// the same mean colour within 2 levels (grain frames differ, HEIC is lossy), and clearly
    /// not the original's.
    func testAPhotoHasThePresetsLookAsLoopixDevelopGivesIt() throws {
        let d = try DaemonHarness(extraConfig: #""capture": { "keepOriginal": true }"#)
        try d.start()
        defer { d.stop() }
        // A free look: Pro looks carry the watermark while unlicensed.
        _ = try d.request(#"{"cmd":"preset","name":"portra"}"#)
        _ = try d.request(#"{"cmd":"intensity","value":80}"#)
        let path = try XCTUnwrap(d.request(#"{"cmd":"capture"}"#)["path"] as? String)
        try d.waitForStatus { $0["saved"] as? Int == 1 }
        let original = (path as NSString).deletingPathExtension + ".PNG"
        let developed = d.directory + "/developed.heic"
        let loopix = DaemonHarness.loopix
        let p = Process()
        p.executableURL = URL(fileURLWithPath: loopix)
        p.arguments = ["develop", original, "-p", "portra", "-i", "80", "-o", developed, "--presets-dir", d.directory]
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        let daemonPhoto = means(try ImageReader.read(path: path))
        let cliPhoto = means(try ImageReader.read(path: developed))
        let still = means(try ImageReader.read(path: original))
        for c in 0..<3 {
            XCTAssertEqual(daemonPhoto[c], cliPhoto[c], accuracy: 2, "channel \(c): the same look")
        }
        XCTAssertGreaterThan(abs(daemonPhoto.x - still.x) + abs(daemonPhoto.z - still.z), 6, "and not the original")
    }

    func testProLooksAreWatermarkedUntilALicenseIsInstalled() throws {
        let keys = try KeyPair.generate()
        let unlicensed = try DaemonHarness()
        try unlicensed.start()
        _ = try unlicensed.request(#"{"cmd":"preset","name":"velvia50"}"#)
        XCTAssertEqual(try unlicensed.request(#"{"cmd":"status"}"#)["watermark"] as? Bool, true)
        _ = try unlicensed.request(#"{"cmd":"preset","name":"portra"}"#)
        XCTAssertEqual(try unlicensed.request(#"{"cmd":"status"}"#)["watermark"] as? Bool, false, "free looks never are")
        unlicensed.stop()

        let key = LicenseKeys.encode(keys.publicKey)
        let d = try DaemonHarness(extraConfig: #""license": { "publicKey": "\#(key)", "file": "license.json" }"#)
        try Data(try License.issue(licensee: "Test Booth", features: ["pro"], secretKey: keys.secretKey))
            .write(to: URL(fileURLWithPath: d.directory + "/license.json"))
        try d.start()
        defer { d.stop() }
        _ = try d.request(#"{"cmd":"preset","name":"velvia50"}"#)
        let status = try d.request(#"{"cmd":"status"}"#)
        XCTAssertEqual(status["licensed"] as? Bool, true, d.log())
        XCTAssertEqual(status["watermark"] as? Bool, false)
        XCTAssertTrue(d.log().contains("licensed to Test Booth"))
    }
}
