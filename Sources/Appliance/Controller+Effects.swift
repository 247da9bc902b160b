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

/// Commands and their effects: `perform` is the one way the state changes (through
/// `StateRules`), `carryOut` the one place its effects reach the devices.
extension Controller {
    /// What carrying out a command gave: the photo's path for a capture, or why it was refused.
    struct CommandResult {
        var refusal: String?
        var photoPath: String?
        /// A shutter effect (`capture`, `captureAt`) was carried out, taken or refused.
        var captured = false
    }

    /// Applies one command (from the display, GPIO, touch, keys or the socket) through the
    /// rules and carries out its effects. The one way the state changes.
    @discardableResult
    func perform(_ command: Command) -> CommandResult {
        let outcome = rules.apply(command, to: &state)
        var result = CommandResult(refusal: outcome.refusal)
        for effect in outcome.effects {
            carryOut(effect, &result)
            effectObserver?(effect)
        }
        return result
    }

    func carryOut(_ effect: Effect, _ result: inout CommandResult) {
        switch effect {
        case .capture:
            result.captured = true
            switch capture() {
            case .success(let shot): result.photoPath = shot.path
            case .failure(let refusal):
                setBanner(refusal.message)
                result.refusal = refusal.message
            }
        case .captureAt(let edge):
            result.captured = true
            switch capture(notBefore: edge, trigger: edge) {
            case .success(let shot): result.photoPath = shot.path
            case .failure(let refusal): result.refusal = refusal.message
            }
        case .refuseShutter(let why):
            result.captured = true
            setBanner(why)
            result.refusal = why
        case .switchLens:
            supervisor.switchLens(to: state.lensIndex)
        case .cameraControls:
            supervisor.setControls(cameraControls)
        case .lookChanged:
            pipeline.requestLook(currentPreset)
            intensityVisibleUntil = .after(seconds: 1.5)
        case .intensityChanged:
            intensityVisibleUntil = .after(seconds: 1.5)
        case .settingsChanged:
            saveSettings()
        case .modeChanged:
            gradeForMode()
        case .startRecording:
            switch startRecording() {
            case .success(let path): result.photoPath = path
            case .failure(let refusal):
                setBanner(refusal.message)
                result.refusal = refusal.message
                perform(.recordingEnded)
            }
        case .stopRecording(let reason):
            if let path = stopRecording(reason: reason) { result.photoPath = path }
        case .boothChanged:
            boothCopies = [:]
            reviewFrame = nil
            Log.info("photobooth mode \(state.booth ? "on" : "off")")
        case .boothTrigger:
            if state.session?.phase == .attract { boothCopies = [:] }
            let pressed = perform(.boothPress(now: MonotonicClock.now()))
            result.photoPath = result.photoPath ?? pressed.photoPath
            result.refusal = result.refusal ?? pressed.refusal
        case .booth(let action):
            carryOut(action, &result)
        case .flashChanged:
            setFlash(state.flash)
        case .saveInterval:
            saveInterval()
        case .intervalSkipped(let slot, let reason):
            Log.warning("interval: slot \(slot + 1) skipped (\(reason))")
        case .intervalEnded(let taken, let skipped, let stopped):
            Log.info("interval: \(stopped ? "stopped" : "done") (\(taken) taken, \(skipped) skipped)")
        case .writeSnapshot(let path):
            do {
                try Snapshot.write(pipeline.composed, to: path, allowed: config.snapshot.directories,
                                   kept: [config.storage.directory, config.state.directory])
            } catch {
                result.refusal = "\(error)"
            }
        case .injectFault(let fault, let seconds):
            guard let faults else {
                result.refusal = "simulate needs the simulated camera (loopixd --simulate)"
                return
            }
            switch fault {
            case .stall: faults.inject(seconds > 0 ? .stall(seconds: seconds) : .none)
            case .disconnect: faults.inject(seconds > 0 ? .disappear : .none)
            }
            if fault == .disconnect && seconds > 0 {
                // The camera comes back after `seconds`, as if replugged.
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { faults.inject(.none) }
            }
            Log.info("simulated camera: \(fault.rawValue) for \(seconds) s")
        }
    }

    func saveSettings() {
        let settings = Settings(preset: state.presetID, intensities: state.intensities, lensIndex: state.lensIndex, ev: state.ev,
                                grid: state.grid, handedness: state.handedness, onboardingDone: state.onboardingDone)
        let store = settingsStore
        saveQueue.async {
            do { try store.save(settings) } catch { Log.error("settings not saved: \(error)") }
        }
    }
}
