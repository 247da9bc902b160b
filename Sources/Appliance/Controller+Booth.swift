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

/// The photobooth's effects: its shots (with the flash), the collage, the review, the prints,
/// and what its screen shows.
extension Controller {
    /// What the booth's screen shows: the idle screen (the look's name, "Press the button",
    /// the gallery's QR code), the countdown's numeral, "Developing…", or the review's QR code.
    func boothOverlay(_ booth: Booth) -> OverlayModel {
        var model = OverlayModel()
        model.watermark = watermarked
        switch booth.phase {
        case .attract:
            model.attractTitle = currentPreset.name
            model.attractLine = "Press the button"
            if let galleryCode {
                model.qrCode = galleryCode
                model.qrCaption = "All photos"
            }
        case .countdown(let shot, _):
            model.countdown = booth.countdownNumeral(now: MonotonicClock.now())
            if booth.settings.shots > 1 { model.prompt = "Photo \(shot) of \(booth.settings.shots)" }
        case .developing:
            model.prompt = "Developing\u{2026}"
        case .review:
            if let reviewCode {
                model.qrCode = reviewCode
                model.qrCaption = "Scan for your photo"
            }
            if booth.settings.print == .button, printQueue != nil {
                model.prompt = booth.printRequested ? "Printing\u{2026}" : "Press the button to print"
            }
        }
        if let text = supervisor.banner {
            model.banner = text
        } else if let b = banner, !b.until.hasPassed {
            model.banner = b.text
        } else if printQueue?.attention != nil {
            model.banner = "Printer needs attention"  // the reason: in the log and in status
        }
        return model
    }

    /// Carries out what the booth's session asks. A shot is taken as the shutter takes one (with
    /// the flash on for its exposure); what became of it goes back to the session as a command,
    /// which may ask for the next thing (the collage, the review).
    func carryOut(_ action: Booth.Action, _ result: inout CommandResult) {
        switch action {
        case .capture(_, let due):
            let now = MonotonicClock.now()
            lastTriggerLatencyMs = Double(now - min(due, now)) / 1e6
            // The flash is on for the exposure, which the camera makes within captureStill.
            setFlash(state.session?.flashWanted(exposing: true) ?? false)
            let shot = capture(keepCopy: true, notBefore: due)
            setFlash(state.flash)
            let next: CommandResult
            switch shot {
            case .success(let shot):
                if let offset = Self.exposureOffsetMs(shot.exposureNs, from: due) {
                    lastExposureOffsetMs = offset
                    if state.session?.taken.isEmpty == true { sessionExposureOffsetsMs = [] }
                    sessionExposureOffsetsMs.append((offset * 10).rounded() / 10)
                    lastBoothExposure = shot.exposureNs
                    if !supervisor.camera.stillsWhileStreaming,
                       let line = stillLead.learn(exposure: shot.exposureNs, due: due, startDelay: shot.startDelayNs,
                                                  skippedPeriod: shot.skippedFramePeriodNs) {
                        Log.info(line)
                    }
                }
                result.photoPath = result.photoPath ?? shot.path
                next = perform(.boothShotTaken(shot.path, now: MonotonicClock.now()))
            case .failure(let refusal):
                setBanner(refusal.message)
                boothCopies = [:]
                next = perform(.boothShotTaken(nil, now: MonotonicClock.now()))
            }
            result.photoPath = result.photoPath ?? next.photoPath
        case .compose(let paths):
            startCollage(paths)
        case .review(let path):
            showReview(path)
        case .print(let path):
            printPhoto(path)
        }
    }

    /// Puts the session's shots together on the booth's own queue and saves the collage as the
    /// next photo (in the photos' format); the result comes back as a report.
    func startCollage(_ paths: [String]) {
        let copies = paths.compactMap { boothCopies[$0] }
        // A printer takes JPEG: with printing on, the collage gets one beside its HEIC.
        let format = photoFormat(forBooth: true)
        let bytes = expectedBytes(format: format)
        let path: String
        do { path = try storage.reserve(bytes: bytes, extension: format.primaryExtension) } catch {
            Log.error("booth: no room for the collage: \(error)")
            reports.add(.composeFailed)
            return
        }
        let layout = config.booth.layout, template = boothTemplate, encoding = Self.encoding(config), preset = currentPreset.name
        let reports = self.reports, storage = self.storage
        let date = Date()
        collageQueue.async {
            defer { storage.release(bytes: bytes) }
            let dateText = ISO8601DateFormatter.string(from: date, timeZone: .current, formatOptions: [.withFullDate])
            let collage = template.map { BoothCollage.compose(copies, template: $0) }
                ?? BoothCollage.compose(copies, layout: layout, caption: "\(preset) - \(dateText)")
            let meta = PhotoMetadata(make: "Loopix", model: "Loopix photobooth", date: date, presetName: preset)
            do {
                try format.write(collage, to: path, metadata: meta, heic: encoding.heic, jpegQuality: encoding.jpegQuality)
                Log.info("booth: collage of \(copies.count) saved as \(path)")
                reports.add(.composed(path: path, copy: BoothCollage.shrink(collage, toFit: BoothCollage.shotWidth, BoothCollage.shotHeight)))
            } catch {
                Log.error("\(path): collage lost: \(error)")
                reports.add(.composeFailed)
            }
        }
    }

    /// The review screen: the developed photo (or collage) letterboxed to the screen, and the
    /// QR code of its gallery page when the gallery runs.
    func showReview(_ path: String) {
        defer { boothCopies = [:] }
        if config.booth.print == .auto { printPhoto(path) }
        guard let copy = boothCopies[path] else { return }
        reviewFrame = BoothCollage.letterbox(copy, width: pipeline.width, height: pipeline.height)
        let name = path.split(separator: "/").suffix(2).joined(separator: "/")
        reviewCode = webURL.flatMap { try? QRCode($0 + "photo/" + name) }
    }

    /// Hands a photo to CUPS: its JPEG (made beside the HEIC when printing is on), or the photo.
    func printPhoto(_ path: String) {
        guard let printQueue else { return }
        let jpeg = (path as NSString).deletingPathExtension + ".JPG"
        printQueue.print(FileManager.default.fileExists(atPath: jpeg) ? jpeg : path)
    }

    /// Drives the flash line when its state changes; a failure is logged once (the booth goes on
    /// without light).
    func setFlash(_ on: Bool) {
        guard let flash, on != flashIsOn else { return }
        do {
            try flash.set(on)
            flashIsOn = on
            flashFailed = false
        } catch {
            if !flashFailed { Log.error("booth: flash: \(error)") }
            flashFailed = true
        }
    }

    /// Looks at the gallery's address every 10 s (while a booth shows QR codes) and remakes
    /// the gallery's QR code when it changed.
    func refreshWebAddress() {
        guard state.booth, let webURLNow, nextWebAddressCheck.hasPassed else { return }
        nextWebAddressCheck = .after(seconds: 10)
        let url = webURLNow()
        guard url != webURL else { return }
        Log.info("web gallery now at \(url)")
        webURL = url
        galleryCode = try? QRCode(url)
    }
}
