import CDRM
import CLoopixDRM
import Controls
import Raster
import Glibc
import System
import PixelFormats

/// What a `KMSDisplay` should drive.
public struct KMSConfiguration: Sendable, Equatable {
    /// Connector name ("HDMI-A-1", "DSI-1", "Virtual-1"); nil: the first connected one.
    public var connector: String?
    /// Mode ("1920x1080@60"); nil: the connector's preferred mode.
    public var mode: ModeSpec?
    public var rotation: ScreenRotation
    public var format: ScanoutFormat
    /// Scan-out buffers, 2 or 3 (3: the next frame is drawn while a flip is pending).
    public var buffers: Int
    /// Cards to look at; nil: every /dev/dri/card*, in number order.
    public var cards: [String]?
    /// Atomic commits or legacy page flips.
    public var flip: FlipAPI

    public init(connector: String? = nil, mode: ModeSpec? = nil, rotation: ScreenRotation = .none,
                format: ScanoutFormat = .xrgb8888, buffers: Int = 3, cards: [String]? = nil, flip: FlipAPI = .auto) {
        self.connector = connector
        self.mode = mode
        self.rotation = rotation
        self.format = format
        self.buffers = buffers
        self.cards = cards
        self.flip = flip
    }
}

/// An open DRM card: owns the file descriptor (closed when the card goes).
final class DRMCard {
    let path: String
    private let file: FileDescriptor
    var fd: Int32 { file.rawValue }

    init(path: String) throws(DisplayError) {
        do { file = try FileDescriptor.open(path, O_RDWR) } catch { throw .drm(device: path, action: "open", errno: error) }
        self.path = path
    }

    /// The error of a libdrm call that returned `result` (−1 with errno, or a negative errno).
    func failure(_ action: String, _ result: Int32) -> DisplayError {
        .drm(device: path, action: action, errno: Errno(result < -1 ? -result : errno))
    }
}

/// What a connector looked like when probed (copied out of libdrm's structures).
struct ConnectorSnapshot {
    var id: UInt32
    var name: String
    var connected: Bool
    var isWriteback: Bool
    var modes: [drmModeModeInfo]
    var encoderID: UInt32
    var encoders: [UInt32]

    /// drmModeGetConnector (probes the connector: may read EDID). nil when the connector is gone.
    /// (While connected, `CLoopixDRM_connector_status` reads the status without probing.)
    static func read(fd: Int32, id: UInt32) -> ConnectorSnapshot? {
        guard let c = drmModeGetConnector(fd, id) else { return nil }
        defer { drmModeFreeConnector(c) }
        let p = c.pointee
        let modes = p.count_modes > 0 && p.modes != nil ? Array(UnsafeBufferPointer(start: p.modes, count: Int(p.count_modes))) : []
        let encoders = p.count_encoders > 0 && p.encoders != nil ? Array(UnsafeBufferPointer(start: p.encoders, count: Int(p.count_encoders))) : []
        return ConnectorSnapshot(id: id, name: ConnectorNaming.name(type: p.connector_type, typeID: p.connector_type_id),
                                 connected: p.connection == DRM_MODE_CONNECTED,
                                 isWriteback: p.connector_type == ConnectorNaming.writebackType,
                                 modes: modes, encoderID: p.encoder_id, encoders: encoders)
    }

    static func all(fd: Int32) -> (connectors: [ConnectorSnapshot], crtcs: [UInt32])? {
        guard let res = drmModeGetResources(fd) else { return nil }
        defer { drmModeFreeResources(res) }
        let r = res.pointee
        let ids = r.count_connectors > 0 && r.connectors != nil ? Array(UnsafeBufferPointer(start: r.connectors, count: Int(r.count_connectors))) : []
        let crtcs = r.count_crtcs > 0 && r.crtcs != nil ? Array(UnsafeBufferPointer(start: r.crtcs, count: Int(r.count_crtcs))) : []
        return (ids.compactMap { read(fd: fd, id: $0) }, crtcs)
    }
}

extension drmModeModeInfo {
    var candidate: ModeCandidate {
        var hz = Double(vrefresh)
        if clock > 0, htotal > 0, vtotal > 0 {
            hz = Double(clock) * 1000 / (Double(htotal) * Double(vtotal))
        }
        return ModeCandidate(width: Int(hdisplay), height: Int(vdisplay), refresh: hz, preferred: type & 8 != 0)
    }

    var label: String {
        let c = candidate
        return "\(c.width)x\(c.height)@\(Int(c.refresh.rounded()))"
    }
}

