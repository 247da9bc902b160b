import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A hard memory limit for one test's child processes: a memory cgroup (and no swap to dodge
/// it) — cgroup v1 (a child of this process's memory cgroup), cgroup v2 (a child where the
/// parent delegates `memory`), or a systemd scope (`systemd-run --scope -p MemoryMax=`) when
/// systemd is PID 1 — and where no cgroup can be made (a container or chroot without one),
/// RLIMIT_DATA: setrlimit through the shell's `ulimit -d`. That limit counts every private
/// writable mapping (heap, anonymous maps, thread stacks), touched or not, so it is at least
/// as strict as the resident memory it stands for; a program over it gets failed allocations
/// instead of an OOM kill. Children are started under it through `wrap`, so that they are
/// limited before they allocate anything. `LOOPIX_TEST_MEMORY_LIMIT=rlimit` takes RLIMIT_DATA
/// even where a cgroup could be made (to test the fallback).
final class MemoryLimit {
    enum Kind: String { case v1 = "cgroup v1", v2 = "cgroup v2", systemdScope = "systemd scope", dataRlimit = "RLIMIT_DATA" }

    let path: String
    let kind: Kind
    let limitBytes: Int
    /// The scope's first process (`sleep`), which keeps a systemd scope alive.
    private var holder: Process?

    private init(path: String, kind: Kind, limitBytes: Int, holder: Process? = nil) {
        self.path = path
        self.kind = kind
        self.limitBytes = limitBytes
        self.holder = holder
    }

