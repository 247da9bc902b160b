import Controls
import FilmCore
import Raster

/// Pixel formats a KMS scan-out buffer can have.
public enum ScanoutFormat: String, Sendable, Equatable, CaseIterable {
    /// 32 bits per pixel, bytes B, G, R, unused (DRM_FORMAT_XRGB8888, fourcc "XR24").
    case xrgb8888
    /// 16 bits per pixel, 5-6-5 (DRM_FORMAT_RGB565, fourcc "RG16"), for panels that want it.
    case rgb565

    public var bytesPerPixel: Int { self == .xrgb8888 ? 4 : 2 }
    /// The DRM fourcc code.
    public var fourcc: UInt32 {
        switch self {
        case .xrgb8888: return 0x3432_5258 // 'X' 'R' '2' '4'
        case .rgb565: return 0x3631_4752 // 'R' 'G' '1' '6'
        }
    }
}

/// Where each pixel of a scan-out buffer comes from: the frame scaled (nearest neighbour) to
/// fit the display with its aspect kept (black bars, "letterbox"), turned by the panel's
/// rotation. Built once per (frame size, mode, rotation); converting a frame is then a walk
/// over two index tables and allocates nothing.
///
/// The source byte offset of buffer pixel (bx, by) inside the content rectangle is
/// `columnOffsets[bx - contentX] + rowOffsets[by - contentY]`: with a rotation by a multiple
/// of 90° each buffer column fixes one source coordinate and each buffer row the other.
public struct ScanoutMap: Sendable, Equatable {
    public let sourceWidth: Int
    public let sourceHeight: Int
    /// The buffer's (mode's) size, in the panel's own orientation.
    public let bufferWidth: Int
    public let bufferHeight: Int
    public let rotation: ScreenRotation
    /// The picture's rectangle in buffer pixels; outside it the buffer is black.
    public let contentX: Int
    public let contentY: Int
    public let contentWidth: Int
    public let contentHeight: Int
    public let columnOffsets: [Int]
    public let rowOffsets: [Int]
    /// The content's columns are the source's, left to right (no scaling, a turn of 0°): rows
    /// are then packed without the column table (`XRGB8888.pack`).
    private let columnsAreSource: Bool

    /// The upright display size the picture is fitted to (the buffer's, swapped for 90/270).
    public static func logicalSize(bufferWidth: Int, bufferHeight: Int, rotation: ScreenRotation) -> (width: Int, height: Int) {
        rotation.swapsAxes ? (bufferHeight, bufferWidth) : (bufferWidth, bufferHeight)
    }

    /// The largest rectangle of the source's aspect that fits `width × height`, centred.
    public static func letterbox(sourceWidth sw: Int, sourceHeight sh: Int, width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        var w = width, h = height
        if sw * height > sh * width {
            h = max(1, (sh * width + sw / 2) / sw)
        } else {
            w = max(1, (sw * height + sh / 2) / sh)
        }
        return ((width - w) / 2, (height - h) / 2, w, h)
    }

