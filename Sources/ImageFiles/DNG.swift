#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CRaw
import CTiff
import CTiffShim
import FilmCore
import Foundation
import System
import Raster

/// How a photo was developed, kept in its raw negative so `loopix develop --same` can do it
/// again: the look (its id and name), the intensity, the grain's seed and frame, the date stamp.
public struct DevelopRecipe: Sendable, Equatable {
    public var presetID: String
    public var presetName: String
    public var intensity: Double
    public var grainSeed: UInt64
    public var grainFrame: UInt64
    public var dateStamp: String?

    public init(presetID: String, presetName: String, intensity: Double, grainSeed: UInt64, grainFrame: UInt64, dateStamp: String? = nil) {
        self.presetID = presetID
        self.presetName = presetName
        self.intensity = intensity
        self.grainSeed = grainSeed
        self.grainFrame = grainFrame
        self.dateStamp = dateStamp
    }
}

/// Raw negatives: a sensor's mosaic saved as DNG 1.4 through libtiff, read back and demosaiced
/// by libraw. The DNG is uncompressed 16-bit CFA data (libtiff has no lossless JPEG; a 12 MP
/// negative is 24 MB) with the tags a raw converter needs and the develop recipe in XMP.
public enum RawNegative {
    /// The XMP namespace of the recipe's properties.
    public static let namespace = "https://loopix.dev/ns/develop/1.0/"

    /// Writes `mosaic` as a DNG at `path`, atomically (made in memory, then put in place).
    /// `metadata` gives make, model, orientation, date; `recipe` goes into the XMP packet.
    public static func write(_ mosaic: BayerMosaic, to path: String, metadata: PhotoMetadata, recipe: DevelopRecipe?,
                             uniqueCameraModel: String, replace: Bool = false) throws {
        try encode(mosaic, metadata: metadata, recipe: recipe, uniqueCameraModel: uniqueCameraModel, path: path) { bytes in
            try AtomicFile.write(to: path, replace: replace) { write in try write(bytes) }
        }
    }

