import Controls
import Foundation
import BoardIO
import XCTest

/// Real libgpiod on gpio-sim in the HIL VM (LOOPIX_HIL=1): lines named after the controls;
/// a press is the sim line's pull written to pull-down, a release pull-up.
final class GPIOBackendTests: XCTestCase {
    struct Sim {
        var chip: String
        var pins: [ControlPin: Int]
        var pullFiles: [ControlPin: String]
    }

    func sim() throws -> Sim {
        guard ProcessInfo.processInfo.environment["LOOPIX_HIL"] == "1" else {
            throw XCTSkip("HIL test: runs in the VM bench with gpio-sim (set LOOPIX_HIL=1)")
        }
        var chip = ""
        var pins: [ControlPin: Int] = [:], files: [ControlPin: String] = [:]
        for pin in ControlPin.allCases {
            let (path, offset) = try GPIOChipInfo.findLine(named: pin.rawValue)
            chip = path
            pins[pin] = offset
            files[pin] = try pullFile(chip: path, offset: offset)
        }
        return Sim(chip: chip, pins: pins, pullFiles: files)
    }

    /// /sys/bus/gpio/devices/gpiochipN/sim_gpioM/pull, or found under /sys/devices/platform.
    func pullFile(chip: String, offset: Int) throws -> String {
        let name = (chip as NSString).lastPathComponent
        let direct = "/sys/bus/gpio/devices/\(name)/sim_gpio\(offset)/pull"
        if FileManager.default.fileExists(atPath: direct) { return direct }
        for dev in (try? FileManager.default.contentsOfDirectory(atPath: "/sys/devices/platform")) ?? [] where dev.hasPrefix("gpio-sim") {
            let p = "/sys/devices/platform/\(dev)/\(name)/sim_gpio\(offset)/pull"
            if FileManager.default.fileExists(atPath: p) { return p }
        }
        throw XCTSkip("no gpio-sim pull file for \(chip) line \(offset)")
    }

    func pull(_ s: Sim, _ pin: ControlPin, down: Bool) {
        let fd = open(s.pullFiles[pin]!, O_WRONLY)
        XCTAssertGreaterThanOrEqual(fd, 0, "opening \(s.pullFiles[pin]!)")
        let text = down ? "pull-down" : "pull-up"
        _ = text.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    func input(_ s: Sim, debounceMs: Int = 5) throws -> ButtonInput {
        for pin in ControlPin.allCases { pull(s, pin, down: false) }
        var settings = ButtonInput.Settings(chip: s.chip, pins: s.pins)
        settings.debounceMilliseconds = debounceMs
        settings.acceleration = .none
        let input = try ButtonInput(settings)
        Thread.sleep(forTimeInterval: 0.05)
        _ = input.drain()
        return input
    }

    func collect(_ input: ButtonInput, for seconds: Double) -> [InputEvent] {
        Thread.sleep(forTimeInterval: seconds)
        return input.drain()
    }

    /// The booth's flash line: requested as an output through libgpiod, driven high and low,
    /// read back from gpio-sim's own view of the line; released (and free) when the owner goes.
    func testAnOutputLineIsDrivenAndReadBack() throws {
        _ = try sim()
        let (chip, offset) = try GPIOChipInfo.findLine(named: "flash")
        let valueFile = (try pullFile(chip: chip, offset: offset) as NSString).deletingLastPathComponent + "/value"
        func level() throws -> String { try String(contentsOfFile: valueFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) }
        var output: GPIOOutput? = try GPIOOutput(chip: chip, offset: offset, consumer: "hil-flash")
        let info = try GPIOChipInfo.find(chip)
        XCTAssertEqual(try info.line(offset).consumer, "hil-flash")
        XCTAssertEqual(try level(), "0", "requested low")
        try output?.set(true)
        XCTAssertEqual(try level(), "1", "driven high")
        try output?.set(false)
        XCTAssertEqual(try level(), "0", "driven low")
        try output?.set(true)
        output = nil
        XCTAssertFalse(try info.line(offset).used, "released with its owner")
        XCTAssertThrowsError(try GPIOOutput(chip: chip, offset: info.lineCount)) { e in
            XCTAssertTrue("\(e)".contains("beyond the chip's lines"), "\(e)")
        }
    }

    func testEveryButtonBecomesItsEvent() throws {
        let s = try sim()
        let input = try input(s)
        let order: [ControlPin] = [.shutterLeft, .shutterRight, .mode, .lens, .filter, .aeLock, .afLock, .encoderSwitch]
        for pin in order {
            pull(s, pin, down: true)
            Thread.sleep(forTimeInterval: 0.03)
            pull(s, pin, down: false)
            Thread.sleep(forTimeInterval: 0.03)
        }
        XCTAssertEqual(collect(input, for: 0.2), [.leftButton, .rightButton, .mode, .nextLens, .nextFilter, .aeLock, .afLock, .encoderPressed])
    }

    func testBouncyPressCountsOnce() throws {
        let s = try sim()
        let input = try input(s)
        for _ in 0..<3 {
            for down in [true, false, true, false, true] { pull(s, .shutterRight, down: down) }  // bounce: µs apart
            Thread.sleep(forTimeInterval: 0.05)
            for down in [false, true, false] { pull(s, .shutterRight, down: down) }
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertEqual(collect(input, for: 0.2), [.rightButton, .rightButton, .rightButton])
    }

    func testGlitchShorterThanTheDebounceIsIgnored() throws {
        let s = try sim()
        let input = try input(s, debounceMs: 30)
        pull(s, .mode, down: true)
        Thread.sleep(forTimeInterval: 0.005)
        pull(s, .mode, down: false)
        XCTAssertEqual(collect(input, for: 0.2), [])
    }

    func testEncoderStepCountsWithBounce() throws {
        let s = try sim()
        let input = try input(s)
        var a = true, b = true
        func turn(_ detents: Int) {
            for _ in 0..<abs(detents) {
                for i in 0..<4 {
                    let isA = (i % 2 == 0) == (detents > 0)
                    let level = isA ? !a : !b
                    if isA { a = level } else { b = level }
                    let pin: ControlPin = isA ? .encoderA : .encoderB
                    pull(s, pin, down: !level)
                    pull(s, pin, down: level)   // bounce
                    pull(s, pin, down: !level)
                    Thread.sleep(forTimeInterval: 0.002)
                }
            }
        }
        turn(20)
        var forward = 0, backward = 0
        for case .encoderTurned(let n) in collect(input, for: 0.3) { if n > 0 { forward += n } else { backward -= n } }
        XCTAssertEqual(forward, 20)
        XCTAssertEqual(backward, 0)
        turn(-12)
        forward = 0
        for case .encoderTurned(let n) in collect(input, for: 0.3) { if n > 0 { forward += n } else { backward -= n } }
        XCTAssertEqual(forward, 0)
        XCTAssertEqual(backward, 12)
    }
}
