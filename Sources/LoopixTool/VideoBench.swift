import FilmCore
import Foundation
import ImageFiles
import System
import Video
import Raster

/// The video part of `loopix bench`: what a recorded frame costs — grade, RGB → YUV and
/// H.264 encode — at 720p30 and 1080p30 on one core and on all, as a share of the 33 ms a frame
/// may take, against ffmpeg's libx264 encoding the same graded frames (already YUV 4:2:0, so
/// ffmpeg's figure is the encode alone). Medians of interleaved repetitions (ours, ffmpeg,
/// ours, …) with their spread; a ratio is the median of the per-pair ratios.
enum VideoBench {
    struct Figures {
        var rows: [(String, String)] = []
        /// ms per frame of our whole path at 1080p on all cores, and ffmpeg's at the same threads.
        var whole1080: Double?
        var ffmpeg1080: Double?
        var ratio1080: Double?
    }

    static let budgetMs = 1000.0 / 30

    static func run(photos: [RGBImage], preset: Preset, work: String, repetitions: Int, frames: Int,
                    ffmpeg: String?) throws(ToolError) -> Figures {
        var figures = Figures()
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let look = FilmLook(preset: preset, settings: RenderSettings(intensity: 1))
        for (name, width, height) in [("720p30", 1280, 720), ("1080p30", 1920, 1080)] {
            let source = BenchCommand.tile(photos, width: width, height: height)
            let renderer = FilmRenderer(look: look, width: width, height: height)
            // ffmpeg's input: the same graded frames, converted once (outside the timing).
            var yuvPath: String?
            if let ffmpeg { yuvPath = try gradedYUV(ffmpeg, source: source, renderer: renderer, frames: frames, work: work) }
            for threads in Set([1, cores]).sorted() {
                var ours: [Result] = []
                var theirs: [Double] = []
                var ratios: [Double] = []
                for rep in 0..<repetitions {
                    let r = try encodeOurs(source: source, renderer: renderer, frames: frames, threads: threads, preset: "ultrafast",
                                           path: work + "/ours-\(name)-\(threads)-\(rep).MP4")
                    ours.append(r)
                    if let ffmpeg, let yuvPath {
                        let t = try encodeFFmpeg(ffmpeg, yuv: yuvPath, width: width, height: height, frames: frames, threads: threads)
                        theirs.append(t)
                        ratios.append(r.wholeMs / t)
                    }
                }
                let whole = Stats(ours.map(\.wholeMs)), grade = Stats(ours.map(\.gradeMs)), encode = Stats(ours.map(\.encodeMs))
                let label = "\(name) film video, \(threads) core\(threads == 1 ? "" : "s")"
                figures.rows.append((label, String(format: "%@ ms/frame (grade %.1f + YUV & encode %.1f) = %.0f %% of 33 ms",
                                                   whole.text, grade.median, encode.median, whole.median / budgetMs * 100)))
                if !theirs.isEmpty {
                    let t = Stats(theirs), ratio = Stats(ratios)
                    figures.rows.append(("\(name) ffmpeg libx264 ultrafast, \(threads) thread\(threads == 1 ? "" : "s")",
                                         "\(t.text) ms/frame → our whole path \(String(format: "%.2f", ratio.median))× its encode alone"))
                    if name == "1080p30" && threads == cores {
                        figures.ffmpeg1080 = t.median
                        figures.ratio1080 = ratio.median
                    }
                }
                if name == "1080p30" && threads == cores { figures.whole1080 = whole.median }
            }
            // RGB → YUV: our loop against libswscale (BT.709, accurate rounding), the rest alike.
            var builtIn: [Double] = [], swscale: [Double] = []
            for rep in 0..<repetitions {
                builtIn.append(try encodeOurs(source: source, renderer: renderer, frames: frames, threads: cores, preset: "ultrafast",
                                              conversion: .builtIn, path: work + "/yuv-b-\(rep).MP4").encodeMs)
                swscale.append(try encodeOurs(source: source, renderer: renderer, frames: frames, threads: cores, preset: "ultrafast",
                                              conversion: .swscale, path: work + "/yuv-s-\(rep).MP4").encodeMs)
            }
            figures.rows.append(("\(name) YUV & encode, Loopix's conversion / libswscale",
                                 "\(Stats(builtIn).text) / \(Stats(swscale).text) ms/frame"))
            // The daemon's default preset, for what a Pi 5 or this machine records with.
            let defaults = try encodeOurs(source: source, renderer: renderer, frames: frames, threads: cores, preset: VideoSettings().x264Preset,
                                          path: work + "/ours-\(name)-default.MP4")
            figures.rows.append(("\(name) film video, \(cores) cores, x264 \(VideoSettings().x264Preset) (the default)",
                                 String(format: "%.1f ms/frame = %.0f %% of 33 ms", defaults.wholeMs, defaults.wholeMs / budgetMs * 100)))
        }
        return figures
    }

    struct Result {
        var gradeMs: Double
        var encodeMs: Double
        var wholeMs: Double { gradeMs + encodeMs }
    }

