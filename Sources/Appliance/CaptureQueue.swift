import Camera
import Canvas
import Dispatch
import Darkroom
import FilmCore
import Foundation
import ImageFiles
import System
import Raster

/// What a photo is saved as: HEIC (the default: small, 10-bit-ready, what the camera's gallery
/// shows), JPEG (quick, and what every browser and phone opens), or both.
public enum PhotoFormat: String, Sendable, Equatable, CaseIterable {
    case heic, jpeg
    case heicAndJPEG = "heic+jpeg"

    /// The files, the first one being the photo's reserved path.
    public var files: [ImageFormat] {
        switch self {
        case .heic: return [.heic]
        case .jpeg: return [.jpeg]
        case .heicAndJPEG: return [.heic, .jpeg]
        }
    }

    /// The reserved file's extension in DCIM (`LPX_0001.HEIC`, `LPX_0001.JPG`).
    public var primaryExtension: String { files[0] == .heic ? "HEIC" : "JPG" }

    /// Writes `image` in each of the format's files, atomically and never over an existing one:
    /// the first at `path` (the reserved name), a JPEG beside it under the same number.
    /// Returns the paths written.
    @discardableResult
    public func write(_ image: RGBImage, to path: String, metadata: PhotoMetadata, heic: HEICOptions, jpegQuality: Int) throws -> [String] {
        try files.map { format in
            let target = format == files[0] ? path : (path as NSString).deletingPathExtension + ".JPG"
            try ImageWriter.write(image, to: target, format: format, metadata: metadata, heic: heic, jpegQuality: jpegQuality, replace: false)
            return target
        }
    }
}

/// One photo on its way to storage: the full-resolution still and everything needed to
/// develop it as the preview showed it.
/// A photo taken by the trigger input: when the edge came (wall clock) and how far the exposure
/// (the still's sensor timestamp) was from it, in ms (nil: the camera gave no timestamp).
public struct TriggerStamp: Sendable, Equatable {
    public var time: Date
    public var exposureOffsetMs: Double?
}

public struct CaptureJob: Sendable {
    /// As the camera gave it; converted to RGB when the job is developed.
    public var still: CapturedStill
    public var lens: Lens
    public var preset: Preset
    public var intensity: Double
    public var grainSeed: UInt64
    public var grainFrame: UInt64
    /// EXIF orientation 1…8 from the motion sensor.
    public var orientation: Int
    public var watermark: Bool
    public var path: String
    public var date: Date
    /// Also save the undeveloped still as PNG beside the HEIC (same number, .PNG).
    public var keepOriginal = false
    /// Also save the still's raw frame as a DNG beside the photo (same number, .DNG), when the
    /// camera gave one.
    public var saveRaw = false
    public var format = PhotoFormat.heic
    /// Bytes promised for it by `PhotoStorage.reserve`, given back when it is saved or lost.
    public var promisedBytes: Int64 = 0
    /// Keep a small copy of the developed photo (at most `BoothCollage.shotWidth` ×
    /// `shotHeight`) for the photobooth's review screen and collage.
    public var keepCopy = false
    /// Taken by the trigger input: its time and the exposure's distance from it.
    public var trigger: TriggerStamp?
    /// The date imprinted into the photo (`capture.dateStamp`), nil for none.
    public var dateStamp: String?

    public var metadata: FrameMetadata { still.metadata }

    public init(still: CapturedStill, lens: Lens, preset: Preset, intensity: Double, grainSeed: UInt64,
                grainFrame: UInt64, orientation: Int, watermark: Bool, path: String, date: Date, keepOriginal: Bool = false) {
        self.still = still
        self.lens = lens
        self.preset = preset
        self.intensity = intensity
        self.grainSeed = grainSeed
        self.grainFrame = grainFrame
        self.orientation = orientation
        self.watermark = watermark
        self.path = path
        self.date = date
        self.keepOriginal = keepOriginal
    }
}

