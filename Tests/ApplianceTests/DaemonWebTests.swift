import Foundation
import ImageFiles
import System
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The web gallery as a phone and a browser meet it: served by a running `loopixd` on the
/// simulated camera, fetched with curl and opened in headless Chromium (programs no one here
/// wrote), and attacked by clients that misbehave while the preview must keep its rate.
final class DaemonWebTests: XCTestCase {
    static let token = "booth-token-0123456789"

    private func startDaemon() throws -> (DaemonHarness, String) {
        let d = try DaemonHarness(stillWidth: 640, stillHeight: 480, extraConfig: """
            "web": { "enabled": true, "address": "127.0.0.1", "port": 0, "token": "\(Self.token)", "connections": 16, "idleSeconds": 3 }
            """)
        try d.start()
        let status = try d.request(#"{"cmd":"status"}"#)
        guard let url = status["web"] as? String else {
            d.stop()
            throw NSError(domain: "web", code: 1, userInfo: [NSLocalizedDescriptionKey: "status has no web address: \(status)\n\(d.log())"])
        }
        return (d, url)
    }

    /// Runs a program; its standard output, or nil when it is not installed.
    private func run(_ program: String, _ arguments: [String], timeout: Double = 60) throws -> (status: Int32, output: Data)? {
        guard FileManager.default.isExecutableFile(atPath: program) else { return nil }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let reader = Locked(Data())
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let data = out.fileHandleForReading.readDataToEndOfFile()
            reader.withLock { $0 = data }
            done.signal()
        }
        if done.wait(timeout: .now() + timeout) == .timedOut {
            p.terminate()
            XCTFail("\(program) \(arguments) did not finish in \(timeout) s")
        }
        p.waitUntilExit()
        return (p.terminationStatus, reader.withLock { $0 })
    }

    private func curl(_ arguments: [String]) throws -> (status: Int32, output: Data) {
        guard let result = try run("/usr/bin/curl", ["-s", "--max-time", "30"] + arguments) else {
            throw XCTSkip("curl is not installed (scripts/setup installs it)")
        }
        return result
    }

    /// HTTP status of a request made with curl (`--path-as-is` keeps `../` as sent).
    private func httpCode(_ arguments: [String]) throws -> Int {
        let r = try curl(["-o", "/dev/null", "-w", "%{http_code}", "--path-as-is"] + arguments)
        return Int(String(decoding: r.output, as: UTF8.self)) ?? 0
    }

