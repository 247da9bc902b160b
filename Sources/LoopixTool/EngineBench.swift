import Controls
import FilmCore
import Foundation
import System
import Viewfinder
import PixelFormats
import Raster

/// Rounds of measurements: each round runs every measurement once, in the order they were
/// added (ours and the peers' interleaved), so that a noisy neighbour hits them all alike.
/// A figure is the median of its rounds; a ratio is the median of the per-round ratios.
struct Rounds {
    private var order: [(key: String, measure: () throws(ToolError) -> Double)] = []
    private(set) var samples: [String: [Double]] = [:]

    mutating func add(_ key: String, _ measure: @escaping () throws(ToolError) -> Double) {
        order.append((key, measure))
    }

    mutating func run(_ count: Int) throws(ToolError) {
        for _ in 0..<count {
            for (key, measure) in order { samples[key, default: []].append(try measure()) }
        }
    }

    func stats(_ key: String) -> Stats { Stats(samples[key] ?? []) }

    /// Per round `combine(a, b)`: ratios and differences of figures measured side by side.
    func paired(_ a: String, _ b: String, _ combine: (Double, Double) -> Double) -> Stats {
        Stats(zip(samples[a] ?? [], samples[b] ?? []).map(combine))
    }
}

/// A target's verdict: met, not met, or undecided because the figure deciding it is noisy.
struct Target {
    let text: String
    let met: Bool?
    var noisy = false

    var line: String {
        let verdict = met == nil ? "n/a" : noisy ? "noisy: \(met! ? "met" : "not met") by its median, undecided" : met! ? "met" : "NOT met"
        return "  [\(verdict)] \(text)"
    }
}

/// The engine part of `loopix bench`: ns per pixel of the film engine's stages on one core and
/// on all, against memcpy and ffmpeg's filters, and the whole preview frame (camera frame
/// conversion, film engine, interface, scan-out conversion), at 800×480, 720p and 12 MP.
enum EngineBench {
    struct Figures {
        var rows: [(String, String)] = []
        var targets: [Target] = []
        /// Estimates for a Pi (see `PiEstimate`), a line each.
        var piRows: [String] = []
    }

    struct Settings {
        /// Rounds of every measurement.
        let rounds: Int
        /// Seconds each of our measurements repeats its body within one round.
        let window: Double
        /// Seconds of CPU work each ffmpeg run does within one round.
        let peerWork: Double

        init(quick: Bool) {
            rounds = quick ? 5 : 7
            window = quick ? 0.1 : 0.3
            peerWork = quick ? 0.5 : 2
        }
    }

