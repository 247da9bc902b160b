import ControlProtocol
import Foundation
import StrictJSON
import System

/// Carries a control request to the camera and brings its reply back (the daemon's controller,
/// through the same path as the control socket), or says it was busy.
public protocol ControlGateway: Sendable {
    func perform(_ request: ControlRequest) -> ControlReply
}

/// What the web server serves: the gallery pages, the files, JPEGs and thumbnails made on
/// demand, the live preview, status and the remote control. Every route is here; nothing else
/// is reachable.
///
/// | path | what |
/// |---|---|
/// | `/`, `/?page=N` | the gallery: thumbnails, newest first, 24 a page |
/// | `/photo/100LOOPX/LPX_0001.HEIC` | one photo (or clip) with its downloads |
/// | `/files/100LOOPX/LPX_0001.HEIC` | the original file (ranges supported) |
/// | `/jpeg/100LOOPX/LPX_0001.HEIC` | the photo as a JPEG, made once and cached |
/// | `/thumb/100LOOPX/LPX_0001.HEIC` | a thumbnail (photos and clips) |
/// | `/live.mjpg` | the graded preview as MJPEG |
/// | `GET /api/status` | the camera's status (JSON); without the token, files by their gallery names only |
/// | `POST /api` | a control request, as on the socket; needs `Authorization: Bearer <token>` |
///
/// Wrong tokens are slowed down per address (`TokenGuard`).
public final class Gallery: Sendable {
    public static let pageSize = 24
    public let library: MediaLibrary
    public let cache: PhotoCache
    /// The token that allows control; nil: the gallery is read-only.
    private let token: [UInt8]?
    private let control: ControlGateway?
    private let live: LiveFrames?
    private let title: String
    public let tokenGuard: TokenGuard

    public init(library: MediaLibrary, cache: PhotoCache, token: String?, control: ControlGateway?, live: LiveFrames?,
                title: String = "Loopix", tokenGuard: TokenGuard = TokenGuard()) {
        self.tokenGuard = tokenGuard
        self.library = library
        self.cache = cache
        self.token = token.map { Array($0.utf8) }
        self.control = control
        self.live = live
        self.title = title
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let path = request.path
        switch (request.method, path) {
        case ("GET", "/"), ("HEAD", "/"):
            return html(page(request.query["page"].flatMap(Int.init) ?? 1))
        case ("GET", "/live.mjpg"):
            return liveStream()
        case ("GET", "/api/status"):
            // Where files live on the camera is for whoever holds the token.
            return api(.status, redact: authorized(request) != .yes)
        case ("POST", "/api"):
            return remote(request)
        case ("GET", _), ("HEAD", _):
            for (prefix, route) in [("/photo/", Route.page), ("/files/", .file), ("/jpeg/", .jpeg), ("/thumb/", .thumbnail)]
            where path.hasPrefix(prefix) {
                guard let name = MediaLibrary.Name(String(path.dropFirst(prefix.count))) else { return .text(404, "not found") }
                return serve(name, route, request)
            }
            return .text(404, "not found")
        default:
            return .text(405, "method not allowed")
        }
    }

    private enum Route { case page, file, jpeg, thumbnail }

    private func serve(_ name: MediaLibrary.Name, _ route: Route, _ request: HTTPRequest) -> HTTPResponse {
        switch route {
        case .page:
            guard library.open(name) != nil else { return .text(404, "not found") }
            return html(photoPage(name))
        case .file:
            guard let file = library.open(name) else { return .text(404, "not found") }
            return ranged(file, contentType: name.kind.contentType, range: request.headers["Range"],
                          filename: name.fileName)
        case .jpeg, .thumbnail:
            guard name.kind != .clip || route == .thumbnail else { return .text(404, "not found") }
            switch cache.jpeg(of: name, route == .jpeg ? .jpeg : .thumbnail) {
            case .success(let file):
                return ranged(file, contentType: "image/jpeg", range: request.headers["Range"], filename: nil)
            case .failure(.missing):
                return .text(404, "not found")
            case .failure(let error):
                Log.warning("web: \(error)")
                return .text(500, "cannot convert \(name)")
            }
        }
    }

