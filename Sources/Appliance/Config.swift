import ControlProtocol
import Controls
import Display
import FilmCore
import ImageFiles
import Foundation
import StrictJSON
import System
import Video
import PixelFormats

/// Why the configuration was rejected: the file, the key path and the problem, on one line:
/// `/etc/loopix/loopix.json: display.width: 99999 is out of range (allowed 160…3840)`.
public typealias ConfigError = FieldError

/// The daemon's configuration: one JSON file, by default `/etc/loopix/loopix.json`.
///
/// ```json
/// { "board": "auto", "presetsDirectory": "/etc/loopix/presets",
///   "camera":   { "backend": "auto", "required": false, "simulatedStillWidth": 4056,
///                 "simulatedStillHeight": 3040, "photosDirectory": "/usr/share/loopix/samples" },
///   "display":  { "backend": "auto", "width": 800, "height": 480,
///                 "connector": "HDMI-A-1", "mode": "1920x1080@60", "rotation": 0, "format": "xrgb8888",
///                 "flip": "auto" },
///   "storage":  { "directory": "/var/lib/loopix/photos", "reserveMB": 50 },
///   "state":    { "directory": "/var/lib/loopix" },
///   "socket":   { "path": "/run/loopix/control.sock", "group": "loopix" },
///   "license":  { "publicKey": "<base64 or hex Ed25519 public key>", "file": "/var/lib/loopix/license.json" },
///   "defaults": { "preset": "portra", "intensity": 100, "ev": 0, "handedness": "right", "grid": false },
///   "capture":  { "queueLength": "auto", "format": "heic", "heicQuality": 70, "jpegQuality": 90,
///                 "x265Preset": "ultrafast", "keepOriginal": false, "raw": false, "dateStamp": false },
///   "video":    { "width": 1920, "height": 1080, "fps": 30, "bitrateMbps": 16, "encoder": "auto",
///                 "x264Preset": "superfast", "keyframeInterval": 1,
///                 "audio": { "enabled": false, "device": "default", "channels": 1, "sampleRate": 48000 } },
///   "snapshot": { "directories": ["/tmp"] },
///   "web":      { "enabled": false, "address": "0.0.0.0", "port": 8080, "token": null, "url": null,
///                 "connections": 32, "idleSeconds": 15, "previewViewers": 2 },
///   "mode":     "camera",
///   "booth":    { "countdownSeconds": 3, "reviewSeconds": 6, "shots": 1, "layout": "strip",
///                 "print": "off", "printer": null, "copies": 1, "flash": "off", "template": null } }
/// ```
/// Every section and key is optional (the values above are the defaults, except that
/// `photosDirectory`, `socket.group`, `license.publicKey`, `display.connector` and `display.mode`
/// are absent by default: the first connected connector, its preferred mode). Unknown
/// keys, wrong types and out-of-range values are errors naming the key path and what is
/// allowed. Relative paths are taken relative to the directory of the configuration file.
public struct Config: Sendable, Equatable {
    public static let defaultPath = "/etc/loopix/loopix.json"

    public enum CameraBackend: String, Sendable, Equatable, CaseIterable {
        /// libcamera when a camera is present, otherwise the simulated camera (saying so).
        case auto, libcamera, simulated
    }

    public enum DisplayBackend: String, Sendable, Equatable, CaseIterable {
        case auto, kms, window, headless
    }

    public struct CameraSection: Sendable, Equatable {
        public var backend: CameraBackend = .auto
        /// When true a missing camera is an error, never a silent fallback to the simulated one.
        public var required = false
        public var simulatedStillWidth = 4056
        public var simulatedStillHeight = 3040
        /// Photos the simulated camera shows (nil: a synthetic scene).
        public var photosDirectory: String? = nil
        /// Real focal length in mm by sensor model or camera id, for interchangeable-lens
        /// sensors (imx477, imx296) or to correct the lens table.
        public var focalLengths: [String: Double] = [:]
        /// The lens table (sensor model → focal length); the built-in one when absent.
        public var lensTable: String? = nil
        public init() {}
    }

    public struct DisplaySection: Sendable, Equatable {
        public var backend: DisplayBackend = .auto
        /// Window and headless size (KMS takes its size from the mode).
        public var width = 800
        public var height = 480
        /// KMS: connector name ("HDMI-A-1", "DSI-1"); nil: the first connected one.
        public var connector: String? = nil
        /// KMS: "WxH" or "WxH@Hz"; nil: the connector's preferred mode.
        public var mode: ModeSpec? = nil
        /// KMS: how the panel is mounted (0, 90, 180, 270 degrees clockwise); touch follows it.
        public var rotation: ScreenRotation = .none
        /// KMS: scan-out pixel format, xrgb8888 or rgb565.
        public var format: ScanoutFormat = .xrgb8888
        /// KMS: atomic commits, legacy page flips, or atomic where the driver has it (auto).
        public var flip: FlipAPI = .auto
        public init() {}

