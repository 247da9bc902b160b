#if canImport(Glibc)
import Glibc
#endif
import FilmCore
import Foundation
import ImageFiles
import System
import Raster

/// Saves the composed preview frame for the `snapshot` request, safely for a socket that
/// anyone in its group can use: the PNG is only ever a new file (never replacing one, never
/// written through a symbolic link at its name), and only in a directory the configuration
/// lists (`snapshot.directories`) or a directory below one.
///
/// Checked and written through the same descriptors, so nothing can be swapped in between: the
/// allowed directory is opened (it is the configuration's, so a symbolic link in its own path
/// is followed), then each directory below it with `O_NOFOLLOW|O_DIRECTORY` (a symbolic link
/// on the way is refused), each checked against where the photos and the state are kept, and
/// the file is created inside the last one with `openat`.
enum Snapshot {
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// `kept`: the photo and state directories; a snapshot never goes there, whatever
    /// `allowed` says.
    static func write(_ frame: RGBImage, to path: String, allowed: [String], kept: [String]) throws(Refusal) {
        func refuse(_ why: String) -> Refusal { Refusal(description: "\(path): \(why)") }
        let name = (path as NSString).lastPathComponent
        guard path.hasPrefix("/"), !name.isEmpty, name != ".", name != "..", !path.hasSuffix("/") else {
            throw refuse("not a file path")
        }
        let parent = components(of: (path as NSString).deletingLastPathComponent)
        guard !parent.contains("..") else { throw refuse("a snapshot path may not contain \"..\"") }
        let notAllowed = refuse("snapshots may only be written to \(allowed.joined(separator: ", ")) (snapshot.directories in the configuration)")
        let keptPaths = kept.compactMap(realPath)
        let keptIDs = keptPaths.compactMap(identity(ofPath:))
        func isKept(_ fd: Int32) -> Bool { identity(of: fd).map { id in keptIDs.contains { $0 == id } } ?? false }

        // The allowed directory the request names (as written in the configuration, or resolved),
        // and the directories below it.
        var match: (root: String, below: ArraySlice<String>)?
        for directory in allowed {
            for spelling in [directory, realPath(directory)].compactMap({ $0 }) {
                let root = components(of: spelling)
                if parent.starts(with: root), match.map({ root.count > components(of: $0.root).count }) ?? true {
                    match = (spelling, parent.dropFirst(root.count))
                }
            }
        }
        guard let match, let rootReal = realPath(match.root) else { throw notAllowed }
        if keptPaths.contains(where: { rootReal == $0 || rootReal.hasPrefix($0 == "/" ? "/" : $0 + "/") }) {
            throw refuse("snapshots never go where the photos or the daemon's state are kept")
        }
        var directory: FileDescriptor
        do { directory = try FileDescriptor.open(match.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) } catch {
            throw refuse("cannot open \(match.root): \(error)")
        }
        if isKept(directory.rawValue) { throw refuse("snapshots never go where the photos or the daemon's state are kept") }
        for component in match.below {
            do { directory = try directory.openAt(component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) } catch {
                if error == Errno(ELOOP) || error == Errno(ENOTDIR) {
                    throw refuse("\(component) is not a directory (symbolic links are not followed below \(match.root))")
                }
                throw refuse("cannot open the directory \(component): \(error)")
            }
            if isKept(directory.rawValue) { throw refuse("snapshots never go where the photos or the daemon's state are kept") }
        }
        do {
            try ImageWriter.write(frame, inDirectory: directory, name: name, path: path, format: .png, replace: false)
        } catch ImageFileError.alreadyExists {
            throw refuse("a file of that name exists; a snapshot never replaces a file")
        } catch {
            throw Refusal(description: "\(error)")
        }
    }

    /// The names in an absolute path, without empty and "." ones.
    private static func components(of path: String) -> [String] {
        path.split(separator: "/").map(String.init).filter { $0 != "." }
    }

    private struct Identity: Equatable {
        let device: UInt64, inode: UInt64
    }

    private static func identity(of fd: Int32) -> Identity? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        return Identity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    private static func identity(ofPath path: String) -> Identity? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Identity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    /// The path with every symbolic link resolved, or nil when it does not exist.
    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
