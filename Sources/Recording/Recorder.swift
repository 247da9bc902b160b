import Dispatch
import Raster
import Foundation
import Video
import System

/// A frame on its way to the encoder: an RGB image at the clip's size. It belongs to one side
/// at a time — the recorder's pool, the preview loop rendering into it, or the queue to the
/// encoder — which is what makes the unchecked conformance hold.
public final class VideoFrame: @unchecked Sendable {
    public var image: RGBImage
    /// Seconds since the clip began.
    var time: Double = 0

    init(width: Int, height: Int) { image = RGBImage(width: width, height: height) }
}

/// Records one clip on a thread of its own, so the preview and the control socket never wait
/// for the encoder. Frames travel through a small pool (`poolSize` buffers, allocated once):
/// the preview loop takes a free buffer, renders the graded frame into it and submits it with
/// its capture time; when the encoder has fallen behind there is no free buffer and the frame
/// is dropped (counted) — the clip's timestamps stay true to real time, so its duration is
/// right. The microphone, when there is one, has its own reading thread.
///
/// `stop()` finishes the clip (flush, trailer, sync) and returns what happened. A write that
/// fails (the storage full) or an encoder error ends the clip by itself: the file is cut back to
/// its last whole fragment and `failure` says why.
public final class Recorder: Sendable {
    public let path: String
    public let settings: VideoSettings
    /// The H.264 encoder in use ("libx264", "h264_v4l2m2m").
    public let encoderName: String
    /// Whether the clip has sound (a microphone was asked for and opened).
    public let hasAudio: Bool

    /// What happened so far; read from any thread.
    public struct Progress: Sendable, Equatable {
        public var framesWritten = 0
        public var framesDropped = 0
        public var bytes: Int64 = 0
        /// Seconds of video written (the last frame's time).
        public var duration: Double = 0
        /// Why the clip ended by itself, if it did.
        public var failure: VideoError?
        public var finished = false
    }

    static let poolSize = 4

    private struct Shared {
        var free: [VideoFrame]
        var queue: [VideoFrame] = []
        var stopping = false
        var progress = Progress()
    }
    private let shared: Locked<Shared>
    private let wake = DispatchSemaphore(value: 0)
    private let thread: Locked<WorkerThread?>
    private let startNs: UInt64

    /// Opens the clip at `path` (creating it; it must not exist) and starts the encoder's
    /// thread. `startNs`: the monotonic time the clip's zero is (frames and sound are placed
    /// relative to it). A microphone that cannot be opened is a warning and a clip without
    /// sound; anything else that fails throws, leaving no file.
    /// `encodeDelay`: extra seconds per frame, for tests of an encoder that falls behind.
    public init(path: String, settings: VideoSettings, metadata: ClipMetadata, encoderName: String, startNs: UInt64,
                encodeDelay: Double = 0) throws(VideoError) {
        self.path = path
        self.settings = settings
        self.encoderName = encoderName
        self.startNs = startNs
        var microphone: AudioCapture?
        var effective = settings
        if let audio = settings.audio {
            do { microphone = try AudioCapture(audio) } catch {
                Log.warning("\(error); recording without sound")
                effective.audio = nil
            }
        }
        hasAudio = microphone != nil
        let writer = try ClipWriter(path: path, settings: effective, metadata: metadata, encoderName: encoderName)
        let pool = (0..<Self.poolSize).map { _ in VideoFrame(width: settings.width, height: settings.height) }
        let shared = Locked(Shared(free: pool))
        self.shared = shared
        let wake = self.wake
        let box = WriterBox(writer: writer, microphone: microphone)
        let channels = effective.audio?.channels ?? 1
        do {
            let t = try WorkerThread(name: "loopix.video") { token in
                Self.encode(box, shared: shared, wake: wake, startNs: startNs, channels: channels, delay: encodeDelay, token: token)
            }
            thread = Locked(t)
        } catch {
            unlink(path)
            throw .file(SystemError(path, "start the encoder's thread", error.errno))
        }
    }

    deinit { _ = stop() }

    /// A free buffer to render the next frame into, or nil when the encoder is behind (the
    /// frame is dropped and counted) or the clip has ended.
    public func takeBuffer() -> VideoFrame? {
        shared.withLock { s in
            guard !s.stopping, s.progress.failure == nil, !s.progress.finished else { return nil }
            guard let frame = s.free.popLast() else {
                s.progress.framesDropped += 1
                return nil
            }
            return frame
        }
    }

