import Canvas
import FilmCore
import Foundation
import ImageFiles
import Video
import Raster

/// `loopix timelapse`: an intervalometer's photos (or any) assembled into an H.264 clip.
public enum TimelapseCommand {
    public static let help = """
    Usage: loopix timelapse PHOTO... -o CLIP.mp4 [--fps N] [--width W] [--bitrate MBPS] [--force]

    Makes a timelapse clip of the photos in the order given (a shell's LPX_*.HEIC is in shot
    order): one photo a frame, H.264 in MP4 (libx264), scaled to the clip's size; a photo of
    another shape is cropped to the first one's, about its centre. A photo that cannot be read
    is reported and left out; the exit status is then 1. The clip is written under a temporary
    name and put in place when it is complete.

      -o, --output CLIP     the clip to write (.mp4)
          --fps N           frames (photos) a second, 1–60 (default: 24)
          --width W         the clip's width, 64–3840, even (default: 1920, or the first photo's
                            if it is narrower); the height follows the first photo's shape
          --bitrate MBPS    target bit rate, 1–100 (default: 16)
          --force           replace CLIP if it exists
    """

    public static func run(_ words: [String], log: (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }) throws(ToolError) -> Int {
        let args = try Arguments(words, valued: ["-o": "output", "--output": "output", "--fps": "fps", "--width": "width",
                                                 "--bitrate": "bitrate"],
                                 flags: ["--force": "force", "-f": "force"])
        guard !args.operands.isEmpty else { throw .usage("timelapse: no photos given") }
        guard let output = args.value("output") else { throw .usage("timelapse: -o CLIP.mp4 is required") }
        guard (output as NSString).pathExtension.lowercased() == "mp4" else { throw .usage("\(output): a timelapse is an .mp4") }
        let fps = try args.integer("fps") ?? 24
        guard (1...60).contains(fps) else { throw .usage("--fps must be from 1 to 60") }
        let askedWidth = try args.integer("width")
        if let w = askedWidth, !(64...3840).contains(w) || w % 2 != 0 { throw .usage("--width must be even, from 64 to 3840") }
        let bitrate = try args.double("bitrate", in: 1...100) ?? 16
        let force = args.flag("force")
        if !force && FileManager.default.fileExists(atPath: output) {
            throw ToolError("\(output): already exists (use --force to replace it)")
        }

        let temporary = ((output as NSString).deletingLastPathComponent as NSString)
            .appendingPathComponent(".\((output as NSString).lastPathComponent).\(getpid()).tmp")
        var writer: ClipWriter?
        var frame = RGBImage(width: 1, height: 1)
        var failed = 0, frames = 0
        defer { if writer != nil { unlink(temporary) } }
        for path in args.operands {
            let photo: RGBImage
            do { photo = try ImageReader.read(path: path) } catch {
                failed += 1
                log("loopix: \(error); left out of the timelapse")
                continue
            }
            if writer == nil {
                let width = askedWidth ?? min(1920, photo.width & ~1)
                let height = max(2, Int((Double(width) * Double(photo.height) / Double(photo.width)).rounded()) & ~1)
                var settings = VideoSettings()
                settings.width = width
                settings.height = height
                settings.framesPerSecond = fps
                settings.bitrate = Int(bitrate * 1_000_000)
                settings.x264Preset = "medium"
                let metadata = ClipMetadata(creationTime: Date().timeIntervalSince1970, look: "Loopix timelapse of \(args.operands.count) photos",
                                            cameraModel: "Loopix", rotation: 0)
                do { writer = try ClipWriter(path: temporary, settings: settings, metadata: metadata, encoderName: "libx264") } catch {
                    throw ToolError("\(output): cannot start the clip: \(error)")
                }
                frame = RGBImage(width: width, height: height)
            }
            guard let clip = writer else { continue }
            do { try fit(photo, into: &frame, path: path) } catch {
                failed += 1
                log("loopix: \(error.message); left out of the timelapse")
                continue
            }
            // (A Result, not a typed throw through the closure: Swift 6.0.3's compiler crashes on that.)
            let encoded = frame.pixels.withUnsafeBufferPointer { p -> Result<Void, VideoError> in
                do throws(VideoError) {
                    _ = try clip.encode(rgb: p.baseAddress!, stride: frame.width * 3, time: Double(frames) / Double(fps))
                    return .success(())
                } catch { return .failure(error) }
            }
            if case .failure(let error) = encoded { throw ToolError("\(output): encoding \(path): \(error)") }
            frames += 1
        }
        guard let clip = writer, frames > 0 else { throw ToolError("\(output): no photo could be read; no clip made") }
        do { try clip.finish() } catch { throw ToolError("\(output): finishing the clip: \(error)") }
        writer = nil
        if !force && FileManager.default.fileExists(atPath: output) {
            unlink(temporary)
            throw ToolError("\(output): appeared while the clip was made; left untouched (the clip is not kept)")
        }
        guard rename(temporary, output) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw ToolError("\(output): cannot put the clip in place: \(reason)")
        }
        log("timelapse: \(output): \(frames) photos at \(fps) fps, \(String(format: "%.1f", Double(frames) / Double(fps))) s, \(frame.width)×\(frame.height)"
            + (failed > 0 ? " (\(failed) left out)" : ""))
        return failed
    }

    /// `photo` cropped about its centre to `frame`'s shape and scaled down into it.
    static func fit(_ photo: RGBImage, into frame: inout RGBImage, path: String) throws(ToolError) {
        // The largest centred crop of the frame's shape.
        var cropWidth = photo.width, cropHeight = photo.width * frame.height / frame.width
        if cropHeight > photo.height { cropHeight = photo.height; cropWidth = photo.height * frame.width / frame.height }
        guard cropWidth >= frame.width, cropHeight >= frame.height else {
            throw ToolError("\(path): \(photo.width)×\(photo.height) is smaller than the clip's \(frame.width)×\(frame.height)")
        }
        var source = photo
        if cropWidth != photo.width || cropHeight != photo.height {
            let x0 = (photo.width - cropWidth) / 2, y0 = (photo.height - cropHeight) / 2
            source = RGBImage(width: cropWidth, height: cropHeight)
            for y in 0..<cropHeight {
                let from = ((y0 + y) * photo.width + x0) * 3
                source.pixels.replaceSubrange(y * cropWidth * 3..<(y + 1) * cropWidth * 3, with: photo.pixels[from..<from + cropWidth * 3])
            }
        }
        AreaDownscaler(sourceWidth: source.width, sourceHeight: source.height, width: frame.width, height: frame.height)
            .shrink(source, into: &frame)
    }
}
