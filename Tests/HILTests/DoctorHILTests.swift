import BoardIO
import Foundation
import XCTest

/// `loopix doctor` on the bench's real drivers: vimc (libcamera), vkms (DRM), gpio-sim with
/// one line held by another consumer, i2c-stub answering as an MPU-6050. A board file for the
/// bench is found through `"board": "auto"` from a device-tree model file.
final class DoctorHILTests: XCTestCase {
    private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    func testDoctorFindsTheBenchAndNamesTheHeldLine() throws {
        let chip = try Bench.value("LOOPIX_HIL_GPIO_CHIP"), bus = try Bench.value("LOOPIX_HIL_I2C_BUS")
        try Bench.require("/dev/media0")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("doctor-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir + "/boards", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }

        // The bench as a board: gpio-sim's lines by name, i2c-stub's bus.
        var pins: [String] = []
        for name in ["shutter-left", "shutter-right", "encoder-a", "encoder-b", "encoder-switch", "mode", "lens", "filter", "ae-lock", "af-lock"] {
            pins.append("\"\(name)\": \(try GPIOChipInfo.findLine(named: name).offset)")
        }
        try """
        { "id": "bench", "name": "Loopix HIL bench", "models": ["Loopix bench VM"], "gpioChip": ["/dev/\(chip)"],
          "pins": { \(pins.joined(separator: ", ")) }, "i2cBus": \(bus), "display": "virtual",
          "configTxt": ["dtparam=i2c_arm=on", "dtoverlay=vc4-kms-v3d", "camera_auto_detect=1"] }
        """.write(toFile: dir + "/boards/bench.json", atomically: true, encoding: .utf8)
        try Data("Loopix bench VM rev 1\0".utf8).write(to: URL(fileURLWithPath: dir + "/model"))
        try "dtoverlay=vc4-kms-v3d\ncamera_auto_detect=1\n".write(toFile: dir + "/config.txt", atomically: true, encoding: .utf8)
        try """
        { "board": "auto", "boardsDirectory": "\(dir)/boards",
          "camera": { "backend": "libcamera", "required": true },
          "display": { "backend": "kms", "mode": "640x480", "width": 320, "height": 240 },
          "storage": { "directory": "\(dir)/photos", "reserveMB": 0 }, "state": { "directory": "\(dir)/state" },
          "socket": { "path": "\(dir)/control.sock" } }
        """.write(toFile: dir + "/loopix.json", atomically: true, encoding: .utf8)
        setenv("LOOPIX_DEVICE_TREE_MODEL", dir + "/model", 1)
        setenv("LOOPIX_BOOT_CONFIG", dir + "/config.txt", 1)
        defer {
            unsetenv("LOOPIX_DEVICE_TREE_MODEL")
            unsetenv("LOOPIX_BOOT_CONFIG")
        }

        // Another program holds the "filter" line.
        let filter = try GPIOChipInfo.findLine(named: "filter")
        var holder: GPIOLines? = try GPIOLines(chip: filter.chip, offsets: [filter.offset], consumer: "hil-holder")
        let held = try doctor(dir)
        XCTAssertEqual(held.status, 1, "a held line is a problem: \(held.text)")
        let findings = held.findings
        func has(_ level: String, _ area: String, _ message: (String) -> Bool) -> Bool {
            findings.contains { $0["level"] == level && $0["area"] == area && message($0["message"] ?? "") }
        }
        XCTAssertTrue(has("ok", "board") { $0 == "Loopix HIL bench: Loopix bench VM rev 1 → bench (auto)" }, held.text)
        XCTAssertTrue(has("warning", "config.txt") { $0.contains("lacks \"dtparam=i2c_arm=on\"") }, held.text)
        XCTAssertTrue(has("ok", "camera") { !$0.isEmpty }, "vimc's sensor is listed: \(held.text)")
        XCTAssertTrue(has("ok", "display") { $0.contains("(vkms)") && $0.contains("connected") }, held.text)
        XCTAssertTrue(has("problem", "gpio") { $0 == "line \(filter.offset) (filter) is in use by \"hil-holder\"" }, held.text)
        XCTAssertEqual(findings.filter { $0["area"] == "gpio" && $0["message"]?.hasSuffix(": free") == true }.count, 9, held.text)
        XCTAssertTrue(has("ok", "imu") { $0.hasPrefix("MPU-6050 at 0x68 on i2c-\(bus) (WHO_AM_I 0x68") }, held.text)
        // The bench's tmpfs may hold fewer than 100 of vimc's 4096×2160 photos: ok or a warning.
        XCTAssertTrue(has("ok", "storage") { $0.hasPrefix("\(dir)/photos: ") } || has("warning", "storage") { $0.hasPrefix("\(dir)/photos: ") }, held.text)
        XCTAssertTrue(has("info", "service") { $0.hasPrefix("loopixd is not running") }, held.text)

        // The line freed and loopixd running on it all: everything required is there, and the
        // daemon's own lines say so.
        holder = nil
        _ = holder
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: root + "/.build/debug/loopixd")
        // The daemon headless and small (it is the doctor that checks the screen), so that its
        // first frame comes quickly under emulation.
        let config = try String(contentsOfFile: dir + "/loopix.json", encoding: .utf8)
            .replacingOccurrences(of: #""backend": "kms", "mode": "640x480","#, with: #""backend": "headless","#)
        XCTAssertTrue(config.contains(#""backend": "headless""#), config)
        try config.write(toFile: dir + "/daemon.json", atomically: true, encoding: .utf8)
        daemon.arguments = ["--config", dir + "/daemon.json"]
        try daemon.run()
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        // Until the daemon answers and its camera delivers (slow under emulation).
        let up = Date().addingTimeInterval(150)
        while Date() < up, !FileManager.default.fileExists(atPath: dir + "/control.sock") { Thread.sleep(forTimeInterval: 0.5) }
        var running = try doctor(dir)
        while Date() < up, !running.findings.contains(where: { $0["area"] == "camera" && $0["level"] == "ok" }) {
            Thread.sleep(forTimeInterval: 1)
            running = try doctor(dir)
        }
        XCTAssertEqual(running.status, 0, running.text)
        XCTAssertTrue(running.findings.contains { $0["area"] == "camera" && $0["level"] == "ok" && $0["message"]?.hasPrefix("in use by the running loopixd: Sensor B") == true },
                      "the daemon's camera, as it says (the doctor leaves libcamera alone while it runs): \(running.text)")
        XCTAssertEqual(running.findings.filter { $0["area"] == "gpio" && $0["message"]?.hasSuffix(": in use by loopixd") == true }.count, 10, running.text)
        XCTAssertTrue(running.findings.contains { $0["area"] == "service" && $0["message"]?.hasPrefix("loopixd answers on \(dir)/control.sock") == true }, running.text)
    }

    /// `loopix doctor --json --config DIR/loopix.json`: exit status, text, findings.
    func doctor(_ dir: String) throws -> (status: Int32, text: String, findings: [[String: String]]) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: root + "/.build/debug/loopix")
        p.arguments = ["doctor", "--json", "--config", dir + "/loopix.json"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let findings = (object?["findings"] as? [[String: Any]] ?? []).map { $0.compactMapValues { $0 as? String } }
        return (p.terminationStatus, text, findings)
    }
}
