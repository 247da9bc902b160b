import FilmCore
import Foundation
import System
import PixelFormats
import Raster

/// `loopix bench --instructions`: instructions per pixel, counted under valgrind (cachegrind,
/// no cache simulation) on a small frame — deterministic, so a change of a few percent shows,
/// whatever the machine's neighbours do. Each figure is the count for 5 frames less the count
/// for 1, over 4 frames: start-up, the look's compilation and the grain texture cancel out.
/// ffmpeg's filters are counted the same way, less its pass-through (`null`) run's.
enum InstructionBench {
    static let width = 320, height = 240
    static let stages: [(key: String, label: String)] = [
        ("color", "colour LUT"), ("vignette", "vignette"), ("grain", "grain + blend (80 %)"), ("all", "full pipeline"),
        ("yuv", "camera YUV 4:2:0 → RGB"), ("scanout", "scan-out RGB → XRGB8888"),
    ]

    static func run(me: String, photos: [RGBImage], preset: Preset, work: String, cubePath: String, ffmpeg: String?) throws(ToolError) -> [(String, String)] {
        guard let valgrind = Subprocess.find("valgrind") else {
            throw ToolError("bench --instructions needs valgrind (scripts/setup installs it; apt-get install valgrind)")
        }
        guard let objcopy = Subprocess.find("objcopy") else { throw ToolError("bench --instructions needs objcopy (apt-get install binutils)") }
        // Valgrind 3.19 cannot read the DWARF Swift 6 writes ("possibly corrupted debuginfo"):
        // a copy without it counts the same instructions.
        let counted = work + "/loopix-nodebug"
        let strip = try Subprocess.run(objcopy, ["--strip-debug", me, counted])
        guard strip.status == 0 else { throw ToolError("bench: objcopy --strip-debug \(me) failed (exit \(strip.status))") }
        let frame = BenchCommand.tile(photos, width: width, height: height)
        let raw = work + "/small.rgb"
        guard FileManager.default.createFile(atPath: raw, contents: Data(frame.pixels)) else { throw ToolError("\(raw): cannot write") }
        let pixels = Double(width * height)

        func perPixel(_ program: [String], frames: (Int) -> [String]) throws(ToolError) -> Double {
            let one = try instructions(valgrind, work: work, program + frames(1))
            let five = try instructions(valgrind, work: work, program + frames(5))
            return Double(Int64(five) - Int64(one)) / 4 / pixels
        }
        var rows: [(String, String)] = []
        var ours: [String: Double] = [:]
        for (key, label) in stages {
            let n = try perPixel([counted, "bench", "--run-stage", key, "--raw", raw, "--size", "\(width)x\(height)", "-p", preset.id]) { ["--frames", "\($0)"] }
            ours[key] = n
            rows.append(("\(label), 1 core", String(format: "%.1f instructions/pixel", n)))
        }
        guard let ffmpeg else { return rows }
        func ff(_ filter: String) throws(ToolError) -> Double {
            try perPixel([ffmpeg, "-hide_banner", "-nostdin", "-loglevel", "error", "-threads", "1", "-filter_threads", "1",
                          "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "\(width)x\(height)"]) {
                ["-stream_loop", "\($0 - 1)", "-i", raw, "-vf", "format=gbrp,\(filter)", "-f", "null", "-"]
            }
        }
        let baseline = try ff("null")
        for (filter, label, ourKey) in [("lut3d=file=\(cubePath):interp=tetrahedral", "ffmpeg lut3d tetrahedral", "color"),
                                        ("noise=alls=20:allf=t", "ffmpeg noise alls=20:allf=t", "grain"),
                                        ("vignette", "ffmpeg vignette", "vignette")] {
            let n = try ff(filter) - baseline
            let ratio = ours[ourKey].map { String(format: "  → ours %.2f× its count", $0 / max(n, 1e-9)) } ?? ""
            rows.append((label, String(format: "%.1f instructions/pixel", n) + ratio))
        }
        return rows
    }

    /// Instructions valgrind counted for `arguments` (program first).
    static func instructions(_ valgrind: String, work: String, _ arguments: [String]) throws(ToolError) -> UInt64 {
        let log = work + "/valgrind.log"
        let r = try Subprocess.run(valgrind, ["--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                                              "--log-file=\(log)"] + arguments)
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        guard r.status == 0 else {
            let last = text.split(separator: "\n").last.map(String.init) ?? "no log"
            throw ToolError("bench: valgrind \((arguments[0] as NSString).lastPathComponent) failed (exit \(r.status)): \(last)")
        }
        guard let count = instructionCount(inLog: text) else { throw ToolError("bench: valgrind printed no instruction count (\(log))") }
        return count
    }

    /// The count in cachegrind's summary line "==123== I   refs:      1,234,567".
    static func instructionCount(inLog text: String) -> UInt64? {
        for line in text.split(separator: "\n") {
            guard let refs = line.range(of: "I\\s+refs:", options: .regularExpression) else { continue }
            let digits = line[refs.upperBound...].filter { $0 != "," && $0 != " " }
            if let n = UInt64(digits) { return n }
        }
        return nil
    }

    /// The child the counts are made of: `frames` renders of the frame in `raw` through `stage`
    /// on one thread.
    static func runStage(_ args: Arguments, preset: Preset) throws(ToolError) {
        guard let key = args.value("run-stage"), let raw = args.value("raw"), let size = args.value("size"),
              let frames = args.value("frames").flatMap({ Int($0) }), frames > 0 else {
            throw .usage("bench --run-stage STAGE --raw FILE --size WxH --frames N")
        }
        let parts = size.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] > 0, parts[1] > 0 else { throw .usage("bench --size takes WxH, not \"\(size)\"") }
        guard let data = FileManager.default.contents(atPath: raw), data.count == parts[0] * parts[1] * 3 else {
            throw ToolError("\(raw): not a \(size) RGB frame")
        }
        let frame = RGBImage(width: parts[0], height: parts[1], pixels: [UInt8](data))
        let stages: RenderStages
        switch key {
        case "color": stages = .color
        case "vignette": stages = .vignette
        case "grain": stages = [.grain, .blend]
        case "all": stages = .all
        case "yuv": return try convertCameraFrames(frame, frames: frames)
        case "scanout": return scanOutFrames(frame, frames: frames)
        default: throw .usage("bench --run-stage takes color, vignette, grain, all, yuv or scanout, not \"\(key)\"")
        }
        let look = FilmLook(preset: preset, settings: RenderSettings(intensity: key == "grain" ? 0.8 : 1))
        let renderer = FilmRenderer(look: look, width: parts[0], height: parts[1])
        let source = frame.pixels
        var out = [UInt8](repeating: 0, count: source.count)
        source.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for n in 0..<frames {
                    renderer.render(source: src.baseAddress!, destination: dst.baseAddress!, grainFrame: UInt64(n + 1), threads: 1, stages: stages)
                }
            }
        }
    }

