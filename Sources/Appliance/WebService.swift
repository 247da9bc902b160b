import ControlProtocol
import Foundation
import StrictJSON
import System
import WebGallery

/// The web gallery as the daemon runs it: the HTTP server, the gallery over the photo
/// directory, the live preview fed by the controller, control requests taken by the
/// controller through its handle exactly as the socket's are.
final class WebService {
    let server: HTTPServer
    let live: LiveFrames
    /// The gallery's address for people (QR codes, the log, status).
    let url: String

    init(config: Config, handle: ControllerHandle) throws(HTTPError) {
        let w = config.web
        let library = MediaLibrary(photosDirectory: config.storage.directory)
        let cache = PhotoCache(directory: config.state.directory + "/web-cache", library: library)
        live = LiveFrames(maxViewers: w.previewViewers)
        let gallery = Gallery(library: library, cache: cache, token: w.token, control: HandleGateway(handle: handle), live: live)
        var limits = HTTPLimits()
        limits.connections = w.connections
        limits.connectionsPerAddress = max(2, w.connections / 4)
        limits.idleSeconds = w.idleSeconds
        server = try HTTPServer(address: w.address, port: w.port, limits: limits) { gallery.handle($0) }
        url = w.url ?? "http://\(Self.lanAddress(listening: w.address)):\(server.port)/"
    }

    func stop() {
        live.close()
        server.stop()
    }

    /// The address phones on the same network reach: the one listened on, or (listening on
    /// every interface) the first non-loopback IPv4 address of this machine.
    static func lanAddress(listening: String) -> String {
        guard listening == "0.0.0.0" || listening == "::" else { return listening.contains(":") ? "[\(listening)]" : listening }
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return "127.0.0.1" }
        defer { freeifaddrs(list) }
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let sa = entry.pointee.ifa_addr, sa.pointee.sa_family == sa_family_t(AF_INET),
                  entry.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0, entry.pointee.ifa_flags & UInt32(IFF_UP) != 0 else { continue }
            var host = [CChar](repeating: 0, count: 64)
            let v4 = UnsafeRawPointer(sa).assumingMemoryBound(to: sockaddr_in.self)
            var addr = v4.pointee.sin_addr
            inet_ntop(AF_INET, &addr, &host, socklen_t(host.count))
            return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return "127.0.0.1"
    }
}

/// Control requests from the web, queued for the controller like the socket's and waited for
/// (on the web connection's own thread) until answered or their time is up.
struct HandleGateway: ControlGateway {
    let handle: ControllerHandle

    func perform(_ request: ControlRequest) -> ControlReply {
        let answered = DispatchSemaphore(value: 0)
        let pending = PendingRequest(request, deadline: .after(seconds: request.answerTimeout)) { answered.signal() }
        handle.submit(pending)
        while pending.reply == nil {
            if answered.wait(timeout: .now() + 0.05) == .success { continue }
            if pending.deadline.hasPassed, pending.expire() {
                return .failure("busy: the camera did not answer in \(JSONValue.format(request.answerTimeout)) s")
            }
        }
        return pending.reply!
    }
}
