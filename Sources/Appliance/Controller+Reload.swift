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

/// SIGHUP: the configuration read again, what can change while running applied.
extension Controller {
    /// SIGHUP: takes over what can change while running, names what needs a restart.
    func reload() {
        guard let path = configPath else {
            Log.info("SIGHUP: no configuration file to reload (running on defaults)")
            return
        }
        let fresh: Config
        do { fresh = try Config.load(path: path) } catch {
            Log.error("\(error); keeping the previous configuration")
            return
        }
        let freshPresets = Self.loadPresets(fresh)
        if let problem = fresh.presetProblem(lookIDs: freshPresets.map(\.id)) {
            Log.error("\(problem); keeping the previous configuration")
            return
        }
        let changed = fresh.changedKeys(from: config)
        let later = changed.filter { !Config.reloadableKeys.contains($0) }
        let applied = changed.filter { Config.reloadableKeys.contains($0) }
        // Apply the live ones; keep the rest as they run now.
        var next = config
        next.storage.reserveMB = fresh.storage.reserveMB
        next.capture = fresh.capture
        next.license = fresh.license
        next.snapshot = fresh.snapshot
        next.defaults = fresh.defaults
        next.video.bitrateMbps = fresh.video.bitrateMbps
        next.video.encoder = fresh.video.encoder
        next.video.x264Preset = fresh.video.x264Preset
        next.video.keyframeInterval = fresh.video.keyframeInterval
        next.video.audioDevice = fresh.video.audioDevice
        next.video.audioChannels = fresh.video.audioChannels
        next.video.audioSampleRate = fresh.video.audioSampleRate
        if next.capture.format != config.capture.format || next.capture.keepOriginal != config.capture.keepOriginal
            || next.capture.raw != config.capture.raw {
            sizeEstimate = PhotoSizeEstimate()   // what was learnt was for other files
        }
        config = next
        storage.reserveBytes = Int64(next.storage.reserveMB) * 1_048_576
        captures.reconfigure(capacity: Self.queueCapacity(next, lenses: supervisor.lenses), encoding: Self.encoding(next))
        perform(.setDefaultIntensity(next.defaults.intensity / 100))
        if applied.contains(where: { $0.hasPrefix("license.") }) { licensed = Self.checkLicense(next) }
        // The user presets are read again (a look may have been added), wherever they are now.
        next.presetsDirectory = fresh.presetsDirectory
        config = next
        presets = freshPresets
        rules = StateRules(presetIDs: presets.map(\.id), lensCount: supervisor.lenses.count, boothSettings: config.booth)
        if !presets.contains(where: { $0.id == state.presetID }) {
            Log.warning("look \(state.presetID) is gone; back to \(presets.first?.id ?? "clean")")
            perform(.selectPreset(presets.first?.id ?? "clean"))
        } else {
            pipeline.requestLook(currentPreset, again: true)
        }
        settingsStore.retry()
        guard !changed.isEmpty else {
            Log.info("reloaded \(path): nothing changed")
            return
        }
        var parts: [String] = []
        if !applied.isEmpty { parts.append("applied \(applied.joined(separator: ", "))") }
        if !later.isEmpty { parts.append("needs a restart to take effect: \(later.joined(separator: ", "))") }
        Log.info("reloaded \(path): " + parts.joined(separator: "; "))
    }
}
