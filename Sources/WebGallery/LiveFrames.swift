import FilmCore
import Foundation
import ImageFiles
import System
import Raster

/// The graded preview, offered by the controller to browsers watching `/live.mjpg` (framing a
/// headless rig from a phone). The controller's side costs nothing while nobody watches and,
/// while someone does, one copy into a buffer made once, at most `framesPerSecond` times a
/// second; the viewers' threads (low priority) take the newest frame and encode it. Viewers
/// are counted and bounded: a viewer past `maxViewers` is turned away.
public final class LiveFrames: @unchecked Sendable {
    // @unchecked: every field below is under `guarded`.
    public let maxViewers: Int
    public let framesPerSecond: Int
    private let guarded = ConditionLock()
    private var frame = RGBImage(width: 1, height: 1)
    private var sequence = 0
    private var viewers = 0
    private var nextOffer: UInt64 = 0
    private var closed = false

    public init(maxViewers: Int = 2, framesPerSecond: Int = 10) {
        self.maxViewers = maxViewers
        self.framesPerSecond = max(1, framesPerSecond)
    }

    /// Whether the controller should offer this frame: someone watches and it is time (one
    /// uncontended lock a frame).
    public var wanted: Bool {
        guarded.withLock { viewers > 0 && MonotonicClock.now() >= nextOffer }
    }

    /// Copies `image` in (the buffer is made again only when the size changes).
    public func offer(_ image: RGBImage) {
        guarded.withLock {
            if frame.width != image.width || frame.height != image.height {
                frame = image                       // a new size: this copy is the new buffer
                frame.pixels.withUnsafeMutableBytes { _ in }   // make it unique now, not later
            } else {
                frame.pixels.withUnsafeMutableBytes { dst in image.pixels.withUnsafeBytes { dst.copyMemory(from: $0) } }
            }
            sequence += 1
            nextOffer = MonotonicClock.now() + 1_000_000_000 / UInt64(framesPerSecond)
            guarded.broadcast()
        }
    }

    /// Wakes every viewer and refuses new ones (the daemon stops).
    public func close() {
        guarded.withLock {
            closed = true
            guarded.broadcast()
        }
    }

    /// Joins as a viewer; nil when there are `maxViewers` already.
    func join() -> Bool {
        guarded.withLock {
            guard !closed, viewers < maxViewers else { return false }
            viewers += 1
            return true
        }
    }

    func leave() {
        guarded.withLock { viewers -= 1 }
    }

    public var viewerCount: Int {
        guarded.withLock { viewers }
    }

    /// Waits (at most `timeout` s) for a frame newer than `after`; a copy of it and its number.
    func next(after: Int, timeout: Double) -> (RGBImage, Int)? {
        guarded.withLock {
            let deadline = Deadline.after(seconds: timeout)
            while sequence <= after && !closed && !deadline.hasPassed {
                guarded.wait(until: deadline)
            }
            guard sequence > after, !closed else { return nil }
            return (frame, sequence)
        }
    }
}

/// `multipart/x-mixed-replace` of JPEGs: what browsers show as a moving picture in an <img>.
final class MJPEGStream: HTTPStream {
    static let boundary = "loopixframe"
    private let frames: LiveFrames
    private var pending: [UInt8] = []
    private var offset = 0
    private var last = 0
    private var open = true

    init(_ frames: LiveFrames) { self.frames = frames }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        while offset >= pending.count {
            // No frame for 10 s (camera gone, daemon stopping): the stream ends; the browser may reconnect.
            guard open, let (image, n) = frames.next(after: last, timeout: 10),
                  let jpeg = try? ImageWriter.previewJPEG(image, quality: 75) else { return nil }
            last = n
            pending = Array("--\(Self.boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.count)\r\n\r\n".utf8) + jpeg + Array("\r\n".utf8)
            offset = 0
        }
        let n = min(buffer.count, pending.count - offset)
        pending.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
        offset += n
        return n
    }

    func close() {
        guard open else { return }
        open = false
        frames.leave()
    }
}
