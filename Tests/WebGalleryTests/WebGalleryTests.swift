import ControlProtocol
import FilmCore
import Foundation
import ImageFiles
import StrictJSON
import System
@testable import WebGallery
import XCTest
import Raster

/// A raw HTTP/1.1 exchange over a socket, so tests can send what a browser never would.
struct RawHTTP {
    let port: Int

    /// Connects (nil when refused), from `source` (a loopback address: 127.0.0.2 …) when given.
    func connect(from source: String? = nil) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { close(fd); return nil }
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else { close(fd); return nil }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    /// Sends `text` (from `source`, when given) and reads until the server closes (or `maxBytes`).
    func exchange(_ text: String, from source: String? = nil, maxBytes: Int = 64 << 20) -> (status: Int, headers: [String: String], body: [UInt8]) {
        guard let fd = connect(from: source) else { return (0, [:], []) }
        defer { close(fd) }
        _ = Array(text.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while data.count < maxBytes {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            data += buffer[0..<n]
        }
        return Self.parse(data)
    }

    func get(_ path: String, headers: String = "") -> (status: Int, headers: [String: String], body: [UInt8]) {
        exchange("GET \(path) HTTP/1.1\r\nHost: camera\r\nConnection: close\r\n\(headers)\r\n")
    }

    static func parse(_ data: [UInt8]) -> (status: Int, headers: [String: String], body: [UInt8]) {
        guard let end = (0..<max(0, data.count - 3)).first(where: { data[$0] == 13 && data[$0 + 1] == 10 && data[$0 + 2] == 13 && data[$0 + 3] == 10 }) else {
            return (0, [:], [])
        }
        let head = String(decoding: data[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(head[0].split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            if let colon = line.firstIndex(of: ":") {
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        var body = Array(data[(end + 4)...])
        if headers["transfer-encoding"] == "chunked" { body = dechunk(body) }
        return (status, headers, body)
    }

    static func dechunk(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], i = 0
        while i < data.count {
            guard let lineEnd = (i..<max(i, data.count - 1)).first(where: { data[$0] == 13 && data[$0 + 1] == 10 }),
                  let size = Int(String(decoding: data[i..<lineEnd], as: UTF8.self).split(separator: ";")[0], radix: 16) else { break }
            if size == 0 { break }
            let start = lineEnd + 2
            out += data[start..<min(data.count, start + size)]
            i = start + size + 2
        }
        return out
    }
}

final class FakeGateway: ControlGateway, @unchecked Sendable {
    var requests: [ControlRequest] = []
    let lock = NSLock()
    func perform(_ request: ControlRequest) -> ControlReply {
        lock.lock()
        requests.append(request)
        lock.unlock()
        return .success(["camera": .string("ok"), "saved": .int(3),
                         "lastPhoto": .string("/var/lib/loopix/photos/DCIM/100LOOPX/LPX_0003.HEIC"),
                         "clip": ["path": .string("/var/lib/loopix/photos/DCIM/100LOOPX/LPX_0004.MP4"), "seconds": .number(2)],
                         "booth": ["taken": .array([.string("/var/lib/loopix/booth/shot-1.png"), .string("/srv/x/DCIM/101LOOPX/LPX_0001.JPG")])]])
    }
}

final class WebGalleryTests: XCTestCase {
    var root = ""
    var library: MediaLibrary!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("gallery-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root + "/photos/DCIM/100LOOPX", withIntermediateDirectories: true)
        library = MediaLibrary(photosDirectory: root + "/photos")
        var image = RGBImage(width: 800, height: 600)
        for y in 0..<600 { for x in 0..<800 { image[x, y] = SIMD3(UInt8(x * 255 / 800), UInt8(y * 255 / 600), 90) } }
        try ImageWriter.write(image, to: root + "/photos/DCIM/100LOOPX/LPX_0001.HEIC", format: .heic,
                              metadata: PhotoMetadata(make: "Loopix", presetName: "Kodak Portra 400"))
        try ImageWriter.write(image, to: root + "/photos/DCIM/100LOOPX/LPX_0002.JPG", format: .jpeg, metadata: nil)
        try ImageWriter.write(image, to: root + "/photos/DCIM/100LOOPX/LPX_0002.HEIC", format: .heic, metadata: nil)
        // Not photos: a temporary file, a planted link out of DCIM, a directory with a photo's name.
        FileManager.default.createFile(atPath: root + "/photos/DCIM/100LOOPX/.LPX_0003.HEIC.x.tmp", contents: Data([1]))
        try FileManager.default.createSymbolicLink(atPath: root + "/photos/DCIM/100LOOPX/LPX_0009.HEIC", withDestinationPath: "/etc/passwd")
        try FileManager.default.createDirectory(atPath: root + "/photos/DCIM/100LOOPX/LPX_0010.JPG", withIntermediateDirectories: false)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: root)
    }

    func gallery(token: String? = nil, control: ControlGateway? = nil, live: LiveFrames? = nil) -> Gallery {
        Gallery(library: library, cache: PhotoCache(directory: root + "/cache", library: library), token: token, control: control, live: live)
    }

    func serve(_ gallery: Gallery, limits: HTTPLimits = HTTPLimits()) throws -> (HTTPServer, RawHTTP) {
        let server = try HTTPServer(address: "127.0.0.1", port: 0, limits: limits) { gallery.handle($0) }
        return (server, RawHTTP(port: server.port))
    }

    func testNamesAreStrict() {
        XCTAssertEqual(MediaLibrary.Name("100LOOPX/LPX_0001.HEIC")?.number, 1)
        XCTAssertEqual(MediaLibrary.Name("101LOOPX/LPX_0002.MP4")?.number, 10001)
        for bad in ["../100LOOPX/LPX_0001.HEIC", "100LOOPX/../LPX_0001.HEIC", "100LOOPX/LPX_0001.HEIC/", "/100LOOPX/LPX_0001.HEIC",
                    "100LOOPX/LPX_0000.HEIC", "099LOOPX/LPX_0001.HEIC", "100LOOPX/LPX_001.HEIC", "100LOOPX/LPX_0001.heic",
                    "100LOOPX/LPX_0001.HEIC ", "100LOOPX/LPX_+001.HEIC", "100LOOPX//LPX_0001.HEIC", "100LOOPX/LPX_0001.EXE",
                    "100loopx/LPX_0001.HEIC", "1e2LOOPX/LPX_0001.HEIC", "100LOOPX/LPX_0001.HEIC\0"] {
            XCTAssertNil(MediaLibrary.Name(bad), bad)
        }
        let items = library.items()
        XCTAssertEqual(items.map(\.number), [2, 1], "regular files only: not the link, not the directory")
        XCTAssertNil(library.open(MediaLibrary.Name("100LOOPX/LPX_0009.HEIC")!), "a link out of DCIM is never opened")
        XCTAssertNil(library.open(MediaLibrary.Name("100LOOPX/LPX_0010.JPG")!), "a directory is not a photo")
        XCTAssertEqual(items.first { $0.number == 2 }?.main.kind, .jpeg)
    }

    func testRanges() {
        XCTAssertTrue(Gallery.parseRange("bytes=0-99", size: 1000)! == (0, 99))
        XCTAssertTrue(Gallery.parseRange("bytes=900-", size: 1000)! == (900, 999))
        XCTAssertTrue(Gallery.parseRange("bytes=-100", size: 1000)! == (900, 999))
        XCTAssertTrue(Gallery.parseRange("bytes=-5000", size: 1000)! == (0, 999))
        XCTAssertNil(Gallery.parseRange("bytes=0-1,5-6", size: 1000), "several ranges: the whole file")
        XCTAssertNil(Gallery.parseRange("bytes=9-3", size: 1000))
        XCTAssertNil(Gallery.parseRange("items=0-3", size: 1000))
        XCTAssertTrue(Gallery.constantTimeEqual(Array("secret".utf8), Array("secret".utf8)))
        XCTAssertFalse(Gallery.constantTimeEqual(Array("secre".utf8), Array("secret".utf8)))
        XCTAssertFalse(Gallery.constantTimeEqual(Array("secretx".utf8), Array("secret".utf8)))
        XCTAssertFalse(Gallery.constantTimeEqual([], []))
    }

    /// The pages, the files with ranges, the JPEG made from a HEIC (and cached), thumbnails.
    func testPagesFilesJPEGsAndThumbnails() throws {
        let (server, http) = try serve(gallery())
        defer { server.stop() }
        let index = http.get("/")
        XCTAssertEqual(index.status, 200)
        let html = String(decoding: index.body, as: UTF8.self)
        XCTAssertTrue(html.contains("href=\"/photo/100LOOPX/LPX_0002.JPG\""), html)
        XCTAssertTrue(html.contains("href=\"/photo/100LOOPX/LPX_0001.HEIC\""), html)
        XCTAssertFalse(html.contains("LPX_0009"), "the planted link is not listed as a photo that opens")

        let whole = http.get("/files/100LOOPX/LPX_0001.HEIC")
        XCTAssertEqual(whole.status, 200)
        XCTAssertEqual(whole.headers["content-type"], "image/heic")
        XCTAssertEqual(whole.body, Array(try Data(contentsOf: URL(fileURLWithPath: root + "/photos/DCIM/100LOOPX/LPX_0001.HEIC"))))
        let part = http.get("/files/100LOOPX/LPX_0001.HEIC", headers: "Range: bytes=4-11\r\n")
        XCTAssertEqual(part.status, 206)
        XCTAssertEqual(part.body, Array(whole.body[4...11]))
        XCTAssertEqual(part.headers["content-range"], "bytes 4-11/\(whole.body.count)")
        let past = http.get("/files/100LOOPX/LPX_0001.HEIC", headers: "Range: bytes=\(whole.body.count + 10)-\r\n")
        XCTAssertEqual(past.status, 416)
        XCTAssertEqual(past.headers["content-range"], "bytes */\(whole.body.count)")

        let jpeg = http.get("/jpeg/100LOOPX/LPX_0001.HEIC")
        XCTAssertEqual(jpeg.status, 200)
        XCTAssertEqual(jpeg.headers["content-type"], "image/jpeg")
        let decoded = try ImageReader.decode(jpeg.body, path: "jpeg")
        XCTAssertEqual([decoded.image.width, decoded.image.height], [800, 600])
        XCTAssertEqual(try ExifReader.tags(decoded.exif ?? [])["Make"], "Loopix", "the photo's EXIF is carried")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root + "/cache").count, 1, "made once, cached")
        XCTAssertEqual(http.get("/jpeg/100LOOPX/LPX_0001.HEIC").body, jpeg.body)

        let thumb = http.get("/thumb/100LOOPX/LPX_0002.JPG")
        XCTAssertEqual(thumb.status, 200)
        let small = try ImageReader.decode(thumb.body, path: "thumb").image
        XCTAssertEqual([small.width, small.height], [PhotoCache.thumbnailWidth, PhotoCache.thumbnailWidth * 3 / 4])
        XCTAssertEqual(http.get("/photo/100LOOPX/LPX_0001.HEIC").status, 200)
        XCTAssertEqual(http.get("/photo/100LOOPX/LPX_0077.HEIC").status, 404)
    }

    /// What hostile clients send: paths out of the photo directory in every spelling, a link
    /// planted inside it, a request with 100 KB of headers.
    func testHostilePathsAndHeaders() throws {
        let (server, http) = try serve(gallery())
        defer { server.stop() }
        for path in ["/files/../../../../etc/passwd", "/files/100LOOPX/../../../etc/passwd", "/files/%2e%2e/%2e%2e/etc/passwd",
                     "/files/100LOOPX%2F..%2F..%2Fetc%2Fpasswd", "/files/100LOOPX/LPX_0009.HEIC", "/jpeg/100LOOPX/LPX_0009.HEIC",
                     "/thumb/..%2f..%2fetc%2fpasswd", "/files//etc/passwd", "/files/100LOOPX/LPX_0010.JPG", "/photo/100LOOPX/LPX_0009.HEIC"] {
            let r = http.get(path)
            // An encoded separator is refused before routing (400); everything else is not found.
            XCTAssertEqual(r.status, path.lowercased().contains("%2f") ? 400 : 404, path)
            XCTAssertFalse(String(decoding: r.body, as: UTF8.self).contains("root:"), path)
        }
        let huge = http.get("/", headers: "X-Junk: \(String(repeating: "a", count: 100_000))\r\n")
        XCTAssertNotEqual(huge.status, 200, "100 KB of headers are refused")
        XCTAssertEqual(http.get("/").status, 200, "and the server goes on")
    }

    /// A client that sends a request line and then nothing is cut off after the idle time; a
    /// crowd of connections beyond the limit is refused while the gallery keeps answering.
    func testSlowAndManyClients() throws {
        var limits = HTTPLimits()
        limits.idleSeconds = 2
        limits.connections = 16
        limits.connectionsPerAddress = 16
        let (server, http) = try serve(gallery(), limits: limits)
        defer { server.stop() }
        let slow = try XCTUnwrap(http.connect())
        _ = Array("GET / HTTP/1.1\r\n".utf8).withUnsafeBytes { send(slow, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let start = Date()
        var byte: UInt8 = 0
        let n = recv(slow, &byte, 1, 0)
        XCTAssertLessThanOrEqual(n, 0, "closed without an answer")
        XCTAssertLessThan(Date().timeIntervalSince(start), 6, "cut off after about the idle time")
        close(slow)

        var crowd: [Int32] = []
        for _ in 0..<200 { if let fd = http.connect() { crowd.append(fd) } }
        // Connections past the limit are accepted by the kernel and closed by the server at once.
        var open = 0
        for fd in crowd {
            var tv = timeval(tv_sec: 0, tv_usec: 200_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            if recv(fd, &byte, 1, Int32(MSG_PEEK)) < 0 && errno == EAGAIN { open += 1 }
        }
        XCTAssertLessThanOrEqual(open, limits.connections, "at most the limit stay open")
        crowd.forEach { close($0) }
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(http.get("/").status, 200, "the gallery answers again")
    }

    /// Control needs the token; without one configured the gallery is read-only.
    func testRemoteControlNeedsTheToken() throws {
        let gateway = FakeGateway()
        let (readOnly, ro) = try serve(gallery(control: gateway))
        XCTAssertEqual(ro.exchange("POST /api HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\nConnection: close\r\n\r\n{\"cmd\":\"capture\"}").status, 403)
        let status = ro.get("/api/status")
        XCTAssertEqual(status.status, 200, "status is for everyone")
        XCTAssertTrue(String(decoding: status.body, as: UTF8.self).contains("\"saved\":3"))
        readOnly.stop()

        let (server, http) = try serve(gallery(token: "s3cret-t0ken", control: gateway))
        defer { server.stop() }
        func post(_ body: String, token: String?) -> Int {
            let auth = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
            return http.exchange("POST /api HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)").status
        }
        XCTAssertEqual(post(#"{"cmd":"capture"}"#, token: nil), 401)
        XCTAssertEqual(post(#"{"cmd":"capture"}"#, token: "s3cret-t0keN"), 401)
        XCTAssertEqual(post(#"{"cmd":"capture"}"#, token: "s3cret-t0ken"), 200)
        XCTAssertEqual(post(#"{"cmd":"ev","value":1}"#, token: "s3cret-t0ken"), 200)
        XCTAssertEqual(post(#"{"cmd":"snapshot","path":"/tmp/x.png"}"#, token: "s3cret-t0ken"), 403)
        XCTAssertEqual(post(#"{"cmd":"wait-saved","count":1}"#, token: "s3cret-t0ken"), 403, "long waits stay on the socket")
        XCTAssertEqual(post(#"{"cmd":"nonsense"}"#, token: "s3cret-t0ken"), 400)
        XCTAssertEqual(post(String(repeating: "x", count: 70_000), token: "s3cret-t0ken"), 413)
        XCTAssertEqual(gateway.requests.count, 3, "status, capture, ev: \(gateway.requests)")
    }

    /// The live preview: JPEG parts as frames are offered; a viewer past the limit is turned away.
    func testLivePreviewStreamsAndIsBounded() throws {
        let live = LiveFrames(maxViewers: 1, framesPerSecond: 20)
        let (server, http) = try serve(gallery(live: live))
        defer {
            live.close()
            server.stop()
        }
        let feeding = Locked(true)
        let feeder = Thread {
            var frame = RGBImage(width: 64, height: 48)
            var n: UInt8 = 0
            while feeding.withLock({ $0 }) {
                if live.wanted {
                    n &+= 7
                    for i in 0..<frame.pixels.count { frame.pixels[i] = n }
                    live.offer(frame)
                }
                usleep(5000)
            }
        }
        feeder.start()
        defer { feeding.withLock { $0 = false } }
        let fd = try XCTUnwrap(http.connect())
        defer { close(fd) }
        _ = Array("GET /live.mjpg HTTP/1.1\r\nHost: x\r\n\r\n".utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, String(decoding: data, as: UTF8.self).components(separatedBy: "--loopixframe").count < 4 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            data += buffer[0..<n]
        }
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertTrue(text.contains("multipart/x-mixed-replace; boundary=loopixframe"), text.prefix(300).description)
        XCTAssertGreaterThanOrEqual(text.components(separatedBy: "Content-Type: image/jpeg").count - 1, 2, "two frames or more")
        XCTAssertTrue(data.indices.dropLast(2).contains { data[$0] == 0xFF && data[$0 + 1] == 0xD8 && data[$0 + 2] == 0xFF }, "JPEG data")
        XCTAssertEqual(live.viewerCount, 1)
        XCTAssertEqual(http.get("/live.mjpg").status, 503, "one viewer at a time here")
    }

    /// Slow headers from several addresses, each under the per-address cap, cannot hold every
    /// slot: a request must bring its headers within `headerSeconds` however steadily it
    /// trickles, and while the slots are full the slowest sender makes room for a new visitor.
    func testSlowHeadersFromManyAddressesDoNotTakeTheGalleryDown() throws {
        var limits = HTTPLimits()
        limits.connections = 8
        limits.connectionsPerAddress = 2
        limits.headerSeconds = 2
        let (server, http) = try serve(gallery(), limits: limits)
        defer { server.stop() }
        // Four addresses, two connections each: every slot, each sending a header line every 0.3 s.
        var opened: [Int32] = []
        for a in 2...5 { for _ in 0..<2 { opened.append(try XCTUnwrap(http.connect(from: "127.0.0.\(a)"))) } }
        let slow = opened
        let send: @Sendable (Int32, String) -> Void = { fd, text in
            _ = Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        for fd in slow { send(fd, "GET / HTTP/1.1\r\nHost: camera\r\n") }
        let stop = Locked(false)
        let trickle = Thread {
            var n = 0
            while !stop.withLock({ $0 }) {
                for fd in slow { send(fd, "X-Slow-\(n): x\r\n") }
                n += 1
                Thread.sleep(forTimeInterval: 0.3)
            }
        }
        trickle.start()
        defer { stop.withLock { $0 = true } }
        Thread.sleep(forTimeInterval: 0.5)
        // A new visitor is served at once, from another address and from one of theirs.
        let started = Date()
        let visitor = RawHTTP(port: server.port)
        for source in ["127.0.0.9", "127.0.0.2"] {
            let r = visitor.exchange("GET / HTTP/1.1\r\nHost: camera\r\nConnection: close\r\n\r\n", from: source)
            XCTAssertEqual(r.status, 200, "a visitor from \(source) during the flood")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        // Every slow sender is cut off, though it never stopped sending: within the header time.
        var cut = 0
        for fd in slow {
            var tv = timeval(tv_sec: 4, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            var byte: UInt8 = 0
            if recv(fd, &byte, 1, 0) <= 0 && errno != EAGAIN { cut += 1 }
        }
        XCTAssertEqual(cut, slow.count, "every slow sender is cut off")
        XCTAssertLessThan(Date().timeIntervalSince(started), 6)
        stop.withLock { $0 = true }
        slow.forEach { close($0) }
        XCTAssertEqual(http.get("/").status, 200)
    }

    /// Percent-encoded separators and NULs are refused before any route sees the path, though
    /// once decoded they would name a real photo.
    func testEncodedSeparatorsAreRefused() throws {
        let (server, http) = try serve(gallery())
        defer { server.stop() }
        XCTAssertEqual(http.get("/files/100LOOPX/LPX_0001.HEIC").status, 200)
        for path in ["/files/100LOOPX%2fLPX_0001.HEIC", "/files/100LOOPX%2FLPX_0001.HEIC", "/files/100LOOPX/LPX_0001.HEIC%00.jpg",
                     "/files/100LOOPX%5cLPX_0001.HEIC", "/jpeg/100LOOPX%2fLPX_0001.HEIC"] {
            let r = http.get(path)
            XCTAssertEqual(r.status, 400, path)
            XCTAssertEqual(String(decoding: r.body, as: UTF8.self), "encoded separators are refused in paths\n", path)
        }
        XCTAssertEqual(http.get("/?page=%2f").status, 200, "the query is not the path")
    }

    /// Wrong tokens from one address are slowed down (429 with Retry-After, the token not even
    /// checked meanwhile); other addresses are not; a right token after the wait clears it.
    func testGuessingTheTokenIsSlowedDownPerAddress() throws {
        let gateway = FakeGateway()
        let (server, _) = try serve(gallery(token: "s3cret-t0ken-0123", control: gateway))
        defer { server.stop() }
        func post(token: String, from source: String) -> (status: Int, headers: [String: String]) {
            let body = #"{"cmd":"status"}"#
            let r = RawHTTP(port: server.port).exchange("POST /api HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)", from: source)
            return (r.status, r.headers)
        }
        for i in 0..<5 { XCTAssertEqual(post(token: "guess-number-\(i)-xx", from: "127.0.0.7").status, 401) }
        let refused = post(token: "s3cret-t0ken-0123", from: "127.0.0.7")
        XCTAssertEqual(refused.status, 429, "the right token in the wait is not checked")
        XCTAssertEqual(refused.headers["retry-after"], "1")
        XCTAssertEqual(post(token: "s3cret-t0ken-0123", from: "127.0.0.8").status, 200, "another address is not slowed")
        Thread.sleep(forTimeInterval: 1.1)
        XCTAssertEqual(post(token: "s3cret-t0ken-0123", from: "127.0.0.7").status, 200)
        XCTAssertEqual(post(token: "guess-again-xxxxxx", from: "127.0.0.7").status, 401, "the right token cleared the count")
    }

    /// The waits grow 1, 2, 4 … s up to the cap; the table forgets the oldest address when full;
    /// an IPv6 client counts by its /64.
    func testTokenGuardWaits() {
        let clock = Locked<UInt64>(1_000_000_000_000)
        let guardian = TokenGuard(freeTries: 2, maxDelay: 5, maxAddresses: 3, clock: { clock.withLock { $0 } })
        func advance(_ seconds: Double) { clock.withLock { $0 += UInt64(seconds * 1e9) } }
        guardian.failed("10.0.0.1")
        XCTAssertEqual(guardian.wait(for: "10.0.0.1"), 0)
        guardian.failed("10.0.0.1")
        XCTAssertEqual(guardian.wait(for: "10.0.0.1"), 1)
        advance(1)
        guardian.failed("10.0.0.1")
        XCTAssertEqual(guardian.wait(for: "10.0.0.1"), 2)
        for _ in 0..<10 { guardian.failed("10.0.0.1") }
        XCTAssertEqual(guardian.wait(for: "10.0.0.1"), 5, "capped")
        guardian.succeeded("10.0.0.1")
        XCTAssertEqual(guardian.wait(for: "10.0.0.1"), 0)
        // IPv6 by /64: the same household's other address shares the count.
        guardian.failed("2001:db8:1:2::10")
        guardian.failed("2001:db8:1:2::99")
        XCTAssertEqual(guardian.wait(for: "2001:db8:1:2:ffff::1"), 1)
        XCTAssertEqual(guardian.wait(for: "2001:db8:1:3::10"), 0)
        XCTAssertEqual(TokenGuard.key("::ffff:10.0.0.1"), TokenGuard.key("10.0.0.1"))
        // Full: the address whose last failure is oldest is forgotten.
        advance(0.1)
        guardian.failed("10.0.0.2"); guardian.failed("10.0.0.2")
        advance(0.1)
        guardian.failed("10.0.0.3"); guardian.failed("10.0.0.3")
        XCTAssertGreaterThan(guardian.wait(for: "2001:db8:1:2::10"), 0, "three remembered")
        guardian.failed("10.0.0.4"); guardian.failed("10.0.0.4")
        XCTAssertEqual(guardian.wait(for: "2001:db8:1:2::10"), 0, "the oldest forgotten for the fourth")
        XCTAssertGreaterThan(guardian.wait(for: "10.0.0.4"), 0)
        XCTAssertGreaterThan(guardian.wait(for: "10.0.0.2"), 0)
        XCTAssertGreaterThan(guardian.wait(for: "10.0.0.3"), 0)
    }

    /// Status without the token names photos by their gallery names and nothing else on the
    /// camera's disk; with the token it is whole.
    func testStatusShowsNoPathsWithoutTheToken() throws {
        let gateway = FakeGateway()
        let (server, http) = try serve(gallery(token: "s3cret-t0ken-0123", control: gateway))
        defer { server.stop() }
        let open = String(decoding: http.get("/api/status").body, as: UTF8.self)
        XCTAssertFalse(open.contains("/var/lib") || open.contains("/srv"), open)
        let fields = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(open.utf8)) as? [String: Any])
        XCTAssertEqual(fields["lastPhoto"] as? String, "100LOOPX/LPX_0003.HEIC")
        XCTAssertEqual((fields["clip"] as? [String: Any])?["path"] as? String, "100LOOPX/LPX_0004.MP4")
        XCTAssertEqual((fields["booth"] as? [String: Any])?["taken"] as? [String], ["101LOOPX/LPX_0001.JPG"])
        XCTAssertEqual(fields["saved"] as? Int, 3)
        let whole = String(decoding: http.get("/api/status", headers: "Authorization: Bearer s3cret-t0ken-0123\r\n").body, as: UTF8.self)
        XCTAssertTrue(whole.contains("/var/lib/loopix/photos/DCIM/100LOOPX/LPX_0003.HEIC"), whole)
    }
}
