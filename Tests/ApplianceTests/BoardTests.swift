import ControlProtocol
@testable import Appliance
import Controls
import Foundation
import XCTest

final class BoardTests: XCTestCase {
    var boardsDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("boards").path
    }

    func testAllSixBoardsLoadWithEveryControlOnADistinctSafeLine() throws {
        let boards = try Board.loadAll(directory: boardsDirectory)
        XCTAssertEqual(Set(boards.map(\.id)), ["pi-zero-2w", "pi3bplus", "pi4b", "pi5", "cm4", "cm5"])
        for b in boards {
            XCTAssertEqual(Set(b.pins.keys), Set(ControlPin.allCases), b.id)
            XCTAssertEqual(Set(b.pins.values).count, b.pins.count, "\(b.id): a line used twice")
            let reserved: Set<Int> = [0, 1, 2, 3, 7, 8, 9, 10, 11, 14, 15, 18, 19, 20, 21, 24, 25]
            XCTAssertTrue(reserved.isDisjoint(with: b.pins.values), "\(b.id) uses a reserved pin")
            XCTAssertEqual(b.i2cBus, 1)
            XCTAssertFalse(b.gpioChips.isEmpty)
        }
        let pi5 = try Board.load(id: "pi5", directory: boardsDirectory)
        XCTAssertEqual(pi5.gpioChips.first, "pinctrl-rp1")
    }

    func testConfigOverridesAPin() throws {
        let config = try Config.parse(Data(#"{"board":"pi4b","gpio":{"debounceMs":8,"pins":{"shutter-right":4}}}"#.utf8), source: "c.json")
        let plan = try config.gpioPlan(board: Board.load(id: "pi4b", directory: boardsDirectory))
        XCTAssertEqual(plan.pins[.shutterRight], 4)
        XCTAssertEqual(plan.pins[.shutterLeft], 5)
        XCTAssertEqual(plan.debounceMs, 8)
        XCTAssertEqual(plan.chips, ["pinctrl-bcm2711", "gpiochip0"])
    }

    func testPinUsedTwiceNamesBothUses() throws {
        let config = try Config.parse(Data(#"{"board":"pi4b","gpio":{"pins":{"shutter-right":27}}}"#.utf8), source: "c.json")
        XCTAssertThrowsError(try config.gpioPlan(board: Board.load(id: "pi4b", directory: boardsDirectory))) { e in
            XCTAssertEqual("\(e)", "c.json: gpio.pins.shutter-right: line 27 is used by both shutter-right (gpio.pins.shutter-right) and encoder-b (board pi4b: pins.encoder-b)")
        }
        XCTAssertThrowsError(try Config.parse(Data(#"{"gpio":{"pins":{"mode":9,"lens":9}}}"#.utf8), source: "c.json")) { e in
            XCTAssertEqual("\(e)", "c.json: gpio.pins.lens: line 9 is also used by mode (gpio.pins.mode)")
        }
    }

    func testOutOfRangeAndUnknownPins() throws {
        XCTAssertThrowsError(try Config.parse(Data(#"{"gpio":{"pins":{"mode":54}}}"#.utf8), source: "c.json")) { e in
            XCTAssertEqual("\(e)", "c.json: gpio.pins.mode: 54 is out of range (allowed 0…53)")
        }
        XCTAssertThrowsError(try Config.parse(Data(#"{"gpio":{"pins":{"zoom":4}}}"#.utf8), source: "c.json")) { e in
            XCTAssertTrue("\(e)".hasPrefix("c.json: gpio.pins.zoom: unknown control"), "\(e)")
        }
        XCTAssertThrowsError(try Config.parse(Data(#"{"gpio":{"transitionsPerDetent":3}}"#.utf8), source: "c.json"))
        let config = try Config.parse(Data(#"{"gpio":{"pins":{"mode":40}}}"#.utf8), source: "c.json")
        XCTAssertThrowsError(try config.gpioPlan(board: Board.load(id: "pi-zero-2w", directory: boardsDirectory), lineCount: 32)) { e in
            XCTAssertEqual("\(e)", "c.json: gpio.pins.mode: line 40 for mode is out of range (the chip has lines 0…31)")
        }
    }

    func testIMUSectionAndUnknownBoard() throws {
        let c = try Config.parse(Data(#"{"imu":{"bus":3,"address":105}}"#.utf8), source: "c.json")
        XCTAssertEqual(c.imu.bus, 3)
        XCTAssertEqual(c.imu.address, 0x69)
        XCTAssertThrowsError(try Board.load(id: "pi9", directory: boardsDirectory)) { e in
            XCTAssertTrue("\(e)".contains("no such board file"), "\(e)")
            XCTAssertTrue("\(e)".contains("pi4b"), "\(e)")
        }
    }

    func testBoardFileWithAPinTwiceIsRefused() {
        let json = #"{"id":"x","name":"X","gpioChip":"gpiochip0","pins":{"mode":4,"lens":4}}"#
        XCTAssertThrowsError(try Board.parse(Data(json.utf8), source: "x.json")) { e in
            XCTAssertEqual("\(e)", "x.json: pins.lens: line 4 is also used by mode (pins.mode)")
        }
    }
}
