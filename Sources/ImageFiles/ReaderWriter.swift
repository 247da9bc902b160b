#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FilmCore
import System
import Raster

/// A decoded photo and the EXIF it carried.
public struct DecodedPhoto: Sendable, Equatable {
    /// Upright: a JPEG's EXIF orientation has been applied, a HEIC's irot/imir by libheif.
    public var image: RGBImage
    /// From the TIFF header on (JPEG APP1, PNG eXIf, HEIC Exif item); nil when there is none.
    /// Its Orientation tag describes the stored pixels, not `image`.
    public var exif: [UInt8]?
}

/// Reads photos into sRGB 8-bit RGB.
public enum ImageReader {
    /// Reads JPEG, PNG or HEIC (detected by magic bytes, not extension) into sRGB 8-bit RGB.
    ///
    /// Colour-managed: an embedded RGB ICC profile (JPEG APP2, PNG iCCP, HEIC `prof`) is
    /// converted to sRGB with lcms2 (relative colorimetric); a HEIC without ICC but with nclx
    /// (e.g. P3-D65 primaries 12) is converted from those primaries/transfer. Without either the
    /// pixels are taken as sRGB. Non-RGB profiles (a grey profile on a greyscale JPEG) are ignored.
    /// 16-bit PNG → 8-bit; grey and palette → RGB; alpha is composited onto black.
    /// Pictures come out upright: a JPEG's EXIF orientation is applied while decoding (rows
    /// scattered into place, no second copy), HEIC irot/imir by libheif. A PNG's eXIf
    /// orientation is not applied (libpng, browsers and most viewers ignore it).
    /// CMYK JPEGs are rejected (libjpeg cannot convert them to RGB). Corrupt or truncated
    /// JPEG data is an error, not a grey-filled picture. The whole file is read into memory first.
    ///
    /// An image whose declared size exceeds `limit` is refused (`.tooLarge`) before anything
    /// of its size is allocated; the pixels are then written into memory that is not zeroed
    /// first, so a file whose data ends early costs only the rows it really had.
    public static func read(path: String, limit: PixelLimit = .forThisMachine) throws -> RGBImage {
        try readPhoto(path: path, limit: limit).image
    }

    /// `read`, with the file's EXIF.
    /// A block that is not TIFF data is dropped (`exif` nil): it can be neither read nor carried.
    public static func readPhoto(path: String, limit: PixelLimit = .forThisMachine) throws -> DecodedPhoto {
        try decode(try readWholeFile(path: path), path: path, limit: limit)
    }

    /// `readPhoto` of bytes already read (`path` names them in errors).
    public static func decode(_ bytes: [UInt8], path: String, limit: PixelLimit = .forThisMachine) throws -> DecodedPhoto {
        var photo: DecodedPhoto
        switch try detect(bytes, path: path) {
        case .jpeg: photo = try JPEGCodec.decode(bytes, path: path, limit: limit)
        case .png: photo = try PNGCodec.decode(bytes, path: path, limit: limit)
        case .heic: photo = try HEICCodec.decode(bytes, path: path, limit: limit)
        }
        if let exif = photo.exif, !ExifReader.hasTIFFHeader(exif) { photo.exif = nil }
        return photo
    }

    /// A PNG with its alpha channel (0: transparent … 255: opaque, one byte a pixel), colour
    /// as `read` gives it but not composited: overlays such as the booth's collage templates.
    public static func readPNGWithAlpha(path: String, limit: PixelLimit = .forThisMachine) throws -> (image: RGBImage, alpha: [UInt8]) {
        let bytes = try readWholeFile(path: path)
        guard try detect(bytes, path: path) == .png else {
            throw ImageFileError.unknownFormat(path: path, detail: "not a PNG (a template needs its transparency)")
        }
        return try PNGCodec.decodeWithAlpha(bytes, path: path, limit: limit)
    }

    /// The format from the first bytes: FF D8 FF (JPEG), 89 P N G (PNG), "ftyp" at offset 4 (HEIF).
    static func detect(_ bytes: [UInt8], path: String) throws -> ImageFormat {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if bytes.count >= 12, Array(bytes[4..<8]) == Array("ftyp".utf8) { return .heic }
        let detail = bytes.isEmpty ? "the file is empty" : "starts with \(hexPrefix(bytes, 4))"
        throw ImageFileError.unknownFormat(path: path, detail: detail)
    }
}