    /// A file, whole or one byte range of it (RFC 9110 §14): `bytes=a-b`, `bytes=a-`,
    /// `bytes=-n`; a range that starts past the end is 416, a malformed or multiple one is
    /// ignored (the whole file, as the RFC allows).
    func ranged(_ file: OpenFile, contentType: String, range: String?, filename: String?) -> HTTPResponse {
        let size = file.size
        var headers: [(String, String)] = [("Accept-Ranges", "bytes"), ("Cache-Control", "max-age=3600")]
        if let filename { headers.append(("Content-Disposition", "inline; filename=\"\(filename)\"")) }
        guard let range, let (start, end) = Self.parseRange(range, size: size) else {
            return HTTPResponse(status: 200, contentType: contentType, headers: headers, body: .file(file, offset: 0, length: size))
        }
        guard start < size, start <= end else {
            return HTTPResponse(status: 416, contentType: "text/plain; charset=utf-8",
                                headers: [("Content-Range", "bytes */\(size)")], body: .bytes(Array("range not satisfiable\n".utf8)))
        }
        let last = min(end, size - 1)
        headers.append(("Content-Range", "bytes \(start)-\(last)/\(size)"))
        return HTTPResponse(status: 206, contentType: contentType, headers: headers, body: .file(file, offset: start, length: last - start + 1))
    }

