import Camera
import Controls
import Display
import Dispatch
import FilmCore
import Foundation
import ImageFiles

/// The daemon's brain. Owns `CameraState` and every device; runs the preview loop on the
/// thread that calls `run()`: camera frame → film engine at display size → overlay → display,
/// and between frames the queued input (display events, control-socket requests, motion).
/// Photos are developed and saved on the capture queue; nothing here waits for them.
public final class Controller: @unchecked Sendable {
    public struct Devices {
        public var camera: CameraSource
        /// Set when `camera` is the simulated one (enables the `simulate` request).
        public var simulated: SimulatedCamera?
        public var display: DisplaySink
        public var motion: MotionSensor?
        /// Further input (GPIO buttons and encoder, touch screens, keyboards), drained once per loop.
        public var inputs: [InputSource] = []
        /// Set when a screen was asked for: while the preview is headless (no display at start,
        /// or the display failed), called every `displayProbeInterval` s to look for one that has
        /// appeared since, with the input that comes with it; nil while there is none.
        public var findDisplay: (() -> (display: DisplaySink, inputs: [InputSource])?)?

        public init(camera: CameraSource, simulated: SimulatedCamera?, display: DisplaySink, motion: MotionSensor?,
                    inputs: [InputSource] = [], findDisplay: (() -> (display: DisplaySink, inputs: [InputSource])?)? = nil) {
            self.camera = camera
            self.simulated = simulated
            self.display = display
            self.motion = motion
            self.inputs = inputs
            self.findDisplay = findDisplay
        }
    }

    public private(set) var config: Config
    private var devices: Devices
    private let presets: [Preset]
    private let rules: StateRules
    public private(set) var state: CameraState
    private let settingsStore: SettingsStore
    private let storage: PhotoStorage
    private let captures: CaptureQueue
    private let licensed: Bool
    let mailbox = Mailbox()
    private let cores = ProcessInfo.processInfo.activeProcessorCount

    // Preview
    private var cameraFrame: RGBImage
    private var composed: RGBImage
    private var renderer: FilmRenderer?
    private var overlay: OverlayRenderer
    private var grainClock = GrainClock()
    private var analyzer = MotionAnalyzer()
    private let lookLock = NSLock()
    private var compiledLook: FilmLook?
    private var compiling: String?
    private let compileQueue = DispatchQueue(label: "loopix.look", qos: .userInitiated)
    private let saveQueue = DispatchQueue(label: "loopix.settings", qos: .utility)

    // Status
    private var banner: (text: String, until: UInt64)?
    private let asyncLock = NSLock()
    private var asyncBanner: String?
    private var savedPhotos = 0
    private var lastPhoto: String?
    private var intensityVisibleUntil: UInt64 = 0
    private var cameraRunning = false
    private var lastFrameAt: UInt64 = 0
    /// When the camera last delivered a frame (0: not since it started).
    private var frameDeliveredAt: UInt64 = 0
    private var cameraRestarts = 0
    private var nextCameraAttempt: UInt64 = 0
    private var cameraError: String?
    private var lastMetadata = FrameMetadata()
    private let stopLock = NSLock()
    private var stopRequested = false
    private var reloadRequested = false
    private let configPath: String?
    private var nextDisplayProbe: UInt64 = 0

    /// No frame for this long: the camera is restarted.
    static let frameTimeout: Double = 2
    static let maxQuickRestarts = 3
    static let retryDelay: Double = 10
    /// How often a headless preview looks for a display that was asked for.
    static let displayProbeInterval: Double = 2

