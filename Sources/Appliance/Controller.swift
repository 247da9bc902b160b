import Camera
import ControlProtocol
import Controls
import Dispatch
import Display
import FilmCore
import Foundation
import ImageFiles
import Printing
import QRCode
import StrictJSON
import System
import Video
import Viewfinder
import WebGallery
import Recording

/// The daemon's brain. Owns `CameraState` and changes it only through `StateRules`; carries
/// out the effects in one place (`carryOut`); runs the loop on the thread that calls `run()`:
/// between frames the queued input (display events, buttons, the control socket's requests,
/// motion), then one preview frame (`PreviewPipeline`, with the camera kept alive by the
/// `CameraSupervisor`). Photos are developed and saved on the capture queue; nothing here waits
/// for them.
///
/// Not `Sendable`: it is confined to the thread that runs it. Other threads reach it through
/// `handle` (requests, stop, reload) and the capture queue's reports.
public final class Controller {
    public struct Devices {
        public var camera: CameraSource
        /// The camera's fault injection, when it has one (the simulated camera; enables the
        /// `simulate` request).
        public var faults: FaultInjectable?
        public var display: DisplaySink
        public var motion: MotionSensor?
        /// Further input (GPIO buttons and encoder, touch screens, keyboards), drained once per loop.
        public var inputs: [InputSource] = []
        /// Set when a screen was asked for: while the preview is headless (no display at start,
        /// or the display failed), called every 2 s to look for one that has appeared since,
        /// with the input that comes with it; nil while there is none.
        public var findDisplay: (() -> (display: DisplaySink, inputs: [InputSource])?)?
        /// The booth's flash or ring light (the board's `flash` output line), when one is wired.
        public var flash: FlashLight?

        public init(camera: CameraSource, faults: FaultInjectable?, display: DisplaySink, motion: MotionSensor?,
                    inputs: [InputSource] = [], findDisplay: (() -> (display: DisplaySink, inputs: [InputSource])?)? = nil,
                    flash: FlashLight? = nil) {
            self.camera = camera
            self.faults = faults
            self.display = display
            self.motion = motion
            self.inputs = inputs
            self.findDisplay = findDisplay
            self.flash = flash
        }
    }

    /// How other threads reach the controller.
    public let handle: ControllerHandle
    /// What systemd hears: ready, status, watchdog pings.
    let notifier: ServiceNotifier
    var nextStatusUpdate = Deadline(nanoseconds: 0)
    var nextDateStampCheck = Deadline(nanoseconds: 0)
    public private(set) var config: Config
    let configPath: String?
    var presets: [Preset]
    var rules: StateRules
    public private(set) var state: CameraState
    let settingsStore: SettingsStore
    let saveQueue = DispatchQueue(label: "loopix.settings", qos: .utility)
    let storage: PhotoStorage
    let captures: CaptureQueue
    let reports = CaptureReports()
    var sizeEstimate = PhotoSizeEstimate()
    var licensed: Bool

    let pipeline: PreviewPipeline
    let supervisor: CameraSupervisor
    let faults: FaultInjectable?
    var motion: MotionSensor?
    var inputs: [InputSource]
    var analyzer = MotionAnalyzer()

    // What the screen and `status` show.
    var banner: (text: String, until: Deadline)?
    var intensityVisibleUntil = Deadline(nanoseconds: 0)
    var savedPhotos = 0
    /// The web gallery's address, when it runs, and how to learn it again (the network may
    /// come up after the daemon).
    var webURL: String?
    var webURLNow: (() -> String)?
    var nextWebAddressCheck = Deadline(nanoseconds: 0)
    var lastPhoto: String?
    var refusalLog = LogThrottle(interval: 5)