/// Develops and saves photos one at a time on a background queue, so the preview keeps
/// running. Bounded: `submit` refuses a job when `capacity` are already waiting or in work
/// (the caller tells the user; nothing is dropped silently).
public final class CaptureQueue: Sendable {
    /// What developing a job gave: the bytes written (the photo, and its original and raw
    /// negative if kept), the small copy when the job asked for one, and why no raw negative was
    /// saved when one was asked for (the photo itself is saved all the same).
    public struct Developed: Sendable {
        public var bytes: Int64
        public var copy: RGBImage?
        public var rawProblem: String? = nil
    }

    /// How a job ended: what it gave, or the error.
    public typealias Completion = @Sendable (CaptureJob, Result<Developed, Error>) -> Void

    /// How photos are encoded: HEIC options and JPEG quality.
    public struct Encoding: Sendable {
        public var heic: HEICOptions
        public var jpegQuality: Int
        public init(heic: HEICOptions = HEICOptions(), jpegQuality: Int = 90) {
            self.heic = heic
            self.jpegQuality = jpegQuality
        }
    }

    private struct Settings {
        var capacity: Int
        var encoding: Encoding
        var inFlight = 0
    }
    private let settings: Locked<Settings>
    private let threads: Int
    private let queue = DispatchQueue(label: "loopix.capture", qos: .userInitiated)
    private let group = DispatchGroup()
    private let onDone: Completion

    /// The threads photos are developed and encoded on: one per core, at low priority, so the
    /// preview and the shutter keep the CPU while a photo is saved.
    private let background: BackgroundThreads

    /// `onDone` is called on the capture queue after each job.
    public init(capacity: Int, encoding: Encoding, threads: Int, onDone: @escaping Completion) {
        settings = Locked(Settings(capacity: max(1, capacity), encoding: encoding))
        self.threads = max(1, threads)
        self.onDone = onDone
        background = BackgroundThreads(threads: max(1, threads))
    }

    deinit { background.shutdown() }

    /// How many photos may wait or be in work at once.
    public var capacity: Int { settings.withLock { $0.capacity } }

    /// Changes the capacity and the encoding for the jobs submitted from now on (a reloaded
    /// configuration); jobs already queued keep theirs.
    public func reconfigure(capacity: Int, encoding: Encoding) {
        settings.withLock {
            $0.capacity = max(1, capacity)
            $0.encoding = encoding
        }
    }

    /// How many photos may wait when the configuration says "auto": the still's bytes (8-bit
    /// RGB, as it waits) against a third of the memory there is (the rest is the system, the
    /// preview, video), after what developing one takes (the still, its developed copy and the
    /// encoders: about five stills). A Pi Zero 2 W (512 MB) holds one 12 MP photo, two 8 MP
    /// ones; a Pi 4 with 2 GB 13; at most 32.
    public static func automaticCapacity(stillPixels: Int, memoryBytes: Int64) -> Int {
        let still = Int64(max(1, stillPixels)) * 3
        let room = memoryBytes / 3 - 5 * still
        return Int(min(32, 1 + max(0, room) / still))
    }

    /// Jobs waiting or being developed.
    public var pending: Int { settings.withLock { $0.inFlight } }

    /// Whether another job would be taken now.
    public var hasRoom: Bool { settings.withLock { $0.inFlight < $0.capacity } }

    /// Queues a job; false when the queue is full.
    public func submit(_ job: CaptureJob) -> Bool {
        guard let encoding = settings.withLock({ s -> Encoding? in
            guard s.inFlight < s.capacity else { return nil }
            s.inFlight += 1
            return s.encoding
        }) else { return false }
        group.enter()
        let threads = self.threads, settings = self.settings, onDone = self.onDone, group = self.group, background = self.background
        queue.async {
            // The job runs on a low-priority thread; this queue's thread waits for it.
            let outcome = Locked<Result<Developed, Error>>(.failure(CancellationError()))
            background.runInBackground {
                let r = Result { try Self.develop(job, encoding: encoding, threads: threads, parallel: background) }
                outcome.withLock { $0 = r }
            }
            let result = outcome.withLock { $0 }
            settings.withLock { $0.inFlight -= 1 }
            onDone(job, result)
            group.leave()
        }
        return true
    }

