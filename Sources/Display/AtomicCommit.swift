import CDRM
import CLoopixDRM
import Glibc
import PixelFormats
import System

/// How `KMSDisplay` puts a buffer on screen.
public enum FlipAPI: String, Sendable, Equatable, CaseIterable {
    /// Atomic commits where the driver offers them, legacy page flips otherwise.
    case auto
    /// Atomic commits only: a driver without them is an error.
    case atomic
    /// `drmModeSetCrtc` + `drmModePageFlip` (the pre-atomic interface every driver has).
    case legacy
}

/// The property ids of one KMS object, by name ("FB_ID", "MODE_ID", …), with their values
/// at the time they were read.
struct DRMProperties {
    var ids: [String: UInt32] = [:]
    var values: [String: UInt64] = [:]

    init(fd: Int32, object: UInt32, type: UInt32) {
        guard let props = drmModeObjectGetProperties(fd, object, type) else { return }
        defer { drmModeFreeObjectProperties(props) }
        let p = props.pointee
        for i in 0..<Int(p.count_props) {
            guard let prop = drmModeGetProperty(fd, p.props[i]) else { continue }
            let name = withUnsafeBytes(of: prop.pointee.name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            ids[name] = prop.pointee.prop_id
            values[name] = p.prop_values[i]
            drmModeFreeProperty(prop)
        }
    }

    /// The id of `name`, or the error of an object that lacks it.
    func id(_ name: String, of what: String, device: String) throws(DisplayError) -> UInt32 {
        guard let id = ids[name] else { throw .drm(device: device, action: "finding property \(name) of \(what)", errno: Errno(ENOENT)) }
        return id
    }
}

/// Atomic mode setting for one connector → CRTC → primary plane: a mode set is one commit
/// (connector's CRTC_ID, the CRTC's MODE_ID blob and ACTIVE, the plane's framebuffer and
/// rectangles), a flip is a non-blocking commit of the plane's FB_ID asking for a flip event.
/// Flips go through `CLoopixDRM_atomic_set`, which builds the request on the stack (libdrm's
/// drmModeAtomicCommit allocates on every call). Owns the mode blob (destroyed in deinit);
/// keeps the card open.
final class AtomicPipeline {
    let card: DRMCard
    let connectorID: UInt32
    let crtcID: UInt32
    let planeID: UInt32
    private let connectorCrtc: UInt32
    private let crtcMode: UInt32
    private let crtcActive: UInt32
    private let plane: [String: UInt32]
    private let planeFramebuffer: UInt32
    private var modeBlob: UInt32 = 0

