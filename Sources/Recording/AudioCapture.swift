import CALSA
import System
import Video

/// A microphone read through ALSA on a thread of its own: 16-bit interleaved samples, kept
/// (at most `capacity` seconds; the oldest go when the encoder falls behind) with the
/// monotonic time of their first sample, for the recorder to take. A device that fails
/// mid-recording ends the reading with one warning; the clip goes on without sound.
final class AudioCapture: Sendable {
    let device: String
    let sampleRate: Int
    let channels: Int

    /// Samples taken from the device and not yet encoded.
    struct Pending {
        var samples: [Int16]
        /// Monotonic nanoseconds of `samples[0]`.
        var startNs: UInt64 = 0
        var failure: String?
        var overruns = 0
    }
    private let pending: Locked<Pending>
    private let capacityFrames: Int
    private let thread: WorkerThread
    private let handle: PCMHandle

    /// Opens `settings.device` for capture and starts reading. Throws when it cannot be opened
    /// or does not take the format.
    init(_ settings: AudioSettings, capacitySeconds: Double = 2) throws(VideoError) {
        device = settings.device
        sampleRate = settings.sampleRate
        channels = settings.channels
        let pcm = try PCMHandle(device: settings.device, rate: settings.sampleRate, channels: settings.channels)
        handle = pcm
        capacityFrames = Int(Double(settings.sampleRate) * capacitySeconds)
        var empty = Pending(samples: [])
        empty.samples.reserveCapacity(capacityFrames * settings.channels)
        let pending = Locked(empty)
        self.pending = pending
        let channels = settings.channels, rate = settings.sampleRate, capacity = capacityFrames, device = settings.device
        do {
            thread = try WorkerThread(name: "loopix.audio") { token in
                Self.read(pcm, channels: channels, rate: rate, capacity: capacity, device: device, into: pending, token: token)
            }
        } catch {
            throw .audio(device: settings.device, action: "start the reading thread", message: "\(error)")
        }
    }

    deinit { thread.stop() }

    func stop() { thread.stop() }

    /// Moves the samples read so far into `buffer` (replacing its contents) and returns the
    /// time of the first, or nil when there are none; the failure, if the device failed.
    func take(into buffer: inout [Int16]) -> (startNs: UInt64?, failure: String?) {
        pending.withLock { p in
            buffer.removeAll(keepingCapacity: true)
            guard !p.samples.isEmpty else { return (nil, p.failure) }
            buffer.append(contentsOf: p.samples)
            p.samples.removeAll(keepingCapacity: true)
            return (p.startNs, p.failure)
        }
    }

    private static func read(_ pcm: PCMHandle, channels: Int, rate: Int, capacity: Int, device: String,
                             into pending: Locked<Pending>, token: WorkerThread.Token) {
        let period = rate / 50  // 20 ms reads
        var chunk = [Int16](repeating: 0, count: period * channels)
        while !token.shouldStop {
            let waited = snd_pcm_wait(pcm.pointer, 100)
            if waited == 0 { continue }
            let n = chunk.withUnsafeMutableBytes { snd_pcm_readi(pcm.pointer, $0.baseAddress, snd_pcm_uframes_t(period)) }
            if n == -Int(EAGAIN) { continue }
            if n < 0 {
                // An overrun (EPIPE) or a suspend is recovered from; anything else ends reading.
                if snd_pcm_recover(pcm.pointer, Int32(n), 1) == 0 {
                    pending.withLock { $0.overruns += 1 }
                    continue
                }
                let message = String(cString: snd_strerror(Int32(n)))
                pending.withLock { $0.failure = message }
                Log.warning("microphone \(device): \(message); the clip goes on without sound")
                return
            }
            let now = MonotonicClock.now()
            var delay: snd_pcm_sframes_t = 0
            if snd_pcm_delay(pcm.pointer, &delay) < 0 { delay = 0 }
            let frames = Int(n)
            let firstNs = now - UInt64(Double(frames + Int(max(delay, 0))) / Double(rate) * 1e9)
            pending.withLock { p in
                if p.samples.isEmpty { p.startNs = firstNs }
                p.samples.append(contentsOf: chunk[0..<(frames * channels)])
                let excess = p.samples.count / channels - capacity
                if excess > 0 {
                    // The encoder fell behind: the oldest samples go, and the start moves on.
                    p.samples.removeFirst(excess * channels)
                    p.startNs += UInt64(Double(excess) / Double(rate) * 1e9)
                    p.overruns += 1
                }
            }
        }
    }
}

/// One open ALSA capture device; closed in deinit. `snd_pcm_*` calls on it come from the
/// reading thread only (and deinit, after that thread stopped).
final class PCMHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    init(device: String, rate: Int, channels: Int) throws(VideoError) {
        var pcm: OpaquePointer?
        var rc = snd_pcm_open(&pcm, device, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)
        guard rc == 0, let pcm else {
            throw .audio(device: device, action: "open it for recording", message: String(cString: snd_strerror(rc)))
        }
        rc = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, UInt32(channels), UInt32(rate), 1, 100_000)
        guard rc == 0 else {
            snd_pcm_close(pcm)
            throw .audio(device: device, action: "record \(channels) channel(s) of 16-bit at \(rate) Hz",
                         message: String(cString: snd_strerror(rc)))
        }
        rc = snd_pcm_start(pcm)
        if rc < 0 && rc != -Int32(EBADFD) {
            snd_pcm_close(pcm)
            throw .audio(device: device, action: "start recording", message: String(cString: snd_strerror(rc)))
        }
        pointer = pcm
    }

    deinit { snd_pcm_close(pointer) }
}
