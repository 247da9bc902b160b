import BoardIO
import Controls
import Foundation
import System
import XCTest

/// A register file on a pretend SMBus, like i2c-stub: every register readable and writable,
/// block reads auto-increment. `failing` makes every transfer fail (a vanished chip).
final class FakeSMBus: SMBusDevice, @unchecked Sendable {  // all state behind `lock`
    let location = "fake 0x68"
    private let lock = NSLock()
    private var registers = [UInt8](repeating: 0, count: 256)
    private var failing = false

    func set(_ r: UInt8, _ v: UInt8) { lock.lock(); registers[Int(r)] = v; lock.unlock() }
    func get(_ r: UInt8) -> UInt8 { lock.lock(); defer { lock.unlock() }; return registers[Int(r)] }
    func fail(_ on: Bool) { lock.lock(); failing = on; lock.unlock() }
    func fill(_ v: UInt8) { lock.lock(); registers = [UInt8](repeating: v, count: 256); lock.unlock() }

    /// Writes an MPU-6050's data registers (big-endian) for a measured acceleration (g, ±4 g
    /// scale: 8192 LSB/g) and rotation (°/s, ±500: 65.5 LSB per °/s).
    func setMPU(accel: SIMD3<Double>, gyro: SIMD3<Double> = .zero) {
        func put(_ r: UInt8, _ v: Double) {
            let raw = UInt16(bitPattern: Int16(max(-32768, min(32767, v.rounded()))))
            set(r, UInt8(raw >> 8))
            set(r + 1, UInt8(raw & 0xFF))
        }
        put(0x3B, accel.x * 8192); put(0x3D, accel.y * 8192); put(0x3F, accel.z * 8192)
        put(0x43, gyro.x * 65.5); put(0x45, gyro.y * 65.5); put(0x47, gyro.z * 65.5)
    }

    func readByte(_ register: UInt8) throws(SMBusError) -> UInt8 {
        lock.lock(); defer { lock.unlock() }
        if failing { throw SMBusError(errno: Errno(ENXIO), what: "reading 0x\(String(register, radix: 16)) of \(location)") }
        return registers[Int(register)]
    }

    func writeByte(_ register: UInt8, _ value: UInt8) throws(SMBusError) {
        lock.lock(); defer { lock.unlock() }
        if failing { throw SMBusError(errno: Errno(ENXIO), what: "writing 0x\(String(register, radix: 16)) of \(location)") }
        registers[Int(register)] = value
    }

    func readBlock(_ register: UInt8, count: Int) throws(SMBusError) -> [UInt8] {
        lock.lock(); defer { lock.unlock() }
        if failing { throw SMBusError(errno: Errno(EREMOTEIO), what: "reading block 0x\(String(register, radix: 16)) of \(location)") }
        return (0..<count).map { registers[(Int(register) + $0) & 0xFF] }
    }
}

final class IMUTests: XCTestCase {
    func mpu() -> FakeSMBus {
        let bus = FakeSMBus()
        bus.set(0x75, 0x68)
        bus.set(0x6B, 0x40)  // asleep after reset
        return bus
    }

    func testIdentifiesChipsByWhoAmI() throws {
        let bus = FakeSMBus()
        XCTAssertNil(try IMUChip.identify(bus))
        bus.set(0x75, 0x68); XCTAssertEqual(try IMUChip.identify(bus), .mpu6050)
        bus.set(0x75, 0x70); XCTAssertEqual(try IMUChip.identify(bus), .mpu6500)
        bus.set(0x75, 0); bus.set(0x0F, 0x69); XCTAssertEqual(try IMUChip.identify(bus), .lsm6ds3)
        bus.set(0x0F, 0x6C); XCTAssertEqual(try IMUChip.identify(bus), .lsm6dso)
    }

    func testMPUConfiguredAndScaled() throws {
        let bus = mpu()
        bus.setMPU(accel: SIMD3(0, 1, 0), gyro: SIMD3(10, -20, 250))  // level: the chip measures +1 g up
        let imu = try IMUSensor(device: bus, start: false)
        XCTAssertEqual(imu.chip, .mpu6050)
        XCTAssertEqual(bus.get(0x6B), 0x01)  // awake
        XCTAssertEqual(bus.get(0x1C), 0x08)  // ±4 g
        XCTAssertEqual(bus.get(0x1B), 0x08)  // ±500 °/s
        imu.poll()
        let s = try imu.read()
        XCTAssertEqual(s.acceleration.y, -1, accuracy: 1e-3)  // gravity pulls down
        XCTAssertEqual(s.acceleration.x, 0, accuracy: 1e-3)
        XCTAssertEqual(s.rotation.x, 10, accuracy: 0.02)
        XCTAssertEqual(s.rotation.y, -20, accuracy: 0.02)
        XCTAssertEqual(s.rotation.z, 250, accuracy: 0.02)
    }

