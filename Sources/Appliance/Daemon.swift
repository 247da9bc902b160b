import BoardIO
import Camera
import ControlProtocol
import Controls
import Dispatch
import Display
import FilmCore
import Foundation
import ImageFiles
import System

/// `loopixd`: parses its arguments, picks the devices, runs the controller until SIGTERM or
/// SIGINT (queued photos are finished first), reloads the configuration on SIGHUP.
public enum Daemon {
    public static let help = """
    Usage: loopixd [--config PATH] [--simulate] [--headless] [--check-config]
           loopixd --doctor [--json] [--config PATH]
           loopixd --version

    The Loopix camera daemon: live film preview, buttons, photos.

      --config PATH   configuration file (default: /etc/loopix/loopix.json; defaults if absent)
      --simulate      use the simulated camera (also chosen, with a log line, when no camera is found)
      --headless      no window or screen, whatever the configuration says
      --check-config  validate the configuration and exit (0: valid)
      --doctor        check this machine's camera, screen, GPIO, IMU, storage and service, one
                      line per finding with what to do (also `loopix doctor`); --json for scripts
      --version       print the version and exit

    Signals: SIGTERM/SIGINT stop after the queued photos are saved; SIGHUP reloads the configuration.
    """

    /// Runs the daemon; returns the exit status.
    public static func main(_ arguments: [String]) -> Int32 {
        var configPath: String?
        var simulate = false, headless = false, checkOnly = false
        var i = 0
        while i < arguments.count {
            switch arguments[i] {
            case "--config":
                guard i + 1 < arguments.count else { return usage("--config needs a path") }
                configPath = arguments[i + 1]
                i += 1
            case "--simulate": simulate = true
            case "--headless": headless = true
            case "--check-config": checkOnly = true
            case "--help", "-h":
                print(help)
                return 0
            case "--version":
                print("loopixd \(loopixVersion)")
                return 0
            default:
                return usage("unknown argument \(arguments[i])")
            }
            i += 1
        }
        let config: Config
        do {
            config = try Config.load(path: configPath)
        } catch {
            Log.error("\(error)")
            return 2
        }
        for warning in config.warnings { Log.warning(warning) }
        if checkOnly {
            let problems = config.environmentProblems()
            for problem in problems { Log.error(problem) }
            guard problems.isEmpty else { return 1 }
            print("\(config.source): configuration is valid")
            return 0
        }
        for note in config.notes { Log.info(note) }
        // The looks now, so that a default look that does not exist stops the start as any
        // other bad key does.
        let presets = Controller.loadPresets(config)
        if let problem = config.presetProblem(lookIDs: presets.map(\.id)) {
            Log.error(problem)
            return 2
        }
        if let problem = Directories.problem(config.storage.directory) {
            Log.error("\(config.source): storage.directory: \(problem); no photo can be saved until it is one")
        }
        if configPath == nil && FileManager.default.fileExists(atPath: Config.defaultPath) { configPath = Config.defaultPath }

        // Camera: libcamera's cameras, unless simulating; `auto` falls back to the simulated
        // camera (saying so) when there is none, unless the configuration insists on one.
        var hardware: LibcameraCamera?
        if !simulate && config.camera.backend != .simulated {
            hardware = findCameras(config)
        }
        if !simulate {
            do {
                let (_, note) = try config.resolveCameraBackend(cameraPresent: hardware != nil)
                if let note { Log.warning(note) }
            } catch {
                Log.error("\(error)")
                return 1
            }
        }
        // One daemon per state directory: a second one stops here, before it touches the
        // settings, the photo counter or the socket.
        let instanceLock: InstanceLock
        do { instanceLock = try InstanceLock(stateDirectory: config.state.directory) } catch {
            Log.error("\(error)")
            return 1
        }
        // The socket next: "already listening" ends a second daemon before anything else.
        let handle = ControllerHandle()
        let server: ControlServer
        do {
            server = try ControlServer(path: config.socket.path, group: config.socket.group) { handle.submit($0) }
        } catch {
            Log.error("\(error)")
            return 1
        }

        let camera: CameraSource
        var faults: FaultInjectable?
        if let hardware {
            camera = hardware
            Log.info("camera: libcamera \(LibcameraManager.version): " +
                     hardware.lenses.map { "\($0.sensorModel) \($0.label)" }.joined(separator: ", "))
        } else {
            Log.info("camera: simulated")
            let sim = SimulatedCamera(stillWidth: config.camera.simulatedStillWidth, stillHeight: config.camera.simulatedStillHeight,
                                      photosDirectory: config.camera.photosDirectory, photoLoader: { try ImageReader.read(path: $0) })
            camera = sim
            faults = sim
        }

        let display: DisplaySink
        do { display = try makeDisplay(config, headless: headless) } catch {
            Log.error("display: \(error)")
            return 1
        }
        let (inputs, motion, flash) = makeHardwareInputs(config)
        let controller = Controller(config: config, configPath: configPath,
                                    devices: .init(camera: camera, faults: faults, display: display, motion: motion,
                                                   inputs: inputs + makeInputs(config, display: display),
                                                   findDisplay: displayFinder(config, headless: headless), flash: flash),
                                    presets: presets, handle: handle)
        server.start()
        Log.info("control socket at \(config.socket.path); take a photo with: loopix ctl capture")
        // The web gallery: a failure to start is one error line; the camera runs without it.
        var web: WebService?
        if config.web.enabled {
            do {
                let service = try WebService(config: config, handle: handle)
                web = service
                controller.attachWeb(live: service.live, url: service.url, currentURL: { service.currentURL() })
                Log.info("web gallery at \(service.url)\(config.web.token == nil ? " (read-only: no web.token)" : "")")
            } catch {
                Log.error("\(error); no web gallery")
            }
        }

        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        let signalQueue = DispatchQueue(label: "loopix.signals")
        var sources: [DispatchSourceSignal] = []
        for sig in [SIGTERM, SIGINT, SIGHUP] {
            let source = DispatchSource.makeSignalSource(signal: sig, queue: signalQueue)
            source.setEventHandler {
                if sig == SIGHUP { handle.requestReload() } else { handle.requestStop() }
            }
            source.resume()
            sources.append(source)
        }
        controller.run()
        web?.stop()
        server.close()
        controller.shutdown(timeout: 60)
        sources.forEach { $0.cancel() }
        withExtendedLifetime(instanceLock) {}
        Log.info("stopped")
        return 0
    }

