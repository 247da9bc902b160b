import Foundation
import XCTest
import FilmCore
import ImageFiles
import Raster

/// Paths and fixtures shared by the tool's tests.
enum Fixtures {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let samples = packageRoot + "/Tests/Samples"

    /// A sample photo the repository ships (Tests/Samples).
    static func sample(_ name: String) throws -> String {
        let path = samples + "/" + name
        guard FileManager.default.fileExists(atPath: path) else {
            throw SampleMissing(path: path)
        }
        return path
    }

    /// The `loopix` executable that `swift build` put next to the test bundle (wherever
    /// `--build-path` put that), else one in `.build`.
    static var loopix: String {
        let besideBundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/loopix"
        let candidates = [besideBundle] + [".build/debug/loopix", ".build/release/loopix"].map { packageRoot + "/" + $0 }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }

    static func temporaryDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("loopix-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A smooth, colourful test photo written as PNG.
    static func writePhoto(_ path: String, width: Int = 96, height: Int = 64) throws {
        var image = RGBImage(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                image[x, y] = SIMD3(UInt8(x * 255 / width), UInt8(y * 255 / height), UInt8((x + y) * 127 / (width + height)))
            }
        }
        try ImageWriter.write(image, to: path, format: .png, replace: true)
    }

    /// Runs the `loopix` executable (or another); returns exit status, standard error and output.
    static func run(_ arguments: [String], executable: String = loopix) throws -> (status: Int32, stderr: String, stdout: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let err = Pipe(), out = Pipe()
        process.standardError = err
        process.standardOutput = out
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stderr, as: UTF8.self), String(decoding: stdout, as: UTF8.self))
    }

    /// Runs exiftool (software no one here wrote) and returns its output, or skips saying how
    /// to install it.
    static func exiftool(_ arguments: [String]) throws -> String {
        let candidates = ["/usr/bin/exiftool", "/usr/local/bin/exiftool"]
        guard let exiftool = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("exiftool is not installed (Debian package libimage-exiftool-perl; scripts/setup installs it)")
        }
        let r = try run(arguments, executable: exiftool)
        guard r.status == 0 else { throw ProgramFailed(description: "exiftool \(arguments) exited \(r.status): \(r.stderr)") }
        return r.stdout
    }

    /// The tags exiftool reads from `path`, numbers as numbers (`-n`).
    static func exifTags(_ path: String) throws -> [String: Any] {
        let json = try exiftool(["-j", "-n", path])
        let list = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]]
        return try XCTUnwrap(list?.first, "exiftool -j gave \(json)")
    }
}

struct ProgramFailed: Error, CustomStringConvertible {
    let description: String
}

/// A sample the repository ships is not there: a broken checkout, a failure, never a skip.
struct SampleMissing: Error, CustomStringConvertible {
    let path: String
    var description: String { "sample photo \(path) not found (Tests/Samples is part of the repository)" }
}
