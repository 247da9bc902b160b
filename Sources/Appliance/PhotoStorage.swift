import Foundation
import ImageFiles
#if canImport(Glibc)
import Glibc
#endif

/// Where photos go: a DCF layout (`DCIM/100LOOPX/LPX_0001.HEIC`) under the storage directory.
/// File numbers are never reused, across deletes and restarts: the last number handed out is
/// kept in the state directory (`counter`, written atomically before the number is used) and
/// the folders are scanned at start, whichever is higher wins.
public final class PhotoStorage: @unchecked Sendable {
    public let directory: String
    public let stateDirectory: String
    /// Free space to keep, in bytes: below it the storage counts as full.
    public var reserveBytes: Int64
    private let lock = NSLock()
    private var lastNumber: Int

    /// A storage problem, one line each.
    public enum StorageError: Error, Equatable, CustomStringConvertible {
        case full(String)
        case unavailable(String)

        public var description: String {
            switch self {
            case .full(let what): return "storage full (\(what))"
            case .unavailable(let what): return "storage unavailable (\(what))"
            }
        }
    }

    public init(directory: String, stateDirectory: String, reserveBytes: Int64) {
        self.directory = directory
        self.stateDirectory = stateDirectory
        self.reserveBytes = reserveBytes
        let saved = (try? String(contentsOfFile: stateDirectory + "/counter", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
        lastNumber = max(saved, Self.highestNumber(in: directory + "/DCIM"))
    }

    /// The path for photo number `n` (1-based): folder 100 + (n − 1) / 9999, file (n − 1) % 9999 + 1.
    public static func path(number n: Int, in directory: String) -> String {
        let folder = 100 + (n - 1) / 9999, file = (n - 1) % 9999 + 1
        return directory + "/DCIM/\(folder)LOOPX/LPX_" + String(repeating: "0", count: 4 - String(file).count) + "\(file).HEIC"
    }

    /// Reserves the next number and returns its path (folder created). Throws when the
    /// storage is full or cannot be written.
    public func reservePath() throws(StorageError) -> String {
        try checkSpace()
        lock.lock()
        defer { lock.unlock() }
        let n = lastNumber + 1
        let path = Self.path(number: n, in: directory)
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
            try AtomicFile.write(Array("\(n)\n".utf8), to: stateDirectory + "/counter", replace: true)
        } catch {
            throw .unavailable("\(folder): \(error)")
        }
        lastNumber = n
        return path
    }

    /// Free bytes on the storage's filesystem, or nil when it cannot be asked.
    public func freeBytes() -> Int64? {
        var st = statvfs()
        let target = FileManager.default.fileExists(atPath: directory) ? directory : (directory as NSString).deletingLastPathComponent
        guard statvfs(target, &st) == 0 else { return nil }
        return Int64(st.f_bavail) * Int64(st.f_frsize)
    }

    /// Throws `.full` when less than the reserve is free.
    public func checkSpace() throws(StorageError) {
        guard let free = freeBytes() else { throw .unavailable("\(directory): cannot read free space") }
        if free < reserveBytes {
            throw .full("\(directory): \(free / 1_048_576) MB free, \(reserveBytes / 1_048_576) MB kept in reserve")
        }
    }

    /// How many more photos of about `bytesPerPhoto` fit above the reserve.
    public func shotsRemaining(bytesPerPhoto: Int64) -> Int? {
        guard let free = freeBytes(), bytesPerPhoto > 0 else { return nil }
        return Int(max(0, free - reserveBytes) / bytesPerPhoto)
    }

    /// The highest LPX number in DCIM/NNNLOOPX folders.
    static func highestNumber(in dcim: String) -> Int {
        let fm = FileManager.default
        guard let folders = try? fm.contentsOfDirectory(atPath: dcim) else { return 0 }
        var highest = 0
        for folder in folders where folder.count == 8 && folder.hasSuffix("LOOPX") {
            guard let folderNumber = Int(folder.prefix(3)), (100...999).contains(folderNumber),
                  let files = try? fm.contentsOfDirectory(atPath: dcim + "/" + folder) else { continue }
            for file in files where file.hasPrefix("LPX_") && file.uppercased().hasSuffix(".HEIC") {
                guard let n = Int(file.dropFirst(4).prefix(4)), n >= 1 else { continue }
                highest = max(highest, (folderNumber - 100) * 9999 + n)
            }
        }
        return highest
    }
}
