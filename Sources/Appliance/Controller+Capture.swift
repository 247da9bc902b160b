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
import Raster

/// Taking a photo: its file and space reserved, the still grabbed, the job queued; what the
/// capture queue reports back, and the scripts and hooks waiting for whole files.
extension Controller {
    struct Refusal: Error { let message: String }

    /// A photo taken: its file, and when its still was exposed.
    struct Shot {
        let path: String
        /// The still's sensor timestamp (monotonic ns; 0: the camera gave none).
        let exposureNs: UInt64
        /// The still stream's frame period when frames before `notBefore` were skipped; 0: none were.
        let skippedFramePeriodNs: UInt64
        /// The camera's reconfiguration for the still (`CapturedStill.startDelayNs`; 0: none or unknown).
        let startDelayNs: UInt64
    }

    /// An exposure's sensor timestamp less the moment it was due (a countdown's end, a trigger's
    /// edge), ms; nil when the camera gave no timestamp.
    static func exposureOffsetMs(_ exposureNs: UInt64, from dueNs: UInt64) -> Double? {
        exposureNs != 0 ? (Double(exposureNs) - Double(dueNs)) / 1e6 : nil
    }

    /// Takes a photo: reserves its file and the space it will take, grabs the still, queues it.
    /// Refuses (with the reason) when the queue is full or the photo would not fit.
    func capture(keepCopy: Bool = false, notBefore: UInt64 = 0, trigger: UInt64? = nil) -> Result<Shot, Refusal> {
        func refuse(_ message: String, log: String) -> Result<Shot, Refusal> {
            if let line = refusalLog.admit("shutter refused: \(log)") { Log.warning(line) }
            return .failure(Refusal(message: message))
        }
        guard supervisor.running else { return .failure(Refusal(message: "No camera")) }
        guard captures.hasRoom else {
            return refuse("Busy: photo queue full", log: "\(captures.capacity) photos are still being saved")
        }
        let format = photoFormat(forBooth: keepCopy)
        let bytes = expectedBytes(format: format)
        let path: String
        do { path = try storage.reserve(bytes: bytes, extension: format.primaryExtension) } catch {
            if case .full = error { return refuse("Storage full", log: "\(error)") }
            return refuse("Storage unavailable", log: "\(error)")
        }
        let still: CapturedStill
        do { still = try supervisor.captureStill(notBefore: notBefore) } catch {
            storage.release(bytes: bytes)
            Log.error("\(path): still capture failed: \(error)")
            return .failure(Refusal(message: "Capture failed"))
        }
        guard let lens = supervisor.currentLens else {
            storage.release(bytes: bytes)
            return .failure(Refusal(message: "No camera"))
        }
        var job = CaptureJob(still: still, lens: lens, preset: currentPreset,
                             intensity: state.intensity, grainSeed: RenderSettings().grainSeed, grainFrame: pipeline.grainClock.frame,
                             orientation: analyzer.orientation, watermark: watermarked, path: path, date: Date(),
                             keepOriginal: config.capture.keepOriginal)
        job.format = format
        job.saveRaw = config.capture.raw && supervisor.camera.offersRawStills
        job.promisedBytes = bytes
        job.keepCopy = keepCopy
        if let trigger {
            // The photo's time is the trigger's (on the wall clock, to the microsecond), and its
            // EXIF says how far the exposure was from it.
            let now = MonotonicClock.now()
            let offset = Self.exposureOffsetMs(still.metadata.timestampNs, from: trigger)
            job.trigger = TriggerStamp(time: Date(timeIntervalSinceNow: -Double(now - min(trigger, now)) / 1e9), exposureOffsetMs: offset)
            lastTriggerOffsetMs = offset
            Log.info("trigger: \(path), exposure \(offset.map { String(format: "%+.1f ms", $0) } ?? "at an unknown time") from the edge")
        }
        job.dateStamp = config.capture.dateStamp?.text(for: job.trigger?.time ?? job.date)
        guard captures.submit(job) else {
            storage.release(bytes: bytes)
            return refuse("Busy: photo queue full", log: "\(captures.capacity) photos are still being saved")
        }
        lastStillSkippedPeriod = still.skippedFramePeriodNs
        Log.info("shutter: \(path) (\(currentPreset.name), \(Int((state.intensity * 100).rounded())) %)")
        return .success(Shot(path: path, exposureNs: still.metadata.timestampNs, skippedFramePeriodNs: still.skippedFramePeriodNs,
                             startDelayNs: still.startDelayNs))
    }