        /// What the KMS backend is asked for.
        public var kms: KMSConfiguration {
            KMSConfiguration(connector: connector, mode: mode, rotation: rotation, format: format, flip: flip)
        }
    }

    public struct StorageSection: Sendable, Equatable {
        public var directory = "/var/lib/loopix/photos"
        /// Free space (MB) to keep on the storage filesystem; captures stop short of it.
        public var reserveMB = 50
        public init() {}
    }

    public struct StateSection: Sendable, Equatable {
        public var directory = "/var/lib/loopix"
        public init() {}
    }

    public struct SocketSection: Sendable, Equatable {
        public var path = "/run/loopix/control.sock"
        /// Group the socket is given (mode 0660); nil: the daemon's own group.
        public var group: String? = nil
        public init() {}
    }

    public struct LicenseSection: Sendable, Equatable {
        /// The 32-byte Ed25519 public key licenses must be signed with (decoded from base64 or hex).
        public var publicKey: [UInt8]? = nil
        public var file = "/var/lib/loopix/license.json"
        public init() {}
    }

    public struct DefaultsSection: Sendable, Equatable {
        public var preset = "portra"
        /// Percent, 0…100.
        public var intensity: Double = 100
        /// Stops, −3…3.
        public var ev: Double = 0
        public var handedness: Handedness = .right
        public var grid = false
        public init() {}
    }

    public struct CaptureSection: Sendable, Equatable {
        /// How many photos may wait or be developed at once; nil ("auto"): from the still's size
        /// and the memory there is (`CaptureQueue.automaticCapacity`).
        public var queueLength: Int? = nil
        public var format = PhotoFormat.heic
        public var heicQuality = Int((HEICOptions.defaultQuality * 100).rounded())
        public var jpegQuality = HEICOptions.defaultJPEGQuality
        public var x265Preset = "ultrafast"
        /// Also keep each undeveloped still as a lossless PNG beside its HEIC (LPX_0001.PNG).
        public var keepOriginal = false
        /// Also save the sensor's raw frame as a DNG beside the photo (LPX_0001.DNG), where the
        /// camera gives one: a negative to develop again later (`loopix develop`).
        public var raw = false
        /// A command run after each photo is saved; nil: none.
        public var afterSave: AfterSaveSettings? = nil
        /// A timelapse started with the daemon (resumed after a restart); nil: none.
        public var interval: Intervalometer.Settings? = nil
        /// A GPIO trigger input; nil: none.
        public var trigger: TriggerSettings? = nil
        /// The date imprinted into photos and shown in the preview; nil: none (the default).
        public var dateStamp: DateStampFormat? = nil
        public init() {}
    }

    /// `capture.trigger`: a GPIO line whose edges take photos at their kernel timestamps.
    public struct TriggerSettings: Sendable, Equatable {
        /// The line (BCM number on a Pi). A button of the board on the same line is not read.
        public var line: Int
        /// The chip; nil: `gpio.chip` or the board's.
        public var chip: String? = nil
        public var edge = TriggerEdge.falling
        public var debounceMs = 10
        public init(line: Int) { self.line = line }
    }

    public struct VideoSection: Sendable, Equatable {
        /// Clip size; nil: 1920×1080, or 1280×720 on a board too slow for 1080p (Pi Zero 2 W, Pi 3).
        public var width: Int? = nil
        public var height: Int? = nil
        public var framesPerSecond = 30
        /// Target bit rate in Mbit/s; nil: 16 at 1080p, 8 at 720p (scaled by the pixel count).
        public var bitrateMbps: Double? = nil
        public var encoder = EncoderChoice.auto
        public var x264Preset = "superfast"
        /// Seconds between keyframes (also the fragment length: what a power cut can cost).
        public var keyframeInterval: Double = 1
        /// A microphone (ALSA device name, e.g. "default" or "plughw:1,0"); nil: no sound.
        public var audioDevice: String? = nil
        public var audioChannels = 1
        public var audioSampleRate = 48_000
        public init() {}
    }

    /// The web gallery and remote (off by default).
    public struct WebSection: Sendable, Equatable {
        public var enabled = false
        /// An IPv4 or IPv6 address to listen on ("0.0.0.0": every interface; "127.0.0.1": this machine only).
        public var address = "0.0.0.0"
        /// 0: any free port (tests).
        public var port = 8080
        /// Allows control (POST /api); nil: the gallery is read-only. At least 16 characters.
        public var token: String? = nil
        /// The gallery's address as phones reach it (QR codes); nil: http://<this machine's first
        /// LAN address>:<port>/.
        public var url: String? = nil
        public var connections = 32
        public var idleSeconds = 15
        public var previewViewers = 2
        public init() {}

