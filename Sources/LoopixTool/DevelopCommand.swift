import Darkroom
import FilmCore
import Foundation
import ImageFiles
import Raster

/// `loopix develop`: applies a look to existing photos.
public enum DevelopCommand {
    public static var help: String { """
    Usage: loopix develop IN... [-p PRESET] [-i INTENSITY] [--ev EV] [--grain-seed N]
                          [-o OUT | --out-dir DIR] [--format heic|jpeg|png] [--force]
                          [--quality Q] [--x265-preset NAME] [--presets-dir DIR] [--threads N]
                          [--max-megapixels N] [--date-stamp FORMAT]
           loopix develop --same NEGATIVE.DNG... [-o OUT | --out-dir DIR] [--format …] [--force]

    Develops JPEG, PNG or HEIC photos, or raw negatives (DNG, or any raw file libraw reads), with
    a film look and saves them (HEIC in Display P3 by default), keeping their camera, lens,
    exposure, capture time and GPS, turned upright.

      -p, --preset PRESET    look to apply (default: portra; see `loopix presets`)
      -i, --intensity N      strength of the look, 0–100 % (default: 100)
          --ev EV            exposure compensation in stops, -3…3 (default: 0)
          --grain-seed N     seed of the grain pattern (default: fixed, so results repeat)
      -o, --output OUT       output file (one input only); its extension picks the format
          --out-dir DIR      write outputs here, named after the inputs
          --format FORMAT    heic, jpeg or png (default: from OUT, else heic)
          --force            replace existing output files (never done otherwise)
          --quality Q        HEIC/JPEG quality 1–100 (default: 70 for HEIC, 90 for JPEG)
          --x265-preset NAME HEIC encoder speed: ultrafast … placebo (default: ultrafast)
          --presets-dir DIR  user presets (default: $LOOPIX_PRESETS or ~/.config/loopix/presets)
          --threads N        render threads (default: all cores)
          --max-megapixels N refuse inputs of more than N million pixels (default: what the
                             256 MB a develop may use holds, or half this machine's memory where
                             that is less: here \(PixelLimit.forThisMachine))
          --same             develop each Loopix DNG as the camera did: its look, intensity,
                             grain and date stamp, from the recipe in its metadata
      --date-stamp FORMAT  imprint the capture date (EXIF DateTimeOriginal, else the file's
                             time) in the lower right, e.g. "'YY MM DD" → '98 11 30 (tokens
                             YYYY YY MM M DD D HH mm; digits, spaces and ' - . : / as they are)

    Without -o or --out-dir, IMG.jpg is saved beside itself as IMG-PRESET.heic.
    A file that fails is reported and counted; the others go on. Exit status 1 if any failed.
    """ }

    public struct Options: Sendable {
        public var inputs: [String] = []
        public var presetID = "portra"
        public var intensity = 1.0
        public var ev = 0.0
        public var grainSeed: UInt64 = RenderSettings().grainSeed
        public var output: String?
        public var outputDirectory: String?
        public var format: ImageFormat?
        public var force = false
        public var quality: Int?
        public var x265Preset = HEICOptions().x265Preset
        public var presetsDirectory: String? = PresetLibrary.defaultDirectory
        public var threads = ProcessInfo.processInfo.activeProcessorCount
        /// nil: `PixelLimit.forThisMachine`.
        public var maxMegapixels: Double?
        /// Imprint each photo's capture date in this format; nil: none.
        public var dateStamp: DateStampFormat?
        /// Develop each raw negative with the recipe it carries (`--same`).
        public var same = false

        var pixelLimit: PixelLimit {
            maxMegapixels.map { PixelLimit(megapixels: $0, origin: "set by --max-megapixels") } ?? .forThisMachine
        }
    }

