import CImageShim
import CPng
import FilmCore

/// libjpeg through the setjmp-guarded CImageShim helpers.
enum JPEGCodec {
    static func decode(_ bytes: [UInt8], path: String) throws -> RGBImage {
        try bytes.withUnsafeBufferPointer { buffer in
            let decoder = try JpegDecoder(buffer, path: path)
            var w: Int32 = 0, h: Int32 = 0
            guard CImageShim_jpegDecoderReadHeader(decoder.pointer, &w, &h) == 0 else { throw decoder.error() }
            guard w > 0, h > 0 else {
                throw ImageFileError.decode(path: path, format: .jpeg, code: 0, message: "image has no pixels (\(w)×\(h))")
            }
            var iccLength: UInt32 = 0
            let icc = CImageShim_jpegDecoderICC(decoder.pointer, &iccLength).map {
                Array(UnsafeBufferPointer(start: $0, count: Int(iccLength)))
            }
            var image = RGBImage(width: Int(w), height: Int(h))
            let status = image.pixels.withUnsafeMutableBufferPointer {
                CImageShim_jpegDecoderReadRGB(decoder.pointer, $0.baseAddress, Int(w) * 3)
            }
            guard status == 0 else { throw decoder.error() }
            if let icc {
                let t = try ColorConversion.toSRGB(icc: icc, path: path)
                ColorConversion.apply(t, to: &image.pixels, width: image.width, height: image.height)
            }
            return image
        }
    }

    static func encode(_ image: RGBImage, metadata: PhotoMetadata?, quality: Int, path: String) throws -> [UInt8] {
        guard (1...100).contains(quality) else {
            throw ImageFileError.invalidArgument(path: path, message: "JPEG quality \(quality) is not in 1...100")
        }
        let exif = try metadata.map {
            try ExifWriter.build($0, width: image.width, height: image.height, colorSpace: 1, path: path)
        }
        guard (exif?.count ?? 0) <= 65533 else {
            throw ImageFileError.exif(path: path, action: "embedding EXIF in JPEG", message: "\(exif!.count) bytes exceed one APP1 segment")
        }
        let encoder = try JpegEncoder(path: path)
        let status = image.pixels.withUnsafeBufferPointer { rgb in
            if let exif {
                return exif.withUnsafeBufferPointer {
                    CImageShim_jpegEncode(encoder.pointer, rgb.baseAddress, Int32(image.width), Int32(image.height),
                                          image.width * 3, Int32(quality), $0.baseAddress, UInt32($0.count))
                }
            }
            return CImageShim_jpegEncode(encoder.pointer, rgb.baseAddress, Int32(image.width), Int32(image.height),
                                         image.width * 3, Int32(quality), nil, 0)
        }
        guard status == 0 else {
            throw ImageFileError.encode(path: path, format: .jpeg, code: Int(CImageShim_jpegEncoderCode(encoder.pointer)),
                                        message: String(cString: CImageShim_jpegEncoderMessage(encoder.pointer)))
        }
        var length = 0
        guard let out = CImageShim_jpegEncoderOutput(encoder.pointer, &length), length > 0 else {
            throw ImageFileError.encode(path: path, format: .jpeg, code: 0, message: "libjpeg produced no data")
        }
        return Array(UnsafeBufferPointer(start: out, count: length))
    }
}

/// Owns a CImageShim_JpegDecoder (and, through it, libjpeg's decompress struct).
final class JpegDecoder {
    let pointer: OpaquePointer
    let path: String

    /// `buffer` must outlive the decoder.
    init(_ buffer: UnsafeBufferPointer<UInt8>, path: String) throws {
        guard let p = CImageShim_jpegDecoderCreate(buffer.baseAddress, buffer.count) else {
            throw ImageFileError.decode(path: path, format: .jpeg, code: 0, message: "out of memory")
        }
        pointer = p
        self.path = path
    }
    deinit { CImageShim_jpegDecoderDestroy(pointer) }

    func error() -> ImageFileError {
        .decode(path: path, format: .jpeg, code: Int(CImageShim_jpegDecoderCode(pointer)),
                message: String(cString: CImageShim_jpegDecoderMessage(pointer)))
    }
}

