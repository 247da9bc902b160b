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

/// The control socket's and the web remote's requests: each answered through `perform`, and `status`.
extension Controller {
    /// Answers the requests the control server queued, oldest first; a request whose deadline
    /// passed before it was reached was answered "busy" and is skipped, never carried out.
    func answerRequests() {
        for pending in handle.takeRequests() where pending.claim() {
            if case .waitSaved(let count) = pending.request {
                addSavedWaiter(pending, count: count)
                continue
            }
            pending.answer(answer(pending.request))
        }
    }

    /// The reply to one control-socket request; every change goes through `perform`.
    func answer(_ request: ControlRequest) -> ControlReply {
        func reply(_ result: CommandResult, _ fields: @autoclosure () -> [String: JSONValue]) -> ControlReply {
            if let refusal = result.refusal { return .failure(refusal) }
            return .success(fields())
        }
        switch request {
        case .status:
            return .success(status())
        case .capture:
            let result = perform(.input(.shutter))
            if state.mode == .video { return reply(result, recordingReply(result)) }
            if let session = state.session { return reply(result, ["booth": .string(session.phaseName), "path": .string(result.photoPath ?? "")]) }
            return reply(result, ["path": .string(result.photoPath ?? "")])
        case .record(let action):
            let result = perform(.record(action))
            return reply(result, recordingReply(result))
        case .preset(let name):
            let id = name.lowercased()
            return reply(perform(.selectPreset(id)), ["preset": .string(id)])
        case .intensity(let percent):
            return reply(perform(.setIntensity(percent / 100)), ["intensity": .int(Int((state.intensity * 100).rounded()))])
        case .ev(let ev):
            return reply(perform(.setEV(ev)), ["ev": .number(state.ev)])
        case .lens(let index):
            let result = perform(.selectLens(index))
            return reply(result, ["lens": .int(index), "label": .string(supervisor.currentLens?.label ?? "")])
        case .mode(let mode):
            return reply(perform(.setMode(mode == .video ? .video : .photo)), ["mode": .string(state.mode.rawValue)])
        case .grid(let on):
            return reply(perform(.setGrid(on)), ["grid": .bool(state.grid)])
        case .booth(let on):
            return reply(perform(.setBooth(on)), ["booth": .bool(state.booth)])
        case .waitSaved:
            // Held by answerRequests until the photos are saved; never answered here.
            return .failure("wait-saved is answered once the photos are saved")
        case .interval(.start(let every, let count)):
            if let running = state.interval { Log.info("interval: replacing the schedule of a photo every \(JSONValue.format(running.everySeconds)) s") }
            startInterval(Intervalometer(Intervalometer.Settings(everySeconds: every, count: count), now: Date().timeIntervalSince1970))
            return .success(["interval": intervalStatus() ?? .null])
        case .interval(.stop):
            let running = state.interval
            return reply(perform(.stopInterval), ["taken": .int(running?.taken ?? 0), "skipped": .int(running?.skipped ?? 0)])
        case .handedness(let h):
            return reply(perform(.setHandedness(h)), ["handedness": .string(state.handedness.rawValue)])
        case .snapshot(let path):
            return reply(perform(.snapshot(path: path)), ["path": .string(path)])
        case .simulate(let fault, let seconds):
            return reply(perform(.simulate(fault, seconds: seconds)), ["fault": .string(fault.rawValue), "seconds": .number(seconds)])
        }
    }

