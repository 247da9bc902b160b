import FilmCore
import Raster

/// One camera module, presented as a lens of the camera.
public struct Lens: Sendable, Equatable, Codable {
    /// Stable id (libcamera's camera id, or "sim-13mm").
    public var id: String
    /// Sensor model, e.g. "imx708_wide".
    public var sensorModel: String
    /// Real focal length in mm.
    public var focalLength: Double
    /// 35 mm-equivalent focal length in mm (what the label shows: "26 mm").
    public var focalLength35mm: Double
    /// Full still resolution.
    public var stillWidth: Int
    public var stillHeight: Int

    public init(id: String, sensorModel: String, focalLength: Double, focalLength35mm: Double, stillWidth: Int, stillHeight: Int) {
        self.id = id
        self.sensorModel = sensorModel
        self.focalLength = focalLength
        self.focalLength35mm = focalLength35mm
        self.stillWidth = stillWidth
        self.stillHeight = stillHeight
    }

    /// "26 mm".
    public var label: String { "\(Int(focalLength35mm.rounded())) mm" }
}

/// What the controller asks of the camera.
public struct CameraControls: Sendable, Equatable {
    /// Exposure compensation in stops, −3…3 in 1/3 steps.
    public var ev: Double = 0
    /// Normalised focus point (0…1, origin top left), nil for the centre / whole frame.
    public var focusPoint: SIMD2<Double>? = nil
    /// Hold the current exposure.
    public var aeLocked = false
    /// Hold the current focus.
    public var afLocked = false

    public init(ev: Double = 0, focusPoint: SIMD2<Double>? = nil, aeLocked: Bool = false, afLocked: Bool = false) {
        self.ev = ev
        self.focusPoint = focusPoint
        self.aeLocked = aeLocked
        self.afLocked = afLocked
    }
}

public enum AutoExposureState: String, Sendable, Codable { case searching, converged, locked }
public enum AutoFocusState: String, Sendable, Codable { case idle, scanning, focused, failed, locked }

/// What the camera reports with every frame.
public struct FrameMetadata: Sendable, Equatable {
    /// Rising frame counter from the camera.
    public var sequence: UInt64 = 0
    /// When the frame was exposed, in nanoseconds on the monotonic clock (the sensor's
    /// timestamp; 0 when unknown). Clips take their timing from it.
    public var timestampNs: UInt64 = 0
    /// Seconds.
    public var exposureTime: Double = 1.0 / 60
    public var analogueGain: Double = 1
    /// Dioptres, when the lens has a focus motor.
    public var lensPosition: Double? = nil
    public var aeState: AutoExposureState = .converged
    public var afState: AutoFocusState = .idle

    public init(sequence: UInt64 = 0, exposureTime: Double = 1.0 / 60, analogueGain: Double = 1, lensPosition: Double? = nil,
                aeState: AutoExposureState = .converged, afState: AutoFocusState = .idle) {
        self.sequence = sequence
        self.exposureTime = exposureTime
        self.analogueGain = analogueGain
        self.lensPosition = lensPosition
        self.aeState = aeState
        self.afState = afState
    }

    /// ISO from the analogue gain (ISO 100 at gain 1, as Raspberry Pi cameras report it).
    public var iso: Int { Int((analogueGain * 100).rounded()) }
}

/// Why the camera failed; each case says what was being done.
public enum CameraError: Error, Equatable, CustomStringConvertible {
    case noCamera
    case inUse(String)
    case timeout(String)
    case disconnected(String)
    case failed(String)

    public var description: String {
        switch self {
        case .noCamera: return "no camera found"
        case .inUse(let what): return "camera in use by another process (\(what))"
        case .timeout(let what): return "camera timed out (\(what))"
        case .disconnected(let what): return "camera disconnected (\(what))"
        case .failed(let what): return "camera failed (\(what))"
        }
    }
}

/// A camera: lenses, a preview stream, full-resolution stills, controls. The simulated twin
/// (`SimulatedCamera`) and the libcamera backend implement it. Called from one thread (the
/// controller's); implementations that deliver frames from another thread keep them in
/// their own queue and hand them over here.
public protocol CameraSource: AnyObject {
    /// Sorted by 35 mm-equivalent focal length, widest first.
    var lenses: [Lens] { get }
    /// Starts streaming `lens` with a preview at previewWidth × previewHeight.
    func start(lens: Int, previewWidth: Int, previewHeight: Int) throws
    /// Stops streaming; safe to call when stopped.
    func stop()
    func setControls(_ controls: CameraControls)
    /// Waits up to `timeout` seconds for the next preview frame and writes it into `frame`
    /// (already the preview size; no allocation). Throws `.timeout` when none came.
    func nextPreviewFrame(into frame: inout RGBImage, timeout: Double) throws -> FrameMetadata
    /// A full-resolution still of the current lens, without stopping the preview for long:
    /// exposed and copied now, converted to RGB later (`CapturedStill.image()`). `notBefore`
    /// (monotonic ns; 0: none) asks for a frame exposed no earlier than that moment: a caller
    /// that knows when the shot is due (a countdown's end) starts early — a camera that must be
    /// reconfigured for a still does that first — and gets the first frame from then on.
    func captureStill(notBefore: UInt64) throws -> CapturedStill
    /// Whether a still can be taken without stopping the stream (a still stream beside the
    /// viewfinder): what taking one while recording needs.
    var stillsWhileStreaming: Bool { get }
    /// Whether its stills come with the sensor's raw frame (`CapturedStill.raw`).
    var offersRawStills: Bool { get }
}

extension CameraSource {
    /// A still now.
    public func captureStill() throws -> CapturedStill { try captureStill(notBefore: 0) }
}

/// A still as the sensor gave it, before its conversion to RGB. Taking it costs the exposure
/// and a copy of the frame; the conversion (a 12 MP frame takes tens of milliseconds, much
/// more on a Pi Zero) runs when `image()` is called — on the capture queue — so the shutter is
/// ready for the next photo at once.
public struct CapturedStill: Sendable {
    public let metadata: FrameMetadata
    public let width: Int
    public let height: Int
    /// Where frames before a `notBefore` moment were skipped: the time between the last one
    /// skipped and this one (the still stream's frame period); 0 when none was skipped.
    public var skippedFramePeriodNs: UInt64 = 0
    /// A camera reconfigured for the still: from the call to the still stream's first frame
    /// (its sensor timestamp), whether or not that frame was the still; 0 when the still came
    /// from a stream that was already running.
    public var startDelayNs: UInt64 = 0
    /// The sensor's raw frame of this still, given its RGB conversion (the simulated sensor
    /// makes its mosaic of it; a real one hands over the buffer it kept); nil without one.
    public var raw: (@Sendable (RGBImage) -> BayerMosaic)? = nil
    private let convert: @Sendable () throws -> RGBImage

    public init(metadata: FrameMetadata, width: Int, height: Int, convert: @escaping @Sendable () throws -> RGBImage) {
        self.metadata = metadata
        self.width = width
        self.height = height
        self.convert = convert
    }

    /// An already converted still.
    public init(image: RGBImage, metadata: FrameMetadata) {
        self.init(metadata: metadata, width: image.width, height: image.height) { image }
    }

    /// The full-resolution RGB still.
    public func image() throws -> RGBImage { try convert() }
}

/// A camera that can be told to fail on purpose — the simulated one. The daemon's `simulate`
/// request (and the tests) reach faults through this, never through the concrete type.
public protocol FaultInjectable: AnyObject, Sendable {
    /// Shows `fault` from now on (callable from any thread).
    func inject(_ fault: SimulatedFault)
}