    // Video.
    var recorder: Recorder?
    var recordingStarted = Deadline(nanoseconds: 0)
    /// The first frame of a recording: (camera timestamp, monotonic time it arrived).
    var cameraClockAnchor: (camera: UInt64, monotonic: UInt64)?
    var lastCameraTimestamp: UInt64 = 0
    var lastClipTimestamp: UInt64 = 0
    /// When the camera went down during a recording (nil: it is up).
    var cameraLostAt: Deadline?
    /// Dropped frames are reported at most once a second, as a count.
    var nextDropReport = Deadline(nanoseconds: 0)
    var droppedReported = 0
    /// How long a recording waits for a camera that went away before it ends the clip.
    static let recordingCameraGrace: Double = 10
    /// A recording starts only when this many seconds of it fit above the reserve.
    static let minimumRecordingSeconds: Double = 3
    /// Opens a clip; tests swap in a slower encoder.
    var openRecorder: (String, VideoSettings, ClipMetadata, UInt64) throws(VideoError) -> Recorder = {
        try Recorder.open(path: $0, settings: $1, metadata: $2, startNs: $3)
    }

    // Photobooth: its session is `state.session`.
    /// The review screen: the developed photo (or collage) at the screen's size, and the QR
    /// code of its gallery page.
    var reviewFrame: RGBImage?
    var reviewCode: QRCode?
    /// The gallery's own QR code (the idle screen shows it while the web gallery runs).
    var galleryCode: QRCode?
    /// The session's shots as small copies, for the review and the collage.
    var boothCopies: [String: RGBImage] = [:]
    /// How late the last booth shot was taken after it was due (the countdown's end or the press), ms.
    var lastTriggerLatencyMs: Double?
    /// The last booth shot's exposure (the still's sensor timestamp) less the moment it was
    /// due, ms: negative when the frame began just before it.
    var lastExposureOffsetMs: Double?
    /// The last still's `Shot.skippedFramePeriodNs`, kept for status only.
    var lastStillSkippedPeriod: UInt64 = 0
    /// The sensor timestamp of the last booth shot (monotonic ns: scripts compare it with their press).
    var lastBoothExposure: UInt64 = 0
    /// Each shot of the current (or last) session: its exposure less the moment it was due, ms.
    var sessionExposureOffsetsMs: [Double] = []
    /// How long before a booth shot is due a camera reconfigured for each still is asked for it.
    var stillLead = StillLead()
    /// The collage template (booth.template), loaded at start.
    var boothTemplate: BoothTemplate?
    let flash: FlashLight?
    /// Whether the flash line was last driven high, and whether driving it has failed (logged once).
    var flashIsOn = false
    var flashFailed = false
    var lastCollage: String?
    let collageQueue = DispatchQueue(label: "loopix.booth", qos: .utility)
    /// The booth's prints (booth.print: auto).
    var printQueue: PrintQueue?

    /// `wait-saved` requests: each is answered once its count of photos is saved.
    struct SavedWaiter {
        let pending: PendingRequest
        var remaining: Int
        var paths: [String] = []
    }
    var savedWaiters: [SavedWaiter] = []
    static let maxSavedWaiters = 32
    /// The after-save command (capture.afterSave), nil without one.
    var afterSave: AfterSaveHooks?
    /// The last GPIO trigger's photo: its exposure less the edge's time, ms (nil: unknown).
    var lastTriggerOffsetMs: Double?
    // The timelapse running is `state.interval`, kept in state/interval.json.
    /// The interval's next shot in status: one formatter, not one per request.
    let intervalDateFormatter = ISO8601DateFormatter()
    var intervalPath: String { config.state.directory + "/interval.json" }

    /// Seen by tests: every effect carried out, in order.
    var effectObserver: ((Effect) -> Void)?

