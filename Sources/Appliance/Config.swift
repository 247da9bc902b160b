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
}