    static func run(photos: [RGBImage], preset: Preset, work: String, cubePath: String, ffmpeg: String?,
                    settings: Settings) throws(ToolError) -> Figures {
        var f = Figures()
        let cores = ProcessInfo.processInfo.activeProcessorCount
        for (name, width, height) in [("800×480", 800, 480), ("720p", 1280, 720), ("12 MP", 4056, 3040)] {
            let frame = BenchCommand.tile(photos, width: width, height: height)
            let buffers = Buffers(frame)
            let pixels = Double(width * height)
            var rounds = Rounds()
            func ours(_ key: String, _ body: @escaping () -> Void) {
                rounds.add(key) { () throws(ToolError) -> Double in perPixel(window: settings.window, pixels: pixels, body) }
            }
            func engine(_ key: String, _ look: FilmLook, _ stages: RenderStages, threads: Int) {
                let renderer = FilmRenderer(look: look, width: width, height: height)
                var n: UInt64 = 0
                ours(key) {
                    n &+= 1
                    renderer.render(source: buffers.source, destination: buffers.destination, grainFrame: n, threads: threads, stages: stages)
                }
            }
            let full = FilmLook(preset: preset, settings: RenderSettings(intensity: 1))
            let blended = FilmLook(preset: preset, settings: RenderSettings(intensity: 0.8))
            var unhalated = BuiltinPresets.cinestill800t
            unhalated.halation.amount = 0
            ours("memcpy") { buffers.destination.update(from: buffers.source, count: buffers.count) }
            engine("lut", full, .color, threads: 1)
            engine("grain", blended, [.grain, .blend], threads: 1)
            engine("full", full, .all, threads: 1)
            engine("full all", full, .all, threads: cores)
            // The light stage on every core (what the preview pays per frame for it): CineStill
            // 800T's halation and a date stamp, each timed with the light stage alone against the
            // same look without light (a copy of the frame), so that the difference is not lost
            // in the noise of two whole pipelines; and the whole pipeline with halation.
            let halated = FilmLook(preset: BuiltinPresets.cinestill800t, settings: RenderSettings(intensity: 1))
            engine("halo", halated, .all, threads: cores)
            engine("halo light", halated, .light, threads: cores)
            engine("no light", FilmLook(preset: unhalated, settings: RenderSettings(intensity: 1)), .light, threads: cores)
            engine("stamp light", FilmLook(preset: unhalated, settings: RenderSettings(intensity: 1, dateStamp: "'98 11 30")), .light, threads: cores)
            var previews: [PreviewFrame] = []
            if name != "12 MP" {
                for (key, threads) in [("preview 1", 1), ("preview", cores)] {
                    let preview = PreviewFrame(frame: frame, look: full, presetName: preset.name, threads: threads)
                    rounds.add(key) { () throws(ToolError) -> Double in try preview.time(window: settings.window) }
                    previews.append(preview)
                }
            }
            var peer: FFmpegPeer?
            if let ffmpeg, name != "800×480" {
                let p = try FFmpegPeer(ffmpeg, frame: frame, work: work, cube: cubePath, cpuSeconds: settings.peerWork)
                for (key, _) in FFmpegPeer.filters { rounds.add("ff \(key)") { () throws(ToolError) -> Double in try p.measure(key) } }
                peer = p
            }
            try rounds.run(settings.rounds)

            func ns(_ key: String) -> String { rounds.stats(key).text(" ns/pixel") }
            func times(_ s: Stats) -> String { s.text("×") }
            func ms(_ s: Stats) -> String { Stats(s.values.map { $0 * pixels / 1e6 }).text(" ms a frame") }
            func cost(_ with: String, _ without: String) -> String {
                rounds.paired(with, without, -).costText(" ms a frame", scale: pixels / 1e6)
            }
            f.rows.append(("\(name) memcpy", ns("memcpy")))
            f.rows.append(("\(name) colour LUT, 1 core", ns("lut") + "  (\(times(rounds.paired("lut", "memcpy", /))) memcpy)"))
            f.rows.append(("\(name) grain + blend, 1 core", ns("grain")))
            f.rows.append(("\(name) full pipeline, 1 core", ns("full") + "  (\(times(rounds.paired("full", "memcpy", /))) memcpy)"))
            let speedUp = rounds.paired("full", "full all", /)
            f.rows.append(("\(name) full pipeline, \(cores) cores", "wall " + ns("full all") + "  (\(times(speedUp)) speed-up)"))
            f.rows.append(("\(name) halation (CineStill 800T), \(cores) cores",
                           cost("halo light", "no light") + "  (pipeline \(ms(rounds.stats("halo"))) with it)"))
            f.rows.append(("\(name) date stamp, \(cores) cores", cost("stamp light", "no light")))
            if name != "12 MP" {
                let fps1 = Stats(rounds.stats("full").values.map { 1e9 / ($0 * pixels) })
                let fpsAll = Stats(rounds.stats("full all").values.map { 1e9 / ($0 * pixels) })
                f.rows.append(("\(name) frames per second, 1 core / \(cores) cores", fps1.text(" fps", decimals: 0) + " / " + fpsAll.text(" fps", decimals: 0)))
                let preview = rounds.stats("preview"), one = rounds.stats("preview 1")
                f.rows.append(("\(name) preview frame (camera YUV → RGB, engine, interface, scan-out), 1 core / \(cores)",
                               one.text(" ms") + " / " + preview.text(" ms") + " of the 33.3 ms budget"))
                for preview in previews {
                    f.rows.append(("\(name) preview frame's parts, \(preview.threads) core\(preview.threads == 1 ? "" : "s") (means)", preview.partsText))
                }
                f.piRows.append("\(name) preview frame: " + PiEstimate.boards.map { board in
                    String(format: "%@ %.0f ms", board.name, board.allCores(oneCoreHere: one.median))
                }.joined(separator: ", "))
                if name == "720p" {
                    f.targets.append(Target(text: "preview frame at 1280×720 ≤ 8 ms on \(cores) cores", met: preview.median <= 8, noisy: preview.noisy))
                }
                // A new output size (or look) needs its grain texture: made once, off the frame path.
                let model = GrainModel(preset.grain.isOff ? BuiltinPresets.portra.grain : preset.grain)
                let scale = FrameWindow.whole(width, height).filmScale
                let texture = Stats((0..<3).map { _ in StillBench.seconds { _ = GrainTexture(model: model, seed: 1, scale: scale) } * 1e3 })
                f.rows.append(("\(name) grain texture (once per size and look)", texture.text(" ms", decimals: 1)))
            }
            if cores >= 2 && name != "800×480" {
                f.targets.append(Target(text: "\(name): two cores ≥ 1.8× one core", met: speedUp.median >= 1.8, noisy: speedUp.noisy))
            }
            if let peer {
                for (key, filter) in FFmpegPeer.filters {
                    let clamped = peer.clamped.contains(key) ? " (clamped: no more than the baseline's noise)" : ""
                    var row = ns("ff \(key)") + clamped
                    switch key {
                    case "lut":
                        let r = rounds.paired("ff lut", "lut", /)
                        row += "  → engine LUT \(times(r)) faster"
                        f.targets.append(Target(text: "\(name): colour LUT ≥ 4× faster than ffmpeg's lut3d", met: r.median >= 4, noisy: r.noisy))
                    case "noise":
                        let r = rounds.paired("grain", "ff noise", /)
                        row += "  → engine grain + blend \(times(r)) its time"
                        f.targets.append(Target(text: "\(name): grain + blend ≤ 2× ffmpeg's noise", met: r.median <= 2, noisy: r.noisy))
                    case "chain":
                        let r = rounds.paired("ff chain", "full", /)
                        row += "  → engine pipeline \(times(r)) faster"
                        f.targets.append(Target(text: "\(name): full pipeline ≥ 4× faster than ffmpeg's chain", met: r.median >= 4, noisy: r.noisy))
                    default: break
                    }
                    f.rows.append(("\(name) ffmpeg \(filter), 1 thread", row))
                }
            }
            let grain = rounds.stats("grain")
            f.targets.append(Target(text: "\(name): grain + blend ≤ 1.5 ns/pixel on one core", met: grain.median <= 1.5, noisy: grain.noisy))
        }
        return f
    }

