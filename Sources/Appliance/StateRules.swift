import ControlProtocol
import Controls

/// What anyone asks of the camera, whichever way it came: a GPIO button, the encoder, a
/// touch, a key, a control-socket request, the web remote — and what the daemon's own timers
/// and devices report (a countdown's end, an interval's slot, a photo saved, a recording that
/// ended by itself). Every one goes through `StateRules.apply`, the one place the state changes.
public enum Command: Sendable, Equatable {
    /// A button, the encoder, a key or a touch.
    case input(InputEvent)
    /// Choose a look by id.
    case selectPreset(String)
    /// The current look's intensity, 0…1.
    case setIntensity(Double)
    /// Exposure compensation in stops (snapped to thirds, −3…3).
    case setEV(Double)
    case selectLens(Int)
    case setMode(CameraState.Mode)
    case setGrid(Bool)
    case setHandedness(Handedness)
    /// The intensity of looks the user has not adjusted (the configuration's, on reload).
    case setDefaultIntensity(Double)
    /// Start, stop or toggle a recording (start switches to video mode).
    case record(RecordAction)
    /// The recording could not start, or its stop was carried out.
    case recordingEnded
    /// The recording must end by itself (the storage, the camera, the encoder): why, for the screen.
    case recordingFailed(String)
    /// Photobooth mode on or off.
    case setBooth(Bool)
    /// The booth's big button was pressed at this moment (monotonic ns).
    case boothPress(now: UInt64)
    /// The booth's clock: a countdown may end (asked `lead` ns early for a camera that needs
    /// time to reconfigure), a review may be over.
    case boothTick(now: UInt64, lead: UInt64)
    /// The booth's shot was taken (its file), or refused (nil).
    case boothShotTaken(String?, now: UInt64)
    /// A photo is saved, complete (the booth waits for its shots).
    case photoSaved(String, now: UInt64)
    /// A photo was lost on its way to the disk.
    case photoLost(String)
    /// The booth's collage is saved, or could not be (nil).
    case collageSaved(String?, now: UInt64)
    /// A timelapse: start this schedule (replacing one running), or stop.
    case startInterval(Intervalometer)
    case stopInterval
    /// The interval's clock (wall time, s); `queueFull` when a photo could not be taken now.
    case intervalTick(now: Double, queueFull: Bool)
    /// The slot's shot was carried out: taken or not.
    case intervalShotDone(taken: Bool, now: Double)
    /// Save the composed screen as a PNG.
    case snapshot(path: String)
    /// The simulated camera: a fault for `seconds` (0 ends it).
    case simulate(ControlRequest.Fault, seconds: Double)
}

/// Start, stop or toggle (the protocol's words).
public typealias RecordAction = ControlRequest.RecordAction

/// What a state change asks of the devices and the rest of the daemon; the controller carries
/// them out in one place.
public enum Effect: Sendable, Equatable {
    case capture
    /// A still exposed no earlier than this moment (monotonic ns): the trigger's edge.
    case captureAt(UInt64)
    /// The shutter is refused, for this reason (shown on the screen, given to the socket).
    case refuseShutter(String)
    case switchLens
    case cameraControls
    case lookChanged
    case intensityChanged
    case settingsChanged
    /// Photo ⇄ video: the camera's frames change size.
    case modeChanged
    case startRecording
    /// Finish the clip; why, when it ends by itself.
    case stopRecording(reason: String?)
    /// Photobooth mode was switched on or off.
    case boothChanged
    /// The photobooth's big button: the controller asks with the press's moment (`boothPress`).
    case boothTrigger
    /// What the booth's session asks for: a shot, a collage, the review, a print.
    case booth(Booth.Action)
    /// The flash's wanted state changed (`CameraState.flash`).
    case flashChanged
    /// The interval's schedule changed: keep it on disk (before its slot's shot is taken).
    case saveInterval
    /// An interval's slot is skipped, for this reason (logged).
    case intervalSkipped(slot: Int, reason: String)
    /// The interval has taken its last slot, or was stopped: its counts.
    case intervalEnded(taken: Int, skipped: Int, stopped: Bool)
    case writeSnapshot(String)
    case injectFault(ControlRequest.Fault, seconds: Double)
}

