import Appliance
import BoardIO
import Camera
import Controls
import Display
import Foundation
import StrictJSON
import System

/// The checks of `loopix doctor`, in the order a builder wires a camera: board, config.txt,
/// camera, screen, buttons, motion sensor, storage, service, license. Each asks `machine` and
/// turns the answer into findings with what to do; none changes anything.
public struct Examination {
    public let config: Config
    public let machine: Machine
    /// The unit `systemctl` is asked about.
    public static let unit = "loopixd.service"

    public init(config: Config, machine: Machine) {
        self.config = config
        self.machine = machine
    }

    /// Every finding, area by area.
    public func run() -> [Finding] {
        let board = boardFindings()
        let daemon = machine.daemonStatus(socketPath: config.socket.path)
        // Enumerating cameras runs libcamera's pipeline matching, which resets the media
        // links (vimc) — under a daemon that is configuring its camera, that stalls it. So
        // libcamera is asked only when no daemon runs, or one runs the simulated camera.
        let lenses: Result<[Lens], MachineError>
        switch daemon {
        case .failure(.noSocket), .failure(.refused): lenses = machine.cameras(config)
        case .success(let text) where Self.daemonCamera(text) == nil: lenses = machine.cameras(config)
        default: lenses = .success([])
        }
        return board.findings + configTxtFindings(board.board, lenses: lenses) + cameraFindings(lenses, board: board.board, daemon: daemon)
            + displayFindings() + gpioFindings(board.board) + imuFindings(board.board)
            + storageFindings(lenses) + serviceFindings(daemon) + webFindings() + licenseFindings()
    }

    // MARK: Board

    func boardFindings() -> (board: Board?, findings: [Finding]) {
        switch config.board {
        case "none":
            return (nil, [Finding(.board, .info, "\"board\": \"none\": no GPIO buttons, no board I2C bus",
                                  advice: "set \"board\" to auto or a board id (\(config.boardsDirectory)) to use the header's buttons")])
        case "auto":
            guard let detected = config.detectedBoard else { return (nil, []) }
            let text = detected.message.replacingOccurrences(of: "board: auto: ", with: "")
            guard let id = detected.id else {
                if detected.isUnknownBoard {
                    return (nil, [Finding(.board, .warning, text.components(separatedBy: "; ").first ?? text,
                                          advice: "no GPIO buttons; set \"board\" in \(config.source) if its 40-pin header matches one")])
                }
                return (nil, [Finding(.board, .info, text)])
            }
            return loadBoard(id, found: "\(text) (auto)")
        default:
            return loadBoard(config.board, found: "\(config.board) (configured)")
        }
    }

    private func loadBoard(_ id: String, found: String) -> (board: Board?, findings: [Finding]) {
        do {
            let board = try Board.load(id: id, directory: config.boardsDirectory)
            var findings = [Finding(.board, .ok, "\(board.name): \(found)")]
            // A board named by hand that is not the board this is.
            if config.board != "auto", let model = DetectedBoard.readModel(),
               let boards = try? Board.loadAll(directory: config.boardsDirectory),
               let actual = Board.matching(model: model, in: boards), actual.id != board.id {
                findings.append(Finding(.board, .warning, "this is a \(model) (\(actual.id)), but the configuration says \(board.id)",
                                        advice: "set \"board\": \"auto\" or \"\(actual.id)\""))
            }
            return (board, findings)
        } catch {
            return (nil, [Finding(.board, .problem, "\(error)", advice: "set \"board\" to auto or one of the files in \(config.boardsDirectory)")])
        }
    }

    // MARK: config.txt