    /// Waits until every queued photo is saved, at most `timeout` seconds; true if all were.
    public func drain(timeout: Double) -> Bool {
        group.wait(timeout: .now() + timeout) == .success
    }

    /// Develops at full resolution with the look and writes the photo's files atomically
    /// (HEIC, JPEG or both, numbered alike); returns the bytes written.
    static func develop(_ job: CaptureJob, encoding: Encoding, threads: Int, parallel: any ParallelWork = DispatchParallelWork()) throws -> Developed {
        var written: Int64 = 0
        var image = try job.still.image()
        if job.keepOriginal {
            let original = (job.path as NSString).deletingPathExtension + ".PNG"
            try ImageWriter.write(image, to: original, format: .png, replace: false)
            written += fileSize(original)
        }
        // The negative before the look changes the still; a DNG that cannot be written is
        // reported, and the photo saved all the same.
        let meta = photoMetadata(job)
        var rawProblem: String? = nil
        if job.saveRaw {
            if let raw = job.still.raw {
                let negative = (job.path as NSString).deletingPathExtension + ".DNG"
                do {
                    try RawNegative.write(raw(image), to: negative, metadata: meta, recipe: recipe(job),
                                          uniqueCameraModel: "Loopix \(job.lens.sensorModel)")
                    written += fileSize(negative)
                } catch {
                    rawProblem = "\(error)"
                }
            } else {
                rawProblem = "\(job.path): the camera gave no raw frame with this still (no DNG saved)"
            }
        }
        var darkroom = Darkroom()
        darkroom.develop(&image, preset: job.preset, recipe: recipe(job), watermark: job.watermark, threads: threads, parallel: parallel)
        var heic = encoding.heic
        heic.parallel = parallel
        for path in try job.format.write(image, to: job.path, metadata: meta, heic: heic, jpegQuality: encoding.jpegQuality) {
            written += fileSize(path)
        }
        let copy = job.keepCopy ? BoothCollage.shrink(image, toFit: BoothCollage.shotWidth, BoothCollage.shotHeight) : nil
        return Developed(bytes: written, copy: copy, rawProblem: rawProblem)
    }

    /// What the photo's files say of it: camera, lens, exposure, time, orientation, look.
    static func photoMetadata(_ job: CaptureJob) -> PhotoMetadata {
        var meta = PhotoMetadata(make: "Loopix", model: "Loopix camera (\(job.lens.sensorModel))", lensModel: job.lens.label,
                                 focalLength: job.lens.focalLength, focalLength35mm: Int(job.lens.focalLength35mm.rounded()),
                                 exposureTime: job.metadata.exposureTime, iso: job.metadata.iso, date: job.date,
                                 orientation: job.orientation, presetName: job.preset.name)
        if let trigger = job.trigger {
            meta.date = trigger.time
            meta.subSecondTime = true
            meta.userComment = "Loopix trigger: exposure " + (trigger.exposureOffsetMs.map { String(format: "%+.3f ms", $0) } ?? "at an unknown time")
                + " from the trigger edge"
        }
        return meta
    }

    /// How the job is developed, for its raw negative (`loopix develop --same`).
    static func recipe(_ job: CaptureJob) -> DevelopRecipe {
        DevelopRecipe(presetID: job.preset.id, presetName: job.preset.name, intensity: job.intensity, grainSeed: job.grainSeed,
                      grainFrame: job.grainFrame, dateStamp: job.dateStamp)
    }

    private static func fileSize(_ path: String) -> Int64 {
        var st = stat()
        return stat(path, &st) == 0 ? Int64(st.st_size) : 0
    }
}
