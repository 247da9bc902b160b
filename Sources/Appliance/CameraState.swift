import ControlProtocol
import Controls
import FilmCore

/// Everything the user controls, in one value. One owner (the `Controller`) changes it, only
/// through `StateRules.apply`; the preview reads it between changes.
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
    /// A clip is being recorded (it goes on if the mode is switched to photo meanwhile).
    public var recording = false
    /// Photobooth mode and its session (the phase, the shots taken): every button (and a
    /// touch) is the big button that starts a countdown. Nil: camera mode.
    public var session: Booth? = nil
    public var booth: Bool { session != nil }
    /// The booth's flash or ring light is on (what the session wants between exposures).
    public var flash = false
    /// The timelapse running (`capture.interval` or `interval start`); nil when none.
    public var interval: Intervalometer? = nil
    /// Whether the camera takes a still while a clip records (the Pi's pipeline streams both;
    /// vimc must stop the one for the other). A fact of the camera, set at start.
    public var stillsWhileRecording = true
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

