import Foundation
import XCTest
@testable import ControlProtocol
import StrictJSON

final class ControlProtocolTests: XCTestCase {
    private func ok(_ line: String) -> ControlRequest? {
        switch ControlRequest.parse(line: line) {
        case .success(let r): return r
        case .failure(let e): XCTFail("\(line): \(e)"); return nil
        }
    }

    private func err(_ line: String) -> String? {
        switch ControlRequest.parse(line: line) {
        case .success(let r): XCTFail("\(line) parsed as \(r)"); return nil
        case .failure(let e): return e.description
        }
    }

    func testValidRequests() {
        XCTAssertEqual(ok("{\"cmd\":\"status\"}"), .status)
        XCTAssertEqual(ok("{\"cmd\":\"capture\"}\n"), .capture)
        XCTAssertEqual(ok("{\"cmd\":\"preset\",\"name\":\"portra\"}"), .preset("portra"))
        XCTAssertEqual(ok("{\"cmd\":\"intensity\",\"value\":70}"), .intensity(70))
        XCTAssertEqual(ok("{\"cmd\":\"ev\",\"value\":-1.3}"), .ev(-1.3))
        XCTAssertEqual(ok("{\"cmd\":\"lens\",\"index\":1}"), .lens(1))
        XCTAssertEqual(ok("{\"cmd\":\"mode\",\"value\":\"video\"}"), .mode(.video))
        XCTAssertEqual(ok("{\"cmd\":\"grid\",\"value\":true}"), .grid(true))
        XCTAssertEqual(ok("{\"cmd\":\"handedness\",\"value\":\"left\"}"), .handedness(.left))
        XCTAssertEqual(ok("{\"cmd\":\"snapshot\",\"path\":\"/tmp/x.png\"}"), .snapshot(path: "/tmp/x.png"))
        XCTAssertEqual(ok("{\"cmd\":\"simulate\",\"fault\":\"stall\",\"seconds\":3}"), .simulate(fault: .stall, seconds: 3))
        XCTAssertEqual(ok("{\"cmd\":\"wait-saved\",\"count\":3}"), .waitSaved(count: 3))
        XCTAssertEqual(ok("{\"cmd\":\"wait-saved\"}"), .waitSaved(count: 1), "one photo unless told")
        XCTAssertEqual(ok("{\"cmd\":\"interval\",\"action\":\"start\",\"every\":2.5,\"count\":10}"), .interval(.start(everySeconds: 2.5, count: 10)))
        XCTAssertEqual(ok("{\"cmd\":\"interval\",\"action\":\"start\",\"every\":60}"), .interval(.start(everySeconds: 60, count: nil)))
        XCTAssertEqual(ok("{\"cmd\":\"interval\",\"action\":\"stop\"}"), .interval(.stop))
        XCTAssertEqual(err("{\"cmd\":\"interval\",\"action\":\"pause\"}"), "interval: \"action\" \"pause\" is not start or stop")
        XCTAssertEqual(err("{\"cmd\":\"interval\",\"action\":\"start\"}"), "interval: \"every\" is missing")
        XCTAssertEqual(err("{\"cmd\":\"wait-saved\",\"count\":0}"), "wait-saved: \"count\" 0 is out of range (allowed 1…1000)")
        XCTAssertEqual(ok(" { \"id\" : 7 , \"cmd\" : \"status\" } "), .status)
        let (id, r) = ControlRequest.parseWithID(line: Array("{\"cmd\":\"status\",\"id\":\"abc\"}".utf8))
        XCTAssertEqual(id, .string("abc"))
        XCTAssertEqual(try r.get(), .status)
    }

    func testEncodingRoundTrips() {
        let all: [ControlRequest] = [.waitSaved(count: 12), .interval(.start(everySeconds: 1.5, count: 3)), .interval(.start(everySeconds: 60, count: nil)),
                                     .interval(.stop), .status, .capture, .preset("trix400"), .intensity(55.5), .ev(-3), .lens(2),
                                     .mode(.photo), .grid(false), .handedness(.right), .snapshot(path: "/tmp/a \"b\".png"),
                                     .simulate(fault: .disconnect, seconds: 0.5)]
        for r in all {
            let line = r.jsonLine(id: .number(3))
            XCTAssertTrue(line.hasSuffix("\n"))
            let (id, parsed) = ControlRequest.parseWithID(line: Array(line.utf8))
            XCTAssertEqual(id, .number(3))
            XCTAssertEqual(try parsed.get(), r)
        }
    }