/// One dumb buffer with a framebuffer on it, mapped for the CPU. Freed (RmFB, munmap,
/// DESTROY_DUMB) in deinit; holds its card so that the fd outlives it.
final class DumbBuffer {
    let card: DRMCard
    let width: Int
    let height: Int
    let handle: UInt32
    let pitch: Int
    let size: UInt64
    let pixels: UnsafeMutableRawPointer
    let framebuffer: UInt32
    /// Which scan-out map generation the black bars were cleared for.
    var clearedFor = -1

    init(card: DRMCard, width: Int, height: Int, format: ScanoutFormat) throws(DisplayError) {
        var handle: UInt32 = 0, pitch: UInt32 = 0, size: UInt64 = 0
        let what = "\(width)×\(height) \(format.rawValue)"
        var r = CLoopixDRM_create_dumb(card.fd, UInt32(width), UInt32(height), UInt32(format.bytesPerPixel * 8), &handle, &pitch, &size)
        guard r == 0 else { throw .drm(device: card.path, action: "creating a dumb buffer \(what)", errno: Errno(-r)) }
        var mapped: UnsafeMutableRawPointer?
        r = CLoopixDRM_map_dumb(card.fd, handle, size, &mapped)
        guard r == 0, let mapped else {
            _ = CLoopixDRM_destroy_dumb(card.fd, handle)
            throw .drm(device: card.path, action: "mapping a dumb buffer \(what)", errno: Errno(-r))
        }
        var handles: (UInt32, UInt32, UInt32, UInt32) = (handle, 0, 0, 0)
        var pitches: (UInt32, UInt32, UInt32, UInt32) = (pitch, 0, 0, 0)
        var offsets: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        var fb: UInt32 = 0
        let added = withUnsafePointer(to: &handles) { h in
            withUnsafePointer(to: &pitches) { p in
                withUnsafePointer(to: &offsets) { o in
                    drmModeAddFB2(card.fd, UInt32(width), UInt32(height), format.fourcc,
                                  UnsafeRawPointer(h).assumingMemoryBound(to: UInt32.self),
                                  UnsafeRawPointer(p).assumingMemoryBound(to: UInt32.self),
                                  UnsafeRawPointer(o).assumingMemoryBound(to: UInt32.self), &fb, 0)
                }
            }
        }
        guard added == 0 else {
            let error = card.failure("drmModeAddFB2 \(what)", added)
            _ = CLoopixDRM_unmap(mapped, size)
            _ = CLoopixDRM_destroy_dumb(card.fd, handle)
            throw error
        }
        self.card = card
        self.width = width
        self.height = height
        self.handle = handle
        self.pitch = Int(pitch)
        self.size = size
        self.pixels = mapped
        self.framebuffer = fb
    }

    deinit {
        drmModeRmFB(card.fd, framebuffer)
        _ = CLoopixDRM_unmap(pixels, size)
        _ = CLoopixDRM_destroy_dumb(card.fd, handle)
    }
}

/// The Pi's screen through DRM/KMS, without a compositor: finds a card with a connected
/// connector, becomes DRM master, sets a mode and shows frames by page flipping between dumb
/// buffers (atomic commits where the driver has them, else legacy `drmModePageFlip`; one flip
/// in flight, the next frame drawn into a buffer that is neither on screen nor queued — so
/// nothing is ever drawn into a buffer being scanned out). Frames are scaled and letterboxed
/// to the mode and turned by the panel's rotation while they are converted (`ScanoutMap`).
///
/// Unplugging: the connector is re-read once a second from `show` (and on any failed flip);
/// while it is disconnected `show` returns at once (logged once), and when it comes back the
/// mode is set again. On deinit the original CRTC (the console) is restored and master dropped.
public final class KMSDisplay: DisplaySink {
    /// "KMS /dev/dri/card0 HDMI-A-1 1920x1080@60 atomic": card, connector, current mode, how it flips.
    public var name: String { "KMS \(card.path) \(connectorName) \(mode.label) \(atomic != nil ? "atomic" : "legacy")" }
    /// The upright size frames are composed at (the mode's, swapped for 90°/270°).
    public let width: Int
    public let height: Int
    public var closeRequested: Bool { false }
    public let configuration: KMSConfiguration
    /// The scan-out conversion runs on every core: the frame waits for it.
    private let threads = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    public var devicePath: String { card.path }
    public let connectorName: String
    /// False while the connector is unplugged (or the device stopped answering).
    public private(set) var isConnected = true
    /// Flips that completed more than one refresh period after they were queued.
    public private(set) var missedFrames = 0
    /// Flips completed.
    public private(set) var flipsCompleted = 0
    /// Times the display came back after being disconnected.
    public private(set) var reconnections = 0
    /// Whether frames are flipped by atomic commits (else legacy page flips).
    public var usesAtomic: Bool { atomic != nil }
    /// The current mode's size and rate.
    public private(set) var modeWidth: Int
    public private(set) var modeHeight: Int
    public private(set) var refreshRate: Double

