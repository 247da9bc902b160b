import Foundation
import System

/// The photos and clips in a DCF folder tree (`DCIM/100LOOPX/LPX_0001.HEIC`), as the gallery
/// shows them: one item per number with the files it has, newest first. Every file is named
/// by a strict pattern and opened without following links, inside the folder it is named in:
/// no path a client sends can reach anything else (`../`, encoded forms, a link planted in
/// DCIM pointing out).
public struct MediaLibrary: Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case heic = "HEIC", jpeg = "JPG", png = "PNG", clip = "MP4", dng = "DNG"

        var contentType: String {
            switch self {
            case .heic: return "image/heic"
            case .jpeg: return "image/jpeg"
            case .png: return "image/png"
            case .clip: return "video/mp4"
            case .dng: return "image/x-adobe-dng"
            }
        }
    }

    /// A file, named the way URLs name it: "100LOOPX/LPX_0001.HEIC".
    public struct Name: Sendable, Hashable, Comparable, CustomStringConvertible {
        public let folder: Int
        public let file: Int
        public let kind: Kind

        /// Parses "100LOOPX/LPX_0001.HEIC"; nil for anything else.
        public init?(_ text: String) {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].count == 8, parts[0].hasSuffix("LOOPX"),
                  let folder = Self.digits(parts[0].prefix(3)), (100...999).contains(folder),
                  parts[1].hasPrefix("LPX_"), parts[1].count >= 12,
                  let file = Self.digits(parts[1].dropFirst(4).prefix(4)), (1...9999).contains(file),
                  parts[1].dropFirst(8).first == ".",
                  let kind = Kind(rawValue: String(parts[1].dropFirst(9))) else { return nil }
            self.init(folder: folder, file: file, kind: kind)
        }

        /// The number written in ASCII digits only (no sign, no spaces).
        private static func digits(_ s: Substring) -> Int? {
            guard !s.isEmpty, s.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return Int(s)
        }

        public init(folder: Int, file: Int, kind: Kind) {
            self.folder = folder
            self.file = file
            self.kind = kind
        }

        /// The photo number across folders (as PhotoStorage counts).
        public var number: Int { (folder - 100) * 9999 + file }
        public var folderName: String { "\(folder)LOOPX" }
        public var fileName: String { "LPX_" + String(repeating: "0", count: 4 - String(file).count) + "\(file).\(kind.rawValue)" }
        public var description: String { folderName + "/" + fileName }
        public func with(_ kind: Kind) -> Name { Name(folder: folder, file: file, kind: kind) }
        public static func < (a: Name, b: Name) -> Bool { (a.number, a.kind.rawValue) < (b.number, b.kind.rawValue) }
    }

    /// One photo or clip: its number and the files it has.
    public struct Item: Sendable, Equatable {
        public var number: Int
        public var files: [Name]
        /// The file a browser shows (a photo's JPEG or HEIC, or the clip).
        public var main: Name {
            files.first { $0.kind == .clip } ?? files.first { $0.kind == .jpeg } ?? files.first { $0.kind == .heic } ?? files[0]
        }
        public var isClip: Bool { main.kind == .clip }
    }

    public let dcim: String

    public init(photosDirectory: String) {
        dcim = photosDirectory + "/DCIM"
    }

    /// Every item, newest first.
    public func items() -> [Item] {
        var byNumber: [Int: [Name]] = [:]
        let fm = FileManager.default
        for folder in (try? fm.contentsOfDirectory(atPath: dcim)) ?? [] {
            for file in (try? fm.contentsOfDirectory(atPath: dcim + "/" + folder)) ?? [] {
                guard let name = Name(folder + "/" + file) else { continue }   // temporary files, others
                var st = stat()
                guard lstat(dcim + "/" + folder + "/" + file, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }  // links, directories
                byNumber[name.number, default: []].append(name)
            }
        }
        return byNumber.keys.sorted(by: >).map { Item(number: $0, files: byNumber[$0]!.sorted()) }
    }

    /// Opens a file for reading: the folder and then the file, neither through a link, and
    /// only a regular file. Nil when there is no such file.
    public func open(_ name: Name) -> OpenFile? {
        guard let folder = try? FileDescriptor.open(dcim + "/" + name.folderName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW) else { return nil }
        return OpenFile.regular(name.fileName, in: folder.rawValue)
    }

    /// A file's whole contents (for converting it); nil when absent or larger than `limit`.
    public func read(_ name: Name, limit: UInt64 = 256 << 20) -> [UInt8]? {
        guard let file = open(name) else { return nil }
        guard file.size <= limit else { return nil }
        let fd = file.rawValue
        var bytes = [UInt8](repeating: 0, count: Int(file.size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return bytes
    }

    /// When the file last changed (for caches).
    public func modified(_ name: Name) -> Int? {
        open(name)?.status().map { Int($0.st_mtim.tv_sec) }
    }
}
