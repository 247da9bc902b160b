import CLibcameraShim
import FilmCore
import Foundation
import System
import PixelFormats
import Raster

/// libcamera's camera manager (one per process); owns the shim handle.
public final class LibcameraManager: @unchecked Sendable {
    // @unchecked: the handle is immutable after init and libcamera's manager is thread-safe
    // for the calls made here (enumeration, get).
    let handle: OpaquePointer

    public struct CameraInfo: Sendable, Equatable {
        public var id: String
        public var model: String
        public var pixelArrayWidth: Int
        public var pixelArrayHeight: Int
        public var sensorDiagonal: Double?
    }

    public init() throws {
        // libcamera logs INFO lines to stderr by default; keep the daemon's log to its own
        // lines unless the user asks for more (LIBCAMERA_LOG_LEVELS set wins).
        setenv("LIBCAMERA_LOG_LEVELS", "*:ERROR", 0)
        var h: OpaquePointer?
        let rc = CLibcameraShim_managerCreate(&h)
        guard rc == 0, let h else { throw CameraError.failed("starting libcamera's camera manager: \(LibcameraCamera.describe(rc))") }
        handle = h
    }

    deinit { CLibcameraShim_managerDestroy(handle) }

    /// libcamera's version this build was compiled against, e.g. "0.0.3".
    public static var version: String {
        let v = Int(CLibcameraShim_version())
        return "\(v / 10000).\(v / 100 % 100).\(v % 100)"
    }

    public func cameras() -> [CameraInfo] {
        let count = Int(CLibcameraShim_cameraCount(handle))
        var out: [CameraInfo] = []
        for i in 0..<max(0, count) {
            var info = CLibcameraShim_CameraInfo()
            guard CLibcameraShim_cameraInfo(handle, Int32(i), &info) == 0 else { continue }
            let id = withUnsafeBytes(of: &info.id) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let model = withUnsafeBytes(of: &info.model) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            out.append(CameraInfo(id: id, model: model, pixelArrayWidth: Int(info.pixelArrayWidth), pixelArrayHeight: Int(info.pixelArrayHeight),
                                  sensorDiagonal: LensTable.sensorDiagonal(pixelsWide: Int(info.pixelArrayWidth), pixelsHigh: Int(info.pixelArrayHeight),
                                                                           cellWidthNm: Int(info.unitCellWidthNm), cellHeightNm: Int(info.unitCellHeightNm))))
        }
        return out
    }
}

/// Every camera libcamera reports, as lenses of one `CameraSource`. One camera streams at a
/// time; switching lens stops one and starts the next. Owns the open camera handle: stopped
/// before it is released, requests never re-queued after stop, freed in `deinit`.
///
/// Not `Sendable`: it lives on the controller's thread (the `CameraSource` contract); the shim
/// keeps libcamera's own thread away from everything but its locked queue.
public final class LibcameraCamera: CameraSource {
    public let lenses: [Lens]
    private let manager: LibcameraManager
    private let ids: [String]
    private var open: OpaquePointer?
    private var openIndex = -1
    private var viewfinder = CLibcameraShim_StreamInfo()
    private var still = CLibcameraShim_StreamInfo()
    private var stillTogether = false
    private var converter: FrameConverter?
    private var previewSize = (0, 0)
    private var controls = CLibcameraShim_Controls(ev: 0, aeLocked: 0, afLocked: 0, focusX: 0.5, focusY: 0.5, hasFocusPoint: 0, triggerFocus: 0)
    private var lastFocus: SIMD2<Double>?

    /// `focalLengthOverrides`: sensor model or camera id → real focal length in mm.
    public init(manager: LibcameraManager, table: LensTable = .builtIn, focalLengthOverrides: [String: Double] = [:]) throws {
        self.manager = manager
        let infos = manager.cameras()
        guard !infos.isEmpty else { throw CameraError.noCamera }
        var lenses: [(Lens, String)] = []
        for info in infos {
            let f = table.focalLengths(model: info.model, sensorDiagonal: info.sensorDiagonal,
                                       override: focalLengthOverrides[info.id] ?? focalLengthOverrides[info.model])
            lenses.append((Lens(id: info.id, sensorModel: info.model.isEmpty ? "unknown" : info.model, focalLength: f.mm,
                                focalLength35mm: f.equivalent, stillWidth: info.pixelArrayWidth, stillHeight: info.pixelArrayHeight), info.id))
        }
        lenses.sort { $0.0.focalLength35mm < $1.0.focalLength35mm }
        self.lenses = lenses.map(\.0)
        ids = lenses.map(\.1)
    }

    deinit { close() }

    static func describe(_ rc: Int32) -> String {
        rc < 0 ? "\(Errno(-rc))" : "code \(rc)"
    }

