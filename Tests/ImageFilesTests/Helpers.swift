import FilmCore
import Foundation
import XCTest
@testable import ImageFiles
import Raster

/// A smooth, colourful test image (gradients, no sharp edges).
func smoothImage(width: Int, height: Int) -> RGBImage {
    var image = RGBImage(width: width, height: height)
    for y in 0..<height {
        for x in 0..<width {
            let fx = Double(x) / Double(max(1, width - 1)), fy = Double(y) / Double(max(1, height - 1))
            image[x, y] = SIMD3(UInt8(30 + 190 * fx), UInt8(40 + 170 * fy), UInt8(200 - 150 * (fx + fy) / 2))
        }
    }
    return image
}

func meanAbsoluteError(_ a: RGBImage, _ b: RGBImage) -> Double {
    precondition(a.pixels.count == b.pixels.count)
    var sum = 0
    for i in 0..<a.pixels.count { sum += abs(Int(a.pixels[i]) - Int(b.pixels[i])) }
    return Double(sum) / Double(a.pixels.count)
}

/// A fresh empty directory, removed after the test.
func temporaryDirectory(_ test: XCTestCase) throws -> String {
    let dir = NSTemporaryDirectory() + "imagefiles-test-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
    return dir
}

func directoryContents(_ dir: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
}

func fileBytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// `<package root>/../shared/<relative>`: samples and tools that live beside the project's own
/// checkouts (a plain clone has no ../shared).
func sharedPath(_ relative: String, file: StaticString = #filePath) -> String {
    let root = URL(fileURLWithPath: "\(file)").deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return root.deletingLastPathComponent().appendingPathComponent("shared/\(relative)").path
}

/// `Tests/Samples/<name>`, a photograph the repository ships; its absence is a failure.
func samplePath(_ name: String, file: StaticString = #filePath) throws -> String {
    let tests = URL(fileURLWithPath: "\(file)").deletingLastPathComponent().deletingLastPathComponent()
    let path = tests.appendingPathComponent("Samples/\(name)").path
    guard FileManager.default.fileExists(atPath: path) else {
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
    }
    return path
}

/// Asserts that `body` throws an ImageFileError whose description names `path`; returns it.
@discardableResult
func assertImageFileError(_ path: String, file: StaticString = #filePath, line: UInt = #line,
                          _ body: () throws -> Void) -> ImageFileError? {
    do {
        try body()
        XCTFail("expected an ImageFileError for \(path)", file: file, line: line)
        return nil
    } catch let error as ImageFileError {
        XCTAssertTrue(error.description.contains(path), "\(error.description) does not name \(path)", file: file, line: line)
        XCTAssertFalse(error.description.contains("\n"), "description is not one line", file: file, line: line)
        return error
    } catch {
        XCTFail("expected an ImageFileError, got \(error)", file: file, line: line)
        return nil
    }
}

let sampleMetadata = PhotoMetadata(make: "Raspberry Pi", model: "IMX477", lensModel: "6mm CS",
                                   focalLength: 6.0, focalLength35mm: 33, exposureTime: 1.0 / 125, iso: 400,
                                   date: Date(timeIntervalSince1970: 1_700_000_000), orientation: 1,
                                   presetName: "Portra 400")

/// `../shared/<relative>`, an executable, or XCTSkip naming `what` did not run (the test
/// command's closing lines list each such reason).
func sharedTool(_ relative: String, what: String) throws -> String {
    let path = sharedPath(relative)
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw XCTSkip("\(what) did not run: \(path) not found (../shared/tools lives beside the project's own checkouts only)")
    }
    return path
}

/// A program on PATH, or XCTSkip naming the Debian package that scripts/setup installs it from.
func installedTool(_ name: String, package: String) throws -> String {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    throw XCTSkip("\(name) is not installed (Debian package \(package); scripts/setup installs it)")
}

/// Runs a program to completion; standard error goes to a file so that neither pipe can fill up.
func runProgram(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let errPath = NSTemporaryDirectory() + "stderr-\(UUID().uuidString)"
    guard FileManager.default.createFile(atPath: errPath, contents: nil) else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: errPath])
    }
    defer { try? FileManager.default.removeItem(atPath: errPath) }
    let out = Pipe()
    process.standardOutput = out
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
    return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), stderr)
}

/// Four flat colours, split off-centre so that every flip and turn is told apart.
func quadrants(width: Int, height: Int) -> RGBImage {
    var image = RGBImage(width: width, height: height)
    let colours: [SIMD3<UInt8>] = [SIMD3(200, 40, 40), SIMD3(40, 200, 40), SIMD3(40, 40, 200), SIMD3(220, 220, 60)]
    for y in 0..<height {
        for x in 0..<width {
            image[x, y] = colours[(y < height / 3 ? 0 : 2) + (x < width / 4 ? 0 : 1)]
        }
    }
    return image
}

/// The displayed image for EXIF orientation `o` of a stored image.
func applyExifOrientation(_ s: RGBImage, _ o: Int) -> RGBImage {
    let W = s.width, H = s.height
    let swap = o >= 5
    var d = RGBImage(width: swap ? H : W, height: swap ? W : H)
    for y in 0..<d.height {
        for x in 0..<d.width {
            let (sx, sy): (Int, Int)
            switch o {
            case 2: (sx, sy) = (W - 1 - x, y)
            case 3: (sx, sy) = (W - 1 - x, H - 1 - y)
            case 4: (sx, sy) = (x, H - 1 - y)
            case 5: (sx, sy) = (y, x)
            case 6: (sx, sy) = (y, H - 1 - x)
            case 7: (sx, sy) = (W - 1 - y, H - 1 - x)
            case 8: (sx, sy) = (W - 1 - y, x)
            default: (sx, sy) = (x, y)
            }
            d[x, y] = s[sx, sy]
        }
    }
    return d
}
