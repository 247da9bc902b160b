import CImageShim
import CPng
import FilmCore
import Raster

/// libjpeg through the setjmp-guarded CImageShim helpers.
enum JPEGCodec {
    /// `applyProfile: false` leaves the pixels in the embedded profile's space (tests look at them).
    static func decode(_ bytes: [UInt8], path: String, limit: PixelLimit, applyProfile: Bool = true) throws -> DecodedPhoto {
        try bytes.withUnsafeBufferPointer { buffer in
            let decoder = try JpegDecoder(buffer, path: path)
            var w32: Int32 = 0, h32: Int32 = 0
            guard CImageShim_jpegDecoderReadHeader(decoder.pointer, &w32, &h32) == 0 else { throw decoder.error() }
            let w = Int(w32), h = Int(h32)
            guard w > 0, h > 0 else {
                throw ImageFileError.decode(path: path, format: .jpeg, code: 0, message: "image has no pixels (\(w)×\(h))")
            }
            try limit.check(width: w, height: h, format: .jpeg, path: path)
            // A progressive JPEG keeps every coefficient (2 bytes each, up to 3 per pixel at
            // 4:4:4): allow that and some, not more.
            guard CImageShim_jpegDecoderStart(decoder.pointer, limit.maxPixels * 8 + (16 << 20)) == 0 else { throw decoder.error() }
            var iccLength: UInt32 = 0, exifLength: UInt32 = 0
            let icc = CImageShim_jpegDecoderICC(decoder.pointer, &iccLength).map {
                Array(UnsafeBufferPointer(start: $0, count: Int(iccLength)))
            }
            let exif = CImageShim_jpegDecoderExif(decoder.pointer, &exifLength).map {
                Array(UnsafeBufferPointer(start: $0, count: Int(exifLength)))
            }
            let orientation = exif.flatMap(ExifReader.orientation) ?? 1
            let pixels = try uninitializedPixels(count: w * h * 3) {
                guard CImageShim_jpegDecoderReadRGB(decoder.pointer, $0, Int32(orientation)) == 0 else { throw decoder.error() }
            }
            var image = orientation >= 5 ? RGBImage(width: h, height: w, pixels: pixels) : RGBImage(width: w, height: h, pixels: pixels)
            if let icc, applyProfile {
                let t = try ColorConversion.toSRGB(icc: icc, path: path)
                ColorConversion.apply(t, to: &image.pixels, width: image.width, height: image.height)
            }
            return DecodedPhoto(image: image, exif: exif)
        }
    }