    /// The bytes the next photo is expected to take.
    var expectedPhotoBytes: Int64 { expectedBytes(format: config.capture.format) }

    func expectedBytes(format: PhotoFormat) -> Int64 {
        let lens = supervisor.currentLens
        return sizeEstimate.bytes(pixels: (lens?.stillWidth ?? 4056) * (lens?.stillHeight ?? 3040), keepOriginal: config.capture.keepOriginal,
                                  raw: config.capture.raw && supervisor.camera.offersRawStills, files: format.files.count)
    }

    /// What a photo is saved as: the configured format, with a JPEG beside the HEIC for a booth
    /// shot that will be printed (CUPS has no HEIC filter).
    func photoFormat(forBooth: Bool) -> PhotoFormat {
        forBooth && printQueue != nil && config.capture.format == .heic ? .heicAndJPEG : config.capture.format
    }

    func takeCaptureReports() {
        for report in reports.take() {
            switch report {
            case .saved(let path, let bytes, let pixels, let copy):
                savedPhotos += 1
                lastPhoto = path
                photoIsComplete(path)
                sizeEstimate.learn(bytes: bytes, pixels: pixels)
                if let copy, state.booth { boothCopies[path] = copy }
                perform(.photoSaved(path, now: MonotonicClock.now()))
            case .lost(let path):
                setBanner("Photo not saved")
                if state.session?.taken.contains(path) == true { boothCopies = [:] }
                perform(.photoLost(path))
            case .composed(let path, let copy):
                savedPhotos += 1
                lastPhoto = path
                photoIsComplete(path)
                lastCollage = path
                if state.booth { boothCopies[path] = copy }
                perform(.collageSaved(path, now: MonotonicClock.now()))
            case .composeFailed:
                setBanner("Collage not saved")
                boothCopies = [:]
                perform(.collageSaved(nil, now: MonotonicClock.now()))
            }
        }
    }

    /// A photo or clip is on disk, complete: its after-save command, and the scripts waiting for it.
    func photoIsComplete(_ path: String) {
        afterSave?.saved(path)
        for i in savedWaiters.indices {
            savedWaiters[i].paths.append(path)
            savedWaiters[i].remaining -= 1
        }
        for waiter in savedWaiters where waiter.remaining == 0 {
            waiter.pending.answer(.success(["paths": .array(waiter.paths.map { .string($0) })]))
        }
        savedWaiters.removeAll { $0.remaining == 0 }
    }

    /// A `wait-saved` request waits for its photos; the oldest of too many is let go.
    func addSavedWaiter(_ pending: PendingRequest, count: Int) {
        if savedWaiters.count >= Self.maxSavedWaiters {
            let oldest = savedWaiters.removeFirst()
            oldest.pending.answer(.failure("wait-saved: more than \(Self.maxSavedWaiters) clients waiting; this one was let go (\(oldest.paths.count) saved meanwhile)"))
        }
        savedWaiters.append(SavedWaiter(pending: pending, remaining: count))
    }
}

/// What the capture queue tells the controller (written on the capture thread, taken on the
/// controller's).
final class CaptureReports: Sendable {
    enum Report {
        /// `copy`: the small copy a booth shot keeps.
        case saved(path: String, bytes: Int64, pixels: Int, copy: RGBImage?)
        case lost(path: String)
        /// A booth session's collage, and its small copy.
        case composed(path: String, copy: RGBImage)
        case composeFailed
    }
    private let reports = Locked<[Report]>([])

    func add(_ report: Report) { reports.withLock { $0.append(report) } }

    func take() -> [Report] {
        reports.withLock { r in
            defer { r.removeAll() }
            return r
        }
    }
}
