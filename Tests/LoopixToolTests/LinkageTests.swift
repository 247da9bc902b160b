import Foundation
import XCTest

/// `loopix` runs on any machine — a laptop developing photos, a server making timelapses — so it
/// links no device library: not libcamera, libdrm, SDL2, ALSA, libgpiod or libevdev, nor the
/// daemon's services (libmicrohttpd, libcups, libsystemd). Its libraries are codecs (libheif,
/// libjpeg, libpng, libtiff, libraw, FFmpeg's) and libsodium for licenses.
final class LinkageTests: XCTestCase {
    static let deviceLibraries = ["libcamera", "libSDL2", "libdrm", "libasound", "libgpiod", "libevdev",
                                  "libmicrohttpd", "libcups", "libsystemd"]

    /// `ldd`: nothing of a device library anywhere in what loads with `loopix` — except libdrm,
    /// which FFmpeg's own libraries bring (libavutil → libva-drm) and which `loopix` itself
    /// does not ask for (the second check).
    func testLoopixLinksNoDeviceLibrary() throws {
        let loopix = Fixtures.loopix
        guard FileManager.default.isExecutableFile(atPath: loopix) else { return XCTFail("\(loopix) is not built") }
        let loaded = try run("/usr/bin/ldd", [loopix]).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertGreaterThan(loaded.count, 5, "ldd listed: \(loaded)")
        XCTAssertTrue(loaded.contains { $0.hasPrefix("libheif") }, "a codec is there, so the list is real")
        for library in Self.deviceLibraries where library != "libdrm" {
            XCTAssertFalse(loaded.contains { $0.hasPrefix(library) }, "loopix loads \(library): \(loaded.filter { $0.hasPrefix(library) })")
        }
        // What the binary itself needs (its ELF NEEDED entries): no device library at all.
        let needed = try run("/usr/bin/objdump", ["-p", loopix]).split(separator: "\n")
            .filter { $0.contains("NEEDED") }.map { $0.split(separator: " ").last.map(String.init) ?? "" }
        XCTAssertTrue(needed.contains { $0.hasPrefix("libheif") }, "\(needed)")
        for library in Self.deviceLibraries {
            XCTAssertFalse(needed.contains { $0.hasPrefix(library) }, "loopix needs \(library): \(needed)")
        }
    }

    private func run(_ program: String, _ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "\(program) \(arguments)")
        return text
    }
}
