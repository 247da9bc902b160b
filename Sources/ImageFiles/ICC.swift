import CLcms2
import FilmCore

/// ICC profiles, built and read with lcms2.
public enum ICCProfile {
    /// A Display P3 profile built with lcms2: P3 primaries, D65 white, the sRGB transfer
    /// curve, description "Display P3" (ICC v4). Built once per process. Empty only if lcms2
    /// could not allocate it.
    public static func displayP3() -> [UInt8] { displayP3Bytes }

    /// The profile's description tag (English), or nil if the bytes are not a readable profile.
    public static func description(_ icc: [UInt8]) -> String? {
        guard let profile = LcmsProfile(bytes: icc) else { return nil }
        return profile.description
    }

    private static let displayP3Bytes: [UInt8] = {
        guard let profile = LcmsProfile.displayP3() else { return [] }
        return profile.serialized() ?? []
    }()
}

/// lcms2's TYPE_RGB_8: COLORSPACE_SH(PT_RGB) | CHANNELS_SH(3) | BYTES_SH(1) (the macro does not import).
let lcmsTypeRGB8: UInt32 = (4 << 16) | (3 << 3) | 1
/// lcms2's TYPE_RGB_16.
let lcmsTypeRGB16: UInt32 = (4 << 16) | (3 << 3) | 2

/// Owns one cmsHPROFILE.
final class LcmsProfile {
    let handle: cmsHPROFILE

    private init(handle: cmsHPROFILE) { self.handle = handle }
    deinit { cmsCloseProfile(handle) }

    /// Parses an ICC profile; nil if lcms2 rejects it.
    convenience init?(bytes: [UInt8]) {
        guard !bytes.isEmpty, bytes.count <= Int(UInt32.max) else { return nil }
        let h = bytes.withUnsafeBytes { cmsOpenProfileFromMem($0.baseAddress, UInt32($0.count)) }
        guard let h else { return nil }
        self.init(handle: h)
    }

    static func sRGB() -> LcmsProfile? {
        guard let h = cmsCreate_sRGBProfile() else { return nil }
        return LcmsProfile(handle: h)
    }

    /// An RGB profile from CIE xy primaries and white point with a parametric transfer curve.
    static func rgb(white: (Double, Double), red: (Double, Double), green: (Double, Double),
                    blue: (Double, Double), curve: TransferCurve, description: String?) -> LcmsProfile? {
        var wp = cmsCIExyY(x: white.0, y: white.1, Y: 1)
        var primaries = cmsCIExyYTRIPLE(Red: cmsCIExyY(x: red.0, y: red.1, Y: 1),
                                        Green: cmsCIExyY(x: green.0, y: green.1, Y: 1),
                                        Blue: cmsCIExyY(x: blue.0, y: blue.1, Y: 1))
        let tone: OpaquePointer? = curve.parameters.withUnsafeBufferPointer {
            cmsBuildParametricToneCurve(nil, curve.type, $0.baseAddress)
        }
        guard let tone else { return nil }
        defer { cmsFreeToneCurve(tone) }
        var curves: [OpaquePointer?] = [tone, tone, tone]
        let h = curves.withUnsafeMutableBufferPointer { cmsCreateRGBProfile(&wp, &primaries, $0.baseAddress) }
        guard let h else { return nil }
        let profile = LcmsProfile(handle: h)
        if let description {
            guard let mlu = cmsMLUalloc(nil, 1) else { return nil }
            defer { cmsMLUfree(mlu) }
            guard cmsMLUsetASCII(mlu, "en", "US", description) != 0,
                  cmsWriteTag(h, cmsSigProfileDescriptionTag, UnsafeRawPointer(mlu)) != 0 else { return nil }
            cmsMD5computeID(h)
        }
        return profile
    }

    static func displayP3() -> LcmsProfile? {
        rgb(white: (0.3127, 0.3290), red: (0.680, 0.320), green: (0.265, 0.690), blue: (0.150, 0.060),
            curve: .sRGB, description: "Display P3")
    }

    var description: String? {
        let n = cmsGetProfileInfoASCII(handle, cmsInfoDescription, "en", "US", nil, 0)
        guard n > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(n) + 1)
        _ = cmsGetProfileInfoASCII(handle, cmsInfoDescription, "en", "US", &buffer, n)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    var isRGB: Bool { cmsGetColorSpace(handle) == cmsSigRgbData }

