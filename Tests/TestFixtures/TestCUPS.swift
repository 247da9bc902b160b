import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real `cupsd` of the test's own (its socket, spool and logs in a temporary directory) with
/// raw queues whose backend writes to a file, so a printed job is a file with the photo's bytes.
public final class TestCUPS {
    /// Why a test cupsd cannot run here (the test skips, saying so).
    public struct Unavailable: Error { public let reason: String }

    public let directory: String
    public var socket: String { directory + "/cups.sock" }
    private var daemon: Process?

    public init() throws {
        for tool in ["/usr/sbin/cupsd", "/usr/sbin/lpadmin", "/usr/sbin/cupsenable", "/usr/sbin/cupsdisable", "/usr/bin/lpstat"] {
            guard FileManager.default.isExecutableFile(atPath: tool) else {
                throw Unavailable(reason: "\(tool) is not installed (scripts/setup installs cups-daemon and cups-client)")
            }
        }
        guard getuid() == 0 else { throw Unavailable(reason: "a test cupsd runs as root") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cups-\(UUID().uuidString.prefix(8))").path
        for sub in ["", "/spool", "/spool/tmp", "/cache", "/state", "/log", "/out", "/bin/backend"] {
            try FileManager.default.createDirectory(atPath: directory + sub, withIntermediateDirectories: true)
        }
        // The printer: a backend of the test's own that writes each job to the file its URI
        // names (testfile:PATH) — what a real printer's backend does with the bytes, minus the paper.
        let backend = directory + "/bin/backend/testfile"
        try """
            #!/bin/sh
            if [ $# -eq 0 ]; then echo 'direct testfile "Unknown" "Loopix test printer"'; exit 0; fi
            out=${DEVICE_URI#testfile:}
            if [ -n "$6" ]; then cat "$6" > "$out"; else cat > "$out"; fi

            """.write(toFile: backend, atomically: true, encoding: .utf8)
        chmod(backend, 0o755)
        for part in ["filter", "daemon", "cgi-bin", "notifier", "monitor"] where FileManager.default.fileExists(atPath: "/usr/lib/cups/" + part) {
            try FileManager.default.createSymbolicLink(atPath: directory + "/bin/" + part, withDestinationPath: "/usr/lib/cups/" + part)
        }
        // cupsd runs its jobs as lp: the output directory must be theirs to write.
        chmod(directory, 0o755)
        chmod(directory + "/out", 0o777)
        try """
            Listen \(directory)/cups.sock
            LogLevel info
            WebInterface No
            Browsing No
            JobRetryInterval 1
            PreserveJobHistory Yes
            <Location />
              Order allow,deny
              Allow all
            </Location>
            <Policy default>
              <Limit All>
                Order deny,allow
              </Limit>
            </Policy>

            """.write(toFile: directory + "/cupsd.conf", atomically: true, encoding: .utf8)
        try """
            ServerBin \(directory)/bin
            ServerRoot \(directory)
            RequestRoot \(directory)/spool
            TempDir \(directory)/spool/tmp
            CacheDir \(directory)/cache
            StateDir \(directory)/state
            ErrorLog \(directory)/log/error_log
            AccessLog \(directory)/log/access_log
            PageLog \(directory)/log/page_log
            User lp
            Group lp
            SystemGroup root

            """.write(toFile: directory + "/cups-files.conf", atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/cupsd")
        p.arguments = ["-f", "-c", directory + "/cupsd.conf", "-s", directory + "/cups-files.conf"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        daemon = p
        setenv("CUPS_SERVER", socket, 1)
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        guard FileManager.default.fileExists(atPath: socket) else {
            throw NSError(domain: "cups", code: 1, userInfo: [NSLocalizedDescriptionKey: "cupsd did not start: \(log())"])
        }
    }

    public func log() -> String { (try? String(contentsOfFile: directory + "/log/error_log", encoding: .utf8)) ?? "" }

    /// Runs a CUPS command-line tool against this cupsd.
    @discardableResult
    public func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = ["-h", socket] + arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }

    /// A raw queue printing into `out/<name>.out`.
    public func addPrinter(_ name: String) throws {
        let r = try run("/usr/sbin/lpadmin", ["-p", name, "-E", "-v", "testfile:\(directory)/out/\(name).out"])
        guard r.status == 0 else { throw NSError(domain: "cups", code: 2, userInfo: [NSLocalizedDescriptionKey: "lpadmin: \(r.output)"]) }
    }

    /// The bytes the printer `name` got last.
    public func output(_ name: String) -> Data? { FileManager.default.contents(atPath: directory + "/out/\(name).out") }

    /// Completed jobs on the queue, as lpstat lists them.
    public func completedJobs(_ name: String) throws -> Int {
        try run("/usr/bin/lpstat", ["-W", "completed", "-o", name]).output.split(separator: "\n").count
    }

    public func stop() {
        if let daemon, daemon.isRunning {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        unsetenv("CUPS_SERVER")
        try? FileManager.default.removeItem(atPath: directory)
    }
}

