import Camera
import FilmCore
import System
import Raster

/// Keeps the camera streaming: starts it with the current lens, preview size and controls,
/// restarts it when frames stop (three quick attempts, then every `retryDelay` seconds with
/// "No camera" on screen), and says how it is doing. Lives on the controller's thread.
final class CameraSupervisor {
    let camera: CameraSource
    /// No frame for this long: the camera is restarted.
    static let frameTimeout: Double = 2
    static let maxQuickRestarts = 3
    static let retryDelay: Double = 10

    private(set) var running = false
    /// Why the camera is down or was last restarted; nil while frames flow.
    private(set) var error: String?
    private(set) var restarts = 0
    private var nextAttempt = Deadline(nanoseconds: 0)
    private var lastFrameAt: UInt64 = 0
    /// When the camera last delivered a frame (0: not since it started).
    private var frameDeliveredAt: UInt64 = 0
    private(set) var lastMetadata = FrameMetadata()

    private var lens: Int
    private var previewSize: (width: Int, height: Int)
    private var controls: CameraControls

    init(camera: CameraSource, lens: Int, previewWidth: Int, previewHeight: Int, controls: CameraControls) {
        self.camera = camera
        self.lens = lens
        previewSize = (previewWidth, previewHeight)
        self.controls = controls
    }

    var lenses: [Lens] { camera.lenses }
    var currentLens: Lens? { camera.lenses.indices.contains(lens) ? camera.lenses[lens] : nil }

    /// Frames arrived within the last second.
    var isHealthy: Bool {
        running && frameDeliveredAt > 0 && MonotonicClock.now() - frameDeliveredAt < 1_000_000_000
    }

    /// One line for status: "ok", the reason it is down, or "waiting for frames".
    var statusText: String { isHealthy ? "ok" : (error ?? "waiting for frames") }

    /// What the screen's banner should say, if anything.
    var banner: String? {
        guard let error, !running || restarts > 0 else { return nil }
        return "No camera: \(error)"
    }

    func start() {
        do {
            try camera.start(lens: lens, previewWidth: previewSize.width, previewHeight: previewSize.height)
            camera.setControls(controls)
            running = true
            lastFrameAt = MonotonicClock.now()
            frameDeliveredAt = 0
        } catch {
            running = false
            self.error = "\(error)"
            Log.error("cannot start the camera: \(error)")
        }
    }

    func stop() {
        camera.stop()
        running = false
    }

    /// Switches to another lens (stops one camera, starts the next).
    func switchLens(to index: Int) {
        lens = index
        stop()
        if let l = currentLens { Log.info("lens \(index): \(l.label)") }
        start()
    }

    /// Restarts the camera at a new preview size (the display changed).
    func resize(width: Int, height: Int) {
        previewSize = (width, height)
        guard running else { return }
        stop()
        start()
    }

    func setControls(_ c: CameraControls) {
        controls = c
        camera.setControls(c)
    }

    enum FrameResult {
        /// A new frame is in the buffer.
        case frame
        /// None yet (the camera is running; the wait was short).
        case waiting
        /// The camera is down; the caller shows the screen without it.
        case down
    }

    /// Waits briefly for the next preview frame into `buffer`; restarts the camera when frames
    /// have stopped, retries a camera that is down when it is time.
    func nextFrame(into buffer: inout RGBImage) -> FrameResult {
        guard running else {
            if nextAttempt.hasPassed {
                start()
                if !running { nextAttempt = .after(seconds: Self.retryDelay) }
            }
            return running ? .waiting : .down
        }
        do {
            lastMetadata = try camera.nextPreviewFrame(into: &buffer, timeout: 0.1)
            lastFrameAt = MonotonicClock.now()
            frameDeliveredAt = lastFrameAt
            if error != nil { Log.info("camera is back: frames are flowing") }
            restarts = 0
            error = nil
            return .frame
        } catch CameraError.timeout {
            if Double(MonotonicClock.now() - lastFrameAt) / 1e9 >= Self.frameTimeout {
                restart(reason: "no frame for \(Int(Self.frameTimeout)) s")
            }
            return .waiting
        } catch {
            restart(reason: "\(error)")
            return .waiting
        }
    }

    private func restart(reason: String) {
        stop()
        restarts += 1
        error = reason
        if restarts <= Self.maxQuickRestarts {
            Log.warning("camera: \(reason); restarting (attempt \(restarts) of \(Self.maxQuickRestarts))")
            nextAttempt = Deadline(nanoseconds: 0)
        } else {
            Log.error("camera: \(reason); retrying every \(Int(Self.retryDelay)) s")
            nextAttempt = .after(seconds: Self.retryDelay)
        }
    }

    /// A full-resolution still of the current lens, exposed no earlier than `notBefore` (0: now).
    func captureStill(notBefore: UInt64 = 0) throws -> CapturedStill {
        try camera.captureStill(notBefore: notBefore)
    }
}