/// The result of one command: the effects to carry out, or why it was refused (one line, for
/// the socket's reply and the screen's banner). A refused command changes nothing.
public struct Outcome: Sendable, Equatable {
    public var effects: [Effect]
    public var refusal: String?

    public init(_ effects: [Effect] = [], refusal: String? = nil) {
        self.effects = effects
        self.refusal = refusal
    }

    public static func refused(_ why: String) -> Outcome { Outcome(refusal: why) }
}

/// The rules: how each command changes the state. Pure, so they are tested without devices.
public struct StateRules: Sendable {
    /// Preset ids in the order next/previous filter walk through them.
    public let presetIDs: [String]
    public let lensCount: Int
    /// What a booth session is made of, when photobooth mode is switched on.
    public let boothSettings: BoothSettings
    /// Intensity change per encoder detent.
    public static let intensityStep = 0.05

    public init(presetIDs: [String], lensCount: Int, boothSettings: BoothSettings = BoothSettings()) {
        self.presetIDs = presetIDs
        self.lensCount = max(1, lensCount)
        self.boothSettings = boothSettings
    }

    /// The effects of a button, the encoder, a key or a touch (none is ever refused).
    public func apply(_ event: InputEvent, to s: inout CameraState) -> [Effect] {
        apply(.input(event), to: &s).effects
    }

    public func apply(_ command: Command, to s: inout CameraState) -> Outcome {
        switch command {
        case .input(let event):
            return Outcome(input(event, &s))
        case .selectPreset(let id):
            guard presetIDs.contains(id) else { return .refused("unknown preset \"\(id)\"") }
            guard id != s.presetID else { return Outcome() }
            s.presetID = id
            return Outcome([.lookChanged, .settingsChanged])
        case .setIntensity(let value):
            let before = s.intensity
            s.intensity = value
            return Outcome(s.intensity == before ? [.intensityChanged] : [.intensityChanged, .settingsChanged])
        case .setEV(let ev):
            return Outcome(setEV(CameraState.snapEV(ev), &s))
        case .selectLens(let index):
            guard (0..<lensCount).contains(index) else {
                return .refused("lens \(index) does not exist (0…\(lensCount - 1))")
            }
            guard index != s.lensIndex else { return Outcome() }
            s.lensIndex = index
            return Outcome([.switchLens, .settingsChanged])
        case .setMode(let mode):
            guard mode != s.mode else { return Outcome() }
            if s.booth { return .refused("Photobooth mode takes photos only (loopix ctl booth off)") }
            s.mode = mode
            return Outcome([.modeChanged])
        case .setDefaultIntensity(let value):
            s.defaultIntensity = min(max(value, 0), 1)
            return Outcome()
        case .record(let action):
            if s.booth && !s.recording { return .refused("Photobooth mode takes photos only (loopix ctl booth off)") }
            switch action {
            case .start where s.recording, .stop where !s.recording:
                return Outcome()
            case .stop where s.recording, .toggle where s.recording:
                s.recording = false
                return Outcome([.stopRecording(reason: nil)])
            default:
                var effects: [Effect] = []
                if s.mode != .video {
                    s.mode = .video
                    effects.append(.modeChanged)
                }
                s.recording = true
                return Outcome(effects + [.startRecording])
            }
        case .recordingEnded:
            s.recording = false
            return Outcome()
        case .recordingFailed(let reason):
            guard s.recording else { return Outcome() }
            s.recording = false
            return Outcome([.stopRecording(reason: reason)])
        case .setBooth, .boothPress, .boothTick, .boothShotTaken, .photoSaved, .photoLost, .collageSaved:
            return booth(command, &s)
        case .startInterval, .stopInterval, .intervalTick, .intervalShotDone:
            return interval(command, &s)
        case .snapshot(let path):
            return Outcome([.writeSnapshot(path)])
        case .simulate(let fault, let seconds):
            return Outcome([.injectFault(fault, seconds: seconds)])
        case .setGrid(let on):
            guard on != s.grid else { return Outcome() }
            s.grid = on
            return Outcome([.settingsChanged])
        case .setHandedness(let h):
            guard h != s.handedness || !s.onboardingDone else { return Outcome() }
            s.handedness = h
            s.onboardingDone = true
            return Outcome([.settingsChanged])
        }
    }

