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

    /// The lowest memory limit on the way from this process's cgroup up to the root: cgroup v2's
    /// `memory.max` (a line "0::/system.slice/loopixd.service"), else cgroup v1's
    /// `memory.limit_in_bytes` in the memory hierarchy (a line "4:memory:/docker/abc"); nil when
    /// there is none ("max", or v1's near-2⁶³ "unlimited").
    public static func cgroupLimit(selfCgroup: String = "/proc/self/cgroup", root: String = "/sys/fs/cgroup") -> Int64? {
        guard let text = readSmallFile(selfCgroup) else { return nil }
        let lines = text.split(separator: "\n")
        if let line = lines.first(where: { $0.hasPrefix("0::") }),
           let limit = lowest(from: String(line.dropFirst(3)), under: root, file: "memory.max") {
            return limit
        }
        for line in lines {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[1].split(separator: ",").contains("memory") else { continue }
            return lowest(from: String(fields[2]), under: root + "/memory", file: "memory.limit_in_bytes")
        }
        return nil
    }

    /// The lowest number in `file` of the cgroup at `path` and its ancestors below `root`.
    private static func lowest(from path: String, under root: String, file: String) -> Int64? {
        var path = path
        var lowest: Int64?
        while true {
            if let value = readSmallFile(root + (path == "/" ? "" : path) + "/" + file)?.split(separator: "\n").first,
               let bytes = Int64(value), bytes < Int64.max / 2 {
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