    public init(config: Config, configPath: String?, devices: Devices, presets: [Preset] = BuiltinPresets.all) {
        self.config = config
        self.configPath = configPath
        self.devices = devices
        self.presets = presets
        rules = StateRules(presetIDs: presets.map(\.id), lensCount: devices.camera.lenses.count)
        do { try FileManager.default.createDirectory(atPath: config.state.directory, withIntermediateDirectories: true) } catch {
            Log.error("\(config.state.directory): cannot create the state directory (\(error)); settings will not be kept")
        }
        settingsStore = SettingsStore(directory: config.state.directory)
        let loaded = settingsStore.load(defaults: Settings(defaults: config.defaults))
        if let warning = loaded.warning { Log.warning(warning) }
        let s = loaded.settings
        var state = CameraState(presetID: presets.contains { $0.id == s.preset } ? s.preset : (presets.first?.id ?? "clean"),
                                intensities: s.intensities, ev: CameraState.snapEV(s.ev),
                                lensIndex: min(max(s.lensIndex, 0), max(devices.camera.lenses.count - 1, 0)),
                                grid: s.grid, handedness: s.handedness, onboardingDone: s.onboardingDone)
        state.dial = .ev
        state.defaultIntensity = config.defaults.intensity / 100
        self.state = state
        storage = PhotoStorage(directory: config.storage.directory, stateDirectory: config.state.directory,
                               reserveBytes: Int64(config.storage.reserveMB) * 1_048_576)
        licensed = Self.checkLicense(config)
        let w = devices.display.width, h = devices.display.height
        cameraFrame = RGBImage(width: w, height: h)
        composed = RGBImage(width: w, height: h)
        overlay = OverlayRenderer(width: w, height: h)
        let asyncLock = self.asyncLock
        let box = AsyncBannerBox()
        captures = CaptureQueue(capacity: config.capture.queueLength,
                                heic: HEICOptions(quality: Double(config.capture.heicQuality) / 100, x265Preset: config.capture.x265Preset),
                                threads: ProcessInfo.processInfo.activeProcessorCount) { path, error in
            if let error {
                Log.error("\(path): photo lost: \(error)")
                box.set("Photo not saved", lock: asyncLock)
            } else {
                Log.info("saved \(path)")
                box.saved(path, lock: asyncLock)
            }
        }
        bannerBox = box
    }

    private let bannerBox: AsyncBannerBox

    static func checkLicense(_ config: Config) -> Bool {
        guard let key = config.license.publicKey else { return false }
        guard let bytes = FileManager.default.contents(atPath: config.license.file) else {
            Log.info("no license at \(config.license.file): Pro looks carry a watermark")
            return false
        }
        do {
            let license = try License.verify([UInt8](bytes), publicKey: key)
            Log.info("licensed to \(license.licensee)")
            return license.has("pro")
        } catch {
            Log.warning("\(config.license.file): \(error); Pro looks carry a watermark")
            return false
        }
    }

    // MARK: Lifecycle

    /// Asks the loop to stop after the current frame (signal handlers call this).
    public func requestStop() {
        stopLock.lock()
        stopRequested = true
        stopLock.unlock()
    }

    /// Asks the loop to re-read the configuration (SIGHUP).
    public func requestReload() {
        stopLock.lock()
        reloadRequested = true
        stopLock.unlock()
    }

    private var shouldStop: Bool {
        stopLock.lock()
        defer { stopLock.unlock() }
        return stopRequested
    }

    /// Runs the preview loop until a stop is requested or the window is closed.
    public func run() {
        Log.info("camera: \(devices.camera.lenses.map(\.label).joined(separator: ", ")); display: \(devices.display.name); storage: \(config.storage.directory)")
        if !state.onboardingDone { Log.info("first start: waiting for the user to press the button they want as shutter") }
        compileLook()
        startCamera()
        while !shouldStop && !devices.display.closeRequested {
            handleReload()
            mailbox.drain()
            for event in devices.display.pollEvents() { handle(event) }
            for source in devices.inputs {
                for event in source.drain() { handle(event) }
            }
            readMotion()
            lookForDisplay()
            previewFrame()
        }
        Log.info("stopping")
    }

    /// Stops the camera and waits (at most `timeout` s) for queued photos to be saved.
    public func shutdown(timeout: Double = 30) {
        devices.camera.stop()
        cameraRunning = false
        let pending = captures.pending
        if pending > 0 { Log.info("finishing \(pending) queued photo\(pending == 1 ? "" : "s")") }
        if !captures.drain(timeout: timeout) {
            Log.error("gave up waiting for \(captures.pending) photo(s) after \(Int(timeout)) s")
        }
        saveQueue.sync {}
    }

