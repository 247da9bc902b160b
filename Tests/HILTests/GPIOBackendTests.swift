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

    /// Everything the reader delivers once it has settled: drained until `done` says the
    /// expected events are in (or `timeout` passes), then for `quiet` seconds more so that an
    /// extra event would still be seen. On a loaded VM the reader thread can lag the pulls by
    /// more than any fixed wait, so the test waits for the events, not for the clock.
    func collect(_ input: ButtonInput, timeout: Double = 10, quiet: Double = 0.3,
                 until done: ([InputEvent]) -> Bool) -> [InputEvent] {
        var events: [InputEvent] = []
        let deadline = Date().addingTimeInterval(timeout)
        while !done(events) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
            events += input.drain()
        }
        Thread.sleep(forTimeInterval: quiet)
        return events + input.drain()
    }

    func collect(_ input: ButtonInput, count: Int) -> [InputEvent] {
        collect(input) { $0.count >= count }
    }

    /// Detents turned forward and backward, once `expected` of them (either way) are in.
    func collectTurns(_ input: ButtonInput, expecting expected: Int, quiet: Double = 0.3) -> (forward: Int, backward: Int) {
        func sums(_ events: [InputEvent]) -> (forward: Int, backward: Int) {
            var forward = 0, backward = 0
            for case .encoderTurned(let n) in events { if n > 0 { forward += n } else { backward -= n } }
            return (forward, backward)
        }
        return sums(collect(input, quiet: quiet) { let s = sums($0); return s.forward + s.backward >= expected })
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
        XCTAssertEqual(collect(input, count: order.count), [.leftButton, .rightButton, .mode, .nextLens, .nextFilter, .aeLock, .afLock, .encoderPressed])
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
        XCTAssertEqual(collect(input, count: 3), [.rightButton, .rightButton, .rightButton])
    }

    func testGlitchShorterThanTheDebounceIsIgnored() throws {
        let s = try sim()
        let input = try input(s, debounceMs: 100)
        pull(s, .mode, down: true)
        Thread.sleep(forTimeInterval: 0.005)
        pull(s, .mode, down: false)
        // Nothing may come: wait as long as a press would take to arrive on a loaded VM.
        XCTAssertEqual(collect(input, timeout: 0, quiet: 1.0) { _ in true }, [])
    }

    /// Turns with contact bounce (three edges per transition), two detents at a time, each pair
    /// collected before the next: libgpiod 1.6's kernel interface (Debian 12, this bench) queues
    /// only 16 edges per line and drops the rest without a word, and a pair is 12 edges a phase,
    /// so a reader that a loaded VM stalls still loses none. (libgpiod 2.x, on the Pi, queues
    /// 1024 events and numbers them, so a loss there is counted and logged.)
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
                    // 20 ms a transition (a brisk hand's turn). With both edges asked for, the
                    // kernel's v1 line events (libgpiod 1.6) read a phase's level when their
                    // interrupt thread runs, not at the edge; at 2 ms a transition, a thread
                    // that a loaded emulated VM delays can run after the same phase's next
                    // transition and report the wrong level (the likely cause of a detent
                    // lost at that speed even with each pair's edges inside the queue).
                    Thread.sleep(forTimeInterval: 0.02)
                }
            }
        }
        func turnInPairs(_ detents: Int) -> (forward: Int, backward: Int) {
            var forward = 0, backward = 0
            for _ in 0..<(abs(detents) / 2) {
                turn(detents > 0 ? 2 : -2)
                let pair = collectTurns(input, expecting: 2, quiet: 0.05)
                forward += pair.forward
                backward += pair.backward
            }
            let late = collectTurns(input, expecting: 0)   // nothing more may come
            return (forward + late.forward, backward + late.backward)
        }
        let first = turnInPairs(20)
        XCTAssertEqual(first.forward, 20)
        XCTAssertEqual(first.backward, 0)
        let second = turnInPairs(-12)
        XCTAssertEqual(second.forward, 0)
        XCTAssertEqual(second.backward, 12)
    }
}