    func testErrors() {
        XCTAssertEqual(err("status"), "request is not valid JSON (line 1, column 1: expected a value, found 's'; send one JSON object per line)")
        XCTAssertEqual(err("[1]"), "request must be a JSON object, e.g. {\"cmd\":\"status\"}")
        XCTAssertEqual(err("{}"), "request has no \"cmd\" string")
        XCTAssertEqual(err("{\"cmd\":5}"), "request has no \"cmd\" string")
        XCTAssertEqual(err("{\"cmd\":\"explode\"}"),
                       "unknown cmd \"explode\" (known: status, capture, preset, intensity, ev, lens, mode, grid, handedness, snapshot, simulate, record, booth, wait-saved, interval)")
        XCTAssertEqual(err("{\"cmd\":\"preset\"}"), "preset: \"name\" is missing")
        XCTAssertEqual(err("{\"cmd\":\"preset\",\"name\":3}"), "preset: \"name\" must be a string, not a number")
        XCTAssertEqual(err("{\"cmd\":\"preset\",\"name\":\"Bad Name\"}"),
                       "preset: \"name\" \"Bad Name\" is not a preset id (1 to 32 characters of a–z, 0–9 and -)")
        XCTAssertEqual(err("{\"cmd\":\"intensity\",\"value\":170}"), "intensity: \"value\" 170 is out of range (allowed 0…100 %)")
        XCTAssertEqual(err("{\"cmd\":\"intensity\",\"value\":\"70\"}"), "intensity: \"value\" must be a number, not a string")
        XCTAssertEqual(err("{\"cmd\":\"intensity\",\"value\":true}"), "intensity: \"value\" must be a number, not true or false")
        XCTAssertEqual(err("{\"cmd\":\"ev\",\"value\":-3.5}"), "ev: \"value\" -3.5 is out of range (allowed -3…3 stops)")
        XCTAssertEqual(err("{\"cmd\":\"lens\",\"index\":1.5}"), "lens: \"index\" 1.5 must be a whole number")
        XCTAssertEqual(err("{\"cmd\":\"lens\",\"index\":16}"), "lens: \"index\" 16 is out of range (allowed 0…15)")
        XCTAssertEqual(err("{\"cmd\":\"mode\",\"value\":\"slowmo\"}"), "mode: \"value\" \"slowmo\" is not one of \"photo\", \"video\"")
        XCTAssertEqual(err("{\"cmd\":\"grid\",\"value\":\"on\"}"), "grid: \"value\" must be true or false, not a string")
        XCTAssertEqual(err("{\"cmd\":\"handedness\",\"value\":1}"), "handedness: \"value\" must be one of \"left\", \"right\"")
        XCTAssertEqual(err("{\"cmd\":\"snapshot\",\"path\":\"x.png\"}"), "snapshot: \"path\" must be an absolute file path")
        XCTAssertEqual(err("{\"cmd\":\"simulate\",\"fault\":\"fire\",\"seconds\":1}"),
                       "simulate: \"fault\" \"fire\" is not one of \"stall\", \"disconnect\"")
        XCTAssertEqual(err("{\"cmd\":\"simulate\",\"fault\":\"stall\",\"seconds\":600}"), "simulate: \"seconds\" 600 is out of range (allowed 0…60 s)")
        XCTAssertEqual(err("{\"cmd\":\"status\",\"verbose\":true}"), "status: \"verbose\" unknown field")
        XCTAssertEqual(err("{\"cmd\":\"status\",\"id\":[1]}"), "request: \"id\" must be a string or a whole number")
        XCTAssertEqual(err("{\"cmd\":\"preset\",\"name\":null}"), "preset: \"name\" is missing", "null is absent, as everywhere")
        XCTAssertEqual(err("{\"cmd\":\"ev\",\"value\":1,\"value\":2}"),
                       "request is not valid JSON (line 1, column 23: duplicate key \"value\"; send one JSON object per line)")
        switch ControlRequest.parse(line: [0x7B, 0xFF, 0xFE, 0x7D]) {
        case .failure(let e): XCTAssertEqual(e, .notUTF8)
        case .success: XCTFail()
        }
    }

    func testReplies() {
        var r = ControlReply.success(["preset": "portra", "intensity": 70, "ev": -1.3, "grid": true,
                                      "lenses": ["wide", "tele"], "camera": ["backend": "simulated"], "none": .null])
        r.id = .string("q1")
        XCTAssertEqual(r.jsonLine, "{\"ok\":true,\"id\":\"q1\",\"camera\":{\"backend\":\"simulated\"},\"ev\":-1.3,\"grid\":true,\"intensity\":70,\"lenses\":[\"wide\",\"tele\"],\"none\":null,\"preset\":\"portra\"}\n")
        let f = ControlReply.failure("no lens 3\n(this camera has 2)")
        XCTAssertEqual(f.jsonLine, "{\"ok\":false,\"error\":\"no lens 3 (this camera has 2)\"}\n")
        // Every reply is valid JSON.
        for line in [r.jsonLine, f.jsonLine, ControlReply.failure("tab\there \"q\" \u{1}").jsonLine] {
            XCTAssertNoThrow(try JSONParser.parse(String(line.dropLast())))
            XCTAssertEqual(line.filter { $0 == "\n" }.count, 1)
        }
    }
}
