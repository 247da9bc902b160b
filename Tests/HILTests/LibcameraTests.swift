import Foundation
import XCTest

/// libcamera drives the vimc pipeline like real camera hardware. Until the libcamera Swift
/// backend exists, Debian's `cam` tool (libcamera-tools) stands in for it.
final class LibcameraTests: XCTestCase {
    /// `cam -l` lines look like `1: 'Sensor B' (platform/vimc.0 Sensor B)`; returns the index.
    private func vimcCameraIndex() throws -> String {
        let list = try Bench.run("cam", ["-l"])
        XCTAssertEqual(list.status, 0, list.stderr)
        let line = list.stdout.split(separator: "\n").first { $0.contains("(platform/vimc") }
        guard let line else {
            XCTFail("cam -l lists no vimc camera:\n\(list.stdout)\n\(list.stderr)")
            throw XCTSkip("no vimc camera")
        }
        return String(line.prefix { $0 != ":" }).trimmingCharacters(in: .whitespaces)
    }

    func testListsVimcCamera() throws {
        try Bench.require("/dev/media0")
        let index = try vimcCameraIndex()
        XCTAssertNotNil(Int(index), "camera index '\(index)' is not a number")
    }

    func testCapturesTenFramesWithRisingSequenceNumbers() throws {
        try Bench.require("/dev/media0")
        let index = try vimcCameraIndex()
        // One line per completed request, e.g.
        // `27.912817 (30.00 fps) cam0-stream0 seq: 000003 bytesused: 6220800`.
        let capture = try Bench.run("cam", ["-c", index, "-C10"], timeout: 120)
        XCTAssertEqual(capture.status, 0, capture.stderr)
        let sequences = capture.stdout.split(separator: "\n").compactMap { line -> Int? in
            guard let r = line.range(of: #"seq: *([0-9]+)"#, options: .regularExpression) else { return nil }
            return Int(line[r].drop { !$0.isNumber })
        }
        XCTAssertEqual(sequences.count, 10, "expected 10 frames:\n\(capture.stdout)")
        XCTAssertEqual(sequences, sequences.sorted(), "sequence numbers not in order: \(sequences)")
        XCTAssertEqual(Set(sequences).count, sequences.count, "repeated sequence numbers: \(sequences)")
        let bytes = capture.stdout.split(separator: "\n").compactMap { line -> Int? in
            guard let r = line.range(of: #"bytesused: *[0-9]+"#, options: .regularExpression) else { return nil }
            return Int(line[r].drop { !$0.isNumber })
        }
        XCTAssertTrue(bytes.allSatisfy { $0 > 0 }, "empty frames: \(bytes)")
    }
}
