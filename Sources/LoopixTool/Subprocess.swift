import Foundation
import System
#if canImport(Glibc)
import Glibc
#endif

/// Runs another program (for the benchmark's comparisons) and measures it: wall time, and the
/// child's own CPU time and peak resident memory from wait4(2). The peak is not the child's
/// alone: Linux starts a new process's high-water mark from its parent's resident memory at
/// fork or vfork, so `runAlone` starts the program from a small `loopix` in between.
enum Subprocess {
    struct Result {
        let status: Int32
        let seconds: Double
        /// Peak resident set size in bytes.
        let peakRSS: Int
        /// The child's own CPU time (user + system, all its threads), seconds.
        let cpuSeconds: Double
    }

    /// Runs the program from `loopix bench --peak-of` (this executable, small when it starts),
    /// so that its peak resident memory is its own, not this process's (hundreds of MB of
    /// frames in a benchmark). `me`: the path of this executable.
    static func runAlone(me: String, _ executable: String, _ arguments: [String], work: String,
                         keepStderr: Bool = false, stderrPath: String? = nil) throws(ToolError) -> Result {
        let report = work + "/peak-\(getpid()).txt"
        defer { unlink(report) }
        let outer = try run(me, ["bench", "--peak-of", report, executable] + arguments, keepStderr: keepStderr, stderrPath: stderrPath)
        guard let text = try? String(contentsOfFile: report, encoding: .utf8) else {
            throw ToolError("bench: \(executable): no measurement (loopix bench --peak-of exited \(outer.status))")
        }
        let f = text.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard f.count == 4 else { throw ToolError("bench: \(report): unreadable measurement \"\(text)\"") }
        return Result(status: Int32(f[0]), seconds: f[1], peakRSS: Int(f[2]), cpuSeconds: f[3])
    }

    /// `loopix bench --peak-of REPORT PROGRAM ARGS…`: runs the program and writes "status
    /// seconds peak-bytes cpu-seconds" to REPORT.
    static func measureForParent(_ words: [String]) throws(ToolError) {
        guard words.count >= 2 else { throw .usage("bench --peak-of REPORT PROGRAM [ARGS…]") }
        let r = try run(words[1], Array(words.dropFirst(2)), keepStderr: true)
        let line = "\(r.status) \(r.seconds) \(r.peakRSS) \(r.cpuSeconds)\n"
        guard FileManager.default.createFile(atPath: words[0], contents: Data(line.utf8)) else { throw ToolError("\(words[0]): cannot write") }
    }

    /// Finds `name` on $PATH.
    /// This program's own executable (to run it again as a child), from /proc/self/exe.
    static func ownExecutable() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Runs `executable` with `arguments`, standard input and output on /dev/null, standard
    /// error to /dev/null too unless `keepStderr`, or into the file `stderrPath`.
    static func run(_ executable: String, _ arguments: [String], keepStderr: Bool = false,
                    stderrPath: String? = nil) throws(ToolError) -> Result {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        if let stderrPath {
            posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } else if !keepStderr {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let start = MonotonicClock.now()
        let rc = argv.withUnsafeBufferPointer { p in
            posix_spawn(&pid, executable, &actions, nil, p.baseAddress!, environ)
        }
        guard rc == 0 else { throw ToolError("\(executable): cannot start (\(Errno(rc).message))") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw ToolError("\(executable): wait4 failed (\(Errno.current.message))") }
        }
        let seconds = Double(MonotonicClock.now() - start) / 1e9
        // WIFEXITED / WEXITSTATUS, which Swift does not import as macros.
        let exited = (status & 0x7f) == 0
        func time(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return Result(status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), seconds: seconds,
                      peakRSS: Int(usage.ru_maxrss) * 1024, cpuSeconds: time(usage.ru_utime) + time(usage.ru_stime))
    }
}