/// Owns a CImageShim_JpegEncoder and its output buffer.
final class JpegEncoder {
    let pointer: OpaquePointer
    init(path: String) throws {
        guard let p = CImageShim_jpegEncoderCreate() else {
            throw ImageFileError.encode(path: path, format: .jpeg, code: 0, message: "out of memory")
        }
        pointer = p
    }
    deinit { CImageShim_jpegEncoderDestroy(pointer) }
}

/// Owns a CImageShim_PngICC.
final class PngICC {
    let pointer: OpaquePointer
    init?(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard let p = CImageShim_pngICCRead(buffer.baseAddress, buffer.count) else { return nil }
        pointer = p
    }
    deinit { CImageShim_pngICCDestroy(pointer) }
}

/// libpng's simplified API (png_image_*), which reports errors in the struct.
enum PNGCodec {
    /// Any PNG → 8-bit sRGB RGB. 16-bit → 8-bit; grey and palette expand to RGB; alpha is
    /// composited onto black. 16-bit files without gAMA/sRGB are taken as sRGB-encoded (not
    /// linear). An iCCP profile is converted to sRGB with lcms2.
    static func decode(_ bytes: [UInt8], path: String) throws -> RGBImage {
        try bytes.withUnsafeBufferPointer { buffer in
            var png = png_image()
            png.version = UInt32(PNG_IMAGE_VERSION)
            defer { png_image_free(&png) }
            guard png_image_begin_read_from_memory(&png, buffer.baseAddress, buffer.count) != 0 else {
                throw error(png, path: path, encoding: false)
            }
            png.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
            png.format = UInt32(PNG_FORMAT_RGB)
            let w = Int(png.width), h = Int(png.height)
            guard w > 0, h > 0, w <= 65535, h <= 65535 else {
                throw ImageFileError.decode(path: path, format: .png, code: 0, message: "unsupported size \(w)×\(h)")
            }
            var image = RGBImage(width: w, height: h)
            var black = png_color(red: 0, green: 0, blue: 0)
            let ok = image.pixels.withUnsafeMutableBytes {
                png_image_finish_read(&png, &black, $0.baseAddress, Int32(w * 3), nil)
            }
            guard ok != 0 else { throw error(png, path: path, encoding: false) }

            guard let icc = PngICC(buffer) else {
                throw ImageFileError.decode(path: path, format: .png, code: 0, message: "out of memory")
            }
            if CImageShim_pngICCFailed(icc.pointer) != 0 {
                throw ImageFileError.decode(path: path, format: .png, code: 0,
                                            message: "reading iCCP: " + String(cString: CImageShim_pngICCMessage(icc.pointer)))
            }
            var length: UInt32 = 0
            if let profile = CImageShim_pngICCProfile(icc.pointer, &length), length > 0 {
                let t = try ColorConversion.toSRGB(icc: Array(UnsafeBufferPointer(start: profile, count: Int(length))), path: path)
                ColorConversion.apply(t, to: &image.pixels, width: w, height: h)
            }
            return image
        }
    }

    /// 8-bit RGB PNG with libpng's default sRGB tagging. Metadata is not written.
    static func encode(_ image: RGBImage, path: String) throws -> [UInt8] {
        var png = png_image()
        png.version = UInt32(PNG_IMAGE_VERSION)
        png.width = UInt32(image.width)
        png.height = UInt32(image.height)
        png.format = UInt32(PNG_FORMAT_RGB)
        defer { png_image_free(&png) }
        var size = 0
        // First call: size only.
        let sized = image.pixels.withUnsafeBytes {
            png_image_write_to_memory(&png, nil, &size, 0, $0.baseAddress, Int32(image.width * 3), nil)
        }
        guard sized != 0, size > 0 else { throw error(png, path: path, encoding: true) }
        var out = [UInt8](repeating: 0, count: size)
        let ok = out.withUnsafeMutableBytes { dst in
            image.pixels.withUnsafeBytes {
                png_image_write_to_memory(&png, dst.baseAddress, &size, 0, $0.baseAddress, Int32(image.width * 3), nil)
            }
        }
        guard ok != 0 else { throw error(png, path: path, encoding: true) }
        return Array(out.prefix(size))
    }

    static func error(_ png: png_image, path: String, encoding: Bool) -> ImageFileError {
        var message = withUnsafeBytes(of: png.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if message.isEmpty { message = "libpng error" }
        let code = Int(png.warning_or_error & 3)
        return encoding ? .encode(path: path, format: .png, code: code, message: message)
                        : .decode(path: path, format: .png, code: code, message: message)
    }
}
