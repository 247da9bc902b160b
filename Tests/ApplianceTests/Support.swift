import ControlProtocol
import FilmCore
@testable import Appliance
import Foundation
import XCTest
import Raster

/// A fresh temporary directory, removed when the test ends. Short, so socket paths fit.
func makeTempDirectory(_ test: XCTestCase) throws -> String {
    let path = "/tmp/lx-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
    return path
}

/// The default configuration with its photos and state under `dir` and no storage reserve:
/// what a controller test starts from.
func testConfig(in dir: String) -> Config {
    var config = Config.defaults
    config.storage.directory = dir + "/photos"
    config.storage.reserveMB = 0
    config.state.directory = dir + "/state"
    return config
}

/// Mean of each channel of an image.
func means(_ image: RGBImage) -> SIMD3<Double> {
    var sum = SIMD3<Double>.zero
    for i in stride(from: 0, to: image.pixels.count, by: 3) {
        sum += SIMD3(Double(image.pixels[i]), Double(image.pixels[i + 1]), Double(image.pixels[i + 2]))
    }
    return sum / Double(image.pixelCount)
}

/// `loopix ctl wait-saved COUNT` started against the daemon at `socket`: the process and the
/// pipe its standard output (the saved paths) goes to.
func startWaitSaved(_ count: Int, socket: String) throws -> (Process, Pipe) {
    let waiter = Process()
    waiter.executableURL = URL(fileURLWithPath: DaemonHarness.loopix)
    waiter.arguments = ["ctl", "wait-saved", "\(count)", "--socket", socket]
    let out = Pipe()
    waiter.standardOutput = out
    try waiter.run()
    return (waiter, out)
}
