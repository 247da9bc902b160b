import Controls
import FilmCore
import Foundation
import System
import Raster

/// A fault the simulated camera can be told to show (tests, and the daemon's `simulate`
/// socket command).
public enum SimulatedFault: Sendable, Equatable {
    /// Clears every fault: frames flow again.
    case none
    /// No frames for this many seconds: `nextPreviewFrame` throws `.timeout` when its wait
    /// ends inside the stall, then frames resume (the sequence jumps over the frames missed).
    case stall(seconds: Double)
    /// The next `count` calls of `nextPreviewFrame` / `captureStill` wait their whole timeout
    /// and throw `.timeout`.
    case timeoutNext(count: Int)
    /// The camera is unplugged: every call throws `.disconnected` until `inject(.none)`.
    case disappear
}

extension SimulatedFault: CustomStringConvertible {
    /// Parses the words of the daemon's `simulate` command: `none`, `stall SECONDS`,
    /// `timeout COUNT` (default 1) or `disappear`. Nil for anything else.
    public init?(command: String) {
        let words = command.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { $0.lowercased() }
        switch (words.first, words.count) {
        case ("none", 1): self = .none
        case ("disappear", 1): self = .disappear
        case ("stall", 2):
            guard let seconds = Double(words[1]), seconds.isFinite, seconds >= 0 else { return nil }
            self = .stall(seconds: seconds)
        case ("timeout", 1): self = .timeoutNext(count: 1)
        case ("timeout", 2):
            guard let count = Int(words[1]), count >= 0 else { return nil }
            self = .timeoutNext(count: count)
        default: return nil
        }
    }

    /// The command that gives this fault back ("stall 2.5").
    public var description: String {
        switch self {
        case .none: return "none"
        case .stall(let seconds): return "stall \(seconds)"
        case .timeoutNext(let count): return "timeout \(count)"
        case .disappear: return "disappear"
        }
    }
}

/// What the simulated camera looks at.
public enum SimulatedScene: Sendable {
    /// The moving synthetic scene (sky, sun, cloud, textured ground, coloured shapes).
    case synthetic
    /// These photos, one after another.
    case photos([RGBImage])
    /// The JPEG, PNG and HEIC files of a directory (sorted by name), read with `loader` at the
    /// first `start()`. Files the loader rejects are skipped and listed in `warnings`.
    case photosDirectory(String, loader: @Sendable (String) throws -> RGBImage)
}

/// The camera's simulated twin, for developing on a laptop, CI and demos: three lenses
/// (13, 26 and 77 mm-equivalent) looking at a moving synthetic scene or at photos, paced at a
/// steady frame rate, with simulated auto-exposure, autofocus and injectable faults.
///
/// Exposure: the scene is linear light scaled by a light level (`setSceneLight`, times a slow
/// ±15 % drift as clouds pass). Auto-exposure aims for exposureTime × analogueGain =
/// 1/250 s × 2^ev ÷ light (so EV 0 in reference light shows the scene as designed), converging
/// over a few frames (`aeState` `.searching`, then `.converged`); shutter first up to 1/100 s,
/// then gain to 2, then shutter up to the frame time, then gain up to 16. Pixels are the
/// scene radiance × light × exposure ÷ (1/250 s), so +1 EV doubles the linear light.
///
/// AE lock (`CameraControls.aeLocked`) holds exposureTime and analogueGain exactly: they no
/// longer follow the scene light, and EV changes are ignored until the lock is released (as on
/// libcamera, where EV is an auto-exposure target); `aeState` is `.locked`.
///
/// Autofocus: after `start()` and after every change of the focus point, `afState` is
/// `.scanning` for `afScanFrames` frames while `lensPosition` (dioptres) moves to the depth of
/// what is under the focus point (sky: 0, near ground: up to ~4), then `.focused`. While
/// `afLocked`, the lens holds still and focus-point changes are ignored (`.locked`); the lens
/// refocuses on release if the point changed meanwhile.
///
/// Thread safety: every mutable field lives in one lock; `inject` and `setSceneLight` may be
/// called from any thread while the controller's thread waits for frames (waits happen
/// outside the lock).
public final class SimulatedCamera: CameraSource, FaultInjectable, Sendable {
    /// A monotonic clock in nanoseconds and a way to wait on it; tests inject a manual one.
    public struct Clock: Sendable {
        public var now: @Sendable () -> UInt64
        public var sleep: @Sendable (UInt64) -> Void