    /// Makes the DNG in memory and hands its bytes to `use` (they live only during the call:
    /// no second copy of a 24 MB negative).
    static func encode(_ mosaic: BayerMosaic, metadata m: PhotoMetadata, recipe: DevelopRecipe?, uniqueCameraModel: String,
                       path: String, _ use: (UnsafeRawBufferPointer) throws -> Void) throws {
        loopix_tiff_keep_messages()
        _ = loopix_tiff_last_error()
        let buffer = UnsafeMutablePointer<loopix_tiff_buffer>.allocate(capacity: 1)
        buffer.initialize(to: loopix_tiff_buffer())
        defer {
            loopix_tiff_buffer_free(buffer)
            buffer.deallocate()
        }
        let expected = mosaic.samples.count * 2 + 65_536  // the data, then tags, XMP and EXIF
        guard let tif = loopix_tiff_open_buffer(buffer, path, expected) else { throw failure(path, "opening a TIFF in memory") }
        var closed = false
        defer { if !closed { TIFFClose(tif) } }

        func check(_ ok: Int32, _ what: String) throws {
            if ok != 1 { throw failure(path, "setting \(what)") }
        }
        func array<T>(_ tag: Int32, _ values: [T], _ what: String) throws {
            try check(values.withUnsafeBufferPointer { loopix_tiff_set_array(tif, UInt32(tag), UInt32($0.count), $0.baseAddress) }, what)
        }
        try check(loopix_tiff_set_long(tif, UInt32(TIFFTAG_SUBFILETYPE), 0), "NewSubfileType")
        try check(loopix_tiff_set_long(tif, UInt32(TIFFTAG_IMAGEWIDTH), UInt32(mosaic.width)), "ImageWidth")
        try check(loopix_tiff_set_long(tif, UInt32(TIFFTAG_IMAGELENGTH), UInt32(mosaic.height)), "ImageLength")
        try check(loopix_tiff_set_short(tif, UInt32(TIFFTAG_BITSPERSAMPLE), 16), "BitsPerSample")
        try check(loopix_tiff_set_short(tif, UInt32(TIFFTAG_SAMPLESPERPIXEL), 1), "SamplesPerPixel")
        try check(loopix_tiff_set_short(tif, UInt32(TIFFTAG_COMPRESSION), UInt16(COMPRESSION_NONE)), "Compression")
        try check(loopix_tiff_set_short(tif, UInt32(TIFFTAG_PHOTOMETRIC), UInt16(PHOTOMETRIC_CFA)), "PhotometricInterpretation")
        try check(loopix_tiff_set_short(tif, UInt32(TIFFTAG_PLANARCONFIG), UInt16(PLANARCONFIG_CONTIG)), "PlanarConfiguration")
        try check(loopix_tiff_set_long(tif, UInt32(TIFFTAG_ROWSPERSTRIP), UInt32(max(1, min(mosaic.height, (1 << 20) / (mosaic.width * 2))))), "RowsPerStrip")
        try check(loopix_tiff_set_short(tif, UInt32(TIFFTAG_ORIENTATION), UInt16(m.orientation ?? 1)), "Orientation")
        try check(loopix_tiff_set_ascii(tif, UInt32(TIFFTAG_MAKE), m.make ?? "Loopix"), "Make")
        try check(loopix_tiff_set_ascii(tif, UInt32(TIFFTAG_MODEL), m.model ?? "Loopix camera"), "Model")
        try check(loopix_tiff_set_ascii(tif, UInt32(TIFFTAG_SOFTWARE), "Loopix \(loopixVersion)"), "Software")
        if let name = recipe?.presetName ?? m.presetName { try check(loopix_tiff_set_ascii(tif, UInt32(TIFFTAG_IMAGEDESCRIPTION), name), "ImageDescription") }
        if let date = m.date { try check(loopix_tiff_set_ascii(tif, UInt32(TIFFTAG_DATETIME), ExifWriter.exifDateString(date)), "DateTime") }

        try array(TIFFTAG_DNGVERSION, [UInt8(1), 4, 0, 0], "DNGVersion")
        try array(TIFFTAG_DNGBACKWARDVERSION, [UInt8(1), 1, 0, 0], "DNGBackwardVersion")
        try check(loopix_tiff_set_ascii(tif, UInt32(TIFFTAG_UNIQUECAMERAMODEL), uniqueCameraModel), "UniqueCameraModel")
        try array(TIFFTAG_CFAREPEATPATTERNDIM, [UInt16(2), 2], "CFARepeatPatternDim")
        try array(TIFFTAG_CFAPATTERN, mosaic.pattern.cfa, "CFAPattern")
        try array(TIFFTAG_BLACKLEVEL, [Float(mosaic.blackLevel)], "BlackLevel")
        try array(TIFFTAG_WHITELEVEL, [UInt32(mosaic.whiteLevel)], "WhiteLevel")
        try array(TIFFTAG_COLORMATRIX1, mosaic.colorMatrix.map { Float($0) }, "ColorMatrix1")
        try check(loopix_tiff_set_short(tif, UInt32(TIFFTAG_CALIBRATIONILLUMINANT1), 21), "CalibrationIlluminant1")  // D65
        try array(TIFFTAG_ASSHOTNEUTRAL, [Float(mosaic.asShotNeutral.x), Float(mosaic.asShotNeutral.y), Float(mosaic.asShotNeutral.z)], "AsShotNeutral")
        if let recipe { try array(TIFFTAG_XMLPACKET, Array(xmp(recipe).utf8), "XMLPacket") }

        try mosaic.samples.withUnsafeBufferPointer { samples in
            for y in 0..<mosaic.height {
                let row = UnsafeMutableRawPointer(mutating: samples.baseAddress! + y * mosaic.width)
                if TIFFWriteScanline(tif, row, UInt32(y), 0) != 1 { throw failure(path, "writing row \(y)") }
            }
        }
        let date = m.date.map { ExifWriter.exifDateString($0) }
        let exposed = date.withOptionalCString { date in
            m.lensModel.withOptionalCString { lens in
                var exif = loopix_tiff_exif(exposure_time: m.exposureTime ?? 0, iso: UInt16(clamping: m.iso ?? 0),
                                            focal_length: m.focalLength ?? 0, focal_length_35mm: UInt16(clamping: m.focalLength35mm ?? 0),
                                            date_time_original: date, lens_model: lens)
                return loopix_tiff_finish_with_exif(tif, &exif)
            }
        }
        if exposed != 1 { throw failure(path, "writing the EXIF directory") }
        closed = true
        TIFFClose(tif)
        if buffer.pointee.failed != 0 { throw ImageFileError.raw(path: path, action: "writing the DNG in memory", message: "out of memory") }
        let message = String(cString: loopix_tiff_last_error())
        if !message.isEmpty { throw ImageFileError.raw(path: path, action: "finishing the DNG", message: message) }
        try use(UnsafeRawBufferPointer(start: buffer.pointee.data, count: buffer.pointee.size))
    }

