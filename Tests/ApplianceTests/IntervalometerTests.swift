import Foundation
import XCTest
@testable import Appliance

/// The timelapse schedule as a pure value: slots on the wall clock, each handled once, missed
/// ones skipped and counted, resumed from its file after a restart.
final class IntervalometerTests: XCTestCase {
    func testSlotsComeOnTimeEachOnceUntilTheCount() {
        var i = Intervalometer(.init(everySeconds: 10, count: 3), now: 1000)
        XCTAssertEqual(i.due(now: 1000), 0, "the first at once")
        i.shot(true)
        XCTAssertNil(i.due(now: 1005))
        XCTAssertNil(i.due(now: 1009.9))
        XCTAssertEqual(i.due(now: 1010.2), 1)
        i.shot(true)
        XCTAssertNil(i.due(now: 1011), "a slot is handled once")
        XCTAssertEqual(i.nextShot(now: 1011), 1020)
        XCTAssertEqual(i.due(now: 1020), 2)
        i.shot(false)
        XCTAssertTrue(i.isFinished(now: 1020))
        XCTAssertNil(i.due(now: 1030), "three slots in all")
        XCTAssertNil(i.nextShot(now: 1030))
        XCTAssertEqual([i.taken, i.skipped], [2, 1], "the refused shot is counted as skipped")
    }

    func testMissedSlotsAreSkippedAndCountedNeverMadeUp() {
        var i = Intervalometer(.init(everySeconds: 60), now: 0)
        XCTAssertEqual(i.due(now: 1), 0)
        i.shot(true)
        // The camera was off (or the machine asleep) for ten minutes.
        XCTAssertEqual(i.due(now: 605), 10, "the newest slot only")
        i.shot(true)
        XCTAssertEqual(i.skipped, 9)
        XCTAssertNil(i.due(now: 606))
        XCTAssertFalse(i.isFinished(now: 1e9), "without a count it runs until stopped")
    }

    func testAStartAndStopTimeBoundTheSchedule() {
        var i = Intervalometer(.init(everySeconds: 30, start: 100, stop: 160), now: 0)
        XCTAssertNil(i.due(now: 50), "not before its start")
        XCTAssertEqual(i.nextShot(now: 50), 100)
        XCTAssertEqual(i.due(now: 100), 0)
        XCTAssertEqual(i.due(now: 130), 1)
        XCTAssertEqual(i.due(now: 160), 2, "the slot at the stop time is the last")
        XCTAssertNil(i.due(now: 190))
        XCTAssertTrue(i.isFinished(now: 190))
    }

    /// A restart reads the schedule back and goes on after the last slot handled: the slot shot
    /// just before the restart is not shot again; the slots missed while it was down are skipped.
    func testTheFileResumesWithoutShootingASlotTwice() throws {
        var i = Intervalometer(.init(everySeconds: 5, count: 10), now: 2000)
        XCTAssertEqual(i.due(now: 2000), 0)
        i.shot(true)
        XCTAssertEqual(i.due(now: 2005), 1)  // written before the shot; then the power goes
        let saved = Data(i.json().serialized().utf8)
        var resumed = try Intervalometer.parse(saved, source: "interval.json")
        XCTAssertEqual(resumed, i)
        XCTAssertNil(resumed.due(now: 2006), "slot 1 is not shot again")
        XCTAssertEqual(resumed.due(now: 2021), 4, "back 16 s later: slots 2 and 3 skipped")
        XCTAssertEqual(resumed.skipped, 2)
        XCTAssertThrowsError(try Intervalometer.parse(Data(#"{"everySeconds":5}"#.utf8), source: "interval.json")) { e in
            XCTAssertEqual("\(e)", "interval.json: needs everySeconds and start")
        }
    }
}
