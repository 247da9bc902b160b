import FilmCore
import Foundation
import System
import ImageFiles

/// `loopix bench`: how fast and how lean the engine is, against ffmpeg, heif-enc and memcpy
/// measured in the same run on the same frames.
public enum BenchCommand {
    public static let help = """
    Usage: loopix bench [--preset PRESET] [--samples DIR] [--quick] [--only engine|video]

    Times the film engine on a 1280×720 and a 4056×3040 (12 MP) frame made from real photos
    (DIR, default ../shared/samples or $LOOPIX_SAMPLES; a synthetic scene when there are none):
    ns per pixel on one core for the colour LUT alone, grain + blend, and the full pipeline;
    720p frames per second on one core and on all cores; time and peak memory of a 12 MP
    develop + HEIC save. In the same run it times ffmpeg (lut3d tetrahedral on the look's .cube,
    noise, vignette, the three chained), heif-enc at the same quality and x265 preset, and memcpy,
    and prints the ratios against the targets. Video: a recorded frame's cost (grade, RGB → YUV,
    H.264) at 720p30 and 1080p30 on one core and all, against ffmpeg's libx264 on the same
    frames. Run it from a release build
    (`swift build -c release --product loopix`).
    """

    struct Timing {
        let label: String
        let nsPerPixel: Double
    }

    public static func run(_ words: [String]) throws(ToolError) {
        let args = try Arguments(words, valued: ["--preset": "preset", "-p": "preset", "--samples": "samples", "--only": "only"],
                                 flags: ["--quick": "quick"])
        let only = args.value("only")
        guard only == nil || ["engine", "video", "still"].contains(only!) else {
            throw .usage("bench --only takes engine, video or still, not \"\(only!)\"")
        }
        guard args.operands.isEmpty else { throw .usage("bench: unexpected argument \"\(args.operands[0])\"") }
        let preset = try PresetLibrary.load(directory: nil).look(args.value("preset") ?? "portra")
        let quick = args.flag("quick")
        let minimumSeconds = quick ? 0.2 : 1.0
        #if DEBUG
        say("warning: this is a debug build; numbers are 10–100× too slow (swift build -c release --product loopix)")
        #endif
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("loopix-bench-\(getpid())").path
        do { try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true) } catch {
            throw ToolError("\(work): cannot create (\(PresetLibrary.reason(error)))")
        }
        defer { try? FileManager.default.removeItem(atPath: work) }

        let (photos, source) = loadPhotos(args.value("samples"))
        say("loopix bench — preset \(preset.name); frames from \(source); \(ProcessInfo.processInfo.activeProcessorCount) cores")
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let full = FilmLook(preset: preset, settings: RenderSettings(intensity: 1))
        let blended = FilmLook(preset: preset, settings: RenderSettings(intensity: 0.8))
        let cubePath = work + "/look.cube"
        do { try full.cube().text.write(toFile: cubePath, atomically: true, encoding: .utf8) } catch {
            throw ToolError("\(cubePath): cannot write (\(PresetLibrary.reason(error)))")
        }
        let ffmpeg = Subprocess.find("ffmpeg")
        if ffmpeg == nil { say("ffmpeg not found: ffmpeg comparisons skipped (apt-get install ffmpeg)") }

