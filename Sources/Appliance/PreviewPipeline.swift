import Canvas
import Controls
import Dispatch
import Display
import FilmCore
import Foundation
import System
import Video
import Viewfinder
import WebGallery
import Recording
import Raster

/// The live preview from the camera's frame to the screen: the buffers (allocated once per
/// size), the film engine on every core, the on-screen interface, and the display itself —
/// including moving onto a display that appears while headless and falling back to headless
/// when one fails. Looks are compiled in the background and swapped in between frames.
///
/// Frames are graded at the display's size, or — for video — at the clip's size (the camera
/// then delivers that size): the graded frame goes to the recorder (when a buffer is given) and
/// is shrunk onto the screen (area-averaged, letterboxed) under the interface, so the screen
/// shows exactly what is recorded. Lives on the controller's thread; nothing here allocates per
/// frame.
final class PreviewPipeline {
    private(set) var display: DisplaySink
    /// Looks for a display that has appeared (nil when none was asked for).
    private let findDisplay: (() -> (display: DisplaySink, inputs: [InputSource])?)?
    private var nextDisplayProbe = Deadline(nanoseconds: 0)
    /// How often a headless preview looks for a display that was asked for.
    static let displayProbeInterval: Double = 2

    private var cameraFrame: RGBImage
    /// Video: the graded frame when it goes to no recorder; nil while grading at display size.
    private var graded: RGBImage?
    private var downscaler: AreaDownscaler?
    /// Draws the unlicensed watermark into clip frames (at the grade size; the model never
    /// changes, so redrawing allocates nothing).
    private var clipMarker: OverlayRenderer?
    private let watermarkOnly: OverlayModel = {
        var m = OverlayModel()
        m.watermark = true
        return m
    }()
    private(set) var composed: RGBImage
    /// The web's live preview: offered the screen's picture while someone watches.
    var live: LiveFrames?
    private var renderer: FilmRenderer?
    private var overlay: OverlayRenderer
    private(set) var grainClock = GrainClock()
    private let threads = ProcessInfo.processInfo.activeProcessorCount
    private let looks = LookCompiler()

    init(display: DisplaySink, findDisplay: (() -> (display: DisplaySink, inputs: [InputSource])?)?) {
        self.display = display
        self.findDisplay = findDisplay
        cameraFrame = RGBImage(width: display.width, height: display.height)
        composed = RGBImage(width: display.width, height: display.height)
        overlay = OverlayRenderer(width: display.width, height: display.height)
    }

    /// The display's size.
    var width: Int { composed.width }
    var height: Int { composed.height }
    /// The size frames are graded at, which the camera must deliver.
    var gradeWidth: Int { cameraFrame.width }
    var gradeHeight: Int { cameraFrame.height }

    /// Grades at `size` (a clip's) from now on, or at the display's size (nil). Returns whether
    /// the size changed (the camera must then restart at it).
    func grade(at size: (width: Int, height: Int)?) -> Bool {
        let target = size ?? (composed.width, composed.height)
        guard target.width != cameraFrame.width || target.height != cameraFrame.height else { return false }
        cameraFrame = RGBImage(width: target.width, height: target.height)
        if size != nil {
            graded = RGBImage(width: target.width, height: target.height)
            downscaler = AreaDownscaler(sourceWidth: target.width, sourceHeight: target.height,
                                        width: composed.width, height: composed.height)
            clipMarker = OverlayRenderer(width: target.width, height: target.height)
        } else {
            graded = nil
            downscaler = nil
            clipMarker = nil
        }
        if let look = renderer?.look { renderer = FilmRenderer(look: look, width: target.width, height: target.height) }
        return true
    }

    /// The id of the look frames are graded with now (nil before the first is compiled).
    var lookInUse: String? { renderer?.look.preset.id }

    /// Compiles `preset` in the background; the preview keeps the current look meanwhile.
    /// `again`: even if it is the look asked for last (its file was edited).
    func requestLook(_ preset: Preset, again: Bool = false) {
        lastRequested = preset
        looks.compile(preset, dateStamp: dateStamp, reusing: renderer?.look.grainTexture, again: again,
                      frameSize: (cameraFrame.width, cameraFrame.height))
    }

    /// The date imprint the preview shows (nil: none); a change recompiles the look.
    private(set) var dateStamp: String?
    private var lastRequested: Preset?

    func setDateStamp(_ text: String?) {
        guard text != dateStamp else { return }
        dateStamp = text
        if let lastRequested { requestLook(lastRequested, again: true) }
    }

    /// The buffer the camera writes the next preview frame into.
    func withCameraFrame<R>(_ body: (inout RGBImage) throws -> R) rethrows -> R {
        try body(&cameraFrame)
    }

    /// Camera frame → film engine (the next grain frame, at `grainRate`) → interface → display.
    /// While grading for video, the graded frame lands in `clip`'s buffer when one is given
    /// (it then goes to the recorder) and is shrunk onto the screen.
    /// A Pro look without a license (`model.watermark`) is watermarked in the clip as in photos.
    func render(intensity: Double, grainRate: Double, overlay model: OverlayModel, into clip: VideoFrame? = nil) {
        adoptCompiledLook()
        let grainFrame = grainClock.advance(rate: grainRate)
        var shown = model
        if let downscaler, graded != nil {
            if let clip, clip.image.width == cameraFrame.width, clip.image.height == cameraFrame.height {
                grade(into: &clip.image, grainFrame: grainFrame, intensity: intensity)
                if model.watermark {
                    clipMarker?.draw(watermarkOnly, on: &clip.image)
                    shown.watermark = false  // already in the picture
                }
                downscaler.shrink(clip.image, into: &composed)
            } else {
                grade(into: &graded!, grainFrame: grainFrame, intensity: intensity)
                downscaler.shrink(graded!, into: &composed)
            }
        } else {
            grade(into: &composed, grainFrame: grainFrame, intensity: intensity)
        }
        overlay.draw(shown, on: &composed)
        show()
    }