        /// The gallery's address for phones (and its QR codes) is this machine's own loopback,
        /// which no phone can reach: what to change, or nil when it is not.
        public var loopbackWarning: String? {
            guard enabled else { return nil }
            if let url {
                let host = url.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(String.init) ?? ""
                let name = host.hasPrefix("[") ? String(host.dropFirst().prefix { $0 != "]" }) : String(host.prefix { $0 != ":" })
                guard Self.isLoopback(name) else { return nil }
                return "web.url: \(url) is this camera's loopback address: no phone can open it, and the QR codes carry it; "
                    + "give the address phones reach"
            }
            guard Self.isLoopback(address) else { return nil }
            return "web.address: \(address) is this camera's loopback address: no phone can reach the gallery, and the QR codes "
                + "carry it; listen on 0.0.0.0 (every interface) or set web.url"
        }

        static func isLoopback(_ host: String) -> Bool {
            host == "localhost" || host == "::1" || host.hasPrefix("127.") || host.lowercased().hasPrefix("::ffff:127.")
        }
    }

    public struct SnapshotSection: Sendable, Equatable {
        /// The directories a `snapshot` request may create its PNG in (absolute, no symbolic
        /// links on the way). A snapshot only ever creates a new file there.
        public var directories = ["/tmp"]
        public init() {}
    }

    public struct GPIOSection: Sendable, Equatable {
        /// The chip (path, name or label); nil: the board's.
        public var chip: String? = nil
        /// Button debounce, ms (0…100).
        public var debounceMs = 5
        /// Encoder transitions per detent: 1, 2 or 4.
        public var transitionsPerDetent = 4
        /// Encoder acceleration for fast turns (over 10 detents/s ×2, over 25 ×4).
        public var acceleration = true
        /// Pins overriding the board's (BCM line offsets, 0…53).
        public var pins: [ControlPin: Int] = [:]
        /// The flash's output line overriding the board's (`gpio.pins.flash`).
        public var flash: Int? = nil
        public init() {}
    }

    public struct IMUSection: Sendable, Equatable {
        /// false: no IMU is looked for (the scripted, level one is used).
        public var enabled = true
        /// The I2C bus (/dev/i2c-N); nil: the board's.
        public var bus: Int? = nil
        /// 7-bit address; nil: 0x68, 0x69, 0x6A, 0x6B are probed.
        public var address: Int? = nil
        public init() {}
    }

    /// A board id (`boards/<id>.json`), `auto` (found from the device-tree model by `load`) or
    /// `none` (no GPIO buttons, no board I2C bus).
    public var board = "auto"
    /// What `auto` found; nil until `load` looked (and when `board` names one).
    public var detectedBoard: DetectedBoard?
    /// Where board files (`<board>.json`) are installed.
    public var boardsDirectory = "/usr/share/loopix/boards"
    /// User presets (`*.json`, with their `.cube` files), read as `loopix develop` reads them;
    /// a missing directory means the built-in looks only.
    public var presetsDirectory = "/etc/loopix/presets"
    /// `"camera"` (the default) or `"photobooth"`: the daemon starts as a booth (the big
    /// button starts a countdown; `loopix ctl booth on|off` switches while running).
    public var photobooth = false
    public var booth = BoothSettings()
    public var gpio = GPIOSection()
    public var imu = IMUSection()
    public var camera = CameraSection()
    public var display = DisplaySection()
    public var storage = StorageSection()
    public var state = StateSection()
    public var socket = SocketSection()
    public var license = LicenseSection()
    public var defaults = DefaultsSection()
    public var capture = CaptureSection()
    public var video = VideoSection()
    public var snapshot = SnapshotSection()
    public var web = WebSection()
    /// Where the values came from (a path, or "built-in defaults"); for logging.
    public var source = "built-in defaults"
    /// Things worth a log line that are not errors (e.g. "no config file, using defaults").
    public var notes: [String] = []
    /// Things worth a warning that are not errors (e.g. a board `auto` does not know).
    public var warnings: [String] = []

    /// The board in use: the configured one, what `auto` found, or nil (`none`, or unknown).
    public var boardID: String? {
        switch board {
        case "none": return nil
        case "auto": return detectedBoard?.id
        default: return board
        }
    }

    public init() {}

    public static let defaults = Config()

    public static let x265Presets = ["ultrafast", "superfast", "veryfast", "faster", "fast",
                                     "medium", "slow", "slower", "veryslow", "placebo"]

    /// Loads the configuration. `path` nil means `defaultPath`, where a missing file means the
    /// defaults (with a note saying so); a missing file at an explicit path is an error.
    /// `"board": "auto"` is resolved here, from the device-tree model at `modelPath`.
    public static func load(path: String? = nil, modelPath: String = DetectedBoard.modelPath) throws(ConfigError) -> Config {
        let file = path ?? defaultPath
        var bytes: [UInt8]?
        do { bytes = try readFile(file) } catch {
            guard error == .noSuchFile else { throw ConfigError(source: file, field: "", message: "cannot be read (\(error))") }
            guard path == nil else { throw ConfigError(source: file, field: "", message: "no such file") }
        }
        var config: Config
        if let bytes {
            config = try parse(bytes, source: file)
        } else {
            config = Config()
            config.notes.append("\(file) does not exist; using the built-in defaults")
        }
        config.detectBoard(modelPath: modelPath)
        return config
    }

