import Controls
import XCTest

final class KeyboardMapTests: XCTestCase {
    func testStandardTable() {
        let map = KeyboardMap.standard
        let expected: [(String, InputEvent)] = [
            ("[", .leftButton), ("]", .rightButton), ("space", .shutter),
            ("up", .encoderTurned(1)), ("down", .encoderTurned(-1)), ("return", .encoderPressed),
            ("m", .mode), ("l", .nextLens), ("f", .nextFilter), ("shift+f", .previousFilter), ("b", .previousFilter),
            ("a", .aeLock), ("d", .afLock), ("g", .grid), ("h", .handedness),
        ]
        for (key, event) in expected {
            XCTAssertEqual(map.event(forKey: key), event, key)
        }
        XCTAssertEqual(map.bindings.count, expected.count)
    }

    func testKeyNamesAsSDLAndTypingGiveThem() {
        let map = KeyboardMap()
        XCTAssertEqual(map.event(forKey: "Space"), .shutter)
        XCTAssertEqual(map.event(forKey: " "), .shutter)
        XCTAssertEqual(map.event(forKey: "Return"), .encoderPressed)
        XCTAssertEqual(map.event(forKey: "Enter"), .encoderPressed)
        XCTAssertEqual(map.event(forKey: "Up"), .encoderTurned(1))
        XCTAssertEqual(map.event(forKey: "L"), nil, "an uppercase letter is shift+letter, and shift+l means nothing")
        XCTAssertEqual(map.event(forKey: "F"), .previousFilter)
        XCTAssertEqual(map.event(forKey: "Shift+F"), .previousFilter)
        XCTAssertEqual(map.event(forKey: "SHIFT + f"), .previousFilter)
    }

    func testUnboundKeysMeanNothing() {
        let map = KeyboardMap.standard
        for key in ["x", "ctrl+l", "shift+[", "", "+", "left", "escape"] {
            XCTAssertNil(map.event(forKey: key), key)
        }
    }

    func testOnlyTheEncoderRepeats() {
        let map = KeyboardMap.standard
        XCTAssertTrue(map.repeats(key: "up"))
        XCTAssertTrue(map.repeats(key: "Down"))
        XCTAssertFalse(map.repeats(key: "space"))
        XCTAssertFalse(map.repeats(key: "a"))
        XCTAssertFalse(map.repeats(key: "x"))
    }

    func testCustomBindingsAreNormalised() {
        let map = KeyboardMap(bindings: ["Enter": .shutter, "Ctrl+Shift+Q": .mode])
        XCTAssertEqual(map.event(forKey: "return"), .shutter)
        XCTAssertEqual(map.event(forKey: "shift+ctrl+q"), .mode)
        XCTAssertNil(map.event(forKey: "q"))
    }
}
