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
    /// A develop holds up to about 10 bytes per pixel at its peak (a HEIC input decoded by
    /// libheif, a progressive JPEG's coefficients, a PNG being written: ~6–9, plus the file)
    /// and may take half the memory: the other half is the system's and the daemon's.
    static let bytesPerPixel = 10

    /// Half of this machine's memory (physical RAM, or the cgroup's limit if lower, as
    /// under a systemd `MemoryMax=`) at 10 bytes per pixel, at most 200 MP: about 21 MP on a
    /// 512 MB Pi Zero 2 W, about 100 MP on a 2 GB Pi, the cap from about 4 GB on.
    public static let forThisMachine = PixelLimit(maxPixels: pixels(forMemory: machineMemory()),
                                                  origin: "for this machine's memory")

    static func pixels(forMemory bytes: Int) -> Int {
        min(cap, bytes / 2 / bytesPerPixel)
    }

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