    /// Grades and encodes `frames` frames (the grain animates as in a recording) into a clip.
    static func encodeOurs(source: RGBImage, renderer: FilmRenderer, frames: Int, threads: Int, preset: String,
                           conversion: VideoSettings.Conversion = .builtIn, path: String) throws(ToolError) -> Result {
        var settings = VideoSettings()
        settings.width = source.width
        settings.height = source.height
        settings.encoder = .libx264
        settings.x264Preset = preset
        settings.threads = threads
        settings.conversion = conversion
        settings.bitrate = Int(16_000_000 * Double(source.width * source.height) / (1920 * 1080))
        let writer: ClipWriter
        do {
            writer = try ClipWriter(path: path, settings: settings,
                                    metadata: ClipMetadata(creationTime: 0, look: renderer.look.preset.name, cameraModel: "bench", rotation: 0),
                                    encoderName: "libx264")
        } catch { throw ToolError("bench: \(error)") }
        defer { unlink(path) }
        var graded = RGBImage(width: source.width, height: source.height)
        var gradeNs: UInt64 = 0, encodeNs: UInt64 = 0
        for n in 0..<frames {
            let t0 = MonotonicClock.now()
            source.pixels.withUnsafeBufferPointer { src in
                graded.pixels.withUnsafeMutableBufferPointer { dst in
                    renderer.render(source: src.baseAddress!, destination: dst.baseAddress!, grainFrame: UInt64(n), threads: threads)
                }
            }
            let t1 = MonotonicClock.now()
            let failure: VideoError? = graded.pixels.withUnsafeBufferPointer { px in
                do throws(VideoError) {
                    try writer.encode(rgb: px.baseAddress!, stride: source.width * 3, time: Double(n) / 30)
                    return nil
                } catch { return error }
            }
            if let failure { throw ToolError("bench: \(failure)") }
            let t2 = MonotonicClock.now()
            gradeNs += t1 - t0
            encodeNs += t2 - t1
        }
        let t3 = MonotonicClock.now()
        do { try writer.finish() } catch { throw ToolError("bench: \(error)") }
        encodeNs += MonotonicClock.now() - t3  // the frames still in the encoder
        return Result(gradeMs: Double(gradeNs) / 1e6 / Double(frames), encodeMs: Double(encodeNs) / 1e6 / Double(frames))
    }

    /// The graded frames as raw YUV 4:2:0 (BT.709, limited range), for ffmpeg.
    static func gradedYUV(_ ffmpeg: String, source: RGBImage, renderer: FilmRenderer, frames: Int, work: String) throws(ToolError) -> String {
        let rgb = work + "/graded-\(source.width).rgb", yuv = work + "/graded-\(source.width).yuv"
        guard FileManager.default.createFile(atPath: rgb, contents: nil), let out = FileHandle(forWritingAtPath: rgb) else {
            throw ToolError("\(rgb): cannot write")
        }
        var graded = RGBImage(width: source.width, height: source.height)
        for n in 0..<frames {
            source.pixels.withUnsafeBufferPointer { src in
                graded.pixels.withUnsafeMutableBufferPointer { dst in
                    renderer.render(source: src.baseAddress!, destination: dst.baseAddress!, grainFrame: UInt64(n),
                                    threads: ProcessInfo.processInfo.activeProcessorCount)
                }
            }
            out.write(Data(graded.pixels))
        }
        out.closeFile()
        defer { unlink(rgb) }
        let r = try Subprocess.run(ffmpeg, ["-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24",
                                            "-s", "\(source.width)x\(source.height)", "-i", rgb,
                                            "-vf", "scale=out_color_matrix=bt709:out_range=tv", "-pix_fmt", "yuv420p", "-f", "rawvideo", yuv])
        guard r.status == 0 else { throw ToolError("bench: ffmpeg could not convert the frames to YUV (exit \(r.status))") }
        return yuv
    }

    /// ms per frame of ffmpeg's libx264 (ultrafast) on the raw frames: the encode run less a
    /// run that only reads them (`-c:v rawvideo`), so reading the file is not counted.
    static func encodeFFmpeg(_ ffmpeg: String, yuv: String, width: Int, height: Int, frames: Int, threads: Int) throws(ToolError) -> Double {
        func time(_ codec: [String]) throws(ToolError) -> Double {
            let r = try Subprocess.run(ffmpeg, ["-hide_banner", "-nostdin", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "yuv420p",
                                                "-s", "\(width)x\(height)", "-r", "30", "-i", yuv, "-threads", "\(threads)"] + codec + ["-f", "null", "-"])
            guard r.status == 0 else { throw ToolError("bench: ffmpeg \(codec.joined(separator: " ")) failed (exit \(r.status))") }
            return r.seconds
        }
        let encode = try time(["-c:v", "libx264", "-preset", "ultrafast", "-b:v", "\(Int(16_000_000 * Double(width * height) / (1920 * 1080)))"])
        let read = try time(["-c:v", "rawvideo"])
        return max(0.001, encode - read) * 1000 / Double(frames)
    }
}
