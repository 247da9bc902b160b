import Foundation
import XCTest
@testable import FilmCore

final class PresetTests: XCTestCase {
    func testTwentyEightBuiltInPresetsWithUniqueIdsAndThreeFree() {
        XCTAssertEqual(BuiltinPresets.all.count, 28)
        XCTAssertEqual(Set(BuiltinPresets.all.map(\.id)).count, 28)
        XCTAssertEqual(Set(BuiltinPresets.all.map(\.name)).count, 28)
        XCTAssertEqual(Set(BuiltinPresets.all.filter { $0.tier == .free }.map(\.id)), ["clean", "mono", "portra"])
        XCTAssertEqual(BuiltinPresets.named("Portra")?.name, "Kodak Portra 400")
        XCTAssertNil(BuiltinPresets.named("nope"))
        for p in BuiltinPresets.all {
            XCTAssertFalse(p.description.isEmpty, p.id)
            XCTAssertGreaterThan(p.clamp.white, p.clamp.black, p.id)
            for curve in [p.curves.master, p.curves.red, p.curves.green, p.curves.blue] {
                XCTAssertEqual(curve.points, curve.points.sorted(), "\(p.id): curves rise")
            }
            if p.category == .blackAndWhite {
                XCTAssertEqual(p.grade.saturation, 0, p.id)
                XCTAssertEqual(p.grain.monochromatic, 1, p.id)
            }
        }
    }

    func testEveryPresetRendersWithinRangeAndDiffersFromTheOthers() {
        let image = TestImages.sweep(48, 48)
        var seen = Set<[UInt8]>()
        for p in BuiltinPresets.all {
            let reference = ReferencePipeline(preset: p)
            for c in [SIMD3<Double>(0, 0, 0), SIMD3(1, 1, 1), SIMD3(0.5, 0.2, 0.9), SIMD3(1, 0, 0)] {
                let out = reference.color(c)
                XCTAssertTrue(out.x.isFinite && out.y.isFinite && out.z.isFinite, p.id)
                XCTAssertTrue(all(out .>= 0) && all(out .<= 1), "\(p.id): \(out)")
            }
            seen.insert(TestImages.render(image, p, RenderSettings(grainEnabled: false)).pixels)
        }
        XCTAssertEqual(seen.count, 28, "every look is different")
    }

    func json(_ s: String) -> Data { Data(s.utf8) }

    func testParsesAValidUserPreset() throws {
        let preset = try PresetParser.parse(json("""
        { "version": 1, "id": "my-look", "name": "My Look",
          "grade": { "saturation": 1.2, "temperature": 0.1 },
          "curves": { "master": [0.02, 0.26, 0.52, 0.77, 0.97] },
          "fade": 0.03, "grain": { "amount": 0.3, "size": 2 } }
        """), source: "my-look.json")
        XCTAssertEqual(preset.id, "my-look")
        XCTAssertEqual(preset.category, .user)
        XCTAssertEqual(preset.grade.saturation, 1.2)
        XCTAssertEqual(preset.curves.master.points, [0.02, 0.26, 0.52, 0.77, 0.97])
        XCTAssertEqual(preset.curves.red, .identity)
        XCTAssertEqual(preset.grain.size, 2)
        XCTAssertEqual(preset.grain.roughness, Preset.Grain().roughness)
    }