    /// Resolves `"board": "auto"` from the model string in `modelPath`.
    public mutating func detectBoard(modelPath: String = DetectedBoard.modelPath) {
        guard board == "auto" else { return }
        let found = DetectedBoard.detect(model: DetectedBoard.readModel(path: modelPath), boardsDirectory: boardsDirectory)
        detectedBoard = found
        if found.isUnknownBoard { warnings.append(found.message) } else { notes.append(found.message) }
    }

    /// A whole configuration-sized file (at most 1 MiB).
    static func readFile(_ path: String) throws(Errno) -> [UInt8] {
        let fd = try FileDescriptor.open(path, O_RDONLY)
        let st = try fd.status()
        if (st.st_mode & S_IFMT) == S_IFDIR { throw Errno(EISDIR) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        let raw = fd.rawValue
        while out.count <= 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(raw, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Errno.current
            }
            if n == 0 { return out }
            out += chunk[0..<n]
        }
        throw Errno(EFBIG)
    }

    /// Parses configuration JSON. `source` names it in errors and anchors relative paths.
    public static func parse<C: Collection<UInt8>>(_ bytes: C, source: String) throws(ConfigError) -> Config {
        func fail(_ field: String, _ message: String) -> ConfigError {
            ConfigError(source: source, field: field, message: message)
        }
        let root = try FieldError.parseObject(bytes, source: source)
        let base = (source as NSString).deletingLastPathComponent
        func resolve(_ p: String, _ field: String) throws(ConfigError) -> String {
            guard !p.isEmpty else { throw fail(field, "must not be empty") }
            guard !p.contains("\0") else { throw fail(field, "must not contain NUL") }
            if p.hasPrefix("/") || base.isEmpty { return p }
            return (base as NSString).appendingPathComponent(p)
        }

        var config = Config()
        config.source = source
        var r = JSONFields(root, fail: fail)
        if let board = try r.optionalString("board") {
            guard !board.isEmpty else { throw fail("board", "must not be empty") }
            config.board = board
        }
        if let mode = try r.optionalString("mode") {
            guard mode == "camera" || mode == "photobooth" else { throw fail("mode", "\"\(mode)\" is not camera or photobooth") }
            config.photobooth = mode == "photobooth"
        }
        try r.section("booth") { r throws(ConfigError) in
            var b = BoothSettings()
            b.countdownSeconds = try r.integer("countdownSeconds", in: 0...10) ?? b.countdownSeconds
            b.reviewSeconds = try r.integer("reviewSeconds", in: 1...60) ?? b.reviewSeconds
            b.shots = try r.integer("shots", in: 1...4) ?? b.shots
            if let l = try r.optionalString("layout") {
                guard let layout = BoothSettings.Layout(rawValue: l) else { throw fail(r.path("layout"), "\"\(l)\" is not strip or grid") }
                b.layout = layout
            }
            b.print = try r.choice("print", BoothSettings.PrintMode.self) ?? b.print
            b.flash = try r.choice("flash", BoothSettings.FlashMode.self) ?? b.flash
            if let t = try r.optionalString("template") { b.template = try resolve(t, r.path("template")) }
            if let name = try r.optionalString("printer") {
                guard !name.isEmpty, name.count <= 127, name.allSatisfy({ $0.isASCII && $0 != "/" && $0 != "#" && !$0.isWhitespace }) else {
                    throw fail(r.path("printer"), "must be a CUPS queue name (printable ASCII without spaces, / or #)")
                }
                b.printer = name
            }
            b.copies = try r.integer("copies", in: 1...10) ?? b.copies
            config.booth = b
        }
        if let p = try r.optionalString("boardsDirectory") {
            config.boardsDirectory = try resolve(p, "boardsDirectory")
        }
        if let p = try r.optionalString("presetsDirectory") {
            config.presetsDirectory = try resolve(p, "presetsDirectory")
        }
        try r.section("gpio") { r throws(ConfigError) in
            var g = GPIOSection()
            if let chip = try r.optionalString("chip") {
                guard !chip.isEmpty else { throw fail(r.path("chip"), "must not be empty") }
                g.chip = chip
            }
            g.debounceMs = try r.integer("debounceMs", in: 0...100) ?? g.debounceMs
            if let t = try r.integer("transitionsPerDetent", in: 1...4) {
                guard [1, 2, 4].contains(t) else { throw fail(r.path("transitionsPerDetent"), "\(t) is not 1, 2 or 4") }
                g.transitionsPerDetent = t
            }
            g.acceleration = try r.bool("acceleration") ?? g.acceleration
            try r.section("pins") { r throws(ConfigError) in
                for key in r.object.keys.sorted() {
                    if key == Board.flashName {
                        g.flash = try r.integer(key, in: Board.bcmLines)
                        continue
                    }
                    guard let pin = ControlPin(rawValue: key) else {
                        throw fail(r.path(key), "unknown control (allowed: \(Board.pinNames))")
                    }
                    if let line = try r.integer(key, in: Board.bcmLines) { g.pins[pin] = line }
                }
                if let (a, b, line) = Board.firstDuplicate(g.pins, flash: g.flash) {
                    throw fail(r.path(b), "line \(line) is also used by \(a) (\(r.path(a)))")
                }
            }
            config.gpio = g
        }
        try r.section("imu") { r throws(ConfigError) in
            var m = IMUSection()
            m.enabled = try r.bool("enabled") ?? m.enabled
            m.bus = try r.integer("bus", in: 0...255)
            m.address = try r.integer("address", in: 0x03...0x77)
            config.imu = m
        }
        try r.section("camera") { r throws(ConfigError) in
            var c = CameraSection()
            c.backend = try r.choice("backend", CameraBackend.self, allowed: CameraBackend.allCases) ?? c.backend
            c.required = try r.bool("required") ?? c.required
            c.simulatedStillWidth = try r.integer("simulatedStillWidth", in: 64...8192) ?? c.simulatedStillWidth
            c.simulatedStillHeight = try r.integer("simulatedStillHeight", in: 64...8192) ?? c.simulatedStillHeight
            if let p = try r.optionalString("photosDirectory") {
                c.photosDirectory = try resolve(p, r.path("photosDirectory"))
            }
            if let p = try r.optionalString("lensTable") {
                c.lensTable = try resolve(p, r.path("lensTable"))
            }
            if let raw = r.value("focalLengths") {
                guard case .object(let object) = raw else {
                    throw fail(r.path("focalLengths"), "must be an object of sensor model or camera id → focal length in mm")
                }
                for (key, value) in object.members {
                    guard case .number(let mm) = value, (0.5...300).contains(mm) else {
                        throw fail(r.path("focalLengths") + ".\(key)", "must be a focal length in mm from 0.5 to 300")
                    }
                    c.focalLengths[key] = mm
                }
            }
            config.camera = c
        }
        try r.section("display") { r throws(ConfigError) in
            var d = DisplaySection()
            d.backend = try r.choice("backend", DisplayBackend.self, allowed: DisplayBackend.allCases) ?? d.backend
            d.width = try r.integer("width", in: 160...3840) ?? d.width
            d.height = try r.integer("height", in: 120...2160) ?? d.height
            if let name = try r.optionalString("connector") {
                let ok = !name.isEmpty && name.count <= 32 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
                guard ok else {
                    throw fail(r.path("connector"), "\"\(name)\" is not a connector name (like HDMI-A-1, DSI-1, Virtual-1)")
                }
                d.connector = name
            }
            if let text = try r.optionalString("mode") {
                guard let spec = ModeSpec(text) else {
                    throw fail(r.path("mode"), "\"\(text)\" is not a mode (WIDTHxHEIGHT or WIDTHxHEIGHT@HZ, like 1920x1080@60)")
                }
                d.mode = spec
            }
            if let degrees = try r.integer("rotation", in: Int.min...Int.max) {
                guard let rotation = ScreenRotation(degrees: degrees) else {
                    throw fail(r.path("rotation"), "\(degrees) is not allowed (allowed 0, 90, 180, 270)")
                }
                d.rotation = rotation
            }
            d.format = try r.choice("format", ScanoutFormat.self, allowed: ScanoutFormat.allCases) ?? d.format
            d.flip = try r.choice("flip", FlipAPI.self, allowed: FlipAPI.allCases) ?? d.flip
            config.display = d
        }
        try r.section("storage") { r throws(ConfigError) in
            if let p = try r.optionalString("directory") {
                config.storage.directory = try resolve(p, r.path("directory"))
            }
            config.storage.reserveMB = try r.integer("reserveMB", in: 0...10000) ?? config.storage.reserveMB
        }
        try r.section("state") { r throws(ConfigError) in
            if let p = try r.optionalString("directory") {
                config.state.directory = try resolve(p, r.path("directory"))
            }
        }
        try r.section("socket") { r throws(ConfigError) in
            if let p = try r.optionalString("path") {
                let resolved = try resolve(p, r.path("path"))
                guard resolved.utf8.count < 108 else {
                    throw fail(r.path("path"), "is \(resolved.utf8.count) bytes long (a socket path must be under 108)")
                }
                config.socket.path = resolved
            }
            if let g = try r.optionalString("group") {
                guard !g.isEmpty else { throw fail(r.path("group"), "must not be empty") }
                config.socket.group = g
            }
        }
        try r.section("license") { r throws(ConfigError) in
            if let k = try r.optionalString("publicKey") {
                guard let key = LicenseKeys.decode(k, length: LicenseKeys.publicKeyLength) else {
                    throw fail(r.path("publicKey"), "must be a 32-byte Ed25519 public key in base64 or hex")
                }
                config.license.publicKey = key
            }
            if let p = try r.optionalString("file") {
                config.license.file = try resolve(p, r.path("file"))
            }
        }
        try r.section("defaults") { r throws(ConfigError) in
            var d = DefaultsSection()
            if let id = try r.optionalString("preset") {
                guard ControlRequest.isValidPresetID(id) else {
                    throw fail(r.path("preset"), "\"\(id)\" is not a preset id (1 to 32 characters of a–z, 0–9 and -)")
                }
                d.preset = id
            }
            d.intensity = try r.number("intensity", in: 0...100) ?? d.intensity
            d.ev = try r.number("ev", in: -3...3) ?? d.ev
            d.handedness = try r.choice("handedness", Handedness.self, allowed: Handedness.allCases) ?? d.handedness
            d.grid = try r.bool("grid") ?? d.grid
            config.defaults = d
        }
        try r.section("capture") { r throws(ConfigError) in
            var c = CaptureSection()
            if case .string(let text)? = r.value("queueLength") {
                guard text == "auto" else { throw fail(r.path("queueLength"), "must be a number from 1 to 64 or \"auto\", not \"\(text)\"") }
            } else {
                c.queueLength = try r.integer("queueLength", in: 1...64)
            }
            c.format = try r.choice("format", PhotoFormat.self) ?? c.format
            c.heicQuality = try r.integer("heicQuality", in: 1...100) ?? c.heicQuality
            c.jpegQuality = try r.integer("jpegQuality", in: 1...100) ?? c.jpegQuality
            if let p = try r.optionalString("x265Preset") {
                guard x265Presets.contains(p) else {
                    throw fail(r.path("x265Preset"), "\"\(p)\" is not one of \(x265Presets.joined(separator: ", "))")
                }
                c.x265Preset = p
            }
            c.keepOriginal = try r.bool("keepOriginal") ?? c.keepOriginal
            c.raw = try r.bool("raw") ?? c.raw
            // true (the classic '98 11 30), false, or { "format": "…" }.
            if case .bool(let on)? = r.value("dateStamp") {
                c.dateStamp = on ? .classic : nil
            } else {
                try r.section("dateStamp") { r throws(ConfigError) in
                    let pattern = try r.optionalString("format") ?? DateStampFormat.classic.pattern
                    guard let format = DateStampFormat(pattern) else {
                        throw fail(r.path("format"), "\(JSONValue.quote(String(pattern.prefix(40)))) must be 1 to 24 characters with a date token "
                                   + "(YYYY YY MM M DD D HH mm) and otherwise only digits, spaces and ' - . : /")
                    }
                    c.dateStamp = format
                }
            }
            try r.section("afterSave") { r throws(ConfigError) in
                guard let command = try r.strings("command"), let program = command.first else {
                    throw fail(r.path("command"), "is missing (a list: the program's absolute path, then its arguments)")
                }
                guard program.hasPrefix("/") else {
                    throw fail(r.path("command"), "\"\(program.prefix(60))\" must be an absolute path (no PATH search, no shell)")
                }
                guard command.allSatisfy({ !$0.contains("\0") }) else { throw fail(r.path("command"), "must not contain NUL") }
                var hook = AfterSaveSettings(command: command)
                hook.timeoutSeconds = try r.number("timeoutSeconds", in: 1...86_400, unit: " s") ?? hook.timeoutSeconds
                hook.running = try r.integer("running", in: 1...8) ?? hook.running
                hook.waiting = try r.integer("waiting", in: 1...1000) ?? hook.waiting
                c.afterSave = hook
            }
            try r.section("trigger") { r throws(ConfigError) in
                guard let line = try r.integer("line", in: Board.bcmLines) else { throw fail(r.path("line"), "is missing (the BCM line number)") }
                var t = TriggerSettings(line: line)
                if let chip = try r.optionalString("chip") {
                    guard !chip.isEmpty else { throw fail(r.path("chip"), "must not be empty") }
                    t.chip = chip
                }
                t.edge = try r.choice("edge", TriggerEdge.self) ?? t.edge
                t.debounceMs = try r.integer("debounceMs", in: 0...1000) ?? t.debounceMs
                c.trigger = t
            }
            try r.section("interval") { r throws(ConfigError) in
                guard let every = try r.number("everySeconds", in: ControlRequest.intervalSeconds, unit: " s") else {
                    throw fail(r.path("everySeconds"), "is missing")
                }
                func time(_ key: String) throws(ConfigError) -> Double? {
                    guard let text = try r.optionalString(key) else { return nil }
                    guard let date = ISO8601DateFormatter().date(from: text) else {
                        throw fail(r.path(key), "\"\(text.prefix(40))\" is not an ISO 8601 time with its offset, e.g. 2026-12-24T06:00:00+01:00")
                    }
                    return date.timeIntervalSince1970
                }
                let settings = Intervalometer.Settings(everySeconds: every, count: try r.integer("count", in: 1...ControlRequest.maxIntervalCount),
                                                       start: try time("start"), stop: try time("stop"))
                if let start = settings.start, let stop = settings.stop, stop <= start {
                    throw fail(r.path("stop"), "must be after start")
                }
                c.interval = settings
            }
            config.capture = c
        }
        try r.section("video") { r throws(ConfigError) in
            var v = VideoSection()
            v.width = try r.integer("width", in: 160...3840)
            v.height = try r.integer("height", in: 120...2160)
            if let w = v.width, w % 2 != 0 { throw fail(r.path("width"), "\(w) must be even (4:2:0 video)") }
            if let h = v.height, h % 2 != 0 { throw fail(r.path("height"), "\(h) must be even (4:2:0 video)") }
            if (v.width == nil) != (v.height == nil) { throw fail(r.path(v.width == nil ? "width" : "height"), "is missing (give both or neither)") }
            v.framesPerSecond = try r.integer("fps", in: 1...60) ?? v.framesPerSecond
            v.bitrateMbps = try r.number("bitrateMbps", in: 0.5...100)
            v.encoder = try r.choice("encoder", EncoderChoice.self) ?? v.encoder
            if let p = try r.optionalString("x264Preset") {
                guard x265Presets.contains(p) else {
                    throw fail(r.path("x264Preset"), "\"\(p)\" is not one of \(x265Presets.joined(separator: ", "))")
                }
                v.x264Preset = p
            }
            v.keyframeInterval = try r.number("keyframeInterval", in: 0.2...10) ?? v.keyframeInterval
            try r.section("audio") { r throws(ConfigError) in
                let enabled = try r.bool("enabled") ?? true
                let device = try r.optionalString("device") ?? "default"
                guard !device.isEmpty else { throw fail(r.path("device"), "must not be empty") }
                v.audioDevice = enabled ? device : nil
                v.audioChannels = try r.integer("channels", in: 1...2) ?? v.audioChannels
                v.audioSampleRate = try r.integer("sampleRate", in: 8000...96000) ?? v.audioSampleRate
            }
            config.video = v
        }
        try r.section("snapshot") { r throws(ConfigError) in
            guard let v = r.value("directories") else { return }
            guard case .array(let items) = v, !items.isEmpty, items.count <= 16 else {
                throw fail(r.path("directories"), "must be a list of 1 to 16 absolute directory paths")
            }
            var dirs: [String] = []
            for (i, item) in items.enumerated() {
                guard case .string(let p) = item, p.hasPrefix("/"), !p.contains("\0") else {
                    throw fail(r.path("directories") + "[\(i)]", "must be an absolute directory path")
                }
                dirs.append(p.count > 1 && p.hasSuffix("/") ? String(p.dropLast()) : p)
            }
            config.snapshot.directories = dirs
        }
        try r.section("web") { r throws(ConfigError) in
            var w = WebSection()
            w.enabled = try r.bool("enabled") ?? w.enabled
            if let a = try r.optionalString("address") {
                var v4 = in_addr(), v6 = in6_addr()
                guard inet_pton(AF_INET, a, &v4) == 1 || inet_pton(AF_INET6, a, &v6) == 1 else {
                    throw fail(r.path("address"), "\"\(a)\" is not an IPv4 or IPv6 address")
                }
                w.address = a
            }
            w.port = try r.integer("port", in: 0...65535) ?? w.port
            if let t = try r.optionalString("token") {
                guard t.count >= 16, t.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                    throw fail(r.path("token"), "must be at least 16 printable ASCII characters without spaces")
                }
                w.token = t
            }
            if let u = try r.optionalString("url") {
                guard u.hasPrefix("http://") || u.hasPrefix("https://") else { throw fail(r.path("url"), "must start with http:// or https://") }
                w.url = u.hasSuffix("/") ? u : u + "/"
            }
            w.connections = try r.integer("connections", in: 4...1024) ?? w.connections
            w.idleSeconds = try r.integer("idleSeconds", in: 1...300) ?? w.idleSeconds
            w.previewViewers = try r.integer("previewViewers", in: 0...16) ?? w.previewViewers
            config.web = w
            if let warning = w.loopbackWarning { config.warnings.append("\(source): \(warning)") }
        }
        try r.rejectUnknown(allowed: "board, boardsDirectory, presetsDirectory, mode, booth, gpio, imu, camera, display, storage, state, socket, license, defaults, capture, video, snapshot, web")
        return config
    }

    /// Decides which camera to open given whether a real camera was found, following
    /// `camera.backend` and `camera.required`. Returns the backend and, when `auto` fell back to
    /// the simulated camera, a note to log. Throws when a camera is required (or libcamera was
    /// asked for explicitly) and none is present.
    public func resolveCameraBackend(cameraPresent: Bool) throws(ConfigError) -> (backend: CameraBackend, note: String?) {
        switch camera.backend {
        case .simulated:
            return (.simulated, nil)
        case .libcamera:
            guard cameraPresent else {
                throw ConfigError(source: source, field: "camera.backend", message: "libcamera was asked for but no camera was found")
            }
            return (.libcamera, nil)
        case .auto:
            if cameraPresent { return (.libcamera, nil) }
            if camera.required {
                throw ConfigError(source: source, field: "camera.required", message: "no camera was found and camera.required is true (no fallback to the simulated camera)")
            }
            return (.simulated, "no camera was found; using the simulated camera (camera.backend is auto)")
        }
    }
}

