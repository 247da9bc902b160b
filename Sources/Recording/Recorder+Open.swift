import System
import Video

extension Recorder {
    /// Opens a clip with the first encoder of `settings.encoder` that works; a hardware encoder
    /// that refuses is logged and the next one tried.
    public static func open(path: String, settings: VideoSettings, metadata: ClipMetadata, startNs: UInt64) throws(VideoError) -> Recorder {
        var last = VideoError.noEncoder("none tried")
        for name in settings.encoder.candidates() {
            do {
                return try Recorder(path: path, settings: settings, metadata: metadata, encoderName: name, startNs: startNs)
            } catch {
                last = error
                if case .file = error { throw error }
                if case .storageFull = error { throw error }
                Log.warning("video encoder \(name): \(error)")
            }
        }
        throw last
    }
}