    /// Repeats `body` for at least `window` seconds (at least once): mean ns per pixel.
    static func perPixel(window: Double, pixels: Double, _ body: () -> Void) -> Double {
        let start = MonotonicClock.now()
        var runs = 0.0, elapsed = 0.0
        repeat {
            body()
            runs += 1
            elapsed = Double(MonotonicClock.now() - start) / 1e9
        } while elapsed < window
        return elapsed / runs / pixels * 1e9
    }

    /// The frame the stages read and the buffer they write, allocated once per size.
    final class Buffers {
        let count: Int
        let source: UnsafeMutablePointer<UInt8>
        let destination: UnsafeMutablePointer<UInt8>

        init(_ frame: RGBImage) {
            count = frame.pixels.count
            source = .allocate(capacity: count)
            destination = .allocate(capacity: count)
            frame.pixels.withUnsafeBufferPointer { source.initialize(from: $0.baseAddress!, count: count) }
            destination.initialize(repeating: 0, count: count)
        }

        deinit {
            source.deallocate()
            destination.deallocate()
        }
    }

    /// One preview frame as the daemon makes it: the camera's YUV 4:2:0 frame converted to RGB,
    /// the film engine on every core, the on-screen interface drawn over it, and the result
    /// converted into an XRGB8888 scan-out buffer.
    final class PreviewFrame {
        private let yuv: [UInt8]
        private let converter: FrameConverter
        private var camera: RGBImage
        private var composed: RGBImage
        private var overlay: OverlayRenderer
        private let model: OverlayModel
        private let renderer: FilmRenderer
        private let map: ScanoutMap
        private let scanout: UnsafeMutableRawPointer
        let threads: Int
        private var grainFrame: UInt64 = 0
        /// Nanoseconds spent in each part over all frames made: YUV → RGB, engine, interface, scan-out.
        private var partNs: [UInt64] = [0, 0, 0, 0]
        private var frames: UInt64 = 0