    func serialized() -> [UInt8]? {
        var length: UInt32 = 0
        guard cmsSaveProfileToMem(handle, nil, &length) != 0, length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let ok = bytes.withUnsafeMutableBytes { cmsSaveProfileToMem(handle, $0.baseAddress, &length) }
        guard ok != 0 else { return nil }
        return Array(bytes.prefix(Int(length)))
    }
}

/// An ICC parametric curve (lcms2 type 4: Y = (aX+b)^g for X ≥ d, cX below).
struct TransferCurve {
    var type: Int32
    var parameters: [Double]

    static let sRGB = TransferCurve(type: 4, parameters: [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045])
    static let bt709 = TransferCurve(type: 4, parameters: [1 / 0.45, 1 / 1.099, 0.099 / 1.099, 1 / 4.5, 0.081])
    static func gamma(_ g: Double) -> TransferCurve { TransferCurve(type: 1, parameters: [g]) }
}

/// Owns one cmsHTRANSFORM between two 8-bit RGB encodings (relative colorimetric).
/// Sendable: created without the 1-pixel cache (`cmsFLAGS_NOCACHE`), `cmsDoTransform` only
/// reads the transform, which lcms2 documents as safe from several threads at once.
final class LcmsTransform: @unchecked Sendable {
    let handle: cmsHTRANSFORM

    /// `format`: lcmsTypeRGB8 or lcmsTypeRGB16, in and out.
    init?(from source: LcmsProfile, to destination: LcmsProfile, format: UInt32 = lcmsTypeRGB8) {
        // No 1-pixel cache: the cache is written by every cmsDoTransform, and the HEIC tiles
        // share one transform across threads (the output is the same without it).
        guard let h = cmsCreateTransform(source.handle, format, destination.handle, format,
                                         UInt32(INTENT_RELATIVE_COLORIMETRIC), UInt32(cmsFLAGS_NOCACHE)) else { return nil }
        handle = h
    }
    deinit { cmsDeleteTransform(handle) }

    /// Converts `pixelCount` RGB pixels; `input` and `output` may be the same buffer.
    func apply(_ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, pixelCount: Int) {
        cmsDoTransform(handle, input, output, UInt32(pixelCount))
    }
}

/// Colour conversion of decoded pixels to sRGB.
enum ColorConversion {
    /// A transform from an embedded ICC profile to sRGB, nil when the profile is not an RGB
    /// profile (e.g. a grey profile on a greyscale JPEG: the pixels are taken as sRGB).
    static func toSRGB(icc: [UInt8], path: String) throws -> LcmsTransform? {
        guard let source = LcmsProfile(bytes: icc) else {
            throw ImageFileError.colorManagement(path: path, action: "reading the embedded ICC profile",
                                                 message: "lcms2 cannot parse the \(icc.count)-byte profile")
        }
        guard source.isRGB else { return nil }
        return try transform(from: source, path: path)
    }

    /// A transform for H.273 (nclx) colour primaries and transfer characteristics, nil when
    /// they already mean sRGB (or are unspecified). Supported primaries: 1 (BT.709/sRGB),
    /// 9 (BT.2020), 11 (DCI-P3), 12 (P3-D65); transfers: 13 (sRGB), 1/6/14/15 (BT.709),
    /// 4 (gamma 2.2), 5 (gamma 2.8), 8 (linear). Other values (PQ, HLG…) are treated as sRGB.
    static func toSRGB(nclxPrimaries primaries: Int, transfer: Int, path: String) throws -> LcmsTransform? {
        let curve: TransferCurve
        switch transfer {
        case 1, 6, 14, 15: curve = .bt709
        case 4: curve = .gamma(2.2)
        case 5: curve = .gamma(2.8)
        case 8: curve = .gamma(1.0)
        default: curve = .sRGB
        }
        let d65 = (0.3127, 0.3290)
        let profile: LcmsProfile?
        switch primaries {
        case 9:
            profile = .rgb(white: d65, red: (0.708, 0.292), green: (0.170, 0.797), blue: (0.131, 0.046), curve: curve, description: nil)
        case 11:
            profile = .rgb(white: (0.314, 0.351), red: (0.680, 0.320), green: (0.265, 0.690), blue: (0.150, 0.060), curve: curve, description: nil)
        case 12:
            profile = .rgb(white: d65, red: (0.680, 0.320), green: (0.265, 0.690), blue: (0.150, 0.060), curve: curve, description: nil)
        default:
            if curve.parameters == TransferCurve.sRGB.parameters { return nil }
            profile = .rgb(white: d65, red: (0.64, 0.33), green: (0.30, 0.60), blue: (0.15, 0.06), curve: curve, description: nil)
        }
        guard let profile else {
            throw ImageFileError.colorManagement(path: path, action: "building a profile for nclx primaries \(primaries) transfer \(transfer)",
                                                 message: "lcms2 failed")
        }
        return try transform(from: profile, path: path)
    }

