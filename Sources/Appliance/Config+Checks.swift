import ControlProtocol
import Controls
import Display
import FilmCore
import ImageFiles
import Foundation
import StrictJSON
import System
import Video
import PixelFormats

// MARK: Reloading and checking

extension Config {
    /// The keys (`section.field`, or a top-level key) whose values differ between `self` and
    /// `other`, in the file's order.
    public func changedKeys(from other: Config) -> [String] {
        var changed: [String] = []
        let ours = Mirror(reflecting: self), theirs = Mirror(reflecting: other)
        for (a, b) in zip(ours.children, theirs.children) {
            guard let key = a.label, !["source", "notes", "warnings"].contains(key) else { continue }
            let fieldsA = Mirror(reflecting: a.value), fieldsB = Mirror(reflecting: b.value)
            if fieldsA.displayStyle == .struct, !fieldsA.children.isEmpty {
                for (fa, fb) in zip(fieldsA.children, fieldsB.children) where "\(fa.value)" != "\(fb.value)" {
                    changed.append("\(key).\(fa.label ?? "?")")
                }
            } else if "\(a.value)" != "\(b.value)" {
                changed.append(key)
            }
        }
        return changed
    }

    /// Keys a running daemon takes over on SIGHUP; every other change waits for a restart.
    public static let reloadableKeys: Set<String> = [
        "storage.reserveMB", "capture.queueLength", "capture.format", "capture.heicQuality", "capture.jpegQuality",
        "capture.x265Preset", "capture.keepOriginal", "capture.raw", "capture.dateStamp",
        "license.publicKey", "license.file", "snapshot.directories",
        "defaults.preset", "defaults.intensity", "defaults.ev", "defaults.handedness", "defaults.grid",
        "presetsDirectory", "video.bitrateMbps", "video.encoder", "video.x264Preset", "video.keyframeInterval",
        "video.audioDevice", "video.audioChannels", "video.audioSampleRate",
    ]

    /// `defaults.preset` must name a look there is (built in, or in `presetsDirectory`); nil
    /// when it does.
    public func presetProblem(lookIDs: [String]) -> String? {
        guard !lookIDs.contains(defaults.preset) else { return nil }
        return "\(source): defaults.preset: there is no look \"\(defaults.preset)\" (built in, or a preset in \(presetsDirectory))"
    }

    /// The photo and state directories must be directories (or not exist yet, under directories).
    public func directoryProblems() -> [String] {
        [("storage.directory", storage.directory), ("state.directory", state.directory)].compactMap { key, path in
            Directories.problem(path).map { "\(source): \(key): \($0)" }
        }
    }

    /// What `loopixd --check-config` checks beyond the file itself, against this machine: the
    /// socket's group exists, the board file loads, the license key and file go together.
    /// One line per problem; empty when all is well.
    public func environmentProblems() -> [String] {
        var problems = directoryProblems()
        let looks = (try? PresetLibrary(directory: presetsDirectory))?.presets ?? BuiltinPresets.all
        if let problem = presetProblem(lookIDs: looks.map(\.id)) { problems.append(problem) }
        if let group = socket.group, ControlServer.lookupGroup(group) == nil {
            problems.append("\(source): socket.group: there is no group \"\(group)\" on this machine (create it, or leave socket.group out)")
        }
        if board != "none" && board != "auto" {
            do { _ = try Board.load(id: board, directory: boardsDirectory) } catch {
                problems.append("\(source): board: \(error)")
            }
        }
        return problems
    }
}

extension Config {
    /// Boards whose CPU cannot grade and encode 1080p30: they record 720p unless told otherwise.
    static let slowVideoBoards: Set<String> = ["pi-zero-2w", "pi3bplus"]

    /// What the recorder is asked for, with the defaults filled in for this board.
    public var videoSettings: VideoSettings {
        var v = VideoSettings()
        let slow = boardID.map(Self.slowVideoBoards.contains) ?? false
        v.width = video.width ?? (slow ? 1280 : 1920)
        v.height = video.height ?? (slow ? 720 : 1080)
        v.framesPerSecond = video.framesPerSecond
        // 16 Mbit/s at 1080p30 keeps grain; other sizes and rates in proportion.
        let scale = Double(v.width * v.height) / (1920 * 1080) * Double(v.framesPerSecond) / 30
        v.bitrate = Int((video.bitrateMbps ?? max(2, 16 * scale)) * 1_000_000)
        v.encoder = video.encoder
        v.x264Preset = video.x264Preset
        v.keyframeInterval = video.keyframeInterval
        if let device = video.audioDevice {
            var a = AudioSettings(device: device)
            a.channels = video.audioChannels
            a.sampleRate = video.audioSampleRate
            v.audio = a
        }
        return v
    }
}
