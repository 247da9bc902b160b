import Foundation
import ImageFiles
import System
#if canImport(Glibc)
import Glibc
#endif

/// Where photos and clips go: a DCF layout (`DCIM/100LOOPX/LPX_0001.HEIC`, `LPX_0002.MP4`) under
/// the storage directory, one sequence of numbers for both.
/// File numbers are never reused, across deletes and restarts: the last number handed out is
/// kept in the state directory (`counter`, written atomically before the number is used) and
/// the folders are scanned at start, whichever is higher wins.
///
/// Space: a capture is taken only when the photo it makes fits above the reserve, counting the
/// bytes already promised to photos still being saved (`reserve(bytes:)`, `release`). How big a
/// photo is comes from `PhotoSizeEstimate`, which learns from the photos saved. The free space
/// is asked of the filesystem at most once a second (and after every save), never per frame.
///
/// Thread safety: everything mutable is under one lock; the controller reserves, the capture
/// queue releases.
public final class PhotoStorage: Sendable {
    public let directory: String
    public let stateDirectory: String

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

    private struct State {
        var reserveBytes: Int64
        var lastNumber: Int
        /// Why numbers cannot be handed out (an unreadable counter), if so.
        var counterProblem: String?
        /// Bytes promised to photos reserved but not yet saved.
        var promised: Int64 = 0
        var free: Int64?
        var freeReadAt: UInt64 = 0
        var freeIsStale = true
    }

    private let state: Locked<State>

    public var reserveBytes: Int64 {
        get { state.withLock { $0.reserveBytes } }
        set { state.withLock { $0.reserveBytes = newValue } }
    }

    public init(directory: String, stateDirectory: String, reserveBytes: Int64) {
        self.directory = directory
        self.stateDirectory = stateDirectory
        let counterPath = stateDirectory + "/counter"
        var problem: String?
        var saved = 0
        switch Self.readCounter(counterPath) {
        case .success(let n): saved = n
        case .failure(.unreadable(let why)):
            problem = "\(counterPath): cannot be read (\(why)); no photo is numbered until it can be, so that no number is used twice"
            Log.error(problem!)
        case .failure(.corrupt(let text)):
            let aside = counterPath + ".bad"
            rename(counterPath, aside)
            Log.warning("\(counterPath): \"\(text.prefix(20))\" is not a photo number; moved to counter.bad, numbering goes on after the highest photo on the storage")
        }
        state = Locked(State(reserveBytes: reserveBytes, lastNumber: max(saved, Self.highestNumber(in: directory + "/DCIM")),
                             counterProblem: problem))
    }

    private enum CounterProblem: Error { case unreadable(String), corrupt(String) }