    /// The lines the board file expects in config.txt. A camera line is satisfied by
    /// `camera_auto_detect=1` or a sensor's own overlay (`dtoverlay=imx708,cam0`).
    func configTxtFindings(_ board: Board?, lenses: Result<[Lens], MachineError>) -> [Finding] {
        guard let board, !board.configTxt.isEmpty else { return [] }
        guard let (path, text) = machine.bootConfig() else {
            return [Finding(.configTxt, .warning, "no /boot/firmware/config.txt",
                            advice: "Raspberry Pi OS keeps it there; without it the firmware's defaults apply (no I2C, maybe no camera)")]
        }
        let settings = BootConfig(text: text)
        var findings: [Finding] = []
        for expected in board.configTxt {
            if settings.satisfies(expected) {
                findings.append(Finding(.configTxt, .ok, "\(path): \(expected)"))
            } else {
                let why = BootConfig.purpose(of: expected)
                findings.append(Finding(.configTxt, .warning, "\(path) lacks \"\(expected)\"\(why.map { " (\($0))" } ?? "")",
                                        advice: "add the line under [all] and reboot (see boards/README.md)"))
            }
        }
        return findings
    }

    // MARK: Camera

    func cameraFindings(_ lenses: Result<[Lens], MachineError>, board: Board?, daemon: Result<String, DaemonUnreachable>) -> [Finding] {
        if config.camera.backend == .simulated {
            return [Finding(.camera, .info, "camera.backend is simulated: loopixd shows the simulated camera")]
        }
        // The running daemon has the camera: it says how it is.
        switch daemon {
        case .success(let text):
            if let running = Self.daemonCamera(text) {
                return [Finding(.camera, running.ok ? .ok : .warning, "in use by the running loopixd: \(running.summary)")]
            }
        case .failure(.permission), .failure(.other):
            return [Finding(.camera, .info, "not checked: a loopixd seems to run (its socket is there) and listing cameras could disturb it",
                            advice: "run loopix doctor as a member of the socket's group, or stop loopixd first")]
        case .failure(.noSocket), .failure(.refused):
            break
        }
        let required = config.camera.backend == .libcamera || config.camera.required
        switch lenses {
        case .success(let lenses) where !lenses.isEmpty:
            return lenses.map { lens in
                let size = "\(lens.stillWidth)×\(lens.stillHeight)"
                let focal = lens.focalLength > 0 ? String(format: "%.2f mm (%@ equivalent)", lens.focalLength, lens.label) : lens.label
                return Finding(.camera, .ok, "\(lens.sensorModel) \(size), \(focal): \(lens.id)")
            }
        case .success:
            var advice = "check the ribbon cable (contacts towards the board on a Pi 5) and the camera line in config.txt"
            if board == nil {
                advice = "libcamera drives a Pi's CSI cameras and USB (UVC) webcams; `cam -l` (libcamera-tools) lists what it sees"
            } else if let (path, text) = machine.bootConfig(), !BootConfig(text: text).satisfies("camera_auto_detect=1") {
                advice = "add \"camera_auto_detect=1\" (or the sensor's overlay, e.g. dtoverlay=imx708) to \(path), then reboot; check the ribbon cable"
            }
            return [Finding(.camera, required ? .problem : .warning,
                            "libcamera lists no camera" + (required ? "" : ": loopixd will use the simulated camera"), advice: advice)]
        case .failure(let error):
            return [Finding(.camera, required ? .problem : .warning, "libcamera: \(error)",
                            advice: error.errno == Errno(EACCES) ? "add the user to the video group" : nil)]
        }
    }

    // MARK: Display

