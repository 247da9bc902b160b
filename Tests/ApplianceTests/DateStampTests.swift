import Camera
import Display
import FilmCore
import Foundation
import System
import TestFixtures
import ImageFiles
import XCTest
@testable import Appliance
import Raster

/// `capture.dateStamp`: its format, its configuration, and the imprint in a photo the daemon
/// takes and in its preview.
final class DateStampConfigTests: XCTestCase {
    let utc = TimeZone(identifier: "UTC")!
    let date = Date(timeIntervalSince1970: 912_384_000 + 9 * 3600 + 5 * 60)   // 1998-11-30 09:05 UTC

    func testTheFormatsTokens() {
        XCTAssertEqual(DateStampFormat.classic.text(for: date, timeZone: utc), "'98 11 30")
        XCTAssertEqual(DateStampFormat("D-M-YYYY HH:mm")?.text(for: date, timeZone: utc), "30-11-1998 09:05")
        XCTAssertEqual(DateStampFormat("YY.MM.DD")?.text(for: Date(timeIntervalSince1970: 1_041_379_200), timeZone: utc), "03.01.01")
        XCTAssertNil(DateStampFormat("DD NOV"), "letters the segments cannot show")
        XCTAssertNil(DateStampFormat("' - :"), "no date in it")
        XCTAssertNil(DateStampFormat(""))
    }

    func testTheConfigurationTakesTrueFalseOrAFormat() throws {
        func capture(_ json: String) throws(ConfigError) -> Config.CaptureSection {
            try Config.parse(Data("{\"capture\": {\"dateStamp\": \(json)}}".utf8), source: "loopix.json").capture
        }
        XCTAssertNil(Config.defaults.capture.dateStamp, "off by default")
        XCTAssertEqual(try capture("true").dateStamp, .classic)
        XCTAssertNil(try capture("false").dateStamp)
        XCTAssertEqual(try capture("{\"format\": \"DD.MM.YY\"}").dateStamp?.pattern, "DD.MM.YY")
        XCTAssertEqual(try capture("{}").dateStamp, .classic)
        XCTAssertThrowsError(try capture("{\"format\": \"DD NOV\"}")) { error in
            XCTAssertTrue("\(error)".hasPrefix("loopix.json: capture.dateStamp.format: \"DD NOV\" must be"), "\(error)")
        }
        XCTAssertThrowsError(try capture("\"yes\"")) { error in
            XCTAssertTrue("\(error)".contains("capture.dateStamp: must be an object"), "\(error)")
        }
        XCTAssertTrue(Config.reloadableKeys.contains("capture.dateStamp"))
    }

    /// A flat dark scene, photographed and shown by a controller with or without the imprint.
    func run(dateStamp: DateStampFormat?) throws -> (photo: RGBImage, preview: RGBImage) {
        let dir = try makeTempDirectory(self)
        var config = testConfig(in: dir)
        config.capture.format = .jpeg
        config.capture.jpegQuality = 95
        config.capture.dateStamp = dateStamp
        config.defaults.preset = "portra"
        let scene = RGBImage(width: 640, height: 480, pixels: [UInt8](repeating: 35, count: 640 * 480 * 3))
        let camera = SimulatedCamera(stillWidth: 640, stillHeight: 480, framesPerSecond: 30, scene: .photos([scene]))
        let display = ScriptedDisplay(width: 640, height: 480)
        let controller = Controller(config: config, configPath: nil, devices: .init(camera: camera, faults: camera, display: display, motion: nil))
        let run = ControllerRun(controller)
        let deadline = Date().addingTimeInterval(60)
        // The look (with its imprint) is compiled in the background: wait for frames graded with it.
        while display.framesShown < 30 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        display.press(.trigger(atNs: MonotonicClock.now()))
        let path = dir + "/photos/DCIM/100LOOPX/LPX_0001.JPG"
        while !FileManager.default.fileExists(atPath: path) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let preview = display.lastFrame
        XCTAssertTrue(run.stop())
        controller.shutdown(timeout: 30)
        return (try ImageReader.read(path: path), try XCTUnwrap(preview))
    }

    func testThePhotoAndThePreviewCarryTheDate() throws {
        let plain = try run(dateStamp: nil)
        let stamped = try run(dateStamp: .classic)
        let text = DateStampFormat.classic.text(for: Date())
        let expected = String(text.filter(\.isNumber))
        XCTAssertEqual(readDateStamp(stamped.photo, over: plain.photo, text: text), expected, "the photo's imprint")
        XCTAssertEqual(readDateStamp(stamped.preview, over: plain.preview, text: text), expected, "the preview's imprint")
    }
}