    /// `presets`: the looks to offer; nil reads the built-ins and the user presets in
    /// `config.presetsDirectory`.
    public init(config: Config, configPath: String?, devices: Devices, presets: [Preset]? = nil,
                handle: ControllerHandle = ControllerHandle(), notifier: ServiceNotifier = ServiceNotifier()) {
        let presets = presets ?? Self.loadPresets(config)
        self.handle = handle
        self.notifier = notifier
        self.config = config
        self.configPath = configPath
        self.presets = presets
        faults = devices.faults
        motion = devices.motion
        inputs = devices.inputs
        rules = StateRules(presetIDs: presets.map(\.id), lensCount: devices.camera.lenses.count, boothSettings: config.booth)
        do { try Directories.create(config.state.directory) } catch {
            Log.error("state.directory: \(error); settings will not be kept")
        }
        settingsStore = SettingsStore(directory: config.state.directory)
        let loaded = settingsStore.load(defaults: Settings(defaults: config.defaults))
        if let warning = loaded.warning { Log.warning(warning) }
        let s = loaded.settings
        var state = CameraState(presetID: presets.contains { $0.id == s.preset } ? s.preset : (presets.first?.id ?? "clean"),
                                intensities: s.intensities, ev: CameraState.snapEV(s.ev),
                                lensIndex: min(max(s.lensIndex, 0), max(devices.camera.lenses.count - 1, 0)),
                                grid: s.grid, handedness: s.handedness, onboardingDone: s.onboardingDone)
        state.defaultIntensity = config.defaults.intensity / 100
        if config.photobooth { state.session = Booth(settings: config.booth) }
        state.stillsWhileRecording = devices.camera.stillsWhileStreaming
        self.state = state
        flash = devices.flash
        if let hook = config.capture.afterSave {
            do { afterSave = try AfterSaveHooks(settings: hook) } catch {
                Log.error("capture.afterSave: \(error); no after-save command")
            }
        }
        if let template = config.booth.template {
            do { boothTemplate = try BoothTemplate.load(path: template, shots: config.booth.shots) } catch {
                Log.error("booth: template \(error); collages use the plain \(config.booth.layout.rawValue) layout")
            }
        }
        if config.booth.print != .off {
            do {
                printQueue = try PrintQueue(settings: PrintQueue.Settings(printer: config.booth.printer, copies: config.booth.copies),
                                            stateFile: config.state.directory + "/print-jobs")
            } catch {
                Log.error("booth: printing unavailable: \(error)")
            }
        }
        storage = PhotoStorage(directory: config.storage.directory, stateDirectory: config.state.directory,
                               reserveBytes: Int64(config.storage.reserveMB) * 1_048_576)
        storage.removeLeftoverTemporaryFiles()
        licensed = Self.checkLicense(config)
        pipeline = PreviewPipeline(display: devices.display, findDisplay: devices.findDisplay)
        supervisor = CameraSupervisor(camera: devices.camera, lens: state.lensIndex, previewWidth: pipeline.gradeWidth,
                                      previewHeight: pipeline.gradeHeight,
                                      controls: CameraControls(ev: state.ev, aeLocked: false, afLocked: false))
        let reports = self.reports, storage = self.storage
        captures = CaptureQueue(capacity: Self.queueCapacity(config, lenses: devices.camera.lenses), encoding: Self.encoding(config),
                                threads: ProcessInfo.processInfo.activeProcessorCount) { job, result in
            storage.release(bytes: job.promisedBytes)
            switch result {
            case .success(let developed):
                Log.info("saved \(job.path)")
                if let problem = developed.rawProblem { Log.error("raw negative not saved: \(problem)") }
                reports.add(.saved(path: job.path, bytes: developed.bytes, pixels: job.still.width * job.still.height, copy: developed.copy))
            case .failure(let error):
                Log.error("\(job.path): photo lost: \(error)")
                reports.add(.lost(path: job.path))
            }
        }
        if config.capture.raw && !devices.camera.offersRawStills {
            Log.warning("capture.raw: this camera backend gives no raw frames; photos are saved without a DNG")
        }
        resumeInterval()
    }

    /// The built-in looks and the user's presets; a bad preset file is one warning line and
    /// skipped, a missing directory just means the built-ins.
    static func loadPresets(_ config: Config) -> [Preset] {
        do {
            let library = try PresetLibrary(directory: config.presetsDirectory)
            for problem in library.problems { Log.warning("preset skipped: \(problem)") }
            let users = library.presets.count - BuiltinPresets.all.count
            if users > 0 { Log.info("looks: \(BuiltinPresets.all.count) built in, \(users) from \(config.presetsDirectory)") }
            return library.presets
        } catch {
            Log.warning("\(error); the built-in looks only")
            return BuiltinPresets.all
        }
    }

    static func encoding(_ config: Config) -> CaptureQueue.Encoding {
        CaptureQueue.Encoding(heic: HEICOptions(quality: Double(config.capture.heicQuality) / 100, x265Preset: config.capture.x265Preset),
                              jpegQuality: config.capture.jpegQuality)
    }