    private func handleReload() {
        stopLock.lock()
        let reload = reloadRequested
        reloadRequested = false
        stopLock.unlock()
        guard reload else { return }
        guard let path = configPath else {
            Log.info("SIGHUP: no configuration file to reload (running on defaults)")
            return
        }
        do {
            let fresh = try Config.load(path: path)
            config = fresh
            storage.reserveBytes = Int64(fresh.storage.reserveMB) * 1_048_576
            Log.info("reloaded \(path)")
        } catch {
            Log.error("\(error); keeping the previous configuration")
        }
    }

    // MARK: Camera

    private func startCamera() {
        do {
            try devices.camera.start(lens: state.lensIndex, previewWidth: cameraFrame.width, previewHeight: cameraFrame.height)
            devices.camera.setControls(cameraControls)
            cameraRunning = true
            lastFrameAt = now()
            frameDeliveredAt = 0
        } catch {
            cameraRunning = false
            cameraError = "\(error)"
            Log.error("cannot start the camera: \(error)")
        }
    }

    private var cameraControls: CameraControls {
        CameraControls(ev: state.ev, focusPoint: state.focusPoint, aeLocked: state.aeLocked, afLocked: state.afLocked)
    }

    private func previewFrame() {
        let t = now()
        guard cameraRunning else {
            // The camera is down: keep the screen and the socket alive, retry now and then.
            if t >= nextCameraAttempt {
                startCamera()
                if !cameraRunning { nextCameraAttempt = t + UInt64(Self.retryDelay * 1e9) }
            }
            composeWithoutCamera()
            Thread.sleep(forTimeInterval: 1.0 / 30)
            return
        }
        do {
            lastMetadata = try devices.camera.nextPreviewFrame(into: &cameraFrame, timeout: 0.1)
            lastFrameAt = now()
            frameDeliveredAt = lastFrameAt
            if cameraError != nil { Log.info("camera is back: frames are flowing") }
            cameraRestarts = 0
            cameraError = nil
        } catch CameraError.timeout {
            if Double(now() - lastFrameAt) / 1e9 >= Self.frameTimeout { restartCamera(reason: "no frame for \(Int(Self.frameTimeout)) s") }
            return
        } catch {
            restartCamera(reason: "\(error)")
            return
        }
        compose(fromCamera: true)
    }

    private func restartCamera(reason: String) {
        devices.camera.stop()
        cameraRunning = false
        cameraRestarts += 1
        cameraError = reason
        if cameraRestarts <= Self.maxQuickRestarts {
            Log.warning("camera: \(reason); restarting (attempt \(cameraRestarts) of \(Self.maxQuickRestarts))")
            nextCameraAttempt = 0
        } else {
            Log.error("camera: \(reason); retrying every \(Int(Self.retryDelay)) s")
            nextCameraAttempt = now() + UInt64(Self.retryDelay * 1e9)
        }
    }

    // MARK: Preview

    private func compose(fromCamera: Bool) {
        adoptCompiledLook()
        let rate = analyzer.grainRate
        let grainFrame = grainClock.advance(rate: rate)
        if let renderer {
            cameraFrame.pixels.withUnsafeBufferPointer { src in
                composed.pixels.withUnsafeMutableBufferPointer { dst in
                    renderer.render(source: src.baseAddress!, destination: dst.baseAddress!, grainFrame: grainFrame,
                                    threads: cores, intensity: state.intensity)
                }
            }
        } else {
            composed.pixels.withUnsafeMutableBufferPointer { dst in
                cameraFrame.pixels.withUnsafeBufferPointer { src in dst.baseAddress!.update(from: src.baseAddress!, count: src.count) }
            }
        }
        overlay.draw(overlayModel(), on: &composed)
        show()
    }

    private func composeWithoutCamera() {
        composed.pixels.withUnsafeMutableBufferPointer { $0.update(repeating: 16) }
        overlay.draw(overlayModel(), on: &composed)
        show()
    }

    private func show() {
        do { try devices.display.show(composed) } catch {
            guard !(devices.display is HeadlessDisplay),
                  let headless = try? HeadlessDisplay(width: composed.width, height: composed.height) else { return }
            Log.error("display \(devices.display.name): \(error); continuing headless")
            devices.display = headless
        }
    }

