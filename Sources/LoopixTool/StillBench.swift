import ControlProtocol
import FilmCore
import Foundation
import ImageFiles
import StrictJSON
import System
import Raster

/// The photo part of `loopix bench` (`--only still`): what a photo costs from the still to the
/// saved file at 12 MP (a Camera Module 3 / HQ Camera) and 8 MP (Camera Module 2), on one core
/// and on all; the HEIC save against heif-enc at the same quality and x265 preset; shutter to
/// ready on a running loopixd; and file size against quality for three stocks, with how much of
/// the grain each keeps. Medians of interleaved repetitions with their spread.
enum StillBench {
    struct Figures {
        var rows: [(String, String)] = []
        var targets: [(String, Bool?)] = []
        /// Per size: still-to-saved on all cores, seconds (for the Pi estimates).
        var stillToSaved: [(name: String, oneCore: Double, allCores: Double)] = []
    }

    static let sizes = [("12 MP", 4056, 3040), ("8 MP", 3280, 2464)]

    static func run(photos: [RGBImage], preset: Preset, work: String, repetitions: Int, quick: Bool) throws(ToolError) -> Figures {
        var f = Figures()
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let look = FilmLook(preset: preset, settings: RenderSettings(intensity: 1))
        let heifEnc = Subprocess.find("heif-enc")
        let quality = HEICOptions.defaultQuality, x265 = HEICOptions().x265Preset
        for (name, width, height) in sizes {
            let still = BenchCommand.tile(photos, width: width, height: height)
            let renderer = FilmRenderer(look: look, width: width, height: height)
            var developed = still
            renderer.render(&developed, grainFrame: 0, threads: cores)
            let png = work + "/developed-\(width).png"
            if heifEnc != nil {
                do { try ImageWriter.write(developed, to: png, format: .png, replace: true) } catch { throw ToolError("\(error)") }
            }
            var develop1: [Double] = [], developAll: [Double] = [], save1: [Double] = [], saveAll: [Double] = []
            var jpeg: [Double] = [], theirs: [Double] = [], theirsAlike: [Double] = [], theirsAlikeOneThread: [Double] = []
            var heicBytes = 0, jpegBytes = 0
            for _ in 0..<repetitions {
                for threads in Set([1, cores]).sorted() {
                    var image = still
                    let t = seconds { renderer.render(&image, grainFrame: 0, threads: threads) }
                    if threads == 1 { develop1.append(t) }
                    if threads == cores { developAll.append(t) }
                }
                for encoders in Set([1, cores]).sorted() {
                    let options = HEICOptions(quality: quality, x265Preset: x265, encoders: encoders)
                    var bytes: [UInt8] = []
                    let t = try timed { () throws(ToolError) in bytes = try encode(developed, .heic, options) }
                    heicBytes = bytes.count
                    if encoders == 1 { save1.append(t) }
                    if encoders == cores { saveAll.append(t) }
                }
                if let heifEnc {
                    // heif-enc as it comes (libheif's x265 plugin puts its own CTU and intra TU
                    // depth in place of the preset's), then told the preset's own, as ours is.
                    func heifEncSeconds(_ told: [String]) throws(ToolError) -> Double {
                        let r = try Subprocess.run(heifEnc, ["-q", "\(Int(quality * 100))", "-p", "preset=\(x265)", "-o", work + "/heif-enc.heic"]
                                                   + told + [png])
                        guard r.status == 0 else { throw ToolError("bench: heif-enc failed (exit \(r.status))") }
                        return r.seconds
                    }
                    theirs.append(try heifEncSeconds([]))
                    let depths = HEICOptions.x265PresetDepths(x265)
                    let alike = depths.map { ["-p", "tu-intra-depth=\($0.intraTUDepth)", "-p", "x265:ctu=\($0.ctu)"] } ?? []
                    theirsAlike.append(try heifEncSeconds(alike))
                    // And on one x265 thread: how much x265's own pool gains from the cores.
                    if name == "12 MP" { theirsAlikeOneThread.append(try heifEncSeconds(alike + ["-p", "x265:pools=1"])) }
                }
                var bytes: [UInt8] = []
                jpeg.append(try timed { () throws(ToolError) in bytes = try encode(developed, .jpeg, HEICOptions()) })
                jpegBytes = bytes.count
            }
            let d1 = Stats(develop1), dAll = Stats(developAll), s1 = Stats(save1), sAll = Stats(saveAll)
            f.rows.append(("\(name) develop (film engine), 1 core / \(cores)", "\(d1.text2) / \(dAll.text2) s"))
            f.rows.append(("\(name) HEIC save q\(Int(quality * 100)), 1 encoder / \(cores)",
                           "\(s1.text2) / \(sAll.text2) s, \(heicBytes / 1_000_000).\(heicBytes / 100_000 % 10) MB"))
            f.rows.append(("\(name) JPEG save q\(HEICOptions.defaultJPEGQuality)", "\(Stats(jpeg).text2) s, \(jpegBytes / 1_000_000).\(jpegBytes / 100_000 % 10) MB"))
            let toSaved1 = d1.median + s1.median, toSavedAll = dAll.median + sAll.median
            f.rows.append(("\(name) still to saved HEIC, 1 core / \(cores)", String(format: "%.2f / %.2f s", toSaved1, toSavedAll)))
            f.stillToSaved.append((name, toSaved1, toSavedAll))
            if !theirs.isEmpty {
                // Per repetition: our save on every core over heif-enc's run beside it.
                let ratio = Stats(zip(saveAll, theirs).map(/)), alike = Stats(zip(saveAll, theirsAlike).map(/))
                f.rows.append(("\(name) heif-enc, same image (PNG in), same quality and preset",
                               "\(Stats(theirs).text2) s → our save \(String(format: "%.2f", ratio.median))× its time\(ratio.noisy ? " (noisy)" : "")"))
                f.rows.append(("\(name) heif-enc told the preset's CTU and intra TU depth, as ours",
                               "\(Stats(theirsAlike).text2) s → our save \(String(format: "%.2f", alike.median))× its time\(alike.noisy ? " (noisy)" : "")"))
                if !theirsAlikeOneThread.isEmpty {
                    // The tiles cost x265 the same instructions as one picture (README: Photos), so
                    // this speed-up is what heif-enc already has of the cores that ours uses too.
                    let pool = Stats(zip(theirsAlikeOneThread, theirsAlike).map(/))
                    f.rows.append(("\(name) heif-enc told alike, on one x265 thread (x265:pools=1)",
                                   "\(Stats(theirsAlikeOneThread).text2) s → its own pool \(String(format: "%.2f", pool.median))× faster on \(cores) cores\(pool.noisy ? " (noisy)" : "")"))
                }
                if name == "12 MP" { f.targets.append(("HEIC save ≤ 0.6× heif-enc's time (12 MP, \(cores) cores)", ratio.median <= 0.6)) }
            }
            if name == "12 MP" { f.targets.append(("12 MP still to saved ≤ 1.5 s (\(cores) cores)", toSavedAll <= 1.5)) }
        }
        if let daemon = try shutterToReady(work: work, presses: quick ? 3 : 6) {
            f.rows.append(("shutter to ready, loopixd on the simulated camera, 12 MP stills", "\(daemon.ready.text2.replacingOccurrences(of: " (", with: " ms ("))"))
            f.targets.append(("shutter to ready ≤ 100 ms", daemon.ready.max <= 100))
            f.rows.append(("shutter to photo saved, the same loopixd", daemon.saved.text(" s")))
            f.rows.append(("loopixd resident memory, 800×480 preview: steady / peak saving 12 MP photos",
                           String(format: "%.0f / %.0f MB", BenchCommand.mb(daemon.steadyRSS), BenchCommand.mb(daemon.peakRSS))))
            f.targets.append(("loopixd steady-state RSS ≤ 80 MB at 800×480", daemon.steadyRSS > 0 ? BenchCommand.mb(daemon.steadyRSS) <= 80 : nil))
        }
        f.rows += try sizeTable(photos: photos, work: work, quick: quick)
        return f
    }

    static func encode(_ image: RGBImage, _ format: ImageFormat, _ options: HEICOptions) throws(ToolError) -> [UInt8] {
        do { return try ImageWriter.encode(image, format: format, metadata: nil, heic: options, jpegQuality: HEICOptions.defaultJPEGQuality) } catch {
            throw ToolError("bench: \(error)")
        }
    }

    static func seconds(_ body: () -> Void) -> Double {
        let t0 = MonotonicClock.now()
        body()
        return Double(MonotonicClock.now() - t0) / 1e9
    }

    static func timed(_ body: () throws(ToolError) -> Void) throws(ToolError) -> Double {
        let t0 = MonotonicClock.now()
        try body()
        return Double(MonotonicClock.now() - t0) / 1e9
    }

    // MARK: Shutter to ready

    struct DaemonFigures {
        /// ms from a press to its reply.
        let ready: Stats
        /// Seconds from a press to the photo saved (polled every 20 ms).
        let saved: Stats
        /// Resident memory after 3 s of preview, before any photo, and the peak (VmHWM) after
        /// the photos were saved; bytes.
        let steadyRSS: Int, peakRSS: Int
    }

    /// ms from a `capture` request to its reply on a loopixd (beside this program) running the
    /// simulated camera at 12 MP, each press after the previous photo is saved, and the
    /// daemon's memory; nil when there is no loopixd.
    static func shutterToReady(work: String, presses: Int) throws(ToolError) -> DaemonFigures? {
        guard let daemon = DoctorCommand.daemonPath() else {
            BenchCommand.say("loopixd not found beside loopix: shutter to ready skipped")
            return nil
        }
        let dir = work + "/daemon", socket = dir + "/control.sock"
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try """
            { "board": "none", "camera": { "backend": "simulated", "simulatedStillWidth": 4056, "simulatedStillHeight": 3040 },
              "display": { "backend": "headless", "width": 800, "height": 480 }, "capture": { "queueLength": 2 },
              "storage": { "directory": "\(dir)/photos", "reserveMB": 0 }, "state": { "directory": "\(dir)/state" },
              "socket": { "path": "\(socket)" } }
            """.write(toFile: dir + "/loopix.json", atomically: true, encoding: .utf8)
        } catch { throw ToolError("bench: \(dir): \(error)") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: daemon)
        p.arguments = ["--config", dir + "/loopix.json"]
        p.standardError = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        do { try p.run() } catch { throw ToolError("bench: cannot start \(daemon): \(error)") }
        defer {
            p.terminate()
            p.waitUntilExit()
        }
        func status() -> [String: JSONValue]? {
            guard let line = try? ControlClient.send(line: #"{"cmd":"status"}"#, socketPath: socket, timeout: 5),
                  case .object(let o)? = try? JSONParser.parse(line) else { return nil }
            return Dictionary(uniqueKeysWithValues: o.members.map { ($0.key, $0.value) })
        }
        let up = Deadline.after(seconds: 30)
        while status()?["camera"] != .string("ok") {
            guard !up.hasPassed, p.isRunning else { throw ToolError("bench: loopixd did not come up on the simulated camera") }
            usleep(100_000)
        }
        usleep(3_000_000)
        let steady = residentBytes(p.processIdentifier, "VmRSS")
        var times: [Double] = [], toSaved: [Double] = []
        for n in 1...presses {
            let t0 = MonotonicClock.now()
            let reply: String
            do { reply = try ControlClient.send(line: #"{"cmd":"capture"}"#, socketPath: socket, timeout: 10) } catch {
                throw ToolError("bench: capture: \(error)")
            }
            times.append(Double(MonotonicClock.now() - t0) / 1e6)
            guard reply.contains("\"ok\":true") || reply.contains("\"ok\": true") else { throw ToolError("bench: capture refused: \(reply)") }
            let saved = Deadline.after(seconds: 60)
            while status()?["saved"]?.integer != n {
                guard !saved.hasPassed else { throw ToolError("bench: loopixd did not save photo \(n) within 60 s") }
                usleep(20_000)
            }
            toSaved.append(Double(MonotonicClock.now() - t0) / 1e9)
        }
        return DaemonFigures(ready: Stats(times), saved: Stats(toSaved), steadyRSS: steady, peakRSS: residentBytes(p.processIdentifier, "VmHWM"))
    }

    /// A field of /proc/PID/status in bytes (VmRSS: resident now; VmHWM: the peak), 0 if unreadable.
    static func residentBytes(_ pid: Int32, _ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let kb = line.dropFirst(field.count + 1).split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 0
            return kb * 1024
        }
        return 0
    }

    // MARK: Size against quality

    /// HEIC at five qualities and JPEG at 90, for a fine, a middle and a coarse stock: the
    /// 12 MP file's size (real photo detail) and the grain's RMS kept (a flat 18 % grey patch,
    /// developed with and without grain; RMS of the difference, decoded against developed).
    static func sizeTable(photos: [RGBImage], work: String, quick: Bool) throws(ToolError) -> [(String, String)] {
        var rows: [(String, String)] = []
        let qualities = quick ? [50, 70, 90] : [50, 60, 70, 80, 90]
        let still = BenchCommand.tile(photos, width: 4056, height: 3040)
        for preset in [BuiltinPresets.portra, BuiltinPresets.trix400, BuiltinPresets.delta3200] {
            var photo = still
            FilmRenderer(look: FilmLook(preset: preset), width: still.width, height: still.height)
                .render(&photo, grainFrame: 0, threads: ProcessInfo.processInfo.activeProcessorCount)
            let patch = GrainPatch(preset: preset)
            var cells: [String] = []
            for q in qualities {
                let options = HEICOptions(quality: Double(q) / 100)
                let size = try encode(photo, .heic, options).count
                let kept = try patch.kept(.heic, options)
                cells.append(String(format: "q%d %.1f MB %.0f %%", q, Double(size) / 1e6, kept * 100))
            }
            let jpegSize = try encode(photo, .jpeg, HEICOptions()).count
            let jpegKept = try patch.kept(.jpeg, HEICOptions())
            cells.append(String(format: "JPEG q%d %.1f MB %.0f %%", HEICOptions.defaultJPEGQuality, Double(jpegSize) / 1e6, jpegKept * 100))
            rows.append(("\(preset.name): 12 MP file, grain kept", cells.joined(separator: " · ")))
        }
        return rows
    }

    /// A flat grey patch developed with and without grain, to see what a file keeps of it.
    struct GrainPatch {
        static let width = 1024, height = 768
        let grainy: RGBImage, clean: RGBImage

        init(preset: Preset) {
            var grey = RGBImage(width: Self.width, height: Self.height)
            grey.pixels.withUnsafeMutableBytes { p in for i in 0..<p.count { p[i] = 118 } }
            func render(_ grain: Bool) -> RGBImage {
                var image = grey
                FilmRenderer(look: FilmLook(preset: preset, settings: RenderSettings(grainEnabled: grain)), width: Self.width, height: Self.height)
                    .render(&image, grainFrame: 0, threads: ProcessInfo.processInfo.activeProcessorCount)
                return image
            }
            grainy = render(true)
            clean = render(false)
        }

        /// The grain's RMS in luma (the image less the grainless one), away from the edges.
        func rms(_ image: RGBImage) -> Double {
            var sum = 0.0
            let w = Self.width, h = Self.height
            for y in 16..<(h - 16) {
                for x in 16..<(w - 16) {
                    let i = (y * w + x) * 3
                    let d = 0.2126 * (Double(image.pixels[i]) - Double(clean.pixels[i]))
                        + 0.7152 * (Double(image.pixels[i + 1]) - Double(clean.pixels[i + 1]))
                        + 0.0722 * (Double(image.pixels[i + 2]) - Double(clean.pixels[i + 2]))
                    sum += d * d
                }
            }
            return (sum / Double((w - 32) * (h - 32))).squareRoot()
        }

        /// The share of the grain's RMS the decoded file keeps.
        func kept(_ format: ImageFormat, _ options: HEICOptions) throws(ToolError) -> Double {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("loopix-grain-\(getpid()).\(format.fileExtension)").path
            defer { unlink(path) }
            do {
                try ImageWriter.write(grainy, to: path, format: format, heic: options, jpegQuality: HEICOptions.defaultJPEGQuality, replace: true)
                return rms(try ImageReader.read(path: path)) / rms(grainy)
            } catch { throw ToolError("bench: \(error)") }
        }
    }
}
