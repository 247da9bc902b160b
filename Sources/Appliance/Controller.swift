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
import Raster

/// The daemon's brain. Owns `CameraState` and changes it only through `StateRules`
/// (`perform`); carries out the effects in one place (`carryOut`); runs the loop on the thread
/// that calls `run()`: between frames the queued input (display events, buttons, the control
/// socket's requests, motion) and the clocks of the booth and the interval, each a command,
/// then one preview frame (`PreviewPipeline`, with the camera kept alive by the
/// `CameraSupervisor`). Photos are developed and saved on the capture queue; nothing here waits
/// for them.
///
/// Its parts, a file each: `Controller+Effects` (perform, carryOut), `+Capture` (the shutter,
/// what the capture queue reports), `+Booth`, `+Video`, `+Interval`, `+Requests` (the socket's
/// and the web's requests, status), `+Screen` (the frame and its overlay), `+Reload` (SIGHUP).
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
    public internal(set) var config: Config
    let configPath: String?
    var presets: [Preset]
    var rules: StateRules
    public internal(set) var state: CameraState
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

    // MARK: Preview

    var currentPreset: Preset { presets.first { $0.id == state.presetID } ?? BuiltinPresets.clean }

    var watermarked: Bool { currentPreset.tier == .pro && !licensed }

    var cameraControls: CameraControls {
        CameraControls(ev: state.ev, focusPoint: state.focusPoint, aeLocked: state.aeLocked, afLocked: state.afLocked)
    }

    // MARK: Timelapse

    // MARK: Commands and their effects

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