    /// The gallery lists the photos taken, newest first; the original and a JPEG download;
    /// status for everyone; the remote shutter only with the token.
    func testTheGalleryServesWhatTheCameraTook() throws {
        let (d, url) = try startDaemon()
        defer { d.stop() }
        XCTAssertTrue(url.hasPrefix("http://127.0.0.1:"), url)
        for _ in 0..<2 { XCTAssertEqual(try d.request(#"{"cmd":"capture"}"#)["ok"] as? Bool, true) }
        XCTAssertEqual(try d.waitForStatus { $0["saved"] as? Int == 2 }["saved"] as? Int, 2, d.log())

        let page = String(decoding: try curl([url]).output, as: UTF8.self)
        let first = try XCTUnwrap(page.range(of: "LPX_0002.HEIC"), page), second = try XCTUnwrap(page.range(of: "LPX_0001.HEIC"), page)
        XCTAssertLessThan(first.lowerBound, second.lowerBound, "newest first")

        let original = try curl([url + "files/100LOOPX/LPX_0001.HEIC"]).output
        XCTAssertEqual(original, FileManager.default.contents(atPath: d.photos + "/DCIM/100LOOPX/LPX_0001.HEIC"), "the original, byte for byte")
        let jpeg = try curl([url + "jpeg/100LOOPX/LPX_0001.HEIC"]).output
        XCTAssertEqual(Array(jpeg.prefix(2)), [0xFF, 0xD8], "a JPEG")
        let path = d.directory + "/web.jpg"
        try jpeg.write(to: URL(fileURLWithPath: path))
        let decoded = try ImageReader.readPhoto(path: path)
        XCTAssertEqual([decoded.image.width, decoded.image.height], [640, 480])

        let status = try JSONSerialization.jsonObject(with: try curl([url + "api/status"]).output) as? [String: Any]
        XCTAssertEqual(status?["saved"] as? Int, 2, "\(String(describing: status))")
        let capture = [url + "api", "-X", "POST", "--data", #"{"cmd":"capture"}"#]
        XCTAssertEqual(try httpCode(capture), 401, "no token")
        XCTAssertEqual(try httpCode(capture + ["-H", "Authorization: Bearer wrong-token-0123456789"]), 401)
        XCTAssertEqual(try httpCode(capture + ["-H", "Authorization: Bearer \(Self.token)"]), 200)
        XCTAssertEqual(try d.waitForStatus { $0["saved"] as? Int == 3 }["saved"] as? Int, 3, "the remote shutter took a photo")
        XCTAssertEqual(try httpCode([url + "api", "-X", "POST", "-H", "Authorization: Bearer \(Self.token)", "--data", #"{"cmd":"preset","name":"mono"}"#]), 200)
        XCTAssertEqual(try d.request(#"{"cmd":"status"}"#)["preset"] as? String, "mono", "the remote look")
    }

    /// Traversal in every spelling, a symbolic link out of the photos, huge headers, ranges
    /// past the end, slowloris and a crowd of connections: each refused or bounded, while the
    /// preview keeps its frame rate and the socket still answers.
    func testHostileClientsNeitherReachOutNorSlowThePreview() throws {
        let (d, url) = try startDaemon()
        defer { d.stop() }
        XCTAssertEqual(try d.request(#"{"cmd":"capture"}"#)["ok"] as? Bool, true)
        XCTAssertEqual(try d.waitForStatus { $0["saved"] as? Int == 1 }["saved"] as? Int, 1, d.log())
        let secret = d.directory + "/secret.txt"
        try "not for the web".write(toFile: secret, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: d.photos + "/DCIM/100LOOPX/LPX_0009.HEIC", withDestinationPath: secret)

        func rate(over seconds: Double) throws -> Double {
            let a = try d.request(#"{"cmd":"status"}"#)["framesShown"] as? Int ?? 0
            Thread.sleep(forTimeInterval: seconds)
            let b = try d.request(#"{"cmd":"status"}"#)["framesShown"] as? Int ?? 0
            return Double(b - a) / seconds
        }
        let quiet = try rate(over: 3)
        XCTAssertGreaterThan(quiet, 5, "the headless preview runs")

        // Connections that send half a request and wait, more than the server allows; live
        // viewers that never read.
        let port = Int(url.split(separator: ":").last?.filter(\.isNumber) ?? "") ?? 0
        var held: [Int32] = []
        for i in 0..<300 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = in_port_t(UInt16(port).bigEndian)
            addr.sin_addr.s_addr = inet_addr("127.0.0.1")
            let ok = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard ok == 0 else { close(fd); continue }
            let text = i % 3 == 0 ? "GET /live.mjpg HTTP/1.1\r\nHost: x\r\n\r\n" : "GET / HTTP/1.1\r\nX-Slow: "
            _ = Array(text.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            held.append(fd)
        }
        defer { held.forEach { close($0) } }
        let attacked = try rate(over: 3)

        for path in ["../../etc/passwd", "files/../../secret.txt", "files/%2e%2e/%2e%2e/secret.txt", "files/..%2f..%2fsecret.txt",
                     "files/100LOOPX/LPX_0009.HEIC", "files/100LOOPX/..%00/LPX_0001.HEIC", "jpeg/100LOOPX/LPX_0009.HEIC"] {
            let code = try httpCode([url + path])
            XCTAssertTrue(code == 404 || code == 400 || code == 0 || code == 503, "\(path): \(code)")
        }
        XCTAssertFalse(String(decoding: try curl(["--path-as-is", url + "files/100LOOPX/LPX_0009.HEIC"]).output, as: UTF8.self).contains("not for the web"))
        held.forEach { close($0) }
        held.removeAll()
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(try httpCode([url + "files/100LOOPX/LPX_0001.HEIC", "-H", "Range: bytes=99999999-"]), 416, "a range past the end")
        XCTAssertEqual(try httpCode([url, "-H", "X-Huge: " + String(repeating: "a", count: 100_000)]) / 100, 4, "a huge header")
        XCTAssertEqual(try httpCode([url]), 200, "the gallery answers again")
        XCTAssertEqual(try d.request(#"{"cmd":"status"}"#)["ok"] as? Bool, true, "the control socket answers")
        XCTAssertGreaterThan(attacked, quiet * 0.7, "preview frames per second: \(quiet) quiet, \(attacked) under attack")
    }

    /// Headless Chromium opens the gallery a running loopixd serves: the page shows the photos
    /// taken (their thumbnails load), a photo's page shows it; the gallery's screenshot is kept
    /// in the build directory (.build/web-gallery.png).
    func testChromiumShowsTheGalleryAndOpensAPhoto() throws {
        let chromium = "/usr/bin/chromium"
        guard FileManager.default.isExecutableFile(atPath: chromium) else {
            throw XCTSkip("chromium is not installed (scripts/setup installs it)")
        }
        let (d, url) = try startDaemon()
        defer { d.stop() }
        for _ in 0..<3 { XCTAssertEqual(try d.request(#"{"cmd":"capture"}"#)["ok"] as? Bool, true) }
        XCTAssertEqual(try d.waitForStatus { $0["saved"] as? Int == 3 }["saved"] as? Int, 3, d.log())
        let profile = d.directory + "/chromium"
        let common = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + profile,
                      "--virtual-time-budget=8000", "--window-size=1024,768"]

        let gallery = String(decoding: try XCTUnwrap(run(chromium, common + ["--dump-dom", url], timeout: 120)).output, as: UTF8.self)
        for n in 1...3 {
            XCTAssertTrue(gallery.contains("alt=\"LPX_000\(n).HEIC\""), "photo \(n) on the page:\n\(gallery)")
        }
        let loaded = gallery.components(separatedBy: "data-width=\"").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
        XCTAssertEqual(loaded.count, 3, "every thumbnail loaded in the browser:\n\(gallery)")
        XCTAssertTrue(loaded.allSatisfy { $0 > 0 }, "\(loaded)")

        let photo = String(decoding: try XCTUnwrap(run(chromium, common + ["--dump-dom", url + "photo/100LOOPX/LPX_0002.HEIC"], timeout: 120)).output,
                           as: UTF8.self)
        XCTAssertTrue(photo.contains("id=\"photo\""), photo)
        XCTAssertTrue(photo.contains("data-width=\"640\""), "the photo opened at its full width:\n\(photo)")

        let screenshot = DaemonHarness.packageRoot + "/.build/web-gallery.png"
        try? FileManager.default.removeItem(atPath: screenshot)
        _ = try run(chromium, common + ["--screenshot=" + screenshot, url], timeout: 120)
        let shot = try ImageReader.readPhoto(path: screenshot).image
        XCTAssertEqual([shot.width, shot.height], [1024, 768])
        // The page is dark; the thumbnails are photos: many distinct bright pixels.
        var bright = 0
        for i in stride(from: 0, to: shot.pixels.count, by: 3) where shot.pixels[i] > 60 || shot.pixels[i + 1] > 60 { bright += 1 }
        XCTAssertGreaterThan(bright, shot.width * shot.height / 20, "thumbnails are visible in \(screenshot)")
        print("web gallery screenshot: \(screenshot)")
    }
}