    /// `capture.queueLength`, or what the largest still and the memory allow ("auto"), logged.
    static func queueCapacity(_ config: Config, lenses: [Lens]) -> Int {
        if let n = config.capture.queueLength { return n }
        let pixels = lenses.map { $0.stillWidth * $0.stillHeight }.max() ?? 4056 * 3040
        let memory = SystemMemory.limitBytes()
        let n = CaptureQueue.automaticCapacity(stillPixels: pixels, memoryBytes: memory)
        Log.info("capture queue: \(n) photo\(n == 1 ? "" : "s") (stills of \(pixels * 3 / 1_000_000) MB, \(memory / 1_048_576) MB of memory)")
        return n
    }

    static func checkLicense(_ config: Config) -> Bool {
        let state = LicenseState.check(config)
        switch state {
        case .noKey: break
        case .invalid: Log.warning("\(state)")
        case .missing, .licensed: Log.info("\(state)")
        }
        return state.allowsPro
    }

    // MARK: Lifecycle

    /// Runs the loop until a stop is requested or the window is closed.
    public func run() {
        Log.info("camera: \(supervisor.lenses.map(\.label).joined(separator: ", ")); display: \(pipeline.display.name); storage: \(config.storage.directory)")
        if !state.onboardingDone { Log.info("first start: waiting for the user to press the button they want as shutter") }
        pipeline.requestLook(currentPreset)
        supervisor.start()
        while !handle.stopRequested && !pipeline.display.closeRequested {
            runOnce()
        }
        Log.info("stopping")
    }

    /// One turn of the loop: input, requests, motion, display probing, one preview frame.
    func runOnce() {
        notifier.loopAlive()
        if handle.takeReload() {
            notifier.reloading()
            reload()
            notifier.reloaded()
        }
        answerRequests()
        for event in pipeline.display.pollEvents() { _ = perform(.input(event)) }
        for source in inputs {
            for event in source.drain() { _ = perform(.input(event)) }
        }
        readMotion()
        takeCaptureReports()
        // A shot due while the capture queue is full waits for room (a small Pi develops one
        // photo at a time) rather than ending the session.
        if let session = state.session, session.currentShot == nil || captures.hasRoom {
            perform(.boothTick(now: MonotonicClock.now(), lead: supervisor.camera.stillsWhileStreaming ? 0 : stillLead.ns))
        }
        intervalClock()
        refreshWebAddress()
        refreshDateStamp()
        if reviewFrame != nil, state.session?.isReviewing != true {
            reviewFrame = nil
            reviewCode = nil
        }
        watchRecording()
        if let found = pipeline.lookForDisplay() {
            let present = Set(inputs.map { ObjectIdentifier(type(of: $0)) })
            inputs += found.inputs.filter { !present.contains(ObjectIdentifier(type(of: $0))) }
            if found.resized { supervisor.resize(width: pipeline.gradeWidth, height: pipeline.gradeHeight) }
        }
        previewFrame()
        updateServiceStatus()
    }

    /// The preview's date imprint follows the clock (and a reloaded configuration), looked at
    /// once a second; a new text recompiles the look in the background.
    func refreshDateStamp() {
        guard nextDateStampCheck.hasPassed else { return }
        nextDateStampCheck = .after(seconds: 1)
        pipeline.setDateStamp(config.capture.dateStamp?.text(for: Date()))
    }

    /// The line `systemctl status` shows, at most once a second.
    func updateServiceStatus() {
        guard nextStatusUpdate.hasPassed else { return }
        nextStatusUpdate = .after(seconds: 1)
        notifier.status(serviceStatus)
    }

    var serviceStatus: String {
        if let trouble = supervisor.banner { return trouble }
        if let free = storage.freeBytes(), free < storage.reserveBytes { return "Storage full" }
        var parts = [currentPreset.name, supervisor.currentLens?.label ?? "no lens"]
        if let recorder { parts.append("recording \((recorder.path as NSString).lastPathComponent) \(OverlayRenderer.timeText(Int(recordingElapsed)))") }
        parts.append("\(savedPhotos) saved")
        return parts.joined(separator: " · ")
    }

