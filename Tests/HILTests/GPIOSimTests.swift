import Foundation
import XCTest

/// gpio-sim lines, named like the board's buttons and encoder pins (scripts/hil/gpio-lines),
/// seen through the GPIO character device with libgpiod's tools (Debian `gpiod`, 1.6).
final class GPIOSimTests: XCTestCase {
    private func lineNames() throws -> [String] {
        let file = try Bench.value("LOOPIX_HIL_GPIO_LINES")
        return try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    private func chipDevice() throws -> (chip: String, sysfs: String) {
        let chip = try Bench.value("LOOPIX_HIL_GPIO_CHIP")
        try Bench.require("/dev/\(chip)")
        return (chip, try Bench.value("LOOPIX_HIL_GPIO_SYSFS"))
    }

    /// `gpiofind NAME` prints `gpiochip0 3`.
    private func find(_ name: String) throws -> (chip: String, offset: Int) {
        let found = try Bench.run("gpiofind", [name])
        let fields = found.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard found.status == 0, fields.count == 2, let offset = Int(fields[1]) else {
            XCTFail("gpiofind \(name): \(found.stdout)\(found.stderr)")
            throw XCTSkip("no line \(name)")
        }
        return (fields[0], offset)
    }

    private func pull(_ sysfs: String, _ offset: Int, _ direction: String) throws {
        try direction.write(toFile: "\(sysfs)/sim_gpio\(offset)/pull", atomically: false, encoding: .utf8)
    }

    private func simValue(_ sysfs: String, _ offset: Int) -> String? {
        (try? String(contentsOfFile: "\(sysfs)/sim_gpio\(offset)/value", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testLinesCarryTheBoardNames() throws {
        let (chip, _) = try chipDevice()
        let names = try lineNames()
        XCTAssertFalse(names.isEmpty)
        for (offset, name) in names.enumerated() {
            let found = try find(name)
            XCTAssertEqual(found.chip, chip, name)
            XCTAssertEqual(found.offset, offset, name)
        }
    }

    func testFallingAndRisingEdges() throws {
        let (chip, sysfs) = try chipDevice()
        let line = try find("shutter-left")
        XCTAssertEqual(line.chip, chip)
        try pull(sysfs, line.offset, "pull-up")  // a released button idles high

        // Two events, then gpiomon exits; `%e` is 0 for falling, 1 for rising, `%o` the offset.
        let monitor = try Bench.Running("gpiomon", ["-b", "-n", "2", "-F", "%e %o", chip, "\(line.offset)"])
        defer { _ = monitor.wait(timeout: 1) }
        // The line is requested once gpioinfo shows it used by gpiomon.
        var requested = false
        for _ in 0..<200 where !requested {
            let info = try Bench.run("gpioinfo", [chip])
            requested = info.stdout.split(separator: "\n").contains {
                $0.contains("\"shutter-left\"") && $0.contains("\"gpiomon\"")
            }
            if !requested { Thread.sleep(forTimeInterval: 0.05) }
        }
        XCTAssertTrue(requested, "gpiomon never requested shutter-left")
        XCTAssertEqual(simValue(sysfs, line.offset), "1")

        try pull(sysfs, line.offset, "pull-down")  // pressed
        XCTAssertTrue(monitor.waitForOutput(timeout: 10) { $0.contains("\n") }, "no falling edge")
        XCTAssertEqual(simValue(sysfs, line.offset), "0")
        try pull(sysfs, line.offset, "pull-up")    // released
        let result = monitor.wait(timeout: 10)
        XCTAssertEqual(result.status, 0, "gpiomon: \(result.stderr)")
        let events = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(events, ["0 \(line.offset)", "1 \(line.offset)"], "expected a falling then a rising edge")
    }
}