    public static func parse(_ words: [String]) throws(ToolError) -> Options {
        let args = try Arguments(words, valued: [
            "-p": "preset", "--preset": "preset", "-i": "intensity", "--intensity": "intensity", "--ev": "ev",
            "--grain-seed": "grain-seed", "-o": "output", "--output": "output", "--out-dir": "out-dir", "--format": "format",
            "--quality": "quality", "--x265-preset": "x265-preset", "--presets-dir": "presets-dir", "--threads": "threads",
            "--max-megapixels": "max-megapixels", "--date-stamp": "date-stamp",
        ], flags: ["--force": "force", "-f": "force", "--same": "same"])
        var o = Options()
        o.inputs = args.operands
        guard !o.inputs.isEmpty else { throw .usage("develop: no input photos given") }
        o.same = args.flag("same")
        if o.same, let given = ["preset", "intensity", "ev", "grain-seed", "date-stamp"].first(where: { args.value($0) != nil }) {
            throw .usage("develop: --same takes the look from each negative; leave out --\(given)")
        }
        if let p = args.value("preset") { o.presetID = p }
        if let i = try args.double("intensity", in: 0...100) { o.intensity = i / 100 }
        if let ev = try args.double("ev", in: -3...3) { o.ev = ev }
        if let seed = try args.integer("grain-seed", as: UInt64.self) { o.grainSeed = seed }
        o.output = args.value("output")
        o.outputDirectory = args.value("out-dir")
        if o.output != nil && o.outputDirectory != nil { throw .usage("develop: give -o or --out-dir, not both") }
        if o.output != nil && o.inputs.count > 1 { throw .usage("develop: -o takes one input; use --out-dir for several") }
        if let f = args.value("format") {
            guard let format = ImageFormat(pathExtension: f) else { throw .usage("--format must be heic, jpeg or png, not \"\(f)\"") }
            o.format = format
        } else if let out = o.output {
            let ext = (out as NSString).pathExtension
            guard let format = ImageFormat(pathExtension: ext) else {
                throw .usage("\(out): unknown output extension \".\(ext)\" (use .heic, .jpg or .png, or --format)")
            }
            o.format = format
        }
        if let q = try args.integer("quality") {
            guard (1...100).contains(q) else { throw .usage("--quality must be from 1 to 100") }
            o.quality = q
        }
        if let x = args.value("x265-preset") { o.x265Preset = x }
        if let dir = args.value("presets-dir") { o.presetsDirectory = dir }
        if let t = try args.integer("threads") {
            guard (1...256).contains(t) else { throw .usage("--threads must be from 1 to 256") }
            o.threads = t
        }
        o.maxMegapixels = try args.double("max-megapixels", in: 0.001...100_000)
        o.force = args.flag("force")
        if let pattern = args.value("date-stamp") {
            guard let format = DateStampFormat(pattern) else {
                throw .usage("--date-stamp \"\(pattern.prefix(40))\": use 1 to 24 characters with YYYY, YY, MM, M, DD, D, HH or mm, and otherwise only digits, spaces and ' - . : /")
            }
            o.dateStamp = format
        }
        return o
    }

    /// When a photo was taken: its EXIF `DateTimeOriginal` (local time, as cameras write it),
    /// else the file's modification time.
    static func captureDate(of photo: DecodedPhoto, path: String) -> Date {
        if let exif = photo.exif, let text = (try? ExifReader.tags(exif))?["DateTimeOriginal"] {
            let f = DateFormatter()
            f.locale = Locale(identifier: "en_US_POSIX")
            f.dateFormat = "yyyy:MM:dd HH:mm:ss"
            if let date = f.date(from: text.trimmingCharacters(in: .whitespaces)) { return date }
        }
        return fileDate(path)
    }