// MARK: Reloading and checking

extension Config {
    /// The keys (`section.field`, or a top-level key) whose values differ between `self` and
    /// `other`, in the file's order.
    public func changedKeys(from other: Config) -> [String] {
        var changed: [String] = []
        let ours = Mirror(reflecting: self), theirs = Mirror(reflecting: other)
        for (a, b) in zip(ours.children, theirs.children) {
            guard let key = a.label, !["source", "notes", "warnings"].contains(key) else { continue }
            let fieldsA = Mirror(reflecting: a.value), fieldsB = Mirror(reflecting: b.value)
            if fieldsA.displayStyle == .struct, !fieldsA.children.isEmpty {
                for (fa, fb) in zip(fieldsA.children, fieldsB.children) where "\(fa.value)" != "\(fb.value)" {
                    changed.append("\(key).\(fa.label ?? "?")")
                }
            } else if "\(a.value)" != "\(b.value)" {
                changed.append(key)
            }
        }
        return changed
    }

    /// Keys a running daemon takes over on SIGHUP; every other change waits for a restart.
    public static let reloadableKeys: Set<String> = [
        "storage.reserveMB", "capture.queueLength", "capture.format", "capture.heicQuality", "capture.jpegQuality",
        "capture.x265Preset", "capture.keepOriginal", "capture.raw", "capture.dateStamp",
        "license.publicKey", "license.file", "snapshot.directories",
        "defaults.preset", "defaults.intensity", "defaults.ev", "defaults.handedness", "defaults.grid",
        "presetsDirectory", "video.bitrateMbps", "video.encoder", "video.x264Preset", "video.keyframeInterval",
        "video.audioDevice", "video.audioChannels", "video.audioSampleRate",
    ]

