import Controls
import Foundation
import System

/// Why an SMBus transfer failed: the errno and what was being done.
public struct SMBusError: Error, Equatable, CustomStringConvertible {
    public let errno: Errno
    public let what: String
    public init(errno: Errno, what: String) {
        self.errno = errno
        self.what = what
    }
    public var description: String { "\(what): \(errno)" }
}

/// One device on an SMBus (a chip at an address), as the IMU driver needs it. The real one is
/// `GPIO.I2CDevice` (i2c-dev); tests use a register file.
public protocol SMBusDevice: AnyObject {
    /// Where it is, for logs ("i2c-1 0x68").
    var location: String { get }
    func readByte(_ register: UInt8) throws(SMBusError) -> UInt8
    func writeByte(_ register: UInt8, _ value: UInt8) throws(SMBusError)
    /// `count` consecutive registers from `register` (the chip auto-increments).
    func readBlock(_ register: UInt8, count: Int) throws(SMBusError) -> [UInt8]
}

/// The IMU chips Loopix knows, by WHO_AM_I.
public enum IMUChip: String, Sendable, CaseIterable {
    case mpu6050 = "MPU-6050", mpu6500 = "MPU-6500", lsm6ds3 = "LSM6DS3", lsm6dso = "LSM6DSO"

    /// The WHO_AM_I register and the value this chip answers there.
    public var whoAmI: (register: UInt8, value: UInt8) {
        switch self {
        case .mpu6050: return (0x75, 0x68)
        case .mpu6500: return (0x75, 0x70)
        case .lsm6ds3: return (0x0F, 0x69)
        case .lsm6dso: return (0x0F, 0x6C)
        }
    }

    /// Which chip answers at `device`: WHO_AM_I at 0x75 (InvenSense: 0x68 MPU-6050, 0x70
    /// MPU-6500) or at 0x0F (ST: 0x69 LSM6DS3, 0x6C LSM6DSO). nil: none of them.
    public static func identify(_ device: SMBusDevice) throws(SMBusError) -> IMUChip? {
        let invensense = try device.readByte(0x75)
        if let chip = allCases.first(where: { $0.whoAmI == (0x75, invensense) }) { return chip }
        let st = try device.readByte(0x0F)
        return allCases.first { $0.whoAmI == (0x0F, st) }
    }
}

/// Register maps and scaling of the supported chips (from their datasheets).
public struct IMURegisters: Sendable {
    public let chip: IMUChip
    /// g per LSB and °/s per LSB, read back from the chip's full-scale settings.
    public private(set) var accelScale = 0.0
    public private(set) var gyroScale = 0.0

    public init(chip: IMUChip) { self.chip = chip }

    /// Wakes the chip and sets ±4 g, ±500 °/s, about 100 Hz output with a low-pass filter;
    /// then reads the full-scale settings back to scale samples by what the chip really uses.
    public mutating func configure(_ d: SMBusDevice) throws(SMBusError) {
        switch chip {
        case .mpu6050, .mpu6500:
            try d.writeByte(0x6B, 0x01)  // PWR_MGMT_1: awake, clock from the X gyro PLL
            try d.writeByte(0x19, 9)     // SMPLRT_DIV: 1 kHz / (1 + 9) = 100 Hz
            try d.writeByte(0x1A, 0x03)  // CONFIG: DLPF 44 Hz
            try d.writeByte(0x1B, 0x08)  // GYRO_CONFIG: FS_SEL 1, ±500 °/s
            try d.writeByte(0x1C, 0x08)  // ACCEL_CONFIG: AFS_SEL 1, ±4 g
            let a = (try d.readByte(0x1C) >> 3) & 3, g = (try d.readByte(0x1B) >> 3) & 3
            accelScale = 1.0 / [16384.0, 8192, 4096, 2048][Int(a)]
            gyroScale = 1.0 / [131.0, 65.5, 32.8, 16.4][Int(g)]
        case .lsm6ds3, .lsm6dso:
            try d.writeByte(0x12, 0x44)  // CTRL3_C: BDU, IF_INC (auto-increment)
            try d.writeByte(0x10, 0x48)  // CTRL1_XL: 104 Hz, ±4 g
            try d.writeByte(0x11, 0x44)  // CTRL2_G: 104 Hz, ±500 °/s
            let xl = try d.readByte(0x10), g = try d.readByte(0x11)
            // FS_XL bits 3:2 → 00 ±2 g, 01 ±16 g, 10 ±4 g, 11 ±8 g (mg/LSB)
            accelScale = [0.061, 0.488, 0.122, 0.244][Int((xl >> 2) & 3)] / 1000
            // FS_G bits 3:2 → 250, 500, 1000, 2000 °/s; bit 1 (FS_125) → 125 °/s (mdps/LSB)
            gyroScale = (g & 0x02 != 0 ? 4.375 : [8.75, 17.5, 35, 70][Int((g >> 2) & 3)]) / 1000
        }
    }

