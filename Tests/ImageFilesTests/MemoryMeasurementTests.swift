import FilmCore
import Foundation
import XCTest
@testable import ImageFiles

/// Not a timed test: a measurement run on request (LOOPIX_MEASURE_12MP=1), printing the peak
/// RSS of the whole process after a 12-megapixel HEIC encode.
final class MemoryMeasurementTests: XCTestCase {
    func testMeasure12MegapixelHEICEncode() throws {
        guard ProcessInfo.processInfo.environment["LOOPIX_MEASURE_12MP"] != nil else {
            throw XCTSkip("set LOOPIX_MEASURE_12MP=1 to measure a 4056×3040 HEIC encode")
        }
        let w = 4056, h = 3040
        var pixels = [UInt8](repeating: 0, count: w * h * 3)
        pixels.withUnsafeMutableBufferPointer { p in
            for y in 0..<h {
                for x in 0..<w {
                    let i = (y * w + x) * 3
                    p[i] = UInt8(truncatingIfNeeded: x / 16 + y / 32)
                    p[i + 1] = UInt8(truncatingIfNeeded: (x ^ y) / 8)
                    p[i + 2] = UInt8(truncatingIfNeeded: y / 12)
                }
            }
        }
        // A photograph tiled over the frame if the samples are there (realistic entropy),
        // else the synthetic pattern.
        if let sample = try? ImageReader.read(path: try samplePath("rocket.jpg")) {
            pixels.withUnsafeMutableBufferPointer { p in
                for y in 0..<h {
                    for x in 0..<w {
                        let s = ((y % sample.height) * sample.width + x % sample.width) * 3
                        let i = (y * w + x) * 3
                        p[i] = sample.pixels[s]; p[i + 1] = sample.pixels[s + 1]; p[i + 2] = sample.pixels[s + 2]
                    }
                }
            }
        }
        let image = RGBImage(width: w, height: h, pixels: pixels)
        pixels = []
        let rssBefore = procStatus("VmRSS")
        // Reset the peak (VmHWM) so that it measures the encode alone, on top of the input image.
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let hwmReset = procStatus("VmHWM")
        let dir = try temporaryDirectory(self)
        let start = Date()
        let outPath = ProcessInfo.processInfo.environment["LOOPIX_MEASURE_OUT"] ?? dir + "/big.heic"
        try ImageWriter.write(image, to: outPath, format: .heic, metadata: sampleMetadata,
                              heic: HEICOptions(quality: 0.9, x265Preset: "ultrafast"), replace: true)
        let seconds = Date().timeIntervalSince(start)
        let peak = procStatus("VmHWM")
        let size = (try? FileManager.default.attributesOfItem(atPath: outPath)[.size] as? Int) ?? 0
        print("12MP HEIC encode: \(String(format: "%.2f", seconds)) s, file \(size / 1024) KiB, "
              + "RSS with the 12 MP input in memory \(rssBefore / 1024) MiB (peak reset to \(hwmReset / 1024) MiB), "
              + "peak RSS during encode+write \(peak / 1024) MiB")
        XCTAssertLessThan(peak / 1024, 200)
    }
}

/// A field of /proc/self/status in KiB (0 if unavailable).
func procStatus(_ field: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }
    return 0
}