    func testScaleFollowsWhatTheChipReportsBack() {
        var r = IMURegisters(chip: .mpu6500)
        let bus = FakeSMBus()
        XCTAssertNoThrow(try r.configure(bus))
        XCTAssertEqual(r.accelScale, 1 / 8192.0, accuracy: 1e-12)
        XCTAssertEqual(r.gyroScale, 1 / 65.5, accuracy: 1e-12)
    }

    func testLSM6DecodedLittleEndian() throws {
        let bus = FakeSMBus()
        bus.set(0x0F, 0x6C)
        // Measured +1 g on x (camera turned, right side up? x measures up: left side down).
        let oneG = UInt16(Int(1 / 0.000122))  // ±4 g: 0.122 mg/LSB
        bus.set(0x28, UInt8(oneG & 0xFF)); bus.set(0x29, UInt8(oneG >> 8))
        let dps = UInt16(bitPattern: Int16(-100 / 0.0175))  // -100 °/s at ±500
        bus.set(0x26, UInt8(dps & 0xFF)); bus.set(0x27, UInt8(dps >> 8))
        let imu = try IMUSensor(device: bus, start: false)
        XCTAssertEqual(imu.chip, .lsm6dso)
        XCTAssertEqual(bus.get(0x10), 0x48)
        XCTAssertEqual(bus.get(0x11), 0x44)
        imu.poll()
        let s = try imu.read()
        XCTAssertEqual(s.acceleration.x, -1, accuracy: 1e-3)
        XCTAssertEqual(s.rotation.z, -100, accuracy: 0.05)
    }

    func testUnknownChipIsRefused() {
        XCTAssertThrowsError(try IMUSensor(device: FakeSMBus(), start: false)) { e in
            guard case MotionSensorError.badData(let why)? = e as? MotionSensorError else { return XCTFail("\(e)") }
            XCTAssertTrue(why.contains("WHO_AM_I"), why)
        }
    }

    func testGarbageIsDetectedAndDropped() throws {
        let bus = mpu()
        bus.setMPU(accel: SIMD3(0, 1, 0))
        let imu = try IMUSensor(device: bus, garbageLimit: 5, start: false)
        imu.poll()
        XCTAssertNoThrow(try imu.read())
        bus.fill(0xFF)  // a bus with nothing driving it
        for _ in 0..<4 { imu.poll() }
        XCTAssertNoThrow(try imu.read(), "a few bad reads are tolerated")
        bus.fill(0); bus.set(0x75, 0x68); bus.setMPU(accel: SIMD3(4, 4, 4))  // ~7 g at rest: absurd
        for _ in 0..<5 { imu.poll() }
        XCTAssertThrowsError(try imu.read()) { e in
            guard case MotionSensorError.badData? = e as? MotionSensorError else { return XCTFail("\(e)") }
        }
    }

    func testVanishedSensorIsDroppedNotCrashed() throws {
        let bus = mpu()
        bus.setMPU(accel: SIMD3(0, 1, 0))
        let imu = try IMUSensor(device: bus, rate: 200, failureLimit: 3)
        bus.fail(true)
        let deadline = Date().addingTimeInterval(3)
        var error: Error?
        while Date() < deadline {
            do { _ = try imu.read() } catch let e { error = e; break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        guard case MotionSensorError.notResponding(let why)? = error as? MotionSensorError else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(why.contains("3 times in a row"), why)
        imu.stop()
    }

    func testTiltChangesOrientationThroughTheAnalyzer() throws {
        let bus = mpu()
        bus.setMPU(accel: SIMD3(0, 1, 0))
        let imu = try IMUSensor(device: bus, start: false)
        var analyzer = MotionAnalyzer()
        var t = 0.0
        for _ in 0..<20 { imu.poll(); analyzer.add(try imu.read(), at: t); t += 0.01 }
        XCTAssertEqual(analyzer.orientation, 1)
        bus.setMPU(accel: SIMD3(-1, 0, 0))  // the chip measures up along −x: right side down
        for _ in 0..<100 { imu.poll(); analyzer.add(try imu.read(), at: t); t += 0.01 }
        XCTAssertEqual(analyzer.orientation, 6)
    }
}
