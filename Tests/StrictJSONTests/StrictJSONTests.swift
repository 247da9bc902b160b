import XCTest
@testable import StrictJSON

final class JSONParserTests: XCTestCase {
    private func fails(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let v = try JSONParser.parse(text)
            XCTFail("\(text) parsed as \(v)", file: file, line: line)
            return ""
        } catch {
            return error.description
        }
    }

    func testValuesOfEveryKind() throws {
        let v = try JSONParser.parse(#" { "a": [1, -2.5e3, 0, true, false, null], "s": "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00", "o": {} } "#)
        guard case .object(let o) = v else { return XCTFail() }
        XCTAssertEqual(o.keys, ["a", "s", "o"], "members keep their order")
        XCTAssertEqual(o["a"], [1, -2500, 0, true, false, nil])
        XCTAssertEqual(o["s"], .string("x\"\\/\u{08}\u{0C}\n\r\té😀"))
        XCTAssertEqual(o["o"], .object(JSONObject()))
        XCTAssertEqual(try JSONParser.parse("12").integer, 12)
        XCTAssertNil(try JSONParser.parse("1.5").integer)
    }

    func testErrorsSayWhereAndWhat() {
        XCTAssertEqual(fails("{\n  \"a\": 1,\n  \"b\": 2,\n}"), "line 4, column 1: trailing comma before '}'")
        XCTAssertEqual(fails("{\"a\": 1 \"b\": 2}"), "line 1, column 9: expected ',' or '}' after an object member, found '\"'")
        XCTAssertEqual(fails("[1, 2,]"), "line 1, column 7: trailing comma before ']'")
        XCTAssertEqual(fails("{\"a\": \"open"), "line 1, column 7: unterminated string")
        XCTAssertEqual(fails("{\"a\": 1, \"a\": 2}"), "line 1, column 10: duplicate key \"a\"")
        XCTAssertEqual(fails("{\"a\": 01}"), "line 1, column 7: numbers must not have leading zeros")
        XCTAssertEqual(fails("{\"a\": NaN}"), "line 1, column 7: expected a value, found 'N'")
        XCTAssertEqual(fails("// comment\n{}"), "line 1, column 1: expected a value, found '/'")
        XCTAssertEqual(fails("{} {}"), "line 1, column 4: unexpected '{' after the JSON value")
        XCTAssertEqual(fails(""), "line 1, column 1: expected a value, found the end of the text")
        XCTAssertEqual(fails("\"\\ud800\""), "line 1, column 8: lone UTF-16 surrogate \\ud800 (not a character)")
        XCTAssertEqual(fails("\"a\tb\""), "line 1, column 3: control character (byte 0x9) in a string; write it as an escape")
        XCTAssertEqual(fails("1e999"), "line 1, column 1: number 1e999 is too large")
        XCTAssertTrue(fails("\u{FEFF}{}").contains("byte-order mark"))
        XCTAssertTrue(fails(String(repeating: "[", count: 100)).contains("nested deeper than 64"))
    }

    func testInvalidUTF8IsRefused() {
        XCTAssertThrowsError(try JSONParser.parse([0x22, 0xC3, 0x28, 0x22])) { error in
            XCTAssertEqual("\(error)", "line 1, column 2: string is not valid UTF-8")
        }
    }

    func testWritingAndReadingBackGivesTheSameValue() throws {
        let v: JSONValue = ["b": [1, 2.5, "x\n\u{1}", nil, true], "a": ["nested": -3]]
        XCTAssertEqual(v.serialized(), #"{"a":{"nested":-3},"b":[1,2.5,"x\n\u0001",null,true]}"#)
        XCTAssertEqual(try JSONParser.parse(v.serialized()), v)
        XCTAssertEqual(try JSONParser.parse(v.serialized(.pretty)), v)
        XCTAssertEqual(JSONValue.number(.nan).serialized(), "null")
    }
}

final class JSONFieldsTests: XCTestCase {
    private func reader(_ text: String) throws -> JSONFields<FieldError> {
        JSONFields(try JSONParser.parseObject(Array(text.utf8)), source: "test.json")
    }

    func testNullIsAbsentEverywhere() throws {
        var r = try reader(#"{"a": null, "b": null}"#)
        XCTAssertNil(try r.optionalString("a"), "null takes the default")
        XCTAssertThrowsError(try r.string("b")) { XCTAssertEqual("\($0)", "test.json: b: is missing") }
        XCTAssertNoThrow(try r.rejectUnknown())
    }

    func testWrongTypesRangesAndUnknownFieldsNameTheField() throws {
        var r = try reader(#"{"q": "9", "n": 7, "s": {"x": 1.5, "zz": 1}, "extra": 1}"#)
        XCTAssertThrowsError(try r.integer("q", in: 1...5)) { XCTAssertEqual("\($0)", "test.json: q: must be a whole number, not a string") }
        XCTAssertThrowsError(try r.integer("n", in: 1...5)) { XCTAssertEqual("\($0)", "test.json: n: 7 is out of range (allowed 1…5)") }
        XCTAssertThrowsError(try r.section("s") { s throws(FieldError) in _ = try s.integer("x", in: 0...9) }) {
            XCTAssertEqual("\($0)", "test.json: s.x: 1.5 must be a whole number")
        }
        XCTAssertThrowsError(try r.rejectUnknown(allowed: "q, n, s")) { XCTAssertEqual("\($0)", "test.json: extra: unknown field (allowed: q, n, s)") }
    }

    func testASyntaxErrorNamesTheSourceAndPosition() {
        XCTAssertThrowsError(try FieldError.parseObject(Array("{\n\"a\": 1,,\n}".utf8), source: "/etc/loopix/loopix.json")) {
            XCTAssertEqual("\($0)", "/etc/loopix/loopix.json: not valid JSON: line 2, column 8: expected a member name in double quotes, found ','")
        }
    }
}
