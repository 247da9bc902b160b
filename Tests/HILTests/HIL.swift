import Foundation
import XCTest

/// HIL tests run only inside the bench's VM (real drivers: vkms, uinput), where LOOPIX_HIL=1.
func requireHIL() throws {
    guard ProcessInfo.processInfo.environment["LOOPIX_HIL"] == "1" else {
        throw XCTSkip("hardware-in-the-loop test: runs only in the HIL VM (LOOPIX_HIL=1)")
    }
}
