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

/// Recording a clip: starting and finishing it, watching it while it records, its timestamps.
extension Controller {
    /// A frame's time on the monotonic clock. The camera's own timestamps give the exact
    /// spacing of frames, but their clock need not be ours (libcamera's may be CLOCK_BOOTTIME,
    /// a virtual sensor's anything): they are anchored to our clock at a frame's arrival and
    /// used while they keep rising and stay within 200 ms of the arrival times; otherwise (no
    /// timestamp, a jump, a clock that runs off) the arrival time is used and the anchor renewed.
    func clipTimestamp(_ camera: UInt64) -> UInt64 {
        let now = MonotonicClock.now()
        var time = now
        if camera != 0, let anchor = cameraClockAnchor, camera > lastCameraTimestamp, camera >= anchor.camera,
           case let predicted = anchor.monotonic &+ (camera - anchor.camera),
           (predicted > now ? predicted - now : now - predicted) < 200_000_000 {
            time = predicted
        } else {
            cameraClockAnchor = camera != 0 ? (camera, now) : nil
        }
        lastCameraTimestamp = camera
        // Always forwards, a millisecond at least, whatever the anchoring did.
        time = max(time, lastClipTimestamp &+ 1_000_000)
        lastClipTimestamp = time
        return time
    }

    /// Seconds since the recording began.
    var recordingElapsed: Double {
        guard state.recording else { return 0 }
        return Double(MonotonicClock.now() - min(recordingStarted.nanoseconds, MonotonicClock.now())) / 1e9
    }

    /// Bytes a second of video takes: what the clip has averaged so far, else the target rate.
    var videoBytesPerSecond: Double {
        if let p = recorder?.progress, p.duration > 2, p.bytes > 0 { return Double(p.bytes) / p.duration }
        return Double(config.videoSettings.bitrate) / 8
    }

    /// Seconds of video that still fit above the reserve at the current rate.
    var secondsOfVideoLeft: Int? {
        guard let shots = storage.shotsRemaining(bytesPerPhoto: max(1, Int64(videoBytesPerSecond))) else { return nil }
        return shots
    }

    /// Opens a clip (`LPX_0007.MP4`, numbered with the photos) and starts recording what the
    /// preview shows. Refused when there is no camera or too little space for a few seconds.
    func startRecording() -> Result<String, Refusal> {
        guard supervisor.running else { return .failure(Refusal(message: "No camera")) }
        let settings = config.videoSettings
        gradeForMode()
        let path: String
        // At least a few seconds must fit; then the clip's growth is watched (`watchRecording`).
        let minimum = Int64(videoBytesPerSecond * Self.minimumRecordingSeconds)
        do { path = try storage.reserve(bytes: minimum, extension: "MP4") } catch {
            if let line = refusalLog.admit("recording refused: \(error)") { Log.warning(line) }
            if case .full = error { return .failure(Refusal(message: "Storage full")) }
            return .failure(Refusal(message: "Storage unavailable"))
        }
        storage.release(bytes: minimum)
        let metadata = ClipMetadata(creationTime: Date().timeIntervalSince1970, look: currentPreset.name,
                                    cameraModel: "Loopix camera (\(supervisor.currentLens?.sensorModel ?? "unknown"))",
                                    rotation: ClipMetadata.rotation(exifOrientation: analyzer.orientation))
        let start = MonotonicClock.now()
        do {
            recorder = try openRecorder(path, settings, metadata, start)
        } catch {
            Log.error("\(path): cannot record: \(error)")
            gradeForMode()
            return .failure(Refusal(message: "Recording failed"))
        }
        recordingStarted = Deadline(nanoseconds: start)
        cameraLostAt = nil
        cameraClockAnchor = nil
        lastCameraTimestamp = 0
        lastClipTimestamp = 0
        droppedReported = 0
        nextDropReport = .after(seconds: 1)
        Log.info("recording \(path) (\(settings.width)×\(settings.height)@\(settings.framesPerSecond), \(recorder?.encoderName ?? "?"), " +
                 "\(settings.bitrate / 1_000_000) Mbit/s\(recorder?.hasAudio == true ? ", sound" : ""))")
        return .success(path)
    }

    /// Finishes the clip; `reason` says why when it ends by itself (shown on screen). Returns its path.
    @discardableResult
    func stopRecording(reason: String?) -> String? {
        guard let recorder else { return nil }
        self.recorder = nil
        let p = recorder.stop()
        let summary = "\(recorder.path): \(p.framesWritten) frames, \(String(format: "%.1f", p.duration)) s, " +
            "\(p.bytes / 1_048_576) MB\(p.framesDropped > 0 ? ", \(p.framesDropped) dropped" : "")"
        if let failure = p.failure {
            Log.error("recording ended: \(failure); \(summary) (kept up to its last whole fragment)")
        } else if let reason {
            Log.warning("recording stopped: \(reason); \(summary)")
        } else {
            Log.info("recording saved: \(summary)")
        }
        if let reason { setBanner(reason) } else if p.failure != nil { setBanner("Recording stopped: encoder error") }
        savedPhotos += p.framesWritten > 0 ? 1 : 0
        lastPhoto = recorder.path
        // Finished and fsynced by stop(): a whole file for the after-save command and waiters.
        if p.framesWritten > 0 { photoIsComplete(recorder.path) }
        gradeForMode()
        return recorder.path
    }

    /// While recording: ends the clip when the encoder failed, the storage reaches its
    /// reserve, or the camera has been gone too long; reports dropped frames once a second.
    func watchRecording() {
        guard state.recording, let recorder else { return }
        let p = recorder.progress
        if let failure = p.failure {
            let reason: String
            if case .storageFull = failure { reason = "Storage full: recording stopped" } else { reason = "Recording stopped: \(failure)" }
            perform(.recordingFailed(reason))
            return
        }
        if let free = storage.freeBytes(), free - storage.reserveBytes < Int64(videoBytesPerSecond * 2) {
            perform(.recordingFailed("Storage full: recording stopped"))
            return
        }
        if supervisor.isHealthy || supervisor.running && supervisor.error == nil {
            cameraLostAt = nil
        } else if cameraLostAt == nil {
            cameraLostAt = .after(seconds: Self.recordingCameraGrace)
        } else if cameraLostAt!.hasPassed {
            perform(.recordingFailed("Camera lost: recording stopped"))
            return
        }
        if p.framesDropped > droppedReported && nextDropReport.hasPassed {
            Log.warning("recording: \(p.framesDropped - droppedReported) frame(s) dropped since the last report (the encoder is behind); \(p.framesDropped) in all")
            droppedReported = p.framesDropped
            nextDropReport = .after(seconds: 1)
        }
    }

    /// Grades at the clip's size in video mode (and while a clip records), at the display's
    /// otherwise; the camera restarts when that changes the size it must deliver.
    func gradeForMode() {
        let video = state.mode == .video || state.recording
        let v = config.videoSettings
        if pipeline.grade(at: video ? (v.width, v.height) : nil) {
            supervisor.resize(width: pipeline.gradeWidth, height: pipeline.gradeHeight)
        }
    }
}