    func displayFindings() -> [Finding] {
        switch config.display.backend {
        case .headless: return [Finding(.display, .info, "display.backend is headless: no screen is used")]
        case .window: return [Finding(.display, .info, "display.backend is window: the preview is an SDL window on the desktop")]
        case .auto, .kms: break
        }
        let required = config.display.backend == .kms
        let cards = machine.displays()
        var findings: [Finding] = []
        var connected: [(card: DRMCardSurvey, connector: DRMCardSurvey.Connector)] = []
        for card in cards {
            let name = "\(card.path)" + (card.driver.isEmpty ? "" : " (\(card.driver))")
            if let problem = card.problem {
                let denied = problem.contains("Permission denied")
                findings.append(Finding(.display, .warning, "\(name): \(problem)", advice: denied ? "add the user to the video and render groups" : nil))
                continue
            }
            let outputs = card.connectors.filter { !$0.isWriteback }
            guard !outputs.isEmpty else { continue }
            for c in outputs where c.connected {
                connected.append((card, c))
                let modes = c.modes.isEmpty ? "no modes" : "\(c.modes[0])" + (c.modes.count > 1 ? " (+\(c.modes.count - 1) more)" : "")
                findings.append(Finding(.display, c.modes.isEmpty ? .warning : .ok, "\(name) \(c.name): connected, \(modes)"))
            }
            let idle = outputs.filter { !$0.connected }.map(\.name)
            if !idle.isEmpty { findings.append(Finding(.display, .info, "\(name): \(idle.joined(separator: ", ")) not connected")) }
        }
        if let wanted = config.display.connector, !connected.contains(where: { $0.connector.name == wanted }) {
            findings.append(Finding(.display, required ? .problem : .warning, "display.connector \(wanted) is not connected",
                                    advice: "connected: \(connected.map(\.connector.name).joined(separator: ", ").ifEmpty("none")); fix display.connector or the cable"))
        } else if connected.isEmpty {
            findings.append(Finding(.display, required ? .problem : .info,
                                    cards.isEmpty ? "no DRM card (/dev/dri/card*)" : "no screen is connected",
                                    advice: required ? "add \"dtoverlay=vc4-kms-v3d\" to config.txt and connect the screen" :
                                        "loopixd runs headless and starts showing the preview when a screen is plugged in"))
        }
        return findings
    }

    // MARK: GPIO

    func gpioFindings(_ board: Board?) -> [Finding] {
        guard let board else { return [] }
        let plan: GPIOPlan
        do { plan = try config.gpioPlan(board: board) } catch {
            return [Finding(.gpio, .problem, "\(error)")]
        }
        let chip: GPIOChipInfo
        switch machine.gpioChip(plan.chips) {
        case .success(let found): chip = found
        case .failure(let error):
            return [Finding(.gpio, .problem, "no GPIO chip \(plan.chips.joined(separator: " or ")): \(error)",
                            advice: error.errno == Errno(EACCES) ? "add the user to the gpio group" : "is this the right board? set \"board\" or gpio.chip")]
        }
        var findings = [Finding(.gpio, .ok, "\(chip.label) (\(chip.path)), \(chip.lineCount) lines, libgpiod \(GPIOChipInfo.libgpiodVersion)")]
        do { _ = try config.gpioPlan(board: board, lineCount: chip.lineCount) } catch {
            return findings + [Finding(.gpio, .problem, "\(error)")]
        }
        for (pin, offset) in Board.namedLines(plan.pins, flash: plan.flash) {
            let what = "line \(offset) (\(pin))"
            switch machine.gpioLine(chip: chip, offset: offset) {
            case .failure(let error):
                findings.append(Finding(.gpio, .problem, "\(what): \(error)"))
            case .success(let info) where !info.used:
                findings.append(Finding(.gpio, .ok, "\(what): free"))
            case .success(let info) where info.consumer == "loopixd":
                findings.append(Finding(.gpio, .ok, "\(what): in use by loopixd"))
            case .success(let info):
                let holder = info.consumer.isEmpty ? "an unnamed consumer (a kernel driver or an overlay)" : "\"\(info.consumer)\""
                findings.append(Finding(.gpio, .problem, "\(what) is in use by \(holder)",
                                        advice: "stop what holds it (an overlay in config.txt, another program) or move \(pin) with gpio.pins.\(pin)"))
            }
        }
        return findings
    }

    // MARK: IMU

