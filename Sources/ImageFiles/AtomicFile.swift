#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLoopixSys

/// Crash-safe file creation: a file appears under its final name complete and fsynced, or not
/// at all.
///
/// The bytes go to a temporary file in the same directory, created exclusively
/// (`O_CREAT|O_EXCL|O_CLOEXEC`, named `.<name>.<random>.tmp`), which is fsynced and then
/// renamed into place. Without `replace` the rename is `renameat2(RENAME_NOREPLACE)`
/// (`CLoopixSys_renameNoReplace`), falling back to `link()` + `unlink()` on filesystems that
/// lack the flag (EINVAL/ENOSYS), so an existing file is never overwritten, even by a race.
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
        let dirFD = try FileDescriptor.open(path: path, action: "open directory \(dir)") {
            Glibc.open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        try write(inDirectory: dirFD.raw, name: name, path: path, replace: replace, body)
    }

    /// The same, inside a directory already open (`directory`, a descriptor the caller keeps):
    /// nothing is looked up by path, so a directory swapped for a symbolic link meanwhile
    /// changes nothing. `path` only names the file in errors.
    public static func write(inDirectory directory: Int32, name: String, path: String, replace: Bool,
                             _ body: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else {
            throw ImageFileError.invalidArgument(path: path, message: "not a file name")
        }
        let dir = splitPath(path).0
        // Exclusive creation; a leftover temp of the same name (a crash long ago) just means
        // another random name.
        var tmpName = ""
        var tmpFD: Int32 = -1
        for _ in 0..<16 {
            tmpName = ".\(name).\(String(UInt64.random(in: 0...UInt64.max), radix: 36)).tmp"
            tmpFD = openat(directory, tmpName, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if tmpFD >= 0 || Glibc.errno != EEXIST { break }
        }
        if tmpFD < 0 {
            throw ImageFileError.system(path: path, action: "create a temporary file in \(dir)", errno: Glibc.errno)
        }
        var tmp: FileDescriptor? = FileDescriptor(raw: tmpFD)
        var tmpExists = true
        defer {
            if tmpExists { unlinkat(directory, tmpName, 0) }
        }

        let fd = tmpFD
        try body { buffer in
            try writeAll(fd: fd, buffer, path: path)
        }
        if fsync(fd) != 0 {
            throw ImageFileError.lost(path: path, errno: Glibc.errno)
        }
        if let closing = tmp.take() {
            try closing.close(path: path)
        }

        if replace {
            if renameat(directory, tmpName, directory, name) != 0 {
                throw ImageFileError.system(path: path, action: "rename the temporary file into place", errno: Glibc.errno)
            }
        } else if CLoopixSys_renameNoReplace(directory, tmpName, directory, name) != 0 {
            let e = Glibc.errno
            if e == EEXIST { throw ImageFileError.alreadyExists(path: path) }
            guard e == EINVAL || e == ENOSYS else {
                throw ImageFileError.system(path: path, action: "rename the temporary file into place", errno: e)
            }
            // No RENAME_NOREPLACE here: link() also refuses to replace.
            if linkat(directory, tmpName, directory, name, 0) != 0 {
                let e = Glibc.errno
                if e == EEXIST { throw ImageFileError.alreadyExists(path: path) }
                throw ImageFileError.system(path: path, action: "link the temporary file into place", errno: e)
            }
            // The defer unlinks the temporary name.
        } else {
            tmpExists = false
        }
        if tmpExists {
            unlinkat(directory, tmpName, 0)
            tmpExists = false
        }
        if fsync(directory) != 0 {
            throw ImageFileError.lost(path: path, errno: Glibc.errno)
        }
    }

    public static func write(_ bytes: [UInt8], to path: String, replace: Bool) throws {
        try write(to: path, replace: replace) { write in
            try bytes.withUnsafeBytes { try write($0) }
        }
    }

    public static func write(_ bytes: [UInt8], inDirectory directory: Int32, name: String, path: String, replace: Bool) throws {
        try write(inDirectory: directory, name: name, path: path, replace: replace) { write in
            try bytes.withUnsafeBytes { try write($0) }
        }
    }

    static func writeAll(fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws {
        guard var p = buffer.baseAddress else { return }
        var remaining = buffer.count
        while remaining > 0 {
            let n = Glibc.write(fd, p, remaining)
            if n < 0 {
                let e = Glibc.errno
                if e == EINTR { continue }
                throw ImageFileError.system(path: path, action: "write", errno: e)
            }
            if n == 0 { throw ImageFileError.system(path: path, action: "write", errno: EIO) }
            p += n
            remaining -= n
        }
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

/// Owns one open file descriptor; closes it in deinit unless closed explicitly.
struct FileDescriptor: ~Copyable {
    let raw: Int32

    init(raw: Int32) { self.raw = raw }

    /// Runs an open call (retrying EINTR) and wraps its descriptor.
    static func open(path: String, action: String, _ call: () -> Int32) throws -> FileDescriptor {
        while true {
            let fd = call()
            if fd >= 0 { return FileDescriptor(raw: fd) }
            let e = Glibc.errno
            if e != EINTR { throw ImageFileError.system(path: path, action: action, errno: e) }
        }
    }

    /// close(2), reporting failure: after writing, a failed close can mean lost data.
    consuming func close(path: String) throws {
        let fd = raw
        discard self
        if Glibc.close(fd) != 0 {
            let e = Glibc.errno
            if e != EINTR { throw ImageFileError.lost(path: path, errno: e) }
        }
    }

    deinit { Glibc.close(raw) }
}

/// Reads a whole file into memory.
func readWholeFile(path: String) throws -> [UInt8] {
    let file = try FileDescriptor.open(path: path, action: "open for reading") {
        Glibc.open(path, O_RDONLY | O_CLOEXEC)
    }
    var st = stat()
    if fstat(file.raw, &st) != 0 {
        throw ImageFileError.system(path: path, action: "stat", errno: Glibc.errno)
    }
    if (st.st_mode & S_IFMT) == S_IFDIR {
        throw ImageFileError.system(path: path, action: "read", errno: EISDIR)
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(Int(st.st_size) + 1)
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { Glibc.read(file.raw, $0.baseAddress, $0.count) }
        if n < 0 {
            let e = Glibc.errno
            if e == EINTR { continue }
            throw ImageFileError.system(path: path, action: "read", errno: e)
        }
        if n == 0 { break }
        bytes.append(contentsOf: chunk[0..<n])
    }
    return bytes
}