        public init(now: @escaping @Sendable () -> UInt64, sleep: @escaping @Sendable (UInt64) -> Void) {
            self.now = now
            self.sleep = sleep
        }

        /// The monotonic clock and a thread sleep.
        public static let system = Clock(
            now: { MonotonicClock.now() },
            sleep: { ns in
                var left = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
                var request = left
                while nanosleep(&request, &left) != 0 && errno == EINTR { request = left }
            })
    }

    /// The file name extensions `photosDirectory` reads (lowercase).
    public static let photoExtensions: Set<String> = ["jpg", "jpeg", "png", "heic", "heif"]
    /// The exposure × gain that shows the scene as designed at EV 0 in reference light.
    public static let referenceExposure = 1.0 / 250
    /// Frames the autofocus scans before it is focused.
    public static let afScanFrames: UInt64 = 8

    public let lenses: [Lens]
    public let framesPerSecond: Double
    /// How long `captureStill` waits out a stall before it throws `.timeout`.
    public let stillTimeout: Double
    /// Seconds each photo is shown in photo mode.
    public let photoSeconds: Double

    private let source: SimulatedScene
    private let clock: Clock
    private let state: Locked<State>

    /// - Parameters:
    ///   - stillWidth, stillHeight: full still resolution (all lenses).
    ///   - framesPerSecond: preview frame rate.
    ///   - scene: what the camera looks at.
    ///   - photoSeconds: how long each photo is shown.
    ///   - stillTimeout: how long a still waits out a stall.
    ///   - clock: the monotonic clock frames are paced by.
    public init(stillWidth: Int = 4056, stillHeight: Int = 3040, framesPerSecond: Double = 30,
                scene: SimulatedScene = .synthetic, photoSeconds: Double = 5, stillTimeout: Double = 1,
                clock: Clock = .system) {
        let lensTable: [(Double, Double)] = [(13, 2.2), (26, 4.4), (77, 13)]
        lenses = lensTable.map { eq, real in
            Lens(id: "sim-\(Int(eq))mm", sensorModel: "sim", focalLength: real, focalLength35mm: eq,
                 stillWidth: max(stillWidth, 1), stillHeight: max(stillHeight, 1))
        }.sorted { $0.focalLength35mm < $1.focalLength35mm }
        self.framesPerSecond = framesPerSecond > 0 ? framesPerSecond : 30
        self.source = scene
        self.photoSeconds = photoSeconds > 0 ? photoSeconds : 5
        self.stillTimeout = max(stillTimeout, 0)
        self.clock = clock
        var initial = State()
        if case .photos(let photos) = scene { initial.photos = photos }
        state = Locked(initial)
    }

    /// The synthetic scene, or the photos of `photosDirectory` read with `photoLoader` when
    /// it is given (the Camera module reads no image files itself).
    public convenience init(stillWidth: Int = 4056, stillHeight: Int = 3040, framesPerSecond: Double = 30,
                            photosDirectory: String?, photoLoader: @escaping @Sendable (String) throws -> RGBImage,
                            clock: Clock = .system) {
        let scene: SimulatedScene = photosDirectory.map { .photosDirectory($0, loader: photoLoader) } ?? .synthetic
        self.init(stillWidth: stillWidth, stillHeight: stillHeight, framesPerSecond: framesPerSecond, scene: scene, clock: clock)
    }

    // MARK: State

    private struct State: Sendable {
        var started = false
        var lens = 0
        var grid: SamplingGrid? = nil
        var controls = CameraControls()

        // Faults.
        var stalledUntil: UInt64 = 0
        var timeoutsLeft = 0
        var disappeared = false

        // Frame timing.
        var startTime: UInt64 = 0
        var lastSequence: UInt64? = nil
        var metadata = FrameMetadata(lensPosition: 0)

        // Scene.
        var scene = SyntheticScene()
        var sceneLight = 1.0
        var photos: [RGBImage]? = nil
        /// Each photo cropped and scaled for the current lens and preview size.
        var photoPreviews: [[UInt8]] = []
        var warnings: [String] = []

