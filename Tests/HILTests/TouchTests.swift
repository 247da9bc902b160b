import Controls
import Foundation
import BoardIO
import XCTest

/// A tap through a uinput touch screen arrives as the right focus point.
final class HILTouchTests: XCTestCase {
    private func tap(rotation: ScreenRotation, x: Int32, y: Int32) throws -> InputEvent? {
        try requireHIL()
        let screen = try UInputTouchscreen(maxX: 4095, maxY: 4095)
        let input = EvdevInput(rotation: rotation)
        // Wait for the device node and open it before the tap (evdev only queues to open clients).
        let start = Date()
        while !input.openDevices.contains(where: { $0.path == screen.devnode }) && Date().timeIntervalSince(start) < 3 {
            usleep(50_000)
            input.rescan()
        }
        XCTAssertTrue(input.openDevices.contains { $0.path == screen.devnode && $0.kind == "touch" },
                      "\(screen.devnode ?? "no node") not found among \(input.openDevices)")
        _ = input.drain()
        screen.tap(x: x, y: y)
        let sent = Date()
        while Date().timeIntervalSince(sent) < 2 {
            if let event = input.drain().first { return event }
            usleep(10_000)
        }
        return nil
    }

    private func assertTap(_ event: InputEvent?, _ x: Double, _ y: Double, file: StaticString = #filePath, line: UInt = #line) {
        guard case .focusTap(let tx, let ty)? = event else {
            return XCTFail("expected a focus tap, got \(String(describing: event))", file: file, line: line)
        }
        XCTAssertEqual(tx, x, accuracy: 0.002, file: file, line: line)
        XCTAssertEqual(ty, y, accuracy: 0.002, file: file, line: line)
    }

    func testTapUnrotated() throws {
        assertTap(try tap(rotation: .none, x: 1024, y: 3071), 1024.0 / 4095, 3071.0 / 4095)
    }

    func testTapOnQuarterTurnedPanel() throws {
        // Panel (0.25, 0.75) on a panel turned 90°: picture (0.75, 0.75).
        assertTap(try tap(rotation: .quarter, x: 1024, y: 3071), 3071.0 / 4095, 1 - 1024.0 / 4095)
    }
}
