#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import System

/// The most pixels a reader decodes. Every reader compares the size its file declares (PNG
/// IHDR, JPEG SOF, HEIC ispe and grid/overlay canvas) with it before allocating anything of
/// that size, so a tiny file that claims 65535×65535 pixels (a decompression bomb) is one
/// error, not gigabytes of memory.
public struct PixelLimit: Sendable, Equatable, CustomStringConvertible {
    public var maxPixels: Int
    /// Where the limit comes from, completing "exceeds the limit of N MP …".
    public var origin: String

    public init(maxPixels: Int, origin: String) {
        self.maxPixels = max(1, maxPixels)
        self.origin = origin
    }

    public init(megapixels: Double, origin: String) {
        self.init(maxPixels: Int((megapixels * 1e6).rounded()), origin: origin)
    }

    /// "200 MP", "4.29 MP", "0.5 MP".
    public var description: String { "\(megapixelText(Double(maxPixels))) MP" }

    /// No image above this, whatever the memory: larger than any camera's frame.
    public static let cap = 200_000_000

    /// What a develop costs, measured (release build, peak RSS by `/usr/bin/time`, JPEG, PNG and
    /// HEIC inputs of 12 and 48 MP developed to HEIC: 122–130 and 329–338 MiB; a 12.3 MP DNG
    /// with --same: 240 MiB), rounded up: a fixed part (the program, the looks, x265) and a part
    /// per pixel (the decoded photo, the graded one, the encoder's planes).
    static let fixedBytes = 56 << 20
    static let bytesPerPixel = 7
    /// A raw develop holds libraw's working image too: 4 × 16 bits a photosite beside the raw
    /// data and the result.
    static let rawBytesPerPhotosite = 16

    /// The memory a develop may use: 256 MiB (the camera's own 12 MP negative needs 240; a
    /// 12 MP photo 125), or half of this machine's memory where that is less (the other half
    /// is the system's and the daemon's).
    public static let developBudget = 256 << 20

    /// The pixels a develop holds within `budget` bytes, at most `cap`.
    public static func pixels(forBudget budget: Int) -> Int {
        min(cap, max(1, (budget - fixedBytes) / bytesPerPixel))
    }

    /// The budget on a machine with `bytes` of memory.
    static func budget(forMemory bytes: Int) -> Int { min(developBudget, bytes / 2) }

    /// What this machine's develop budget holds: 30 MP (13.1 MP of raw photosites) with 512 MB
    /// or more, about 23 MP (10.2 MP raw) on a 512 MB Pi Zero 2 W, which has half of its
    /// 425 MB to give.
    public static let forThisMachine = PixelLimit(maxPixels: pixels(forBudget: budget(forMemory: machineMemory())),
                                                  origin: "for the \(budget(forMemory: machineMemory()) >> 20) MB a develop may use here")

    /// The photosites of a raw negative that fit where this limit allows `maxPixels` pixels.
    public var maxRawPhotosites: Int { maxPixels / Self.rawBytesPerPhotosite * Self.bytesPerPixel }

    /// Physical memory in bytes, lowered to the cgroup's limit when one is set.
    static func machineMemory() -> Int { Int(SystemMemory.limitBytes()) }

    /// Throws `.tooLarge` when a `width`×`height` image would exceed the limit.
    func check(width: Int, height: Int, format: ImageFormat, path: String) throws {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixels > maxPixels {
            throw ImageFileError.tooLarge(path: path, format: format, width: width, height: height, limit: self)
        }
    }
}

/// Megapixels for messages: whole numbers from 10 on, else three significant digits.
func megapixelText(_ pixels: Double) -> String {
    let mp = pixels / 1e6
    return mp >= 10 ? String(Int(mp.rounded())) : String(format: "%.3g", mp)
}