    func imuFindings(_ board: Board?) -> [Finding] {
        guard config.imu.enabled else { return [Finding(.imu, .info, "imu.enabled is false: grain at a constant rate, photos upright")] }
        guard let bus = config.imu.bus ?? board?.i2cBus else {
            return [Finding(.imu, .info, "no board and no imu.bus: no motion sensor is looked for")]
        }
        // Asked for by address or bus: then a missing sensor is the configuration's problem.
        let required = config.imu.address != nil || config.imu.bus != nil
        let addresses = config.imu.address.map { [$0] } ?? IMUProbe.addresses
        let hex = { (n: Int) in String(format: "0x%02X", n) }
        switch machine.imu(bus: bus, addresses: addresses) {
        case .failure(let error):
            let advice = error.errno == Errno(EACCES) ? "add the user to the i2c group" :
                "\"dtparam=i2c_arm=on\" in config.txt and the i2c-dev module (echo i2c-dev > /etc/modules-load.d/i2c.conf)"
            return [Finding(.imu, required ? .problem : .warning, "i2c-\(bus): \(error)", advice: advice)]
        case .success(let answers):
            if let found = answers.first(where: { $0.chip != nil }), let chip = found.chip {
                let (register, value) = chip.whoAmI
                return [Finding(.imu, .ok, "\(chip.rawValue) at \(hex(found.address)) on i2c-\(bus) (WHO_AM_I \(hex(Int(value))) at register \(hex(Int(register))))")]
            }
            if let other = answers.first(where: \.answered) {
                let bytes = [other.register75.map { "\(hex(Int($0))) at 0x75" }, other.register0F.map { "\(hex(Int($0))) at 0x0F" }].compactMap { $0 }
                return [Finding(.imu, required ? .problem : .warning,
                                "a device answers at \(hex(other.address)) on i2c-\(bus) but WHO_AM_I reads \(bytes.joined(separator: ", ")): not an MPU-6050/6500 or LSM6DS3/DSO",
                                advice: "Loopix reads those four; another chip at that address?")]
            }
            return [Finding(.imu, required ? .problem : .warning,
                            "nothing answers at \(addresses.map(hex).joined(separator: ", ")) on i2c-\(bus)",
                            advice: "check the wiring (VCC 3V3 pin 1, SDA pin 3, SCL pin 5, GND pin 9); grain runs at a constant rate without it")]
        }
    }

    // MARK: Storage

    func storageFindings(_ lenses: Result<[Lens], MachineError>) -> [Finding] {
        let path = config.storage.directory
        let facts = machine.storage(path)
        let reserve = Int64(config.storage.reserveMB) * 1_000_000
        var owner = facts.owner.map { ", owned by \($0)" } ?? ""
        switch facts.kind {
        case .notDirectory:
            return [Finding(.storage, .problem, "\(path) is not a directory", advice: "set storage.directory to a directory")]
        case .missing:
            owner = " (created when loopixd starts)"
        case .directory:
            break
        }
        guard let free = facts.freeBytes else {
            return [Finding(.storage, .warning, "\(path): free space unknown\(owner)")]
        }
        let pixels = (try? lenses.get())?.map { $0.stillWidth * $0.stillHeight }.max()
            ?? config.camera.simulatedStillWidth * config.camera.simulatedStillHeight
        let perPhoto = PhotoSizeEstimate().bytes(pixels: pixels, keepOriginal: config.capture.keepOriginal,
                                                  raw: config.capture.raw)
        let left = max(0, free - reserve) / perPhoto
        let summary = "\(path): \(Self.size(free)) free, about \(left) photos left above the \(config.storage.reserveMB) MB reserve\(owner)"
        if free <= reserve { return [Finding(.storage, .problem, summary, advice: "Storage full: free space or lower storage.reserveMB")] }
        if left < 100 { return [Finding(.storage, .warning, summary, advice: "fewer than 100 photos fit: free space or use a larger card")] }
        return [Finding(.storage, .ok, summary)]
    }

    static func size(_ bytes: Int64) -> String {
        bytes >= 1_000_000_000 ? String(format: "%.1f GB", Double(bytes) / 1e9) : "\(bytes / 1_000_000) MB"
    }

    // MARK: Web gallery

    func webFindings() -> [Finding] {
        let w = config.web
        guard w.enabled else { return [] }
        if let warning = w.loopbackWarning { return [Finding(.web, .warning, warning)] }
        let control = w.token == nil ? "read-only (no web.token)" : "control with web.token"
        return [Finding(.web, .ok, "the gallery listens on \(w.address):\(w.port), \(control)")]
    }

    // MARK: Service

