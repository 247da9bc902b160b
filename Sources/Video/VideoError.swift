import CLoopixAV
import System

/// Why recording failed: what was being done, and FFmpeg's or ALSA's reason, on one line.
public enum VideoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A libav* call failed: what was being done and the AVERROR it returned.
    case ffmpeg(action: String, code: Int32)
    /// The output file: the system call that failed.
    case file(SystemError)
    /// No usable H.264 encoder (the configured one is missing or refused the settings).
    case noEncoder(String)
    /// The microphone (ALSA): what was being done and snd_strerror's text.
    case audio(device: String, action: String, message: String)
    /// The storage filled up; the clip was ended at its last complete fragment.
    case storageFull(String)

    public var description: String {
        switch self {
        case .ffmpeg(let action, let code): return "\(action): \(VideoError.text(code)) (FFmpeg error \(code))"
        case .file(let e): return e.description
        case .noEncoder(let why): return "no H.264 encoder: \(why)"
        case .audio(let device, let action, let message): return "microphone \(device): cannot \(action): \(message)"
        case .storageFull(let what): return "storage full: \(what)"
        }
    }

    /// av_strerror's text for an AVERROR.
    static func text(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        CLoopixAV_errorText(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The errno inside an AVERROR(e), if it is one.
    static func errno(of code: Int32) -> Errno? {
        code < 0 && code > -4096 ? Errno(-code) : nil
    }
}
