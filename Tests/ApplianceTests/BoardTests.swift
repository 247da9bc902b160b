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
            let flash = try XCTUnwrap(b.flash, "\(b.id) names a flash line")
            let lines = Array(b.pins.values) + [flash]
            XCTAssertEqual(Set(lines).count, lines.count, "\(b.id): a line used twice")
            let reserved: Set<Int> = [0, 1, 2, 3, 7, 8, 9, 10, 11, 14, 15, 18, 19, 20, 21, 24, 25]
            XCTAssertTrue(reserved.isDisjoint(with: lines), "\(b.id) uses a reserved pin")
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

    /// The flash's line belongs to the plan only while the booth drives a light: a button moved
    /// onto it is fine with the flash off and an error naming both uses with it on.
    func testTheFlashLineIsCheckedOnlyWhenTheBoothDrivesALight() throws {
        let board = try Board.load(id: "pi4b", directory: boardsDirectory)
        let off = try Config.parse(Data(#"{"board":"pi4b","gpio":{"pins":{"shutter-right":4}}}"#.utf8), source: "c.json")
        XCTAssertNil(try off.gpioPlan(board: board).flash)
        let on = try Config.parse(Data(#"{"board":"pi4b","booth":{"flash":"exposure"},"gpio":{"pins":{"shutter-right":4}}}"#.utf8), source: "c.json")
        XCTAssertThrowsError(try on.gpioPlan(board: board)) { e in
            XCTAssertEqual("\(e)", "c.json: gpio.pins.shutter-right: line 4 is used by both shutter-right (gpio.pins.shutter-right) and flash (board pi4b: pins.flash)")
        }
        let moved = try Config.parse(Data(#"{"board":"pi4b","booth":{"flash":"session"},"gpio":{"pins":{"flash":40}}}"#.utf8), source: "c.json")
        XCTAssertEqual(try moved.gpioPlan(board: board).flash, 40)
        XCTAssertEqual(try moved.gpioPlan(board: board, lineCount: 58).pins, board.pins)
        XCTAssertThrowsError(try moved.gpioPlan(board: board, lineCount: 28)) { e in
            XCTAssertEqual("\(e)", "c.json: gpio.pins.flash: line 40 for flash is out of range (the chip has lines 0…27)")
        }
        XCTAssertThrowsError(try Config.parse(Data(#"{"gpio":{"pins":{"mode":9,"flash":9}}}"#.utf8), source: "c.json")) { e in
            XCTAssertEqual("\(e)", "c.json: gpio.pins.flash: line 9 is also used by mode (gpio.pins.mode)")
        }
        XCTAssertThrowsError(try Board.parse(Data(#"{"id":"x","name":"X","gpioChip":"gpiochip0","pins":{"lens":4,"flash":4}}"#.utf8), source: "x.json")) { e in
            XCTAssertEqual("\(e)", "x.json: pins.flash: line 4 is also used by lens (pins.lens)")
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

    /// The model strings Raspberry Pi firmware puts in the device tree, and what `auto` makes
    /// of them.
    func testAutoFindsTheBoardFromTheDeviceTreeModel() throws {
        let boards = try Board.loadAll(directory: boardsDirectory)
        let expected: [(String, String?)] = [
            ("Raspberry Pi 5 Model B Rev 1.0", "pi5"),
            ("Raspberry Pi 500 Rev 1.0", "pi5"),
            ("Raspberry Pi 4 Model B Rev 1.5", "pi4b"),
            ("Raspberry Pi 400 Rev 1.0", "pi4b"),
            ("Raspberry Pi 3 Model B Plus Rev 1.3", "pi3bplus"),
            ("Raspberry Pi 3 Model B Rev 1.2", "pi3bplus"),
            ("Raspberry Pi Zero 2 W Rev 1.0", "pi-zero-2w"),
            ("Raspberry Pi Compute Module 4 Rev 1.1", "cm4"),
            ("Raspberry Pi Compute Module 4S Rev 1.0", nil),  // SODIMM: no 40-pin header of its own
            ("Raspberry Pi Compute Module 5 Rev 1.0", "cm5"),
            ("Raspberry Pi Compute Module 5 Lite Rev 1.0", "cm5"),
            ("Raspberry Pi Model B Rev 2", nil),
            ("Raspberry Pi Zero W Rev 1.1", nil),
            ("Radxa ROCK 5B", nil),
        ]
        for (model, id) in expected {
            XCTAssertEqual(Board.matching(model: model, in: boards)?.id, id, model)
        }
        for board in boards {
            XCTAssertFalse(board.models.isEmpty, "\(board.id) has no model strings")
            XCTAssertTrue(board.configTxt.contains("dtparam=i2c_arm=on"), board.id)
        }
    }

    /// `Config.load` resolves `auto` from the model file (NUL-terminated, as in the device
    /// tree): a known board, an unknown one (a warning, no board), none (a PC: a note).
    func testLoadResolvesAutoAndNeverFailsOnAnUnknownBoard() throws {
        let dir = try makeTempDirectory(self)
        let config = "\(dir)/loopix.json", model = "\(dir)/model"
        try Data(#"{"boardsDirectory": "\#(boardsDirectory)"}"#.utf8).write(to: URL(fileURLWithPath: config))

        try Data("Raspberry Pi Zero 2 W Rev 1.0\0".utf8).write(to: URL(fileURLWithPath: model))
        let zero = try Config.load(path: config, modelPath: model)
        XCTAssertEqual(zero.board, "auto")
        XCTAssertEqual(zero.boardID, "pi-zero-2w")
        XCTAssertEqual(zero.notes, ["board: auto: Raspberry Pi Zero 2 W Rev 1.0 → pi-zero-2w"])
        XCTAssertEqual([zero.videoSettings.width, zero.videoSettings.height], [1280, 720], "the detected board's video default")

        try Data("Banana Pi M5\0".utf8).write(to: URL(fileURLWithPath: model))
        let banana = try Config.load(path: config, modelPath: model)
        XCTAssertNil(banana.boardID)
        XCTAssertEqual(banana.detectedBoard?.model, "Banana Pi M5")
        XCTAssertEqual(banana.warnings.count, 1)
        XCTAssertTrue(banana.warnings[0].hasPrefix("board: auto: \"Banana Pi M5\" is not a board Loopix knows (cm4, cm5, pi-zero-2w, pi3bplus, pi4b, pi5); no GPIO buttons"),
                      banana.warnings[0])
        XCTAssertTrue(banana.environmentProblems().isEmpty, "an unknown board is not a configuration problem")

        let pc = try Config.load(path: config, modelPath: "\(dir)/absent")
        XCTAssertNil(pc.boardID)
        XCTAssertTrue(pc.warnings.isEmpty)
        XCTAssertTrue(pc.notes[0].contains("no device-tree model"), pc.notes[0])

        // A board named in the file is used as it is; `none` is none.
        try Data(#"{"board": "pi4b"}"#.utf8).write(to: URL(fileURLWithPath: config))
        let named = try Config.load(path: config, modelPath: model)
        XCTAssertEqual(named.boardID, "pi4b")
        XCTAssertNil(named.detectedBoard)
        try Data(#"{"board": "none"}"#.utf8).write(to: URL(fileURLWithPath: config))
        XCTAssertNil(try Config.load(path: config, modelPath: model).boardID)
    }

    func testModelsAndConfigTxtMustBeListsOfStrings() {
        let json = #"{"id":"x","name":"X","gpioChip":"gpiochip0","pins":{},"models":"Raspberry Pi"}"#
        XCTAssertThrowsError(try Board.parse(Data(json.utf8), source: "x.json")) { e in
            XCTAssertEqual("\(e)", "x.json: models: must be a list of strings, not a string")
        }
        let empty = #"{"id":"x","name":"X","gpioChip":"gpiochip0","pins":{},"configTxt":[""]}"#
        XCTAssertThrowsError(try Board.parse(Data(empty.utf8), source: "x.json")) { e in
            XCTAssertEqual("\(e)", "x.json: configTxt: must be a list of non-empty strings")
        }
    }
}
