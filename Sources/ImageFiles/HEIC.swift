import CHeif
import FilmCore
import Raster

/// What a HEIC file holds: for tests and `loopix` inspection.
public struct HEICInfo: Sendable {
    public var width: Int
    public var height: Int
    public var nclxPrimaries: Int?
    public var nclxTransfer: Int?
    public var nclxMatrix: Int?
    public var nclxFullRange: Bool?
    public var iccProfile: [UInt8]?
    /// Raw EXIF from the TIFF header on (libheif's 4-byte offset prefix removed).
    public var exif: [UInt8]?

    public init(width: Int, height: Int, nclxPrimaries: Int? = nil, nclxTransfer: Int? = nil,
                nclxMatrix: Int? = nil, nclxFullRange: Bool? = nil, iccProfile: [UInt8]? = nil, exif: [UInt8]? = nil) {
        self.width = width
        self.height = height
        self.nclxPrimaries = nclxPrimaries
        self.nclxTransfer = nclxTransfer
        self.nclxMatrix = nclxMatrix
        self.nclxFullRange = nclxFullRange
        self.iccProfile = iccProfile
        self.exif = exif
    }

    /// Reads the primary image's size, colour profiles and EXIF without decoding pixels.
    public static func read(path: String) throws -> HEICInfo {
        let bytes = try readWholeFile(path: path)
        return try bytes.withUnsafeBytes { buffer in
            let context = try HeifContext(path: path, format: .heic)
            try context.read(buffer, path: path)
            let handle = try context.primaryImage(path: path)
            var info = HEICInfo(width: Int(heif_image_handle_get_width(handle.pointer)),
                                height: Int(heif_image_handle_get_height(handle.pointer)))
            if let nclx = handle.nclx() {
                info.nclxPrimaries = Int(nclx.color_primaries.rawValue)
                info.nclxTransfer = Int(nclx.transfer_characteristics.rawValue)
                info.nclxMatrix = Int(nclx.matrix_coefficients.rawValue)
                info.nclxFullRange = nclx.full_range_flag != 0
            }
            info.iccProfile = try handle.iccProfile(path: path)
            info.exif = try handle.exif(path: path)
            return info
        }
    }
}

/// The one place libheif is called.
enum HEICCodec {
    /// `embedICC: false` leaves the colour to nclx alone (only tests use it: the container's other shape).
    static func encode(_ image: RGBImage, metadata: PhotoMetadata?, options: HEICOptions, embedICC: Bool = true,
                       path: String) throws -> [UInt8] {
        guard options.quality.isFinite, (0...1).contains(options.quality) else {
            throw ImageFileError.invalidArgument(path: path, message: "HEIC quality \(options.quality) is not in 0...1")
        }
        guard HEICOptions.x265Presets.contains(options.x265Preset) else {
            throw ImageFileError.invalidArgument(path: path, message: "unknown x265 preset \"\(options.x265Preset)\" (expected one of \(HEICOptions.x265Presets.joined(separator: ", ")))")
        }
        guard image.width <= 32768, image.height <= 32768 else {
            throw ImageFileError.invalidArgument(path: path, message: "image \(image.width)×\(image.height) is too large for HEIC")
        }
        let exif = try metadata.map {
            try ExifWriter.build($0, width: image.width, height: image.height, colorSpace: 0xFFFF, path: path)
        }
        let p3 = try ColorConversion.toDisplayP3(path: path)
        return try HEICGrid.encode(image, exif: exif, orientation: metadata?.orientation, options: options,
                                   transform: p3.transform, icc: embedICC ? p3.icc : nil, path: path)
    }

