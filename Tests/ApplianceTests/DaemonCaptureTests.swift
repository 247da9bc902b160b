@testable import Appliance
import FilmCore
import Foundation
import ImageFiles
import System
import XCTest
import Raster

/// The shutter as a booth guest or a street photographer uses it: bursts, and the photo's
/// formats (HEIC, JPEG, both), checked with exiftool where it is installed.
final class DaemonCaptureTests: XCTestCase {
    /// Ten presses as fast as a script can send them: every one answered within 100 ms, every
    /// accepted photo saved, refusals only for a full queue (here sized to 3).
    func testABurstIsAnsweredAtOnceAndLosesNothing() throws {
        let d = try DaemonHarness(stillWidth: 1920, stillHeight: 1080, extraConfig: #""capture": { "queueLength": 3 }"#)
        try d.start()
        defer { d.stop() }
        var accepted = 0, latencies: [Double] = []
        for _ in 0..<10 {
            let start = Date()
            let reply = try d.request(#"{"cmd":"capture"}"#)
            latencies.append(Date().timeIntervalSince(start))
            if reply["ok"] as? Bool == true {
                accepted += 1
            } else {
                XCTAssertEqual(reply["error"] as? String, "Busy: photo queue full", "\(reply)")
            }
        }
        XCTAssertGreaterThanOrEqual(accepted, 3, "the queue's three slots are used")
        // The still is taken and queued; developing and saving happen behind the reply.
        XCTAssertLessThan(latencies.max() ?? 0, 0.1, "shutter-to-ready per press (s): \(latencies)")
        let status = try d.waitForStatus(timeout: 120) { $0["saved"] as? Int == accepted && $0["queue"] as? Int == 0 }
        XCTAssertEqual(status["saved"] as? Int, accepted, d.log())
        XCTAssertEqual(status["queueCapacity"] as? Int, 3)
        let files = try FileManager.default.contentsOfDirectory(atPath: d.photos + "/DCIM/100LOOPX").filter { $0.hasSuffix(".HEIC") }
        XCTAssertEqual(files.count, accepted)
    }

    /// `capture.format: heic+jpeg`: both files under one number, Display P3 with its profile and
    /// the same EXIF in each, read back by exiftool (and by our decoders).
    func testHEICAndJPEGCarryTheSameLookProfileAndExif() throws {
        let d = try DaemonHarness(stillWidth: 640, stillHeight: 480, extraConfig: #""capture": { "format": "heic+jpeg", "jpegQuality": 88 }"#)
        try d.start()
        defer { d.stop() }
        let reply = try d.request(#"{"cmd":"capture"}"#)
        let heic = try XCTUnwrap(reply["path"] as? String, "\(reply)")
        XCTAssertTrue(heic.hasSuffix("/LPX_0001.HEIC"), heic)
        XCTAssertEqual(try d.waitForStatus { $0["saved"] as? Int == 1 }["saved"] as? Int, 1, d.log())
        let jpeg = (heic as NSString).deletingPathExtension + ".JPG"
        let fromHEIC = try ImageReader.readPhoto(path: heic), fromJPEG = try ImageReader.readPhoto(path: jpeg)
        XCTAssertEqual([fromJPEG.image.width, fromJPEG.image.height], [640, 480])
        let error = meanAbsoluteDifference(fromHEIC.image, fromJPEG.image)
        XCTAssertLessThan(error, 4, "the same developed photo in both files (mean difference \(error))")
        let heicTags = try ExifReader.tags(fromHEIC.exif ?? []), jpegTags = try ExifReader.tags(fromJPEG.exif ?? [])
        for tag in ["Software", "ImageDescription", "FocalLengthIn35mmFilm", "DateTimeOriginal", "Model"] {
            XCTAssertEqual(jpegTags[tag], heicTags[tag], tag)
        }
        guard let exiftool = ["/usr/bin/exiftool", "/usr/local/bin/exiftool"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("exiftool is not installed (scripts/setup installs libimage-exiftool-perl)")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exiftool)
        p.arguments = ["-s", "-ProfileDescription", "-ColorSpace", "-ImageDescription", "-Software", jpeg]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertTrue(text.contains("ProfileDescription              : Display P3"), text)
        XCTAssertTrue(text.contains("ColorSpace                      : Uncalibrated"), text)
        XCTAssertTrue(text.contains("Software                        : Loopix \(loopixVersion) (Kodak Portra 400)"), text)
    }

    func testJPEGAloneIsNumberedAsAPhoto() throws {
        let d = try DaemonHarness(extraConfig: #""capture": { "format": "jpeg" }"#)
        try d.start()
        defer { d.stop() }
        let path = try XCTUnwrap(try d.request(#"{"cmd":"capture"}"#)["path"] as? String)
        XCTAssertTrue(path.hasSuffix("/LPX_0001.JPG"), path)
        XCTAssertEqual(try d.waitForStatus { $0["saved"] as? Int == 1 }["saved"] as? Int, 1, d.log())
        XCTAssertEqual(try ImageReader.read(path: path).width, 320)
        let second = try XCTUnwrap(try d.request(#"{"cmd":"capture"}"#)["path"] as? String)
        XCTAssertTrue(second.hasSuffix("/LPX_0002.JPG"), second)
    }

    /// "auto": a Pi Zero 2 W keeps one 12 MP photo (two 8 MP ones), a 2 GB Pi 4 13, a big
    /// machine at most 32; never none.
    func testTheAutomaticQueueFollowsTheMemory() {
        let mb: Int64 = 1 << 20
        XCTAssertEqual(CaptureQueue.automaticCapacity(stillPixels: 4056 * 3040, memoryBytes: 427 * mb), 1)
        XCTAssertEqual(CaptureQueue.automaticCapacity(stillPixels: 3280 * 2464, memoryBytes: 427 * mb), 2)
        XCTAssertEqual(CaptureQueue.automaticCapacity(stillPixels: 4056 * 3040, memoryBytes: 1850 * mb), 13)
        XCTAssertEqual(CaptureQueue.automaticCapacity(stillPixels: 4608 * 2592, memoryBytes: 8000 * mb), 32)
        XCTAssertEqual(CaptureQueue.automaticCapacity(stillPixels: 4056 * 3040, memoryBytes: 100 * mb), 1, "never zero")
    }

    /// A service's MemoryMax (cgroup v2 memory.max), or a cgroup v1 memory limit, bounds what the
    /// queue counts on.
    func testTheCgroupLimitIsFound() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cg-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/root/system.slice/loopixd.service", withIntermediateDirectories: true)
        try "0::/system.slice/loopixd.service\n".write(toFile: dir + "/cgroup", atomically: true, encoding: .utf8)
        try "max\n".write(toFile: dir + "/root/system.slice/loopixd.service/memory.max", atomically: true, encoding: .utf8)
        XCTAssertNil(SystemMemory.cgroupLimit(selfCgroup: dir + "/cgroup", root: dir + "/root"))
        try "314572800\n".write(toFile: dir + "/root/system.slice/memory.max", atomically: true, encoding: .utf8)
        XCTAssertEqual(SystemMemory.cgroupLimit(selfCgroup: dir + "/cgroup", root: dir + "/root"), 300 << 20)
        XCTAssertGreaterThan(SystemMemory.limitBytes(), 64 << 20)

        // cgroup v1 (a container host): the memory hierarchy's memory.limit_in_bytes; its
        // "unlimited" is a number near 2⁶³.
        let v1 = dir + "/root/memory/docker/abc"
        try FileManager.default.createDirectory(atPath: v1, withIntermediateDirectories: true)
        try "12:pids:/docker/abc\n4:memory:/docker/abc\n0::/\n".write(toFile: dir + "/cgroup1", atomically: true, encoding: .utf8)
        try "9223372036854771712\n".write(toFile: v1 + "/memory.limit_in_bytes", atomically: true, encoding: .utf8)
        XCTAssertNil(SystemMemory.cgroupLimit(selfCgroup: dir + "/cgroup1", root: dir + "/root"))
        try "536870912\n".write(toFile: dir + "/root/memory/docker/memory.limit_in_bytes", atomically: true, encoding: .utf8)
        XCTAssertEqual(SystemMemory.cgroupLimit(selfCgroup: dir + "/cgroup1", root: dir + "/root"), 512 << 20)
    }

    private func meanAbsoluteDifference(_ a: RGBImage, _ b: RGBImage) -> Double {
        var sum = 0
        for i in 0..<min(a.pixels.count, b.pixels.count) { sum += abs(Int(a.pixels[i]) - Int(b.pixels[i])) }
        return Double(sum) / Double(max(1, a.pixels.count))
    }

    /// A script waits for its photos with `loopix ctl wait-saved 2`, started before they are
    /// taken: it prints their paths once both are complete. The after-save command gets each
    /// path, with the file whole on disk.
    func testScriptsWaitForSavedPhotosAndTheAfterSaveCommandGetsEachCompleteFile() throws {
        let tools = try makeTempDirectory(self)
        let hook = tools + "/hook"
        try "#!/bin/bash\necho \"$1 $(stat -c %s \"$1\")\" >> \(tools)/hooked\n".write(toFile: hook, atomically: true, encoding: .utf8)
        chmod(hook, 0o755)
        let d = try DaemonHarness(extraConfig: #""capture": { "afterSave": { "command": ["\#(hook)", "{path}"], "timeoutSeconds": 30 } }"#)
        try d.start()
        defer { d.stop() }

        let (waiter, out) = try startWaitSaved(2, socket: d.socketPath)
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertTrue(waiter.isRunning, "nothing saved yet: it waits")
        var taken: [String] = []
        for _ in 0..<2 {
            let reply = try d.request(#"{"cmd":"capture"}"#)
            taken.append(try XCTUnwrap(reply["path"] as? String, "\(reply)"))
        }
        let deadline = Date().addingTimeInterval(60)
        while waiter.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertFalse(waiter.isRunning, "answered once both are saved")
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(waiter.terminationStatus, 0)
        XCTAssertEqual(printed.split(separator: "\n").map(String.init), taken, "their paths, one a line")
        for path in taken { XCTAssertNoThrow(try ImageReader.read(path: path), "\(path) is complete when announced") }

        let status = try d.waitForStatus(timeout: 30) { ($0["afterSave"] as? [String: Any])?["succeeded"] as? Int == 2 }
        XCTAssertEqual((status["afterSave"] as? [String: Any])?["succeeded"] as? Int, 2, "\(status)\n\(d.log())")
        let lines = try String(contentsOfFile: tools + "/hooked", encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        for line in lines {
            let parts = line.split(separator: " ")
            let path = String(parts[0])
            XCTAssertTrue(taken.contains(path), "\(line)")
            let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
            XCTAssertEqual(Int(parts[1]), size, "the hook saw the whole file")
        }
    }

    /// `loopix ctl interval start 4 --every 1`: a photo a second; the daemon stopped after the
    /// second and started again 2.5 s later resumes the schedule from its file: no slot twice,
    /// the missed ones skipped, four slots in all.
    func testAnIntervalRunsItsCountAndResumesAfterARestart() throws {
        let d = try DaemonHarness()
        try d.start()
        let started = try d.ctl(["interval", "start", "4", "--every", "1"])
        XCTAssertEqual(started.status, 0, started.output)
        let two = try d.waitForStatus(timeout: 30) { ($0["interval"] as? [String: Any])?["taken"] as? Int == 2 }
        XCTAssertEqual((two["interval"] as? [String: Any])?["count"] as? Int, 4, "\(two)")
        XCTAssertEqual(d.stop(), 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: d.state + "/interval.json"), "the schedule is kept")
        Thread.sleep(forTimeInterval: 2.5)
        try d.start()
        defer { d.stop() }
        let status = try d.waitForStatus(timeout: 30) { $0["interval"] == nil && ($0["saved"] as? Int ?? 0) >= 1 }
        XCTAssertNil(status["interval"], "the schedule ran out: \(status)\n\(d.log())")
        let photos = try FileManager.default.contentsOfDirectory(atPath: d.photos + "/DCIM/100LOOPX").filter { $0.hasSuffix(".HEIC") }
        let log = d.log(tail: 200)
        XCTAssertTrue(log.contains("interval: resuming a photo every 1 s (2 taken"), log)
        let done = try XCTUnwrap(log.split(separator: "\n").last { $0.contains("interval: done") }, log)
        XCTAssertTrue(done.contains("\(photos.count) taken"), "every photo taken is counted once: \(done), \(photos.count) photos")
        XCTAssertGreaterThanOrEqual(photos.count, 2)
        XCTAssertLessThanOrEqual(photos.count, 4, "no slot shot twice: \(photos.sorted())")
        XCTAssertTrue(done.contains("\(4 - photos.count) skipped"), "\(done)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: d.state + "/interval.json"), "a finished schedule leaves no file")
        XCTAssertEqual(try d.ctl(["interval", "stop"]).status, 1, "nothing left to stop")
    }
}
