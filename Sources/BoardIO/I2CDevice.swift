import CI2C
import Controls
import Foundation
import System

/// A chip on an I2C bus through i2c-dev (/dev/i2c-N), spoken to with SMBus transfers (what
/// real chips and i2c-stub both understand). Owns the fd; `deinit` closes it.
public final class I2CDevice: SMBusDevice, @unchecked Sendable {  // the fd never changes; transfers are whole ioctls
    public let bus: Int
    public let address: Int
    public let location: String
    private let fd: Int32

    /// Opens /dev/i2c-`bus` and selects `address` (wraps `CI2C_open`: open + I2C_SLAVE).
    public init(bus: Int, address: Int) throws(SMBusError) {
        self.bus = bus
        self.address = address
        location = "i2c-\(bus) 0x\(String(address, radix: 16))"
        let r = CI2C_open(Int32(bus), Int32(address))
        guard r >= 0 else { throw SMBusError(errno: Errno(-r), what: "opening \(location)") }
        fd = r
    }

    deinit { _ = CI2C_close(fd) }

    public func readByte(_ register: UInt8) throws(SMBusError) -> UInt8 {
        let r = CI2C_read_byte_data(fd, register)
        guard r >= 0 else { throw SMBusError(errno: Errno(-r), what: "reading register 0x\(String(register, radix: 16)) of \(location)") }
        return UInt8(r)
    }

    public func writeByte(_ register: UInt8, _ value: UInt8) throws(SMBusError) {
        let r = CI2C_write_byte_data(fd, register, value)
        guard r >= 0 else { throw SMBusError(errno: Errno(-r), what: "writing register 0x\(String(register, radix: 16)) of \(location)") }
    }

    /// An SMBus I2C-block read; adapters without it (EOPNOTSUPP) get byte reads.
    public func readBlock(_ register: UInt8, count: Int) throws(SMBusError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: max(0, min(count, 32)))
        let r = out.withUnsafeMutableBufferPointer { CI2C_read_i2c_block(fd, register, UInt8($0.count), $0.baseAddress) }
        if r == out.count { return out }
        if r >= 0 || r == -EOPNOTSUPP || r == -EINVAL {
            var bytes: [UInt8] = []
            for i in 0..<out.count { bytes.append(try readByte(register &+ UInt8(i))) }
            return bytes
        }
        throw SMBusError(errno: Errno(-r), what: "reading \(count) registers from 0x\(String(register, radix: 16)) of \(location)")
    }
}

/// Finds an IMU: the first known chip answering WHO_AM_I on `bus` at `address` (nil: 0x68,
/// 0x69, 0x6A, 0x6B — the MPU and LSM6 addresses).
public enum IMUProbe {
    /// Where the supported chips answer (MPU: 0x68/0x69, LSM6: 0x6A/0x6B).
    public static let addresses = [0x68, 0x69, 0x6A, 0x6B]

    public static func open(bus: Int, address: Int? = nil, rate: Double = 100) throws(MotionSensorError) -> IMUSensor {
        var problems: [String] = []
        for a in address.map({ [$0] }) ?? addresses {
            do {
                let device = try I2CDevice(bus: bus, address: a)
                return try IMUSensor(device: device, rate: rate)
            } catch let e as SMBusError {
                problems.append("\(e)")
                if e.errno == Errno(ENOENT) || e.errno == Errno(EACCES) { break }
            } catch let e as MotionSensorError {
                problems.append("\(e)")
            } catch {
                problems.append("\(error)")
            }
        }
        throw MotionSensorError.notResponding("no IMU found on i2c-\(bus): \(problems.first ?? "nothing answered")")
    }
}