    /// The first register of one burst read, and its length.
    public var dataRegister: (start: UInt8, count: Int) {
        switch chip {
        case .mpu6050, .mpu6500: return (0x3B, 14)  // ACCEL_XOUT_H … GYRO_ZOUT_L, big-endian
        case .lsm6ds3, .lsm6dso: return (0x22, 12)  // OUTX_L_G … OUTZ_H_XL, little-endian
        }
    }

    /// The burst decoded: acceleration the chip measures (g; +1 g upward at rest) and angular
    /// rate (°/s), both in the chip's axes.
    public func decode(_ bytes: [UInt8]) -> (acceleration: SIMD3<Double>, rotation: SIMD3<Double>)? {
        guard bytes.count >= dataRegister.count else { return nil }
        func be(_ i: Int) -> Double { Double(Int16(bitPattern: UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1]))) }
        func le(_ i: Int) -> Double { Double(Int16(bitPattern: UInt16(bytes[i + 1]) << 8 | UInt16(bytes[i]))) }
        switch chip {
        case .mpu6050, .mpu6500:
            let a = SIMD3(be(0), be(2), be(4)) * accelScale
            let g = SIMD3(be(8), be(10), be(12)) * gyroScale
            return (a, g)
        case .lsm6ds3, .lsm6dso:
            let g = SIMD3(le(0), le(2), le(4)) * gyroScale
            let a = SIMD3(le(6), le(8), le(10)) * accelScale
            return (a, g)
        }
    }
}

/// An IMU (MPU-6050/6500, LSM6DS3/LSM6DSO) on an SMBus device, read at `rate` Hz on its own
/// thread; `read()` returns the latest sample. Mounted with the chip's x to the camera's
/// right, y up and z towards the subject; samples follow `MotionSample` (acceleration points
/// the way gravity pulls, the opposite of what an accelerometer measures).
///
/// Transient errors are retried; the sensor is dropped — `read()` throws from then on and the
/// thread ends — after `failureLimit` failed reads in a row (`.notResponding`, with the
/// errno's text) or `garbageLimit` reads of garbage in a row (`.badData`: every byte 0xFF or
/// 0x00, or |acceleration| outside 0.2…4 g).
public final class IMUSensor: MotionSensor {
    public let name: String
    public let chip: IMUChip
    private let sampler: Sampler
    private let thread = Locked<WorkerThread?>(nil)

