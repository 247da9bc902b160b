#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CExif
import Foundation
import System

/// Parses raw EXIF into tag names and value strings with libexif.
///
/// Input: TIFF header onward (`II*\0` / `MM\0*`), or the same preceded by `Exif\0\0`.
/// Keys are libexif's tag names (`Make`, `Model`, `FocalLength`, `ExposureTime`,
/// `ISOSpeedRatings`, `DateTimeOriginal`, `Orientation`, `ImageDescription`, `Software`,
/// `LensModel`…); when a tag occurs in several IFDs the first of IFD0, EXIF, GPS,
/// Interoperability, IFD1 wins. Values:
/// - ASCII: the text (trailing NULs and spaces removed);
/// - integers (BYTE, SHORT, LONG and signed): decimal, several components joined by ", ";
/// - rationals, FLOAT, DOUBLE: decimal, integers without a fraction ("28", "0.008", "4.74");
///   a zero denominator gives "0";
/// - UNDEFINED: the text if all bytes are printable ASCII ("0232"), else hex bytes
///   ("01 02 03 00"), or "<N bytes>" above 64 bytes.
public enum ExifReader {
    public static func tags(_ exif: [UInt8]) throws -> [String: String] {
        try tags(exif, path: memoryPath)
    }

    static let exifHeader: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0] // "Exif\0\0"

    static func tags(_ exif: [UInt8], path: String) throws -> [String: String] {
        let data = try load(exif, path: path)
        let order = exif_data_get_byte_order(data.pointer)
        var result: [String: String] = [:]
        for ifd in [EXIF_IFD_0, EXIF_IFD_EXIF, EXIF_IFD_GPS, EXIF_IFD_INTEROPERABILITY, EXIF_IFD_1] {
            guard let content = data.content(ifd) else { continue }
            for i in 0..<Int(content.pointee.count) {
                guard let entry = content.pointee.entries?[i] else { continue }
                let tag = entry.pointee.tag
                let name = exif_tag_get_name_in_ifd(tag, ifd).map { String(cString: $0) }
                    ?? "Tag0x" + String(tag.rawValue, radix: 16)
                if result[name] == nil {
                    result[name] = format(entry.pointee, order: order)
                }
            }
        }
        if result.isEmpty {
            throw ImageFileError.exif(path: path, action: "parsing EXIF", message: "no entries found in \(exif.count) bytes")
        }
        return result
    }

    /// EXIF (TIFF header on, or after `Exif\0\0`) parsed by libexif as it is: without
    /// FOLLOW_SPECIFICATION, which "fixes" loaded data by inventing mandatory tags (DateTime = now).
    static func load(_ exif: [UInt8], path: String) throws -> ExifDataHandle {
        var bytes = exif
        if !bytes.starts(with: exifHeader) { bytes = exifHeader + bytes }
        guard hasTIFFHeader(bytes.dropFirst(6)) else {
            throw ImageFileError.exif(path: path, action: "parsing EXIF",
                                      message: "no TIFF header (starts with \(hexPrefix(Array(exif), 4)))")
        }
        let data = try ExifDataHandle(path: path)
        exif_data_unset_option(data.pointer, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        bytes.withUnsafeBufferPointer { exif_data_load_data(data.pointer, $0.baseAddress, UInt32($0.count)) }
        return data
    }

    /// Whether `bytes` start like TIFF data, little- or big-endian.
    static func hasTIFFHeader(_ bytes: some Collection<UInt8>) -> Bool {
        let start = Array(bytes.prefix(4))
        return start == [0x49, 0x49, 0x2A, 0] || start == [0x4D, 0x4D, 0, 0x2A]
    }

    /// IFD0's Orientation when it is 1...8; nil when absent, out of range or unreadable (a
    /// damaged EXIF block must not make the picture unreadable).
    static func orientation(_ exif: [UInt8]) -> Int? {
        guard let data = try? load(exif, path: memoryPath), let ifd0 = data.content(EXIF_IFD_0),
              let entry = exif_content_get_entry(ifd0, EXIF_TAG_ORIENTATION),
              entry.pointee.format == EXIF_FORMAT_SHORT, entry.pointee.components >= 1, let value = entry.pointee.data else { return nil }
        let v = Int(exif_get_short(value, exif_data_get_byte_order(data.pointer)))
        return (1...8).contains(v) ? v : nil
    }

    static func format(_ e: ExifEntry, order: ExifByteOrder) -> String {
        guard let data = e.data, e.size > 0 else { return "" }
        let count = Int(e.components)
        let size = Int(e.size)
        func numbers(_ width: Int, _ read: (UnsafePointer<UInt8>) -> String) -> String {
            guard count > 0, width * count <= size else { return "" }
            return (0..<count).map { read(UnsafePointer(data) + $0 * width) }.joined(separator: ", ")
        }
        switch e.format {
        case EXIF_FORMAT_ASCII:
            let bytes = UnsafeBufferPointer(start: data, count: size).prefix { $0 != 0 }
            var s = String(decoding: bytes, as: UTF8.self)
            while s.hasSuffix(" ") { s.removeLast() }
            return s
        case EXIF_FORMAT_BYTE: return numbers(1) { String($0.pointee) }
        case EXIF_FORMAT_SBYTE: return numbers(1) { String(Int8(bitPattern: $0.pointee)) }
        case EXIF_FORMAT_SHORT: return numbers(2) { String(exif_get_short($0, order)) }
        case EXIF_FORMAT_SSHORT: return numbers(2) { String(exif_get_sshort($0, order)) }
        case EXIF_FORMAT_LONG: return numbers(4) { String(exif_get_long($0, order)) }
        case EXIF_FORMAT_SLONG: return numbers(4) { String(exif_get_slong($0, order)) }
        case EXIF_FORMAT_RATIONAL:
            return numbers(8) {
                let r = exif_get_rational($0, order)
                return r.denominator == 0 ? "0" : decimal(Double(r.numerator) / Double(r.denominator))
            }
        case EXIF_FORMAT_SRATIONAL:
            return numbers(8) {
                let r = exif_get_srational($0, order)
                return r.denominator == 0 ? "0" : decimal(Double(r.numerator) / Double(r.denominator))
            }
        case EXIF_FORMAT_FLOAT:
            return numbers(4) {
                let bits = UInt32(truncatingIfNeeded: exif_get_long($0, order))
                return decimal(Double(Float(bitPattern: bits)))
            }
        case EXIF_FORMAT_DOUBLE:
            return numbers(8) {
                let hi = UInt64(exif_get_long($0, order)), lo = UInt64(exif_get_long($0 + 4, order))
                let bits = order == EXIF_BYTE_ORDER_MOTOROLA ? (hi << 32 | lo) : (lo << 32 | hi)
                return decimal(Double(bitPattern: bits))
            }
        default:
            let bytes = UnsafeBufferPointer(start: data, count: size)
            if size > 64 { return "<\(size) bytes>" }
            let trimmed = bytes.reversed().drop { $0 == 0 }.reversed()
            if !trimmed.isEmpty, trimmed.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
                return String(decoding: trimmed, as: UTF8.self)
            }
            return bytes.map { hexByte($0) }.joined(separator: " ")
        }
    }

    static func decimal(_ v: Double) -> String {
        if v.isFinite, v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
        return String(v)
    }
}

