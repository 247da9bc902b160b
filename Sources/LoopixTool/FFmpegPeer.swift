import FilmCore
import Foundation
import Raster

/// ffmpeg's filters on the benchmark's frame, one thread, timed on the work itself: ffmpeg's own
/// CPU time (user + system, from wait4) over enough frames for a set amount of work, less that
/// of a pass-through (`null`) run over the same frames made just before it — never a difference
/// of wall times. A difference below a tenth of the whole run (the baseline's noise) is
/// clamped to that tenth and said to be.
final class FFmpegPeer {
    static let filters: [(key: String, label: String)] = [
        ("lut", "lut3d tetrahedral"), ("noise", "noise alls=20:allf=t"), ("vignette", "vignette"),
        ("chain", "lut3d,noise,vignette"),
    ]

    private let ffmpeg: String
    private let raw: String
    private let width: Int, height: Int
    private let cube: String
    private var frames: [String: Int] = [:]
    /// Filters whose figure was clamped in some round.
    private(set) var clamped: Set<String> = []

    /// Writes the frame as 8-bit planar RGB (gbrp, the format these filters work in natively)
    /// and finds, per filter, how many frames make `cpuSeconds` of work.
    init(_ ffmpeg: String, frame: RGBImage, work: String, cube: String, cpuSeconds: Double) throws(ToolError) {
        self.ffmpeg = ffmpeg
        self.cube = cube
        width = frame.width
        height = frame.height
        raw = work + "/frame-\(frame.width).gbrp"
        let n = frame.pixelCount
        var planar = [UInt8](repeating: 0, count: n * 3)
        for i in 0..<n {
            // gbrp plane order: G, B, R.
            planar[i] = frame.pixels[i * 3 + 1]
            planar[n + i] = frame.pixels[i * 3 + 2]
            planar[2 * n + i] = frame.pixels[i * 3]
        }
        guard FileManager.default.createFile(atPath: raw, contents: Data(planar)) else { throw ToolError("\(raw): cannot write") }
        let trial = max(2, 20_000_000 / n)
        for (key, _) in Self.filters {
            let perFrame = try cpu(filter(key), frames: trial) / Double(trial)
            frames[key] = min(10_000, max(2, Int((cpuSeconds / max(perFrame, 1e-6)).rounded(.up))))
        }
    }

    /// One round's figure for `key`: ns per pixel.
    func measure(_ key: String) throws(ToolError) -> Double {
        let count = frames[key] ?? 2
        let baseline = try cpu("null", frames: count)
        let whole = try cpu(filter(key), frames: count)
        var net = whole - baseline
        if net < whole / 10 {
            clamped.insert(key)
            net = whole / 10
        }
        return net / Double(count) / Double(width * height) * 1e9
    }

    private func filter(_ key: String) -> String {
        let lut = "lut3d=file=\(cube):interp=tetrahedral", noise = "noise=alls=20:allf=t", vignette = "vignette"
        switch key {
        case "lut": return lut
        case "noise": return noise
        case "vignette": return vignette
        default: return "\(lut),\(noise),\(vignette)"
        }
    }

    /// ffmpeg's CPU seconds for `frames` frames through `filter`.
    private func cpu(_ filter: String, frames: Int) throws(ToolError) -> Double {
        let r = try Subprocess.run(ffmpeg, ["-hide_banner", "-nostdin", "-loglevel", "error", "-threads", "1",
                                            "-filter_threads", "1", "-f", "rawvideo", "-pix_fmt", "gbrp",
                                            "-s", "\(width)x\(height)", "-stream_loop", "\(frames - 1)",
                                            "-i", raw, "-vf", filter, "-f", "null", "-"])
        guard r.status == 0 else { throw ToolError("ffmpeg -vf \(filter) failed (exit \(r.status))") }
        return r.cpuSeconds
    }
}