        // Auto-exposure: log2(exposureTime × gain) the AE is at.
        var logExposure = log2(1.0 / 60)
        // Autofocus.
        var focusPending = true
        var afFrom = 0.0
        var afTarget = 0.0
        var afScanStart: UInt64 = 0
        var afScanEnd: UInt64 = 0
    }

    /// Photos loaded from the directory that could not be read, one line each ("FILE: why").
    public var warnings: [String] { state.withLock { $0.warnings } }

    /// The scene's light level (1 = reference daylight; 0.25 = two stops darker). Auto-exposure
    /// follows it unless locked.
    public func setSceneLight(_ level: Double) {
        state.withLock { $0.sceneLight = max(level, 1e-6) }
    }

    /// Shows `fault` from now on; see `SimulatedFault`. Callable from any thread.
    public func inject(_ fault: SimulatedFault) {
        let now = clock.now()
        state.withLock { s in
            switch fault {
            case .none:
                s.stalledUntil = 0
                s.timeoutsLeft = 0
                s.disappeared = false
            case .stall(let seconds):
                s.stalledUntil = now + Self.nanoseconds(seconds)
            case .timeoutNext(let count):
                s.timeoutsLeft = max(count, 0)
            case .disappear:
                s.disappeared = true
            }
        }
    }

    // MARK: CameraSource

    public func start(lens: Int, previewWidth: Int, previewHeight: Int) throws {
        guard lenses.indices.contains(lens) else {
            throw CameraError.failed("starting lens \(lens): the simulated camera has lenses 0…\(lenses.count - 1)")
        }
        guard previewWidth > 0, previewHeight > 0 else {
            throw CameraError.failed("starting lens \(lens): preview size \(previewWidth)×\(previewHeight) is not positive")
        }
        if state.withLock({ $0.disappeared }) { throw CameraError.disconnected("starting lens \(lens)") }
        let photos = try loadPhotos()
        let zoom = lenses[lens].focalLength35mm / lenses[0].focalLength35mm
        let grid = SamplingGrid(width: previewWidth, height: previewHeight, halfWidth: 1 / zoom)
        let previews = (photos ?? []).map { photo in
            PhotoFraming.resample(photo, crop: PhotoFraming.crop(sourceWidth: photo.width, sourceHeight: photo.height,
                                                                 outputWidth: previewWidth, outputHeight: previewHeight, zoom: zoom),
                                  outputWidth: previewWidth, outputHeight: previewHeight)
        }
        let now = clock.now()
        state.withLock { s in
            s.started = true
            s.lens = lens
            s.grid = grid
            s.photoPreviews = previews
            s.startTime = now
            s.lastSequence = nil
            s.focusPending = true
        }
    }

    public func stop() {
        state.withLock { s in
            s.started = false
            s.grid = nil
            s.photoPreviews = []
        }
    }

    public func setControls(_ controls: CameraControls) {
        state.withLock { s in
            let old = s.controls
            s.controls = controls
            if controls.focusPoint != old.focusPoint { s.focusPending = true }
        }
    }

    public func nextPreviewFrame(into frame: inout RGBImage, timeout: Double) throws -> FrameMetadata {
        let deadline = clock.now() + Self.nanoseconds(timeout)
        while true {
            let now = clock.now()
            let plan: Plan = try state.withLock { s in
                guard s.started else { throw CameraError.failed("waiting for a preview frame: not started") }
                if s.disappeared { throw CameraError.disconnected("waiting for a preview frame") }
                if s.timeoutsLeft > 0 {
                    s.timeoutsLeft -= 1
                    return .timeOut(after: deadline > now ? deadline - now : 0)
                }
                let due = dueTime(s, now: now)
                if due > now {
                    return due > deadline ? .timeOut(after: deadline > now ? deadline - now : 0) : .wait(due - now)
                }
                guard let grid = s.grid else { throw CameraError.failed("waiting for a preview frame: not started") }
                guard frame.width == grid.width, frame.height == grid.height else {
                    throw CameraError.failed("preview frame buffer is \(frame.width)×\(frame.height), the preview is \(grid.width)×\(grid.height)")
                }
                let metadata = advance(&s, to: currentSequence(s, now: now))
                let gain = pixelGain(s)
                frame.pixels.withUnsafeMutableBufferPointer { out in
                    if s.photoPreviews.isEmpty {
                        s.scene.render(into: out, grid: grid, gain: gain)
                    } else {
                        Self.applyGain(gain, to: s.photoPreviews[photoIndex(s, metadata.sequence)], into: out)
                    }
                }
                return .frame(metadata)
            }
            switch plan {
            case .frame(let metadata):
                return metadata
            case .wait(let ns):
                clock.sleep(ns)
            case .timeOut(let ns):
                if ns > 0 { clock.sleep(ns) }
                throw CameraError.timeout("no preview frame within \(timeout) s")
            }
        }
    }

