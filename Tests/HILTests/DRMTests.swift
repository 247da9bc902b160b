import Foundation
import XCTest

/// A mode set on vkms's virtual connector, through libdrm's `modetest` (libdrm-tests).
final class DRMTests: XCTestCase {
    /// `modetest -c` lists `39	40	connected	Virtual-1 …` under "Connectors:", and the modes
    /// under it as `  #0 1024x768 60.00 …`. Returns the connector id and its first mode.
    static func connectedConnector(module: String) throws -> (id: String, mode: String) {
        let listing = try Bench.run("modetest", ["-M", module, "-c"])
        XCTAssertEqual(listing.status, 0, listing.stderr)
        var id: String?
        for line in listing.stdout.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
            if id == nil, fields.count >= 4, Int(fields[0]) != nil, fields[2] == "connected",
               fields[3].hasPrefix("Virtual") {
                id = String(fields[0])
            } else if let id, fields.count >= 2, fields[0].hasPrefix("#") {
                return (id, String(fields[1]))
            }
        }
        XCTFail("no connected Virtual connector with a mode on \(module):\n\(listing.stdout)")
        throw XCTSkip("no connector")
    }

    func testSetsModeOnVkms() throws {
        try Bench.require("/dev/dri/card0")
        let (connector, mode) = try Self.connectedConnector(module: "vkms")
        XCTAssertEqual(mode, "1024x768", "vkms's preferred mode")
        // modetest sets the mode, draws test bars and holds them until its stdin closes.
        let holder = try Bench.Running("modetest", ["-M", "vkms", "-s", "\(connector):\(mode)"])
        // While it holds the mode, a CRTC scans out a framebuffer of that size: `modetest -p`
        // lists CRTCs as `37	42	(0,0)	(1024x768)` (id, framebuffer, position, size).
        let size = "(\(mode))"
        var scanning = false, crtcs = ""
        let end = Date(timeIntervalSinceNow: 30)
        while !scanning && Date() < end && holder.process.isRunning {
            crtcs = try Bench.run("modetest", ["-M", "vkms", "-p"]).stdout
            scanning = crtcs.split(separator: "\n").contains { line in
                let f = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
                return f.count >= 4 && Int(f[0]) != nil && f[1] != "0" && f[3] == size
            }
            if !scanning { Thread.sleep(forTimeInterval: 0.2) }
        }
        XCTAssertTrue(scanning, "no CRTC scans out \(mode) while modetest holds it:\n\(crtcs)")
        let result = holder.wait(timeout: 10)
        XCTAssertEqual(result.status, 0, "modetest: \(result.stderr)")
        XCTAssertTrue(result.stdout.contains("setting mode \(mode)"), result.stdout)
    }
}