    /// Moves the preview onto a display that appeared while it was headless.
    private func lookForDisplay() {
        guard devices.display is HeadlessDisplay, let find = devices.findDisplay else { return }
        let t = now()
        guard t >= nextDisplayProbe else { return }
        nextDisplayProbe = t + UInt64(Self.displayProbeInterval * 1e9)
        guard let found = find() else { return }
        Log.info("display: \(found.display.name) (\(found.display.width)×\(found.display.height)) found; preview resumed on it")
        devices.display = found.display
        let present = Set(devices.inputs.map { ObjectIdentifier(type(of: $0)) })
        devices.inputs += found.inputs.filter { !present.contains(ObjectIdentifier(type(of: $0))) }
        resizePreview(width: found.display.width, height: found.display.height)
    }

    /// New preview buffers for a display of another size; the camera restarts at that size.
    private func resizePreview(width: Int, height: Int) {
        guard width != composed.width || height != composed.height else { return }
        cameraFrame = RGBImage(width: width, height: height)
        composed = RGBImage(width: width, height: height)
        overlay = OverlayRenderer(width: width, height: height)
        if let look = renderer?.look { renderer = FilmRenderer(look: look, width: width, height: height) }
        if cameraRunning {
            devices.camera.stop()
            cameraRunning = false
            startCamera()
        }
    }

    private var currentPreset: Preset { presets.first { $0.id == state.presetID } ?? BuiltinPresets.clean }

    private var watermarked: Bool { currentPreset.tier == .pro && !licensed }

    func overlayModel() -> OverlayModel {
        let t = now()
        var model = OverlayModel()
        model.grid = state.grid
        model.ev = state.ev
        model.evScaleVisible = true
        model.shutterMarkerVisible = state.onboardingDone
        model.dial = state.dial == .ev ? .ev : .intensity
        model.intensity = state.intensity
        model.intensityVisible = state.dial == .intensity || t < intensityVisibleUntil
        model.presetName = currentPreset.name
        model.isPro = currentPreset.tier == .pro
        model.lensLabel = devices.camera.lenses.indices.contains(state.lensIndex) ? devices.camera.lenses[state.lensIndex].label : ""
        model.aeLocked = state.aeLocked
        model.afLocked = state.afLocked
        model.focusPoint = state.focusPoint
        model.mode = state.mode == .photo ? .photo : .video
        model.shotsRemaining = storage.shotsRemaining(bytesPerPhoto: 4_000_000)
        model.shutterOnRight = state.handedness == .right
        model.watermark = watermarked
        if let text = takeAsyncBanner() { banner = (text, t + 3_000_000_000) }
        if let error = cameraError, !cameraRunning || cameraRestarts > 0 {
            model.banner = "No camera: \(error)"
        } else if let b = banner, t < b.until {
            model.banner = b.text
        }
        model.prompt = state.onboardingDone ? nil : "Press the button you want as shutter"
        return model
    }

    private func takeAsyncBanner() -> String? {
        let (text, saved, path) = bannerBox.take(lock: asyncLock)
        savedPhotos += saved
        if let path { lastPhoto = path }
        return text
    }

    /// Compiles the current look on a background queue; the preview keeps the old one meanwhile.
    private func compileLook() {
        let preset = currentPreset
        guard compiling != preset.id else { return }
        compiling = preset.id
        let previous = renderer?.look.grainTexture
        compileQueue.async { [lookLock] in
            let look = FilmLook(preset: preset, settings: RenderSettings(ev: 0, intensity: 1), reusing: previous)
            lookLock.lock()
            self.compiledLook = look
            lookLock.unlock()
        }
    }

    private func adoptCompiledLook() {
        lookLock.lock()
        let look = compiledLook
        compiledLook = nil
        lookLock.unlock()
        if let look {
            renderer = FilmRenderer(look: look, width: composed.width, height: composed.height)
        }
    }

    private func setBanner(_ text: String) {
        banner = (text, now() + 3_000_000_000)
    }

    // MARK: Input