    /// Display P3 with its ICC profile and EXIF, as the HEIC photos are: the pixels are
    /// converted 16 rows at a time as libjpeg takes them, so no second full-size copy exists.
    /// `displayP3: false` writes the sRGB pixels as they are, without a profile.
    static func encode(_ image: RGBImage, metadata: PhotoMetadata?, quality: Int, displayP3: Bool = true, path: String) throws -> [UInt8] {
        guard (1...100).contains(quality) else {
            throw ImageFileError.invalidArgument(path: path, message: "JPEG quality \(quality) is not in 1...100")
        }
        let exif = try metadata.map {
            try ExifWriter.build($0, width: image.width, height: image.height, colorSpace: displayP3 ? 0xFFFF : 1, path: path)
        }
        guard (exif?.count ?? 0) <= 65533 else {
            throw ImageFileError.exif(path: path, action: "embedding EXIF in JPEG", message: "\(exif!.count) bytes exceed one APP1 segment")
        }
        let p3 = displayP3 ? try ColorConversion.toDisplayP3(path: path) : nil
        let encoder = try JpegEncoder(path: path)
        let w = image.width, h = image.height, band = 16
        let started = (p3?.icc ?? []).withUnsafeBufferPointer { icc in
            (exif ?? []).withUnsafeBufferPointer { app1 in
                CImageShim_jpegEncodeStart(encoder.pointer, Int32(w), Int32(h), Int32(quality),
                                           exif == nil ? nil : app1.baseAddress, UInt32(app1.count),
                                           p3 == nil ? nil : icc.baseAddress, UInt32(icc.count))
            }
        }
        guard started == 0 else { throw encoder.error() }
        let rows = UnsafeMutablePointer<UInt8>.allocate(capacity: band * w * 3)
        defer { rows.deallocate() }
        let written = image.pixels.withUnsafeBytes { rgb -> Int32 in
            for y in stride(from: 0, to: h, by: band) {
                let n = min(band, h - y)
                let source = rgb.baseAddress! + y * w * 3
                if let p3 {
                    p3.transform.apply(source, rows, pixelCount: n * w)
                    guard CImageShim_jpegEncodeRows(encoder.pointer, rows, Int32(n), w * 3) == 0 else { return -1 }
                } else {
                    guard CImageShim_jpegEncodeRows(encoder.pointer, source.assumingMemoryBound(to: UInt8.self), Int32(n), w * 3) == 0 else { return -1 }
                }
            }
            return CImageShim_jpegEncodeFinish(encoder.pointer)
        }
        guard written == 0 else { throw encoder.error() }
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
    let path: String
    init(path: String) throws {
        guard let p = CImageShim_jpegEncoderCreate() else {
            throw ImageFileError.encode(path: path, format: .jpeg, code: 0, message: "out of memory")
        }
        pointer = p
        self.path = path
    }
    deinit { CImageShim_jpegEncoderDestroy(pointer) }

    /// What libjpeg reported.
    func error() -> ImageFileError {
        .encode(path: path, format: .jpeg, code: Int(CImageShim_jpegEncoderCode(pointer)),
                message: String(cString: CImageShim_jpegEncoderMessage(pointer)))
    }
}

/// Owns a CImageShim_PngMetadata.
final class PngMetadata {
    let pointer: OpaquePointer
    init?(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard let p = CImageShim_pngMetadataRead(buffer.baseAddress, buffer.count) else { return nil }
        pointer = p
    }
    deinit { CImageShim_pngMetadataDestroy(pointer) }
}

/// libpng's simplified API (png_image_*), which reports errors in the struct.
enum PNGCodec {
    /// Any PNG → 8-bit sRGB RGB. 16-bit → 8-bit; grey and palette expand to RGB; alpha is
    /// composited onto black. 16-bit files without gAMA/sRGB are taken as sRGB-encoded (not
    /// linear). An iCCP profile is converted to sRGB with lcms2.
    /// `applyProfile: false` leaves the pixels in the embedded profile's space (tests look at them).
    static func decode(_ bytes: [UInt8], path: String, limit: PixelLimit, applyProfile: Bool = true) throws -> DecodedPhoto {
        try bytes.withUnsafeBufferPointer { buffer in
            var png = png_image()
            defer { png_image_free(&png) }
            let (w, h) = try beginRead(&png, buffer, bytes: bytes, format: UInt32(PNG_FORMAT_RGB), path: path, limit: limit)
            var black = png_color(red: 0, green: 0, blue: 0)
            let pixels = try uninitializedPixels(count: w * h * 3) {
                guard png_image_finish_read(&png, &black, $0, Int32(w * 3), nil) != 0 else {
                    throw error(png, path: path, encoding: false)
                }
            }
            var image = RGBImage(width: w, height: h, pixels: pixels)

            guard let metadata = PngMetadata(buffer) else {
                throw ImageFileError.decode(path: path, format: .png, code: 0, message: "out of memory")
            }
            if CImageShim_pngMetadataFailed(metadata.pointer) != 0 {
                throw ImageFileError.decode(path: path, format: .png, code: 0,
                                            message: "reading iCCP and eXIf: " + String(cString: CImageShim_pngMetadataMessage(metadata.pointer)))
            }
            var length: UInt32 = 0
            if let profile = CImageShim_pngMetadataICC(metadata.pointer, &length), length > 0 {
                let t = try ColorConversion.toSRGB(icc: Array(UnsafeBufferPointer(start: profile, count: Int(length))), path: path)
                ColorConversion.apply(t, to: &image.pixels, width: w, height: h)
            }
            let exif = CImageShim_pngMetadataExif(metadata.pointer, &length).map {
                Array(UnsafeBufferPointer(start: $0, count: Int(length)))
            }
            return DecodedPhoto(image: image, exif: exif)
        }
    }

    /// Any PNG → 8-bit sRGB colour and its alpha (opaque where the file has none), for overlays
    /// such as the booth's collage templates. An iCCP profile is not applied (templates are sRGB).
    static func decodeWithAlpha(_ bytes: [UInt8], path: String, limit: PixelLimit) throws -> (image: RGBImage, alpha: [UInt8]) {
        try bytes.withUnsafeBufferPointer { buffer in
            var png = png_image()
            defer { png_image_free(&png) }
            let format = UInt32(PNG_FORMAT_RGB) | UInt32(PNG_FORMAT_FLAG_ALPHA)  // PNG_FORMAT_RGBA
            let (w, h) = try beginRead(&png, buffer, bytes: bytes, format: format, path: path, limit: limit)
            let rgba = try uninitializedPixels(count: w * h * 4) {
                guard png_image_finish_read(&png, nil, $0, Int32(w * 4), nil) != 0 else {
                    throw error(png, path: path, encoding: false)
                }
            }
            var image = RGBImage(width: w, height: h)
            var alpha = [UInt8](repeating: 0, count: w * h)
            for i in 0..<(w * h) {
                image.pixels[3 * i] = rgba[4 * i]
                image.pixels[3 * i + 1] = rgba[4 * i + 1]
                image.pixels[3 * i + 2] = rgba[4 * i + 2]
                alpha[i] = rgba[4 * i + 3]
            }
            return (image, alpha)
        }
    }

