import Foundation
import XCTest
import FilmCore
import ImageFiles
@testable import LoopixTool

final class PresetCommandTests: XCTestCase {
    func testListsTwentyEightLooksWithTiers() throws {
        var lines: [String] = []
        try PresetsCommand.run(["--presets-dir", try Fixtures.temporaryDirectory()]) { lines.append($0) }
        XCTAssertEqual(lines.count, 28)
        XCTAssertTrue(lines.contains { $0.hasPrefix("portra ") && $0.contains("Kodak Portra 400") && $0.contains(" free ") })
        XCTAssertTrue(lines.contains { $0.hasPrefix("cinestill800t ") && $0.contains(" pro ") })
        var json = ""
        try PresetsCommand.run(["--json", "--presets-dir", try Fixtures.temporaryDirectory()]) { json += $0 }
        let rows = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: String]]
        XCTAssertEqual(rows?.count, 28)
        XCTAssertEqual(rows?.first?["id"], "clean")
        XCTAssertEqual(rows?.filter { $0["tier"] == "free" }.count, 3)
    }

    func testUserPresetsLoadAndBadOnesAreReportedByFileAndField() throws {
        let dir = try Fixtures.temporaryDirectory()
        try Data(#"{ "version": 1, "id": "warm", "name": "Warm Day", "grade": { "temperature": 0.4 } }"#.utf8)
            .write(to: URL(fileURLWithPath: dir + "/warm.json"))
        try Data(#"{ "version": 1, "id": "loud", "name": "Loud", "grain": { "amount": 3 } }"#.utf8)
            .write(to: URL(fileURLWithPath: dir + "/loud.json"))
        try Data(#"{ "version": 1, "id": "lut", "name": "LUT", "cube": "bad.cube" }"#.utf8)
            .write(to: URL(fileURLWithPath: dir + "/lut.json"))
        try Data("LUT_3D_SIZE 2\n0 0 0\n0 0\n".utf8).write(to: URL(fileURLWithPath: dir + "/bad.cube"))
        try Data(#"{ "version": 1, "id": "gone", "name": "Gone", "cube": "missing.cube" }"#.utf8)
            .write(to: URL(fileURLWithPath: dir + "/gone.json"))
        let library = try PresetLibrary(directory: dir)
        XCTAssertEqual(library.presets.count, 29)
        XCTAssertEqual(try library.preset("warm").name, "Warm Day")
        XCTAssertEqual(library.problems.count, 3)
        XCTAssertTrue(library.problems.contains("\(dir)/loud.json: grain.amount: 3 is out of range (allowed 0…1)"), "\(library.problems)")
        XCTAssertTrue(library.problems.contains("\(dir)/lut.json: cube: bad.cube: line 3: a table line needs three numbers (r g b)"),
                      "\(library.problems)")
        XCTAssertTrue(library.problems.contains { $0.hasPrefix("\(dir)/gone.json: cube: cannot read missing.cube") }, "\(library.problems)")
    }

    func testExportsACubeThatParsesBack() throws {
        let dir = try Fixtures.temporaryDirectory()
        try PresetsCommand.run(["--cube", "ektar100", "-o", dir + "/ektar.cube", "--presets-dir", dir]) { _ in }
        let cube = try CubeLUT(parsing: String(contentsOfFile: dir + "/ektar.cube", encoding: .utf8))
        XCTAssertEqual(cube.size, 33)
        XCTAssertEqual(cube.title, "Kodak Ektar 100")
    }

    func testContactSheetShowsEveryLookLabelled() throws {
        let dir = try Fixtures.temporaryDirectory()
        try Fixtures.writePhoto(dir + "/in.png", width: 240, height: 160)
        try ContactSheetCommand.run([dir + "/in.png", "-o", dir + "/sheet.png", "--thumb-width", "120", "--columns", "7",
                                     "--presets-dir", dir])
        let sheet = try ImageReader.read(path: dir + "/sheet.png")
        // 7 columns × 4 rows of 120 × 80 thumbnails with label bands and gaps.
        XCTAssertGreaterThanOrEqual(sheet.width, 7 * 120)
        XCTAssertLessThan(sheet.width, 7 * 120 + 8 * 20)
        XCTAssertGreaterThanOrEqual(sheet.height, 4 * 80)
        // Each label band holds white text: count cells whose band has white pixels.
        XCTAssertThrowsError(try ContactSheetCommand.run([dir + "/in.png", "-o", dir + "/sheet.png", "--presets-dir", dir])) {
            XCTAssertEqual(($0 as? ToolError)?.message, "\(dir)/sheet.png: already exists (use --force to replace it)")
        }
        let white = stride(from: 0, to: sheet.pixels.count, by: 3).filter {
            sheet.pixels[$0] == 255 && sheet.pixels[$0 + 1] == 255 && sheet.pixels[$0 + 2] == 255
        }.count
        XCTAssertGreaterThan(white, 28 * 20, "label text is drawn")
    }
}