    /// Applies one input event (from the display, GPIO, or the socket).
    public func handle(_ event: InputEvent) {
        let effects = rules.apply(event, to: &state)
        for effect in effects {
            switch effect {
            case .capture:
                if case .failure(let error) = capture() { setBanner(error.message) }
            case .switchLens:
                devices.camera.stop()
                cameraRunning = false
                Log.info("lens \(state.lensIndex): \(devices.camera.lenses[state.lensIndex].label)")
                startCamera()
            case .cameraControls:
                devices.camera.setControls(cameraControls)
            case .lookChanged:
                compileLook()
                intensityVisibleUntil = now() + 1_500_000_000
            case .intensityChanged:
                intensityVisibleUntil = now() + 1_500_000_000
            case .settingsChanged:
                saveSettings()
            }
        }
    }

    private func saveSettings() {
        let settings = Settings(preset: state.presetID, intensities: state.intensities, lensIndex: state.lensIndex, ev: state.ev,
                                grid: state.grid, handedness: state.handedness, onboardingDone: state.onboardingDone)
        let store = settingsStore
        saveQueue.async {
            do { try store.save(settings) } catch { Log.error("settings not saved: \(error)") }
        }
    }

    struct Refusal: Error { let message: String }

    /// Takes a photo: reserves its file, grabs the still, queues it. Refuses (with the reason)
    /// when the queue is full or storage is full.
    func capture() -> Result<String, Refusal> {
        guard state.mode == .photo else {
            return .failure(Refusal(message: "Video recording is not available yet"))
        }
        guard cameraRunning else { return .failure(Refusal(message: "No camera")) }
        guard captures.pending < captures.capacity else {
            Log.warning("shutter refused: \(captures.capacity) photos are still being saved")
            return .failure(Refusal(message: "Busy: photo queue full"))
        }
        let path: String
        do { path = try storage.reservePath() } catch {
            Log.error("shutter refused: \(error)")
            if case .full = error { return .failure(Refusal(message: "Storage full")) }
            return .failure(Refusal(message: "Storage unavailable"))
        }
        let still: RGBImage, metadata: FrameMetadata
        do { (still, metadata) = try devices.camera.captureStill() } catch {
            Log.error("\(path): still capture failed: \(error)")
            return .failure(Refusal(message: "Capture failed"))
        }
        let job = CaptureJob(still: still, metadata: metadata, lens: devices.camera.lenses[state.lensIndex], preset: currentPreset,
                             intensity: state.intensity, grainSeed: RenderSettings().grainSeed, grainFrame: grainClock.frame,
                             orientation: analyzer.orientation, watermark: watermarked, path: path, date: Date(),
                             keepOriginal: config.capture.keepOriginal)
        guard captures.submit(job) else { return .failure(Refusal(message: "Busy: photo queue full")) }
        Log.info("shutter: \(path) (\(currentPreset.name), \(Int((state.intensity * 100).rounded())) %)")
        return .success(path)
    }

    private func readMotion() {
        guard let motion = devices.motion else { return }
        do {
            analyzer.add(try motion.read(), at: Double(now()) / 1e9)
        } catch {
            Log.warning("motion sensor \(motion.name): \(error); dropped, grain at a constant rate")
            devices.motion = nil
        }
    }

    private func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    // MARK: Control socket