func hexByte(_ b: UInt8) -> String {
    let s = String(b, radix: 16)
    return s.count == 1 ? "0" + s : s
}

func hexPrefix(_ bytes: [UInt8], _ n: Int) -> String {
    if bytes.isEmpty { return "empty" }
    return bytes.prefix(n).map { "0x" + hexByte($0) }.joined(separator: " ")
}

/// Owns one ExifData (exif_data_unref in deinit).
final class ExifDataHandle {
    let pointer: UnsafeMutablePointer<ExifData>

    init(path: String) throws {
        guard let p = exif_data_new() else {
            throw ImageFileError.exif(path: path, action: "allocating EXIF data", message: "out of memory")
        }
        pointer = p
    }
    deinit { exif_data_unref(pointer) }

    /// Puts an entry with a copy of `bytes` into `ifd`, replacing one with the same tag.
    /// `bytes` must be in this data's byte order.
    func set(_ ifd: ExifIfd, _ tag: ExifTag, _ format: ExifFormat, components: Int, _ bytes: UnsafeRawBufferPointer,
             path: String) throws {
        guard let content = content(ifd), let entry = exif_entry_new() else {
            throw ImageFileError.exif(path: path, action: "building EXIF", message: "out of memory")
        }
        defer { exif_entry_unref(entry) } // the content keeps its own reference
        if let old = exif_content_get_entry(content, tag) { exif_content_remove_entry(content, old) }
        // libexif frees entry data with its default allocator, which is free().
        guard let buffer = malloc(max(1, bytes.count)) else {
            throw ImageFileError.exif(path: path, action: "building EXIF", message: "out of memory")
        }
        if let source = bytes.baseAddress { buffer.copyMemory(from: source, byteCount: bytes.count) }
        entry.pointee.tag = tag
        entry.pointee.format = format
        entry.pointee.components = UInt(components)
        entry.pointee.size = UInt32(bytes.count)
        entry.pointee.data = buffer.assumingMemoryBound(to: UInt8.self)
        exif_content_add_entry(content, entry)
    }

