import Canvas
import FilmCore
import Foundation
import ImageFiles
import System
import Video
import Raster

/// JPEGs made on demand for browsers — most cannot show HEIC — and thumbnails (of clips too,
/// from their first picture), kept in a cache directory so each is made once: named by the
/// file, its size and time, written atomically. One conversion at a time (a 12 MP HEIC takes a
/// second and 100 MB); the cache is trimmed to `limitBytes`, oldest first.
public final class PhotoCache: Sendable {
    public enum Variant: String, Sendable {
        /// The whole photo as a JPEG (Display P3, its EXIF).
        case jpeg
        /// A small JPEG, `thumbnailWidth` wide.
        case thumbnail = "thumb"
    }

    public static let thumbnailWidth = 360
    public let directory: String
    public let limitBytes: Int64
    private let library: MediaLibrary
    /// Held while converting: one at a time.
    private let converting = Lock()

    public init(directory: String, library: MediaLibrary, limitBytes: Int64 = 512 << 20) {
        self.directory = directory
        self.library = library
        self.limitBytes = limitBytes
    }

    /// The cached JPEG of `name` (made now if need be): an open descriptor and its size, or why not.
    public func jpeg(of name: MediaLibrary.Name, _ variant: Variant) -> Result<OpenFile, CacheError> {
        // A JPEG photo is its own full-size JPEG.
        if variant == .jpeg, name.kind == .jpeg {
            return library.open(name).map { .success($0) } ?? .failure(.missing(name))
        }
        guard let original = library.open(name), let st = original.status() else { return .failure(.missing(name)) }
        let cached = directory + "/\(name.folderName)-\(name.fileName)-\(variant.rawValue)-\(original.size)-\(st.st_mtim.tv_sec).jpg"
        if let open = Self.openRegular(cached) { return .success(open) }
        return converting.withLock {
            if let open = Self.openRegular(cached) { return .success(open) }   // made while we waited
            do {
                let jpeg = try make(name, variant)
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try AtomicFile.write(jpeg, to: cached, replace: true)
                trim()
                guard let open = Self.openRegular(cached) else { return .failure(.unwritable(cached)) }
                return .success(open)
            } catch {
                return .failure(.conversion(name, "\(error)"))
            }
        }
    }

    public enum CacheError: Error, Equatable, CustomStringConvertible {
        case missing(MediaLibrary.Name)
        case conversion(MediaLibrary.Name, String)
        case unwritable(String)
        public var description: String {
            switch self {
            case .missing(let n): return "\(n): no such photo"
            case .conversion(let n, let why): return "\(n): cannot be converted (\(why))"
            case .unwritable(let path): return "\(path): the cache cannot be written"
            }
        }
    }

    private func make(_ name: MediaLibrary.Name, _ variant: Variant) throws -> [UInt8] {
        if name.kind == .clip {
            // Read through the library's descriptor (no path games): /proc/self/fd/N.
            guard let clip = library.open(name) else { throw CacheError.missing(name) }
            let poster = try PosterFrame.read(path: "/proc/self/fd/\(clip.rawValue)", width: variant == .thumbnail ? Self.thumbnailWidth : 1920)
            return try ImageWriter.previewJPEG(poster, quality: 85)
        }
        guard let bytes = library.read(name) else { throw CacheError.missing(name) }
        let photo = try ImageReader.decode(bytes, path: name.description)
        switch variant {
        case .jpeg:
            let metadata = PhotoMetadata(sourceExif: photo.exif)
            return try ImageWriter.encode(photo.image, format: .jpeg, metadata: metadata, heic: HEICOptions(),
                                          jpegQuality: HEICOptions.defaultJPEGQuality)
        case .thumbnail:
            let w = min(Self.thumbnailWidth, photo.image.width)
            let h = max(1, photo.image.height * w / photo.image.width)
            var small = RGBImage(width: w, height: h)
            AreaDownscaler(sourceWidth: photo.image.width, sourceHeight: photo.image.height, width: w, height: h)
                .shrink(photo.image, into: &small)
            return try ImageWriter.previewJPEG(small, quality: 85)
        }
    }

    /// Removes the oldest cached files until the cache is within its limit.
    private func trim() {
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: directory) else { return }
        var files: [(path: String, size: Int64, time: Int)] = []
        for n in names where n.hasSuffix(".jpg") {
            var st = stat()
            let path = directory + "/" + n
            if lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG { files.append((path, Int64(st.st_size), st.st_mtim.tv_sec)) }
        }
        var total = files.reduce(0) { $0 + $1.size }
        for f in files.sorted(by: { $0.time < $1.time }) where total > limitBytes {
            unlink(f.path)
            total -= f.size
        }
    }

    private static func openRegular(_ path: String) -> OpenFile? {
        OpenFile.regular(path, nonEmpty: true)
    }

}
