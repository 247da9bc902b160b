#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import System

/// Crash-safe file creation: a file appears under its final name complete and fsynced, or not
/// at all.
///
/// The bytes go to a temporary file in the same directory, created exclusively
/// (`O_CREAT|O_EXCL|O_CLOEXEC`, named `.<name>.<random>.tmp`), which is fsynced and then
/// renamed into place. Without `replace` the rename never replaces a file
/// (`FileDescriptor.renameNoReplace`: `renameat2(RENAME_NOREPLACE)`, or `link()` + `unlink()`
/// on filesystems that lack the flag), so an existing file is never overwritten, even by a race.
/// With `replace` it is a plain `rename()`. Finally the directory is fsynced.
///
/// On any error the temporary file is removed and the error says what was being done. A failed
/// `fsync` (of the file or the directory) or `close` is reported as `.lost`: the kernel may have
/// dropped the data, so it is never retried. `write` is retried on EINTR and looped over
/// partial writes.
public enum AtomicFile {
    public static func write(to path: String, replace: Bool,
                             _ body: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        let (dir, name) = splitPath(path)
        guard !name.isEmpty, name != ".", name != ".." else {
            throw ImageFileError.invalidArgument(path: path, message: "not a file name")
        }
        if !replace {
            var st = stat()
            if lstat(path, &st) == 0 { throw ImageFileError.alreadyExists(path: path) }
        }
        let directory = try opened(dir, O_RDONLY | O_DIRECTORY, path: path, action: "open directory \(dir)")
        try write(inDirectory: directory, name: name, path: path, replace: replace, body)
    }

    /// The same, inside a directory already open (`directory`, which the caller keeps):
    /// nothing is looked up by path, so a directory swapped for a symbolic link meanwhile
    /// changes nothing. `path` only names the file in errors.
    public static func write(inDirectory directory: borrowing FileDescriptor, name: String, path: String, replace: Bool,
                             _ body: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else {
            throw ImageFileError.invalidArgument(path: path, message: "not a file name")
        }
        let dir = splitPath(path).0
        var tmpName = ""
        let tmp = try createTemporary(in: directory, for: name, named: &tmpName, path: path, dir: dir)
        var tmpExists = true
        defer {
            if tmpExists { unlinkat(directory.rawValue, tmpName, 0) }
        }
        try body { buffer in
            do throws(Errno) { try tmp.writeAll(buffer) } catch { throw ImageFileError.system(path: path, action: "write", errno: error) }
        }
        // A failed fsync or close means the kernel may have dropped the data: lost, never retried.
        do { try tmp.sync() } catch { throw ImageFileError.lost(path: path, errno: error) }
        do { try tmp.close() } catch { throw ImageFileError.lost(path: path, errno: error) }

        if replace {
            if renameat(directory.rawValue, tmpName, directory.rawValue, name) != 0 {
                throw ImageFileError.system(path: path, action: "rename the temporary file into place", errno: Errno.current)
            }
            tmpExists = false
        } else {
            do { try directory.renameNoReplace(tmpName, to: name) } catch {
                if error == Errno(EEXIST) { throw ImageFileError.alreadyExists(path: path) }
                throw ImageFileError.system(path: path, action: "rename the temporary file into place", errno: error)
            }
            tmpExists = false
        }
        do { try directory.sync() } catch { throw ImageFileError.lost(path: path, errno: error) }
    }

    public static func write(_ bytes: [UInt8], to path: String, replace: Bool) throws {
        try write(to: path, replace: replace) { write in
            try bytes.withUnsafeBytes { try write($0) }
        }
    }

    public static func write(_ bytes: [UInt8], inDirectory directory: borrowing FileDescriptor, name: String, path: String, replace: Bool) throws {
        try write(inDirectory: directory, name: name, path: path, replace: replace) { write in
            try bytes.withUnsafeBytes { try write($0) }
        }
    }

    /// Exclusive creation of `.<name>.<random>.tmp`; a leftover temp of the same name (a crash
    /// long ago) just means another random name.
    private static func createTemporary(in directory: borrowing FileDescriptor, for name: String, named tmpName: inout String,
                                        path: String, dir: String) throws(ImageFileError) -> FileDescriptor {
        var lastError = Errno(EEXIST)
        for _ in 0..<16 {
            tmpName = ".\(name).\(String(UInt64.random(in: 0...UInt64.max), radix: 36)).tmp"
            do throws(Errno) {
                return try directory.openAt(tmpName, O_WRONLY | O_CREAT | O_EXCL, mode: 0o644)
            } catch {
                lastError = error
                if error != Errno(EEXIST) { break }
            }
        }
        throw .system(path: path, action: "create a temporary file in \(dir)", errno: lastError)
    }

    /// ("dir", "name"): the directory is "." for a bare name, "/" for a file at the root.
    static func splitPath(_ path: String) -> (String, String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let name = String(path[path.index(after: slash)...])
        var dir = String(path[..<slash])
        if dir.isEmpty { dir = "/" }
        return (dir, name)
    }
}

/// Reads a whole file into memory.
func readWholeFile(path: String) throws -> [UInt8] {
    let file = try opened(path, O_RDONLY, path: path, action: "open for reading")
    let st: stat
    do { st = try file.status() } catch { throw ImageFileError.system(path: path, action: "stat", errno: error) }
    if (st.st_mode & S_IFMT) == S_IFDIR {
        throw ImageFileError.system(path: path, action: "read", errno: Errno(EISDIR))
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(Int(st.st_size) + 1)
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n: Int
        let got: Result<Int, Errno> = chunk.withUnsafeMutableBytes { buffer in
            do throws(Errno) { return .success(try file.read(into: buffer)) } catch { return .failure(error) }
        }
        switch got {
        case .success(let count): n = count
        case .failure(let error): throw ImageFileError.system(path: path, action: "read", errno: error)
        }
        if n == 0 { break }
        bytes.append(contentsOf: chunk[0..<n])
    }
    return bytes
}

/// `open(2)` through System's descriptor, failing with the file's error.
func opened(_ file: String, _ flags: Int32, path: String, action: String) throws(ImageFileError) -> FileDescriptor {
    do throws(Errno) {
        return try FileDescriptor.open(file, flags)
    } catch {
        throw .system(path: path, action: action, errno: error)
    }
}