    /// The cameras libcamera reports, as lenses; nil when there are none (or libcamera fails).
    static func findCameras(_ config: Config) -> LibcameraCamera? {
        do {
            let manager = try LibcameraManager()
            var table = LensTable.builtIn
            if let path = config.camera.lensTable {
                do { table = try LensTable.load(path: path) } catch {
                    Log.warning("\(error); using the built-in lens table")
                }
            }
            return try LibcameraCamera(manager: manager, table: table, focalLengthOverrides: config.camera.focalLengths)
        } catch CameraError.noCamera {
            return nil
        } catch {
            Log.warning("libcamera: \(error)")
            return nil
        }
    }

    static func usage(_ message: String) -> Int32 {
        Log.error("loopixd: \(message) (see loopixd --help)")
        return 2
    }

    /// The board's GPIO buttons and encoder (when a board is configured and its chip exists),
    /// the booth's flash line (when `booth.flash` asks for one), and the IMU (when one answers);
    /// otherwise a warning and the scripted, level sensor.
    static func makeHardwareInputs(_ config: Config) -> ([InputSource], MotionSensor, FlashLight?) {
        var inputs: [InputSource] = []
        var board: Board?
        var flash: FlashLight?
        if let id = config.boardID {
            do {
                let b = try Board.load(id: id, directory: config.boardsDirectory)
                board = b
                let gpio = BoardGPIO(config, board: b)
                inputs += makeButtons(config, board: b, gpio: gpio)
                if config.booth.flash != .off { flash = makeFlash(config, board: b, gpio: gpio) }
                if let trigger = makeTrigger(config, chip: gpio.chip) { inputs.append(trigger) }
            } catch {
                Log.warning("board: \(error); no GPIO buttons")
            }
        } else {
            if config.booth.flash != .off { Log.warning("booth.flash: no board configured, so no flash line") }
            let chip = config.gpio.chip.map { GPIOPlan.findChip(candidates: [$0]) }
            if let trigger = makeTrigger(config, chip: chip) { inputs.append(trigger) }
        }
        let fallback = ScriptedMotion(.level, name: "simulated (level and still)")
        guard config.imu.enabled, board != nil || config.imu.bus != nil else { return (inputs, fallback, flash) }
        let bus = config.imu.bus ?? board?.i2cBus ?? 1
        do {
            let imu = try IMUProbe.open(bus: bus, address: config.imu.address)
            Log.info("motion sensor: \(imu.name)")
            return (inputs, imu, flash)
        } catch {
            Log.warning("motion sensor: \(error); grain at a constant rate, photos upright")
            return (inputs, fallback, flash)
        }
    }