    /// `defaults.preset` must name a look there is (built in, or in `presetsDirectory`); nil
    /// when it does.
    public func presetProblem(lookIDs: [String]) -> String? {
        guard !lookIDs.contains(defaults.preset) else { return nil }
        return "\(source): defaults.preset: there is no look \"\(defaults.preset)\" (built in, or a preset in \(presetsDirectory))"
    }

    /// The photo and state directories must be directories (or not exist yet, under directories).
    public func directoryProblems() -> [String] {
        [("storage.directory", storage.directory), ("state.directory", state.directory)].compactMap { key, path in
            Directories.problem(path).map { "\(source): \(key): \($0)" }
        }
    }

    /// What `loopixd --check-config` checks beyond the file itself, against this machine: the
    /// socket's group exists, the board file loads, the license key and file go together.
    /// One line per problem; empty when all is well.
    public func environmentProblems() -> [String] {
        var problems = directoryProblems()
        let looks = (try? PresetLibrary(directory: presetsDirectory))?.presets ?? BuiltinPresets.all
        if let problem = presetProblem(lookIDs: looks.map(\.id)) { problems.append(problem) }
        if let group = socket.group, ControlServer.lookupGroup(group) == nil {
            problems.append("\(source): socket.group: there is no group \"\(group)\" on this machine (create it, or leave socket.group out)")
        }
        if board != "none" && board != "auto" {
            do { _ = try Board.load(id: board, directory: boardsDirectory) } catch {
                problems.append("\(source): board: \(error)")
            }
        }
        return problems
    }
}

extension Config {
    /// Boards whose CPU cannot grade and encode 1080p30: they record 720p unless told otherwise.
    static let slowVideoBoards: Set<String> = ["pi-zero-2w", "pi3bplus"]

    /// What the recorder is asked for, with the defaults filled in for this board.
    public var videoSettings: VideoSettings {
        var v = VideoSettings()
        let slow = boardID.map(Self.slowVideoBoards.contains) ?? false
        v.width = video.width ?? (slow ? 1280 : 1920)
        v.height = video.height ?? (slow ? 720 : 1080)
        v.framesPerSecond = video.framesPerSecond
        // 16 Mbit/s at 1080p30 keeps grain; other sizes and rates in proportion.
        let scale = Double(v.width * v.height) / (1920 * 1080) * Double(v.framesPerSecond) / 30
        v.bitrate = Int((video.bitrateMbps ?? max(2, 16 * scale)) * 1_000_000)
        v.encoder = video.encoder
        v.x264Preset = video.x264Preset
        v.keyframeInterval = video.keyframeInterval
        if let device = video.audioDevice {
            var a = AudioSettings(device: device)
            a.channels = video.audioChannels
            a.sampleRate = video.audioSampleRate
            v.audio = a
        }
        return v
    }
}