    private static func readCounter(_ path: String) -> Result<Int, CounterProblem> {
        let fd: FileDescriptor
        do { fd = try .open(path, O_RDONLY) } catch {
            return error == .noSuchFile ? .success(0) : .failure(.unreadable(error.description))
        }
        var bytes = [UInt8](repeating: 0, count: 64)
        let raw = fd.rawValue
        let n = bytes.withUnsafeMutableBytes { read(raw, $0.baseAddress, $0.count) }
        guard n >= 0 else { return .failure(.unreadable(Errno.current.description)) }
        let text = String(decoding: bytes[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let value = Int(text), value >= 0 else { return .failure(.corrupt(text)) }
        return .success(value)
    }

    /// The path for photo number `n` (1-based): folder 100 + (n − 1) / 9999, file (n − 1) % 9999 + 1.
    public static func path(number n: Int, in directory: String, extension ext: String = "HEIC") -> String {
        let folder = 100 + (n - 1) / 9999, file = (n - 1) % 9999 + 1
        return directory + "/DCIM/\(folder)LOOPX/LPX_" + String(repeating: "0", count: 4 - String(file).count) + "\(file).\(ext)"
    }

    /// Checks that `bytes` more fit above the reserve (with what queued photos will take),
    /// promises them, reserves the next number and returns its path (folder created). Call
    /// `release(bytes)` once the photo is saved or lost.
    public func reserve(bytes: Int64, extension ext: String = "HEIC") throws(StorageError) -> String {
        try state.withLock { s -> Result<String, StorageError> in
            if let problem = s.counterProblem { return .failure(.unavailable(problem)) }
            guard let free = freeBytesLocked(&s) else { return .failure(.unavailable("\(directory): cannot read free space")) }
            let needed = s.reserveBytes + s.promised + bytes
            if free < needed {
                return .failure(.full("\(directory): \(free / 1_048_576) MB free; a photo needs about \(bytes / 1_048_576 + 1) MB, "
                            + "\(s.reserveBytes / 1_048_576) MB are kept in reserve"
                            + (s.promised > 0 ? " and \(s.promised / 1_048_576) MB are promised to photos being saved" : "")))
            }
            let n = s.lastNumber + 1
            let path = Self.path(number: n, in: directory, extension: ext)
            let folder = (path as NSString).deletingLastPathComponent
            do {
                try Directories.create(folder)
                try Directories.create(stateDirectory)
                try AtomicFile.write(Array("\(n)\n".utf8), to: stateDirectory + "/counter", replace: true)
            } catch let error as Directories.Failure {
                return .failure(.unavailable("\(error)"))
            } catch {
                return .failure(.unavailable("\(stateDirectory)/counter: \(error)"))
            }
            s.lastNumber = n
            s.promised += bytes
            return .success(path)
        }.get()
    }

    /// Gives back bytes promised by `reserve` (the photo was saved, or lost); the free space is
    /// read again next time.
    public func release(bytes: Int64) {
        state.withLock { s in
            s.promised = max(0, s.promised - bytes)
            s.freeIsStale = true
        }
    }

    /// Free bytes on the storage's filesystem (asked of the kernel at most once a second), or
    /// nil when it cannot be asked.
    public func freeBytes() -> Int64? {
        state.withLock { s in freeBytesLocked(&s) }
    }

    private func freeBytesLocked(_ s: inout State) -> Int64? {
        let now = MonotonicClock.now()
        if s.freeIsStale || now - s.freeReadAt >= 1_000_000_000 {
            var st = statvfs()
            let target = FileManager.default.fileExists(atPath: directory) ? directory : (directory as NSString).deletingLastPathComponent
            s.free = statvfs(target, &st) == 0 ? Int64(st.f_bavail) * Int64(st.f_frsize) : nil
            s.freeReadAt = now
            s.freeIsStale = false
        }
        return s.free
    }

    /// How many more photos of about `bytesPerPhoto` fit above the reserve and what is promised.
    public func shotsRemaining(bytesPerPhoto: Int64) -> Int? {
        guard bytesPerPhoto > 0 else { return nil }
        return state.withLock { s -> Int? in
            guard let free = freeBytesLocked(&s) else { return nil }
            return Int(max(0, free - s.reserveBytes - s.promised) / bytesPerPhoto)
        }
    }

    /// Removes what saves cut short left behind — `.LPX_0015.HEIC.<random>.tmp` in the photo
    /// folders (a power cut between creating the temporary file and renaming it) — and returns
    /// how many. Called once at start, before any save.
    @discardableResult
    public func removeLeftoverTemporaryFiles() -> Int {
        let fm = FileManager.default
        let dcim = directory + "/DCIM"
        var removed = 0
        for folder in (try? fm.contentsOfDirectory(atPath: dcim)) ?? [] where folder.hasSuffix("LOOPX") {
            for file in (try? fm.contentsOfDirectory(atPath: dcim + "/" + folder)) ?? []
            where file.hasPrefix(".LPX_") && file.hasSuffix(".tmp") {
                let path = dcim + "/" + folder + "/" + file
                if unlink(path) == 0 {
                    removed += 1
                } else {
                    Log.warning("\(path): a leftover temporary file cannot be removed: \(Errno.current)")
                }
            }
        }
        if removed > 0 {
            Log.info("\(dcim): removed \(removed) temporary file\(removed == 1 ? "" : "s") left by a save that was cut short (power loss or kill)")
        }
        return removed
    }

    /// The highest LPX number in DCIM/NNNLOOPX folders.
    static func highestNumber(in dcim: String) -> Int {
        let fm = FileManager.default
        guard let folders = try? fm.contentsOfDirectory(atPath: dcim) else { return 0 }
        var highest = 0
        for folder in folders where folder.count == 8 && folder.hasSuffix("LOOPX") {
            guard let folderNumber = Int(folder.prefix(3)), (100...999).contains(folderNumber),
                  let files = try? fm.contentsOfDirectory(atPath: dcim + "/" + folder) else { continue }
            for file in files where file.hasPrefix("LPX_") && file.count >= 8 {
                guard let n = Int(file.dropFirst(4).prefix(4)), n >= 1 else { continue }
                highest = max(highest, (folderNumber - 100) * 9999 + n)
            }
        }
        return highest
    }
}

/// How many bytes the next photo will take, learnt from the photos saved: the largest bytes
/// per pixel among the last few, with a margin (film grain makes photos big and their size
/// varies with the scene). Before any photo is saved: 1 byte per pixel for each file, HEIC or
/// JPEG (a grainy 12 MP HEIC at quality 70 is about 6 MB, a JPEG at 90 less), plus 3 per pixel for a
/// kept original PNG.
public struct PhotoSizeEstimate: Sendable {
    public static let margin = 1.25
    public static let initialBytesPerPixel = 1.0
    private var recent: [Double] = []

    public init() {}

    /// Records a saved photo of `pixels` pixels that took `bytes`.
    public mutating func learn(bytes: Int64, pixels: Int) {
        guard pixels > 0, bytes > 0 else { return }
        recent.append(Double(bytes) / Double(pixels))
        if recent.count > 8 { recent.removeFirst() }
    }

    /// The bytes to promise for a photo of `pixels` pixels in `files` files (HEIC and JPEG: 2),
    /// its original, if kept (PNG, up to 3 bytes a pixel), and its raw negative (DNG, 2 bytes a
    /// photosite). What is learnt is per photo, all its files together.
    public func bytes(pixels: Int, keepOriginal: Bool, raw: Bool = false, files: Int = 1) -> Int64 {
        let learnt = recent.max() ?? Self.initialBytesPerPixel * Double(max(1, files))
        let perPixel = max(learnt, 0.05) * Self.margin + (keepOriginal ? 3 : 0) + (raw ? 2 : 0)
        return Int64(Double(pixels) * perPixel) + 65_536
    }
}
