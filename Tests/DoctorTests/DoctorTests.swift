import Appliance
import BoardIO
import Camera
import Display
@testable import Doctor
import Foundation
import StrictJSON
import System
import XCTest

/// A machine whose every answer the test sets: by default a healthy Pi 5 camera.
final class FakeMachine: Machine {
    var lenses: Result<[Lens], MachineError> = .success([
        Lens(id: "/base/axi/pcie@120000/rp1/i2c@88000/imx708@1a", sensorModel: "imx708", focalLength: 4.74, focalLength35mm: 28,
             stillWidth: 4608, stillHeight: 2592),
    ])
    var boot: (path: String, text: String)? = ("/boot/firmware/config.txt", """
        # Raspberry Pi OS
        dtparam=audio=on
        camera_auto_detect=1
        display_auto_detect=1
        dtoverlay=vc4-kms-v3d
        dtparam=i2c_arm=on
        [cm4]
        otg_mode=1
        [all]
        arm_64bit=1
        """)
    var cards = [DRMCardSurvey(path: "/dev/dri/card1", driver: "vc4", connectors: [
        .init(name: "DSI-1", connected: true, isWriteback: false, modes: ["800x480@60"]),
        .init(name: "HDMI-A-1", connected: false, isWriteback: false, modes: []),
        .init(name: "Writeback-1", connected: false, isWriteback: true, modes: []),
    ])]
    var chip: Result<GPIOChipInfo, MachineError> = .success(GPIOChipInfo(path: "/dev/gpiochip0", label: "pinctrl-rp1", lineCount: 54))
    var heldLines: [Int: String] = [:]
    var imuAnswers: Result<[IMUAnswer], MachineError> = .success([
        IMUAnswer(address: 0x68, chip: .mpu6050, register75: 0x68, register0F: 0x00),
        IMUAnswer(address: 0x69, chip: nil, register75: nil, register0F: nil),
    ])
    var storageFacts = StorageFacts(kind: .directory, freeBytes: 20_000_000_000, owner: "loopix")
    var status: Result<String, DaemonUnreachable> = .success(#"{"ok":true,"presetName":"Portra 400","lens":0,"lenses":["28 mm"],"camera":"ok","saved":12}"#)
    var serviceState: ServiceState? = ServiceState(active: "active", enabled: "enabled")
    var users: Set<String> = ["loopix"]
    private(set) var askedAddresses: [Int] = []

    private(set) var camerasAsked = 0
    func cameras(_ config: Config) -> Result<[Lens], MachineError> {
        camerasAsked += 1
        return lenses
    }
    func bootConfig() -> (path: String, text: String)? { boot }
    func displays() -> [DRMCardSurvey] { cards }
    func gpioChip(_ candidates: [String]) -> Result<GPIOChipInfo, MachineError> { chip }
    func gpioLine(chip: GPIOChipInfo, offset: Int) -> Result<GPIOLineInfo, MachineError> {
        .success(GPIOLineInfo(offset: offset, name: "GPIO\(offset)", used: heldLines[offset] != nil, consumer: heldLines[offset] ?? ""))
    }
    func imu(bus: Int, addresses: [Int]) -> Result<[IMUAnswer], MachineError> {
        askedAddresses = addresses
        return imuAnswers
    }
    func storage(_ path: String) -> StorageFacts { storageFacts }
    func daemonStatus(socketPath: String) -> Result<String, DaemonUnreachable> { status }
    func service(_ unit: String) -> ServiceState? { serviceState }
    func userExists(_ name: String) -> Bool { users.contains(name) }
}

final class DoctorTests: XCTestCase {
    static let boardsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("boards").path

