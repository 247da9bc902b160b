import CCups
import Foundation
import System

/// Prints photos through CUPS (libcups), and keeps at it: a photo handed over is sent to the
/// printer's queue exactly once — CUPS holds it while the printer is stopped (paper out,
/// disabled) and prints it when the printer is back — and the printer's state is watched so the
/// booth can say "Printer needs attention" while it cannot print, and carry on taking photos.
///
/// Nothing is printed twice: each photo is written to the state file before it is sent and
/// gets the CUPS job's number after; a restart that finds a photo without a number looks for
/// its job (by its title) before sending it again.
///
/// One worker thread talks to CUPS (libcups keeps its connection per thread); the controller
/// only hands over paths and reads `attention`.
public final class PrintQueue: Sendable {
    public struct Settings: Sendable, Equatable {
        /// The CUPS queue; nil: the default printer.
        public var printer: String?
        public var copies = 1
        /// How often the printer and the jobs are looked at.
        public var pollSeconds = 2.0
        public init(printer: String? = nil, copies: Int = 1) {
            self.printer = printer
            self.copies = copies
        }
    }

    /// A photo to print and, once sent, its CUPS job.
    struct Entry: Sendable, Equatable {
        var path: String
        var job: Int32?
        /// Makes the job's title unique (file names repeat across DCIM folders and cards).
        var token: String
        /// Loaded from the state file without a job number: it may have been sent just before
        /// a restart, so CUPS' jobs are searched for its title before it is sent.
        var recovered = false

        init(path: String, job: Int32? = nil, token: String = Entry.newToken(), recovered: Bool = false) {
            self.path = path
            self.job = job
            self.token = token
            self.recovered = recovered
        }

        static func newToken() -> String { String(UInt64.random(in: 0...UInt64.max), radix: 36) }

        var title: String { "Loopix " + (path as NSString).lastPathComponent + " #" + token }
    }

    private struct Shared {
        var waiting: [String] = []
        var attention: String?
        var printed = 0
        var inQueue = 0
    }

    private let settings: Settings
    private let stateFile: String
    private let shared = Locked(Shared())
    private let wake = DispatchSemaphore(value: 0)
    private let worker: WorkerThread

    /// `stateFile`: where the jobs not yet printed are kept across restarts.
    public init(settings: Settings, stateFile: String) throws(SystemError) {
        self.settings = settings
        self.stateFile = stateFile
        let entries = Self.load(stateFile)
        let settings = self.settings, shared = self.shared, wake = self.wake
        worker = try WorkerThread(name: "loopix.print") { token in
            var entries = entries
            var lastAttention: String?
            while !token.shouldStop {
                let arrived = shared.withLock { s -> [String] in
                    defer { s.waiting.removeAll() }
                    return s.waiting
                }
                entries += arrived.map { Entry(path: $0) }
                if !arrived.isEmpty { Self.save(entries, to: stateFile) }
                let attention = Self.printerTrouble(settings.printer)
                if attention != lastAttention {
                    if let attention { Log.warning("print: \(attention)") } else if lastAttention != nil { Log.info("print: the printer is back") }
                    lastAttention = attention
                }
                let before = entries.count
                entries = Self.advance(entries, settings: settings, stateFile: stateFile)
                let done = before - entries.count
                shared.withLock {
                    $0.attention = attention
                    $0.printed += done
                    $0.inQueue = entries.count
                }
                _ = wake.wait(timeout: .now() + settings.pollSeconds)
            }
        }
    }

    /// Hands a photo (a JPEG) over for printing; returns at once.
    public func print(_ path: String) {
        shared.withLock {
            $0.waiting.append(path)
            $0.inQueue += 1
        }
        wake.signal()
    }

    /// Why the printer cannot print now ("Printer needs attention: …"), nil when it can.
    public var attention: String? { shared.withLock { $0.attention } }
    /// Photos whose jobs completed since start.
    public var printed: Int { shared.withLock { $0.printed } }
    /// Photos handed over and not yet printed.
    public var pending: Int { shared.withLock { $0.inQueue } }

    public func stop() {
        wake.signal()
        worker.stop()
        wake.signal()
    }

    deinit { stop() }

    // MARK: The worker's side (libcups calls)

    /// Sends what is not sent yet, follows what is; returns the entries still to follow.
    static func advance(_ entries: [Entry], settings: Settings, stateFile: String) -> [Entry] {
        guard !entries.isEmpty else { return entries }
        // Unknown (CUPS did not answer): send nothing, conclude nothing; look again later.
        guard let jobs = currentJobs(settings.printer) else { return entries }
        var remaining: [Entry] = []
        var changed = false
        for var entry in entries {
            if entry.job == nil && entry.recovered {
                // Sent just before a restart? Adopt a live or finished job of this title; one
                // CUPS cancelled (a failed send) does not count.
                if let found = jobs.first(where: { $0.title == entry.title && $0.state != IPP_JSTATE_CANCELED && $0.state != IPP_JSTATE_ABORTED }) {
                    entry.job = found.id
                    changed = true
                }
                entry.recovered = false
            }
            guard let id = entry.job else {
                // Recorded first (it is in the state file), then sent.
                guard FileManager.default.fileExists(atPath: entry.path) else {
                    Log.error("print: \(entry.path) is gone; not printed")
                    changed = true
                    continue
                }
                let id = submit(entry, settings: settings)
                if id > 0 {
                    entry.job = id
                    changed = true
                    Log.info("print: \(entry.path) sent as job \(id)")
                }
                remaining.append(entry)
                continue
            }
            switch jobs.first(where: { $0.id == id })?.state {
            case IPP_JSTATE_COMPLETED:
                Log.info("print: job \(id) (\((entry.path as NSString).lastPathComponent)) printed")
                changed = true
            case IPP_JSTATE_CANCELED, IPP_JSTATE_ABORTED:
                Log.error("print: job \(id) (\((entry.path as NSString).lastPathComponent)) was cancelled at the printer; not sent again")
                changed = true
            case nil:
                // CUPS no longer knows the job (its history was purged): it ended.
                changed = true
            default:
                remaining.append(entry)
            }
        }
        if changed { save(remaining, to: stateFile) }
        return remaining
    }

