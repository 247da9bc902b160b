import CLoopixHTTP
import Foundation
import System

/// One request as the handler sees it.
public struct HTTPRequest: Sendable {
    public var method: String
    /// Percent-decoded path, without the query.
    public var path: String
    public var headers: [String: String]
    public var query: [String: String]
    public var body: [UInt8]
    public var client: String

    public init(method: String, path: String, headers: [String: String] = [:], query: [String: String] = [:],
                body: [UInt8] = [], client: String = "127.0.0.1") {
        self.method = method
        self.path = path
        self.headers = headers
        self.query = query
        self.body = body
        self.client = client
    }
}

/// A stream's source: `read` blocks until it has bytes and returns how many it wrote, or nil
/// at the end. Called on the connection's thread only.
public protocol HTTPStream: AnyObject {
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int?
    /// The connection is gone (called once, last).
    func close()
}

public struct HTTPResponse {
    public enum Body {
        case bytes([UInt8])
        /// `length` bytes of the open file from `offset` (sent by the kernel, then closed).
        case file(OpenFile, offset: UInt64, length: UInt64)
        case stream(HTTPStream)
    }
    public var status: Int
    public var contentType: String
    public var headers: [(String, String)]
    public var body: Body

    public init(status: Int, contentType: String, headers: [(String, String)] = [], body: Body) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    public static func text(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", body: .bytes(Array((text + "\n").utf8)))
    }

    /// The bytes, when the body is bytes (tests).
    public var bytes: [UInt8]? {
        if case .bytes(let b) = body { return b }
        return nil
    }
}

/// The limits that keep a hostile or careless client from costing the camera anything.
public struct HTTPLimits: Sendable, Equatable {
    public var connections = 32
    public var connectionsPerAddress = 8
    /// Idle seconds before a connection is cut (a slowloris client sends a byte now and then:
    /// the whole request must still arrive within this of the last byte; see README).
    public var idleSeconds = 15
    /// Seconds a request may take to send its request line and headers, however steadily it
    /// sends; when every connection is taken, the one slowest to send makes room for a new one.
    public var headerSeconds = 10
    /// Request line and headers, bytes.
    public var headerBytes = 16 * 1024
    /// Largest request body (control requests are small).
    public var bodyBytes = 64 * 1024
    public init() {}
}

/// Why the server could not start.
public struct HTTPError: Error, Equatable, CustomStringConvertible {
    public var address: String
    public var port: Int
    public var errno: Errno
    public var description: String {
        errno == Errno(EINVAL) ? "web: \"\(address)\" is not an IPv4 or IPv6 address"
            : "web: cannot listen on \(address):\(port): \(errno)"
    }
}

/// libmicrohttpd through CLoopixHTTP: one thread per connection (so a handler may block), the
/// limits above. The handler runs on the connection's thread, lowered to nice +10 so that
/// serving never takes the CPU from the preview. Owns the C server; `stop()` (or deinit) ends it.
///
/// The one exception to DESIGN's rule that no Swift closure runs on a C library's thread: in
/// libmicrohttpd's thread-per-connection mode each connection's thread serves that connection
/// only and is the library's for nothing else, so the handler may block there (a stream waiting
/// for its next frame) without holding up anyone; handing each request to a thread of ours and
/// waiting for it would add a hop and a queue and gain nothing. Handlers reach the camera only
/// through `PendingRequest`, as the socket does.
public final class HTTPServer: @unchecked Sendable {
    // @unchecked: `server` is set once in init and cleared once in stop, under `lock`.
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    /// The handler, carried through C as the server's context.
    private final class Box: Sendable {
        let handler: Handler
        init(_ handler: @escaping Handler) { self.handler = handler }
    }

    private var server: OpaquePointer?
    private let box: Unmanaged<Box>
    private let lock = Lock()
    public let port: Int

    public init(address: String, port: Int, limits: HTTPLimits = HTTPLimits(), handler: @escaping Handler) throws(HTTPError) {
        let box = Unmanaged.passRetained(Box(handler))
        var options = CLoopixHTTP_Options()
        var out: OpaquePointer?
        let rc = address.withCString { a -> Int32 in
            options.address = a
            options.port = UInt16(clamping: port)
            options.connection_limit = UInt32(limits.connections)
            options.per_address_limit = UInt32(limits.connectionsPerAddress)
            options.idle_timeout = UInt32(limits.idleSeconds)
            options.header_timeout = UInt32(limits.headerSeconds)
            options.memory_limit = limits.headerBytes
            options.max_body = limits.bodyBytes
            return CLoopixHTTP_start(&options, { context, request, reply in
                let box = Unmanaged<Box>.fromOpaque(context!).takeUnretainedValue()
                HTTPServer.serve(box.handler, request!, reply!)
            }, box.toOpaque(), &out)
        }
        guard rc == 0, let out else {
            box.release()
            throw HTTPError(address: address, port: port, errno: Errno(-rc))
        }
        self.server = out
        self.box = box
        self.port = Int(CLoopixHTTP_port(out))
    }

    deinit { stop() }

    /// Stops listening, ends every connection and waits for their threads.
    public func stop() {
        let s: OpaquePointer? = lock.withLock {
            defer { server = nil }
            return server
        }
        guard let s else { return }
        CLoopixHTTP_stop(s)
        box.release()
    }

    /// The C handler's body: builds the request, runs the handler, fills the reply.
    private static func serve(_ handler: Handler, _ raw: UnsafePointer<CLoopixHTTP_Request>, _ reply: OpaquePointer) {
        // Web work waits behind the preview (this thread is the connection's own).
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        var request = HTTPRequest(method: String(cString: raw.pointee.method), path: String(cString: raw.pointee.url))
        request.client = withUnsafeBytes(of: raw.pointee.client) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if let body = raw.pointee.body, raw.pointee.body_length > 0 {
            request.body = Array(UnsafeBufferPointer(start: body, count: raw.pointee.body_length))
        }
        for name in ["Range", "Authorization", "Host", "If-None-Match", "Content-Type"] {
            if let v = CLoopixHTTP_header(raw, name) { request.headers[name] = String(cString: v) }
        }
        for name in ["page", "size"] {
            if let v = CLoopixHTTP_query(raw, name) { request.query[name] = String(cString: v) }
        }
        let response = handler(request)
        switch response.body {
        case .bytes(let bytes):
            bytes.withUnsafeBytes { CLoopixHTTP_replyBytes(reply, UInt32(response.status), response.contentType, $0.baseAddress, $0.count) }
        case .file(let file, let offset, let length):
            // libmicrohttpd owns the descriptor from here (it closes it once sent).
            CLoopixHTTP_replyFile(reply, UInt32(response.status), response.contentType, file.release(), offset, length)
        case .stream(let stream):
            let context = Unmanaged.passRetained(StreamBox(stream)).toOpaque()
            CLoopixHTTP_replyStream(reply, UInt32(response.status), response.contentType, context, { context, buffer, max in
                let box = Unmanaged<StreamBox>.fromOpaque(context!).takeUnretainedValue()
                guard let n = box.stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: max)) else { return -1 }
                return n
            }, { context in
                let box = Unmanaged<StreamBox>.fromOpaque(context!).takeRetainedValue()
                box.stream.close()
            })
        }
        for (name, value) in response.headers { CLoopixHTTP_replyHeader(reply, name, value) }
    }

    private final class StreamBox {
        let stream: HTTPStream
        init(_ stream: HTTPStream) { self.stream = stream }
    }
}