    /// Hands a rendered frame, captured at monotonic `timestampNs`, to the encoder.
    public func submit(_ frame: VideoFrame, timestampNs: UInt64) {
        frame.time = timestampNs >= startNs ? Double(timestampNs - startNs) / 1e9 : 0
        let queued = shared.withLock { s -> Bool in
            guard !s.stopping, s.progress.failure == nil else {
                s.free.append(frame)
                return false
            }
            s.queue.append(frame)
            return true
        }
        if queued { wake.signal() }
    }

    /// Gives a buffer back without encoding it.
    public func giveBack(_ frame: VideoFrame) {
        shared.withLock { $0.free.append(frame) }
    }

    public var progress: Progress { shared.withLock { $0.progress } }

    /// Finishes the clip (the frames already queued are encoded first) and returns what
    /// happened. Idempotent.
    @discardableResult
    public func stop() -> Progress {
        shared.withLock { $0.stopping = true }
        wake.signal()
        let t = thread.withLock { t -> WorkerThread? in
            defer { t = nil }
            return t
        }
        t?.stop()
        return progress
    }

    /// The encoder's loop: frames in order, sound in between; the clip finished at the end.
    private static func encode(_ box: WriterBox, shared: Locked<Shared>, wake: DispatchSemaphore, startNs: UInt64,
                               channels: Int, delay: Double, token: WorkerThread.Token) {
        let writer = box.writer
        var sound: [Int16] = []
        sound.reserveCapacity(48_000 * 2 * channels)
        func fail(_ error: VideoError) {
            writer.cutToLastFragment()
            box.microphone?.stop()
            shared.withLock { s in
                s.progress.failure = error
                s.progress.finished = true
                s.progress.bytes = writer.bytesWritten
                s.free.append(contentsOf: s.queue)
                s.queue.removeAll()
            }
        }
        func encodeSound() throws(VideoError) {
            guard let mic = box.microphone else { return }
            let (first, _) = mic.take(into: &sound)
            guard let first, !sound.isEmpty else { return }
            let time = first >= startNs ? Double(first - startNs) / 1e9 : -Double(startNs - first) / 1e9
            // (A Result, not a typed throw through the closure: Swift 6.0 sees that as untyped.)
            let result = sound.withUnsafeBufferPointer { buffer -> Result<Void, VideoError> in
                do throws(VideoError) {
                    try writer.encodeAudio(buffer.baseAddress!, count: buffer.count / channels, channels: channels, time: time)
                    return .success(())
                } catch { return .failure(error) }
            }
            try result.get()
        }
        while true {
            _ = wake.wait(timeout: .now() + .milliseconds(100))
            while let frame = shared.withLock({ s -> VideoFrame? in s.queue.isEmpty ? nil : s.queue.removeFirst() }) {
                do throws(VideoError) {
                    let width = frame.image.width, time = frame.time
                    let result = frame.image.pixels.withUnsafeBufferPointer { pixels -> Result<Bool, VideoError> in
                        do throws(VideoError) {
                            return .success(try writer.encode(rgb: pixels.baseAddress!, stride: width * 3, time: time))
                        } catch { return .failure(error) }
                    }
                    if try !result.get() { shared.withLock { $0.progress.framesDropped += 1 } }
                    if delay > 0 { usleep(UInt32(delay * 1e6)) }
                    try encodeSound()
                } catch {
                    shared.withLock { $0.free.append(frame) }
                    fail(error)
                    return
                }
                shared.withLock { s in
                    s.free.append(frame)
                    s.progress.framesWritten = writer.frames
                    s.progress.duration = frame.time
                    s.progress.bytes = writer.bytesWritten
                }
            }
            let stopping = shared.withLock { $0.stopping && $0.queue.isEmpty }
            if stopping || token.shouldStop {
                box.microphone?.stop()
                do throws(VideoError) {
                    try encodeSound()
                    try writer.finish()
                } catch {
                    fail(error)
                    return
                }
                shared.withLock { s in
                    s.progress.bytes = writer.bytesWritten
                    s.progress.finished = true
                }
                return
            }
        }
    }
}

/// The clip writer and microphone, handed to the encoder's thread when it starts and touched
/// only there afterwards (the one escape from Sendable checking here).
private final class WriterBox: @unchecked Sendable {
    let writer: ClipWriter
    let microphone: AudioCapture?
    init(writer: ClipWriter, microphone: AudioCapture?) {
        self.writer = writer
        self.microphone = microphone
    }
}
