import ControlProtocol
import Foundation
import XCTest

/// A fresh temporary directory, removed when the test ends. Short, so socket paths fit.
func makeTempDirectory(_ test: XCTestCase) throws -> String {
    let path = "/tmp/lx-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
    return path
}
