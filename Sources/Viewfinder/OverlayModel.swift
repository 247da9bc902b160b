import QRCode

/// Everything the camera shows over the live preview. The controller builds one from its
/// `CameraState` for every change; `OverlayRenderer` draws it.
///
/// `OverlayModel()` shows nothing at all (handy for tests and for a clean HDMI feed); a
/// camera sets the fields it has.
public struct OverlayModel: Sendable, Equatable {
    /// What the rotary encoder adjusts.
    public enum Dial: Sendable, Equatable {
        case ev
        case intensity
    }

    public enum Mode: Sendable, Equatable {
        case photo
        case video
    }

    /// Rule-of-thirds grid lines.
    public var grid = false
    /// Exposure compensation, −3…3 stops (clamped when drawn).
    public var ev = 0.0
    /// Whether the EV scale at the bottom is shown.
    public var evScaleVisible = false
    /// What the encoder adjusts; the active one is highlighted.
    public var dial = Dial.ev
    /// Film-look intensity, 0…1.
    public var intensity = 1.0
    /// Shows "Intensity 70 %" (while it is being adjusted; always while `dial == .intensity`).
    public var intensityVisible = false
    /// The film look's name, top left ("" shows nothing).
    public var presetName = ""
    /// Whether the look is a Pro one ("PRO" badge) or free ("FREE"). Shown beside the name.
    public var isPro = false
    /// The lens, top right ("26 mm"; "" shows nothing).
    public var lensLabel = ""
    public var aeLocked = false
    public var afLocked = false
    /// The focus point, normalised (0…1, origin top left): a reticle is drawn there.
    public var focusPoint: SIMD2<Double>? = nil
    public var mode = Mode.photo
    /// Video: recording (red dot, "REC mm:ss") or standing by ("VIDEO").
    public var recording = false
    /// Seconds recorded so far (whole seconds, so that the overlay only changes once a second).
    public var elapsedSeconds = 0
    /// Photos that still fit on the storage (photo mode; nil shows nothing).
    public var shotsRemaining: Int? = nil
    /// Seconds of video that still fit on the storage at the current bit rate (video mode;
    /// nil shows nothing). Whole seconds, like `elapsedSeconds`.
    public var secondsRemaining: Int? = nil
    /// Shows the shutter-side marker (a bar and arrow at the edge by the shutter button).
    public var shutterMarkerVisible = false
    /// Which side the shutter button is on (handedness).
    public var shutterOnRight = true
    /// "LOOPIX PRO — UNLICENSED" over the image (a Pro look without a license).
    public var watermark = false
    /// An error or state the user must see, centred on a dark band ("No camera", "Storage
    /// full", "Busy — photo queue full").
    public var banner: String? = nil
    /// An instruction (onboarding: "Press the button you want as shutter").
    public var prompt: String? = nil
    /// Photobooth: the countdown's numeral, large in the middle (3, 2, 1).
    public var countdown: Int? = nil
    /// Photobooth's idle screen: a large title (the look's name) and a line under it ("Press
    /// the button"), centred.
    public var attractTitle: String? = nil
    public var attractLine: String? = nil
    /// A QR code in the bottom-right corner on its white square (with the quiet zone), and a
    /// caption above it ("Scan for your photo").
    public var qrCode: QRCode? = nil
    public var qrCaption: String? = nil

    /// Nothing shown.
    public init() {}

    /// What a camera shows by default: the preset and lens, the EV scale and the shutter marker.
    public static func camera(presetName: String, isPro: Bool, lensLabel: String) -> OverlayModel {
        var model = OverlayModel()
        model.presetName = presetName
        model.isPro = isPro
        model.lensLabel = lensLabel
        model.evScaleVisible = true
        model.shutterMarkerVisible = true
        return model
    }
}