    /// The recipe in a DNG's XMP packet; nil when it has none (a DNG from another camera).
    public static func recipe(path: String) throws -> DevelopRecipe? {
        loopix_tiff_keep_messages()
        _ = loopix_tiff_last_error()
        guard let tif = TIFFOpen(path, "r") else { throw failure(path, "opening it with libtiff") }
        defer { TIFFClose(tif) }
        var count: UInt32 = 0
        var data: UnsafeRawPointer? = nil
        guard loopix_tiff_get_array(tif, UInt32(TIFFTAG_XMLPACKET), &count, &data) == 1, let data else { return nil }
        let text = String(decoding: UnsafeRawBufferPointer(start: data, count: Int(count)), as: UTF8.self)
        return try recipe(xmp: text, path: path)
    }

    /// The develop recipe as an XMP packet of attributes in the Loopix namespace.
    static func xmp(_ r: DevelopRecipe) -> String {
        var attributes = [("look", r.presetID), ("lookName", r.presetName), ("intensity", String(r.intensity)),
                          ("grainSeed", String(r.grainSeed)), ("grainFrame", String(r.grainFrame))]
        if let stamp = r.dateStamp { attributes.append(("dateStamp", stamp)) }
        let properties = attributes.map { " loopix:\($0.0)=\"\(escape($0.1))\"" }.joined()
        return "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
            + "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
            + "<rdf:Description rdf:about=\"\" xmlns:loopix=\"\(namespace)\"\(properties)/>"
            + "</rdf:RDF></x:xmpmeta>\n<?xpacket end=\"r\"?>"
    }

    /// Reads back what `xmp` writes (attributes `loopix:name="value"`). Nil without the
    /// namespace; an error when it is there but a property is missing or malformed.
    static func recipe(xmp text: String, path: String) throws -> DevelopRecipe? {
        guard text.contains(namespace) else { return nil }
        func value(_ name: String) -> String? {
            guard let start = text.range(of: " loopix:\(name)=\"") else { return nil }
            guard let end = text[start.upperBound...].firstIndex(of: "\"") else { return nil }
            return unescape(String(text[start.upperBound..<end]))
        }
        func bad(_ what: String) -> ImageFileError {
            .raw(path: path, action: "reading the develop recipe in its XMP", message: "loopix:\(what) is missing or not valid")
        }
        guard let id = value("look"), !id.isEmpty else { throw bad("look") }
        guard let intensity = value("intensity").flatMap(Double.init), intensity.isFinite, (0...1).contains(intensity) else { throw bad("intensity") }
        guard let seed = value("grainSeed").flatMap({ UInt64($0) }) else { throw bad("grainSeed") }
        guard let frame = value("grainFrame").flatMap({ UInt64($0) }) else { throw bad("grainFrame") }
        return DevelopRecipe(presetID: id, presetName: value("lookName") ?? id, intensity: intensity, grainSeed: seed,
                             grainFrame: frame, dateStamp: value("dateStamp"))
    }