    func testInvalidUserPresetsNameTheFileTheFieldAndTheRange() {
        let cases: [(String, String)] = [
            (#"{ "version": 1, "id": "a", "name": "A", "grain": { "amount": 1.5 } }"#,
             "bad.json: grain.amount: 1.5 is out of range (allowed 0…1)"),
            (#"{ "version": 1, "id": "a", "name": "A", "grain": { "size": 9 } }"#,
             "bad.json: grain.size: 9 is out of range (allowed 0.5…4)"),
            (#"{ "version": 1, "id": "a", "name": "A", "grade": { "saturation": "lots" } }"#,
             "bad.json: grade.saturation: must be a number, not a string"),
            (#"{ "version": 1, "id": "a", "name": "A", "grade": { "saturaton": 1 } }"#,
             "bad.json: grade.saturaton: unknown field (allowed: exposure, saturation, temperature, tint)"),
            (#"{ "version": 1, "id": "a", "name": "A", "curves": { "red": [0, 0.5, 0.4, 0.8, 1] } }"#,
             "bad.json: curves.red[2]: 0.4 is below the point before it; a tone curve must not fall"),
            (#"{ "version": 1, "id": "a", "name": "A", "curves": { "red": [0, 1] } }"#,
             "bad.json: curves.red: must be 5 numbers (shadows, darks, midtones, lights, highlights)"),
            (#"{ "version": 2, "id": "a", "name": "A" }"#,
             "bad.json: version: 2 is not supported (this Loopix reads version 1)"),
            (#"{ "version": 1, "name": "A" }"#, "bad.json: id: is missing"),
            (#"{ "version": 1, "id": "portra", "name": "A" }"#,
             "bad.json: id: \"portra\" is the id of a built-in preset; choose another"),
            (#"{ "version": 1, "id": "Bad Id", "name": "A" }"#,
             "bad.json: id: \"Bad Id\" must be 1 to 32 characters of a–z, 0–9 and -"),
            (#"{ "version": 1, "id": "a", "name": "A", "clamp": { "black": 0.4, "white": 0.5 }, "fade": 0.5 }"#,
             "bad.json: fade: 0.5 is out of range (allowed 0…0.3)"),
            (#"[1, 2]"#, "bad.json: not valid JSON: line 1, column 1: expected a JSON object ({…}), found an array"),
            (#"{ "version": 1, "id": "a", "name": "A",, }"#, "bad.json: not valid JSON: line 1, column 40: expected a member name in double quotes, found ','"),
            (#"{ "version": 1, "id": "a", "name": "A", "grade": { "saturation": true } }"#,
             "bad.json: grade.saturation: must be a number, not true or false"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try PresetParser.parse(json(text), source: "bad.json")) { error in
                XCTAssertEqual((error as? PresetError)?.description, expected)
            }
        }
        XCTAssertThrowsError(try PresetParser.parse(json("{ not json"), source: "bad.json")) { error in
            XCTAssertTrue((error as? PresetError)?.description.hasPrefix("bad.json: not valid JSON") == true, "\(error)")
        }
    }

    func testAUserPresetCanUseACubeLUT() throws {
        let identity = ColorLUT(gridSize: 2) { $0 }.cube(title: "id").text
        let preset = try PresetParser.parse(json(#"{ "version": 1, "id": "lut", "name": "LUT", "cube": "x.cube" }"#),
                                            source: "lut.json", loadCube: { path in
            XCTAssertEqual(path, "x.cube")
            return identity
        })
        XCTAssertEqual(preset.colorLUT?.size, 2)
        let c = ReferencePipeline(preset: preset).color(SIMD3(0.3, 0.6, 0.9))
        XCTAssertEqual(c.x, 0.3, accuracy: 1e-6)
        XCTAssertEqual(c.z, 0.9, accuracy: 1e-6)
        XCTAssertThrowsError(try PresetParser.parse(json(#"{ "version": 1, "id": "lut", "name": "LUT", "cube": "x.cube" }"#),
                                                    source: "lut.json", loadCube: { _ in "LUT_3D_SIZE 2\n0 0 0\n" })) { error in
            XCTAssertEqual((error as? PresetError)?.description,
                           "lut.json: cube: x.cube: line 3: 1 table entries, LUT_3D_SIZE 2 needs 8")
        }
    }
}

final class CubeLUTTests: XCTestCase {
    func testParsesResolveAndAdobeStyleFiles() throws {
        let text = """
        # made by hand
        TITLE "Warm"
        LUT_3D_SIZE 2
        DOMAIN_MIN 0 0 0
        DOMAIN_MAX 1 1 1

        0 0 0
        1 0 0
        0 1 0
        1 1 0
        0 0 1
        1 0 1
        0 1 1
        1 1 1
        """
        let cube = try CubeLUT(parsing: text)
        XCTAssertEqual(cube.title, "Warm")
        XCTAssertEqual(cube.size, 2)
        XCTAssertEqual(cube.table[1], SIMD3(1, 0, 0), "red varies fastest")
        let c = cube.apply(SIMD3(0.25, 0.5, 0.75))
        XCTAssertEqual(c.x, 0.25, accuracy: 1e-6)
        XCTAssertEqual(c.y, 0.5, accuracy: 1e-6)
        XCTAssertEqual(c.z, 0.75, accuracy: 1e-6)
        XCTAssertEqual(try CubeLUT(parsing: cube.text), cube, "writes what it reads")
    }

    func testMalformedCubeFilesAreRejectedWithTheLineNumber() {
        let cases: [(String, String)] = [
            ("LUT_3D_SIZE 2\n0 0 0\n1 0\n", "line 3: a table line needs three numbers (r g b)"),
            ("LUT_3D_SIZE 1\n", "line 1: LUT_3D_SIZE must be a whole number from 2 to 256"),
            ("0 0 0\n", "line 1: table data before LUT_3D_SIZE"),
            ("TITLE \"x\"\nLUT_1D_SIZE 16\n", "line 2: 1D LUTs are not supported; a 3D LUT (LUT_3D_SIZE) is needed"),
            ("LUT_3D_SIZE 2\nFOO 1\n", "line 2: unknown keyword \"FOO\""),
            ("LUT_3D_SIZE 2\nDOMAIN_MIN 0 0\n", "line 2: DOMAIN_MIN needs 3 numbers"),
            ("LUT_3D_SIZE 2\n0 0 nan\n", "line 2: a table line needs three numbers (r g b)"),
            ("# nothing\n", "no LUT_3D_SIZE line"),
            ("LUT_3D_SIZE 2\n" + String(repeating: "0 0 0\n", count: 9), "line 10: more than 8 table entries for LUT_3D_SIZE 2"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try CubeLUT(parsing: text), expected) { error in
                XCTAssertEqual((error as? CubeLUT.ParseError)?.description, expected)
            }
        }
    }
}