    /// What every photo is stored in: sRGB → Display P3 (relative colorimetric), with the
    /// profile to embed.
    static func toDisplayP3(path: String) throws -> (transform: DisplayP3Conversion, icc: [UInt8]) {
        let icc = ICCProfile.displayP3()
        guard let t = DisplayP3Conversion.shared, !icc.isEmpty else {
            throw ImageFileError.colorManagement(path: path, action: "building the sRGB → Display P3 transform", message: "lcms2 failed")
        }
        return (t, icc)
    }

    static func transform(from source: LcmsProfile, path: String) throws -> LcmsTransform {
        guard let srgb = LcmsProfile.sRGB(), let t = LcmsTransform(from: source, to: srgb) else {
            throw ImageFileError.colorManagement(path: path, action: "converting to sRGB", message: "lcms2 cannot build the transform")
        }
        return t
    }

    /// Converts an image's pixels in place, row by row.
    static func apply(_ transform: LcmsTransform?, to image: inout [UInt8], width: Int, height: Int) {
        guard let transform else { return }
        image.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            for y in 0..<height {
                let row = base + y * width * 3
                transform.apply(row, row, pixelCount: width)
            }
        }
    }
}

/// sRGB → Display P3 for the photos Loopix writes (HEIC, JPEG): lcms2's own transform
/// (relative colorimetric, 16 bits in and out) sampled once per process on a 33³ lattice and
/// interpolated tetrahedrally by the film engine's `ColorLUT`. The same numbers as lcms2's
/// 8-bit transform within a level (DisplayP3Tests), at about a third of cmsDoTransform's
/// instructions a pixel: on a 12 MP photo that was 8 % of the HEIC save.
final class DisplayP3Conversion: Sendable {
    let table: ColorLUT

    /// nil only if lcms2 cannot build the profiles or the transform.
    static let shared: DisplayP3Conversion? = {
        guard let srgb = LcmsProfile.sRGB(), let p3 = LcmsProfile.displayP3(),
              let exact = LcmsTransform(from: srgb, to: p3, format: lcmsTypeRGB16) else { return nil }
        let n = ColorLUT.defaultGridSize, last = Double(n - 1)
        // Every lattice point through lcms2 in one call, red fastest (the table's own order).
        var lattice = [UInt16](repeating: 0, count: n * n * n * 3)
        for b in 0..<n {
            for g in 0..<n {
                for r in 0..<n {
                    let i = (r + g * n + b * n * n) * 3
                    for (c, v) in [r, g, b].enumerated() { lattice[i + c] = UInt16((Double(v) / last * 65535).rounded()) }
                }
            }
        }
        var out = [UInt16](repeating: 0, count: lattice.count)
        lattice.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in exact.apply(src.baseAddress!, dst.baseAddress!, pixelCount: n * n * n) }
        }
        return DisplayP3Conversion(table: ColorLUT(gridSize: n) { c in
            let i = (Int((c.x * last).rounded()) + Int((c.y * last).rounded()) * n + Int((c.z * last).rounded()) * n * n) * 3
            return SIMD3(Double(out[i]), Double(out[i + 1]), Double(out[i + 2])) / 65535
        })
    }()

    private init(table: ColorLUT) { self.table = table }

    /// Converts `pixelCount` 8-bit RGB pixels; `input` and `output` may be the same buffer.
    func apply(_ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, pixelCount: Int) {
        table.apply(input.assumingMemoryBound(to: UInt8.self), output.assumingMemoryBound(to: UInt8.self), pixelCount: pixelCount)
    }
}