    /// The web gallery runs: the preview is offered to its viewers, status says where it is.
    public func attachWeb(live: LiveFrames, url: String, currentURL: (() -> String)? = nil) {
        pipeline.live = live
        webURL = url
        webURLNow = currentURL
        galleryCode = try? QRCode(url)
    }

    /// Stops the camera and waits (at most `timeout` s) for queued photos to be saved.
    public func shutdown(timeout: Double = 30) {
        notifier.stopping()
        if state.recording { perform(.record(.stop)) }
        supervisor.stop()
        let pending = captures.pending
        if pending > 0 { Log.info("finishing \(pending) queued photo\(pending == 1 ? "" : "s")") }
        if !captures.drain(timeout: timeout) {
            Log.error("gave up waiting for \(captures.pending) photo(s) after \(Int(timeout)) s")
        }
        saveQueue.sync {}
        collageQueue.sync {}
        takeCaptureReports()  // the photos saved while draining: their hooks and waiters
        for waiter in savedWaiters {
            waiter.pending.answer(.failure("wait-saved: the daemon is stopping (\(waiter.paths.count) saved: \(waiter.paths.joined(separator: " ")))"))
        }
        savedWaiters = []
        if let afterSave {
            // Hooks already started get a few seconds to finish; the rest are logged.
            let deadline = Deadline.after(seconds: 5)
            while !deadline.hasPassed, case let c = afterSave.counts, c.running + c.waiting > 0 { usleep(50_000) }
            afterSave.stop()
        }
        printQueue?.stop()
        setFlash(false)
    }

    /// SIGHUP: takes over what can change while running, names what needs a restart.
    func reload() {
        guard let path = configPath else {
            Log.info("SIGHUP: no configuration file to reload (running on defaults)")
            return
        }
        let fresh: Config
        do { fresh = try Config.load(path: path) } catch {
            Log.error("\(error); keeping the previous configuration")
            return
        }
        let freshPresets = Self.loadPresets(fresh)
        if let problem = fresh.presetProblem(lookIDs: freshPresets.map(\.id)) {
            Log.error("\(problem); keeping the previous configuration")
            return
        }
        let changed = fresh.changedKeys(from: config)
        let later = changed.filter { !Config.reloadableKeys.contains($0) }
        let applied = changed.filter { Config.reloadableKeys.contains($0) }
        // Apply the live ones; keep the rest as they run now.
        var next = config
        next.storage.reserveMB = fresh.storage.reserveMB
        next.capture = fresh.capture
        next.license = fresh.license
        next.snapshot = fresh.snapshot
        next.defaults = fresh.defaults
        next.video.bitrateMbps = fresh.video.bitrateMbps
        next.video.encoder = fresh.video.encoder
        next.video.x264Preset = fresh.video.x264Preset
        next.video.keyframeInterval = fresh.video.keyframeInterval
        next.video.audioDevice = fresh.video.audioDevice
        next.video.audioChannels = fresh.video.audioChannels
        next.video.audioSampleRate = fresh.video.audioSampleRate
        if next.capture.format != config.capture.format || next.capture.keepOriginal != config.capture.keepOriginal
            || next.capture.raw != config.capture.raw {
            sizeEstimate = PhotoSizeEstimate()   // what was learnt was for other files
        }
        config = next
        storage.reserveBytes = Int64(next.storage.reserveMB) * 1_048_576
        captures.reconfigure(capacity: Self.queueCapacity(next, lenses: supervisor.lenses), encoding: Self.encoding(next))
        perform(.setDefaultIntensity(next.defaults.intensity / 100))
        if applied.contains(where: { $0.hasPrefix("license.") }) { licensed = Self.checkLicense(next) }
        // The user presets are read again (a look may have been added), wherever they are now.
        next.presetsDirectory = fresh.presetsDirectory
        config = next
        presets = freshPresets
        rules = StateRules(presetIDs: presets.map(\.id), lensCount: supervisor.lenses.count, boothSettings: config.booth)
        if !presets.contains(where: { $0.id == state.presetID }) {
            Log.warning("look \(state.presetID) is gone; back to \(presets.first?.id ?? "clean")")
            perform(.selectPreset(presets.first?.id ?? "clean"))
        } else {
            pipeline.requestLook(currentPreset, again: true)
        }
        settingsStore.retry()
        guard !changed.isEmpty else {
            Log.info("reloaded \(path): nothing changed")
            return
        }
        var parts: [String] = []
        if !applied.isEmpty { parts.append("applied \(applied.joined(separator: ", "))") }
        if !later.isEmpty { parts.append("needs a restart to take effect: \(later.joined(separator: ", "))") }
        Log.info("reloaded \(path): " + parts.joined(separator: "; "))
    }