    /// The board's GPIO plan and chip, worked out once for the buttons, the flash and the trigger.
    struct BoardGPIO {
        let plan: Result<GPIOPlan, ConfigError>
        let chip: Result<GPIOChipInfo, GPIOChipMissing>

        init(_ config: Config, board: Board) {
            do { plan = .success(try config.gpioPlan(board: board)) } catch { plan = .failure(error) }
            chip = GPIOPlan.findChip(candidates: config.gpioChips(board: board))
        }
    }

    /// The trigger input (`capture.trigger`) on its chip: the configured one, or `chip` (that of
    /// `gpio.chip` or the board's; nil: neither is there).
    static func makeTrigger(_ config: Config, chip: Result<GPIOChipInfo, GPIOChipMissing>?) -> InputSource? {
        guard let trigger = config.capture.trigger else { return nil }
        guard let search = trigger.chip.map({ GPIOPlan.findChip(candidates: [$0]) }) ?? chip else {
            Log.warning("capture.trigger: no GPIO chip (no board configured): set capture.trigger.chip")
            return nil
        }
        let info: GPIOChipInfo
        switch search {
        case .success(let found): info = found
        case .failure(let missing):
            Log.warning("capture.trigger: \(missing.reason); no trigger")
            return nil
        }
        var settings = TriggerInput.Settings(chip: info.path, line: trigger.line)
        settings.edge = trigger.edge
        settings.debounceMilliseconds = trigger.debounceMs
        do {
            let input = try TriggerInput(settings)
            Log.info("trigger: line \(trigger.line) of \(info.label) (\(info.path)), \(trigger.edge.rawValue) edges")
            return input
        } catch {
            Log.warning("capture.trigger: \(error); no trigger")
            return nil
        }
    }

    /// The flash's output line (the board's `pins.flash` or `gpio.pins.flash`), requested low.
    static func makeFlash(_ config: Config, board: Board, gpio: BoardGPIO) -> FlashLight? {
        do {
            let plan = try gpio.plan.get()
            guard let line = plan.flash else {
                Log.warning("booth.flash: board \(board.id) names no flash line; set gpio.pins.flash")
                return nil
            }
            switch gpio.chip {
            case .success(let chip):
                let output = try GPIOOutput(chip: chip.path, offset: line)
                Log.info("booth: flash on line \(line) of \(chip.path)")
                return output
            case .failure(let missing):
                Log.warning("booth.flash: \(missing); no flash")
                return nil
            }
        } catch {
            Log.warning("booth.flash: \(error); no flash")
            return nil
        }
    }

    static func makeButtons(_ config: Config, board: Board, gpio: BoardGPIO) -> [InputSource] {
        do {
            let plan = try gpio.plan.get()
            let chip: GPIOChipInfo
            switch gpio.chip {
            case .success(let found): chip = found
            case .failure(let missing):
                Log.warning("GPIO: \(missing); no GPIO buttons")
                return []
            }
            // With the chip known, every line must be one of its own.
            _ = try config.gpioPlan(board: board, lineCount: chip.lineCount)
            var pins = plan.pins
            // The trigger's line is not a button (a headless rig wires one line, often a button's).
            if let line = config.capture.trigger?.line, config.capture.trigger?.chip == nil,
               let (pin, _) = pins.first(where: { $0.value == line }) {
                Log.info("GPIO: line \(line) is the trigger's; \(pin.rawValue) is not read as a button")
                pins[pin] = nil
            }
            guard !pins.isEmpty else { return [] }
            var settings = ButtonInput.Settings(chip: chip.path, pins: pins)
            settings.debounceMilliseconds = plan.debounceMs
            settings.transitionsPerDetent = plan.transitionsPerDetent
            settings.acceleration = plan.acceleration ? EncoderAcceleration() : .none
            let input = try ButtonInput(settings)
            Log.info("GPIO: \(board.name), \(chip.label) (\(chip.path)), libgpiod \(GPIOChipInfo.libgpiodVersion), \(plan.pins.count) lines")
            return [input]
        } catch {
            Log.warning("GPIO: \(error); no GPIO buttons")
            return []
        }
    }

