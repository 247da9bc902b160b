import Appliance
import ControlProtocol
import Foundation
import XCTest
@testable import LoopixTool

final class CtlLicenseTests: XCTestCase {
    func testCtlRequests() throws {
        XCTAssertEqual(try CtlCommand.request(["status"]), .status)
        XCTAssertEqual(try CtlCommand.request(["preset", "portra"]), .preset("portra"))
        XCTAssertEqual(try CtlCommand.request(["intensity", "70"]), .intensity(70))
        XCTAssertEqual(try CtlCommand.request(["ev", "-1.3"]), .ev(-1.3))
        XCTAssertEqual(try CtlCommand.request(["lens", "1"]), .lens(1))
        XCTAssertEqual(try CtlCommand.request(["mode", "video"]), .mode(.video))
        XCTAssertEqual(try CtlCommand.request(["grid", "off"]), .grid(false))
        XCTAssertEqual(try CtlCommand.request(["handedness", "left"]), .handedness(.left))
        XCTAssertEqual(try CtlCommand.request(["snapshot", "x.png"], currentDirectory: "/tmp"), .snapshot(path: "/tmp/x.png"))
        XCTAssertThrowsError(try CtlCommand.request(["ev", "4"])) { XCTAssertEqual(($0 as? ToolError)?.status, 2) }
        XCTAssertThrowsError(try CtlCommand.request(["grid", "maybe"]))
        XCTAssertThrowsError(try CtlCommand.request(["fly"]))
        XCTAssertEqual(try CtlCommand.request(["wait-saved"]), .waitSaved(count: 1))
        XCTAssertEqual(try CtlCommand.request(["wait-saved", "5"]), .waitSaved(count: 5))
        XCTAssertThrowsError(try CtlCommand.request(["wait-saved", "0"])) { XCTAssertEqual(($0 as? ToolError)?.status, 2) }
        XCTAssertThrowsError(try CtlCommand.request(["wait-saved", "1", "2"]))
        XCTAssertEqual(try CtlCommand.request(["interval", "start", "10"], every: "30"), .interval(.start(everySeconds: 30, count: 10)))
        XCTAssertEqual(try CtlCommand.request(["interval", "start"], every: "0.5"), .interval(.start(everySeconds: 0.5, count: nil)))
        XCTAssertEqual(try CtlCommand.request(["interval", "stop"]), .interval(.stop))
        XCTAssertThrowsError(try CtlCommand.request(["interval", "start", "10"])) { XCTAssertEqual(($0 as? ToolError)?.status, 2, "no --every") }
        XCTAssertThrowsError(try CtlCommand.request(["interval", "start"], every: "0.1"))
    }

    func testCtlAgainstARealSocket() throws {
        let dir = "/tmp/lxc-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try ControlServer(path: "\(dir)/c.sock") { request in
            if case .lens = request { return .failure("no such lens") }
            return .success(["preset": "portra", "cmd": .string(request.command)])
        }
        server.start()
        defer { server.close() }
        var printed: [String] = []
        try CtlCommand.run(["status", "--socket", server.path]) { printed.append($0) }
        XCTAssertTrue(printed[0].contains("\n  \"preset\": \"portra\""), printed[0])
        XCTAssertThrowsError(try CtlCommand.run(["lens", "1"], environment: ["LOOPIX_SOCKET": server.path]) { _ in }) { error in
            XCTAssertEqual((error as? ToolError)?.message, "lens: no such lens")
            XCTAssertEqual((error as? ToolError)?.status, 1)
        }
    }

    func testLicenseKeygenIssueVerify() throws {
        let dir = "/tmp/lxl-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try LicenseCommand.run(["keygen", "-o", "\(dir)/k"]) { _ in }
        let mode = try FileManager.default.attributesOfItem(atPath: "\(dir)/k.secret")[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        XCTAssertThrowsError(try LicenseCommand.run(["keygen", "-o", "\(dir)/k"]) { _ in }, "never overwrites")
        try LicenseCommand.run(["issue", "--licensee", "Ada", "--secret-key-file", "\(dir)/k.secret", "-o", "\(dir)/l.json"]) { _ in }
        let publicKey = try String(contentsOfFile: "\(dir)/k.public", encoding: .utf8)
        var out: [String] = []
        try LicenseCommand.run(["verify", "\(dir)/l.json", "--public-key", publicKey]) { out.append($0) }
        XCTAssertEqual(out.count, 1)
        XCTAssertTrue(out[0].hasPrefix("\(dir)/l.json: valid license for Ada, issued 20"), out[0])
        XCTAssertTrue(out[0].hasSuffix(", features: pro"), out[0])
        try LicenseCommand.run(["keygen", "-o", "\(dir)/other"]) { _ in }
        let other = try String(contentsOfFile: "\(dir)/other.public", encoding: .utf8)
        XCTAssertThrowsError(try LicenseCommand.run(["verify", "\(dir)/l.json", "--public-key", other]) { _ in }) { error in
            XCTAssertTrue((error as? ToolError)?.message.contains("license was signed with key") ?? false)
        }
    }
}
