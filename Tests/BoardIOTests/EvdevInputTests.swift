import BoardIO
import XCTest

final class EvdevInputTests: XCTestCase {
    func testScanningAMissingDirectoryFindsNothing() {
        let input = EvdevInput(directory: "/nonexistent-input")
        XCTAssertEqual(input.drain(), [])
        XCTAssertTrue(input.openDevices.isEmpty)
    }
}