    // MARK: Preview

    func previewFrame() {
        switch pipeline.withCameraFrame({ supervisor.nextFrame(into: &$0) }) {
        case .frame:
            defer { notifier.ready() }  // the first frame is on the screen (or headless: the camera delivers)
            if let reviewFrame, pipeline.renderStill(reviewFrame, overlay: overlayModel()) { break }
            let clip = recorder?.takeBuffer()
            pipeline.render(intensity: state.intensity, grainRate: analyzer.grainRate, overlay: overlayModel(), into: clip)
            if let clip, let recorder { recorder.submit(clip, timestampNs: clipTimestamp(supervisor.lastMetadata.timestampNs)) }
        case .waiting:
            break
        case .down:
            // Keep the screen and the socket alive; the supervisor retries now and then. A
            // missing camera is a state the daemon serves in, not a failed start.
            pipeline.renderWithoutCamera(overlay: overlayModel())
            notifier.ready()
            usleep(33_000)
        }
    }

    var currentPreset: Preset { presets.first { $0.id == state.presetID } ?? BuiltinPresets.clean }

    var watermarked: Bool { currentPreset.tier == .pro && !licensed }

    var cameraControls: CameraControls {
        CameraControls(ev: state.ev, focusPoint: state.focusPoint, aeLocked: state.aeLocked, afLocked: state.afLocked)
    }

    func overlayModel() -> OverlayModel {
        if let session = state.session { return boothOverlay(session) }
        var model = OverlayModel()
        model.grid = state.grid
        model.ev = state.ev
        model.evScaleVisible = true
        model.shutterMarkerVisible = state.onboardingDone
        model.dial = state.dial == .ev ? .ev : .intensity
        model.intensity = state.intensity
        model.intensityVisible = state.dial == .intensity || !intensityVisibleUntil.hasPassed
        model.presetName = currentPreset.name
        model.isPro = currentPreset.tier == .pro
        model.lensLabel = supervisor.currentLens?.label ?? ""
        model.aeLocked = state.aeLocked
        model.afLocked = state.afLocked
        model.focusPoint = state.focusPoint
        model.mode = state.mode == .photo ? .photo : .video
        model.shotsRemaining = storage.shotsRemaining(bytesPerPhoto: expectedPhotoBytes)
        model.recording = state.recording
        if state.recording {
            model.elapsedSeconds = Int(recordingElapsed)
        }
        if state.mode == .video { model.secondsRemaining = secondsOfVideoLeft }
        model.shutterOnRight = state.handedness == .right
        model.watermark = watermarked
        if let text = supervisor.banner {
            model.banner = text
        } else if let b = banner, !b.until.hasPassed {
            model.banner = b.text
        }
        model.prompt = state.onboardingDone ? nil : "Press the button you want as shutter"
        return model
    }

    func setBanner(_ text: String) {
        banner = (text, .after(seconds: 3))
    }

    // MARK: Timelapse

    // MARK: Commands and their effects

    /// What carrying out a command gave: the photo's path for a capture, or why it was refused.
    struct CommandResult {
        var refusal: String?
        var photoPath: String?
        /// A shutter effect (`capture`, `captureAt`) was carried out, taken or refused.
        var captured = false
    }

    /// Applies one command (from the display, GPIO, touch, keys or the socket) through the
    /// rules and carries out its effects. The one way the state changes.
    @discardableResult
    func perform(_ command: Command) -> CommandResult {
        let outcome = rules.apply(command, to: &state)
        var result = CommandResult(refusal: outcome.refusal)
        for effect in outcome.effects {
            carryOut(effect, &result)
            effectObserver?(effect)
        }
        return result
    }

