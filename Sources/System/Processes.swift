#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLoopixSys

/// Programs the daemon starts, each whole in a keeper process (`CLoopixSys_spawnKept`).
public enum KeptProcess {
    /// Starts `arguments[0]` (an absolute path; no PATH search, no shell) with `arguments` and
    /// `environment` under a keeper, which is returned: SIGTERM to it ends everything the
    /// program started (SIGKILL after `graceMilliseconds`), and it ends, with the program's
    /// status, once all of it has. Throws the exec's errno when the program cannot start.
    public static func spawn(_ arguments: [String], environment: [String: String], graceMilliseconds: Int32) throws(Errno) -> pid_t {
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = CLoopixSys_spawnKept(argv, envp, graceMilliseconds, &pid)
        guard rc == 0 else { throw Errno(rc) }
        return pid
    }
}

extension FileDescriptor {
    /// Renames `from` to `to` inside this directory without ever replacing a file at `to`:
    /// `renameat2(RENAME_NOREPLACE)`, or where the filesystem lacks the flag (EINVAL, ENOSYS)
    /// `linkat` + `unlinkat`, which refuses to replace too. EEXIST when `to` exists.
    public func renameNoReplace(_ from: String, to: String) throws(Errno) {
        if CLoopixSys_renameNoReplace(rawValue, from, rawValue, to) == 0 { return }
        let e = errno
        guard e == EINVAL || e == ENOSYS else { throw Errno(e) }
        guard linkat(rawValue, from, rawValue, to, 0) == 0 else { throw Errno.current }
        unlinkat(rawValue, from, 0)
    }
}