    public init(sourceWidth: Int, sourceHeight: Int, bufferWidth: Int, bufferHeight: Int, rotation: ScreenRotation) {
        precondition(sourceWidth > 0 && sourceHeight > 0 && bufferWidth > 0 && bufferHeight > 0)
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.bufferWidth = bufferWidth
        self.bufferHeight = bufferHeight
        self.rotation = rotation
        let logical = Self.logicalSize(bufferWidth: bufferWidth, bufferHeight: bufferHeight, rotation: rotation)
        let fit = Self.letterbox(sourceWidth: sourceWidth, sourceHeight: sourceHeight, width: logical.width, height: logical.height)
        let rowBytes = sourceWidth * 3

        // Source x (or y) for each logical column (row) inside the fitted rectangle, sampling
        // at pixel centres; -1 outside.
        func sourceIndex(_ l: Int, start: Int, length: Int, sourceLength: Int) -> Int {
            let i = l - start
            guard i >= 0, i < length else { return -1 }
            let s = ((2 * i + 1) * sourceLength) / (2 * length)
            return min(s, sourceLength - 1)
        }
        func sx(_ lx: Int) -> Int { sourceIndex(lx, start: fit.x, length: fit.width, sourceLength: sourceWidth) }
        func sy(_ ly: Int) -> Int { sourceIndex(ly, start: fit.y, length: fit.height, sourceLength: sourceHeight) }
        func scaled(_ index: Int, _ factor: Int) -> Int { index < 0 ? -1 : index * factor }

        // Buffer (bx, by) shows logical pixel:
        //   0: (bx, by)   90: (by, LH-1-bx)   180: (LW-1-bx, LH-1-by)   270: (LW-1-by, bx)
        let lw = logical.width, lh = logical.height
        var columns = [Int](repeating: -1, count: bufferWidth)
        for bx in 0..<bufferWidth {
            switch rotation {
            case .none: columns[bx] = scaled(sx(bx), 3)
            case .quarter: columns[bx] = scaled(sy(lh - 1 - bx), rowBytes)
            case .half: columns[bx] = scaled(sx(lw - 1 - bx), 3)
            case .threeQuarters: columns[bx] = scaled(sy(bx), rowBytes)
            }
        }
        var rows = [Int](repeating: -1, count: bufferHeight)
        for by in 0..<bufferHeight {
            switch rotation {
            case .none: rows[by] = scaled(sy(by), rowBytes)
            case .quarter: rows[by] = scaled(sx(by), 3)
            case .half: rows[by] = scaled(sy(lh - 1 - by), rowBytes)
            case .threeQuarters: rows[by] = scaled(sx(lw - 1 - by), 3)
            }
        }
        let x0 = columns.firstIndex { $0 >= 0 } ?? 0
        let x1 = (columns.lastIndex { $0 >= 0 } ?? -1) + 1
        let y0 = rows.firstIndex { $0 >= 0 } ?? 0
        let y1 = (rows.lastIndex { $0 >= 0 } ?? -1) + 1
        contentX = x0
        contentY = y0
        contentWidth = max(0, x1 - x0)
        contentHeight = max(0, y1 - y0)
        columnOffsets = Array(columns[x0..<max(x0, x1)])
        rowOffsets = Array(rows[y0..<max(y0, y1)])
        columnsAreSource = contentWidth == sourceWidth && columnOffsets.enumerated().allSatisfy { $0.element == $0.offset * 3 }
    }

    /// The source pixel buffer pixel (bx, by) shows, or nil for the black bars.
    public func sourcePixel(bufferX bx: Int, bufferY by: Int) -> (x: Int, y: Int)? {
        let i = bx - contentX, j = by - contentY
        guard i >= 0, i < contentWidth, j >= 0, j < contentHeight else { return nil }
        let offset = columnOffsets[i] + rowOffsets[j]
        let pixel = offset / 3
        return (pixel % sourceWidth, pixel / sourceWidth)
    }

    /// Writes `frame` (sourceWidth × sourceHeight) into a buffer of bufferWidth × bufferHeight
    /// pixels, `pitch` bytes per row. Only the content rectangle is written (the bars are
    /// cleared once, by `clear`). Allocates nothing.
    public func convert(_ frame: RGBImage, into base: UnsafeMutableRawPointer, pitch: Int, format: ScanoutFormat,
                        threads: Int = 1, parallel: any ParallelWork = DispatchParallelWork()) {
        precondition(frame.width == sourceWidth && frame.height == sourceHeight, "frame size does not match the scan-out map")
        guard contentWidth > 0 else { return }
        frame.pixels.withUnsafeBufferPointer { src in
            // Addresses, not pointers (which are not Sendable): both buffers outlive the call and
            // each band writes only its own rows of the screen's buffer.
            let s = UInt(bitPattern: src.baseAddress!), b = UInt(bitPattern: base)
            parallel.performInBands(rows: contentHeight, threads: threads) { rows in
                self.convertRows(rows, source: UnsafePointer(bitPattern: s)!, into: UnsafeMutableRawPointer(bitPattern: b)!,
                                 pitch: pitch, format: format)
            }
        }
    }

    /// Rows `range` of the content rectangle.
    private func convertRows(_ range: Range<Int>, source src: UnsafePointer<UInt8>, into base: UnsafeMutableRawPointer, pitch: Int,
                             format: ScanoutFormat) {
        let width = contentWidth
        columnOffsets.withUnsafeBufferPointer { cols in
            rowOffsets.withUnsafeBufferPointer { rowOffsets in
                for j in range {
                    let rowOffset = rowOffsets[j]
                    let line = base + (contentY + j) * pitch
                    switch format {
                    case .xrgb8888:
                        let out = (line + contentX * 4).assumingMemoryBound(to: UInt32.self)
                        if columnsAreSource {
                            XRGB8888.pack(rgb: src + rowOffset, width: width, into: out)
                            continue
                        }
                        for i in 0..<width {
                            let o = rowOffset + cols[i]
                            let r = UInt32(src[o]) << 16
                            let g = UInt32(src[o + 1]) << 8
                            let b = UInt32(src[o + 2])
                            out[i] = 0xFF00_0000 | r | g | b
                        }
                    case .rgb565:
                        let out = (line + contentX * 2).assumingMemoryBound(to: UInt16.self)
                        for i in 0..<width {
                            let o = rowOffset + cols[i]
                            let r = UInt16(src[o] >> 3) << 11
                            let g = UInt16(src[o + 1] >> 2) << 5
                            let b = UInt16(src[o + 2] >> 3)
                            out[i] = r | g | b
                        }
                    }
                }
            }
        }
    }