    /// A fresh cgroup limited to `limitBytes`, else RLIMIT_DATA at `limitBytes`.
    static func make(limitBytes: Int) throws -> MemoryLimit {
        let rlimit = MemoryLimit(path: "", kind: .dataRlimit, limitBytes: limitBytes)
        if ProcessInfo.processInfo.environment["LOOPIX_TEST_MEMORY_LIMIT"] == "rlimit" { return rlimit }
        let name = "loopix-memtest-\(UUID().uuidString.prefix(8).lowercased())"
        var reasons: [String] = []
        let selfCgroup = (try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)) ?? ""
        let lines = selfCgroup.split(separator: "\n").map { $0.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init) }

        // cgroup v1: the memory hierarchy, its own file names.
        let v1Root = "/sys/fs/cgroup/memory"
        if FileManager.default.fileExists(atPath: v1Root + "/memory.limit_in_bytes") {
            let own = lines.first { $0.count == 3 && $0[1].split(separator: ",").contains("memory") }?[2] ?? "/"
            for parent in unique([v1Root + (own == "/" ? "" : own), v1Root]) {
                // memory+swap too, so that swap cannot take what the limit refuses (absent
                // when the kernel does not account swap).
                do {
                    return try attempt(parent + "/" + name, .v1, limitBytes,
                                       [("memory.limit_in_bytes", "\(limitBytes)"), ("memory.memsw.limit_in_bytes", "\(limitBytes)")])
                } catch { reasons.append("cgroup v1 under \(parent): \(error)") }
            }
        }

        // cgroup v2: a child of a cgroup whose cgroup.subtree_control has `memory`.
        let v2Root = "/sys/fs/cgroup"
        if let controllers = try? String(contentsOfFile: v2Root + "/cgroup.controllers", encoding: .utf8),
           controllers.split(whereSeparator: \.isWhitespace).contains("memory") {
            let own = lines.first { $0.count == 3 && $0[0] == "0" }?[2] ?? "/"
            let ownDir = v2Root + (own == "/" ? "" : own)
            for parent in unique([ownDir, (ownDir as NSString).deletingLastPathComponent, v2Root]) where parent.hasPrefix(v2Root) {
                let subtree = (try? String(contentsOfFile: parent + "/cgroup.subtree_control", encoding: .utf8)) ?? ""
                guard subtree.split(whereSeparator: \.isWhitespace).contains("memory") else {
                    reasons.append("cgroup v2: \(parent)/cgroup.subtree_control has no memory")
                    continue
                }
                do {
                    return try attempt(parent + "/" + name, .v2, limitBytes, [("memory.max", "\(limitBytes)"), ("memory.swap.max", "0")])
                } catch { reasons.append("cgroup v2 under \(parent): \(error)") }
            }
            // systemd's own way, when it is the init system.
            let initName = (try? String(contentsOfFile: "/proc/1/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            if initName == "systemd", let systemdRun = ["/usr/bin/systemd-run", "/bin/systemd-run"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
                do { return try scope(systemdRun: systemdRun, name: name, limitBytes: limitBytes) } catch {
                    reasons.append("systemd-run --scope: \(error)")
                }
            } else {
                reasons.append("systemd is not PID 1 (it is \(initName ?? "unknown")), so no systemd-run --scope")
            }
        } else if !FileManager.default.fileExists(atPath: v1Root) {
            reasons.append("no memory controller (neither \(v1Root) nor memory in \(v2Root)/cgroup.controllers)")
        }
        print("no memory cgroup here (\(reasons.joined(separator: "; "))): RLIMIT_DATA instead")
        return rlimit
    }

    /// `systemd-run --scope` around a `sleep` that holds the scope (and its cgroup) while the
    /// test's children are put into it.
    private static func scope(systemdRun: String, name: String, limitBytes: Int) throws -> MemoryLimit {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: systemdRun)
        p.arguments = ["--scope", "--quiet", "--unit=\(name)", "-p", "MemoryMax=\(limitBytes)", "-p", "MemorySwapMax=0", "/bin/sleep", "3600"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(10)
        while p.isRunning && Date() < deadline {
            // systemd-run moves itself into the scope and then execs sleep: same pid.
            let text = (try? String(contentsOfFile: "/proc/\(p.processIdentifier)/cgroup", encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("0::") }), line.hasSuffix("/\(name).scope") {
                let dir = "/sys/fs/cgroup" + line.dropFirst(3)
                let max = (try? String(contentsOfFile: dir + "/memory.max", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                guard max == "\(limitBytes)" else {
                    kill(p.processIdentifier, SIGTERM)
                    p.waitUntilExit()
                    throw ProgramFailed(description: "\(dir)/memory.max is \(max ?? "unreadable"), not \(limitBytes)")
                }
                return MemoryLimit(path: dir, kind: .systemdScope, limitBytes: limitBytes, holder: p)
            }
            usleep(20_000)
        }
        if p.isRunning { kill(p.processIdentifier, SIGTERM) }
        p.waitUntilExit()
        throw ProgramFailed(description: "the scope \(name) did not appear (systemd-run exited \(p.terminationStatus))")
    }

    /// `/bin/sh` and its arguments that put the shell under this limit (into the cgroup, or
    /// its RLIMIT_DATA, which `exec` keeps) and then exec `program`.
    func wrap(_ program: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        let enter = kind == .dataRlimit ? "ulimit -d \(limitBytes / 1024)" : "echo $$ > '\(path)/cgroup.procs'"
        return ("/bin/sh", ["-c", "\(enter) && exec \"$0\" \"$@\"", program] + arguments)
    }

    /// The most memory the cgroup has been charged (v1 `memory.max_usage_in_bytes`, v2
    /// `memory.peak`; page cache included); nil where the kernel does not say.
    var peakBytes: Int? {
        kind == .dataRlimit ? nil : number(kind == .v1 ? "memory.max_usage_in_bytes" : "memory.peak")
    }

    /// OOM kills in the cgroup (v1 `memory.oom_control`, v2 `memory.events`); nil where the
    /// kernel does not count them.
    var oomKills: Int? {
        kind == .dataRlimit ? nil : field("oom_kill", in: kind == .v1 ? "memory.oom_control" : "memory.events")
    }

    /// How often the limit was hit (v1 `memory.failcnt`, v2 `memory.events` max): reclaim, not
    /// necessarily a failure.
    var limitHits: Int? {
        switch kind {
        case .dataRlimit: nil
        case .v1: number("memory.failcnt")
        case .v2, .systemdScope: field("max", in: "memory.events")
        }
    }

    /// The processes in the cgroup; nil under RLIMIT_DATA, which has no list.
    var processes: [Int32]? {
        guard kind != .dataRlimit else { return nil }
        return ((try? String(contentsOfFile: path + "/cgroup.procs", encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int32($0) }
    }

    /// One line for the test's output.
    var summary: String {
        let mb = { (n: Int?) in n.map { String(format: "%.1f MB", Double($0) / 1_048_576) } ?? "not reported" }
        if kind == .dataRlimit { return "\(kind.rawValue): limit \(mb(limitBytes)) of private writable memory" }
        return "\(kind.rawValue) \(path): limit \(mb(limitBytes)), peak \(mb(peakBytes)), OOM kills \(oomKills.map(String.init) ?? "not reported"), limit hit \(limitHits.map(String.init) ?? "?") times"
    }

    /// Removes the cgroup once its processes are gone (they have been waited for).
    func remove() {
        guard kind != .dataRlimit else { return } // nothing was made
        if let holder {
            if holder.isRunning { kill(holder.processIdentifier, SIGTERM) }
            holder.waitUntilExit()
            self.holder = nil
            return // systemd removes the scope's cgroup
        }
        let deadline = Date().addingTimeInterval(10)
        while rmdir(path) != 0 {
            guard errno == EBUSY, Date() < deadline else {
                XCTFail("cannot remove \(path): \(String(cString: strerror(errno))); processes \(processes ?? [])")
                return
            }
            usleep(50_000)
        }
    }

    private func number(_ file: String) -> Int? {
        (try? String(contentsOfFile: path + "/" + file, encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// `key N` from a flat keyed file.
    private func field(_ key: String, in file: String) -> Int? {
        let text = (try? String(contentsOfFile: path + "/" + file, encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count == 2, words[0] == key { return Int(words[1]) }
        }
        return nil
    }

    /// Makes the cgroup `dir` and writes its limit files (the first must exist; the others are
    /// written where the kernel has them); removes it again when that fails.
    private static func attempt(_ dir: String, _ kind: Kind, _ limitBytes: Int, _ files: [(String, String)]) throws -> MemoryLimit {
        do {
            try make(dir)
            for (i, (file, value)) in files.enumerated() where i == 0 || FileManager.default.fileExists(atPath: dir + "/" + file) {
                try write(value, dir + "/" + file)
            }
            return MemoryLimit(path: dir, kind: kind, limitBytes: limitBytes)
        } catch {
            rmdir(dir)
            throw error
        }
    }

    private static func make(_ dir: String) throws {
        guard mkdir(dir, 0o755) == 0 else { throw ProgramFailed(description: "mkdir \(dir): \(String(cString: strerror(errno)))") }
    }

    private static func write(_ value: String, _ file: String) throws {
        let fd = open(file, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ProgramFailed(description: "open \(file): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(value.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw ProgramFailed(description: "write \(value) to \(file): \(String(cString: strerror(errno)))")
        }
    }

    private static func unique(_ paths: [String]) -> [String] {
        var seen = Set<String>()
        return paths.filter { seen.insert($0).inserted }
    }
}