    /// Answers one control-socket request (runs on the loop via the mailbox).
    func answer(_ request: ControlRequest) -> ControlReply {
        func ok(_ fields: [String: ControlValue] = [:]) -> ControlReply { .success(fields) }
        func fail(_ message: String) -> ControlReply { .failure(message) }
        switch request {
        case .status:
            return ok(status())
        case .capture:
            switch capture() {
            case .success(let path): return ok(["path": .string(path)])
            case .failure(let refusal):
                setBanner(refusal.message)
                return fail(refusal.message)
            }
        case .preset(let name):
            guard let preset = presets.first(where: { $0.id == name.lowercased() }) else {
                return fail("unknown preset \"\(name)\"")
            }
            state.presetID = preset.id
            compileLook()
            saveSettings()
            return ok(["preset": .string(preset.id)])
        case .intensity(let percent):
            state.intensity = percent / 100
            intensityVisibleUntil = now() + 1_500_000_000
            saveSettings()
            return ok(["intensity": .int(Int((state.intensity * 100).rounded()))])
        case .ev(let ev):
            state.ev = CameraState.snapEV(ev)
            devices.camera.setControls(cameraControls)
            saveSettings()
            return ok(["ev": .double(state.ev)])
        case .lens(let index):
            guard devices.camera.lenses.indices.contains(index) else {
                return fail("lens \(index) does not exist (0…\(devices.camera.lenses.count - 1))")
            }
            if index != state.lensIndex {
                state.lensIndex = index
                handleLensSwitch()
                saveSettings()
            }
            return ok(["lens": .int(index), "label": .string(devices.camera.lenses[index].label)])
        case .mode(let mode):
            state.mode = mode == .video ? .video : .photo
            return ok(["mode": .string(state.mode.rawValue)])
        case .grid(let on):
            state.grid = on
            saveSettings()
            return ok(["grid": .bool(on)])
        case .handedness(let h):
            state.handedness = h
            state.onboardingDone = true
            saveSettings()
            return ok(["handedness": .string(h.rawValue)])
        case .snapshot(let path):
            do {
                try ImageWriter.write(composed, to: path, format: .png, replace: true)
                return ok(["path": .string(path)])
            } catch {
                return fail("\(error)")
            }
        case .simulate(let fault, let seconds):
            guard let sim = devices.simulated else { return fail("simulate needs the simulated camera (loopixd --simulate)") }
            switch fault {
            case .stall: sim.inject(seconds > 0 ? .stall(seconds: seconds) : .none)
            case .disconnect: sim.inject(seconds > 0 ? .disappear : .none)
            }
            if fault == .disconnect && seconds > 0 {
                // The camera comes back after `seconds`, as if replugged.
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { sim.inject(.none) }
            }
            Log.info("simulated camera: \(fault.rawValue) for \(seconds) s")
            return ok(["fault": .string(fault.rawValue), "seconds": .double(seconds)])
        }
    }

    private func handleLensSwitch() {
        devices.camera.stop()
        cameraRunning = false
        Log.info("lens \(state.lensIndex): \(devices.camera.lenses[state.lensIndex].label)")
        startCamera()
    }

    /// Frames arrived within the last second.
    private var cameraHealthy: Bool { cameraRunning && frameDeliveredAt > 0 && now() - frameDeliveredAt < 1_000_000_000 }

    private func status() -> [String: ControlValue] {
        var s: [String: ControlValue] = [
            "preset": .string(state.presetID), "presetName": .string(currentPreset.name), "tier": .string(currentPreset.tier.rawValue),
            "intensity": .int(Int((state.intensity * 100).rounded())), "ev": .double(state.ev), "lens": .int(state.lensIndex),
            "lenses": .array(devices.camera.lenses.map { .string($0.label) }), "mode": .string(state.mode.rawValue),
            "grid": .bool(state.grid), "handedness": .string(state.handedness.rawValue), "aeLocked": .bool(state.aeLocked),
            "afLocked": .bool(state.afLocked), "queue": .int(captures.pending), "saved": .int(savedPhotos), "licensed": .bool(licensed),
            "onboardingDone": .bool(state.onboardingDone), "camera": .string(cameraHealthy ? "ok" : (cameraError ?? "waiting for frames")),
            "display": .string(devices.display.name), "watermark": .bool(watermarked),
        ]
        if let lastPhoto { s["lastPhoto"] = .string(lastPhoto) }
        if let shots = storage.shotsRemaining(bytesPerPhoto: 4_000_000) { s["shotsRemaining"] = .int(shots) }
        return s
    }
}

/// Results of the capture queue handed to the loop (written on the capture thread).
final class AsyncBannerBox: @unchecked Sendable {
    private var text: String?
    private var saved = 0
    private var lastPath: String?

    func set(_ t: String, lock: NSLock) {
        lock.lock()
        text = t
        lock.unlock()
    }

    func saved(_ path: String, lock: NSLock) {
        lock.lock()
        saved += 1
        lastPath = path
        lock.unlock()
    }

    func take(lock: NSLock) -> (String?, Int, String?) {
        lock.lock()
        defer {
            text = nil
            saved = 0
            lock.unlock()
        }
        return (text, saved, lastPath)
    }
}