        init(frame: RGBImage, look: FilmLook, presetName: String, threads: Int) {
            let w = frame.width, h = frame.height
            yuv = Self.i420(frame)
            converter = FrameConverter(format: .yuv420, sourceWidth: w, sourceHeight: h, stride: w, width: w, height: h)
            camera = RGBImage(width: w, height: h)
            composed = RGBImage(width: w, height: h)
            overlay = OverlayRenderer(width: w, height: h)
            var m = OverlayModel()
            m.grid = true
            m.evScaleVisible = true
            m.ev = 0.7
            m.presetName = presetName
            m.lensLabel = "26 mm"
            m.shotsRemaining = 1234
            model = m
            renderer = FilmRenderer(look: look, width: w, height: h)
            map = ScanoutMap(sourceWidth: w, sourceHeight: h, bufferWidth: w, bufferHeight: h, rotation: .none)
            scanout = .allocate(byteCount: w * h * 4, alignment: 64)
            self.threads = threads
        }

        deinit { scanout.deallocate() }

        /// Mean ms a frame over at least `window` seconds.
        func time(window: Double) throws(ToolError) -> Double {
            var failure: (any Error)?
            let nsPerPixel = EngineBench.perPixel(window: window, pixels: 1) {
                do { try frame() } catch { failure = error }
            }
            if let failure { throw ToolError("bench: preview frame: \(failure)") }
            return nsPerPixel / 1e6
        }

        /// Where a frame's time goes, in mean ms a frame.
        var partsText: String {
            let names = ["YUV → RGB", "engine", "interface", "scan-out"]
            return zip(names, partNs).map { String(format: "%@ %.2f ms", $0, Double($1) / Double(max(1, frames)) / 1e6) }.joined(separator: ", ")
        }

        private func frame() throws {
            let t0 = MonotonicClock.now()
            try yuv.withUnsafeBytes { try converter.convert($0, into: &camera, threads: threads) }
            let t1 = MonotonicClock.now()
            grainFrame &+= 1
            camera.pixels.withUnsafeBufferPointer { src in
                composed.pixels.withUnsafeMutableBufferPointer { dst in
                    renderer.render(source: src.baseAddress!, destination: dst.baseAddress!, grainFrame: grainFrame, threads: threads)
                }
            }
            let t2 = MonotonicClock.now()
            overlay.draw(model, on: &composed)
            let t3 = MonotonicClock.now()
            map.convert(composed, into: scanout, pitch: composed.width * 4, format: .xrgb8888, threads: threads)
            let t4 = MonotonicClock.now()
            partNs[0] += t1 - t0
            partNs[1] += t2 - t1
            partNs[2] += t3 - t2
            partNs[3] += t4 - t3
            frames += 1
        }

        /// The frame as a camera delivers it for the preview: planar YUV 4:2:0 (BT.601, full
        /// range), rows `w` bytes apart, chroma `w / 2` wide and `(h + 1) / 2` high (as
        /// `FrameConverter` reads it), each sample the pixel at its top left.
        static func i420(_ image: RGBImage) -> [UInt8] {
            let w = image.width, h = image.height, cw = w / 2, ch = (h + 1) / 2
            var out = [UInt8](repeating: 128, count: w * h + 2 * cw * ch)
            func clamp(_ v: Double) -> UInt8 { UInt8(min(max(v.rounded(), 0), 255)) }
            for y in 0..<h {
                for x in 0..<w {
                    let p = image[x, y]
                    let (r, g, b) = (Double(p.x), Double(p.y), Double(p.z))
                    out[y * w + x] = clamp(0.299 * r + 0.587 * g + 0.114 * b)
                    if x % 2 == 0 && y % 2 == 0 && x / 2 < cw {
                        let c = (y / 2) * cw + x / 2
                        out[w * h + c] = clamp(128 - 0.168736 * r - 0.331264 * g + 0.5 * b)
                        out[w * h + cw * ch + c] = clamp(128 + 0.5 * r - 0.418688 * g - 0.081312 * b)
                    }
                }
            }
            return out
        }
    }
}
