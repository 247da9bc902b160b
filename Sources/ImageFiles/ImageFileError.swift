#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import System

/// Every error the ImageFiles module throws. `description` is one line: the file path (or
/// `<memory>` when encoding without a file), what was being done, the problem, and the
/// errno or library code.
public enum ImageFileError: Error, CustomStringConvertible, Equatable, Sendable {
    /// A system call failed. `action` says what was being done ("open for reading", "write",
    /// "rename into place"…).
    case system(path: String, action: String, errno: Errno)
    /// The bytes were handed to the kernel but `fsync` failed: the photo must be considered
    /// lost. Never retried.
    case lost(path: String, errno: Errno)
    /// `replace: false` and a file already exists under the final name; it was not touched.
    case alreadyExists(path: String)
    /// The file is not JPEG, PNG or HEIC (by its first bytes).
    case unknownFormat(path: String, detail: String)
    /// A codec library rejected the data while decoding. `code` is the library's code
    /// (libjpeg msg_code, libheif heif_error_code/subcode packed as code*1000+subcode, 0 for libpng).
    case decode(path: String, format: ImageFormat, code: Int, message: String)
    /// A codec library failed while encoding.
    case encode(path: String, format: ImageFormat, code: Int, message: String)
    /// lcms2 could not parse a profile or build a transform.
    case colorManagement(path: String, action: String, message: String)
    /// libexif could not parse or build EXIF.
    case exif(path: String, action: String, message: String)
    /// libtiff or libraw failed while writing or reading a raw negative (DNG); `action` says
    /// what was being done, `message` is the library's.
    case raw(path: String, action: String, message: String)
    /// An option or argument is out of range (quality, preset name, image size…).
    case invalidArgument(path: String, message: String)
    /// The file declares more pixels than `limit` allows (a decompression bomb, or an image too
    /// large for this machine); refused before decoding.
    case tooLarge(path: String, format: ImageFormat, width: Int, height: Int, limit: PixelLimit)

    public var path: String {
        switch self {
        case .system(let p, _, _), .lost(let p, _), .alreadyExists(let p), .unknownFormat(let p, _),
             .decode(let p, _, _, _), .encode(let p, _, _, _), .colorManagement(let p, _, _),
             .exif(let p, _, _), .raw(let p, _, _), .invalidArgument(let p, _), .tooLarge(let p, _, _, _, _):
            return p
        }
    }

    /// The errno carried by `.system` and `.lost`, else nil.
    public var errno: Errno? {
        switch self {
        case .system(_, _, let e), .lost(_, let e): return e
        default: return nil
        }
    }

    public var description: String {
        oneLine(longDescription)
    }

    private var longDescription: String {
        switch self {
        case .system(let path, let action, let e):
            return "\(path): cannot \(action): \(e.description)"
        case .lost(let path, let e):
            return "\(path): photo lost: fsync failed while saving, the data may not be on disk: \(e.description)"
        case .alreadyExists(let path):
            return "\(path): cannot write: the file already exists and replace is off (left untouched)"
        case .unknownFormat(let path, let detail):
            return "\(path): not a JPEG, PNG or HEIC file (\(detail))"
        case .decode(let path, let format, let code, let message):
            return "\(path): cannot read \(format.displayName): \(message) (\(format.libraryName) code \(code))"
        case .encode(let path, let format, let code, let message):
            return "\(path): cannot encode \(format.displayName): \(message) (\(format.libraryName) code \(code))"
        case .colorManagement(let path, let action, let message):
            return "\(path): colour management failed while \(action): \(message)"
        case .exif(let path, let action, let message):
            return "\(path): EXIF error while \(action): \(message)"
        case .raw(let path, let action, let message):
            return "\(path): raw negative (DNG) error while \(action): \(message)"
        case .invalidArgument(let path, let message):
            return "\(path): invalid argument: \(message)"
        case .tooLarge(let path, _, let width, let height, let limit):
            // In Double: a declared size (two 32-bit numbers) may overflow Int.
            let megapixels = megapixelText(Double(width) * Double(height))
            return "\(path): \(width)×\(height) pixels (\(megapixels) MP) exceeds the limit of \(limit) \(limit.origin)"
        }
    }

    /// The same error naming a different path (used when bytes encoded in memory get a file name).
    func withPath(_ newPath: String) -> ImageFileError {
        switch self {
        case .system(_, let a, let e): return .system(path: newPath, action: a, errno: e)
        case .lost(_, let e): return .lost(path: newPath, errno: e)
        case .alreadyExists: return .alreadyExists(path: newPath)
        case .unknownFormat(_, let d): return .unknownFormat(path: newPath, detail: d)
        case .decode(_, let f, let c, let m): return .decode(path: newPath, format: f, code: c, message: m)
        case .encode(_, let f, let c, let m): return .encode(path: newPath, format: f, code: c, message: m)
        case .colorManagement(_, let a, let m): return .colorManagement(path: newPath, action: a, message: m)
        case .exif(_, let a, let m): return .exif(path: newPath, action: a, message: m)
        case .raw(_, let a, let m): return .raw(path: newPath, action: a, message: m)
        case .invalidArgument(_, let m): return .invalidArgument(path: newPath, message: m)
        case .tooLarge(_, let f, let w, let h, let l): return .tooLarge(path: newPath, format: f, width: w, height: h, limit: l)
        }
    }
}

/// The path used in errors from `ImageWriter.encode`, which has no file.
let memoryPath = "<memory>"

/// Library messages sometimes contain newlines; descriptions are one line.
func oneLine(_ s: String) -> String {
    s.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).map { $0.trimmingCharacters(in: .whitespaces) }
        .filter { !$0.isEmpty }.joined(separator: "; ")
}



extension ImageFormat {
    var displayName: String {
        switch self {
        case .heic: return "HEIC"
        case .jpeg: return "JPEG"
        case .png: return "PNG"
        }
    }
    var libraryName: String {
        switch self {
        case .heic: return "libheif"
        case .jpeg: return "libjpeg"
        case .png: return "libpng"
        }
    }
}
