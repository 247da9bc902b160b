import Controls
import Foundation
import BoardIO
import XCTest

/// The IMU driver on i2c-stub in the HIL VM (LOOPIX_HIL=1): a register file at 0x68 preloaded
/// as an MPU-6050 (WHO_AM_I 0x75 = 0x68); accelerations written into its data registers.
final class IMUBackendTests: XCTestCase {
    func stubBus() throws -> Int {
        guard ProcessInfo.processInfo.environment["LOOPIX_HIL"] == "1" else {
            throw XCTSkip("HIL test: runs in the VM bench with i2c-stub (set LOOPIX_HIL=1)")
        }
        if findStub() == nil { shell("/sbin/modprobe i2c-stub chip_addr=0x68; /sbin/modprobe i2c-dev") }
        guard let bus = findStub() else { throw XCTSkip("no i2c-stub adapter (modprobe i2c-stub chip_addr=0x68)") }
        let d = try I2CDevice(bus: bus, address: 0x68)
        try d.writeByte(0x75, 0x68)
        return bus
    }

    func findStub() -> Int? {
        let root = "/sys/bus/i2c/devices"
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] where entry.hasPrefix("i2c-") {
            let name = (try? String(contentsOfFile: "\(root)/\(entry)/name", encoding: .utf8)) ?? ""
            if name.lowercased().contains("stub") { return Int(entry.dropFirst(4)) }
        }
        return nil
    }

    @discardableResult
    func shell(_ command: String) -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", command]
        do { try p.run() } catch { return -1 }
        p.waitUntilExit()
        return p.terminationStatus
    }

    /// The measured acceleration (g, ±4 g: 8192 LSB/g) and rotation (°/s, ±500: 65.5 LSB) into the stub.
    func write(_ d: I2CDevice, accel: SIMD3<Double>, gyro: SIMD3<Double> = .zero) throws {
        func put(_ r: UInt8, _ v: Double) throws {
            let raw = UInt16(bitPattern: Int16(max(-32768, min(32767, v.rounded()))))
            try d.writeByte(r, UInt8(raw >> 8))
            try d.writeByte(r + 1, UInt8(raw & 0xFF))
        }
        try put(0x3B, accel.x * 8192); try put(0x3D, accel.y * 8192); try put(0x3F, accel.z * 8192)
        try put(0x43, gyro.x * 65.5); try put(0x45, gyro.y * 65.5); try put(0x47, gyro.z * 65.5)
    }

    func feed(_ imu: IMUSensor, _ analyzer: inout MotionAnalyzer, seconds: Double, from t: inout Double) throws {
        let end = t + seconds
        while t < end {
            analyzer.add(try imu.read(), at: t)
            Thread.sleep(forTimeInterval: 0.02)
            t += 0.02
        }
    }

    func testScriptedAccelerationsChangeGrainRateAndOrientation() throws {
        let bus = try stubBus()
        let d = try I2CDevice(bus: bus, address: 0x68)
        try write(d, accel: SIMD3(0, 1, 0))
        let imu = try IMUProbe.open(bus: bus, address: 0x68)
        XCTAssertEqual(imu.chip, .mpu6050)
        var analyzer = MotionAnalyzer()
        var t = 0.0
        try feed(imu, &analyzer, seconds: 2.6, from: &t)
        XCTAssertEqual(analyzer.orientation, 1)
        XCTAssertTrue(analyzer.isStill)
        XCTAssertLessThan(analyzer.grainRate, 0.5)
        // Shaken and turned right side down.
        try write(d, accel: SIMD3(-1.2, 0.1, 0), gyro: SIMD3(120, -60, 30))
        try feed(imu, &analyzer, seconds: 0.6, from: &t)
        XCTAssertFalse(analyzer.isStill)
        XCTAssertGreaterThan(analyzer.grainRate, 0.8)
        try write(d, accel: SIMD3(-1, 0, 0))
        try feed(imu, &analyzer, seconds: 0.6, from: &t)
        XCTAssertEqual(analyzer.orientation, 6)
    }

    /// A sensor that goes bad mid-run (every register reading 0xFF, as a browned-out chip or a
    /// bus with only its pull-ups left does) is detected and dropped, never a crash. (i2c-stub
    /// itself cannot be unloaded while the sensor holds /dev/i2c-N open: rmmod says "in use".)
    func testSensorGoingBadMidRunIsDetectedAndDropped() throws {
        let bus = try stubBus()
        let d = try I2CDevice(bus: bus, address: 0x68)
        try write(d, accel: SIMD3(0, 1, 0))
        let imu = try IMUProbe.open(bus: bus, address: 0x68)
        XCTAssertNoThrow(try imu.read())
        for register in UInt8(0x3B)...UInt8(0x48) { try d.writeByte(register, 0xFF) }
        try d.writeByte(0x75, 0xFF)
        let deadline = Date().addingTimeInterval(3)
        var failure: Error?
        while Date() < deadline && failure == nil {
            do { _ = try imu.read() } catch { failure = error }
            Thread.sleep(forTimeInterval: 0.02)
        }
        guard let error = failure as? MotionSensorError else {
            return XCTFail("expected the sensor to be dropped, got \(String(describing: failure))")
        }
        if case .badData = error {} else { XCTFail("expected badData, got \(error)") }
        XCTAssertThrowsError(try IMUProbe.open(bus: bus, address: 0x68), "no IMU answers WHO_AM_I any more")
        try d.writeByte(0x75, 0x68)
    }
}