    /// What a recording request answers: whether a clip records now, and its file.
    func recordingReply(_ result: CommandResult) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["recording": .bool(state.recording)]
        if let path = result.photoPath ?? recorder?.path { fields["path"] = .string(path) }
        return fields
    }

    func status() -> [String: JSONValue] {
        var s: [String: JSONValue] = [
            "preset": .string(state.presetID), "presetName": .string(currentPreset.name), "tier": .string(currentPreset.tier.rawValue),
            "intensity": .int(Int((state.intensity * 100).rounded())), "ev": .number(state.ev), "lens": .int(state.lensIndex),
            "lenses": .array(supervisor.lenses.map { .string($0.label) }), "sensors": .array(supervisor.lenses.map { .string($0.sensorModel) }),
            "mode": .string(state.mode.rawValue),
            "grid": .bool(state.grid), "handedness": .string(state.handedness.rawValue), "aeLocked": .bool(state.aeLocked),
            "afLocked": .bool(state.afLocked), "queue": .int(captures.pending), "queueCapacity": .int(captures.capacity), "saved": .int(savedPhotos), "licensed": .bool(licensed),
            "onboardingDone": .bool(state.onboardingDone), "camera": .string(supervisor.statusText),
            "display": .string(pipeline.display.name), "watermark": .bool(watermarked),
        ]
        if let lastPhoto { s["lastPhoto"] = .string(lastPhoto) }
        if let webURL { s["web"] = .string(webURL) }
        s["recording"] = .bool(state.recording)
        s["framesShown"] = .int(pipeline.framesShown)
        if let schedule = intervalStatus() { s["interval"] = schedule }
        if let lastTriggerOffsetMs { s["triggerExposureOffsetMs"] = .number((lastTriggerOffsetMs * 10).rounded() / 10) }
        if let afterSave {
            let c = afterSave.counts
            s["afterSave"] = ["running": .int(c.running), "waiting": .int(c.waiting), "succeeded": .int(c.succeeded),
                              "failed": .int(c.failed), "skipped": .int(c.skipped)]
        }
        if let booth = state.session {
            var b = JSONObject([("phase", .string(booth.phaseName)), ("shots", .int(booth.settings.shots)),
                                ("taken", .array(booth.taken.map { .string($0) }))])
            if let shot = booth.currentShot { b["shot"] = .int(shot) }
            if let n = booth.countdownNumeral(now: MonotonicClock.now()) { b["countdown"] = .int(n) }
            if let lastTriggerLatencyMs { b["triggerLatencyMs"] = .number((lastTriggerLatencyMs * 10).rounded() / 10) }
            if let lastExposureOffsetMs {
                b["exposureOffsetMs"] = .number((lastExposureOffsetMs * 10).rounded() / 10)
                b["exposedAtNs"] = .int(Int(clamping: lastBoothExposure))
                b["exposureOffsetsMs"] = .array(sessionExposureOffsetsMs.map { .number($0) })
                if lastStillSkippedPeriod > 0 { b["stillFramePeriodMs"] = .number((Double(lastStillSkippedPeriod) / 1e5).rounded() / 10) }
            }
            if !supervisor.camera.stillsWhileStreaming { b["stillLeadMs"] = .int(Int(stillLead.ns / 1_000_000)) }
            if booth.settings.flash != .off { b["flash"] = .bool(flashIsOn) }
            if let lastCollage { b["lastCollage"] = .string(lastCollage) }
            if let printQueue {
                var p = JSONObject([("pending", .int(printQueue.pending)), ("printed", .int(printQueue.printed))])
                if let trouble = printQueue.attention { p["attention"] = .string(trouble) }
                b["printing"] = .object(p)
            }
            s["booth"] = .object(b)
        }
        // Whether frames show the chosen look yet (it compiles in the background after a change).
        s["lookReady"] = .bool(pipeline.lookInUse == state.presetID)
        if let recorder {
            let p = recorder.progress
            s["clip"] = ["path": .string(recorder.path), "seconds": .number((recordingElapsed * 10).rounded() / 10),
                         "framesWritten": .int(p.framesWritten), "framesDropped": .int(p.framesDropped),
                         "bytes": .number(Double(p.bytes)), "encoder": .string(recorder.encoderName), "sound": .bool(recorder.hasAudio)]
        }
        if state.mode == .video, let left = secondsOfVideoLeft { s["secondsRemaining"] = .int(left) }
        if let shots = storage.shotsRemaining(bytesPerPhoto: expectedPhotoBytes) { s["shotsRemaining"] = .int(shots) }
        return s
    }
}
