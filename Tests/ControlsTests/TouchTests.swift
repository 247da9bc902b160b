import Controls
import XCTest

final class TouchTests: XCTestCase {
    func testUnrotatedMapping() {
        let m = TouchMapping(minX: 0, maxX: 4095, minY: 0, maxY: 4095, rotation: .none)
        XCTAssertEqual(m.map(rawX: 0, rawY: 0).x, 0)
        XCTAssertEqual(m.map(rawX: 4095, rawY: 4095).y, 1)
        let p = m.map(rawX: 1024, rawY: 3071)
        XCTAssertEqual(p.x, 1024.0 / 4095, accuracy: 1e-9)
        XCTAssertEqual(p.y, 3071.0 / 4095, accuracy: 1e-9)
    }

    func testRangesWithOffsetsAndClamping() {
        let m = TouchMapping(minX: 100, maxX: 300, minY: -50, maxY: 50, rotation: .none)
        let p = m.map(rawX: 150, rawY: 0)
        XCTAssertEqual(p.x, 0.25, accuracy: 1e-9)
        XCTAssertEqual(p.y, 0.5, accuracy: 1e-9)
        let outside = m.map(rawX: 400, rawY: -90)
        XCTAssertEqual(outside.x, 1)
        XCTAssertEqual(outside.y, 0)
        let degenerate = TouchMapping(minX: 5, maxX: 5, minY: 0, maxY: 10, rotation: .none)
        XCTAssertEqual(degenerate.map(rawX: 5, rawY: 0).x, 0.5)
    }

    /// A touch near the panel's own top-left corner is, in the upright picture, at the corner the
    /// rotation carried the picture's top-left away from.
    func testRotatedMapping() {
        func point(_ r: ScreenRotation, _ u: Double, _ v: Double) -> (Double, Double) {
            let m = TouchMapping(minX: 0, maxX: 1000, minY: 0, maxY: 1000, rotation: r)
            let p = m.map(rawX: Int32(u * 1000), rawY: Int32(v * 1000))
            return ((p.x * 100).rounded() / 100, (p.y * 100).rounded() / 100)
        }
        // Panel point (0.1, 0.2): near the panel's top-left.
        XCTAssertTrue(point(.none, 0.1, 0.2) == (0.1, 0.2))
        // Picture turned 90° clockwise: its left edge is the panel's top, its top the panel's right.
        XCTAssertTrue(point(.quarter, 0.1, 0.2) == (0.2, 0.9))
        XCTAssertTrue(point(.half, 0.1, 0.2) == (0.9, 0.8))
        XCTAssertTrue(point(.threeQuarters, 0.1, 0.2) == (0.8, 0.1))
    }

    /// unrotate inverts the turn the scan-out applies: the picture's pixel (x, y) is shown at the
    /// panel position that maps back to (x, y).
    func testUnrotateMatchesScanoutTurn() {
        for r in ScreenRotation.allCases {
            for (x, y) in [(0.25, 0.1), (0.9, 0.6), (0.5, 0.5)] {
                // Clockwise turn of the picture point onto the panel.
                let panel: (Double, Double)
                switch r {
                case .none: panel = (x, y)
                case .quarter: panel = (1 - y, x)
                case .half: panel = (1 - x, 1 - y)
                case .threeQuarters: panel = (y, 1 - x)
                }
                let back = r.unrotate(panelX: panel.0, panelY: panel.1)
                XCTAssertEqual(back.x, x, accuracy: 1e-12, "\(r)")
                XCTAssertEqual(back.y, y, accuracy: 1e-12, "\(r)")
            }
        }
    }

    func testKeyNamesFeedTheKeyboardMap() {
        let map = KeyboardMap.standard
        XCTAssertEqual(EvdevKeyNames.name(code: 57, shift: false), "space")
        XCTAssertEqual(map.event(forKey: EvdevKeyNames.name(code: 57, shift: false)!), .shutter)
        XCTAssertEqual(map.event(forKey: EvdevKeyNames.name(code: 26, shift: false)!), .leftButton)
        XCTAssertEqual(map.event(forKey: EvdevKeyNames.name(code: 27, shift: false)!), .rightButton)
        XCTAssertEqual(map.event(forKey: EvdevKeyNames.name(code: 103, shift: false)!), .encoderTurned(1))
        XCTAssertEqual(map.event(forKey: EvdevKeyNames.name(code: 108, shift: false)!), .encoderTurned(-1))
        XCTAssertEqual(map.event(forKey: EvdevKeyNames.name(code: 28, shift: false)!), .encoderPressed)
        XCTAssertEqual(map.event(forKey: EvdevKeyNames.name(code: 33, shift: false)!), .nextFilter) // KEY_F
        XCTAssertEqual(map.event(forKey: EvdevKeyNames.name(code: 33, shift: true)!), .previousFilter)
        XCTAssertEqual(map.event(forKey: EvdevKeyNames.name(code: 34, shift: false)!), .grid) // KEY_G
        XCTAssertEqual(EvdevKeyNames.name(code: 50, shift: false), "m") // KEY_M
        XCTAssertNil(EvdevKeyNames.name(code: 500, shift: false))
    }
}
