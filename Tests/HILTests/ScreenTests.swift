import Controls
import Display
import Viewfinder
import FilmCore
import Foundation
import XCTest
import Raster

/// With `scripts/hil/run --screen FILE` the VM also has a virtio-gpu display whose picture the
/// host dumps over QMP: what was really scanned out, read back from outside the guest.
final class ScreenTests: XCTestCase {
    func testScreenDumpShowsWhatIsScannedOut() throws {
        try ScreenDump.requireScreen()
        let (connector, mode) = try DRMTests.connectedConnector(module: "virtio_gpu")
        let holder = try Bench.Running("modetest", ["-M", "virtio_gpu", "-s", "\(connector):\(mode)"])
        defer { _ = holder.wait(timeout: 10) }
        // modetest's stdout is a pipe (buffered): give it time to set the mode and draw.
        Thread.sleep(forTimeInterval: 3)
        XCTAssertTrue(holder.process.isRunning, "modetest exited early")
        let dump = try ScreenDump.take()
        XCTAssertEqual("\(dump.width)x\(dump.height)", mode)
        // modetest's test pattern: several distinct colour bars across the top row.
        let colours = Set((0..<dump.width).map { x in [dump.rgb(x, 0).0, dump.rgb(x, 0).1, dump.rgb(x, 0).2] })
        XCTAssertGreaterThanOrEqual(colours.count, 7, "the dump does not show the colour bars")
    }

    /// KMSDisplay on virtio-gpu, atomic and legacy: the screen qemu shows has the overlay's
    /// rule-of-thirds grid and the look's name at the pixels OverlayLayout gives them, and is
    /// the frame everywhere else.
    func testOverlayReadBackFromTheScreenAtomic() throws { try overlayReadBack(.atomic) }
    func testOverlayReadBackFromTheScreenLegacy() throws { try overlayReadBack(.legacy) }

    private func overlayReadBack(_ flip: FlipAPI) throws {
        let card = try ScreenDump.virtioCard()
        let display = try KMSDisplay(KMSConfiguration(cards: [card], flip: flip))
        XCTAssertEqual(display.usesAtomic, flip == .atomic, display.name)
        var model = OverlayModel()
        model.grid = true
        model.presetName = flip == .atomic ? "Kodak Portra 400" : "Fuji Velvia 50"
        var frame = RGBImage(width: display.width, height: display.height)
        frame.pixels.withUnsafeMutableBufferPointer { $0.update(repeating: 60) }
        var renderer = OverlayRenderer(width: display.width, height: display.height)
        renderer.draw(model, on: &frame)
        // A few frames, as the preview loop would show them, then the dump.
        for _ in 0..<5 { try display.show(frame) }
        _ = display.withScreenBuffer { _, _, _, _ in 0 } // the last flip has completed
        let dump = try ScreenDump.take()
        XCTAssertEqual(dump.width, display.modeWidth)
        XCTAssertEqual(dump.height, display.modeHeight)
        let layout = renderer.layout
        let name = try XCTUnwrap(layout.presetName)
        var mismatches = 0, marked = 0, checked = 0
        for rect in layout.gridLines + [name] {
            for y in rect.y..<(rect.y + rect.height) {
                for x in rect.x..<(rect.x + rect.width) {
                    let i = (y * frame.width + x) * 3
                    let shown = dump.rgb(x, y)
                    if shown != (frame.pixels[i], frame.pixels[i + 1], frame.pixels[i + 2]) { mismatches += 1 }
                    if shown != (60, 60, 60) { marked += 1 }
                    checked += 1
                }
            }
        }
        XCTAssertEqual(mismatches, 0, "pixels of the grid and the name that differ on screen (of \(checked))")
        XCTAssertGreaterThan(marked, 100, "grid lines and the name are drawn on screen")
        // And the rest of the screen is the frame too, pixel for pixel.
        var elsewhere = 0
        for y in 0..<frame.height {
            for x in 0..<frame.width {
                let i = (y * frame.width + x) * 3
                if dump.rgb(x, y) != (frame.pixels[i], frame.pixels[i + 1], frame.pixels[i + 2]) { elsewhere += 1 }
            }
        }
        XCTAssertEqual(elsewhere, 0, "pixels of the screen that are not the frame's")
    }
}