    /// The film engine over the camera frame into `target` (the grade size).
    private func grade(into target: inout RGBImage, grainFrame: UInt64, intensity: Double) {
        if let renderer {
            cameraFrame.pixels.withUnsafeBufferPointer { src in
                target.pixels.withUnsafeMutableBufferPointer { dst in
                    renderer.render(source: src.baseAddress!, destination: dst.baseAddress!, grainFrame: grainFrame,
                                    threads: threads, intensity: intensity)
                }
            }
        } else {
            target.pixels.withUnsafeMutableBufferPointer { dst in
                cameraFrame.pixels.withUnsafeBufferPointer { src in dst.baseAddress!.update(from: src.baseAddress!, count: src.count) }
            }
        }
    }

    /// A still picture (the photobooth's review: the developed photo at the screen's size)
    /// with the interface, instead of the camera's frame. False when its size is not the
    /// screen's (the display changed since it was made).
    func renderStill(_ picture: RGBImage, overlay model: OverlayModel) -> Bool {
        guard picture.width == composed.width, picture.height == composed.height else { return false }
        composed.pixels.withUnsafeMutableBufferPointer { dst in
            picture.pixels.withUnsafeBufferPointer { src in dst.baseAddress!.update(from: src.baseAddress!, count: src.count) }
        }
        overlay.draw(model, on: &composed)
        show()
        return true
    }

    /// A dark frame with the interface, while there is no camera.
    func renderWithoutCamera(overlay model: OverlayModel) {
        adoptCompiledLook()
        composed.pixels.withUnsafeMutableBufferPointer { $0.update(repeating: 16) }
        overlay.draw(model, on: &composed)
        show()
    }

    /// Frames put on the screen since start (status reports it; the preview's rate is its slope).
    private(set) var framesShown = 0

    private func show() {
        framesShown &+= 1
        if let live, live.wanted { live.offer(composed) }
        do { try display.show(composed) } catch {
            guard !(display is HeadlessDisplay),
                  let headless = try? HeadlessDisplay(width: composed.width, height: composed.height) else { return }
            Log.error("display \(display.name): \(error); continuing headless")
            display = headless
        }
    }

    /// While headless with a display asked for, looks (every 2 s) for one that has appeared
    /// and moves the preview onto it. Returns the input that came with it and whether the
    /// preview's size changed (the camera must then restart at the new size); nil otherwise.
    func lookForDisplay() -> (inputs: [InputSource], resized: Bool)? {
        guard display is HeadlessDisplay, let findDisplay, nextDisplayProbe.hasPassed else { return nil }
        nextDisplayProbe = .after(seconds: Self.displayProbeInterval)
        guard let found = findDisplay() else { return nil }
        Log.info("display: \(found.display.name) (\(found.display.width)×\(found.display.height)) found; preview resumed on it")
        display = found.display
        return (found.inputs, resize(width: found.display.width, height: found.display.height))
    }

    /// New buffers for another display size; true when the grade size changed with it (the
    /// camera must restart at it).
    private func resize(width: Int, height: Int) -> Bool {
        guard width != composed.width || height != composed.height else { return false }
        composed = RGBImage(width: width, height: height)
        overlay = OverlayRenderer(width: width, height: height)
        if graded != nil {
            downscaler = AreaDownscaler(sourceWidth: cameraFrame.width, sourceHeight: cameraFrame.height, width: width, height: height)
            return false
        }
        cameraFrame = RGBImage(width: width, height: height)
        if let look = renderer?.look { renderer = FilmRenderer(look: look, width: width, height: height) }
        return true
    }

    private func adoptCompiledLook() {
        if let look = looks.take() {
            renderer = FilmRenderer(look: look, width: cameraFrame.width, height: cameraFrame.height)
        }
    }
}

/// Compiles looks on a background queue, the newest request winning; the preview takes the
/// result between frames.
final class LookCompiler: Sendable {
    private let queue = DispatchQueue(label: "loopix.look", qos: .userInitiated)
    private struct State {
        var ready: FilmLook?
        /// The id asked for last; a compile that finishes for an older one is dropped.
        var wanted: String?
    }
    private let state = Locked(State())

    /// `frameSize`: the frames it will grade; their grain texture and date stamp are made here
    /// too, so that the preview thread never waits for them.
    func compile(_ preset: Preset, dateStamp: String? = nil, reusing texture: GrainTexture?, again: Bool = false,
                 frameSize: (width: Int, height: Int)) {
        let first = state.withLock { s -> Bool in
            guard again || s.wanted != preset.id else { return false }
            s.wanted = preset.id
            return true
        }
        guard first else { return }
        let state = self.state
        queue.async {
            let look = FilmLook(preset: preset, settings: RenderSettings(ev: 0, intensity: 1, dateStamp: dateStamp), reusing: texture)
            _ = look.grainTexture(scale: FrameWindow.whole(frameSize.width, frameSize.height).filmScale)
            _ = look.stampLight(frameWidth: frameSize.width, frameHeight: frameSize.height)
            state.withLock { s in
                if s.wanted == preset.id { s.ready = look }
            }
        }
    }

    /// The compiled look, once (nil until it is ready).
    func take() -> FilmLook? {
        state.withLock { s in
            defer { s.ready = nil }
            return s.ready
        }
    }
}
