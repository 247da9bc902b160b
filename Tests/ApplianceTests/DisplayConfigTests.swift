import Controls
import Display
import Foundation
import XCTest
import ControlProtocol
@testable import Appliance
@testable import PixelFormats

final class DisplayConfigTests: XCTestCase {
    private func parse(_ json: String) throws(ConfigError) -> Config {
        try Config.parse(Data(json.utf8), source: "/etc/loopix/loopix.json")
    }

    private func error(_ json: String) -> String? {
        do { _ = try parse(json); return nil } catch { return error.description }
    }

    func testKMSDefaults() {
        let d = Config.defaults.display
        XCTAssertNil(d.connector)
        XCTAssertNil(d.mode)
        XCTAssertEqual(d.rotation, .none)
        XCTAssertEqual(d.format, .xrgb8888)
        XCTAssertEqual(d.flip, .auto)
        XCTAssertEqual(d.kms, KMSConfiguration())
    }

    func testKMSFields() throws {
        let c = try parse(#"{"display": {"backend": "kms", "connector": "DSI-1", "mode": "800x480@60", "rotation": 270, "format": "rgb565", "flip": "legacy"}}"#)
        XCTAssertEqual(c.display.backend, .kms)
        XCTAssertEqual(c.display.connector, "DSI-1")
        XCTAssertEqual(c.display.mode, ModeSpec(width: 800, height: 480, refresh: 60))
        XCTAssertEqual(c.display.rotation, .threeQuarters)
        XCTAssertEqual(c.display.format, .rgb565)
        XCTAssertEqual(c.display.kms.connector, "DSI-1")
        XCTAssertEqual(c.display.kms.rotation, .threeQuarters)
        XCTAssertEqual(c.display.kms.flip, .legacy)
    }

    func testKMSFieldErrors() {
        XCTAssertEqual(error(#"{"display": {"rotation": 45}}"#),
                       "/etc/loopix/loopix.json: display.rotation: 45 is not allowed (allowed 0, 90, 180, 270)")
        XCTAssertEqual(error(#"{"display": {"rotation": 360}}"#),
                       "/etc/loopix/loopix.json: display.rotation: 360 is not allowed (allowed 0, 90, 180, 270)")
        XCTAssertEqual(error(#"{"display": {"format": "rgb888"}}"#),
                       "/etc/loopix/loopix.json: display.format: \"rgb888\" is not one of \"xrgb8888\", \"rgb565\"")
        XCTAssertEqual(error(#"{"display": {"flip": "vsync"}}"#),
                       "/etc/loopix/loopix.json: display.flip: \"vsync\" is not one of \"auto\", \"atomic\", \"legacy\"")
        XCTAssertEqual(error(#"{"display": {"mode": "1920by1080"}}"#),
                       "/etc/loopix/loopix.json: display.mode: \"1920by1080\" is not a mode (WIDTHxHEIGHT or WIDTHxHEIGHT@HZ, like 1920x1080@60)")
        XCTAssertEqual(error(#"{"display": {"connector": "HDMI A 1"}}"#),
                       "/etc/loopix/loopix.json: display.connector: \"HDMI A 1\" is not a connector name (like HDMI-A-1, DSI-1, Virtual-1)")
        XCTAssertEqual(error(#"{"display": {"connector": ""}}"#)?.hasPrefix("/etc/loopix/loopix.json: display.connector:"), true)
        XCTAssertEqual(error(#"{"display": {"backend": "fbdev"}}"#),
                       "/etc/loopix/loopix.json: display.backend: \"fbdev\" is not one of \"auto\", \"kms\", \"window\", \"headless\"")
    }

    func testHeadlessBackendIgnoresKMS() throws {
        let c = try parse(#"{"display": {"backend": "headless", "connector": "HDMI-A-1"}}"#)
        let display = try Daemon.makeDisplay(c, headless: false)
        XCTAssertTrue(display is HeadlessDisplay)
        XCTAssertTrue(Daemon.makeInputs(c, display: display).isEmpty)
    }

    /// Asking for KMS where there is no card (or no connected connector) logs and runs headless.
    func testKMSBackendFallsBackToHeadless() throws {
        guard KMSDisplay.connectedDisplayExists() == false else { throw XCTSkip("this machine has a connected KMS display") }
        let c = try parse(#"{"display": {"backend": "kms"}}"#)
        let display = try Daemon.makeDisplay(c, headless: false)
        XCTAssertTrue(display is HeadlessDisplay)
    }
}