    /// Turns on atomic mode setting on `card` and finds the primary plane that can show
    /// `format` on the CRTC at `crtcIndex`. Throws when the driver has no atomic interface
    /// (`DRM_CLIENT_CAP_ATOMIC` refused) or no such plane.
    init(card: DRMCard, connectorID: UInt32, crtcID: UInt32, crtcIndex: Int, format: ScanoutFormat) throws(DisplayError) {
        var r = drmSetClientCap(card.fd, UInt64(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
        guard r == 0 else { throw card.failure("enabling universal planes", r) }
        r = drmSetClientCap(card.fd, UInt64(DRM_CLIENT_CAP_ATOMIC), 1)
        guard r == 0 else { throw card.failure("enabling atomic mode setting", r) }
        guard let planeID = Self.primaryPlane(card: card, crtcIndex: crtcIndex, format: format) else {
            throw .drm(device: card.path, action: "finding a primary plane for CRTC \(crtcID) that scans out \(format.rawValue)", errno: Errno(ENODEV))
        }
        let connectorProps = DRMProperties(fd: card.fd, object: connectorID, type: UInt32(DRM_MODE_OBJECT_CONNECTOR))
        let crtcProps = DRMProperties(fd: card.fd, object: crtcID, type: UInt32(DRM_MODE_OBJECT_CRTC))
        let planeProps = DRMProperties(fd: card.fd, object: planeID, type: UInt32(DRM_MODE_OBJECT_PLANE))
        connectorCrtc = try connectorProps.id("CRTC_ID", of: "connector \(connectorID)", device: card.path)
        crtcMode = try crtcProps.id("MODE_ID", of: "CRTC \(crtcID)", device: card.path)
        crtcActive = try crtcProps.id("ACTIVE", of: "CRTC \(crtcID)", device: card.path)
        var plane: [String: UInt32] = [:]
        for name in ["FB_ID", "CRTC_ID", "SRC_X", "SRC_Y", "SRC_W", "SRC_H", "CRTC_X", "CRTC_Y", "CRTC_W", "CRTC_H"] {
            plane[name] = try planeProps.id(name, of: "plane \(planeID)", device: card.path)
        }
        self.plane = plane
        planeFramebuffer = plane["FB_ID"] ?? 0
        self.card = card
        self.connectorID = connectorID
        self.crtcID = crtcID
        self.planeID = planeID
    }

    deinit {
        if modeBlob != 0 { drmModeDestroyPropertyBlob(card.fd, modeBlob) }
    }

    /// The primary plane (property "type" = 1) whose possible CRTCs include `crtcIndex` and
    /// whose formats include `format`.
    private static func primaryPlane(card: DRMCard, crtcIndex: Int, format: ScanoutFormat) -> UInt32? {
        guard crtcIndex < 32, let resources = drmModeGetPlaneResources(card.fd) else { return nil }
        defer { drmModeFreePlaneResources(resources) }
        let r = resources.pointee
        for i in 0..<Int(r.count_planes) {
            guard let plane = drmModeGetPlane(card.fd, r.planes[i]) else { continue }
            defer { drmModeFreePlane(plane) }
            let p = plane.pointee
            guard p.possible_crtcs & (1 << UInt32(crtcIndex)) != 0 else { continue }
            let formats = UnsafeBufferPointer(start: p.formats, count: Int(p.count_formats))
            guard formats.contains(format.fourcc) else { continue }
            let props = DRMProperties(fd: card.fd, object: p.plane_id, type: UInt32(DRM_MODE_OBJECT_PLANE))
            if props.values["type"] == UInt64(DRM_PLANE_TYPE_PRIMARY) { return p.plane_id }
        }
        return nil
    }

    /// Sets `mode` with `framebuffer` (width × height, the mode's size) on the plane, blocking
    /// until it is on screen.
    func setMode(_ mode: drmModeModeInfo, framebuffer: UInt32, width: Int, height: Int, label: String) throws(DisplayError) {
        var mode = mode
        var blob: UInt32 = 0
        let r = drmModeCreatePropertyBlob(card.fd, &mode, MemoryLayout<drmModeModeInfo>.size, &blob)
        guard r == 0 else { throw card.failure("creating a mode blob for \(label)", r) }
        guard let request = drmModeAtomicAlloc() else {
            drmModeDestroyPropertyBlob(card.fd, blob)
            throw .drm(device: card.path, action: "allocating an atomic request for \(label)", errno: Errno(ENOMEM))
        }
        defer { drmModeAtomicFree(request) }
        func add(_ object: UInt32, _ property: UInt32, _ value: UInt64) {
            _ = drmModeAtomicAddProperty(request, object, property, value)
        }
        add(connectorID, connectorCrtc, UInt64(crtcID))
        add(crtcID, crtcMode, UInt64(blob))
        add(crtcID, crtcActive, 1)
        let w = UInt64(width), h = UInt64(height)
        for (name, value) in [("FB_ID", UInt64(framebuffer)), ("CRTC_ID", UInt64(crtcID)),
                              ("SRC_X", 0), ("SRC_Y", 0), ("SRC_W", w << 16), ("SRC_H", h << 16),
                              ("CRTC_X", 0), ("CRTC_Y", 0), ("CRTC_W", w), ("CRTC_H", h)] {
            if let property = plane[name] { add(planeID, property, value) }
        }
        let committed = drmModeAtomicCommit(card.fd, request, UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET), nil)
        guard committed == 0 else {
            let error = card.failure("atomic mode set \(label)", committed)
            drmModeDestroyPropertyBlob(card.fd, blob)
            throw error
        }
        if modeBlob != 0 { drmModeDestroyPropertyBlob(card.fd, modeBlob) }
        modeBlob = blob
    }

    /// Queues `framebuffer` for the next vblank; a flip event arrives when it is on screen.
    /// Returns 0 or a negative errno.
    func flip(framebuffer: UInt32) -> Int32 {
        CLoopixDRM_atomic_set(card.fd, planeID, planeFramebuffer, UInt64(framebuffer),
                              UInt32(DRM_MODE_PAGE_FLIP_EVENT) | UInt32(DRM_MODE_ATOMIC_NONBLOCK))
    }
}