    func serviceFindings(_ daemon: Result<String, DaemonUnreachable>) -> [Finding] {
        var findings: [Finding] = []
        let socket = config.socket.path
        switch daemon {
        case .success(let text):
            findings.append(Finding(.service, .ok, "loopixd answers on \(socket)" + Self.statusSummary(text)))
        case .failure(.noSocket):
            findings.append(Finding(.service, .info, "loopixd is not running (no socket at \(socket))"))
        case .failure(.refused):
            findings.append(Finding(.service, .warning, "\(socket) is there but nobody answers: loopixd stopped without removing it",
                                    advice: "start loopixd (it replaces a dead socket)"))
        case .failure(.permission):
            findings.append(Finding(.service, .warning, "not allowed to connect to \(socket)",
                                    advice: "add the user to the socket's group (\(config.socket.group ?? "see socket.group")) or run as root"))
        case .failure(.other(let why)):
            findings.append(Finding(.service, .warning, "\(socket): \(why)"))
        }
        guard let state = machine.service(Self.unit) else {
            findings.append(Finding(.service, .info, "systemd is not running here: \(Self.unit) not checked"))
            return findings
        }
        switch state.active {
        case "active", "reloading":
            findings.append(Finding(.service, .ok, "\(Self.unit) is \(state.active), \(state.enabled)"))
        case "not-found":
            findings.append(Finding(.service, .info, "\(Self.unit) is not installed", advice: "install the loopix package (README: Install on a Raspberry Pi)"))
        case "failed":
            findings.append(Finding(.service, .problem, "\(Self.unit) failed",
                                    advice: "journalctl -u loopixd -b shows why; systemctl restart loopixd once fixed"))
        case "activating":
            findings.append(Finding(.service, .info, "\(Self.unit) is starting (\(state.enabled))"))
        default:
            findings.append(Finding(.service, .info, "\(Self.unit) is \(state.active), \(state.enabled)",
                                    advice: state.enabled == "enabled" ? "systemctl start loopixd" : "systemctl enable --now loopixd"))
        }
        if state.active != "not-found", !machine.userExists("loopix") {
            findings.append(Finding(.service, .problem, "there is no user loopix for the service to run as",
                                    advice: "systemd-sysusers (the package does this when installed)"))
        }
        return findings
    }

    /// ": Portra 400, 28 mm, 12 saved" from a status reply.
    static func statusSummary(_ text: String) -> String {
        guard case .object(let o)? = try? JSONParser.parse(text) else { return "" }
        var parts: [String] = []
        if case .string(let look)? = o["presetName"] { parts.append(look) }
        if let i = o["lens"]?.integer, case .array(let labels)? = o["lenses"], labels.indices.contains(i),
           case .string(let label) = labels[i] { parts.append(label) }
        if case .string(let camera)? = o["camera"], camera != "ok" { parts.append("camera \(camera)") }
        if let saved = o["saved"]?.integer { parts.append("\(saved) saved") }
        return parts.isEmpty ? "" : ": " + parts.joined(separator: ", ")
    }

    /// The camera as the daemon's status tells it: "ok" or its trouble, and each lens's sensor
    /// and label; nil when the daemon runs the simulated camera (sensor "sim") or says nothing.
    static func daemonCamera(_ text: String) -> (ok: Bool, summary: String)? {
        guard case .object(let o)? = try? JSONParser.parse(text), case .string(let camera)? = o["camera"],
              case .array(let sensors)? = o["sensors"], case .array(let labels)? = o["lenses"] else { return nil }
        var lenses: [String] = []
        for case (.string(let sensor), .string(let label)) in zip(sensors, labels) {
            if sensor == "sim" { return nil }
            lenses.append("\(sensor) \(label)")
        }
        return (camera == "ok", lenses.joined(separator: ", ") + (camera == "ok" ? "" : ": \(camera)"))
    }

    // MARK: License

    func licenseFindings() -> [Finding] {
        let state = LicenseState.check(config)
        switch state {
        case .noKey, .missing: return [Finding(.license, .info, "\(state)")]
        case .licensed: return [Finding(.license, .ok, "\(state)")]
        case .invalid: return [Finding(.license, .problem, "\(state)", advice: "loopix license verify tells more; ask for a new license file")]
        }
    }
}

extension String {
    fileprivate func ifEmpty(_ replacement: String) -> String { isEmpty ? replacement : self }
}