    static func makeDisplay(_ config: Config, headless: Bool) throws -> DisplaySink {
        let w = config.display.width, h = config.display.height
        if headless || config.display.backend == .headless { return try HeadlessDisplay(width: w, height: h) }
        let backend = config.display.backend
        if wantsKMS(config, headless: headless) {
            if backend == .kms || KMSDisplay.connectedDisplayExists(cards: config.display.kms.cards) {
                do {
                    let kms = try KMSDisplay(config.display.kms)
                    Log.info("display: \(kms.name), \(kms.width)×\(kms.height), rotation \(config.display.rotation.degrees)°")
                    return kms
                } catch {
                    Log.error("display: \(error); running headless until a display can be opened")
                    return try HeadlessDisplay(width: w, height: h)
                }
            }
            Log.info("display: none connected; running headless, the preview starts when one is connected")
            return try HeadlessDisplay(width: w, height: h)
        }
        if backend == .window || (backend == .auto && hasDesktop) {
            do {
                return try SDLWindow(width: w, height: h, title: "Loopix")
            } catch {
                Log.warning("no window (\(error)): running headless")
            }
        }
        return try HeadlessDisplay(width: w, height: h)
    }

    /// Whether a desktop session (X11 or Wayland) is there for a window.
    static var hasDesktop: Bool {
        let env = ProcessInfo.processInfo.environment
        return !(env["DISPLAY"] ?? "").isEmpty || !(env["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// Whether the configuration asks for the screen (KMS) rather than a window or nothing.
    static func wantsKMS(_ config: Config, headless: Bool) -> Bool {
        return !headless && (config.display.backend == .kms || (config.display.backend == .auto && !hasDesktop))
    }

    /// For a daemon that wants the screen: opens a KMS display once one is connected (a monitor
    /// plugged in after start), with its touch and keyboard input. A display that is there but
    /// cannot be opened is logged once per distinct error.
    static func displayFinder(_ config: Config, headless: Bool) -> (() -> (display: DisplaySink, inputs: [InputSource])?)? {
        guard wantsKMS(config, headless: headless) else { return nil }
        var lastError = ""
        return {
            guard KMSDisplay.connectedDisplayExists(cards: config.display.kms.cards) else { return nil }
            do {
                let kms = try KMSDisplay(config.display.kms)
                lastError = ""
                return (kms, makeInputs(config, display: kms))
            } catch {
                if "\(error)" != lastError { Log.warning("display: \(error); the preview stays headless") }
                lastError = "\(error)"
                return nil
            }
        }
    }

    /// Touch screens and keyboards (evdev) when the preview is on a KMS display; the window
    /// brings its own keyboard and mouse.
    static func makeInputs(_ config: Config, display: DisplaySink) -> [InputSource] {
        guard display is KMSDisplay else { return [] }
        return [EvdevInput(rotation: config.display.rotation)]
    }
}

/// Holds `loopixd.lock` in the state directory (an `flock`) for the daemon's lifetime, so that
/// a second daemon on the same state directory stops before touching anything.
final class InstanceLock {
    private let fd: FileDescriptor

    init(stateDirectory: String) throws(SystemError) {
        let path = stateDirectory + "/loopixd.lock"
        do { try Directories.create(stateDirectory) } catch {
            throw SystemError(stateDirectory, "use it as the state directory (state.directory): \(error.problem)", Errno(ENOTDIR))
        }
        do { fd = try .open(path, O_RDWR | O_CREAT, mode: 0o644) } catch { throw SystemError(path, "open the instance lock", error) }
        guard flock(fd.rawValue, LOCK_EX | LOCK_NB) == 0 else {
            let e = Errno.current
            if e == .wouldBlock {
                throw SystemError(path, "lock it: another loopixd is running with state directory \(stateDirectory)", e)
            }
            throw SystemError(path, "lock it", e)
        }
    }
}
