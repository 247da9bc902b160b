import Controls
import FilmCore

/// Everything the user controls, in one value. One owner (the `Controller`) changes it, only
/// through `apply`; the preview loop reads copies.
public struct CameraState: Sendable, Equatable {
    public enum Mode: String, Sendable, Codable { case photo, video }
    /// What the rotary encoder adjusts; pressing it switches.
    public enum Dial: String, Sendable, Codable { case ev, intensity }

    public var presetID: String
    /// Intensity 0…1 per preset, remembered when switching looks.
    public var intensities: [String: Double]
    /// Exposure compensation, −3…3 in thirds of a stop.
    public var ev: Double
    public var lensIndex: Int
    public var mode: Mode = .photo
    public var aeLocked = false
    public var afLocked = false
    public var focusPoint: SIMD2<Double>? = nil
    public var grid: Bool
    public var handedness: Handedness
    public var dial: Dial = .ev
    /// False until the user has picked the shutter button on first start.
    public var onboardingDone: Bool
    /// Intensity of a look the user has not adjusted (the configuration's default).
    public var defaultIntensity: Double = 1

    public init(presetID: String, intensities: [String: Double] = [:], ev: Double = 0, lensIndex: Int = 0, grid: Bool = false,
                handedness: Handedness = .right, onboardingDone: Bool = false) {
        self.presetID = presetID
        self.intensities = intensities
        self.ev = ev
        self.lensIndex = lensIndex
        self.grid = grid
        self.handedness = handedness
        self.onboardingDone = onboardingDone
    }

    /// The current look's intensity (1 until the user changes it).
    public var intensity: Double {
        get { intensities[presetID] ?? defaultIntensity }
        set { intensities[presetID] = min(max(newValue, 0), 1) }
    }

    /// EV steps are thirds of a stop.
    public static func snapEV(_ ev: Double) -> Double {
        min(max((ev * 3).rounded() / 3, -3), 3)
    }
}

/// What a state change asks of the devices and the rest of the daemon.
public enum Effect: Sendable, Equatable {
    case capture
    case switchLens
    case cameraControls
    case lookChanged
    case intensityChanged
    case settingsChanged
}

/// The rules: how each input event changes the state. Pure, so it is tested without devices.
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

    public func apply(_ event: InputEvent, to s: inout CameraState) -> [Effect] {
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
            return pressedRight == shutterIsRight ? [.capture] : apply(.nextFilter, to: &s)
        case .shutter:
            return [.capture]
        case .encoderTurned(let detents):
            switch s.dial {
            case .ev:
                let ev = CameraState.snapEV(s.ev + Double(detents) / 3)
                guard ev != s.ev else { return [] }
                s.ev = ev
                return [.cameraControls, .settingsChanged]
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
            return []
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