    func carryOut(_ effect: Effect, _ result: inout CommandResult) {
        switch effect {
        case .capture:
            result.captured = true
            switch capture() {
            case .success(let shot): result.photoPath = shot.path
            case .failure(let refusal):
                setBanner(refusal.message)
                result.refusal = refusal.message
            }
        case .captureAt(let edge):
            result.captured = true
            switch capture(notBefore: edge, trigger: edge) {
            case .success(let shot): result.photoPath = shot.path
            case .failure(let refusal): result.refusal = refusal.message
            }
        case .refuseShutter(let why):
            result.captured = true
            setBanner(why)
            result.refusal = why
        case .switchLens:
            supervisor.switchLens(to: state.lensIndex)
        case .cameraControls:
            supervisor.setControls(cameraControls)
        case .lookChanged:
            pipeline.requestLook(currentPreset)
            intensityVisibleUntil = .after(seconds: 1.5)
        case .intensityChanged:
            intensityVisibleUntil = .after(seconds: 1.5)
        case .settingsChanged:
            saveSettings()
        case .modeChanged:
            gradeForMode()
        case .startRecording:
            switch startRecording() {
            case .success(let path): result.photoPath = path
            case .failure(let refusal):
                setBanner(refusal.message)
                result.refusal = refusal.message
                perform(.recordingEnded)
            }
        case .stopRecording(let reason):
            if let path = stopRecording(reason: reason) { result.photoPath = path }
        case .boothChanged:
            boothCopies = [:]
            reviewFrame = nil
            Log.info("photobooth mode \(state.booth ? "on" : "off")")
        case .boothTrigger:
            if state.session?.phase == .attract { boothCopies = [:] }
            let pressed = perform(.boothPress(now: MonotonicClock.now()))
            result.photoPath = result.photoPath ?? pressed.photoPath
            result.refusal = result.refusal ?? pressed.refusal
        case .booth(let action):
            carryOut(action, &result)
        case .flashChanged:
            setFlash(state.flash)
        case .saveInterval:
            saveInterval()
        case .intervalSkipped(let slot, let reason):
            Log.warning("interval: slot \(slot + 1) skipped (\(reason))")
        case .intervalEnded(let taken, let skipped, let stopped):
            Log.info("interval: \(stopped ? "stopped" : "done") (\(taken) taken, \(skipped) skipped)")
        case .writeSnapshot(let path):
            do {
                try Snapshot.write(pipeline.composed, to: path, allowed: config.snapshot.directories,
                                   kept: [config.storage.directory, config.state.directory])
            } catch {
                result.refusal = "\(error)"
            }
        case .injectFault(let fault, let seconds):
            guard let faults else {
                result.refusal = "simulate needs the simulated camera (loopixd --simulate)"
                return
            }
            switch fault {
            case .stall: faults.inject(seconds > 0 ? .stall(seconds: seconds) : .none)
            case .disconnect: faults.inject(seconds > 0 ? .disappear : .none)
            }
            if fault == .disconnect && seconds > 0 {
                // The camera comes back after `seconds`, as if replugged.
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { faults.inject(.none) }
            }
            Log.info("simulated camera: \(fault.rawValue) for \(seconds) s")
        }
    }

    func saveSettings() {
        let settings = Settings(preset: state.presetID, intensities: state.intensities, lensIndex: state.lensIndex, ev: state.ev,
                                grid: state.grid, handedness: state.handedness, onboardingDone: state.onboardingDone)
        let store = settingsStore
        saveQueue.async {
            do { try store.save(settings) } catch { Log.error("settings not saved: \(error)") }
        }
    }

    // MARK: Photobooth

    // MARK: Video

    func readMotion() {
        guard let sensor = motion else { return }
        do {
            analyzer.add(try sensor.read(), at: MonotonicClock.seconds())
        } catch {
            Log.warning("motion sensor \(sensor.name): \(error); dropped, grain at a constant rate")
            motion = nil
        }
    }

    // MARK: Control socket

}
