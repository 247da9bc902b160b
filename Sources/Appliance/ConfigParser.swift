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

/// Reading the configuration: every key checked against its type and range, one error line
/// naming the key and the problem (`ConfigError`).
extension Config {
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