    static func decode(_ bytes: [UInt8], path: String, limit: PixelLimit) throws -> DecodedPhoto {
        try bytes.withUnsafeBytes { buffer in
            let context = try HeifContext(path: path, format: .heic)
            try context.read(buffer, path: path)
            let handle = try context.primaryImage(path: path)
            try limit.check(width: Int(heif_image_handle_get_width(handle.pointer)),
                            height: Int(heif_image_handle_get_height(handle.pointer)), format: .heic, path: path)
            if let canvas = HEIFCanvas.primarySize(in: bytes) {
                try limit.check(width: canvas.width, height: canvas.height, format: .heic, path: path)
            }
            let icc = try handle.iccProfile(path: path)
            let nclx = handle.nclx()
            let exif = (try? handle.exif(path: path)) ?? nil // damaged EXIF: the picture still decodes
            var out: OpaquePointer? = nil
            try check(heif_decode_image(handle.pointer, &out, heif_colorspace_RGB, heif_chroma_interleaved_RGB, nil),
                      path: path, encoding: false, doing: "decoding")
            guard let out else { throw ImageFileError.decode(path: path, format: .heic, code: 0, message: "libheif returned no image") }
            let decoded = HeifImage(out)
            let w = Int(heif_image_get_width(decoded.pointer, heif_channel_interleaved))
            let h = Int(heif_image_get_height(decoded.pointer, heif_channel_interleaved))
            var stride: Int32 = 0
            guard w > 0, h > 0, let plane = heif_image_get_plane_readonly(decoded.pointer, heif_channel_interleaved, &stride) else {
                throw ImageFileError.decode(path: path, format: .heic, code: 0, message: "libheif returned no RGB plane")
            }
            let transform: LcmsTransform?
            if let icc {
                transform = try ColorConversion.toSRGB(icc: icc, path: path)
            } else if let nclx {
                transform = try ColorConversion.toSRGB(nclxPrimaries: Int(nclx.color_primaries.rawValue),
                                                       transfer: Int(nclx.transfer_characteristics.rawValue), path: path)
            } else {
                transform = nil
            }
            var image = RGBImage(width: w, height: h)
            image.pixels.withUnsafeMutableBytes { dst in
                for y in 0..<h {
                    let row = dst.baseAddress! + y * w * 3
                    let src = plane + y * Int(stride)
                    if let transform {
                        transform.apply(src, row, pixelCount: w)
                    } else {
                        row.copyMemory(from: src, byteCount: w * 3)
                    }
                }
            }
            return DecodedPhoto(image: image, exif: exif)
        }
    }

    static func check(_ error: heif_error, path: String, encoding: Bool, doing: String) throws {
        guard error.code != heif_error_Ok else { return }
        let message = error.message.map { String(cString: $0) } ?? "unknown error"
        let code = Int(error.code.rawValue) * 1000 + Int(error.subcode.rawValue)
        if encoding {
            throw ImageFileError.encode(path: path, format: .heic, code: code, message: "\(doing): \(message)")
        }
        throw ImageFileError.decode(path: path, format: .heic, code: code, message: "\(doing): \(message)")
    }
}

/// Owns a heif_context.
final class HeifContext {
    let pointer: OpaquePointer

    init(path: String, format: ImageFormat) throws {
        guard let p = heif_context_alloc() else {
            throw ImageFileError.encode(path: path, format: format, code: 0, message: "cannot allocate a libheif context")
        }
        pointer = p
    }
    deinit { heif_context_free(pointer) }

    /// The bytes must outlive this context.
    func read(_ buffer: UnsafeRawBufferPointer, path: String) throws {
        try HEICCodec.check(heif_context_read_from_memory_without_copy(pointer, buffer.baseAddress, buffer.count, nil),
                            path: path, encoding: false, doing: "reading the file structure")
    }

    func primaryImage(path: String) throws -> HeifImageHandle {
        var handle: OpaquePointer? = nil
        try HEICCodec.check(heif_context_get_primary_image_handle(pointer, &handle), path: path, encoding: false, doing: "finding the primary image")
        guard let handle else { throw ImageFileError.decode(path: path, format: .heic, code: 0, message: "no primary image") }
        return HeifImageHandle(handle)
    }

    /// Serialises the file through a heif_writer whose userdata is a `ByteSink`.
    func writeToMemory(path: String) throws -> [UInt8] {
        final class ByteSink { var bytes: [UInt8] = [] }
        let sink = ByteSink()
        var writer = heif_writer(writer_api_version: 1, write: { _, data, size, userdata in
            let sink = Unmanaged<ByteSink>.fromOpaque(userdata!).takeUnretainedValue()
            if let data, size > 0 {
                sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size))
            }
            return heif_error(code: heif_error_Ok, subcode: heif_suberror_Unspecified, message: heifSuccessMessage())
        })
        let error = withExtendedLifetime(sink) {
            heif_context_write(pointer, &writer, Unmanaged.passUnretained(sink).toOpaque())
        }
        try HEICCodec.check(error, path: path, encoding: true, doing: "writing the file")
        return sink.bytes
    }
}

