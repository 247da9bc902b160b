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

/// The timelapse: its schedule kept on disk (resumed after a restart or a power cut), its clock.
extension Controller {
    /// At start: the schedule kept on disk (after a restart or a power cut), or the configured one.
    func resumeInterval() {
        let now = Date().timeIntervalSince1970
        if let data = FileManager.default.contents(atPath: intervalPath) {
            do {
                let kept = try Intervalometer.parse(data, source: intervalPath)
                if let wanted = config.capture.interval, wanted.everySeconds != kept.everySeconds || wanted.count != kept.count {
                    Log.info("interval: the configuration asks for another schedule; starting it")
                } else {
                    perform(.startInterval(kept))
                    Log.info("interval: resuming a photo every \(JSONValue.format(kept.everySeconds)) s (\(kept.taken) taken, \(kept.skipped) skipped so far)")
                    return
                }
            } catch {
                Log.warning("\(error); the schedule kept there is dropped")
            }
        }
        if let settings = config.capture.interval { startInterval(Intervalometer(settings, now: now)) }
    }

    func startInterval(_ schedule: Intervalometer) {
        perform(.startInterval(schedule))
        var line = "interval: a photo every \(JSONValue.format(schedule.everySeconds)) s"
        if let count = schedule.count { line += ", \(count) in all" }
        Log.info(line)
    }

    /// Writes `state.interval` (or removes the file when none runs). Done before a slot's shot is
    /// taken, so a crash after it can never shoot it twice. Synchronous: at most once a slot, a
    /// small file.
    func saveInterval() {
        guard let interval = state.interval else {
            try? FileManager.default.removeItem(atPath: intervalPath)
            return
        }
        do { try AtomicFile.write(Array((interval.json().serialized(.pretty) + "\n").utf8), to: intervalPath, replace: true) } catch {
            if let line = refusalLog.admit("interval: \(intervalPath) cannot be written (\(error)); a restart would not resume it") { Log.warning(line) }
        }
    }

    /// Each loop turn: the interval's clock. A due slot's photo is the shutter's own effect;
    /// whether it was taken goes back to the schedule.
    func intervalClock() {
        guard state.interval != nil else { return }
        let now = Date().timeIntervalSince1970
        let tick = perform(.intervalTick(now: now, queueFull: !captures.hasRoom))
        if tick.captured { perform(.intervalShotDone(taken: tick.photoPath != nil, now: now)) }
    }

    func intervalStatus() -> JSONValue? {
        guard let interval = state.interval else { return nil }
        var o = JSONObject([("everySeconds", .number(interval.everySeconds)), ("taken", .int(interval.taken)), ("skipped", .int(interval.skipped))])
        if let count = interval.count { o["count"] = .int(count) }
        if let next = interval.nextShot(now: Date().timeIntervalSince1970) {
            o["next"] = .string(intervalDateFormatter.string(from: Date(timeIntervalSince1970: next)))
        }
        return .object(o)
    }
}
