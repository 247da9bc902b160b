import Foundation
import XCTest

/// Skips unless inside the bench VM (LOOPIX_HIL=1, set by scripts/hil/guest); see `Bench`.
func requireHIL() throws {
    guard Bench.environment["LOOPIX_HIL"] == "1" else {
        throw XCTSkip("not inside the HIL bench (LOOPIX_HIL unset): run scripts/hil/run")
    }
}