    /// The simulated sensor renders stills beside its preview.
    public var stillsWhileStreaming: Bool { true }

    /// Its stills come with a Bayer mosaic of the same scene (`BayerMosaic.simulatedSensor`).
    public var offersRawStills: Bool { true }

    /// How many of its latest frames the simulated still stream keeps, as a sensor's buffers do:
    /// a still asked for a moment already past is taken from them.
    public static let bufferedStills: UInt64 = 4

    public func captureStill(notBefore: UInt64) throws -> CapturedStill {
        // The simulated sensor streams stills beside its preview. Without a moment: the frame of
        // now (the preview's last). With one: the first frame exposed then or later, whatever the
        // caller's own delay, as long as it is among the last `bufferedStills` (else the oldest
        // kept), once the sensor has made it.
        let start = clock.now()
        if notBefore > start { clock.sleep(notBefore - start) }
        let deadline = clock.now() + Self.nanoseconds(stillTimeout)
        while true {
            let now = clock.now()
            let plan: StillPlan = try state.withLock { s in
                guard s.started else { throw CameraError.failed("capturing a still: not started") }
                if s.disappeared { throw CameraError.disconnected("capturing a still") }
                if s.timeoutsLeft > 0 {
                    s.timeoutsLeft -= 1
                    return .timeOut(after: deadline > now ? deadline - now : 0)
                }
                if s.stalledUntil > now {
                    return s.stalledUntil > deadline ? .timeOut(after: deadline > now ? deadline - now : 0) : .wait(s.stalledUntil - now)
                }
                if s.lastSequence == nil { _ = advance(&s, to: 0) }
                var sequence = s.metadata.sequence
                if notBefore != 0 {
                    let wanted = notBefore > s.startTime ? (notBefore - s.startTime + framePeriod - 1) / framePeriod : 0
                    let made = sensorSequence(s, now: now)
                    if wanted > made { return .wait(s.startTime + wanted * framePeriod - now) }
                    sequence = max(wanted, made >= Self.bufferedStills ? made - (Self.bufferedStills - 1) : 0)
                }
                // The frame's moment on a copy of the state (the scene is a function of time):
                // the preview's own frames, auto-exposure and autofocus go on undisturbed.
                var frame = s
                let metadata = sequence == s.metadata.sequence ? s.metadata : advance(&frame, to: sequence)
                var photo: RGBImage? = nil
                if let photos = frame.photos, !photos.isEmpty { photo = photos[photoIndex(frame, sequence)] }
                return .capture(scene: frame.scene, photo: photo, gain: pixelGain(frame), lens: frame.lens, metadata: metadata)
            }
            switch plan {
            case .capture(let scene, let photo, let gain, let lens, let metadata):
                // The moment is fixed now (scene, gain, lens); the pixels are made when the
                // still is converted, as a sensor's raw frame is.
                let size = lenses[lens]
                var still = CapturedStill(metadata: metadata, width: size.stillWidth, height: size.stillHeight) { [self] in
                    renderStill(scene: scene, photo: photo, gain: gain, lens: lens)
                }
                still.raw = { BayerMosaic.simulatedSensor(of: $0) }
                return still
            case .wait(let ns):
                clock.sleep(ns)
            case .timeOut(let ns):
                if ns > 0 { clock.sleep(ns) }
                throw CameraError.timeout("no still within \(stillTimeout) s")
            }
        }
    }

    // MARK: Internals

    private enum Plan {
        case frame(FrameMetadata)
        case wait(UInt64)
        case timeOut(after: UInt64)
    }

