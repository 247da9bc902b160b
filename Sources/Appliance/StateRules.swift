import ControlProtocol
import Controls

/// What anyone asks of the camera, whichever way it came: a GPIO button, the encoder, a
/// touch, a key, a control-socket request (and later the web remote and the booth). Every one
/// goes through `StateRules.apply`, the one place the state changes.
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
    /// Start, stop or toggle a recording (start switches to video mode).
    case record(RecordAction)
    /// The recording ended (stopped, or by itself: storage, camera, encoder) or could not start.
    case recordingEnded
    /// Photobooth mode on or off.
    case setBooth(Bool)
}

/// Start, stop or toggle (the protocol's words).
public typealias RecordAction = ControlRequest.RecordAction

/// What a state change asks of the devices and the rest of the daemon; the controller carries
/// them out in one place.
public enum Effect: Sendable, Equatable {
    case capture
    /// A still exposed no earlier than this moment (monotonic ns): the trigger's edge.
    case captureAt(UInt64)
    case switchLens
    case cameraControls
    case lookChanged
    case intensityChanged
    case settingsChanged
    /// Photo ⇄ video: the camera's frames change size.
    case modeChanged
    case startRecording
    case stopRecording
    /// Photobooth mode was switched on or off.
    case boothChanged
    /// The photobooth's big button: a session starts (a countdown, or the shot at once).
    case boothTrigger
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
    /// Intensity change per encoder detent.
    public static let intensityStep = 0.05

    public init(presetIDs: [String], lensCount: Int) {
        self.presetIDs = presetIDs
        self.lensCount = max(1, lensCount)
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
        case .record(let action):
            if s.booth && !s.recording { return .refused("Photobooth mode takes photos only (loopix ctl booth off)") }
            switch action {
            case .start where s.recording, .stop where !s.recording:
                return Outcome()
            case .stop where s.recording, .toggle where s.recording:
                s.recording = false
                return Outcome([.stopRecording])
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
        case .setBooth(let on):
            guard on != s.booth else { return Outcome() }
            if on && s.recording { return .refused("Stop recording first: a booth takes photos") }
            s.booth = on
            var effects: [Effect] = [.boothChanged]
            if on && s.mode != .photo {
                s.mode = .photo
                effects.append(.modeChanged)
            }
            return Outcome(effects)
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
            return s.mode == .video ? apply(.record(.toggle), to: &s).effects : [.capture]
        case .trigger(let at):
            // Stills only: in video mode a trigger line does nothing.
            return s.mode == .video ? [] : [.captureAt(at)]
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
