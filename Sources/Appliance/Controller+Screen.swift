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

/// What the screen shows each frame: the graded preview (or the booth's review) and the overlay.
extension Controller {
    func previewFrame() {
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

    func overlayModel() -> OverlayModel {
        if let session = state.session { return boothOverlay(session) }
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

    func setBanner(_ text: String) {
        banner = (text, .after(seconds: 3))
    }
}