    /// (first, last) byte of a single range; nil when there is none to honour.
    static func parseRange(_ header: String, size: UInt64) -> (UInt64, UInt64)? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let a = parts[0].trimmingCharacters(in: .whitespaces), b = parts[1].trimmingCharacters(in: .whitespaces)
        if a.isEmpty {   // the last n bytes
            guard let n = UInt64(b), n > 0 else { return nil }
            return (size > n ? size - n : 0, size == 0 ? 0 : size - 1)
        }
        guard let start = UInt64(a) else { return nil }
        if b.isEmpty { return (start, size == 0 ? 0 : max(start, size - 1)) }
        guard let end = UInt64(b), end >= start else { return nil }
        return (start, end)
    }

    // MARK: Live preview

    private func liveStream() -> HTTPResponse {
        guard let live else { return .text(404, "no live preview") }
        guard live.join() else { return .text(503, "the live preview has \(live.maxViewers) viewers already") }
        return HTTPResponse(status: 200, contentType: "multipart/x-mixed-replace; boundary=\(MJPEGStream.boundary)",
                            headers: [("Cache-Control", "no-store")], body: .stream(MJPEGStream(live)))
    }

    // MARK: API

    private func api(_ request: ControlRequest, redact: Bool = false) -> HTTPResponse {
        guard let control else { return .text(404, "no camera to control") }
        var reply = control.perform(request)
        if redact { reply.fields = reply.fields.compactMapValues(Self.withoutPaths) }
        let status = reply.ok ? 200 : (reply.error?.lowercased().hasPrefix("busy") == true ? 503 : 400)
        return HTTPResponse(status: status, contentType: "application/json", headers: [("Cache-Control", "no-store")],
                            body: .bytes(Array(reply.jsonLine.utf8)))
    }

    /// A value with every absolute path in it made a gallery name ("100LOOPX/LPX_0001.HEIC")
    /// where it names a photo or clip, and left out where it does not.
    static func withoutPaths(_ value: JSONValue) -> JSONValue? {
        switch value {
        case .string(let s) where s.hasPrefix("/"):
            let tail = s.split(separator: "/").suffix(2).joined(separator: "/")
            return MediaLibrary.Name(tail).map { .string($0.description) }
        case .array(let items):
            return .array(items.compactMap(withoutPaths))
        case .object(let object):
            var kept = JSONObject([])
            for (key, v) in object.members { if let v = withoutPaths(v) { kept[key] = v } }
            return .object(kept)
        default:
            return value
        }
    }

    private enum Authorization: Equatable {
        case yes, no
        /// Too many wrong tokens from this address: wait this many seconds.
        case wait(Double)
    }

    /// Whether the request carries the token. A request without an Authorization header is
    /// simply not authorized; a wrong token counts against its address.
    private func authorized(_ request: HTTPRequest) -> Authorization {
        guard let token, let header = request.headers["Authorization"] else { return .no }
        let wait = tokenGuard.wait(for: request.client)
        if wait > 0 { return .wait(wait) }
        let given = header.hasPrefix("Bearer ") ? Array(header.dropFirst(7).utf8) : []
        guard Self.constantTimeEqual(given, token) else {
            tokenGuard.failed(request.client)
            return .no
        }
        tokenGuard.succeeded(request.client)
        return .yes
    }

    private func remote(_ request: HTTPRequest) -> HTTPResponse {
        guard token != nil else { return .text(403, "read-only: no web.token is configured") }
        switch authorized(request) {
        case .yes:
            break
        case .wait(let seconds):
            let retry = Int(seconds.rounded(.up))
            return HTTPResponse(status: 429, contentType: "text/plain; charset=utf-8", headers: [("Retry-After", "\(retry)")],
                                body: .bytes(Array("too many wrong tokens from this address; try again in \(retry) s\n".utf8)))
        case .no:
            return HTTPResponse(status: 401, contentType: "text/plain; charset=utf-8", headers: [("WWW-Authenticate", "Bearer")],
                                body: .bytes(Array("a valid token is needed (Authorization: Bearer …)\n".utf8)))
        }
        switch ControlRequest.parse(line: request.body) {
        case .failure(let error):
            return HTTPResponse(status: 400, contentType: "application/json", body: .bytes(Array(ControlReply.failure(error).jsonLine.utf8)))
        case .success(let parsed):
            if case .snapshot = parsed { return .text(403, "snapshot writes files on the camera: the control socket only") }
            // A long wait would hold one of the server's few threads: scripts use the socket.
            if case .waitSaved = parsed { return .text(403, "wait-saved can wait without end: the control socket only") }
            return api(parsed)
        }
    }

    /// Compares without stopping at the first difference (a client cannot time its way to the
    /// token); lengths are compared last, over the expected length.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard !b.isEmpty else { return false }
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<b.count { difference |= (i < a.count ? a[i] : 0) ^ b[i] }
        return difference == 0
    }

    // MARK: Pages

    private func html(_ body: String) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", headers: [("Cache-Control", "no-store")],
                     body: .bytes(Array(body.utf8)))
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    private func document(_ heading: String, _ content: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(Self.escape(heading))</title>
        <style>
        body{margin:0;background:#111;color:#eee;font:16px system-ui,sans-serif}
        header{padding:12px 16px;display:flex;gap:16px;align-items:baseline;flex-wrap:wrap}
        h1{font-size:20px;margin:0} a{color:#f4b860}
        main{display:grid;grid-template-columns:repeat(auto-fill,minmax(160px,1fr));gap:6px;padding:6px}
        main a{display:block;position:relative} main img{width:100%;aspect-ratio:4/3;object-fit:cover;display:block;background:#222}
        .clip::after{content:"▶";position:absolute;right:8px;bottom:6px;font-size:22px;color:#fff;text-shadow:0 0 4px #000}
        nav{padding:12px 16px;display:flex;gap:16px} figure{margin:0;padding:8px} figure img,figure video{max-width:100%;max-height:80vh;display:block;margin:auto}
        </style></head><body>
        \(content)
        </body></html>
        """
    }

    func page(_ number: Int) -> String {
        let items = library.items()
        let pages = max(1, (items.count + Self.pageSize - 1) / Self.pageSize)
        let page = min(max(1, number), pages)
        let shown = items.dropFirst((page - 1) * Self.pageSize).prefix(Self.pageSize)
        var tiles = ""
        for item in shown {
            let main = item.main
            tiles += "<a id=\"n\(item.number)\" href=\"/photo/\(main)\"\(item.isClip ? " class=\"clip\"" : "")><img src=\"/thumb/\(main)\" "
                + "alt=\"\(main.fileName)\" loading=\"lazy\" onload=\"this.dataset.width=this.naturalWidth\"></a>\n"
        }
        var nav = ""
        if page > 1 { nav += "<a href=\"/?page=\(page - 1)\">← newer</a>" }
        if page < pages { nav += "<a href=\"/?page=\(page + 1)\">older →</a>" }
        let live = self.live == nil ? "" : " <a href=\"/live.mjpg\">live preview</a>"
        let clips = items.filter(\.isClip).count, photos = items.count - clips
        func counted(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
        let count = [photos > 0 ? counted(photos, "photo") : nil, clips > 0 ? counted(clips, "clip") : nil].compactMap { $0 }.joined(separator: ", ")
        return document(title, """
            <header><h1>\(Self.escape(title))</h1><span>\(items.isEmpty ? "no photos yet" : count)</span>\(live)</header>
            <main>
            \(tiles)</main>
            <nav>\(nav)</nav>
            """)
    }

    func photoPage(_ name: MediaLibrary.Name) -> String {
        let siblings = library.items().first { $0.number == name.number }?.files ?? [name]
        let picture = name.kind == .clip
            ? "<video src=\"/files/\(name)\" poster=\"/thumb/\(name)\" controls playsinline></video>"
            : "<img id=\"photo\" src=\"/jpeg/\(name)\" alt=\"\(name.fileName)\" onload=\"this.dataset.width=this.naturalWidth\">"
        var downloads = siblings.map { "<a href=\"/files/\($0)\" download>\($0.fileName)</a>" }
        if name.kind == .heic { downloads.append("<a href=\"/jpeg/\(name)\" download=\"\(name.with(.jpeg).fileName)\">as JPEG</a>") }
        return document("\(title): \(name.fileName)", """
            <header><h1><a href="/">\(Self.escape(title))</a> · \(name.fileName)</h1>\(downloads.joined(separator: " "))</header>
            <figure>\(picture)</figure>
            """)
    }
}