    static func error(_ rc: Int32, _ what: String) -> CameraError {
        switch -rc {
        case EBUSY: return .inUse(what)
        case ENODEV, ENOENT: return .disconnected(what)
        case ETIMEDOUT: return .timeout(what)
        default: return .failed("\(what): \(describe(rc))")
        }
    }

    private func close() {
        if let open { CLibcameraShim_cameraClose(open) }
        open = nil
        openIndex = -1
    }

    public func start(lens: Int, previewWidth: Int, previewHeight: Int) throws {
        guard lenses.indices.contains(lens) else { throw CameraError.failed("lens \(lens) does not exist") }
        guard previewWidth > 0, previewHeight > 0 else { throw CameraError.failed("preview size \(previewWidth)×\(previewHeight)") }
        if openIndex != lens {
            close()
            var h: OpaquePointer?
            let rc = CLibcameraShim_cameraOpen(manager.handle, ids[lens], &h)
            guard rc == 0, let h else { throw Self.error(rc, "opening \(ids[lens])") }
            open = h
            openIndex = lens
        }
        guard let open else { throw CameraError.failed("camera not open") }
        CLibcameraShim_stop(open)
        var together: Int32 = 0
        var rc = CLibcameraShim_configure(open, Int32(previewWidth), Int32(previewHeight), 1, &viewfinder, &still, &together)
        guard rc == 0 else { throw Self.error(rc, "configuring \(ids[lens]) for \(previewWidth)×\(previewHeight)") }
        stillTogether = together != 0
        try makeConverter(previewWidth, previewHeight)
        previewSize = (previewWidth, previewHeight)
        CLibcameraShim_setControls(open, &controls)
        rc = CLibcameraShim_start(open)
        guard rc == 0 else { throw Self.error(rc, "starting \(ids[lens])") }
    }

    private func makeConverter(_ width: Int, _ height: Int) throws {
        guard let format = CameraPixelFormat(fourcc: viewfinder.fourcc) else {
            throw CameraError.failed("unsupported pixel format 0x\(String(viewfinder.fourcc, radix: 16)) from \(ids[openIndex])")
        }
        converter = FrameConverter(format: format, sourceWidth: Int(viewfinder.width), sourceHeight: Int(viewfinder.height),
                                   stride: Int(viewfinder.stride), width: width, height: height)
    }

    public func stop() {
        if let open { CLibcameraShim_stop(open) }
    }

    public func setControls(_ c: CameraControls) {
        controls.ev = Float(c.ev)
        controls.aeLocked = c.aeLocked ? 1 : 0
        controls.afLocked = c.afLocked ? 1 : 0
        if let p = c.focusPoint {
            controls.focusX = Float(p.x)
            controls.focusY = Float(p.y)
            controls.hasFocusPoint = 1
            if p != lastFocus { controls.triggerFocus = 1 }
        } else {
            controls.hasFocusPoint = 0
        }
        lastFocus = c.focusPoint
        if let open { CLibcameraShim_setControls(open, &controls) }
        controls.triggerFocus = 0
    }

    static func metadata(_ f: CLibcameraShim_Frame) -> FrameMetadata {
        var m = FrameMetadata(sequence: f.sequence)
        m.timestampNs = f.timestampNs
        if f.exposureTimeUs > 0 { m.exposureTime = Double(f.exposureTimeUs) / 1e6 }
        if f.analogueGain > 0 { m.analogueGain = Double(f.analogueGain) }
        if f.hasLensPosition != 0 { m.lensPosition = Double(f.lensPosition) }
        m.aeState = f.aeLocked != 0 ? .locked : .converged
        if f.hasAfState != 0 {
            // libcamera's AfState: 0 idle, 1 scanning, 2 focused, 3 failed.
            m.afState = [AutoFocusState.idle, .scanning, .focused, .failed][Int(min(max(f.afState, 0), 3))]
        }
        return m
    }

    public func nextPreviewFrame(into frame: inout RGBImage, timeout: Double) throws -> FrameMetadata {
        guard let open, let converter else { throw CameraError.failed("camera not started") }
        guard frame.width == converter.width, frame.height == converter.height else {
            throw CameraError.failed("preview buffer is \(frame.width)×\(frame.height), not \(converter.width)×\(converter.height)")
        }
        let deadline = Deadline.after(seconds: timeout)
        while true {
            var f = CLibcameraShim_Frame()
            let rc = CLibcameraShim_waitFrame(open, max(1, deadline.pollTimeout), &f)
            if rc == -EIO { if !deadline.hasPassed { continue } else { throw CameraError.timeout("no complete frame") } }
            guard rc == 0 else { throw Self.error(rc, "waiting for a frame") }
            defer { CLibcameraShim_releaseFrame(open, f.cookie) }
            guard f.stream == 0 else { continue }
            do {
                try converter.convert(UnsafeRawBufferPointer(start: f.data, count: Int(f.length)), into: &frame,
                                      threads: Self.conversionThreads)
            } catch { throw CameraError.failed(error.description) }
            return Self.metadata(f)
        }
    }