    /// Identifies and configures the chip at `device`; throws when it is none of the known
    /// ones (`.badData`) or does not answer (`.notResponding`).
    public init(device: SMBusDevice & Sendable, rate: Double = 100, failureLimit: Int = 5, garbageLimit: Int = 10,
                start: Bool = true) throws(MotionSensorError) {
        let chip: IMUChip
        var registers: IMURegisters
        do {
            guard let found = try IMUChip.identify(device) else {
                throw MotionSensorError.badData("no MPU-6050/6500 or LSM6DS3/DSO answers WHO_AM_I at \(device.location)")
            }
            chip = found
            registers = IMURegisters(chip: found)
            try registers.configure(device)
        } catch let e as SMBusError {
            throw MotionSensorError.notResponding("probing \(device.location): \(e)")
        } catch let e as MotionSensorError {
            throw e
        } catch {
            throw MotionSensorError.notResponding("probing \(device.location): \(error)")
        }
        self.chip = chip
        name = "\(chip.rawValue) on \(device.location)"
        sampler = Sampler(device: device, registers: registers, name: name, failureLimit: failureLimit, garbageLimit: garbageLimit)
        if start {
            let sampler = self.sampler, microseconds = UInt32(1e6 / max(1, min(rate, 1000)))
            let reader: WorkerThread
            do {
                reader = try WorkerThread(name: "loopix.imu") { token in
                    while !token.shouldStop && sampler.isAlive {
                        sampler.poll()
                        usleep(microseconds)
                    }
                }
            } catch {
                throw MotionSensorError.notResponding("\(name): \(error)")
            }
            thread.withLock { $0 = reader }
        }
    }

    deinit { stop() }

    public func read() throws -> MotionSample {
        try sampler.latest()
    }

    /// One read on the caller's thread (tests, and the reading thread itself): updates the latest sample.
    public func poll() { sampler.poll() }

    /// Stops the reading thread (also done by deinit).
    public func stop() {
        let t = thread.withLock { t -> WorkerThread? in
            defer { t = nil }
            return t
        }
        t?.stop()
    }

    /// Reads and judges samples; shared by the reading thread and `read()`. `@unchecked
    /// Sendable`: `device` is only used under `busLock`, everything else is in `state`.
    private final class Sampler: @unchecked Sendable {
        let device: SMBusDevice & Sendable
        let registers: IMURegisters
        let name: String
        let failureLimit: Int
        let garbageLimit: Int
        let busLock = Lock()
        struct State {
            var sample = MotionSample.level
            var failures = 0
            var garbage = 0
            var dead: MotionSensorError?
        }
        let state = Locked(State())

        init(device: SMBusDevice & Sendable, registers: IMURegisters, name: String, failureLimit: Int, garbageLimit: Int) {
            self.device = device
            self.registers = registers
            self.name = name
            self.failureLimit = failureLimit
            self.garbageLimit = garbageLimit
        }

        var isAlive: Bool { state.withLock { $0.dead == nil } }

        func latest() throws -> MotionSample {
            try state.withLock { s throws -> MotionSample in
                if let dead = s.dead { throw dead }
                return s.sample
            }
        }

        func poll() {
            let (start, count) = registers.dataRegister
            let result: Result<[UInt8], SMBusError>
            busLock.lock()
            do { result = .success(try device.readBlock(start, count: count)) } catch { result = .failure(error) }
            busLock.unlock()
            state.withLock { s in
                guard s.dead == nil else { return }
                switch result {
                case .failure(let e):
                    s.failures += 1
                    if s.failures >= failureLimit {
                        s.dead = .notResponding("reading \(name): \(e), \(s.failures) times in a row")
                    }
                case .success(let bytes):
                    s.failures = 0
                    if let sample = Self.sample(bytes, registers) {
                        s.garbage = 0
                        s.sample = sample
                    } else {
                        s.garbage += 1
                        if s.garbage >= garbageLimit {
                            s.dead = .badData("reading \(name): \(s.garbage) impossible samples in a row (all 0xFF/0x00 or |a| outside 0.2…4 g)")
                        }
                    }
                }
            }
        }

        static func sample(_ bytes: [UInt8], _ registers: IMURegisters) -> MotionSample? {
            guard bytes.count >= registers.dataRegister.count,
                  !bytes.allSatisfy({ $0 == 0xFF }), !bytes.allSatisfy({ $0 == 0 }),
                  let (measured, rotation) = registers.decode(bytes) else { return nil }
            let m2 = (measured * measured).sum()
            guard m2 >= 0.04 && m2 <= 16 else { return nil }
            return MotionSample(acceleration: -measured, rotation: rotation)
        }
    }
}
