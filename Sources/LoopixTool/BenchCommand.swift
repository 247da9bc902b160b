import FilmCore
import Foundation
import System
import ImageFiles
import Raster

/// `loopix bench`: how fast and how lean the engine is, against ffmpeg, heif-enc and memcpy
/// measured in the same run on the same frames.
public enum BenchCommand {
    public static let help = """
    Usage: loopix bench [--preset PRESET] [--samples DIR] [--quick] [--only engine|still|video]
           loopix bench --instructions [--preset PRESET]

    Times the film engine on 800×480, 1280×720 and 4056×3040 (12 MP) frames made from real
    photos (DIR, default ../shared/samples or $LOOPIX_SAMPLES; a synthetic scene when there are
    none): ns per pixel on one core for the colour LUT alone, grain + blend and the full
    pipeline, the pipeline on all cores, halation and the date stamp, and the whole preview
    frame (camera YUV → RGB, engine, interface, scan-out) in ms. In the same rounds it runs
    memcpy and ffmpeg (lut3d tetrahedral on the look's .cube, noise, vignette, the three chained)
    timed by ffmpeg's own CPU time less a pass-through run's. Every figure is the median of
    interleaved rounds (7; 5 with --quick) with its min–max, marked "noisy" when the spread
    exceeds 15 %, and a noisy figure decides no target; ratios are medians of per-round ratios.
    Then: the 12 MP develop + HEIC save's time and peak memory; photos (develop, HEIC against
    heif-enc, shutter to ready and the memory of a running loopixd); video (a recorded frame's
    grade, RGB → YUV and H.264 against ffmpeg's libx264).
    --instructions counts instructions per pixel of each stage and of ffmpeg's filters under
    valgrind instead: a deterministic second opinion. Run it from a release build
    (`swift build -c release --product loopix`).
    """

    public static func run(_ words: [String]) throws(ToolError) {
        if words.first == "--peak-of" { return try Subprocess.measureForParent(Array(words.dropFirst())) }
        let args = try Arguments(words, valued: ["--preset": "preset", "-p": "preset", "--samples": "samples", "--only": "only",
                                                 "--run-stage": "run-stage", "--raw": "raw", "--size": "size", "--frames": "frames"],
                                 flags: ["--quick": "quick", "--instructions": "instructions"])
        if args.value("run-stage") != nil {
            try InstructionBench.runStage(args, preset: try PresetLibrary.load(directory: nil).look(args.value("preset") ?? "portra"))
            return
        }
        let only = args.value("only")
        guard only == nil || ["engine", "video", "still"].contains(only!) else {
            throw .usage("bench --only takes engine, video or still, not \"\(only!)\"")
        }
        guard args.operands.isEmpty else { throw .usage("bench: unexpected argument \"\(args.operands[0])\"") }
        let preset = try PresetLibrary.load(directory: nil).look(args.value("preset") ?? "portra")
        let quick = args.flag("quick")
        let settings = EngineBench.Settings(quick: quick)
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
        let full = FilmLook(preset: preset, settings: RenderSettings(intensity: 1))
        let cubePath = work + "/look.cube"
        do { try full.cube().text.write(toFile: cubePath, atomically: true, encoding: .utf8) } catch {
            throw ToolError("\(cubePath): cannot write (\(PresetLibrary.reason(error)))")
        }
        let ffmpeg = Subprocess.find("ffmpeg")
        let me = Subprocess.ownExecutable()
        if ffmpeg == nil { say("ffmpeg not found: ffmpeg comparisons skipped (apt-get install ffmpeg)") }

        if args.flag("instructions") {
            say("instructions per pixel under valgrind (cachegrind), \(InstructionBench.width)×\(InstructionBench.height), one thread:")
            printTable(try InstructionBench.run(me: me, photos: photos, preset: preset, work: work, cubePath: cubePath, ffmpeg: ffmpeg))
            return
        }
        if only == "still" {
            try runStill(photos: photos, preset: preset, work: work, quick: quick)
            return
        }
        if only == "video" {
            try runVideo(photos: photos, preset: preset, work: work, quick: quick, ffmpeg: ffmpeg)
            return
        }
        say("engine (medians of \(settings.rounds) interleaved rounds, min–max in brackets; \"noisy\": a spread over 15 %):")
        let engine = try EngineBench.run(photos: photos, preset: preset, work: work, cubePath: cubePath, ffmpeg: ffmpeg, settings: settings)
        var rows = engine.rows
        // 12 MP develop + HEIC save, in a child process so its peak memory is its own.
        let big = tile(photos, width: 4056, height: 3040)
        let input = work + "/12mp.jpg", output = work + "/12mp.heic"
        do { try ImageWriter.write(big, to: input, format: .jpeg, jpegQuality: 95, replace: true) } catch { throw ToolError("\(error)") }
        var developSeconds: [Double] = [], peakRSS = 0
        for _ in 0..<(quick ? 3 : 5) {
            let develop = try Subprocess.runAlone(me: me, me, ["develop", input, "-o", output, "-p", preset.id, "--force"], work: work, keepStderr: true)
            guard develop.status == 0 else { throw ToolError("bench: 12 MP develop failed (exit \(develop.status))") }
            developSeconds.append(develop.seconds)
            peakRSS = max(peakRSS, develop.peakRSS)
        }
        rows.append(("12 MP develop + HEIC save (JPEG in), a process each", Stats(developSeconds).text(" s") + String(format: ", peak RSS %.0f MB (the highest)", mb(peakRSS))))
        printTable(rows)

        say("")
        say("targets:")
        for target in engine.targets + [Target(text: "12 MP develop + HEIC save peak RSS ≤ 200 MB", met: mb(peakRSS) <= 200)] {
            say(target.line)
        }
        say("")
        say("on a Pi (one core here scaled by sysbench CPU events a second, spread over its 4 cores; see README):")
        for line in engine.piRows { say("  " + line) }
        if only == nil {
            say("")
            try runStill(photos: photos, preset: preset, work: work, quick: quick)
            say("")
            try runVideo(photos: photos, preset: preset, work: work, quick: quick, ffmpeg: ffmpeg)
        }
    }

    /// Prints label–value rows with the values in one column.
    static func printTable(_ rows: [(String, String)]) {
        let width = rows.map(\.0.count).max() ?? 0
        for (label, value) in rows { say(label.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value) }
    }

    static func runStill(photos: [RGBImage], preset: Preset, work: String, quick: Bool) throws(ToolError) {
        let f = try StillBench.run(photos: photos, preset: preset, work: work, repetitions: quick ? 1 : 5, quick: quick)
        say("photos (medians of interleaved runs, min–max in brackets):")
        printTable(f.rows)
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
        say("video (medians of interleaved runs, min–max in brackets):")
        printTable(v.rows)
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
        for dir in [directory, env, "Tests/Samples", "../shared/samples"].compactMap({ $0 }) {
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

    // MARK: Helpers

    static func mb(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }
    static func say(_ s: String) { print(s) }
}