    /// True where the pipeline streams a still beside the viewfinder (the Pi's); false where a
    /// still means reconfiguring (vimc).
    public var stillsWhileStreaming: Bool { stillTogether }

    /// The preview frame's conversion runs on every core: the frame waits for it (one of a
    /// Pi's cores takes milliseconds).
    private static let conversionThreads = ProcessInfo.processInfo.activeProcessorCount

    /// Not yet: libcamera's raw stream (the Pi's packed Bayer frames, `BayerMosaic.unpackCSI2`)
    /// is not requested beside the still, so `capture.raw` saves no DNG on this backend.
    public var offersRawStills: Bool { false }

    public func captureStill(notBefore: UInt64) throws -> CapturedStill {
        guard let open else { throw CameraError.failed("camera not started") }
        if stillTogether {
            // The pipeline streams both: add the still buffer to a request made from then on.
            let now = MonotonicClock.now()
            if notBefore > now { usleep(UInt32(min(notBefore - now, 10_000_000_000) / 1000)) }
            CLibcameraShim_requestStill(open)
            return try waitStill(stream: 1, info: still, notBefore: 0, timeout: 3)
        }
        // One stream at a time: switch to a full-resolution still configuration and back.
        let asked = MonotonicClock.now()
        CLibcameraShim_stop(open)
        var info = CLibcameraShim_StreamInfo()
        var rc = CLibcameraShim_configureStillOnly(open, &info)
        guard rc == 0 else { throw Self.error(rc, "configuring a still of \(ids[openIndex])") }
        rc = CLibcameraShim_start(open)
        guard rc == 0 else { throw Self.error(rc, "starting a still of \(ids[openIndex])") }
        let result = Result { try waitStill(stream: 0, info: info, notBefore: notBefore, timeout: 3, asked: asked) }
        CLibcameraShim_stop(open)
        try start(lens: openIndex, previewWidth: previewSize.0, previewHeight: previewSize.1)
        return try result.get()
    }

    /// Waits for the still — the first frame of `stream` exposed at `notBefore` or later (frames
    /// without a timestamp count) — and copies its bytes out of the request's buffer (which goes
    /// back to libcamera at once); the conversion to RGB is left to `CapturedStill.image()`.
    /// `asked`: when the stream was reconfigured for the still (0: it was running), for
    /// `CapturedStill.startDelayNs`.
    private func waitStill(stream: Int32, info: CLibcameraShim_StreamInfo, notBefore: UInt64, timeout: Double,
                           asked: UInt64 = 0) throws -> CapturedStill {
        guard let open else { throw CameraError.failed("camera not started") }
        guard let format = CameraPixelFormat(fourcc: info.fourcc) else {
            throw CameraError.failed("unsupported still pixel format 0x\(String(info.fourcc, radix: 16))")
        }
        let w = Int(info.width), h = Int(info.height)
        let converter = FrameConverter(format: format, sourceWidth: w, sourceHeight: h, stride: Int(info.stride), width: w, height: h)
        let now = MonotonicClock.now()
        let deadline = Deadline.after(seconds: timeout + Double(notBefore > now ? notBefore - now : 0) / 1e9)
        var lastSkipped: UInt64 = 0, first: UInt64 = 0
        while !deadline.hasPassed {
            var f = CLibcameraShim_Frame()
            let rc = CLibcameraShim_waitFrame(open, max(1, deadline.pollTimeout), &f)
            if rc == -EIO { continue }
            guard rc == 0 else { throw Self.error(rc, "waiting for a still") }
            defer { CLibcameraShim_releaseFrame(open, f.cookie) }
            guard f.stream == stream else { continue }
            if first == 0 { first = f.timestampNs }
            if f.timestampNs != 0 && f.timestampNs < notBefore {
                lastSkipped = f.timestampNs
                continue
            }
            let raw = [UInt8](UnsafeRawBufferPointer(start: f.data, count: Int(f.length)))
            var captured = CapturedStill(metadata: Self.metadata(f), width: w, height: h) {
                var image = RGBImage(width: w, height: h)
                do { try raw.withUnsafeBytes { try converter.convert($0, into: &image) } } catch { throw CameraError.failed("\(error)") }
                return image
            }
            if lastSkipped != 0 && f.timestampNs > lastSkipped { captured.skippedFramePeriodNs = f.timestampNs - lastSkipped }
            // More than 10 s is no reconfiguration but a sensor on another clock: unknown.
            if asked != 0 && first > asked && first - asked < 10_000_000_000 { captured.startDelayNs = first - asked }
            return captured
        }
        throw CameraError.timeout("no still within \(Int(timeout)) s")
    }
}
