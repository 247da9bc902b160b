#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Directories the daemon keeps (photos, state), made and checked with errors that name the
/// part of the path that is in the way.
public enum Directories {
    /// A directory that cannot be made: `path` and why, on one line.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public let path: String
        /// "/x is a file, not a directory", "Permission denied (errno 13)"…
        public let problem: String
        public var description: String { "\(path): cannot create the directory: \(problem)" }
    }

    /// Why `path` cannot be a directory ("/x is a file, not a directory", naming the part in
    /// the way), or nil when every part of it that exists is a directory.
    public static func problem(_ path: String) -> String? {
        var prefix = path.hasPrefix("/") ? "" : "."
        for name in path.split(separator: "/") {
            prefix += "/" + name
            var st = stat()
            guard stat(prefix, &st) == 0 else { return nil }  // missing from here on: mkdir makes it
            let type = st.st_mode & S_IFMT
            if type != S_IFDIR {
                let shown = path.hasPrefix("/") ? prefix : String(prefix.dropFirst(2))
                return "\(shown) is \(type == S_IFREG ? "a file" : "something else"), not a directory"
            }
        }
        return nil
    }

    /// `mkdir -p`: makes `path` and whatever of its parents is missing. Where it is there
    /// already (every photo asks), that costs one `mkdir` and one `stat`.
    public static func create(_ path: String, mode: mode_t = 0o755) throws(Failure) {
        if let e = make(path, mode) {
            throw Failure(path: path, problem: problem(path) ?? "\(e)")
        }
    }

    /// Makes `path`, its missing parents first; nil when it is a directory now.
    private static func make(_ path: String, _ mode: mode_t) -> Errno? {
        if mkdir(path, mode) == 0 { return nil }
        let e = Errno.current
        if e == Errno(EEXIST) { return isDirectory(path) ? nil : Errno(ENOTDIR) }
        guard e == Errno(ENOENT), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return e }
        if let parent = make(String(path[..<slash]), mode) { return parent }
        if mkdir(path, mode) == 0 || isDirectory(path) { return nil }  // or made meanwhile
        return Errno.current
    }

    private static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }
}
