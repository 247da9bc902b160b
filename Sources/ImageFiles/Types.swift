import FilmCore
import Foundation
import Raster

/// The file formats ImageFiles reads and writes.
public enum ImageFormat: String, Sendable, CaseIterable {
    case heic, jpeg, png

    /// `heic`/`heif`, `jpg`/`jpeg`, `png`, case-insensitive, with or without a leading dot.
    public init?(pathExtension: String) {
        var ext = pathExtension.lowercased()
        if ext.hasPrefix(".") { ext.removeFirst() }
        switch ext {
        case "heic", "heif": self = .heic
        case "jpg", "jpeg": self = .jpeg
        case "png": self = .png
        default: return nil
        }
    }

    /// The extension used for new files: "heic", "jpg", "png".
    public var fileExtension: String {
        switch self {
        case .heic: return "heic"
        case .jpeg: return "jpg"
        case .png: return "png"
        }
    }
}

/// What a photo's EXIF says. Every field is optional; nil fields are not written.
///
/// `presetName` is written twice: as `ImageDescription` (the bare name) and in `Software` as
/// `"Loopix <version> (<preset>)"`. Without a preset, `Software` is `"Loopix <version>"`.
/// `date` is written as `DateTimeOriginal`, `DateTimeDigitized` and `DateTime` in the
/// process's local time zone, format `"YYYY:MM:DD HH:MM:SS"` — as `DateTime` alone when
/// `sourceExif` brings a `DateTimeOriginal`.
public struct PhotoMetadata: Sendable, Equatable {
    public var make: String?
    public var model: String?
    public var lensModel: String?
    /// Millimetres.
    public var focalLength: Double?
    public var focalLength35mm: Int?
    /// Seconds.
    public var exposureTime: Double?
    public var iso: Int?
    public var date: Date?
    /// EXIF orientation 1...8 (other values are an error when writing).
    public var orientation: Int?
    public var presetName: String?
    /// Write the date's fraction of a second too (SubSecTime, SubSecTimeOriginal,
    /// SubSecTimeDigitized: six digits, microseconds).
    public var subSecondTime = false
    /// EXIF UserComment (ASCII).
    public var userComment: String?
    /// The EXIF of the photo this one was developed from (TIFF header on, as `DecodedPhoto`
    /// has it): its camera, lens, exposure, capture time and GPS tags are carried over (see
    /// `ExifWriter.carriedTags`); the fields above are written over them.
    public var sourceExif: [UInt8]?

    public init(make: String? = nil, model: String? = nil, lensModel: String? = nil,
                focalLength: Double? = nil, focalLength35mm: Int? = nil, exposureTime: Double? = nil,
                iso: Int? = nil, date: Date? = nil, orientation: Int? = nil, presetName: String? = nil,
                sourceExif: [UInt8]? = nil) {
        self.make = make
        self.model = model
        self.lensModel = lensModel
        self.focalLength = focalLength
        self.focalLength35mm = focalLength35mm
        self.exposureTime = exposureTime
        self.iso = iso
        self.date = date
        self.orientation = orientation
        self.presetName = presetName
        self.sourceExif = sourceExif
    }
}

/// HEIC encoder settings.
public struct HEICOptions: Sendable {
    /// 0...1, mapped to libheif's lossy quality 0...100 (x265's CRF = (100 − q·100) / 2).
    /// 0.7 keeps ≥ 94 % of the grain's RMS on the finest stock at 0.6× the bytes of 0.9
    /// (README: "Grain and file size"; GrainCompressionTests holds it to 90 %).
    public var quality: Double = HEICOptions.defaultQuality
    public static let defaultQuality = 0.7
    /// JPEG's default quality (libjpeg's 1…100): keeps ≥ 97 % of the grain.
    public static let defaultJPEGQuality = 90
    /// One of x265's presets (`HEICOptions.x265Presets`); anything else is an error when writing.
    public var x265Preset: String = "ultrafast"
    /// How many tiles are encoded at once (each by its own x265 encoder): all cores by default.
    public var encoders: Int = ProcessInfo.processInfo.activeProcessorCount
    /// The threads the tiles are encoded on (Dispatch's pool unless told otherwise).
    public var parallel: any ParallelWork = DispatchParallelWork()

    public init(quality: Double = HEICOptions.defaultQuality, x265Preset: String = "ultrafast", encoders: Int? = nil) {
        self.quality = quality
        self.x265Preset = x265Preset
        if let encoders { self.encoders = max(1, encoders) }
    }

    /// x265's preset names, fastest first.
    public static let x265Presets = ["ultrafast", "superfast", "veryfast", "faster", "fast",
                                     "medium", "slow", "slower", "veryslow", "placebo"]

    /// The coding-tree and intra transform depths x265's own preset sets (x265's presets
    /// table), which libheif's x265 plugin replaces by fixed values of its own (CTU 64, intra
    /// TU depth 2): for ultrafast those cost about a seventh more instructions a save for the
    /// same file (README: "Photo files"). Nil for a name that is no preset.
    public static func x265PresetDepths(_ preset: String) -> (ctu: Int, intraTUDepth: Int)? {
        guard let i = x265Presets.firstIndex(of: preset) else { return nil }
        return (ctu: i <= 2 ? 32 : 64, intraTUDepth: max(1, i - 5))
    }
}