    private static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    private static func unescape(_ s: String) -> String {
        s.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    private static func failure(_ path: String, _ action: String) -> ImageFileError {
        let message = String(cString: loopix_tiff_last_error())
        return .raw(path: path, action: action, message: message.isEmpty ? "libtiff refused" : message)
    }

    // MARK: Developing with libraw

    /// Whether the file starts as TIFF does: DNG and most cameras' own raw files.
    public static func isTIFFBased(path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return ExifReader.hasTIFFHeader([UInt8](handle.readData(ofLength: 4)))
    }

    /// A raw file demosaiced, with what libraw read of the camera and the exposure (nil where
    /// the file does not say).
    public struct Developed: Sendable {
        public var image: RGBImage
        public var make: String?
        public var model: String?
        public var captureDate: Date?
        public var exposureTime: Double?
        public var iso: Int?
        public var focalLength: Double?
    }

    /// Demosaics a raw file (a Loopix DNG, or any raw libraw reads) into upright sRGB 8-bit:
    /// the camera's as-shot white balance and colour matrix, sRGB's tone curve, no automatic
    /// brightening (the negative's exposure is kept), libraw's AHD demosaic.
    public static func develop(path: String, limit: PixelLimit = .forThisMachine) throws -> Developed {
        guard let raw = libraw_init(0) else { throw ImageFileError.raw(path: path, action: "starting libraw", message: "out of memory") }
        defer { libraw_close(raw) }
        func check(_ code: Int32, _ action: String) throws {
            if code != LIBRAW_SUCCESS.rawValue {
                throw ImageFileError.raw(path: path, action: action, message: String(cString: libraw_strerror(code)) + " (libraw \(code))")
            }
        }
        try check(libraw_open_file(raw, path), "opening it with libraw")
        // libraw works on 4 × 16 bits a photosite beside the raw data and the result.
        let width = Int(raw.pointee.sizes.iwidth), height = Int(raw.pointee.sizes.iheight)
        guard width * height <= limit.maxRawPhotosites else {
            throw ImageFileError.raw(path: path, action: "checking its size",
                                     message: "\(width)×\(height) photosites exceed the limit of \(PixelLimit(maxPixels: limit.maxRawPhotosites, origin: "")) \(limit.origin) (a raw develop needs \(PixelLimit.rawBytesPerPhotosite) bytes a photosite to a photo's \(PixelLimit.bytesPerPixel) a pixel)")
        }
        raw.pointee.params.use_camera_wb = 1
        raw.pointee.params.use_camera_matrix = 1
        raw.pointee.params.output_color = 1        // sRGB
        raw.pointee.params.output_bps = 8
        raw.pointee.params.gamm.0 = 1 / 2.4        // sRGB's curve: power 1/2.4, linear slope 12.92
        raw.pointee.params.gamm.1 = 12.92
        raw.pointee.params.no_auto_bright = 1
        raw.pointee.params.adjust_maximum_thr = 0  // the white level is the DNG's, not guessed from the data
        raw.pointee.params.user_qual = 3           // AHD
        try check(libraw_unpack(raw), "unpacking the raw data")
        try check(libraw_dcraw_process(raw), "demosaicing")
        var code: Int32 = 0
        guard let processed = libraw_dcraw_make_mem_image(raw, &code) else { try check(code, "making the RGB image"); throw ImageFileError.raw(path: path, action: "making the RGB image", message: "no image") }
        defer { libraw_dcraw_clear_mem(processed) }
        let p = processed.pointee
        guard p.colors == 3, p.bits == 8, p.type == LIBRAW_IMAGE_BITMAP else {
            throw ImageFileError.raw(path: path, action: "making the RGB image", message: "libraw gave \(p.colors) colours of \(p.bits) bits")
        }
        var image = RGBImage(width: Int(p.width), height: Int(p.height))
        withUnsafePointer(to: &processed.pointee.data) { start in
            start.withMemoryRebound(to: UInt8.self, capacity: image.pixels.count) { data in
                image.pixels.withUnsafeMutableBufferPointer { $0.baseAddress!.update(from: data, count: $0.count) }
            }
        }
        func text<T>(_ field: T) -> String? {
            let s = withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return s.isEmpty ? nil : s
        }
        let other = raw.pointee.other
        // libraw takes the make off the front of the model ("camera (imx477)"); EXIF keeps it.
        let make = text(raw.pointee.idata.make)
        let model = text(raw.pointee.idata.model).map { model in make.map { model.hasPrefix($0) ? model : "\($0) \(model)" } ?? model }
        return Developed(image: image, make: make, model: model,
                         captureDate: other.timestamp > 0 ? Date(timeIntervalSince1970: Double(other.timestamp)) : nil,
                         exposureTime: other.shutter > 0 ? Double(other.shutter) : nil,
                         iso: other.iso_speed > 0 ? Int(other.iso_speed.rounded()) : nil,
                         focalLength: other.focal_len > 0 ? Double(other.focal_len) : nil)
    }
}

extension Optional where Wrapped == String {
    /// The string as a C string for the call, or NULL.
    fileprivate func withOptionalCString<R>(_ body: (UnsafePointer<CChar>?) throws -> R) rethrows -> R {
        guard let self else { return try body(nil) }
        return try self.withCString { try body($0) }
    }
}