    /// Whether CUPS answered the last request (with anything, "not found" too).
    private static var answered: Bool {
        let status = cupsLastError()
        return status.rawValue < IPP_STATUS_ERROR_BAD_REQUEST.rawValue || status == IPP_STATUS_ERROR_NOT_FOUND
    }

    private static func submit(_ entry: Entry, settings: Settings) -> Int32 {
        let path = entry.path
        var options: UnsafeMutablePointer<cups_option_t>?
        var count: Int32 = 0
        count = cupsAddOption("copies", "\(max(1, settings.copies))", count, &options)
        defer { cupsFreeOptions(count, options) }
        guard let printer = settings.printer ?? defaultPrinter() else {
            Log.error("print: no printer (booth.printer is not set and CUPS has no default)")
            return 0
        }
        let id = cupsPrintFile2(nil, printer, path, entry.title, count, options)
        if id == 0 { Log.error("print: \(path) to \(printer): \(String(cString: cupsLastErrorString()))") }
        return id
    }

    private static func defaultPrinter() -> String? {
        var dests: UnsafeMutablePointer<cups_dest_t>?
        let n = cupsGetDests2(nil, &dests)
        defer { cupsFreeDests(n, dests) }
        guard let dest = cupsGetDest(nil, nil, n, dests) else { return nil }
        return String(cString: dest.pointee.name)
    }

    struct Job: Equatable {
        var id: Int32
        var title: String
        var state: ipp_jstate_t
    }

    /// Every job CUPS knows of on the printer, finished ones too; nil when CUPS did not answer.
    private static func currentJobs(_ printer: String?) -> [Job]? {
        var jobs: UnsafeMutablePointer<cups_job_t>?
        let n = cupsGetJobs2(nil, &jobs, printer, 0, CUPS_WHICHJOBS_ALL)
        defer { if n > 0 { cupsFreeJobs(n, jobs) } }
        if n < 0 || (n == 0 && !answered) { return nil }
        guard n > 0, let jobs else { return [] }
        return (0..<Int(n)).map { i in
            Job(id: jobs[i].id, title: jobs[i].title.map { String(cString: $0) } ?? "", state: jobs[i].state)
        }
    }

    /// Why the printer cannot print, from CUPS' printer-state and printer-state-reasons; nil when it can.
    static func printerTrouble(_ printer: String?) -> String? {
        var dests: UnsafeMutablePointer<cups_dest_t>?
        let n = cupsGetDests2(nil, &dests)
        defer { cupsFreeDests(n, dests) }
        guard n >= 0 else { return "Printer needs attention: CUPS does not answer" }
        guard let dest = cupsGetDest(printer, nil, n, dests) else {
            if n == 0 && !answered {
                return "Printer needs attention: CUPS does not answer (\(String(cString: cupsLastErrorString())))"
            }
            return printer.map { "Printer needs attention: no printer \"\($0)\"" } ?? "Printer needs attention: no default printer"
        }
        func option(_ name: String) -> String? {
            cupsGetOption(name, dest.pointee.num_options, dest.pointee.options).map { String(cString: $0) }
        }
        let reasons = (option("printer-state-reasons") ?? "none").split(separator: ",").map(String.init)
            .filter { $0 != "none" && !$0.hasSuffix("-report") && $0 != "paused" }
        if option("printer-state") == "5" {  // IPP: stopped
            let why = reasons.first ?? (option("printer-state-message").flatMap { $0.isEmpty ? nil : $0 } ?? "stopped")
            return "Printer needs attention: \(why)"
        }
        if let error = reasons.first(where: { $0.hasSuffix("-error") || $0.hasPrefix("media-empty") || $0.hasPrefix("media-jam") }) {
            return "Printer needs attention: \(error)"
        }
        if option("printer-is-accepting-jobs") == "false" { return "Printer needs attention: not accepting jobs" }
        return nil
    }

    // MARK: The state file: one "path<TAB>job<TAB>token" line per photo not yet printed

    static func load(_ file: String) -> [Entry] {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard let path = parts.first, path.hasPrefix("/") else { return nil }
            let job = parts.count > 1 ? Int32(parts[1]) : nil
            let token = parts.count > 2 && !parts[2].isEmpty ? String(parts[2]) : Entry.newToken()
            return Entry(path: String(path), job: job, token: token, recovered: job == nil)
        }
    }

    static func save(_ entries: [Entry], to file: String) {
        let text = entries.map { "\($0.path)\t\($0.job.map { "\($0)" } ?? "")\t\($0.token)\n" }.joined()
        let temporary = file + ".tmp"
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, file) == 0 else { throw Errno.current }
        } catch {
            Log.error("print: \(file): the print list not saved: \(error)")
        }
    }
}
