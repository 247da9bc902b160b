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
    private let notifier: ServiceNotifier
    private var nextStatusUpdate = Deadline(nanoseconds: 0)
    private var nextDateStampCheck = Deadline(nanoseconds: 0)
    public private(set) var config: Config
    private let configPath: String?
    private var presets: [Preset]
    private var rules: StateRules
    public private(set) var state: CameraState
    private let settingsStore: SettingsStore
    private let saveQueue = DispatchQueue(label: "loopix.settings", qos: .utility)
    private let storage: PhotoStorage
    private let captures: CaptureQueue
    private let reports = CaptureReports()
    private var sizeEstimate = PhotoSizeEstimate()
    private var licensed: Bool

    private let pipeline: PreviewPipeline
    private let supervisor: CameraSupervisor
    private let faults: FaultInjectable?
    private var motion: MotionSensor?
    private var inputs: [InputSource]
    private var analyzer = MotionAnalyzer()

    // What the screen and `status` show.
    private var banner: (text: String, until: Deadline)?
    private var intensityVisibleUntil = Deadline(nanoseconds: 0)
    private var savedPhotos = 0
    /// The web gallery's address, when it runs, and how to learn it again (the network may
    /// come up after the daemon).
    private var webURL: String?
    private var webURLNow: (() -> String)?
    private var nextWebAddressCheck = Deadline(nanoseconds: 0)
    private var lastPhoto: String?
    private var refusalLog = LogThrottle(interval: 5)

    // Video.
    private var recorder: Recorder?
    private var recordingStarted = Deadline(nanoseconds: 0)
    /// The first frame of a recording: (camera timestamp, monotonic time it arrived).
    private var cameraClockAnchor: (camera: UInt64, monotonic: UInt64)?
    private var lastCameraTimestamp: UInt64 = 0
    private var lastClipTimestamp: UInt64 = 0
    /// When the camera went down during a recording (nil: it is up).
    private var cameraLostAt: Deadline?
    /// Dropped frames are reported at most once a second, as a count.
    private var nextDropReport = Deadline(nanoseconds: 0)
    private var droppedReported = 0
    /// How long a recording waits for a camera that went away before it ends the clip.
    static let recordingCameraGrace: Double = 10
    /// A recording starts only when this many seconds of it fit above the reserve.
    static let minimumRecordingSeconds: Double = 3
    /// Opens a clip; tests swap in a slower encoder.
    var openRecorder: (String, VideoSettings, ClipMetadata, UInt64) throws(VideoError) -> Recorder = {
        try Recorder.open(path: $0, settings: $1, metadata: $2, startNs: $3)
    }

    // Photobooth (nil: camera mode).
    private var booth: Booth?
    /// The review screen: the developed photo (or collage) at the screen's size, and the QR
    /// code of its gallery page.
    private var reviewFrame: RGBImage?
    private var reviewCode: QRCode?
    /// The gallery's own QR code (the idle screen shows it while the web gallery runs).
    private var galleryCode: QRCode?
    /// The session's shots as small copies, for the review and the collage.
    private var boothCopies: [String: RGBImage] = [:]
    /// How late the last booth shot was taken after it was due (the countdown's end or the press), ms.
    private var lastTriggerLatencyMs: Double?
    /// The last booth shot's exposure (the still's sensor timestamp) less the moment it was
    /// due, ms: negative when the frame began just before it.
    private var lastExposureOffsetMs: Double?
    /// The last still's `Shot.skippedFramePeriodNs`, kept for status only.
    private var lastStillSkippedPeriod: UInt64 = 0
    /// The sensor timestamp of the last booth shot (monotonic ns: scripts compare it with their press).
    private var lastBoothExposure: UInt64 = 0
    /// Each shot of the current (or last) session: its exposure less the moment it was due, ms.
    private var sessionExposureOffsetsMs: [Double] = []
    /// How long before a booth shot is due a camera reconfigured for each still is asked for it.
    private var stillLead = StillLead()
    /// The collage template (booth.template), loaded at start.
    private var boothTemplate: BoothTemplate?
    private let flash: FlashLight?
    /// Whether the flash line was last driven high, and whether driving it has failed (logged once).
    private var flashIsOn = false
    private var flashFailed = false
    private var lastCollage: String?
    private let collageQueue = DispatchQueue(label: "loopix.booth", qos: .utility)
    /// The booth's prints (booth.print: auto).
    private var printQueue: PrintQueue?

    /// `wait-saved` requests: each is answered once its count of photos is saved.
    private struct SavedWaiter {
        let pending: PendingRequest
        var remaining: Int
        var paths: [String] = []
    }
    private var savedWaiters: [SavedWaiter] = []
    static let maxSavedWaiters = 32
    /// The after-save command (capture.afterSave), nil without one.
    private var afterSave: AfterSaveHooks?
    /// The last GPIO trigger's photo: its exposure less the edge's time, ms (nil: unknown).
    private var lastTriggerOffsetMs: Double?
    /// The timelapse running (capture.interval or `interval start`), kept in state/interval.json.
    private var interval: Intervalometer?
    /// The interval's next shot in status: one formatter, not one per request.
    private let intervalDateFormatter = ISO8601DateFormatter()
    private var intervalPath: String { config.state.directory + "/interval.json" }

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
        rules = StateRules(presetIDs: presets.map(\.id), lensCount: devices.camera.lenses.count)
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
        state.booth = config.photobooth
        self.state = state
        if config.photobooth { booth = Booth(settings: config.booth) }
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
        let lead = supervisor.camera.stillsWhileStreaming ? 0 : stillLead.ns
        if booth?.currentShot == nil || captures.hasRoom, let action = booth?.tick(now: MonotonicClock.now(), lead: lead) { boothDo(action) }
        setFlash(booth?.flashWanted(exposing: false) ?? false)
        runInterval()
        refreshWebAddress()
        refreshDateStamp()
        if reviewFrame != nil, booth?.isReviewing != true {
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

    /// Looks at the gallery's address every 10 s (while a booth shows QR codes) and remakes
    /// the gallery's QR code when it changed.
    private func refreshWebAddress() {
        guard booth != nil, let webURLNow, nextWebAddressCheck.hasPassed else { return }
        nextWebAddressCheck = .after(seconds: 10)
        let url = webURLNow()
        guard url != webURL else { return }
        Log.info("web gallery now at \(url)")
        webURL = url
        galleryCode = try? QRCode(url)
    }

    /// The preview's date imprint follows the clock (and a reloaded configuration), looked at
    /// once a second; a new text recompiles the look in the background.
    private func refreshDateStamp() {
        guard nextDateStampCheck.hasPassed else { return }
        nextDateStampCheck = .after(seconds: 1)
        pipeline.setDateStamp(config.capture.dateStamp?.text(for: Date()))
    }

    /// The line `systemctl status` shows, at most once a second.
    private func updateServiceStatus() {
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
    private func reload() {
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
        state.defaultIntensity = next.defaults.intensity / 100
        if applied.contains(where: { $0.hasPrefix("license.") }) { licensed = Self.checkLicense(next) }
        // The user presets are read again (a look may have been added), wherever they are now.
        next.presetsDirectory = fresh.presetsDirectory
        config = next
        presets = freshPresets
        rules = StateRules(presetIDs: presets.map(\.id), lensCount: supervisor.lenses.count)
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

    private func previewFrame() {
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

    private var currentPreset: Preset { presets.first { $0.id == state.presetID } ?? BuiltinPresets.clean }

    private var watermarked: Bool { currentPreset.tier == .pro && !licensed }

    private var cameraControls: CameraControls {
        CameraControls(ev: state.ev, focusPoint: state.focusPoint, aeLocked: state.aeLocked, afLocked: state.afLocked)
    }

    /// The bytes the next photo is expected to take.
    private var expectedPhotoBytes: Int64 { expectedBytes(format: config.capture.format) }

    private func expectedBytes(format: PhotoFormat) -> Int64 {
        let lens = supervisor.currentLens
        return sizeEstimate.bytes(pixels: (lens?.stillWidth ?? 4056) * (lens?.stillHeight ?? 3040), keepOriginal: config.capture.keepOriginal,
                                  raw: config.capture.raw && supervisor.camera.offersRawStills, files: format.files.count)
    }

    /// What a photo is saved as: the configured format, with a JPEG beside the HEIC for a booth
    /// shot that will be printed (CUPS has no HEIC filter).
    private func photoFormat(forBooth: Bool) -> PhotoFormat {
        forBooth && printQueue != nil && config.capture.format == .heic ? .heicAndJPEG : config.capture.format
    }

    func overlayModel() -> OverlayModel {
        if let booth { return boothOverlay(booth) }
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

    private func setBanner(_ text: String) {
        banner = (text, .after(seconds: 3))
    }

    private func takeCaptureReports() {
        for report in reports.take() {
            switch report {
            case .saved(let path, let bytes, let pixels, let copy):
                savedPhotos += 1
                lastPhoto = path
                photoIsComplete(path)
                sizeEstimate.learn(bytes: bytes, pixels: pixels)
                if let copy, booth != nil { boothCopies[path] = copy }
                if let action = booth?.photoSaved(path, now: MonotonicClock.now()) { boothDo(action) }
            case .lost(let path):
                setBanner("Photo not saved")
                if booth?.taken.contains(path) == true {
                    booth?.failed()
                    boothCopies = [:]
                }
            case .composed(let path, let copy):
                savedPhotos += 1
                lastPhoto = path
                photoIsComplete(path)
                lastCollage = path
                if booth != nil { boothCopies[path] = copy }
                if let action = booth?.composed(path, now: MonotonicClock.now()) { boothDo(action) }
            case .composeFailed:
                setBanner("Collage not saved")
                booth?.failed()
                boothCopies = [:]
            }
        }
    }

    // MARK: Timelapse

    /// At start: the schedule kept on disk (after a restart or a power cut), or the configured one.
    private func resumeInterval() {
        let now = Date().timeIntervalSince1970
        if let data = FileManager.default.contents(atPath: intervalPath) {
            do {
                let kept = try Intervalometer.parse(data, source: intervalPath)
                if let wanted = config.capture.interval, wanted.everySeconds != kept.everySeconds || wanted.count != kept.count {
                    Log.info("interval: the configuration asks for another schedule; starting it")
                } else {
                    interval = kept
                    Log.info("interval: resuming a photo every \(JSONValue.format(kept.everySeconds)) s (\(kept.taken) taken, \(kept.skipped) skipped so far)")
                    return
                }
            } catch {
                Log.warning("\(error); the schedule kept there is dropped")
            }
        }
        if let settings = config.capture.interval { startInterval(Intervalometer(settings, now: now)) }
    }

    private func startInterval(_ schedule: Intervalometer) {
        interval = schedule
        saveInterval()
        var line = "interval: a photo every \(JSONValue.format(schedule.everySeconds)) s"
        if let count = schedule.count { line += ", \(count) in all" }
        Log.info(line)
    }

    /// Written before a slot's shot is taken, so a crash after it can never shoot it twice.
    /// Synchronous: at most once a slot, a small file.
    private func saveInterval() {
        guard let interval else {
            try? FileManager.default.removeItem(atPath: intervalPath)
            return
        }
        do { try AtomicFile.write(Array((interval.json().serialized(.pretty) + "\n").utf8), to: intervalPath, replace: true) } catch {
            if let line = refusalLog.admit("interval: \(intervalPath) cannot be written (\(error)); a restart would not resume it") { Log.warning(line) }
        }
    }

    /// Each loop turn: the due slot's photo, or a skip when the camera cannot take it now.
    private func runInterval() {
        guard var schedule = interval else { return }
        let now = Date().timeIntervalSince1970
        if let slot = schedule.due(now: now) {
            interval = schedule
            saveInterval()
            var taken = false
            if state.booth || state.recording || !captures.hasRoom {
                Log.warning("interval: slot \(slot + 1) skipped (\(state.booth ? "photobooth mode" : state.recording ? "recording" : "photos still being saved"))")
            } else if case .success = capture() {
                taken = true
            }
            schedule.shot(taken)
            interval = schedule
            saveInterval()
        }
        if schedule.isFinished(now: now) {
            Log.info("interval: done (\(schedule.taken) taken, \(schedule.skipped) skipped)")
            interval = nil
            saveInterval()
        }
    }

    private func intervalStatus() -> JSONValue? {
        guard let interval else { return nil }
        var o = JSONObject([("everySeconds", .number(interval.everySeconds)), ("taken", .int(interval.taken)), ("skipped", .int(interval.skipped))])
        if let count = interval.count { o["count"] = .int(count) }
        if let next = interval.nextShot(now: Date().timeIntervalSince1970) {
            o["next"] = .string(intervalDateFormatter.string(from: Date(timeIntervalSince1970: next)))
        }
        return .object(o)
    }

    /// A photo or clip is on disk, complete: its after-save command, and the scripts waiting for it.
    private func photoIsComplete(_ path: String) {
        afterSave?.saved(path)
        for i in savedWaiters.indices {
            savedWaiters[i].paths.append(path)
            savedWaiters[i].remaining -= 1
        }
        for waiter in savedWaiters where waiter.remaining == 0 {
            waiter.pending.answer(.success(["paths": .array(waiter.paths.map { .string($0) })]))
        }
        savedWaiters.removeAll { $0.remaining == 0 }
    }

    /// A `wait-saved` request waits for its photos; the oldest of too many is let go.
    private func addSavedWaiter(_ pending: PendingRequest, count: Int) {
        if savedWaiters.count >= Self.maxSavedWaiters {
            let oldest = savedWaiters.removeFirst()
            oldest.pending.answer(.failure("wait-saved: more than \(Self.maxSavedWaiters) clients waiting; this one was let go (\(oldest.paths.count) saved meanwhile)"))
        }
        savedWaiters.append(SavedWaiter(pending: pending, remaining: count))
    }

    // MARK: Commands and their effects

    /// What carrying out a command gave: the photo's path for a capture, or why it was refused.
    struct CommandResult {
        var refusal: String?
        var photoPath: String?
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

    private func carryOut(_ effect: Effect, _ result: inout CommandResult) {
        switch effect {
        case .capture:
            switch capture() {
            case .success(let shot): result.photoPath = shot.path
            case .failure(let refusal):
                setBanner(refusal.message)
                result.refusal = refusal.message
            }
        case .captureAt(let edge):
            switch capture(notBefore: edge, trigger: edge) {
            case .success(let shot): result.photoPath = shot.path
            case .failure(let refusal): result.refusal = refusal.message
            }
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
        case .stopRecording:
            if let path = stopRecording(reason: nil) { result.photoPath = path }
        case .boothChanged:
            booth = state.booth ? Booth(settings: config.booth) : nil
            boothCopies = [:]
            reviewFrame = nil
            Log.info("photobooth mode \(state.booth ? "on" : "off")")
        case .boothTrigger:
            if booth?.phase == .attract { boothCopies = [:] }
            if let action = booth?.press(now: MonotonicClock.now()) {
                result.photoPath = boothDo(action)
            }
        }
    }

    /// Grades at the clip's size in video mode (and while a clip records), at the display's
    /// otherwise; the camera restarts when that changes the size it must deliver.
    private func gradeForMode() {
        let video = state.mode == .video || state.recording
        let v = config.videoSettings
        if pipeline.grade(at: video ? (v.width, v.height) : nil) {
            supervisor.resize(width: pipeline.gradeWidth, height: pipeline.gradeHeight)
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

    /// A photo taken: its file, and when its still was exposed.
    struct Shot {
        let path: String
        /// The still's sensor timestamp (monotonic ns; 0: the camera gave none).
        let exposureNs: UInt64
        /// The still stream's frame period when frames before `notBefore` were skipped; 0: none were.
        let skippedFramePeriodNs: UInt64
        /// The camera's reconfiguration for the still (`CapturedStill.startDelayNs`; 0: none or unknown).
        let startDelayNs: UInt64
    }

    /// An exposure's sensor timestamp less the moment it was due (a countdown's end, a trigger's
    /// edge), ms; nil when the camera gave no timestamp.
    static func exposureOffsetMs(_ exposureNs: UInt64, from dueNs: UInt64) -> Double? {
        exposureNs != 0 ? (Double(exposureNs) - Double(dueNs)) / 1e6 : nil
    }

    /// Takes a photo: reserves its file and the space it will take, grabs the still, queues it.
    /// Refuses (with the reason) when the queue is full or the photo would not fit.
    func capture(keepCopy: Bool = false, notBefore: UInt64 = 0, trigger: UInt64? = nil) -> Result<Shot, Refusal> {
        func refuse(_ message: String, log: String) -> Result<Shot, Refusal> {
            if let line = refusalLog.admit("shutter refused: \(log)") { Log.warning(line) }
            return .failure(Refusal(message: message))
        }
        guard supervisor.running else { return .failure(Refusal(message: "No camera")) }
        if state.recording && !supervisor.camera.stillsWhileStreaming {
            return .failure(Refusal(message: "This camera cannot take stills while recording"))
        }
        guard captures.hasRoom else {
            return refuse("Busy: photo queue full", log: "\(captures.capacity) photos are still being saved")
        }
        let format = photoFormat(forBooth: keepCopy)
        let bytes = expectedBytes(format: format)
        let path: String
        do { path = try storage.reserve(bytes: bytes, extension: format.primaryExtension) } catch {
            if case .full = error { return refuse("Storage full", log: "\(error)") }
            return refuse("Storage unavailable", log: "\(error)")
        }
        let still: CapturedStill
        do { still = try supervisor.captureStill(notBefore: notBefore) } catch {
            storage.release(bytes: bytes)
            Log.error("\(path): still capture failed: \(error)")
            return .failure(Refusal(message: "Capture failed"))
        }
        guard let lens = supervisor.currentLens else {
            storage.release(bytes: bytes)
            return .failure(Refusal(message: "No camera"))
        }
        var job = CaptureJob(still: still, lens: lens, preset: currentPreset,
                             intensity: state.intensity, grainSeed: RenderSettings().grainSeed, grainFrame: pipeline.grainClock.frame,
                             orientation: analyzer.orientation, watermark: watermarked, path: path, date: Date(),
                             keepOriginal: config.capture.keepOriginal)
        job.format = format
        job.saveRaw = config.capture.raw && supervisor.camera.offersRawStills
        job.promisedBytes = bytes
        job.keepCopy = keepCopy
        if let trigger {
            // The photo's time is the trigger's (on the wall clock, to the microsecond), and its
            // EXIF says how far the exposure was from it.
            let now = MonotonicClock.now()
            let offset = Self.exposureOffsetMs(still.metadata.timestampNs, from: trigger)
            job.trigger = TriggerStamp(time: Date(timeIntervalSinceNow: -Double(now - min(trigger, now)) / 1e9), exposureOffsetMs: offset)
            lastTriggerOffsetMs = offset
            Log.info("trigger: \(path), exposure \(offset.map { String(format: "%+.1f ms", $0) } ?? "at an unknown time") from the edge")
        }
        job.dateStamp = config.capture.dateStamp?.text(for: job.trigger?.time ?? job.date)
        guard captures.submit(job) else {
            storage.release(bytes: bytes)
            return refuse("Busy: photo queue full", log: "\(captures.capacity) photos are still being saved")
        }
        lastStillSkippedPeriod = still.skippedFramePeriodNs
        Log.info("shutter: \(path) (\(currentPreset.name), \(Int((state.intensity * 100).rounded())) %)")
        return .success(Shot(path: path, exposureNs: still.metadata.timestampNs, skippedFramePeriodNs: still.skippedFramePeriodNs,
                             startDelayNs: still.startDelayNs))
    }

    // MARK: Photobooth

    /// What the booth's screen shows: the idle screen (the look's name, "Press the button",
    /// the gallery's QR code), the countdown's numeral, "Developing…", or the review's QR code.
    private func boothOverlay(_ booth: Booth) -> OverlayModel {
        var model = OverlayModel()
        model.watermark = watermarked
        switch booth.phase {
        case .attract:
            model.attractTitle = currentPreset.name
            model.attractLine = "Press the button"
            if let galleryCode {
                model.qrCode = galleryCode
                model.qrCaption = "All photos"
            }
        case .countdown(let shot, _):
            model.countdown = booth.countdownNumeral(now: MonotonicClock.now())
            if booth.settings.shots > 1 { model.prompt = "Photo \(shot) of \(booth.settings.shots)" }
        case .developing:
            model.prompt = "Developing\u{2026}"
        case .review:
            if let reviewCode {
                model.qrCode = reviewCode
                model.qrCaption = "Scan for your photo"
            }
            if booth.settings.print == .button, printQueue != nil {
                model.prompt = booth.printRequested ? "Printing\u{2026}" : "Press the button to print"
            }
        }
        if let text = supervisor.banner {
            model.banner = text
        } else if let b = banner, !b.until.hasPassed {
            model.banner = b.text
        } else if printQueue?.attention != nil {
            model.banner = "Printer needs attention"  // the reason: in the log and in status
        }
        return model
    }

    /// Carries out what the booth asks, and what that leads to; returns the path of a shot
    /// taken at once (for the reply to the press).
    @discardableResult
    private func boothDo(_ first: Booth.Action) -> String? {
        var next: Booth.Action? = first
        var taken: String?
        while let action = next {
            next = nil
            switch action {
            case .capture(_, let due):
                let now = MonotonicClock.now()
                lastTriggerLatencyMs = Double(now - min(due, now)) / 1e6
                // The flash is on for the exposure, which the camera makes within captureStill.
                setFlash(booth?.flashWanted(exposing: true) ?? false)
                let result = capture(keepCopy: true, notBefore: due)
                setFlash(booth?.flashWanted(exposing: false) ?? false)
                switch result {
                case .success(let shot):
                    if let offset = Self.exposureOffsetMs(shot.exposureNs, from: due) {
                        lastExposureOffsetMs = offset
                        if booth?.taken.isEmpty == true { sessionExposureOffsetsMs = [] }
                        sessionExposureOffsetsMs.append((offset * 10).rounded() / 10)
                        lastBoothExposure = shot.exposureNs
                        if !supervisor.camera.stillsWhileStreaming,
                           let line = stillLead.learn(exposure: shot.exposureNs, due: due, startDelay: shot.startDelayNs,
                                                      skippedPeriod: shot.skippedFramePeriodNs) {
                            Log.info(line)
                        }
                    }
                    taken = taken ?? shot.path
                    next = booth?.shotTaken(shot.path, now: MonotonicClock.now())
                case .failure(let refusal):
                    setBanner(refusal.message)
                    next = booth?.shotTaken(nil, now: MonotonicClock.now())
                    boothCopies = [:]
                }
            case .compose(let paths):
                startCollage(paths)
            case .review(let path):
                showReview(path)
            case .print(let path):
                printPhoto(path)
            }
        }
        return taken
    }

    /// Puts the session's shots together on the booth's own queue and saves the collage as the
    /// next photo (in the photos' format); the result comes back as a report.
    private func startCollage(_ paths: [String]) {
        let copies = paths.compactMap { boothCopies[$0] }
        // A printer takes JPEG: with printing on, the collage gets one beside its HEIC.
        let format = photoFormat(forBooth: true)
        let bytes = expectedBytes(format: format)
        let path: String
        do { path = try storage.reserve(bytes: bytes, extension: format.primaryExtension) } catch {
            Log.error("booth: no room for the collage: \(error)")
            reports.add(.composeFailed)
            return
        }
        let layout = config.booth.layout, template = boothTemplate, encoding = Self.encoding(config), preset = currentPreset.name
        let reports = self.reports, storage = self.storage
        let date = Date()
        collageQueue.async {
            defer { storage.release(bytes: bytes) }
            let dateText = ISO8601DateFormatter.string(from: date, timeZone: .current, formatOptions: [.withFullDate])
            let collage = template.map { BoothCollage.compose(copies, template: $0) }
                ?? BoothCollage.compose(copies, layout: layout, caption: "\(preset) - \(dateText)")
            let meta = PhotoMetadata(make: "Loopix", model: "Loopix photobooth", date: date, presetName: preset)
            do {
                try format.write(collage, to: path, metadata: meta, heic: encoding.heic, jpegQuality: encoding.jpegQuality)
                Log.info("booth: collage of \(copies.count) saved as \(path)")
                reports.add(.composed(path: path, copy: BoothCollage.shrink(collage, toFit: BoothCollage.shotWidth, BoothCollage.shotHeight)))
            } catch {
                Log.error("\(path): collage lost: \(error)")
                reports.add(.composeFailed)
            }
        }
    }

    /// The review screen: the developed photo (or collage) letterboxed to the screen, and the
    /// QR code of its gallery page when the gallery runs.
    private func showReview(_ path: String) {
        defer { boothCopies = [:] }
        if config.booth.print == .auto { printPhoto(path) }
        guard let copy = boothCopies[path] else { return }
        reviewFrame = BoothCollage.letterbox(copy, width: pipeline.width, height: pipeline.height)
        let name = path.split(separator: "/").suffix(2).joined(separator: "/")
        reviewCode = webURL.flatMap { try? QRCode($0 + "photo/" + name) }
    }

    /// Hands a photo to CUPS: its JPEG (made beside the HEIC when printing is on), or the photo.
    private func printPhoto(_ path: String) {
        guard let printQueue else { return }
        let jpeg = (path as NSString).deletingPathExtension + ".JPG"
        printQueue.print(FileManager.default.fileExists(atPath: jpeg) ? jpeg : path)
    }

    /// Drives the flash line when its state changes; a failure is logged once (the booth goes on
    /// without light).
    private func setFlash(_ on: Bool) {
        guard let flash, on != flashIsOn else { return }
        do {
            try flash.set(on)
            flashIsOn = on
            flashFailed = false
        } catch {
            if !flashFailed { Log.error("booth: flash: \(error)") }
            flashFailed = true
        }
    }

    // MARK: Video

    /// A frame's time on the monotonic clock. The camera's own timestamps give the exact
    /// spacing of frames, but their clock need not be ours (libcamera's may be CLOCK_BOOTTIME,
    /// a virtual sensor's anything): they are anchored to our clock at a frame's arrival and
    /// used while they keep rising and stay within 200 ms of the arrival times; otherwise (no
    /// timestamp, a jump, a clock that runs off) the arrival time is used and the anchor renewed.
    private func clipTimestamp(_ camera: UInt64) -> UInt64 {
        let now = MonotonicClock.now()
        var time = now
        if camera != 0, let anchor = cameraClockAnchor, camera > lastCameraTimestamp, camera >= anchor.camera,
           case let predicted = anchor.monotonic &+ (camera - anchor.camera),
           (predicted > now ? predicted - now : now - predicted) < 200_000_000 {
            time = predicted
        } else {
            cameraClockAnchor = camera != 0 ? (camera, now) : nil
        }
        lastCameraTimestamp = camera
        // Always forwards, a millisecond at least, whatever the anchoring did.
        time = max(time, lastClipTimestamp &+ 1_000_000)
        lastClipTimestamp = time
        return time
    }

    /// Seconds since the recording began.
    private var recordingElapsed: Double {
        guard state.recording else { return 0 }
        return Double(MonotonicClock.now() - min(recordingStarted.nanoseconds, MonotonicClock.now())) / 1e9
    }

    /// Bytes a second of video takes: what the clip has averaged so far, else the target rate.
    private var videoBytesPerSecond: Double {
        if let p = recorder?.progress, p.duration > 2, p.bytes > 0 { return Double(p.bytes) / p.duration }
        return Double(config.videoSettings.bitrate) / 8
    }

    /// Seconds of video that still fit above the reserve at the current rate.
    private var secondsOfVideoLeft: Int? {
        guard let shots = storage.shotsRemaining(bytesPerPhoto: max(1, Int64(videoBytesPerSecond))) else { return nil }
        return shots
    }

    /// Opens a clip (`LPX_0007.MP4`, numbered with the photos) and starts recording what the
    /// preview shows. Refused when there is no camera or too little space for a few seconds.
    private func startRecording() -> Result<String, Refusal> {
        guard supervisor.running else { return .failure(Refusal(message: "No camera")) }
        let settings = config.videoSettings
        gradeForMode()
        let path: String
        // At least a few seconds must fit; then the clip's growth is watched (`watchRecording`).
        let minimum = Int64(videoBytesPerSecond * Self.minimumRecordingSeconds)
        do { path = try storage.reserve(bytes: minimum, extension: "MP4") } catch {
            if let line = refusalLog.admit("recording refused: \(error)") { Log.warning(line) }
            if case .full = error { return .failure(Refusal(message: "Storage full")) }
            return .failure(Refusal(message: "Storage unavailable"))
        }
        storage.release(bytes: minimum)
        let metadata = ClipMetadata(creationTime: Date().timeIntervalSince1970, look: currentPreset.name,
                                    cameraModel: "Loopix camera (\(supervisor.currentLens?.sensorModel ?? "unknown"))",
                                    rotation: ClipMetadata.rotation(exifOrientation: analyzer.orientation))
        let start = MonotonicClock.now()
        do {
            recorder = try openRecorder(path, settings, metadata, start)
        } catch {
            Log.error("\(path): cannot record: \(error)")
            gradeForMode()
            return .failure(Refusal(message: "Recording failed"))
        }
        recordingStarted = Deadline(nanoseconds: start)
        cameraLostAt = nil
        cameraClockAnchor = nil
        lastCameraTimestamp = 0
        lastClipTimestamp = 0
        droppedReported = 0
        nextDropReport = .after(seconds: 1)
        Log.info("recording \(path) (\(settings.width)×\(settings.height)@\(settings.framesPerSecond), \(recorder?.encoderName ?? "?"), " +
                 "\(settings.bitrate / 1_000_000) Mbit/s\(recorder?.hasAudio == true ? ", sound" : ""))")
        return .success(path)
    }

    /// Finishes the clip; `reason` says why when it ends by itself (shown on screen). Returns its path.
    @discardableResult
    private func stopRecording(reason: String?) -> String? {
        guard let recorder else { return nil }
        self.recorder = nil
        let p = recorder.stop()
        let summary = "\(recorder.path): \(p.framesWritten) frames, \(String(format: "%.1f", p.duration)) s, " +
            "\(p.bytes / 1_048_576) MB\(p.framesDropped > 0 ? ", \(p.framesDropped) dropped" : "")"
        if let failure = p.failure {
            Log.error("recording ended: \(failure); \(summary) (kept up to its last whole fragment)")
        } else if let reason {
            Log.warning("recording stopped: \(reason); \(summary)")
        } else {
            Log.info("recording saved: \(summary)")
        }
        if let reason { setBanner(reason) } else if p.failure != nil { setBanner("Recording stopped: encoder error") }
        savedPhotos += p.framesWritten > 0 ? 1 : 0
        lastPhoto = recorder.path
        // Finished and fsynced by stop(): a whole file for the after-save command and waiters.
        if p.framesWritten > 0 { photoIsComplete(recorder.path) }
        gradeForMode()
        return recorder.path
    }

    /// While recording: ends the clip when the encoder failed, the storage reaches its
    /// reserve, or the camera has been gone too long; reports dropped frames once a second.
    private func watchRecording() {
        guard state.recording, let recorder else { return }
        let p = recorder.progress
        if let failure = p.failure {
            let reason: String
            if case .storageFull = failure { reason = "Storage full: recording stopped" } else { reason = "Recording stopped: \(failure)" }
            stopRecording(reason: reason)
            perform(.recordingEnded)
            return
        }
        if let free = storage.freeBytes(), free - storage.reserveBytes < Int64(videoBytesPerSecond * 2) {
            stopRecording(reason: "Storage full: recording stopped")
            perform(.recordingEnded)
            return
        }
        if supervisor.isHealthy || supervisor.running && supervisor.error == nil {
            cameraLostAt = nil
        } else if cameraLostAt == nil {
            cameraLostAt = .after(seconds: Self.recordingCameraGrace)
        } else if cameraLostAt!.hasPassed {
            stopRecording(reason: "Camera lost: recording stopped")
            perform(.recordingEnded)
            return
        }
        if p.framesDropped > droppedReported && nextDropReport.hasPassed {
            Log.warning("recording: \(p.framesDropped - droppedReported) frame(s) dropped since the last report (the encoder is behind); \(p.framesDropped) in all")
            droppedReported = p.framesDropped
            nextDropReport = .after(seconds: 1)
        }
    }

    private func readMotion() {
        guard let sensor = motion else { return }
        do {
            analyzer.add(try sensor.read(), at: MonotonicClock.seconds())
        } catch {
            Log.warning("motion sensor \(sensor.name): \(error); dropped, grain at a constant rate")
            motion = nil
        }
    }

    // MARK: Control socket

    /// Answers the requests the control server queued, oldest first; a request whose deadline
    /// passed before it was reached was answered "busy" and is skipped, never carried out.
    private func answerRequests() {
        for pending in handle.takeRequests() where pending.claim() {
            if case .waitSaved(let count) = pending.request {
                addSavedWaiter(pending, count: count)
                continue
            }
            pending.answer(answer(pending.request))
        }
    }

    /// The reply to one control-socket request; every change goes through `perform`.
    func answer(_ request: ControlRequest) -> ControlReply {
        func reply(_ result: CommandResult, _ fields: @autoclosure () -> [String: JSONValue]) -> ControlReply {
            if let refusal = result.refusal { return .failure(refusal) }
            return .success(fields())
        }
        switch request {
        case .status:
            return .success(status())
        case .capture:
            let result = perform(.input(.shutter))
            if state.mode == .video { return reply(result, recordingReply(result)) }
            if let booth { return reply(result, ["booth": .string(booth.phaseName), "path": .string(result.photoPath ?? "")]) }
            return reply(result, ["path": .string(result.photoPath ?? "")])
        case .record(let action):
            let result = perform(.record(action))
            return reply(result, recordingReply(result))
        case .preset(let name):
            let id = name.lowercased()
            return reply(perform(.selectPreset(id)), ["preset": .string(id)])
        case .intensity(let percent):
            return reply(perform(.setIntensity(percent / 100)), ["intensity": .int(Int((state.intensity * 100).rounded()))])
        case .ev(let ev):
            return reply(perform(.setEV(ev)), ["ev": .number(state.ev)])
        case .lens(let index):
            let result = perform(.selectLens(index))
            return reply(result, ["lens": .int(index), "label": .string(supervisor.currentLens?.label ?? "")])
        case .mode(let mode):
            return reply(perform(.setMode(mode == .video ? .video : .photo)), ["mode": .string(state.mode.rawValue)])
        case .grid(let on):
            return reply(perform(.setGrid(on)), ["grid": .bool(state.grid)])
        case .booth(let on):
            return reply(perform(.setBooth(on)), ["booth": .bool(state.booth)])
        case .waitSaved:
            // Held by answerRequests until the photos are saved; never answered here.
            return .failure("wait-saved is answered once the photos are saved")
        case .interval(.start(let every, let count)):
            if let running = interval { Log.info("interval: replacing the schedule of a photo every \(JSONValue.format(running.everySeconds)) s") }
            startInterval(Intervalometer(Intervalometer.Settings(everySeconds: every, count: count), now: Date().timeIntervalSince1970))
            return .success(["interval": intervalStatus() ?? .null])
        case .interval(.stop):
            guard let running = interval else { return .failure("no interval is running") }
            Log.info("interval: stopped (\(running.taken) taken, \(running.skipped) skipped)")
            interval = nil
            saveInterval()
            return .success(["taken": .int(running.taken), "skipped": .int(running.skipped)])
        case .handedness(let h):
            return reply(perform(.setHandedness(h)), ["handedness": .string(state.handedness.rawValue)])
        case .snapshot(let path):
            do {
                try Snapshot.write(pipeline.composed, to: path, allowed: config.snapshot.directories,
                                   kept: [config.storage.directory, config.state.directory])
            } catch {
                return .failure("\(error)")
            }
            return .success(["path": .string(path)])
        case .simulate(let fault, let seconds):
            guard let faults else { return .failure("simulate needs the simulated camera (loopixd --simulate)") }
            switch fault {
            case .stall: faults.inject(seconds > 0 ? .stall(seconds: seconds) : .none)
            case .disconnect: faults.inject(seconds > 0 ? .disappear : .none)
            }
            if fault == .disconnect && seconds > 0 {
                // The camera comes back after `seconds`, as if replugged.
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { faults.inject(.none) }
            }
            Log.info("simulated camera: \(fault.rawValue) for \(seconds) s")
            return .success(["fault": .string(fault.rawValue), "seconds": .number(seconds)])
        }
    }

    /// What a recording request answers: whether a clip records now, and its file.
    private func recordingReply(_ result: CommandResult) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["recording": .bool(state.recording)]
        if let path = result.photoPath ?? recorder?.path { fields["path"] = .string(path) }
        return fields
    }

    private func status() -> [String: JSONValue] {
        var s: [String: JSONValue] = [
            "preset": .string(state.presetID), "presetName": .string(currentPreset.name), "tier": .string(currentPreset.tier.rawValue),
            "intensity": .int(Int((state.intensity * 100).rounded())), "ev": .number(state.ev), "lens": .int(state.lensIndex),
            "lenses": .array(supervisor.lenses.map { .string($0.label) }), "sensors": .array(supervisor.lenses.map { .string($0.sensorModel) }),
            "mode": .string(state.mode.rawValue),
            "grid": .bool(state.grid), "handedness": .string(state.handedness.rawValue), "aeLocked": .bool(state.aeLocked),
            "afLocked": .bool(state.afLocked), "queue": .int(captures.pending), "queueCapacity": .int(captures.capacity), "saved": .int(savedPhotos), "licensed": .bool(licensed),
            "onboardingDone": .bool(state.onboardingDone), "camera": .string(supervisor.statusText),
            "display": .string(pipeline.display.name), "watermark": .bool(watermarked),
        ]
        if let lastPhoto { s["lastPhoto"] = .string(lastPhoto) }
        if let webURL { s["web"] = .string(webURL) }
        s["recording"] = .bool(state.recording)
        s["framesShown"] = .int(pipeline.framesShown)
        if let schedule = intervalStatus() { s["interval"] = schedule }
        if let lastTriggerOffsetMs { s["triggerExposureOffsetMs"] = .number((lastTriggerOffsetMs * 10).rounded() / 10) }
        if let afterSave {
            let c = afterSave.counts
            s["afterSave"] = ["running": .int(c.running), "waiting": .int(c.waiting), "succeeded": .int(c.succeeded),
                              "failed": .int(c.failed), "skipped": .int(c.skipped)]
        }
        if let booth {
            var b = JSONObject([("phase", .string(booth.phaseName)), ("shots", .int(booth.settings.shots)),
                                ("taken", .array(booth.taken.map { .string($0) }))])
            if let shot = booth.currentShot { b["shot"] = .int(shot) }
            if let n = booth.countdownNumeral(now: MonotonicClock.now()) { b["countdown"] = .int(n) }
            if let lastTriggerLatencyMs { b["triggerLatencyMs"] = .number((lastTriggerLatencyMs * 10).rounded() / 10) }
            if let lastExposureOffsetMs {
                b["exposureOffsetMs"] = .number((lastExposureOffsetMs * 10).rounded() / 10)
                b["exposedAtNs"] = .int(Int(clamping: lastBoothExposure))
                b["exposureOffsetsMs"] = .array(sessionExposureOffsetsMs.map { .number($0) })
                if lastStillSkippedPeriod > 0 { b["stillFramePeriodMs"] = .number((Double(lastStillSkippedPeriod) / 1e5).rounded() / 10) }
            }
            if !supervisor.camera.stillsWhileStreaming { b["stillLeadMs"] = .int(Int(stillLead.ns / 1_000_000)) }
            if booth.settings.flash != .off { b["flash"] = .bool(flashIsOn) }
            if let lastCollage { b["lastCollage"] = .string(lastCollage) }
            if let printQueue {
                var p = JSONObject([("pending", .int(printQueue.pending)), ("printed", .int(printQueue.printed))])
                if let trouble = printQueue.attention { p["attention"] = .string(trouble) }
                b["printing"] = .object(p)
            }
            s["booth"] = .object(b)
        }
        // Whether frames show the chosen look yet (it compiles in the background after a change).
        s["lookReady"] = .bool(pipeline.lookInUse == state.presetID)
        if let recorder {
            let p = recorder.progress
            s["clip"] = ["path": .string(recorder.path), "seconds": .number((recordingElapsed * 10).rounded() / 10),
                         "framesWritten": .int(p.framesWritten), "framesDropped": .int(p.framesDropped),
                         "bytes": .number(Double(p.bytes)), "encoder": .string(recorder.encoderName), "sound": .bool(recorder.hasAudio)]
        }
        if state.mode == .video, let left = secondsOfVideoLeft { s["secondsRemaining"] = .int(left) }
        if let shots = storage.shotsRemaining(bytesPerPhoto: expectedPhotoBytes) { s["shotsRemaining"] = .int(shots) }
        return s
    }
}

/// What the capture queue tells the controller (written on the capture thread, taken on the
/// controller's).
final class CaptureReports: Sendable {
    enum Report {
        /// `copy`: the small copy a booth shot keeps.
        case saved(path: String, bytes: Int64, pixels: Int, copy: RGBImage?)
        case lost(path: String)
        /// A booth session's collage, and its small copy.
        case composed(path: String, copy: RGBImage)
        case composeFailed
    }
    private let reports = Locked<[Report]>([])

    func add(_ report: Report) { reports.withLock { $0.append(report) } }

    func take() -> [Report] {
        reports.withLock { r in
            defer { r.removeAll() }
            return r
        }
    }
}