    /// Fills the whole buffer with black.
    public func clear(_ base: UnsafeMutableRawPointer, pitch: Int) {
        base.initializeMemory(as: UInt8.self, repeating: 0, count: pitch * bufferHeight)
    }
}

/// The name the kernel gives a connector: its type's name and its number among connectors of
/// that type ("HDMI-A-1", "DSI-1", "Virtual-1"), as in /sys/class/drm/card0-HDMI-A-1.
public enum ConnectorNaming {
    /// DRM_MODE_CONNECTOR_* in order (0 Unknown … 20 USB), spelled as the kernel spells them.
    public static let typeNames = ["Unknown", "VGA", "DVI-I", "DVI-D", "DVI-A", "Composite", "SVIDEO",
                                   "LVDS", "Component", "DIN", "DP", "HDMI-A", "HDMI-B", "TV", "eDP",
                                   "Virtual", "DSI", "DPI", "Writeback", "SPI", "USB"]
    public static let writebackType: UInt32 = 18

    public static func name(type: UInt32, typeID: UInt32) -> String {
        let typeName = Int(type) < typeNames.count ? typeNames[Int(type)] : "Unknown"
        return "\(typeName)-\(typeID)"
    }
}

/// A display mode asked for in the configuration: "1920x1080" or "1280x720@60" (the rate may
/// have decimals: "1920x1080@59.94").
public struct ModeSpec: Sendable, Equatable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public var refresh: Double?

    public init(width: Int, height: Int, refresh: Double? = nil) {
        self.width = width
        self.height = height
        self.refresh = refresh
    }

    /// Parses "WxH[@Hz]" (also "W×H"); nil when malformed or out of range.
    public init?(_ text: String) {
        var rest = Substring(text)
        var refresh: Double?
        if let at = rest.firstIndex(of: "@") {
            guard let hz = Double(rest[rest.index(after: at)...]), hz.isFinite, hz >= 1, hz <= 1000 else { return nil }
            refresh = hz
            rest = rest[..<at]
        }
        let parts = rest.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "x" || $0 == "X" || $0 == "×" })
        let digits = parts.allSatisfy { part in !part.isEmpty && part.allSatisfy { $0 >= "0" && $0 <= "9" } }
        guard parts.count == 2, digits,
              let w = Int(parts[0]), let h = Int(parts[1]), (1...16_384).contains(w), (1...16_384).contains(h) else { return nil }
        self.init(width: w, height: h, refresh: refresh)
    }

    public var description: String {
        guard let refresh else { return "\(width)x\(height)" }
        let hz = refresh == refresh.rounded() ? String(Int(refresh)) : String(refresh)
        return "\(width)x\(height)@\(hz)"
    }
}

/// One mode a connector offers, as far as choosing among them goes.
public struct ModeCandidate: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var refresh: Double
    public var preferred: Bool

    public init(width: Int, height: Int, refresh: Double, preferred: Bool) {
        self.width = width
        self.height = height
        self.refresh = refresh
        self.preferred = preferred
    }

    /// Picks a mode: without a spec the preferred one (else the first); with one, a mode of
    /// that size — the closest rate within 0.5 Hz when a rate is given, else the preferred one
    /// of that size, else its highest rate. Returns the index, or nil when none matches.
    public static func choose(_ modes: [ModeCandidate], spec: ModeSpec?) -> Int? {
        guard let spec else {
            return modes.firstIndex { $0.preferred } ?? (modes.isEmpty ? nil : 0)
        }
        let sized = modes.indices.filter { modes[$0].width == spec.width && modes[$0].height == spec.height }
        if let hz = spec.refresh {
            let close = sized.filter { abs(modes[$0].refresh - hz) <= 0.5 }
            return close.min { abs(modes[$0].refresh - hz) < abs(modes[$1].refresh - hz) }
        }
        if let preferred = sized.first(where: { modes[$0].preferred }) { return preferred }
        return sized.max { modes[$0].refresh < modes[$1].refresh }
    }
}
