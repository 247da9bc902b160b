import BoardIO
import Controls
import Foundation
import System
import XCTest

/// The photobooth on the bench's real drivers: the big button is a gpio-sim line (its press a
/// kernel edge), the camera is vimc through libcamera, the flash is another gpio-sim line
/// driven through libgpiod and read back from gpio-sim's side while the still is taken.
final class BoothHILTests: XCTestCase {
    /// Watches a gpio-sim line's level (its sim_gpioN/value) every millisecond, keeping each
    /// change with its monotonic time.
    final class LineWatcher: @unchecked Sendable {
        private let file: String
        private let lock = NSLock()
        private var changes: [(time: UInt64, high: Bool)] = []
        private var stopped = false
        private let done = DispatchSemaphore(value: 0)

        init(file: String) {
            self.file = file
            Thread.detachNewThread { [self] in
                var last: Bool?
                while !self.isStopped {
                    if let text = try? String(contentsOfFile: file, encoding: .utf8) {
                        let high = text.hasPrefix("1")
                        if high != last {
                            last = high
                            lock.lock()
                            changes.append((MonotonicClock.now(), high))
                            lock.unlock()
                        }
                    }
                    usleep(1000)
                }
                done.signal()
            }
        }

        private var isStopped: Bool {
            lock.lock()
            defer { lock.unlock() }
            return stopped
        }

        func stop() -> [(time: UInt64, high: Bool)] {
            lock.lock()
            stopped = true
            lock.unlock()
            done.wait()
            return changes
        }
    }

    func testTheBigButtonOnGPIOTakesVimcStillsAtTheCountdownsEndWithTheFlashOn() throws {
        try Bench.require("/dev/media0")
        let boards = FileManager.default.temporaryDirectory.appendingPathComponent("booth-boards-\(UUID().uuidString.prefix(8))").path
        try Bench.writeBoardFile(in: boards)
        defer { try? FileManager.default.removeItem(atPath: boards) }
        let button = try GPIOChipInfo.findLine(named: "shutter-right")
        let flash = try GPIOChipInfo.findLine(named: "flash")
        let sysfs = try Bench.value("LOOPIX_HIL_GPIO_SYSFS")
        let pull = "\(sysfs)/sim_gpio\(button.offset)/pull", level = "\(sysfs)/sim_gpio\(flash.offset)/value"
        try "pull-up".write(toFile: pull, atomically: false, encoding: .utf8)

        // A session of three shots, 3 s countdowns: vimc has one stream, so each still is the
        // pipeline reconfigured for it; the booth asks that early and learns by how much. Under
        // emulation the reconfiguration takes 1.4–1.7 s, so 3 s leave room for a longer lead.
        let daemon = try BenchDaemon(name: "booth", sections: """
            "board": "bench", "boardsDirectory": "\(boards)", "imu": { "enabled": false },
            "mode": "photobooth", "booth": { "countdownSeconds": 3, "shots": 3, "reviewSeconds": 5, "flash": "exposure" },
            "camera": { "backend": "libcamera", "required": true },
            "display": { "backend": "headless", "width": 160, "height": 120 }
            """)
        defer { kill(daemon.process.processIdentifier, SIGKILL) }  // not minutes developing three 9 MP stills
        let ready = try daemon.waitForStatus(seconds: 60) { $0.contains("\"camera\": \"ok\"") }
        XCTAssertTrue(ready.contains("\"camera\": \"ok\""), ready)
        XCTAssertEqual(try String(contentsOfFile: level, encoding: .utf8).prefix(1), "0", "the flash is off while idle")

        let watcher = LineWatcher(file: level)
        let pressed = MonotonicClock.now()
        try "pull-down".write(toFile: pull, atomically: false, encoding: .utf8)
        Thread.sleep(forTimeInterval: 0.1)
        try "pull-up".write(toFile: pull, atomically: false, encoding: .utf8)
        // Each shot's exposure (the still's sensor timestamp) against its countdown's end.
        var booth: [String: Any] = [:], answer = ""
        let deadline = Date().addingTimeInterval(240)
        while (booth["taken"] as? [String])?.count != 3 && Date() < deadline && daemon.process.isRunning {
            Thread.sleep(forTimeInterval: 0.2)
            let status = try daemon.status()
            answer = status.output
            // A status that did not come (the daemon busy) keeps the last one that did.
            booth = status.fields?["booth"] as? [String: Any] ?? booth
        }
        Thread.sleep(forTimeInterval: 0.3)
        let changes = watcher.stop()
        let offsets = booth["exposureOffsetsMs"] as? [Double] ?? []
        if offsets.count != 3 {
            XCTFail("the press took three shots: \(booth); the last status: \(answer.prefix(300)); \(daemon.diagnosis())")
        }
        XCTAssertEqual(changes.map(\.high), [false, true, false, true, false, true, false], "the flash went on and off for each shot")
        if changes.count == 7, let exposed = booth["exposedAtNs"] as? Double {
            let on = changes[5].time, off = changes[6].time
            XCTAssertLessThan(on, UInt64(exposed), "the flash was on before the last exposure")
            XCTAssertGreaterThan(off, UInt64(exposed), "and still on when it was exposed")
        }
        for i in stride(from: 1, to: changes.count - 1, by: 2) {
            print("hil: booth flash \((i + 1) / 2): on \(Double(changes[i].time - pressed) / 1e6) ms after the press, for \(Double(changes[i + 1].time - changes[i].time) / 1e6) ms")
        }
        // The first shot is asked 1 s early, which may be less than vimc's reconfiguration
        // takes under emulation (it is then late); from then on the lead is the last
        // reconfiguration the camera reported, half as much again and 100 ms, and the last shot is on
        // time. Either frames before the countdown's end were skipped and its frame is the
        // first after (within the still stream's period), or the reconfigured stream's first
        // frame came within the booth's on-time bound (50 ms).
        let period = booth["stillFramePeriodMs"] as? Double
        let onTimeMs = 50.0
        if let last = offsets.last {
            XCTAssertGreaterThanOrEqual(last, 0, "no frame from before the countdown's end")
            if let period {
                XCTAssertLessThanOrEqual(last, period + 20, "the first frame after the countdown's end: \(booth)")
            } else {
                XCTAssertLessThanOrEqual(last, onTimeMs, "no frame skipped, so the reconfigured stream's first frame, on time: \(booth)")
            }
        }
        print("hil: booth on vimc: exposure after each countdown's end \(offsets) ms; still stream frame period " +
              "\(period ?? -1) ms; lead at the end \(booth["stillLeadMs"] ?? "?") ms (countdown 3000 ms; accelerator \(ProcessInfo.processInfo.environment["LOOPIX_HIL_ACCEL"] ?? "?"))")
    }
}