/// Encodes and writes photos.
public enum ImageWriter {
    /// Encodes and writes atomically (see `AtomicFile`). `replace: false` → `.alreadyExists`
    /// if the file exists (it is never overwritten). The image is encoded before any file is
    /// created, so encoding errors leave nothing behind.
    ///
    /// HEIC: converted to Display P3 and tagged with both nclx (12/13/6, full range) and the
    /// Display P3 ICC profile; EXIF as described in `PhotoMetadata`; a metadata orientation
    /// also becomes irot/imir. JPEG: Display P3 too, with the ICC profile (APP2) and EXIF in
    /// APP1 (no JFIF APP0 then).
    /// PNG: sRGB, metadata ignored.
    public static func write(_ image: RGBImage, to path: String, format: ImageFormat, metadata: PhotoMetadata? = nil,
                             heic: HEICOptions = HEICOptions(), jpegQuality: Int = 92, replace: Bool = false) throws {
        if !replace {
            // Cheap early check so that an existing file does not cost an encode; the rename
            // re-checks atomically.
            var st = stat()
            if lstat(path, &st) == 0 { throw ImageFileError.alreadyExists(path: path) }
        }
        let bytes = try encode(image, format: format, metadata: metadata, heic: heic, jpegQuality: jpegQuality, path: path)
        try AtomicFile.write(bytes, to: path, replace: replace)
    }

    /// The same, as `name` inside an open directory (see `AtomicFile.write(inDirectory:…)`):
    /// for writes that must not follow a path that can change under them. `path` names the
    /// file in errors.
    public static func write(_ image: RGBImage, inDirectory directory: borrowing FileDescriptor, name: String, path: String, format: ImageFormat,
                             replace: Bool = false) throws {
        var st = stat()
        if !replace && fstatat(directory.rawValue, name, &st, AT_SYMLINK_NOFOLLOW) == 0 { throw ImageFileError.alreadyExists(path: path) }
        let bytes = try encode(image, format: format, metadata: nil, heic: HEICOptions(), jpegQuality: 92, path: path)
        try AtomicFile.write(bytes, inDirectory: directory, name: name, path: path, replace: replace)
    }

    /// A PNG with an alpha channel (one byte a pixel, 255 opaque), written atomically: overlays
    /// such as the booth's collage templates.
    public static func writePNG(_ image: RGBImage, alpha: [UInt8], to path: String, replace: Bool = false) throws {
        try AtomicFile.write(try PNGCodec.encode(image, alpha: alpha, path: path), to: path, replace: replace)
    }

    /// A quick sRGB JPEG without profile or EXIF: a live preview frame for a browser.
    public static func previewJPEG(_ image: RGBImage, quality: Int) throws -> [UInt8] {
        try JPEGCodec.encode(image, metadata: nil, quality: quality, displayP3: false, path: memoryPath)
    }

    /// Encodes to bytes without touching the filesystem. Errors name the path `<memory>`.
    public static func encode(_ image: RGBImage, format: ImageFormat, metadata: PhotoMetadata?, heic: HEICOptions,
                              jpegQuality: Int) throws -> [UInt8] {
        try encode(image, format: format, metadata: metadata, heic: heic, jpegQuality: jpegQuality, path: memoryPath)
    }

    static func encode(_ image: RGBImage, format: ImageFormat, metadata: PhotoMetadata?, heic: HEICOptions,
                       jpegQuality: Int, path: String) throws -> [UInt8] {
        switch format {
        case .heic: return try HEICCodec.encode(image, metadata: metadata, options: heic, path: path)
        case .jpeg: return try JPEGCodec.encode(image, metadata: metadata, quality: jpegQuality, path: path)
        case .png: return try PNGCodec.encode(image, path: path)
        }
    }
}

/// `count` bytes filled by `fill`, in fresh memory that is not zeroed first: the kernel maps in
/// the pages of a large allocation only as they are written.
func uninitializedPixels(count: Int, _ fill: (UnsafeMutablePointer<UInt8>) throws -> Void) throws -> [UInt8] {
    try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        try fill(buffer.baseAddress!)
        initialized = count
    }
}
