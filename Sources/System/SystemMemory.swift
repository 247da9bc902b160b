#if canImport(Glibc)
import Glibc
#endif

/// How much memory this process may count on: the machine's physical memory, or its cgroup's
/// limit (a service's `MemoryMax=`, a container) when that is lower.
public enum SystemMemory {
    public static func limitBytes() -> Int64 {
        let pages = Int64(sysconf(Int32(_SC_PHYS_PAGES))), pageSize = Int64(sysconf(Int32(_SC_PAGESIZE)))
        let physical = pages > 0 && pageSize > 0 ? pages * pageSize : 512 << 20
        guard let cgroup = cgroupLimit() else { return physical }
        return min(physical, cgroup)
    }

    /// The lowest `memory.max` on the way from this process's cgroup (v2) up to the root; nil
    /// when there is none or it is "max".
    public static func cgroupLimit(selfCgroup: String = "/proc/self/cgroup", root: String = "/sys/fs/cgroup") -> Int64? {
        guard let text = readSmallFile(selfCgroup) else { return nil }
        // cgroup v2: one line "0::/system.slice/loopixd.service".
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) else { return nil }
        var path = String(line.dropFirst(3))
        var lowest: Int64?
        while true {
            if let value = readSmallFile(root + (path == "/" ? "" : path) + "/memory.max")?.split(separator: "\n").first,
               let bytes = Int64(value) {
                lowest = min(lowest ?? bytes, bytes)
            }
            if path == "/" || path.isEmpty { break }
            let parent = path.split(separator: "/").dropLast().joined(separator: "/")
            path = "/" + parent
        }
        return lowest
    }

    /// A small text file's contents (at most 4 KiB); nil when unreadable.
    static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self)
    }
}
