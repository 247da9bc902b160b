import Foundation
import XCTest
import ControlProtocol
@testable import Appliance

final class SettingsTests: XCTestCase {
    func testRoundTrip() throws {
        let dir = try makeTempDirectory(self)
        let store = SettingsStore(directory: dir)
        let defaults = Settings()
        let (first, warning) = store.load(defaults: defaults)
        XCTAssertEqual(first, defaults, "no file: defaults")
        XCTAssertNil(warning)
        let s = Settings(preset: "trix400", intensities: ["trix400": 0.7, "portra": 0.25], lensIndex: 1,
                         ev: -1.3, grid: true, handedness: .left, onboardingDone: true)
        try store.save(s)
        let (loaded, w) = store.load(defaults: defaults)
        XCTAssertEqual(loaded, s)
        XCTAssertNil(w)
        XCTAssertEqual(loaded.intensity(for: "trix400"), 0.7)
        XCTAssertEqual(loaded.intensity(for: "velvia50", fallback: 0.9), 0.9)
        // Saving again replaces.
        var t = s
        t.ev = 2
        try store.save(t)
        XCTAssertEqual(store.load(defaults: defaults).settings.ev, 2)
        // No temporary files are left behind.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["settings.json"])
    }

    func testDefaultsFromConfig() {
        var d = Config.DefaultsSection()
        d.preset = "hp5"
        d.intensity = 40
        d.handedness = .left
        let s = Settings(defaults: d)
        XCTAssertEqual(s.preset, "hp5")
        XCTAssertEqual(s.intensity(for: "hp5"), 0.4)
        XCTAssertEqual(s.handedness, .left)
    }

    private func checkMovedAside(_ contents: String, expecting phrase: String) throws {
        let dir = try makeTempDirectory(self)
        let store = SettingsStore(directory: dir)
        try Data(contents.utf8).write(to: URL(fileURLWithPath: store.path))
        let defaults = Settings(preset: "clean")
        let (loaded, warning) = store.load(defaults: defaults)
        XCTAssertEqual(loaded, defaults)
        let w = try XCTUnwrap(warning)
        XCTAssertTrue(w.contains(phrase), w)
        XCTAssertFalse(w.contains("\n"))
        let files = try FileManager.default.contentsOfDirectory(atPath: dir)
        XCTAssertFalse(files.contains("settings.json"), "the bad file is moved away")
        let aside = try XCTUnwrap(files.first { $0.hasPrefix("settings.json.bad-") })
        XCTAssertTrue(w.contains(aside), w)
        XCTAssertEqual(try String(contentsOfFile: "\(dir)/\(aside)", encoding: .utf8), contents, "kept intact")
        // The next load is clean, and a save works.
        XCTAssertNil(store.load(defaults: defaults).warning)
        try store.save(defaults)
        XCTAssertEqual(store.load(defaults: Settings()).settings, defaults)
    }

    func testCorruptFileIsMovedAside() throws {
        try checkMovedAside("{\"version\": 1, \"preset\": ", expecting: "is corrupt")
        try checkMovedAside("\u{0}\u{1}garbage", expecting: "is corrupt")
        try checkMovedAside("{\"version\":1,\"preset\":\"portra\",\"intensities\":{},\"lensIndex\":0,\"ev\":9,\"grid\":false,\"handedness\":\"left\",\"onboardingDone\":true}",
                            expecting: "ev: 9 is out of range")
        try checkMovedAside("{\"version\":1,\"preset\":\"portra\"}", expecting: "is missing")
    }

    func testUnknownVersionIsMovedAside() throws {
        try checkMovedAside("{\"version\": 2, \"preset\": \"portra\"}", expecting: "has version 2")
    }
}