/// libheif's success message: static storage, as heif_error requires.
private func heifSuccessMessage() -> UnsafePointer<CChar> {
    let s: StaticString = "Success"
    return UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// Owns a heif_image_handle.
final class HeifImageHandle {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { heif_image_handle_release(pointer) }

    /// A copy of the nclx profile, if the file has one.
    func nclx() -> heif_color_profile_nclx? {
        var p: UnsafeMutablePointer<heif_color_profile_nclx>? = nil
        let error = heif_image_handle_get_nclx_color_profile(pointer, &p)
        guard error.code == heif_error_Ok, let p else { return nil }
        defer { heif_nclx_color_profile_free(p) }
        return p.pointee
    }

    func iccProfile(path: String) throws -> [UInt8]? {
        let size = heif_image_handle_get_raw_color_profile_size(pointer)
        guard size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        try HEICCodec.check(bytes.withUnsafeMutableBytes { heif_image_handle_get_raw_color_profile(pointer, $0.baseAddress) },
                            path: path, encoding: false, doing: "reading the ICC profile")
        return bytes
    }

    /// The first Exif block, from its TIFF header on.
    func exif(path: String) throws -> [UInt8]? {
        let count = heif_image_handle_get_number_of_metadata_blocks(pointer, "Exif")
        guard count > 0 else { return nil }
        var ids = [heif_item_id](repeating: 0, count: Int(count))
        let n = heif_image_handle_get_list_of_metadata_block_IDs(pointer, "Exif", &ids, count)
        guard n > 0 else { return nil }
        let size = heif_image_handle_get_metadata_size(pointer, ids[0])
        guard size > 4 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        try HEICCodec.check(bytes.withUnsafeMutableBytes { heif_image_handle_get_metadata(pointer, ids[0], $0.baseAddress) },
                            path: path, encoding: false, doing: "reading EXIF")
        let offset = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        guard offset <= size - 4 else {
            throw ImageFileError.decode(path: path, format: .heic, code: 0, message: "EXIF block's TIFF offset \(offset) is past its end (\(size) bytes)")
        }
        return Array(bytes[(4 + offset)...])
    }
}

/// Owns a heif_image.
final class HeifImage {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { heif_image_release(pointer) }

    convenience init(width: Int, height: Int, colorspace: heif_colorspace, chroma: heif_chroma, path: String) throws {
        var p: OpaquePointer? = nil
        try HEICCodec.check(heif_image_create(Int32(width), Int32(height), colorspace, chroma, &p),
                            path: path, encoding: true, doing: "creating an image")
        guard let p else { throw ImageFileError.encode(path: path, format: .heic, code: 0, message: "libheif returned no image") }
        self.init(p)
    }

    func addPlane(_ channel: heif_channel, width: Int, height: Int, path: String) throws {
        try HEICCodec.check(heif_image_add_plane(pointer, channel, Int32(width), Int32(height), 8),
                            path: path, encoding: true, doing: "allocating a plane")
    }

    func setNCLX(_ nclx: HeifNCLX, path: String) throws {
        try HEICCodec.check(heif_image_set_nclx_color_profile(pointer, nclx.pointer), path: path, encoding: true, doing: "setting nclx")
    }
}

/// Owns a heif_color_profile_nclx.
final class HeifNCLX {
    let pointer: UnsafeMutablePointer<heif_color_profile_nclx>

    init(primaries: UInt32, transfer: UInt32, matrix: UInt32, fullRange: Bool, path: String) throws {
        guard let nclx = heif_nclx_color_profile_alloc() else {
            throw ImageFileError.encode(path: path, format: .heic, code: 0, message: "cannot allocate an nclx profile")
        }
        pointer = nclx
        nclx.pointee.color_primaries = heif_color_primaries(rawValue: primaries)
        nclx.pointee.transfer_characteristics = heif_transfer_characteristics(rawValue: transfer)
        nclx.pointee.matrix_coefficients = heif_matrix_coefficients(rawValue: matrix)
        nclx.pointee.full_range_flag = fullRange ? 1 : 0
    }
    deinit { heif_nclx_color_profile_free(pointer) }
}

/// Owns a heif_encoder.
final class HeifEncoder {
    let pointer: OpaquePointer
    init(context: HeifContext, path: String) throws {
        var p: OpaquePointer? = nil
        try HEICCodec.check(heif_context_get_encoder_for_format(context.pointer, heif_compression_HEVC, &p),
                            path: path, encoding: true, doing: "finding an HEVC encoder")
        guard let p else { throw ImageFileError.encode(path: path, format: .heic, code: 0, message: "no HEVC encoder") }
        pointer = p
    }
    deinit { heif_encoder_release(pointer) }
}

/// Owns heif_encoding_options.
final class HeifEncodingOptions {
    let pointer: UnsafeMutablePointer<heif_encoding_options>
    init(path: String) throws {
        guard let p = heif_encoding_options_alloc() else {
            throw ImageFileError.encode(path: path, format: .heic, code: 0, message: "cannot allocate encoding options")
        }
        pointer = p
    }
    deinit { heif_encoding_options_free(pointer) }
}
