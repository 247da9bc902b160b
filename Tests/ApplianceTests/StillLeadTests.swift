@testable import Appliance
import XCTest

/// The booth's lead for a camera reconfigured for each still: it follows the reconfiguration
/// the camera reports (both ways, with its margin), and grows after a late shot when the camera
/// reports none.
final class StillLeadTests: XCTestCase {
    private let ms: UInt64 = 1_000_000
    private let due: UInt64 = 100_000_000_000

    func testTheLeadFollowsTheReportedReconfigurationWithItsMargin() {
        var lead = StillLead()
        XCTAssertEqual(lead.ns, 1000 * ms)
        // A reconfiguration of 1.2 s made a shot asked 1 s early 200 ms late.
        let line = lead.learn(exposure: due + 200 * ms, due: due, startDelay: 1200 * ms, skippedPeriod: 0)
        XCTAssertEqual(lead.ns, 1900 * ms, "1.2 s, half as much again and 100 ms")
        XCTAssertEqual(line, "booth: the camera took 1200 ms to start the still; asking 1900 ms early from now on")
        // It slows to 1.7 s (the earlier photos develop): asked 1.9 s early the still was early,
        // but the next lead follows the slower reconfiguration before it makes a shot late.
        XCTAssertNotNil(lead.learn(exposure: due + 30 * ms, due: due, startDelay: 1700 * ms, skippedPeriod: 400 * ms))
        XCTAssertEqual(lead.ns, 2650 * ms)
        // It speeds up again: the viewfinder is frozen for less.
        XCTAssertNotNil(lead.learn(exposure: due + 10 * ms, due: due, startDelay: 600 * ms, skippedPeriod: 400 * ms))
        XCTAssertEqual(lead.ns, 1000 * ms)
        // A change within the on-time bound is not worth a line.
        XCTAssertNil(lead.learn(exposure: due + 10 * ms, due: due, startDelay: 620 * ms, skippedPeriod: 400 * ms))
        XCTAssertEqual(lead.ns, 1030 * ms)
    }

    func testTheLeadNeverPassesThreeSecondsAndALateShotThereIsStillLogged() {
        var lead = StillLead()
        _ = lead.learn(exposure: due + 4000 * ms, due: due, startDelay: 5000 * ms, skippedPeriod: 0)
        XCTAssertEqual(lead.ns, StillLead.maxNs)
        XCTAssertEqual(lead.learn(exposure: due + 900 * ms, due: due, startDelay: 3900 * ms, skippedPeriod: 0),
                       "booth: the camera took 3900 ms to start the still; asking 3000 ms early from now on",
                       "a late shot at the bound says so, though the lead cannot grow")
        XCTAssertEqual(lead.ns, StillLead.maxNs)
        var blind = StillLead()
        for _ in 0..<5 { _ = blind.learn(exposure: due + 2000 * ms, due: due, startDelay: 0, skippedPeriod: 0) }
        XCTAssertEqual(blind.ns, StillLead.maxNs)
        XCTAssertNotNil(blind.learn(exposure: due + 2000 * ms, due: due, startDelay: 0, skippedPeriod: 0))
        XCTAssertNil(blind.learn(exposure: due + 20 * ms, due: due, startDelay: 0, skippedPeriod: 0), "on time at the bound: nothing to say")
    }

    func testWithoutAReportedReconfigurationOnlyALateShotGrowsTheLead() {
        var lead = StillLead()
        XCTAssertNil(lead.learn(exposure: due + 40 * ms, due: due, startDelay: 0, skippedPeriod: 0), "on time")
        XCTAssertNil(lead.learn(exposure: due + 50 * ms, due: due, startDelay: 0, skippedPeriod: 0), "50 ms is still on time")
        XCTAssertNotNil(lead.learn(exposure: due + 51 * ms, due: due, startDelay: 0, skippedPeriod: 0), "51 ms is late")
        lead = StillLead()
        XCTAssertNil(lead.learn(exposure: due + 300 * ms, due: due, startDelay: 0, skippedPeriod: 33 * ms),
                     "frames before the end were skipped: the still was asked early enough")
        XCTAssertEqual(lead.ns, 1000 * ms)
        let line = lead.learn(exposure: due + 200 * ms, due: due, startDelay: 0, skippedPeriod: 0)
        XCTAssertEqual(lead.ns, 1400 * ms, "200 ms late: 1.5 × 200 + 100 ms more")
        XCTAssertEqual(line, "booth: the still came 200 ms after the countdown's end; asking 1400 ms early from now on")
    }
}