    /// The child for the preview's first step: `frames` conversions of `frame`, as a camera's
    /// planar YUV 4:2:0 frame of the same size, into RGB on one thread.
    static func convertCameraFrames(_ frame: RGBImage, frames: Int) throws(ToolError) {
        let w = frame.width, h = frame.height
        let yuv = EngineBench.PreviewFrame.i420(frame)
        let converter = FrameConverter(format: .yuv420, sourceWidth: w, sourceHeight: h, stride: w, width: w, height: h)
        var image = RGBImage(width: w, height: h)
        for _ in 0..<frames {
            do { try yuv.withUnsafeBytes { try converter.convert($0, into: &image, threads: 1) } } catch {
                throw ToolError("bench: \(error)")
            }
        }
    }

    /// The child for the preview's last step: `frames` conversions of `frame` into an XRGB8888
    /// scan-out buffer of its own size, as the daemon's KMS sink makes them, on one thread.
    static func scanOutFrames(_ frame: RGBImage, frames: Int) {
        let w = frame.width, h = frame.height
        let map = ScanoutMap(sourceWidth: w, sourceHeight: h, bufferWidth: w, bufferHeight: h, rotation: .none)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: w * h * 4, alignment: 64)
        defer { buffer.deallocate() }
        for _ in 0..<frames { map.convert(frame, into: buffer, pitch: w * 4, format: .xrgb8888, threads: 1) }
    }
}