    private enum StillPlan {
        case capture(scene: SyntheticScene, photo: RGBImage?, gain: Float, lens: Int, metadata: FrameMetadata)
        case wait(UInt64)
        case timeOut(after: UInt64)
    }

    private var framePeriod: UInt64 { max(Self.nanoseconds(1 / framesPerSecond), 1) }

    private static func nanoseconds(_ seconds: Double) -> UInt64 {
        seconds > 0 ? UInt64(min(seconds, 1e9) * 1e9) : 0
    }

    /// The sequence number of the newest frame the sensor has produced by `now`.
    private func sensorSequence(_ s: State, now: UInt64) -> UInt64 {
        now > s.startTime ? (now - s.startTime) / framePeriod : 0
    }

    /// The next frame to deliver at `now`: the newest one (late callers skip frames, they are
    /// never queued), but never one delivered before.
    private func currentSequence(_ s: State, now: UInt64) -> UInt64 {
        let next = s.lastSequence.map { $0 + 1 } ?? 0
        return max(next, sensorSequence(s, now: now))
    }

    /// When the next frame can be delivered.
    private func dueTime(_ s: State, now: UInt64) -> UInt64 {
        let next = s.lastSequence.map { $0 + 1 } ?? 0
        var due = s.startTime + next * framePeriod
        if s.stalledUntil > due {
            // The first frame the sensor produces after the stall.
            let after = (s.stalledUntil - s.startTime + framePeriod - 1) / framePeriod
            due = s.startTime + max(after, next) * framePeriod
        }
        return due
    }

    /// Moves the scene, auto-exposure and autofocus on to frame `sequence`.
    private func advance(_ s: inout State, to sequence: UInt64) -> FrameMetadata {
        let steps = s.lastSequence.map { sequence > $0 ? Int(min(sequence - $0, 1000)) : 0 } ?? 1
        s.lastSequence = sequence
        let time = Double(sequence) / framesPerSecond
        s.scene.update(time: time)
        var m = s.metadata
        m.sequence = sequence
        m.timestampNs = s.startTime + sequence * framePeriod

        // Auto-exposure.
        let maxTime = min(max(1 / framesPerSecond, 1.0 / 1000), 1.0 / 15)
        let minLog = log2(1.0 / 20000), maxLog = log2(maxTime * 16)
        if s.controls.aeLocked {
            m.aeState = .locked
        } else {
            let light = s.sceneLight * naturalLight(time: time)
            let target = min(max(log2(Self.referenceExposure) + s.controls.ev - log2(light), minLog), maxLog)
            let remaining = (target - s.logExposure) * pow(0.4, Double(steps))
            if abs(remaining) < 1.0 / 32 {
                s.logExposure = target
                m.aeState = .converged
            } else {
                s.logExposure = target - remaining
                m.aeState = .searching
            }
            (m.exposureTime, m.analogueGain) = Self.split(exposure: exp2(s.logExposure), maxTime: maxTime)
        }

        // Autofocus.
        if s.controls.afLocked {
            m.afState = .locked
        } else {
            if s.focusPending {
                s.focusPending = false
                let point = s.controls.focusPoint ?? SIMD2(0.5, 0.5)
                if s.photos != nil {
                    // Photos have no depth: lower in the frame is nearer.
                    s.afTarget = 0.5 + 2 * min(max(point.y, 0), 1)
                } else if let grid = s.grid {
                    let (u, v) = grid.scenePoint(point)
                    s.afTarget = s.scene.depth(u: u, v: v)
                }
                s.afFrom = m.lensPosition ?? 0
                s.afScanStart = sequence
                s.afScanEnd = sequence + Self.afScanFrames
            }
            if sequence >= s.afScanEnd {
                m.lensPosition = s.afTarget
                m.afState = .focused
            } else {
                let t = Double(sequence > s.afScanStart ? sequence - s.afScanStart : 0) / Double(Self.afScanFrames)
                m.lensPosition = s.afFrom + (s.afTarget - s.afFrom) * t
                m.afState = .scanning
            }
        }
        s.metadata = m
        return m
    }

    /// Slow ±15 % changes of the light, as clouds pass (a 30 s cycle).
    private func naturalLight(time: Double) -> Double {
        1 + 0.15 * sin(2 * Double.pi * time / 30)
    }