        if only == "still" {
            try runStill(photos: photos, preset: preset, work: work, quick: quick)
            return
        }
        if only == "video" {
            try runVideo(photos: photos, preset: preset, work: work, quick: quick, ffmpeg: ffmpeg)
            return
        }
        var rows: [(String, String)] = []
        var results: [String: Double] = [:]
        for (name, width, height) in [("800×480", 800, 480), ("720p", 1280, 720), ("12 MP", 4056, 3040)] {
            let frame = tile(photos, width: width, height: height)
            let pixels = Double(width * height)
            var out = [UInt8](repeating: 0, count: frame.pixels.count)
            let fullRenderer = FilmRenderer(look: full, width: width, height: height)
            let blendRenderer = FilmRenderer(look: blended, width: width, height: height)
            func measure(_ body: () -> Void) -> Double { bestTime(minimumSeconds: minimumSeconds, body) / pixels * 1e9 }
            let memcpyNs = frame.pixels.withUnsafeBytes { src in
                out.withUnsafeMutableBytes { dst in measure { dst.copyMemory(from: src) } }
            }
            func engine(_ r: FilmRenderer, _ stages: RenderStages, threads: Int = 1) -> Double {
                frame.pixels.withUnsafeBufferPointer { src in
                    out.withUnsafeMutableBufferPointer { dst in
                        var n: UInt64 = 0
                        return measure {
                            n &+= 1
                            r.render(source: src.baseAddress!, destination: dst.baseAddress!, grainFrame: n, threads: threads, stages: stages)
                        }
                    }
                }
            }
            let lut = engine(fullRenderer, .color)
            let grain = engine(blendRenderer, [.grain, .blend])
            let pipeline = engine(fullRenderer, .all)
            let pipelineAll = engine(fullRenderer, .all, threads: cores)
            results["\(name) lut"] = lut
            results["\(name) grain"] = grain
            results["\(name) full"] = pipeline
            results["\(name) full all"] = pipelineAll
            rows.append(("\(name) memcpy", ns(memcpyNs)))
            rows.append(("\(name) colour LUT, 1 core", ns(lut) + "  (\(x(lut / memcpyNs)) memcpy)"))
            rows.append(("\(name) grain + blend, 1 core", ns(grain)))
            rows.append(("\(name) full pipeline, 1 core", ns(pipeline) + "  (\(x(pipeline / memcpyNs)) memcpy)"))
            rows.append(("\(name) full pipeline, \(cores) cores", ns(pipelineAll) + " wall  (\(x(pipeline / pipelineAll)) speed-up)"))
            // The light stage: CineStill 800T with and without its halation, and a date stamp,
            // each the whole pipeline on every core (what the preview pays per frame).
            let halation = FilmLook(preset: BuiltinPresets.cinestill800t, settings: RenderSettings(intensity: 1))
            var unhalated = BuiltinPresets.cinestill800t
            unhalated.halation.amount = 0
            let noHalation = FilmLook(preset: unhalated, settings: RenderSettings(intensity: 1))
            let stamped = FilmLook(preset: preset, settings: RenderSettings(intensity: 1, dateStamp: "'98 11 30"))
            let withHalo = engine(FilmRenderer(look: halation, width: width, height: height), .all, threads: cores)
            let withoutHalo = engine(FilmRenderer(look: noHalation, width: width, height: height), .all, threads: cores)
            let withStamp = engine(FilmRenderer(look: stamped, width: width, height: height), .all, threads: cores)
            func ms(_ nsPerPixel: Double) -> String { String(format: "%.2f ms a frame", nsPerPixel * pixels / 1e6) }
            rows.append(("\(name) halation (CineStill 800T), \(cores) cores",
                         ms(withHalo - withoutHalo) + "  (pipeline \(ms(withHalo)) with it, \(ms(withoutHalo)) without)"))
            rows.append(("\(name) date stamp, \(cores) cores", ms(withStamp - pipelineAll) + "  (pipeline \(ms(withStamp)) with it)"))
            if name != "12 MP" {
                rows.append(("\(name) frames per second, 1 core", String(format: "%.0f fps", 1e9 / (pipeline * pixels))))
                rows.append(("\(name) frames per second, \(cores) cores", String(format: "%.0f fps", 1e9 / (pipelineAll * pixels))))
                // A new output size (or look) needs its grain texture: made once, off the frame path.
                let model = GrainModel(preset.grain.isOff ? BuiltinPresets.portra.grain : preset.grain)
                let scale = FrameWindow.whole(width, height).filmScale
                let seconds = bestTime(minimumSeconds: minimumSeconds) { _ = GrainTexture(model: model, seed: 1, scale: scale) }
                rows.append(("\(name) grain texture (once per size and look)", String(format: "%.1f ms", seconds * 1e3)))
            }
            if let ffmpeg, name != "800×480" {
                let f = try ffmpegTimes(ffmpeg, frame: frame, cube: cubePath, work: work, frames: name == "720p" ? (quick ? 10 : 40) : (quick ? 2 : 6))
                results["\(name) ff lut"] = f.lut
                results["\(name) ff noise"] = f.noise
                results["\(name) ff chain"] = f.chain
                rows.append(("\(name) ffmpeg lut3d tetrahedral, 1 thread", ns(f.lut) + "  → engine LUT \(x(f.lut / lut)) faster"))
                rows.append(("\(name) ffmpeg noise alls=20:allf=t", ns(f.noise) + "  → engine grain + blend \(x(grain / f.noise)) its time"))
                rows.append(("\(name) ffmpeg vignette", ns(f.vignette)))
                rows.append(("\(name) ffmpeg lut3d,noise,vignette", ns(f.chain) + "  → engine pipeline \(x(f.chain / pipeline)) faster"))
            }
        }
        // 12 MP develop + HEIC save, in a child process so its peak memory is its own.
        let big = tile(photos, width: 4056, height: 3040)
        let input = work + "/12mp.jpg", output = work + "/12mp.heic"
        do { try ImageWriter.write(big, to: input, format: .jpeg, jpegQuality: 95, replace: true) } catch { throw ToolError("\(error)") }
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let develop = try Subprocess.run(me, ["develop", input, "-o", output, "-p", preset.id, "--force"], keepStderr: true)
        guard develop.status == 0 else { throw ToolError("bench: 12 MP develop failed (exit \(develop.status))") }
        rows.append(("12 MP develop + HEIC save (JPEG in)", String(format: "%.2f s, peak RSS %.0f MB", develop.seconds, mb(develop.peakRSS))))
        let width = rows.map(\.0.count).max() ?? 0
        for (label, value) in rows { say(label.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value) }

