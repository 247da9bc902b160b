import Camera
import Canvas
import Dispatch
import FilmCore
import Foundation
import ImageFiles
import System

/// One photo on its way to storage: the full-resolution still and everything needed to
/// develop it as the preview showed it.
public struct CaptureJob: Sendable {
    public var still: RGBImage
    public var metadata: FrameMetadata
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
    /// Bytes promised for it by `PhotoStorage.reserve`, given back when it is saved or lost.
    public var promisedBytes: Int64 = 0

    public init(still: RGBImage, metadata: FrameMetadata, lens: Lens, preset: Preset, intensity: Double, grainSeed: UInt64,
                grainFrame: UInt64, orientation: Int, watermark: Bool, path: String, date: Date, keepOriginal: Bool = false) {
        self.still = still
        self.metadata = metadata
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
    /// How a job ended: the bytes written (the photo, and its original if kept), or the error.
    public typealias Completion = @Sendable (CaptureJob, Result<Int64, Error>) -> Void

    private struct Settings {
        var capacity: Int
        var heic: HEICOptions
        var inFlight = 0
    }
    private let settings: Locked<Settings>
    private let threads: Int
    private let queue = DispatchQueue(label: "loopix.capture", qos: .userInitiated)
    private let group = DispatchGroup()
    private let onDone: Completion

    /// `onDone` is called on the capture queue after each job.
    public init(capacity: Int, heic: HEICOptions, threads: Int, onDone: @escaping Completion) {
        settings = Locked(Settings(capacity: max(1, capacity), heic: heic))
        self.threads = max(1, threads)
        self.onDone = onDone
    }

    /// How many photos may wait or be in work at once.
    public var capacity: Int { settings.withLock { $0.capacity } }

    /// Changes the capacity and the HEIC options for the jobs submitted from now on
    /// (a reloaded configuration); jobs already queued keep theirs.
    public func reconfigure(capacity: Int, heic: HEICOptions) {
        settings.withLock {
            $0.capacity = max(1, capacity)
            $0.heic = heic
        }
    }

    /// Jobs waiting or being developed.
    public var pending: Int { settings.withLock { $0.inFlight } }

    /// Whether another job would be taken now.
    public var hasRoom: Bool { settings.withLock { $0.inFlight < $0.capacity } }

    /// Queues a job; false when the queue is full.
    public func submit(_ job: CaptureJob) -> Bool {
        guard let heic = settings.withLock({ s -> HEICOptions? in
            guard s.inFlight < s.capacity else { return nil }
            s.inFlight += 1
            return s.heic
        }) else { return false }
        group.enter()
        let threads = self.threads, settings = self.settings, onDone = self.onDone, group = self.group
        queue.async {
            let result = Result { try Self.develop(job, heic: heic, threads: threads) }
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

    /// Develops at full resolution with the look and writes the HEIC atomically; returns the
    /// bytes written.
    static func develop(_ job: CaptureJob, heic: HEICOptions, threads: Int) throws -> Int64 {
        var written: Int64 = 0
        if job.keepOriginal {
            let original = (job.path as NSString).deletingPathExtension + ".PNG"
            try ImageWriter.write(job.still, to: original, format: .png, replace: false)
            written += fileSize(original)
        }
        var image = job.still
        let look = FilmLook(preset: job.preset, settings: RenderSettings(ev: 0, intensity: job.intensity, grainSeed: job.grainSeed))
        FilmRenderer(look: look, width: image.width, height: image.height).render(&image, grainFrame: job.grainFrame, threads: threads)
        if job.watermark { Watermark.draw(on: &image) }
        let meta = PhotoMetadata(make: "Loopix", model: "Loopix camera (\(job.lens.sensorModel))", lensModel: job.lens.label,
                                 focalLength: job.lens.focalLength, focalLength35mm: Int(job.lens.focalLength35mm.rounded()),
                                 exposureTime: job.metadata.exposureTime, iso: job.metadata.iso, date: job.date,
                                 orientation: job.orientation, presetName: job.preset.name)
        try ImageWriter.write(image, to: job.path, format: .heic, metadata: meta, heic: heic, replace: false)
        return written + fileSize(job.path)
    }

    private static func fileSize(_ path: String) -> Int64 {
        var st = stat()
        return stat(path, &st) == 0 ? Int64(st.st_size) : 0
    }
}

/// The mark on previews and photos of Pro looks while no license is installed.
public enum Watermark {
    public static let text = "LOOPIX PRO - UNLICENSED"

    public static func draw(on image: inout RGBImage) {
        var canvas = Canvas(image: image)
        image = RGBImage(width: 1, height: 1)   // drop our reference so the canvas edits in place
        let scale = max(1, BitmapFont.scale(forCapHeight: canvas.height / 18))
        let width = BitmapFont.width(of: text, scale: scale)
        let band = Rect(x: 0, y: canvas.height / 2 - scale * 8, width: canvas.width, height: scale * 16)
        canvas.fill(band, color: .black, opacity: 0.35)
        canvas.draw(text: text, at: Point(x: (canvas.width - width) / 2, y: band.y + scale * 4), scale: scale,
                    color: .white, style: .outline(.black))
        image = canvas.image
    }
}