    /// A configuration as `Config.load` makes it on a Pi 5 (`auto` resolved), plus `json` members.
    func config(_ json: String = "", model: String? = "Raspberry Pi 5 Model B Rev 1.0") throws -> Config {
        let text = #"{"boardsDirectory": "\#(Self.boardsDirectory)", "storage": {"directory": "/var/lib/loopix/photos", "reserveMB": 50}"#
            + (json.isEmpty ? "" : ", " + json) + "}"
        var c = try Config.parse(Data(text.utf8), source: "/etc/loopix/loopix.json")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("doctor-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        if let model { try Data((model + "\0").utf8).write(to: URL(fileURLWithPath: dir + "/model")) }
        c.detectBoard(modelPath: dir + "/model")
        return c
    }

    func findings(_ machine: FakeMachine, _ config: Config, _ area: Finding.Area) -> [Finding] {
        Examination(config: config, machine: machine).run().filter { $0.area == area }
    }

    func testAHealthyPi5IsAllOK() throws {
        let machine = FakeMachine()
        let all = Examination(config: try config(), machine: machine).run()
        let lines = all.map(\.line)
        XCTAssertEqual(all.filter { $0.level >= .warning }.map(\.line), [], lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains("OK       board       Raspberry Pi 5: Raspberry Pi 5 Model B Rev 1.0 → pi5 (auto)"), lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains("OK       config.txt  /boot/firmware/config.txt: dtparam=i2c_arm=on"))
        XCTAssertTrue(lines.contains("OK       camera      imx708 4608×2592, 4.74 mm (28 mm equivalent): /base/axi/pcie@120000/rp1/i2c@88000/imx708@1a"))
        XCTAssertTrue(lines.contains("OK       display     /dev/dri/card1 (vc4) DSI-1: connected, 800x480@60"))
        XCTAssertTrue(lines.contains("INFO     display     /dev/dri/card1 (vc4): HDMI-A-1 not connected"), "the writeback connector is not listed")
        XCTAssertTrue(lines.contains("OK       gpio        line 5 (shutter-left): free"))
        XCTAssertEqual(all.filter { $0.area == .gpio && $0.message.hasPrefix("line ") }.count, 10, "every control's line")
        XCTAssertTrue(lines.contains("OK       imu         MPU-6050 at 0x68 on i2c-1 (WHO_AM_I 0x68 at register 0x75)"))
        XCTAssertEqual(machine.askedAddresses, [0x68, 0x69, 0x6A, 0x6B])
        XCTAssertTrue(lines.contains("OK       service     loopixd answers on /run/loopix/control.sock: Portra 400, 28 mm, 12 saved"))
        XCTAssertTrue(lines.contains("OK       service     loopixd.service is active, enabled"))
        XCTAssertTrue(lines.contains("INFO     license     no license key configured: the free looks, Pro looks carry a watermark"))
        // 20 GB free, 50 MB reserve, a 12 MP photo promised at 1.25 bytes per pixel + 64 KiB.
        let perPhoto = Int64(Double(4608 * 2592) * 1.25) + 65_536
        XCTAssertTrue(lines.contains("OK       storage     /var/lib/loopix/photos: 20.0 GB free, about \((20_000_000_000 - 50_000_000) / perPhoto) photos left above the 50 MB reserve, owned by loopix"),
                      lines.filter { $0.contains("storage") }.joined())
    }

    /// No camera: the camera finding names the config.txt line to add; the config.txt check
    /// names the missing line too; `camera.required` makes it a problem.
    func testNoCameraSaysWhichConfigTxtLineIsMissing() throws {
        let machine = FakeMachine()
        machine.lenses = .success([])
        machine.boot = ("/boot/firmware/config.txt", "dtparam=i2c_arm=on\ndtoverlay=vc4-kms-v3d\ncamera_auto_detect=1\n[pi4]\ncamera_auto_detect=0\n[all]\ncamera_auto_detect=0 # off\n")
        let camera = findings(machine, try config(), .camera)
        XCTAssertEqual(camera.map(\.level), [.warning])
        XCTAssertEqual(camera.first?.message, "libcamera lists no camera: loopixd will use the simulated camera")
        XCTAssertEqual(camera.first?.advice, "add \"camera_auto_detect=1\" (or the sensor's overlay, e.g. dtoverlay=imx708) to /boot/firmware/config.txt, then reboot; check the ribbon cable")
        let txt = findings(machine, try config(), .configTxt)
        XCTAssertEqual(txt.filter { $0.level == .warning }.map(\.message), ["/boot/firmware/config.txt lacks \"camera_auto_detect=1\" (the camera)"])
        XCTAssertEqual(findings(machine, try config(#""camera": {"required": true}"#), .camera).map(\.level), [.problem])

        // While a daemon runs its camera, libcamera is not asked (matching resets media links
        // under it); the daemon says how its camera is.
        let asked = machine.camerasAsked
        machine.status = .success(#"{"ok":true,"camera":"ok","lenses":["28 mm","13 mm"],"sensors":["imx708","imx708_wide"],"lens":0}"#)
        XCTAssertEqual(findings(machine, try config(), .camera).map(\.line), ["OK       camera      in use by the running loopixd: imx708 28 mm, imx708_wide 13 mm"])
        machine.status = .success(#"{"ok":true,"camera":"no frames for 2 s","lenses":["28 mm"],"sensors":["imx708"],"lens":0}"#)
        XCTAssertEqual(findings(machine, try config(), .camera).map(\.level), [.warning])
        XCTAssertEqual(machine.camerasAsked, asked)
        machine.status = .success(#"{"ok":true,"camera":"ok","lenses":["26 mm"],"sensors":["sim"],"lens":0}"#)
        XCTAssertEqual(findings(machine, try config(), .camera).map(\.level), [.warning], "the daemon's simulated camera is no camera")
        XCTAssertEqual(machine.camerasAsked, asked + 1, "a daemon on the simulated camera leaves libcamera free to ask")
        machine.status = .failure(.other("timed out"))
        XCTAssertEqual(findings(machine, try config(), .camera).map(\.level), [.info])
        XCTAssertEqual(machine.camerasAsked, asked + 1, "a daemon that does not answer may be configuring its camera: not asked")
        machine.status = .failure(.noSocket)

        // A sensor's own overlay stands for the camera line.
        machine.boot = ("/boot/firmware/config.txt", "dtparam=i2c_arm=on\ndtoverlay=vc4-kms-v3d\ndtoverlay=imx708,cam0\n")
        XCTAssertEqual(findings(machine, try config(), .configTxt).map(\.level), [.ok, .ok, .ok])
        XCTAssertEqual(findings(machine, try config(), .camera).first?.advice,
                       "check the ribbon cable (contacts towards the board on a Pi 5) and the camera line in config.txt")
        // No config.txt at all on a Pi.
        machine.boot = nil
        XCTAssertEqual(findings(machine, try config(), .configTxt).map(\.message), ["no /boot/firmware/config.txt"])
        // libcamera itself failing.
        machine.lenses = .failure(MachineError("starting libcamera's camera manager: Permission denied (errno 13)", errno: Errno(EACCES)))
        let failed = findings(machine, try config(#""camera": {"backend": "libcamera"}"#), .camera)
        XCTAssertEqual(failed.map(\.level), [.problem])
        XCTAssertEqual(failed.first?.advice, "add the user to the video group")
    }

    /// A line another program or a driver holds is a problem naming the holder and the fix.
    func testALineHeldByAnotherConsumerIsAProblem() throws {
        let machine = FakeMachine()
        machine.heldLines = [5: "gpio-keys", 6: "loopixd", 17: ""]
        let gpio = findings(machine, try config(), .gpio)
        let problems = gpio.filter { $0.level == .problem }
        XCTAssertEqual(problems.map(\.message), ["line 5 (shutter-left) is in use by \"gpio-keys\"",
                                                 "line 17 (encoder-a) is in use by an unnamed consumer (a kernel driver or an overlay)"])
        XCTAssertEqual(problems.first?.advice, "stop what holds it (an overlay in config.txt, another program) or move shutter-left with gpio.pins.shutter-left")
        XCTAssertTrue(gpio.contains { $0.line == "OK       gpio        line 6 (shutter-right): in use by loopixd" })
        // A pin moved beyond the chip; a missing chip; no board at all.
        let moved = findings(machine, try config(#""gpio": {"pins": {"mode": 40}}"#), .gpio)
        machine.chip = .success(GPIOChipInfo(path: "/dev/gpiochip0", label: "gpio-sim", lineCount: 32))
        XCTAssertEqual(findings(machine, try config(#""gpio": {"pins": {"mode": 40}}"#), .gpio).last?.message,
                       "/etc/loopix/loopix.json: gpio.pins.mode: line 40 for mode is out of range (the chip has lines 0…31)")
        XCTAssertTrue(moved.contains { $0.message == "line 40 (mode): free" })
        machine.chip = .failure(MachineError("opening GPIO chip pinctrl-rp1: Permission denied (errno 13)", errno: Errno(EACCES)))
        let denied = findings(machine, try config(), .gpio)
        XCTAssertEqual(denied.map(\.level), [.problem])
        XCTAssertEqual(denied.first?.advice, "add the user to the gpio group")
        XCTAssertEqual(findings(machine, try config(model: nil), .gpio), [], "no board, no GPIO findings")
    }

    func testUnknownAndMissingBoards() throws {
        let banana = findings(FakeMachine(), try config(model: "Banana Pi M5"), .board)
        XCTAssertEqual(banana.map(\.level), [.warning])
        XCTAssertEqual(banana.first?.message, "\"Banana Pi M5\" is not a board Loopix knows (cm4, cm5, pi-zero-2w, pi3bplus, pi4b, pi5)")
        let pc = findings(FakeMachine(), try config(model: nil), .board)
        XCTAssertEqual(pc.map(\.level), [.info])
        XCTAssertTrue(pc[0].message.hasPrefix("no device-tree model"), pc[0].message)
        XCTAssertEqual(findings(FakeMachine(), try config(#""board": "pi9""#), .board).map(\.level), [.problem])
        XCTAssertEqual(findings(FakeMachine(), try config(#""board": "none""#), .board).map(\.level), [.info])
        XCTAssertEqual(findings(FakeMachine(), try config(model: "Banana Pi M5"), .configTxt), [], "no board file: no lines to expect")
    }

    func testDisplays() throws {
        let machine = FakeMachine()
        machine.cards = [DRMCardSurvey(path: "/dev/dri/card0", driver: "vkms", connectors: [
            .init(name: "Virtual-1", connected: false, isWriteback: false, modes: []),
        ])]
        XCTAssertEqual(findings(machine, try config(), .display).map(\.level), [.info, .info], "auto runs headless until a screen comes")
        let kms = findings(machine, try config(#""display": {"backend": "kms"}"#), .display)
        XCTAssertEqual(kms.last?.level, .problem)
        XCTAssertEqual(kms.last?.message, "no screen is connected")
        machine.cards[0].connectors[0] = .init(name: "Virtual-1", connected: true, isWriteback: false, modes: ["1024x768@60", "800x600@60"])
        let wrong = findings(machine, try config(#""display": {"backend": "kms", "connector": "HDMI-A-1"}"#), .display)
        XCTAssertEqual(wrong.map(\.line), ["OK       display     /dev/dri/card0 (vkms) Virtual-1: connected, 1024x768@60 (+1 more)",
                                           "PROBLEM  display     display.connector HDMI-A-1 is not connected → connected: Virtual-1; fix display.connector or the cable"])
        machine.cards = [DRMCardSurvey(path: "/dev/dri/card0", driver: "", connectors: [], problem: "/dev/dri/card0: open: Permission denied (errno 13)")]
        let denied = findings(machine, try config(), .display)
        XCTAssertEqual(denied.first?.advice, "add the user to the video and render groups")
        XCTAssertEqual(findings(machine, try config(#""display": {"backend": "headless"}"#), .display).map(\.level), [.info])
    }

    func testMotionSensor() throws {
        let machine = FakeMachine()
        machine.imuAnswers = .success([IMUAnswer(address: 0x68, chip: nil, register75: 0x12, register0F: 0x34)])
        let odd = findings(machine, try config(), .imu)
        XCTAssertEqual(odd.map(\.message), ["a device answers at 0x68 on i2c-1 but WHO_AM_I reads 0x12 at 0x75, 0x34 at 0x0F: not an MPU-6050/6500 or LSM6DS3/DSO"])
        XCTAssertEqual(odd.map(\.level), [.warning])
        machine.imuAnswers = .success([])
        XCTAssertEqual(findings(machine, try config(), .imu).map(\.level), [.warning], "a missing sensor is not fatal")
        // Asked for by address: the configuration requires it.
        let required = findings(machine, try config(#""imu": {"address": 106}"#), .imu)
        XCTAssertEqual(required.map(\.message), ["nothing answers at 0x6A on i2c-1"])
        XCTAssertEqual(required.map(\.level), [.problem])
        XCTAssertEqual(machine.askedAddresses, [0x6A])
        machine.imuAnswers = .failure(MachineError("opening /dev/i2c-1: No such file or directory (errno 2)", errno: Errno(ENOENT)))
        XCTAssertTrue(findings(machine, try config(), .imu).first?.advice?.contains("dtparam=i2c_arm=on") == true)
        machine.imuAnswers = .success([IMUAnswer(address: 0x6B, chip: .lsm6dso, register75: 0x00, register0F: 0x6C)])
        XCTAssertEqual(findings(machine, try config(), .imu).map(\.message), ["LSM6DSO at 0x6B on i2c-1 (WHO_AM_I 0x6C at register 0x0F)"])
        XCTAssertEqual(findings(machine, try config(#""imu": {"enabled": false}"#), .imu).map(\.level), [.info])
    }

    func testStorage() throws {
        let machine = FakeMachine()
        machine.storageFacts = StorageFacts(kind: .directory, freeBytes: 40_000_000, owner: "loopix")
        let full = findings(machine, try config(), .storage)
        XCTAssertEqual(full.map(\.level), [.problem])
        XCTAssertEqual(full.first?.advice, "Storage full: free space or lower storage.reserveMB")
        machine.storageFacts = StorageFacts(kind: .directory, freeBytes: 1_000_000_000, owner: "root")
        XCTAssertEqual(findings(machine, try config(), .storage).map(\.level), [.warning], "fewer than 100 photos")
        machine.storageFacts = StorageFacts(kind: .missing, freeBytes: 20_000_000_000, owner: nil)
        let missing = findings(machine, try config(), .storage)
        XCTAssertEqual(missing.map(\.level), [.ok])
        XCTAssertTrue(missing[0].message.hasSuffix("(created when loopixd starts)"), missing[0].message)
        machine.storageFacts = StorageFacts(kind: .notDirectory, freeBytes: nil, owner: nil)
        XCTAssertEqual(findings(machine, try config(), .storage).map(\.level), [.problem])
    }

    /// The gallery: nothing when it is off; a warning when phones are sent to this machine's
    /// loopback address (its QR codes would carry it).
    func testWebGallery() throws {
        let machine = FakeMachine()
        XCTAssertEqual(findings(machine, try config(), .web), [])
        XCTAssertEqual(findings(machine, try config(#""web": {"enabled": true, "token": "0123456789abcdef"}"#), .web).map(\.line),
                       ["OK       web         the gallery listens on 0.0.0.0:8080, control with web.token"])
        let loopback = findings(machine, try config(#""web": {"enabled": true, "address": "127.0.0.1"}"#), .web)
        XCTAssertEqual(loopback.map(\.level), [.warning])
        XCTAssertTrue(loopback[0].message.hasPrefix("web.address: 127.0.0.1 is this camera's loopback address"), loopback[0].message)
    }

    func testServiceAndSocket() throws {
        let machine = FakeMachine()
        machine.status = .failure(.noSocket)
        machine.serviceState = ServiceState(active: "failed", enabled: "enabled")
        let failed = findings(machine, try config(), .service)
        XCTAssertEqual(failed.map(\.level), [.info, .problem])
        XCTAssertEqual(failed.last?.advice, "journalctl -u loopixd -b shows why; systemctl restart loopixd once fixed")
        machine.status = .failure(.refused)
        machine.serviceState = ServiceState(active: "inactive", enabled: "disabled")
        let stopped = findings(machine, try config(), .service)
        XCTAssertEqual(stopped.map(\.level), [.warning, .info])
        XCTAssertEqual(stopped.last?.advice, "systemctl enable --now loopixd")
        machine.serviceState = ServiceState(active: "not-found", enabled: "not-found")
        XCTAssertEqual(findings(machine, try config(), .service).last?.message, "loopixd.service is not installed")
        machine.serviceState = ServiceState(active: "active", enabled: "enabled")
        machine.users = []
        XCTAssertEqual(findings(machine, try config(), .service).last?.message, "there is no user loopix for the service to run as")
        machine.serviceState = nil
        XCTAssertEqual(findings(machine, try config(), .service).last?.message, "systemd is not running here: loopixd.service not checked")
        machine.status = .failure(.permission)
        XCTAssertEqual(findings(machine, try config(#""socket": {"path": "/run/loopix/control.sock", "group": "loopix"}"#), .service).first?.advice,
                       "add the user to the socket's group (loopix) or run as root")
    }

    func testAnInvalidLicenseIsAProblem() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("doctor-lic-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("{\"licensee\":\"forged\"}".utf8).write(to: URL(fileURLWithPath: dir + "/license.json"))
        let key = String(repeating: "ab", count: 32)
        let license = findings(FakeMachine(), try config(#""license": {"publicKey": "\#(key)", "file": "\#(dir)/license.json"}"#), .license)
        XCTAssertEqual(license.map(\.level), [.problem])
        XCTAssertTrue(license[0].message.hasPrefix("\(dir)/license.json: "), license[0].message)
        let missing = findings(FakeMachine(), try config(#""license": {"publicKey": "\#(key)", "file": "\#(dir)/none.json"}"#), .license)
        XCTAssertEqual(missing.map(\.message), ["no license at \(dir)/none.json: Pro looks carry a watermark"])
    }

    /// The report a person reads and the JSON a script reads; the exit status follows the problems.
    func testReportAndExitStatus() throws {
        let machine = FakeMachine()
        let healthy = Examination(config: try config(), machine: machine).run()
        let text = Doctor.render(healthy, config: try config(), json: false)
        XCTAssertTrue(text.hasPrefix("Loopix \(loopixVersion) doctor, configuration: /etc/loopix/loopix.json\n"), text)
        XCTAssertTrue(text.hasSuffix("\nAll required parts found."), text)
        machine.heldLines = [13: "python3"]
        let broken = Examination(config: try config(), machine: machine).run()
        XCTAssertTrue(Doctor.render(broken, config: try config(), json: false).hasSuffix("\n1 problem to fix before loopixd can work as configured."))
        let json = try JSONParser.parseObject(Data(Doctor.render(broken, config: try config(), json: true).utf8))
        XCTAssertEqual(json["ok"], .bool(false))
        XCTAssertEqual(json["version"], .string(loopixVersion))
        guard case .array(let items)? = json["findings"] else { return XCTFail("no findings array") }
        XCTAssertEqual(items.count, broken.count)
        XCTAssertTrue(items.contains(.object(JSONObject([("area", "gpio"), ("level", "problem"), ("message", "line 13 (filter) is in use by \"python3\""),
                                                         ("advice", "stop what holds it (an overlay in config.txt, another program) or move filter with gpio.pins.filter")]))))

        // Doctor.main: a configuration file, the fake machine, the exit status.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("doctor-main-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(#"{"board": "pi5", "boardsDirectory": "\#(Self.boardsDirectory)"}"#.utf8).write(to: URL(fileURLWithPath: dir + "/c.json"))
        XCTAssertEqual(Doctor.main(["--doctor", "--config", dir + "/c.json"], machine: machine), 1)
        machine.heldLines = [:]
        XCTAssertEqual(Doctor.main(["--doctor", "--json", "--config", dir + "/c.json"], machine: machine), 0)
        XCTAssertEqual(Doctor.main(["--doctor", "--config", dir + "/missing.json"], machine: machine), 2)
        XCTAssertEqual(Doctor.main(["--doctor", "--verbose"], machine: machine), 2)
    }

    func testConfigTxtReading() {
        let txt = BootConfig(text: """
            # comment
            dtparam=i2c_arm=on,spi=on   # both
            dtoverlay=vc4-kms-v3d,cma-512
            [pi4]
            dtoverlay=imx219
            [all]
            camera_auto_detect=1
            camera_auto_detect=0
            dtparam=i2c_arm=off
            """)
        XCTAssertFalse(txt.satisfies("dtparam=i2c_arm=on"), "the last setting wins")
        XCTAssertTrue(txt.satisfies("dtparam=spi=on"))
        XCTAssertTrue(txt.satisfies("dtoverlay=vc4-kms-v3d"), "an overlay with parameters counts")
        XCTAssertFalse(txt.satisfies("dtoverlay=vc4-kms-v3d-pi5"))
        XCTAssertFalse(txt.satisfies("camera_auto_detect=1"), "=0 came last; the [pi4] sensor overlay does not count everywhere")
        XCTAssertTrue(BootConfig(text: "dtparam=i2c_arm\n").satisfies("dtparam=i2c_arm=on"), "a bare parameter means on")
        XCTAssertTrue(BootConfig(text: "dtoverlay=imx708_wide\n").satisfies("camera_auto_detect=1"))
        XCTAssertFalse(BootConfig(text: "#dtparam=i2c_arm=on\n").satisfies("dtparam=i2c_arm=on"))
    }
}