    /// Linear factor from scene radiance to pixel value for the current light and exposure.
    private func pixelGain(_ s: State) -> Float {
        let time = Double(s.metadata.sequence) / framesPerSecond
        let light = s.sceneLight * naturalLight(time: time)
        return Float(light * s.metadata.exposureTime * s.metadata.analogueGain / Self.referenceExposure)
    }

    /// Shutter first up to 1/100 s, then gain up to 2, then shutter up to `maxTime`, then gain up to 16.
    static func split(exposure e: Double, maxTime: Double) -> (time: Double, gain: Double) {
        let knee = min(1.0 / 100, maxTime)
        if e <= knee { return (max(e, 1.0 / 20000), 1) }
        if e <= knee * 2 { return (knee, e / knee) }
        if e <= maxTime * 2 { return (e / 2, 2) }
        return (maxTime, min(e / maxTime, 16))
    }

    private func photoIndex(_ s: State, _ sequence: UInt64) -> Int {
        let count = max(s.photos?.count ?? 1, 1)
        let perPhoto = max(UInt64(photoSeconds * framesPerSecond), 1)
        return Int((sequence / perPhoto) % UInt64(count))
    }

    /// out = sRGB(linear(src) × gain), through a 256-entry table built on the stack.
    private static func applyGain(_ gain: Float, to src: [UInt8], into out: UnsafeMutableBufferPointer<UInt8>) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { table in
            SRGBTables.decode.withUnsafeBufferPointer { dec in
                SRGBTables.encode.withUnsafeBufferPointer { enc in
                    for i in 0..<256 {
                        let v = min(dec[i] * gain, 1)
                        table[i] = enc[Int(v * 4095 + 0.5)]
                    }
                }
            }
            src.withUnsafeBufferPointer { s in
                for i in 0..<min(s.count, out.count) { out[i] = table[Int(s[i])] }
            }
        }
    }

    private func renderStill(scene: SyntheticScene, photo: RGBImage?, gain: Float, lens: Int) -> RGBImage {
        let width = lenses[lens].stillWidth, height = lenses[lens].stillHeight
        let zoom = lenses[lens].focalLength35mm / lenses[0].focalLength35mm
        var image = RGBImage(width: width, height: height)
        if let photo {
            let crop = PhotoFraming.crop(sourceWidth: photo.width, sourceHeight: photo.height,
                                         outputWidth: width, outputHeight: height, zoom: zoom)
            let base = PhotoFraming.resample(photo, crop: crop, outputWidth: width, outputHeight: height)
            image.pixels.withUnsafeMutableBufferPointer { Self.applyGain(gain, to: base, into: $0) }
        } else {
            let grid = SamplingGrid(width: width, height: height, halfWidth: 1 / zoom)
            image.pixels.withUnsafeMutableBufferPointer { scene.render(into: $0, grid: grid, gain: gain) }
        }
        return image
    }

    /// Reads the photos directory at the first start; nil for the synthetic scene.
    private func loadPhotos() throws -> [RGBImage]? {
        if let loaded = state.withLock({ $0.photos }) {
            guard !loaded.isEmpty else { throw CameraError.failed("starting the simulated camera: the photo list is empty") }
            return loaded
        }
        guard case .photosDirectory(let directory, let loader) = source else { return nil }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw CameraError.failed("reading photos directory \(directory): \(error.localizedDescription)")
        }
        let files = names.filter { Self.photoExtensions.contains(($0 as NSString).pathExtension.lowercased()) }.sorted()
        var photos: [RGBImage] = []
        var warnings: [String] = []
        for name in files {
            let path = (directory as NSString).appendingPathComponent(name)
            do {
                photos.append(try loader(path))
            } catch {
                warnings.append("\(path): \(error)")
            }
        }
        guard !photos.isEmpty else {
            let why = files.isEmpty ? "no JPEG, PNG or HEIC files" : "none of its \(files.count) photos could be read"
            state.withLock { $0.warnings = warnings }
            throw CameraError.failed("reading photos directory \(directory): \(why)")
        }
        state.withLock { s in
            s.photos = photos
            s.warnings = warnings
        }
        return photos
    }
}