    /// Develops every input; returns how many failed. Progress and failures go to `log`.
    public static func run(_ o: Options, log: (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }) throws(ToolError) -> Int {
        let library = try PresetLibrary.load(directory: o.presetsDirectory, required: o.presetsDirectory != PresetLibrary.defaultDirectory)
        for problem in library.problems { log("loopix: warning: \(problem)") }
        let chosen = try library.look(o.presetID)
        // The look is compiled when the first photo has been read: a batch of unreadable files fails at once.
        var darkroom = Darkroom()
        let format = o.format ?? .heic
        var heic = HEICOptions(x265Preset: o.x265Preset)
        if let q = o.quality { heic.quality = Double(q) / 100 }
        let jpegQuality = o.quality ?? HEICOptions.defaultJPEGQuality
        if let dir = o.outputDirectory {
            do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
                throw ToolError("\(dir): cannot create output directory (\(PresetLibrary.reason(error)))")
            }
        }
        let progress = ProgressBar(total: o.inputs.count, enabled: o.inputs.count > 1 && isatty(STDERR_FILENO) == 1)
        var failed = 0
        for (index, input) in o.inputs.enumerated() {
            progress.show(done: index, current: input)
            do {
                let source = try readSource(input, limit: o.pixelLimit)
                // The look, as asked or as the negative's recipe says.
                let preset: Preset, recipe: DevelopRecipe, ev: Double
                if o.same {
                    guard let kept = source.recipe else {
                        throw ToolError("\(input): no Loopix develop recipe in it (not a Loopix DNG); give a look with -p instead of --same")
                    }
                    preset = try library.look(kept.presetID)
                    recipe = kept
                    ev = 0
                } else {
                    preset = chosen
                    // With a date stamp each photo has its own text, so its own look.
                    recipe = DevelopRecipe(presetID: chosen.id, presetName: chosen.name, intensity: o.intensity, grainSeed: o.grainSeed,
                                           grainFrame: 0, dateStamp: o.dateStamp?.text(for: source.captureDate))
                    ev = o.ev
                }
                let output = outputPath(for: input, options: o, preset: preset, format: format)
                if !o.force && FileManager.default.fileExists(atPath: output) {
                    throw ToolError("\(output): already exists (use --force to replace it)")
                }
                var image = source.image
                darkroom.develop(&image, preset: preset, recipe: recipe, ev: ev, threads: o.threads)
                var metadata = source.metadata
                metadata.presetName = preset.name
                try ImageWriter.write(image, to: output, format: format, metadata: metadata, heic: heic,
                                      jpegQuality: jpegQuality, replace: o.force)
            } catch {
                failed += 1
                progress.clear()
                if case ImageFileError.tooLarge = error, o.maxMegapixels == nil {
                    log("loopix: \(error); see --max-megapixels")
                } else {
                    log("loopix: \(error)")
                }
            }
        }
        progress.finish()
        if o.inputs.count > 1 {
            let with = o.same ? "the looks they were taken with" : chosen.name
            log("developed \(o.inputs.count - failed) of \(o.inputs.count) with \(with)" + (failed > 0 ? " (\(failed) failed)" : ""))
        }
        return failed
    }

    /// A photo to develop: its upright pixels, what its output carries of it, when it was taken
    /// and, for a Loopix negative, how the camera developed it.
    struct Source {
        var image: RGBImage
        var metadata: PhotoMetadata
        var captureDate: Date
        var recipe: DevelopRecipe?
    }

    /// Reads a photo (JPEG, PNG, HEIC) or a raw negative (a TIFF-based raw: DNG and most
    /// cameras' own), by its first bytes.
    static func readSource(_ path: String, limit: PixelLimit) throws -> Source {
        if RawNegative.isTIFFBased(path: path) {
            let negative = try RawNegative.develop(path: path, limit: limit)
            let date = negative.captureDate ?? fileDate(path)
            var metadata = PhotoMetadata(make: negative.make, model: negative.model, date: date, orientation: 1)
            metadata.exposureTime = negative.exposureTime
            metadata.iso = negative.iso
            metadata.focalLength = negative.focalLength
            return Source(image: negative.image, metadata: metadata, captureDate: date, recipe: try RawNegative.recipe(path: path))
        }
        let photo = try ImageReader.readPhoto(path: path, limit: limit)
        // The source's camera, exposure, capture time and GPS, upright pixels (orientation 1).
        return Source(image: photo.image, metadata: PhotoMetadata(date: Date(), orientation: 1, sourceExif: photo.exif),
                      captureDate: captureDate(of: photo, path: path), recipe: nil)
    }

    static func fileDate(_ path: String) -> Date {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date) ?? Date()
    }

    static func outputPath(for input: String, options o: Options, preset: Preset, format: ImageFormat) -> String {
        if let out = o.output { return out }
        let name = ((input as NSString).lastPathComponent as NSString).deletingPathExtension
        if let dir = o.outputDirectory { return dir + "/" + name + "." + format.fileExtension }
        let dir = (input as NSString).deletingLastPathComponent
        let file = "\(name)-\(preset.id).\(format.fileExtension)"
        return dir.isEmpty ? file : dir + "/" + file
    }
}

/// A one-line progress bar on standard error, redrawn in place.
final class ProgressBar {
    let total: Int
    let enabled: Bool

    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled
    }

    func show(done: Int, current: String) {
        guard enabled else { return }
        let width = 24
        let filled = total == 0 ? width : done * width / total
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let name = (current as NSString).lastPathComponent
        write("\r\u{1B}[K[\(bar)] \(done)/\(total) \(name)")
    }

    func clear() { if enabled { write("\r\u{1B}[K") } }

    func finish() {
        guard enabled else { return }
        show(done: total, current: "")
        write("\n")
    }

    private func write(_ s: String) { FileHandle.standardError.write(Data(s.utf8)) }
}