    static let noStillWhileRecording = "This camera cannot take stills while recording"

    private func setEV(_ ev: Double, _ s: inout CameraState) -> [Effect] {
        guard ev != s.ev else { return [] }
        s.ev = ev
        return [.cameraControls, .settingsChanged]
    }

    private func input(_ event: InputEvent, _ s: inout CameraState) -> [Effect] {
        if s.booth {
            // A booth's guests have one button: any button, the shutter key or a touch starts a
            // session; the rest (the encoder, the operator's keys) changes nothing.
            switch event {
            case .leftButton, .rightButton, .shutter, .focusTap, .trigger: return [.boothTrigger]
            default: return []
            }
        }
        switch event {
        case .leftButton, .rightButton:
            let pressedRight = event == .rightButton
            if !s.onboardingDone {
                // First start: the button pressed becomes the shutter.
                s.handedness = pressedRight ? .right : .left
                s.onboardingDone = true
                return [.settingsChanged]
            }
            let shutterIsRight = s.handedness == .right
            return pressedRight == shutterIsRight ? input(.shutter, &s) : input(.nextFilter, &s)
        case .shutter:
            // Video mode: the shutter starts and stops recording. Photo mode: a still (also
            // while a clip goes on, where the camera can).
            if s.mode == .video { return apply(.record(.toggle), to: &s).effects }
            return s.recording && !s.stillsWhileRecording ? [.refuseShutter(Self.noStillWhileRecording)] : [.capture]
        case .trigger(let at):
            // Stills only: in video mode a trigger line does nothing.
            if s.mode == .video { return [] }
            return s.recording && !s.stillsWhileRecording ? [.refuseShutter(Self.noStillWhileRecording)] : [.captureAt(at)]
        case .encoderTurned(let detents):
            switch s.dial {
            case .ev:
                return setEV(CameraState.snapEV(s.ev + Double(detents) / 3), &s)
            case .intensity:
                let before = s.intensity
                s.intensity = ((before + Double(detents) * Self.intensityStep) * 100).rounded() / 100
                return s.intensity == before ? [.intensityChanged] : [.intensityChanged, .settingsChanged]
            }
        case .encoderPressed:
            s.dial = s.dial == .ev ? .intensity : .ev
            return s.dial == .intensity ? [.intensityChanged] : []
        case .mode:
            s.mode = s.mode == .photo ? .video : .photo
            return [.modeChanged]
        case .nextLens:
            s.lensIndex = (s.lensIndex + 1) % lensCount
            return [.switchLens, .settingsChanged]
        case .nextFilter, .previousFilter:
            guard !presetIDs.isEmpty else { return [] }
            let i = presetIDs.firstIndex(of: s.presetID) ?? 0
            let step = event == .nextFilter ? 1 : presetIDs.count - 1
            s.presetID = presetIDs[(i + step) % presetIDs.count]
            return [.lookChanged, .settingsChanged]
        case .aeLock:
            s.aeLocked.toggle()
            return [.cameraControls]
        case .afLock:
            s.afLocked.toggle()
            return [.cameraControls]
        case .grid:
            s.grid.toggle()
            return [.settingsChanged]
        case .handedness:
            s.handedness = s.handedness == .right ? .left : .right
            s.onboardingDone = true
            return [.settingsChanged]
        case .focusTap(let x, let y):
            s.focusPoint = SIMD2(min(max(x, 0), 1), min(max(y, 0), 1))
            return [.cameraControls]
        }
    }
}