    func content(_ ifd: ExifIfd) -> UnsafeMutablePointer<ExifContent>? {
        let ifds = pointer.pointee.ifd
        switch ifd {
        case EXIF_IFD_0: return ifds.0
        case EXIF_IFD_1: return ifds.1
        case EXIF_IFD_EXIF: return ifds.2
        case EXIF_IFD_GPS: return ifds.3
        case EXIF_IFD_INTEROPERABILITY: return ifds.4
        default: return nil
        }
    }
}

/// Builds EXIF with libexif from `PhotoMetadata`.
enum ExifWriter {
    /// `Exif\0\0` followed by little-endian TIFF data (the JPEG APP1 payload).
    /// `colorSpace`: EXIF ColorSpace, 1 = sRGB, 0xFFFF = uncalibrated (Display P3 HEIC).
    static func build(_ m: PhotoMetadata, width: Int, height: Int, colorSpace: UInt16, path: String) throws -> [UInt8] {
        let data = try ExifDataHandle(path: path)
        let d = data.pointer
        exif_data_set_byte_order(d, EXIF_BYTE_ORDER_INTEL)
        exif_data_set_data_type(d, EXIF_DATA_TYPE_COMPRESSED)
        let order = EXIF_BYTE_ORDER_INTEL

        func add(_ ifd: ExifIfd, _ tag: ExifTag, _ format: ExifFormat, components: Int, _ bytes: [UInt8]) throws {
            try bytes.withUnsafeBytes { try data.set(ifd, tag, format, components: components, $0, path: path) }
        }
        func ascii(_ ifd: ExifIfd, _ tag: ExifTag, _ s: String) throws {
            let bytes = Array(s.utf8.filter { $0 != 0 }) + [0]
            try add(ifd, tag, EXIF_FORMAT_ASCII, components: bytes.count, bytes)
        }
        func short(_ ifd: ExifIfd, _ tag: ExifTag, _ v: UInt16) throws {
            var b = [UInt8](repeating: 0, count: 2)
            exif_set_short(&b, order, v)
            try add(ifd, tag, EXIF_FORMAT_SHORT, components: 1, b)
        }
        func long(_ ifd: ExifIfd, _ tag: ExifTag, _ v: UInt32) throws {
            var b = [UInt8](repeating: 0, count: 4)
            exif_set_long(&b, order, v)
            try add(ifd, tag, EXIF_FORMAT_LONG, components: 1, b)
        }
        func rational(_ ifd: ExifIfd, _ tag: ExifTag, _ r: (UInt32, UInt32)) throws {
            var b = [UInt8](repeating: 0, count: 8)
            exif_set_rational(&b, order, ExifRational(numerator: r.0, denominator: r.1))
            try add(ifd, tag, EXIF_FORMAT_RATIONAL, components: 1, b)
        }
        func positive(_ v: Double, _ name: String) throws -> Double {
            guard v.isFinite, v > 0, v < 1e6 else {
                throw ImageFileError.invalidArgument(path: path, message: "\(name) \(v) is not a positive number")
            }
            return v
        }

        if let source = m.sourceExif { try carry(source, into: data, path: path) }
        if let v = m.make { try ascii(EXIF_IFD_0, EXIF_TAG_MAKE, v) }
        if let v = m.model { try ascii(EXIF_IFD_0, EXIF_TAG_MODEL, v) }
        if let v = m.orientation {
            guard (1...8).contains(v) else {
                throw ImageFileError.invalidArgument(path: path, message: "EXIF orientation \(v) is not in 1...8")
            }
            try short(EXIF_IFD_0, EXIF_TAG_ORIENTATION, UInt16(v))
        }
        if let v = m.presetName { try ascii(EXIF_IFD_0, EXIF_TAG_IMAGE_DESCRIPTION, v) }
        try ascii(EXIF_IFD_0, EXIF_TAG_SOFTWARE, m.presetName.map { "Loopix \(loopixVersion) (\($0))" } ?? "Loopix \(loopixVersion)")
        try add(EXIF_IFD_EXIF, EXIF_TAG_EXIF_VERSION, EXIF_FORMAT_UNDEFINED, components: 4, Array("0232".utf8))
        try short(EXIF_IFD_EXIF, EXIF_TAG_COLOR_SPACE, colorSpace)
        try long(EXIF_IFD_EXIF, EXIF_TAG_PIXEL_X_DIMENSION, UInt32(clamping: width))
        try long(EXIF_IFD_EXIF, EXIF_TAG_PIXEL_Y_DIMENSION, UInt32(clamping: height))
        if let date = m.date {
            let s = exifDateString(date)
            try ascii(EXIF_IFD_0, EXIF_TAG_DATE_TIME, s)
            // A developed copy keeps when its source was taken.
            if let exif = data.content(EXIF_IFD_EXIF), exif_content_get_entry(exif, EXIF_TAG_DATE_TIME_ORIGINAL) == nil {
                try ascii(EXIF_IFD_EXIF, EXIF_TAG_DATE_TIME_ORIGINAL, s)
                try ascii(EXIF_IFD_EXIF, EXIF_TAG_DATE_TIME_DIGITIZED, s)
            }
        }
        if m.subSecondTime, let date = m.date {
            let t = date.timeIntervalSince1970
            let micro = min(999_999, max(0, Int(((t - t.rounded(.down)) * 1e6).rounded(.down))))
            let digits = String(repeating: "0", count: 6 - String(micro).count) + String(micro)
            for tag in [EXIF_TAG_SUB_SEC_TIME, EXIF_TAG_SUB_SEC_TIME_ORIGINAL, EXIF_TAG_SUB_SEC_TIME_DIGITIZED] {
                try ascii(EXIF_IFD_EXIF, tag, digits)
            }
        }
        if let comment = m.userComment {
            // The character code (8 bytes, "ASCII" and NULs), then the text without a terminator.
            let text = Array("ASCII\0\0\0".utf8) + Array(comment.utf8.filter { $0 != 0 && $0 < 0x80 })
            try add(EXIF_IFD_EXIF, EXIF_TAG_USER_COMMENT, EXIF_FORMAT_UNDEFINED, components: text.count, text)
        }
        if let v = m.exposureTime {
            try rational(EXIF_IFD_EXIF, EXIF_TAG_EXPOSURE_TIME, exposureRational(try positive(v, "exposure time")))
        }
        if let v = m.iso {
            guard v > 0 else { throw ImageFileError.invalidArgument(path: path, message: "ISO \(v) is not positive") }
            try short(EXIF_IFD_EXIF, EXIF_TAG_ISO_SPEED_RATINGS, UInt16(clamping: v)) // 65535 means "or more"
        }
        if let v = m.focalLength {
            try rational(EXIF_IFD_EXIF, EXIF_TAG_FOCAL_LENGTH, decimalRational(try positive(v, "focal length"), scale: 100))
        }
        if let v = m.focalLength35mm {
            guard v > 0 else { throw ImageFileError.invalidArgument(path: path, message: "35 mm focal length \(v) is not positive") }
            try short(EXIF_IFD_EXIF, EXIF_TAG_FOCAL_LENGTH_IN_35MM_FILM, UInt16(clamping: v))
        }
        if let v = m.lensModel { try ascii(EXIF_IFD_EXIF, EXIF_TAG_LENS_MODEL, v) }

        var out: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt32 = 0
        exif_data_save_data(d, &out, &size)
        guard let out, size > 6 else {
            throw ImageFileError.exif(path: path, action: "serialising EXIF", message: "libexif produced no data")
        }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(size)))
    }

    /// What a developed copy keeps of its source's EXIF: who took it, with what, when, how
    /// exposed, and (the whole GPS IFD) where. Not Orientation (readers hand out upright pixels),
    /// sizes, colour space, thumbnails, maker notes (offsets into the old file) or serial numbers.
    static let carriedTags: [(ExifIfd, [ExifTag])] = [
        (EXIF_IFD_0, [EXIF_TAG_MAKE, EXIF_TAG_MODEL, EXIF_TAG_ARTIST, EXIF_TAG_COPYRIGHT]),
        (EXIF_IFD_EXIF, [
            EXIF_TAG_DATE_TIME_ORIGINAL, EXIF_TAG_DATE_TIME_DIGITIZED, EXIF_TAG_OFFSET_TIME_ORIGINAL,
            EXIF_TAG_OFFSET_TIME_DIGITIZED, EXIF_TAG_SUB_SEC_TIME_ORIGINAL, EXIF_TAG_SUB_SEC_TIME_DIGITIZED,
            EXIF_TAG_EXPOSURE_TIME, EXIF_TAG_FNUMBER, EXIF_TAG_EXPOSURE_PROGRAM, EXIF_TAG_ISO_SPEED_RATINGS,
            EXIF_TAG_SENSITIVITY_TYPE, EXIF_TAG_STANDARD_OUTPUT_SENSITIVITY, EXIF_TAG_RECOMMENDED_EXPOSURE_INDEX,
            EXIF_TAG_SHUTTER_SPEED_VALUE, EXIF_TAG_APERTURE_VALUE, EXIF_TAG_BRIGHTNESS_VALUE, EXIF_TAG_EXPOSURE_BIAS_VALUE,
            EXIF_TAG_MAX_APERTURE_VALUE, EXIF_TAG_SUBJECT_DISTANCE, EXIF_TAG_METERING_MODE, EXIF_TAG_LIGHT_SOURCE,
            EXIF_TAG_FLASH, EXIF_TAG_FOCAL_LENGTH, EXIF_TAG_FOCAL_LENGTH_IN_35MM_FILM, EXIF_TAG_EXPOSURE_MODE,
            EXIF_TAG_WHITE_BALANCE, EXIF_TAG_DIGITAL_ZOOM_RATIO, EXIF_TAG_SCENE_CAPTURE_TYPE, EXIF_TAG_SUBJECT_DISTANCE_RANGE,
            EXIF_TAG_LENS_SPECIFICATION, EXIF_TAG_LENS_MAKE, EXIF_TAG_LENS_MODEL,
        ]),
    ]

    /// Copies the carried tags of `source` into `data` (whose byte order is little-endian).
    static func carry(_ source: [UInt8], into data: ExifDataHandle, path: String) throws {
        let from = try ExifReader.load(source, path: path)
        exif_data_set_byte_order(from.pointer, EXIF_BYTE_ORDER_INTEL) // converts every entry's numbers
        func copy(_ ifd: ExifIfd, where wanted: (ExifTag) -> Bool) throws {
            guard let content = from.content(ifd) else { return }
            for i in 0..<Int(content.pointee.count) {
                guard let entry = content.pointee.entries?[i]?.pointee, wanted(entry.tag) else { continue }
                try data.set(ifd, entry.tag, entry.format, components: Int(entry.components),
                             UnsafeRawBufferPointer(start: entry.data, count: entry.data == nil ? 0 : Int(entry.size)), path: path)
            }
        }
        for (ifd, tags) in carriedTags {
            try copy(ifd) { tag in tags.contains { $0 == tag } }
        }
        try copy(EXIF_IFD_GPS) { _ in true }
    }

    /// Local time, "YYYY:MM:DD HH:MM:SS".
    static func exifDateString(_ date: Date) -> String {
        var t = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&t, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900):\(two(parts.tm_mon + 1)):\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }

    /// 1/N for exposures shorter than a second that are (close to) a unit fraction, else a decimal.
    static func exposureRational(_ t: Double) -> (UInt32, UInt32) {
        if t < 1 {
            let n = (1 / t).rounded()
            if abs(1 / n - t) / t < 0.001 { return (1, UInt32(n)) }
        }
        return decimalRational(t, scale: 1_000_000)
    }

    static func decimalRational(_ v: Double, scale: UInt64) -> (UInt32, UInt32) {
        var num = UInt64((v * Double(scale)).rounded())
        var den = scale
        var a = num, b = den
        while b != 0 { (a, b) = (b, a % b) }
        if a > 1 { num /= a; den /= a }
        while num > UInt64(UInt32.max) { num /= 10; den = max(1, den / 10) }
        return (UInt32(num), UInt32(den))
    }
}