    private let card: DRMCard
    private let connectorID: UInt32
    private let crtcID: UInt32
    private var savedCrtc: UnsafeMutablePointer<drmModeCrtc>?
    private var mode: drmModeModeInfo
    private var buffers: [DumbBuffer] = []
    private var onScreen: Int?
    private var pending: Int?
    private var pendingQueuedAt: Int64 = 0
    private var map: ScanoutMap?
    private var mapGeneration = 0
    private var lastCheck: Int64 = 0
    private var loggedProblem = false
    private var isMaster = false
    private var atomic: AtomicPipeline?

    /// Whether any card has a connected (non-writeback) connector; opens nothing for long and
    /// needs no master. Used by the daemon's `auto` backend.
    public static func connectedDisplayExists(cards: [String]? = nil) -> Bool {
        for path in cards ?? cardPaths() {
            guard let card = try? DRMCard(path: path), let all = ConnectorSnapshot.all(fd: card.fd) else { continue }
            if all.connectors.contains(where: { $0.connected && !$0.isWriteback && !$0.modes.isEmpty }) { return true }
        }
        return false
    }

    /// /dev/dri/card0, card1, … in number order.
    public static func cardPaths(directory: String = "/dev/dri") -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var numbers: [Int] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name.hasPrefix("card"), let n = Int(name.dropFirst(4)) { numbers.append(n) }
        }
        return numbers.sorted().map { "\(directory)/card\($0)" }
    }

    /// Opens the display. Disconnects and reconnects are logged (one warning line each).
    public init(_ configuration: KMSConfiguration = KMSConfiguration()) throws(DisplayError) {
        self.configuration = configuration
        guard configuration.buffers == 2 || configuration.buffers == 3 else {
            throw .invalidSize(display: "KMS", width: configuration.buffers, height: 0)
        }
        let paths = configuration.cards ?? Self.cardPaths()
        var seen: [String] = []
        var found: (DRMCard, ConnectorSnapshot, [UInt32])?
        var openError: DisplayError?
        search: for path in paths {
            let card: DRMCard
            do { card = try DRMCard(path: path) } catch { openError = error; continue }
            guard let all = ConnectorSnapshot.all(fd: card.fd) else { continue } // render-only card
            for c in all.connectors where !c.isWriteback {
                seen.append("\(path) \(c.name) \(c.connected ? "connected" : "disconnected")")
                let wanted = configuration.connector.map { $0 == c.name } ?? true
                if wanted && c.connected && !c.modes.isEmpty {
                    found = (card, c, all.crtcs)
                    break search
                }
            }
        }
        guard let (card, connector, crtcs) = found else {
            let what = configuration.connector.map { "connector \($0)" } ?? "a connected connector"
            var detail = "looked for \(what) on \(paths.isEmpty ? "no cards (no /dev/dri/card*)" : paths.joined(separator: ", "))"
            if !seen.isEmpty { detail += "; found \(seen.joined(separator: ", "))" }
            if let openError { detail += "; \(openError)" }
            throw .noConnectedDisplay(detail: detail)
        }
        self.card = card
        self.connectorID = connector.id
        self.connectorName = connector.name

        guard let index = ModeCandidate.choose(connector.modes.map(\.candidate), spec: configuration.mode) else {
            throw .noMode(device: card.path, connector: connector.name, asked: configuration.mode?.description ?? "preferred",
                          available: connector.modes.map(\.label).joined(separator: ", "))
        }
        mode = connector.modes[index]
        guard let crtc = Self.crtc(for: connector, crtcs: crtcs, fd: card.fd) else {
            throw .drm(device: card.path, action: "finding a CRTC for \(connector.name)", errno: Errno(ENODEV))
        }
        crtcID = crtc.id
        let candidate = mode.candidate
        modeWidth = candidate.width
        modeHeight = candidate.height
        refreshRate = candidate.refresh
        let logical = ScanoutMap.logicalSize(bufferWidth: modeWidth, bufferHeight: modeHeight, rotation: configuration.rotation)
        width = logical.width
        height = logical.height
        if drmSetMaster(card.fd) != 0 {
            throw .drmMaster(device: card.path, errno: Errno.current)
        }
        isMaster = true
        // Closing the card (when init throws) drops master too.
        var pipeline: AtomicPipeline?
        if configuration.flip != .legacy {
            do {
                pipeline = try AtomicPipeline(card: card, connectorID: connector.id, crtcID: crtc.id, crtcIndex: crtc.index,
                                              format: configuration.format)
            } catch {
                if configuration.flip == .atomic { throw error }
            }
        }
        atomic = pipeline
        savedCrtc = drmModeGetCrtc(card.fd, crtcID)
        do {
            try setMode()
        } catch where atomic != nil && configuration.flip == .auto {
            // A driver whose atomic interface refuses what its legacy one accepts: use the latter.
            Log.warning("display \(connectorName): \(error); using legacy mode setting")
            atomic = nil
            try setMode()
        }
        lastCheck = Int64(MonotonicClock.now() / 1000)
    }

    deinit {
        if pending != nil { _ = waitForFlip(timeoutMS: 100) }
        if let saved = savedCrtc {
            var connector = connectorID
            if saved.pointee.mode_valid != 0 {
                drmModeSetCrtc(card.fd, saved.pointee.crtc_id, saved.pointee.buffer_id, saved.pointee.x, saved.pointee.y,
                               &connector, 1, &saved.pointee.mode)
            } else {
                drmModeSetCrtc(card.fd, crtcID, 0, 0, 0, nil, 0, nil)
            }
            drmModeFreeCrtc(saved)
        }
        buffers.removeAll()
        if isMaster { drmDropMaster(card.fd) }
    }

    /// The connector's current encoder's CRTC, else the first CRTC one of its encoders can
    /// drive; with its index in the card's CRTC list (what planes' possible_crtcs refer to).
    private static func crtc(for connector: ConnectorSnapshot, crtcs: [UInt32], fd: Int32) -> (id: UInt32, index: Int)? {
        if connector.encoderID != 0, let e = drmModeGetEncoder(fd, connector.encoderID) {
            defer { drmModeFreeEncoder(e) }
            if e.pointee.crtc_id != 0, let index = crtcs.firstIndex(of: e.pointee.crtc_id) { return (e.pointee.crtc_id, index) }
        }
        for id in connector.encoders {
            guard let e = drmModeGetEncoder(fd, id) else { continue }
            defer { drmModeFreeEncoder(e) }
            for (i, crtc) in crtcs.enumerated() where i < 32 && e.pointee.possible_crtcs & (1 << UInt32(i)) != 0 {
                return (crtc, i)
            }
        }
        return nil
    }

    /// (Re)creates the buffers for the current mode and sets it with a black buffer on screen.
    private func setMode() throws(DisplayError) {
        if buffers.first.map({ $0.width != modeWidth || $0.height != modeHeight }) ?? true {
            buffers.removeAll()
            for _ in 0..<configuration.buffers {
                buffers.append(try DumbBuffer(card: card, width: modeWidth, height: modeHeight, format: configuration.format))
            }
        }
        pending = nil
        let first = buffers[0]
        first.pixels.initializeMemory(as: UInt8.self, repeating: 0, count: first.pitch * first.height)
        first.clearedFor = -1
        if let atomic {
            try atomic.setMode(mode, framebuffer: first.framebuffer, width: modeWidth, height: modeHeight,
                               label: "\(connectorName) \(mode.label)")
        } else {
            var connector = connectorID
            let r = drmModeSetCrtc(card.fd, crtcID, first.framebuffer, 0, 0, &connector, 1, &mode)
            guard r == 0 else { throw card.failure("drmModeSetCrtc \(connectorName) \(mode.label)", r) }
        }
        onScreen = 0
    }

    /// Converts `frame` into a free buffer and queues a flip to it (waiting first for the flip
    /// already queued, so at most one is in flight). Frames of another size are scaled and
    /// letterboxed. Returns at once while the display is disconnected.
    public func show(_ frame: RGBImage) throws {
        let now = Int64(MonotonicClock.now() / 1000)
        if now - lastCheck >= 1_000_000 {
            lastCheck = now
            checkConnector()
        }
        guard isConnected else { return }
        if map.map({ $0.sourceWidth != frame.width || $0.sourceHeight != frame.height || $0.bufferWidth != modeWidth || $0.bufferHeight != modeHeight }) ?? true {
            map = ScanoutMap(sourceWidth: frame.width, sourceHeight: frame.height, bufferWidth: modeWidth,
                             bufferHeight: modeHeight, rotation: configuration.rotation)
            mapGeneration += 1
        }
        guard let map else { return }
        var target = freeBuffer()
        while target == nil {
            guard waitForFlip(timeoutMS: 500) else { return }
            target = freeBuffer()
        }
        guard let target else { return }
        let buffer = buffers[target]
        if buffer.clearedFor != mapGeneration {
            map.clear(buffer.pixels, pitch: buffer.pitch)
            buffer.clearedFor = mapGeneration
        }
        map.convert(frame, into: buffer.pixels, pitch: buffer.pitch, format: configuration.format,
                    threads: threads)
        while pending != nil {
            guard waitForFlip(timeoutMS: 500) else { return }
        }
        let r = atomic?.flip(framebuffer: buffer.framebuffer)
            ?? drmModePageFlip(card.fd, crtcID, buffer.framebuffer, UInt32(DRM_MODE_PAGE_FLIP_EVENT), nil)
        guard r == 0 else {
            let call = atomic != nil ? "atomic page flip" : "drmModePageFlip"
            disconnect(because: "\(card.failure("\(call) \(connectorName)", r))")
            return
        }
        pending = target
        pendingQueuedAt = Int64(MonotonicClock.now() / 1000)
    }

    public func pollEvents() -> [InputEvent] { [] }

    /// Calls `body` with the buffer on screen (its pixels, pitch, width, height), for checks.
    public func withScreenBuffer<R>(_ body: (UnsafeRawBufferPointer, _ pitch: Int, _ width: Int, _ height: Int) -> R) -> R? {
        if pending != nil { _ = waitForFlip(timeoutMS: 500) }
        guard let onScreen, isConnected else { return nil }
        let b = buffers[onScreen]
        return body(UnsafeRawBufferPointer(start: b.pixels, count: b.pitch * b.height), b.pitch, b.width, b.height)
    }

    /// Waits for the pending flip to complete; false (and disconnected) when it does not.
    private func waitForFlip(timeoutMS: Int32) -> Bool {
        var user: UInt64 = 0, usec: Int64 = 0, sequence: UInt32 = 0
        let r = CLoopixDRM_wait_flip(card.fd, timeoutMS, &user, &usec, &sequence)
        guard r == 1 else {
            if r == 0 {
                disconnect(because: "\(card.path): \(connectorName): a page flip did not complete in \(timeoutMS) ms")
            } else {
                disconnect(because: "\(DisplayError.drm(device: card.path, action: "waiting for a page flip on \(connectorName)", errno: Errno(-r)))")
            }
            return false
        }
        flipsCompleted += 1
        let period = refreshRate > 0 ? 1_000_000 / refreshRate : 16_667
        if Double(usec - pendingQueuedAt) > period * 1.2 { missedFrames += 1 }
        onScreen = pending
        pending = nil
        return true
    }

    private func freeBuffer() -> Int? {
        buffers.indices.first { $0 != onScreen && $0 != pending }
    }

    private func disconnect(because reason: String) {
        if isConnected {
            isConnected = false
            pending = nil
            Log.warning("display \(connectorName): \(reason); preview paused, capturing continues")
            loggedProblem = false
        }
    }

    /// Re-reads the connector: cheaply while connected (what the kernel knows, no probe, no
    /// allocation); with a probe while not, and then sets the mode again when it is back.
    private func checkConnector() {
        if isConnected {
            let status = CLoopixDRM_connector_status(card.fd, connectorID)
            if status < 0 {
                disconnect(because: "\(DisplayError.drm(device: card.path, action: "reading the status of \(connectorName)", errno: Errno(-status)))")
            } else if status == Int32(DRM_MODE_DISCONNECTED.rawValue) {
                disconnect(because: "disconnected")
            }
            return
        }
        guard let c = ConnectorSnapshot.read(fd: card.fd, id: connectorID), c.connected, !c.modes.isEmpty else { return }
        guard let index = ModeCandidate.choose(c.modes.map(\.candidate), spec: configuration.mode) else {
            if !loggedProblem { Log.warning("display \(connectorName): connected again but has no mode \(configuration.mode?.description ?? "")") }
            loggedProblem = true
            return
        }
        // A flip event of before the disconnection must not be taken for a new one.
        var user: UInt64 = 0, usec: Int64 = 0, sequence: UInt32 = 0
        while CLoopixDRM_wait_flip(card.fd, 0, &user, &usec, &sequence) == 1 {}
        mode = c.modes[index]
        let candidate = mode.candidate
        modeWidth = candidate.width
        modeHeight = candidate.height
        refreshRate = candidate.refresh
        do {
            try setMode()
        } catch {
            if !loggedProblem { Log.warning("display \(connectorName): connected again but \(error)") }
            loggedProblem = true
            return
        }
        isConnected = true
        loggedProblem = false
        reconnections += 1
        Log.warning("display \(connectorName): connected again (\(mode.label)); preview resumed")
    }
}