        // Targets (issue #2).
        say("")
        say("targets:")
        func target(_ text: String, _ met: Bool?) {
            say("  [\(met == nil ? "n/a" : met! ? "met" : "NOT met")] \(text)")
        }
        let lut = results["720p lut"]!, full720 = results["720p full"]!, grain720 = results["720p grain"]!
        target("colour LUT ≥ 4× faster than ffmpeg lut3d", results["720p ff lut"].map { $0 / lut >= 4 })
        target("full pipeline ≥ 4× faster than ffmpeg's chain", results["720p ff chain"].map { $0 / full720 >= 4 })
        target("grain + blend ≤ 2× ffmpeg's noise", results["720p ff noise"].map { grain720 <= 2 * $0 })
        if cores >= 2 { target("two cores ≥ 1.8× one core", full720 / results["720p full all"]! >= 1.8) }
        target("12 MP develop + HEIC save peak RSS ≤ 200 MB", mb(develop.peakRSS) <= 200)
        if only == nil {
            say("")
            try runStill(photos: photos, preset: preset, work: work, quick: quick)
            say("")
            try runVideo(photos: photos, preset: preset, work: work, quick: quick, ffmpeg: ffmpeg)
        }
    }

    static func runStill(photos: [RGBImage], preset: Preset, work: String, quick: Bool) throws(ToolError) {
        let f = try StillBench.run(photos: photos, preset: preset, work: work, repetitions: quick ? 1 : 5, quick: quick)
        let width = f.rows.map(\.0.count).max() ?? 0
        say("photos (medians of interleaved runs, min–max in brackets):")
        for (label, value) in f.rows { say(label.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value) }
        say("")
        say("photo targets:")
        for (text, met) in f.targets { say("  [\(met == nil ? "n/a" : met! ? "met" : "NOT met")] \(text)") }
        say("")
        say("on a Pi (this machine's core against the Pi's, sysbench CPU events a second; see README):")
        for (name, one, _) in f.stillToSaved {
            let estimates = PiEstimate.boards.map { board in
                String(format: "%@ %.1f s", board.name, board.allCores(oneCoreHere: one))
            }
            say("  \(name) still to saved: " + estimates.joined(separator: ", "))
        }
    }

    static func runVideo(photos: [RGBImage], preset: Preset, work: String, quick: Bool, ffmpeg: String?) throws(ToolError) {
        let v = try VideoBench.run(photos: photos, preset: preset, work: work, repetitions: quick ? 1 : 5, frames: quick ? 30 : 90, ffmpeg: ffmpeg)
        let width = v.rows.map(\.0.count).max() ?? 0
        say("video (medians of interleaved runs, min–max in brackets):")
        for (label, value) in v.rows { say(label.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value) }
        say("")
        say("video targets:")
        let cores = ProcessInfo.processInfo.activeProcessorCount
        func target(_ text: String, _ met: Bool?) { say("  [\(met == nil ? "n/a" : met! ? "met" : "NOT met")] \(text)") }
        target("1080p30 on \(cores) cores: our whole path ≤ 1.3× ffmpeg's encode alone", v.ratio1080.map { $0 <= 1.3 })
        target("1080p30 real time on \(cores) cores with ≥ 20 % headroom (≤ 26.7 ms a frame)", v.whole1080.map { $0 <= VideoBench.budgetMs * 0.8 })
    }

    // MARK: Frames

    static func loadPhotos(_ directory: String?) -> ([RGBImage], String) {
        let env = ProcessInfo.processInfo.environment["LOOPIX_SAMPLES"]
        for dir in [directory, env, "../shared/samples"].compactMap({ $0 }) {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { continue }
            let photos = names.sorted().filter { ImageFormat(pathExtension: ($0 as NSString).pathExtension) != nil }
                .compactMap { try? ImageReader.read(path: dir + "/" + $0) }
            if !photos.isEmpty { return (photos, "\(photos.count) photos in \(dir)") }
        }
        return ([syntheticScene()], "a synthetic scene (no sample photos found)")
    }

    /// Fills width × height with the photos side by side, mirrored at every seam so that
    /// edges stay continuous; real photographic detail at native scale.
    static func tile(_ photos: [RGBImage], width: Int, height: Int) -> RGBImage {
        var out = RGBImage(width: width, height: height)
        out.pixels.withUnsafeMutableBufferPointer { dst in
            var x0 = 0, i = 0
            while x0 < width {
                let p = photos[i % photos.count]
                for y in 0..<height {
                    let tileRow = y / p.height
                    let sy = tileRow % 2 == 0 ? y % p.height : p.height - 1 - y % p.height
                    for x in x0..<min(x0 + p.width, width) {
                        let sx = (i / photos.count) % 2 == 0 ? x - x0 : p.width - 1 - (x - x0)
                        let s = (sy * p.width + sx) * 3, d = (y * width + x) * 3
                        dst[d] = p.pixels[s]
                        dst[d + 1] = p.pixels[s + 1]
                        dst[d + 2] = p.pixels[s + 2]
                    }
                }
                x0 += p.width
                i += 1
            }
        }
        return out
    }

    /// A stand-in scene: sky gradient, coloured discs, textured ground.
    static func syntheticScene() -> RGBImage {
        var image = RGBImage(width: 640, height: 480)
        for y in 0..<480 {
            for x in 0..<640 {
                var c = SIMD3<Double>(0.35 + 0.3 * Double(y) / 480, 0.55, 0.9 - 0.4 * Double(y) / 480)
                if y > 300 { c = SIMD3(0.3, 0.45, 0.2) * (0.8 + 0.2 * sin(Double(x * y) * 0.01)) }
                for (cx, cy, color) in [(160.0, 200.0, SIMD3(0.9, 0.2, 0.15)), (420, 260, SIMD3(0.95, 0.8, 0.6))] {
                    if (Double(x) - cx) * (Double(x) - cx) + (Double(y) - cy) * (Double(y) - cy) < 4900 { c = color }
                }
                let q = (c * 255).rounded(.toNearestOrAwayFromZero)
                image[x, y] = SIMD3(UInt8(q.x), UInt8(q.y), UInt8(q.z))
            }
        }
        return image
    }

    // MARK: ffmpeg

    struct FFmpegTimes {
        let lut: Double, noise: Double, vignette: Double, chain: Double
    }

    /// ns per pixel of each filter on one thread: (filtered run − pass-through run) / frames.
    /// Input is the frame as 8-bit planar RGB (gbrp), the format these filters work in natively.
    static func ffmpegTimes(_ ffmpeg: String, frame: RGBImage, cube: String, work: String, frames: Int) throws(ToolError) -> FFmpegTimes {
        let raw = work + "/frame-\(frame.width).gbrp"
        let n = frame.pixelCount
        var planar = [UInt8](repeating: 0, count: n * 3)
        for i in 0..<n {
            // gbrp plane order: G, B, R.
            planar[i] = frame.pixels[i * 3 + 1]
            planar[n + i] = frame.pixels[i * 3 + 2]
            planar[2 * n + i] = frame.pixels[i * 3]
        }
        guard FileManager.default.createFile(atPath: raw, contents: Data(planar)) else { throw ToolError("\(raw): cannot write") }
        func time(_ filter: String) throws(ToolError) -> Double {
            var best = Double.infinity
            for _ in 0..<2 {
                let r = try Subprocess.run(ffmpeg, ["-hide_banner", "-nostdin", "-loglevel", "error", "-threads", "1",
                                                    "-filter_threads", "1", "-f", "rawvideo", "-pix_fmt", "gbrp",
                                                    "-s", "\(frame.width)x\(frame.height)", "-stream_loop", "\(frames - 1)",
                                                    "-i", raw, "-vf", filter, "-f", "null", "-"])
                guard r.status == 0 else { throw ToolError("ffmpeg -vf \(filter) failed (exit \(r.status))") }
                best = min(best, r.seconds)
            }
            return best
        }
        let base = try time("null")
        func cost(_ filter: String) throws(ToolError) -> Double {
            max(0, try time(filter) - base) / Double(frames) / Double(n) * 1e9
        }
        let lut = "lut3d=file=\(cube):interp=tetrahedral", noise = "noise=alls=20:allf=t", vignette = "vignette"
        return FFmpegTimes(lut: try cost(lut), noise: try cost(noise), vignette: try cost(vignette),
                           chain: try cost("\(lut),\(noise),\(vignette)"))
    }

    // MARK: Helpers

    /// Best time of one run of `body`, repeated for at least `minimumSeconds` (and `repeats` times).
    static func bestTime(minimumSeconds: Double, repeats: Int = 3, _ body: () -> Void) -> Double {
        var best = Double.infinity
        let start = MonotonicClock.now()
        var runs = 0
        while runs < repeats || Double(MonotonicClock.now() - start) / 1e9 < minimumSeconds {
            let t0 = MonotonicClock.now()
            body()
            best = min(best, Double(MonotonicClock.now() - t0) / 1e9)
            runs += 1
        }
        return best
    }

    static func ns(_ v: Double) -> String { String(format: "%.2f ns/pixel", v) }
    static func x(_ v: Double) -> String { String(format: "%.2f×", v) }
    static func mb(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }
    static func say(_ s: String) { print(s) }
}