    /// Reads the header into `png` and asks for `format` (8-bit sRGB), after checking the size
    /// against `limit` and the data present: the picture's width and height.
    static func beginRead(_ png: inout png_image, _ buffer: UnsafeBufferPointer<UInt8>, bytes: [UInt8], format: UInt32,
                          path: String, limit: PixelLimit) throws -> (Int, Int) {
        png.version = UInt32(PNG_IMAGE_VERSION)
        guard png_image_begin_read_from_memory(&png, buffer.baseAddress, buffer.count) != 0 else {
            throw error(png, path: path, encoding: false)
        }
        png.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
        png.format = format
        let w = Int(png.width), h = Int(png.height)
        guard w > 0, h > 0 else {
            throw ImageFileError.decode(path: path, format: .png, code: 0, message: "image has no pixels (\(w)×\(h))")
        }
        try limit.check(width: w, height: h, format: .png, path: path)
        try checkImageDataCanHold(bytes, width: w, height: h, path: path)
        return (w, h)
    }

    /// Deflate packs at most 1032 bytes into one, so IDAT chunks shorter than 1/1032 of the
    /// filtered rows cannot hold the picture: a valid header over truncated data is refused
    /// before the image is allocated. (Interlaced rows only need more.)
    static func checkImageDataCanHold(_ bytes: [UInt8], width: Int, height: Int, path: String) throws {
        guard bytes.count >= 33 else { return } // libpng read IHDR already; nothing to add
        let depth = Int(bytes[24]), colourType = Int(bytes[25])
        let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][colourType] ?? 1
        let rowBytes = (width * channels * depth + 7) / 8 + 1 // + the filter byte
        var imageData = 0
        var i = 8 // after the signature: length, type, data, CRC
        while i + 8 <= bytes.count {
            let length = bytes[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) }
            if bytes[(i + 4)..<(i + 8)].elementsEqual("IDAT".utf8) { imageData += min(length, bytes.count - i - 8) }
            i += 12 + length
        }
        let (needed, overflow) = rowBytes.multipliedReportingOverflow(by: height)
        if overflow || imageData * 1032 < needed {
            throw ImageFileError.decode(path: path, format: .png, code: 0,
                                        message: "\(imageData) bytes of image data cannot hold \(width)×\(height) pixels (truncated or damaged)")
        }
    }

    /// 8-bit RGB PNG (RGBA with `alpha`, one byte a pixel) with libpng's default sRGB tagging.
    /// Metadata is not written.
    static func encode(_ image: RGBImage, alpha: [UInt8]? = nil, path: String) throws -> [UInt8] {
        var png = png_image()
        png.version = UInt32(PNG_IMAGE_VERSION)
        png.width = UInt32(image.width)
        png.height = UInt32(image.height)
        png.format = UInt32(PNG_FORMAT_RGB) | (alpha != nil ? UInt32(PNG_FORMAT_FLAG_ALPHA) : 0)
        defer { png_image_free(&png) }
        var samples = image.pixels, channels = 3
        if let alpha {
            precondition(alpha.count == image.width * image.height, "one alpha byte a pixel")
            channels = 4
            samples = [UInt8](repeating: 0, count: alpha.count * 4)
            for i in 0..<alpha.count {
                samples[4 * i] = image.pixels[3 * i]
                samples[4 * i + 1] = image.pixels[3 * i + 1]
                samples[4 * i + 2] = image.pixels[3 * i + 2]
                samples[4 * i + 3] = alpha[i]
            }
        }
        let stride = Int32(image.width * channels)
        var size = 0
        // First call: size only.
        let sized = samples.withUnsafeBytes {
            png_image_write_to_memory(&png, nil, &size, 0, $0.baseAddress, stride, nil)
        }
        guard sized != 0, size > 0 else { throw error(png, path: path, encoding: true) }
        var out = [UInt8](repeating: 0, count: size)
        let ok = out.withUnsafeMutableBytes { dst in
            samples.withUnsafeBytes {
                png_image_write_to_memory(&png, dst.baseAddress, &size, 0, $0.baseAddress, stride, nil)
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
