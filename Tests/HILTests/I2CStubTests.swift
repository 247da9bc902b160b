import Foundation
import XCTest

/// i2c-stub at 0x68, preloaded by scripts/hil/guest as an MPU-6050 (WHO_AM_I = 0x68).
final class I2CStubTests: XCTestCase {
    func testWhoAmIReadsMPU6050() throws {
        let bus = try Bench.value("LOOPIX_HIL_I2C_BUS")
        try Bench.require("/dev/i2c-\(bus)")
        let name = try String(contentsOfFile: "/sys/class/i2c-dev/i2c-\(bus)/name", encoding: .utf8)
        XCTAssertTrue(name.contains("SMBus stub driver"), "bus \(bus) is \(name)")
        // An SMBus byte-data read of register 0x75 at address 0x68.
        let read = try Bench.run("i2cget", ["-y", bus, "0x68", "0x75"])
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertEqual(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "0x68")
        // Nothing answers at an address the stub does not serve.
        let absent = try Bench.run("i2cget", ["-y", bus, "0x69", "0x75"])
        XCTAssertNotEqual(absent.status, 0, "0x69 answered: \(absent.stdout)")
    }
}
