import TestFixtures
import XCTest
import FilmCore
import ImageFiles
@testable import Display
import Raster

final class HeadlessDisplayTests: XCTestCase {
    func testSnapshotRoundTripsTheLastFrameExactly() throws {
        let dir = try makeTemporaryDirectory("snapshot")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let display = try HeadlessDisplay(width: 48, height: 32)
        try display.show(patternImage(width: 48, height: 32, seed: 1))
        let last = patternImage(width: 48, height: 32, seed: 9)
        try display.show(last)
        XCTAssertEqual(display.lastFrame, last)
        XCTAssertEqual(display.framesShown, 2)

        let path = dir + "/frame.png"
        try display.snapshot(to: path)
        XCTAssertEqual(try ImageReader.read(path: path), last)
        // Snapshots replace the previous one.
        try display.show(patternImage(width: 48, height: 32, seed: 4))
        try display.snapshot(to: path)
        XCTAssertEqual(try ImageReader.read(path: path), patternImage(width: 48, height: 32, seed: 4))
    }

    func testShowCopiesTheFrameAndKeepsEarlierCopiesIntact() throws {
        let display = try HeadlessDisplay(width: 8, height: 4)
        var frame = patternImage(width: 8, height: 4, seed: 2)
        try display.show(frame)
        let kept = display.lastFrame
        frame[0, 0] = SIMD3(1, 2, 3)  // the caller reuses its buffer
        XCTAssertEqual(display.lastFrame, patternImage(width: 8, height: 4, seed: 2))
        try display.show(frame)
        XCTAssertEqual(display.lastFrame[0, 0], SIMD3(1, 2, 3))
        XCTAssertEqual(kept, patternImage(width: 8, height: 4, seed: 2), "a copy taken earlier must not change")
    }

    func testWrongFrameSizeAndEarlySnapshotAreTypedErrors() throws {
        let display = try HeadlessDisplay(width: 8, height: 4)
        XCTAssertThrowsError(try display.snapshot(to: "/nonexistent/x.png")) { error in
            XCTAssertEqual(error as? DisplayError, .noFrame(display: "headless 8×4"))
        }
        XCTAssertThrowsError(try display.show(RGBImage(width: 4, height: 8))) { error in
            XCTAssertEqual(error as? DisplayError,
                           .frameSize(display: "headless 8×4", expectedWidth: 8, expectedHeight: 4, width: 4, height: 8))
            XCTAssertEqual("\(error)", "headless 8×4: show: frame is 4×8, the display is 8×4")
        }
        XCTAssertThrowsError(try HeadlessDisplay(width: 0, height: 4))
        try display.show(RGBImage(width: 8, height: 4))
        XCTAssertThrowsError(try display.snapshot(to: "/nonexistent-dir-loopix/x.png")) { error in
            XCTAssertTrue(error is ImageFileError, "\(error)")
        }
        XCTAssertTrue(display.pollEvents().isEmpty)
        XCTAssertFalse(display.closeRequested)
    }
}
