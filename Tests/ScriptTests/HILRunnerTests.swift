import Foundation
import XCTest

/// `scripts/hil/run` choosing between KVM and software emulation, run against a fake virtme-ng
/// (`LOOPIX_HIL_VNG`) and a fake qemu for the KVM probe (`LOOPIX_HIL_QEMU`), with a fake kernel
/// directory and test bundle: no KVM, no VM and no bench kernel needed. The fake virtme-ng acts
/// like the VMs seen on nested-KVM hosts — under KVM it prints qemu's "KVM internal error" and
/// hangs (qemu pauses such a guest rather than exit) — and otherwise like a guest that ran the
/// tests (scripts/hil/guest's heartbeat, xctest.log and status files in the shared directory).
final class HILRunnerTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// virtme-ng's stand-in. FAKE_KVM / FAKE_TCG say what the guest does under each:
    /// internal-error (qemu's message, then hang), silent (hang), stall (one heartbeat, then
    /// hang), die (exit 255 at once), pass (run like scripts/hil/guest; status $FAKE_STATUS). The hanging "qemu" is a
    /// child process named after FAKE_DIR, so a test can see whether anything was left behind.
    static let fakeVNG = #"""
        #!/usr/bin/env bash
        set -euo pipefail
        rwdir="" cmd="" accel=kvm
        while [ $# -gt 0 ]; do
          case $1 in
            --rwdir) rwdir=$2; shift 2 ;;
            --exec) cmd=$2; shift 2 ;;
            --disable-kvm) accel=tcg; shift ;;
            *) shift ;;
          esac
        done
        echo "vng $accel" >> "$FAKE_DIR/calls"
        if [[ $cmd != */scripts/hil/guest\ "$rwdir"\ * ]]; then
          echo "fake vng: --exec is not scripts/hil/guest on the --rwdir: $cmd" >&2; exit 99
        fi
        hang() { bash -c "exec -a '$FAKE_DIR/qemu-system-x86_64' sleep 600" & wait; }
        what=${FAKE_TCG:-pass}
        [ "$accel" = kvm ] && what=${FAKE_KVM:-pass}
        case $what in
          internal-error)
            echo "hil-guest: kernel fake"
            echo "KVM internal error. Suberror: 1" >&2
            echo "emulation failure" >&2
            echo "RAX=0000000000000000 RBX=0000000000000001" >&2
            hang ;;
          silent) hang ;;
          die) exit 255 ;;
          stall) echo 1 > "$rwdir/heartbeat"; echo "hil-guest: kernel fake"; hang ;;
          pass)
            echo 1 > "$rwdir/heartbeat"
            printf '%s\n' "Test Suite 'Selected tests' started" \
              "Executed 5 tests, with 0 failures (0 unexpected) in 0.1 (0.1) seconds ($accel)" |
              tee "$rwdir/xctest.log"
            echo "${FAKE_STATUS:-0}" > "$rwdir/status" ;;
        esac
        """#

    /// qemu's stand-in for the KVM probe. FAKE_PROBE: ok (the probe's init says so), msr (dies
    /// at once like nested KVM here: "failed to set MSR"), internal-error (message, then hang),
    /// mute (exits without a word).
    static let fakeQemu = #"""
        #!/usr/bin/env bash
        echo "qemu-probe" >> "$FAKE_DIR/calls"
        args=" $* "
        initrd=""
        while [ $# -gt 0 ]; do [ "$1" = -initrd ] && initrd=$2; shift; done
        if [[ $args != *" accel=kvm "* || $args != *" -kernel $FAKE_DIR/kernel/boot/vmlinuz-0 "* ]] ||
           [ "$(head -c 6 "$initrd")" != 070701 ]; then
          echo "fake qemu: not a KVM boot of the bench kernel with a newc initramfs:$args" >&2; exit 99
        fi
        case ${FAKE_PROBE:-ok} in
          ok) echo "loopix-kvm-probe: ok" ;;
          msr) echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2; exit 134 ;;
          internal-error) echo "KVM internal error. Suberror: 1" >&2; exec -a "$FAKE_DIR/qemu-probe" sleep 600 ;;
          mute) exit 0 ;;
        esac
        """#

    var dir = ""

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("loopix-hil-run-\(UUID().uuidString)").path
        let fm = FileManager.default
        for d in ["kernel/boot", "kernel/lib/modules/0", "build/debug", "cache"] {
            try fm.createDirectory(atPath: "\(dir)/\(d)", withIntermediateDirectories: true)
        }
        try write("", to: "kernel/boot/vmlinuz-0")
        try write("#!/bin/sh\nexit 0\n", to: "build/debug/LoopixPackageTests.xctest", executable: true)
        try write("", to: "kvm")  // the KVM device: readable and writable
        try write(Self.fakeVNG, to: "vng", executable: true)
        try write(Self.fakeQemu, to: "qemu", executable: true)
    }

    override func tearDownWithError() throws {
        for (pid, _) in leftovers() { kill(pid, SIGKILL) }
        try? FileManager.default.removeItem(atPath: dir)
    }

    // MARK: - Falling back from KVM

    func testKVMInternalErrorFallsBackToEmulationAndReportsTheGuestsStatus() throws {
        let run = try hilRun(["FAKE_KVM": "internal-error", "FAKE_STATUS": "3"])
        XCTAssertEqual(run.calls, ["qemu-probe", "vng kvm", "vng tcg"], run.output)
        let line = try XCTUnwrap(run.lines.first { $0.hasPrefix("hil: KVM failed") }, run.output)
        XCTAssertTrue(line.contains("KVM internal error") && line.contains("software emulation"), line)
        XCTAssertEqual(run.status, 3, "the guest's status is the run's: \(run.output)")
        XCTAssertTrue(run.lines.contains { $0.hasPrefix("hil: guest finished") && $0.hasSuffix("with status 3") }, run.output)
        XCTAssertEqual(try String(contentsOfFile: "\(dir)/xctest-copy.log", encoding: .utf8),
                       "Test Suite 'Selected tests' started\nExecuted 5 tests, with 0 failures (0 unexpected) in 0.1 (0.1) seconds (tcg)\n")
        // The heartbeat bound is a minute: only qemu's message can explain a fallback this quick.
        XCTAssertLessThan(run.seconds, 10, run.output)
        XCTAssertEqual(leftovers().map(\.value), [], "processes left behind")
    }

    func testKVMGuestWithoutHeartbeatFallsBackToEmulation() throws {
        let run = try hilRun(["FAKE_KVM": "silent", "LOOPIX_HIL_HEARTBEAT_TIMEOUT": "2"])
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertEqual(run.calls, ["qemu-probe", "vng kvm", "vng tcg"], run.output)
        let line = try XCTUnwrap(run.lines.first { $0.hasPrefix("hil: KVM failed") }, run.output)
        XCTAssertTrue(line.contains("heartbeat") && line.contains("software emulation"), line)
        XCTAssertGreaterThanOrEqual(run.seconds, 2, run.output)
        XCTAssertLessThan(run.seconds, 10, run.output)
        XCTAssertEqual(leftovers().map(\.value), [], "processes left behind")
    }

    func testKVMVMThatDiesBeforeTheGuestStartsFallsBackToEmulation() throws {
        let run = try hilRun(["FAKE_KVM": "die"])
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertEqual(run.calls, ["qemu-probe", "vng kvm", "vng tcg"], run.output)
        let line = try XCTUnwrap(run.lines.first { $0.hasPrefix("hil: KVM failed") }, run.output)
        XCTAssertTrue(line.contains("exited (255)") && line.contains("software emulation"), line)
    }

    func testVMThatDiesBeforeTheGuestStartsIsBootedOnceMore() throws {
        let run = try hilRun(["LOOPIX_HIL_ACCEL": "tcg", "FAKE_TCG": "die"])
        XCTAssertEqual(run.status, 1, run.output)
        XCTAssertEqual(run.calls, ["vng tcg", "vng tcg"], run.output)
        XCTAssertTrue(run.lines.contains { $0.hasPrefix("hil: the VM exited (255)") && $0.hasSuffix("booting it once more") }, run.output)
    }

    // MARK: - Forcing one

    func testForcedKVMIsAnErrorWhenTheGuestStops() throws {
        let run = try hilRun(["LOOPIX_HIL_ACCEL": "kvm", "FAKE_KVM": "internal-error"])
        XCTAssertEqual(run.status, 1, run.output)
        XCTAssertEqual(run.calls, ["qemu-probe", "vng kvm"], "no fallback: \(run.output)")
        let line = try XCTUnwrap(run.lines.last { $0.hasPrefix("hil: ") }, run.output)
        XCTAssertTrue(line.contains("KVM internal error") && line.contains("LOOPIX_HIL_ACCEL=kvm"), line)
        XCTAssertLessThan(run.seconds, 10, run.output)
        XCTAssertEqual(leftovers().map(\.value), [], "processes left behind")
    }

    func testForcedKVMIsAnErrorWhereTheProbeFails() throws {
        let run = try hilRun(["LOOPIX_HIL_ACCEL": "kvm", "FAKE_PROBE": "msr"])
        XCTAssertEqual(run.status, 1, run.output)
        XCTAssertEqual(run.calls, ["qemu-probe"], "no VM booted: \(run.output)")
        let line = try XCTUnwrap(run.lines.last { $0.hasPrefix("hil: ") }, run.output)
        XCTAssertTrue(line.contains("LOOPIX_HIL_ACCEL=kvm") && line.contains("failed to set MSR 0x10a"), line)
    }

    func testForcedEmulationNeverTriesKVM() throws {
        let run = try hilRun(["LOOPIX_HIL_ACCEL": "tcg", "FAKE_KVM": "internal-error"])
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertEqual(run.calls, ["vng tcg"], "neither the probe nor a KVM boot: \(run.output)")
        XCTAssertTrue(run.lines.contains("hil: software emulation (LOOPIX_HIL_ACCEL=tcg)"), run.output)
        XCTAssertTrue(run.lines.contains { $0.hasPrefix("hil: guest finished") && $0.hasSuffix("with status 0") }, run.output)
    }

    func testUnknownAccelerationIsAUsageError() throws {
        let run = try hilRun(["LOOPIX_HIL_ACCEL": "fast"])
        XCTAssertEqual(run.status, 2, run.output)
        XCTAssertEqual(run.calls, [], run.output)
        XCTAssertEqual(run.lines.count, 1, run.output)
        XCTAssertTrue(run.output.hasPrefix("hil: LOOPIX_HIL_ACCEL") && run.output.contains("'fast'"), run.output)
    }

    // MARK: - The heartbeat under emulation

    func testStandingHeartbeatUnderEmulationEndsTheRun() throws {
        let run = try hilRun(["LOOPIX_HIL_ACCEL": "tcg", "FAKE_TCG": "stall", "LOOPIX_HIL_HEARTBEAT_TIMEOUT": "2"],
                             ["--timeout", "600"])
        XCTAssertEqual(run.status, 1, run.output)
        XCTAssertEqual(run.calls, ["vng tcg"], "a guest that ran is not booted again: \(run.output)")
        let line = try XCTUnwrap(run.lines.last { $0.hasPrefix("hil: ") }, run.output)
        XCTAssertTrue(line.contains("heartbeat") && line.contains("software emulation"), line)
        XCTAssertLessThan(run.seconds, 10, run.output)
        XCTAssertEqual(leftovers().map(\.value), [], "processes left behind")
    }

    // MARK: - The probe

    func testKVMThatFailsAtOnceMeansEmulationAtOnce() throws {
        let run = try hilRun(["FAKE_PROBE": "msr", "FAKE_KVM": "internal-error"])
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertEqual(run.calls, ["qemu-probe", "vng tcg"], run.output)
        let line = try XCTUnwrap(run.lines.first { $0.hasPrefix("hil: KVM not usable") }, run.output)
        XCTAssertTrue(line.contains("failed to set MSR 0x10a") && line.contains("software emulation"), line)
        XCTAssertLessThan(run.seconds, 5, run.output)
    }

    func testProbeVMThatStopsIsNotWaitedFor() throws {
        let run = try hilRun(["FAKE_PROBE": "internal-error", "LOOPIX_HIL_PROBE_TIMEOUT": "60"])
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertEqual(run.calls, ["qemu-probe", "vng tcg"], run.output)
        let line = try XCTUnwrap(run.lines.first { $0.hasPrefix("hil: KVM not usable") }, run.output)
        XCTAssertTrue(line.contains("KVM internal error"), line)
        XCTAssertLessThan(run.seconds, 5, run.output)
        XCTAssertEqual(leftovers().map(\.value), [], "processes left behind")
    }

    func testProbeMustHearFromTheGuest() throws {
        let run = try hilRun(["FAKE_PROBE": "mute"])
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertEqual(run.calls, ["qemu-probe", "vng tcg"], "qemu exiting is not enough: \(run.output)")
    }

    func testNoKVMDeviceMeansEmulationWithoutAProbe() throws {
        let run = try hilRun(["LOOPIX_HIL_KVM_DEVICE": "\(dir)/no-such-kvm"])
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertEqual(run.calls, ["vng tcg"], run.output)
        XCTAssertTrue(run.lines.contains { $0.hasPrefix("hil: KVM not usable here (no \(dir)/no-such-kvm") }, run.output)
    }

    /// The probe's initramfs holds /dev/console and an /init that really executes
    /// `lock cmpxchg16b` and checks its results (run here, not as PID 1, it only checks and exits).
    func testProbeInitramfsRunsLockCmpxchg16b() throws {
        let made = try shell(". scripts/hil/lib.sh && hil_kvm_probe_initrd")
        XCTAssertEqual(made.status, 0, made.output)
        let initrd = made.output.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(initrd.hasPrefix("\(dir)/cache/"), initrd)
        let entries = try newcEntries(Data(contentsOf: URL(fileURLWithPath: initrd)))
        XCTAssertEqual(entries.map(\.name), ["dev", "dev/console", "init", "TRAILER!!!"])
        XCTAssertEqual(entries.map(\.mode), [0o040755, 0o020600, 0o100755, 0])
        XCTAssertEqual(entries[1].rdev, [5, 1], "/dev/console is char 5:1")

        let initPath = "\(dir)/init"
        try entries[2].data.write(to: URL(fileURLWithPath: initPath))
        chmod(initPath, 0o755)
        let disassembly = try shell("objdump -d '\(initPath)'")
        XCTAssertEqual(disassembly.status, 0, disassembly.output)
        XCTAssertGreaterThanOrEqual(disassembly.output.components(separatedBy: "lock cmpxchg16b").count - 1, 3,
                                    "the init's code has the instruction")
        let ran = try shell("'\(initPath)'")
        XCTAssertEqual(ran.status, 0, ran.output)
        XCTAssertEqual(ran.output, "loopix-kvm-probe: ok\n")
    }

    /// The probe VM itself on the real bench kernel, under software emulation (KVM swapped for
    /// TCG by a wrapper, so it runs anywhere): the kernel starts the init from the initramfs,
    /// the checks pass and the VM says "ok". Skips without a bench kernel or qemu.
    func testProbeVMBootsTheBenchKernel() throws {
        let found = try shell(". scripts/hil/lib.sh && hil_kernel_image \"$(hil_kernel_dir)\" && command -v qemu-system-x86_64")
        guard found.status == 0 else {
            throw XCTSkip("no bench kernel or no qemu-system-x86_64 (scripts/hil/build-kernel, scripts/setup)")
        }
        try write(#"""
            #!/usr/bin/env bash
            echo qemu-tcg >> "$FAKE_DIR/calls"
            args=()
            for a in "$@"; do
              case $a in accel=kvm) a=accel=tcg ;; host,topoext=on) a=max ;; esac
              args+=("$a")
            done
            exec qemu-system-x86_64 "${args[@]}"
            """#, to: "qemu-tcg", executable: true)
        let start = Date()
        let probe = try shell("""
            export FAKE_DIR='\(dir)' LOOPIX_HIL_QEMU='\(dir)/qemu-tcg' LOOPIX_HIL_KVM_DEVICE='\(dir)/kvm'
            . scripts/hil/lib.sh
            hil_kvm_probe "$(hil_kernel_image "$(hil_kernel_dir)")" || { echo "probe: $hil_kvm_why"; exit 1; }
            """)
        XCTAssertEqual(probe.status, 0, probe.output)
        XCTAssertEqual(try String(contentsOfFile: "\(dir)/calls", encoding: .utf8), "qemu-tcg\n")
        XCTAssertLessThan(Date().timeIntervalSince(start), 30, "the probe's bound")
        XCTAssertEqual(leftovers().map(\.value), [], "processes left behind")
    }

    // MARK: - Helpers

    struct Run {
        var status: Int32
        var output: String
        var seconds: TimeInterval
        var calls: [String]
        var lines: [String] { output.split(separator: "\n").map(String.init) }
    }

    /// Runs scripts/hil/run against the fakes (environment on top of this process's, whose
    /// LOOPIX_* variables are dropped) and returns within `limit` seconds, killing it after.
    func hilRun(_ environment: [String: String], _ arguments: [String] = [], limit: TimeInterval = 20) throws -> Run {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LOOPIX_") && !$0.key.hasPrefix("FAKE_") }
        env.merge([
            "FAKE_DIR": dir,
            "LOOPIX_HIL_KERNEL_DIR": "\(dir)/kernel",
            "LOOPIX_HIL_VNG": "\(dir)/vng",
            "LOOPIX_HIL_QEMU": "\(dir)/qemu",
            "LOOPIX_HIL_KVM_DEVICE": "\(dir)/kvm",
            "LOOPIX_HIL_CACHE": "\(dir)/cache",
            "LOOPIX_HIL_HEARTBEAT_TIMEOUT": "60",
        ]) { $1 }
        env.merge(environment) { $1 }
        let (status, output, seconds) = try execute(Self.root + "/scripts/hil/run",
            ["--no-build", "--build-path", "\(dir)/build", "--log", "\(dir)/xctest-copy.log"] + arguments,
            environment: env, limit: limit)
        let calls = (try? String(contentsOfFile: "\(dir)/calls", encoding: .utf8))?
            .split(separator: "\n").map(String.init) ?? []
        return Run(status: status, output: output, seconds: seconds, calls: calls)
    }

    /// Runs a bash command in the package root with this test's cache directory.
    func shell(_ command: String) throws -> (status: Int32, output: String) {
        var env = ProcessInfo.processInfo.environment
        env["LOOPIX_HIL_CACHE"] = "\(dir)/cache"
        let (status, output, _) = try execute("/bin/bash", ["-c", "set -euo pipefail; cd '\(Self.root)'; \(command)"],
                                              environment: env, limit: 30)
        return (status, output)
    }

    func execute(_ path: String, _ arguments: [String], environment: [String: String],
                 limit: TimeInterval) throws -> (Int32, String, TimeInterval) {
        let outPath = "\(dir)/output-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: outPath, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: outPath])
        }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        p.environment = environment
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = out
        p.standardError = out
        let start = Date()
        try p.run()
        // (Foundation sees the exit only when every process that inherited its watch on the
        // child is gone: something left behind keeps `isRunning` true.)
        while p.isRunning && Date().timeIntervalSince(start) < limit {
            Thread.sleep(forTimeInterval: 0.02)
        }
        if p.isRunning {
            p.terminate()  // its exit trap kills the VM and removes its directories
            let stop = Date()
            while p.isRunning && Date().timeIntervalSince(stop) < 15 {
                Thread.sleep(forTimeInterval: 0.05)
            }
            let left = leftovers()
            XCTFail("\(path) did not finish within \(limit) s; left running: \(left.values.sorted())")
            for pid in left.keys { kill(pid, SIGKILL) }
        }
        p.waitUntilExit()
        let seconds = Date().timeIntervalSince(start)
        try out.close()
        let output = try String(contentsOfFile: outPath, encoding: .utf8)
        return (p.terminationStatus, output, seconds)
    }

    func write(_ text: String, to name: String, executable: Bool = false) throws {
        let path = "\(dir)/\(name)"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        if executable { chmod(path, 0o755) }
    }

    /// Processes whose command line names this test's directory (the fakes and anything they
    /// started), by pid.
    func leftovers() -> [Int32: String] {
        var found: [Int32: String] = [:]
        let me = getpid()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(name), pid != me,
                  let raw = FileManager.default.contents(atPath: "/proc/\(name)/cmdline") else { continue }
            let cmdline = String(decoding: raw.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            if cmdline.contains(dir) { found[pid] = cmdline }
        }
        return found
    }

    struct BadArchive: Error { var offset: Int }

    struct NewcEntry { var name: String; var mode: UInt32; var rdev: [UInt32]; var data: Data }

    /// The entries of a newc ("070701") cpio archive, read the way the kernel's initramfs
    /// unpacker reads them.
    func newcEntries(_ archive: Data) throws -> [NewcEntry] {
        let bytes = [UInt8](archive)
        var at = 0, entries: [NewcEntry] = []
        func field(_ i: Int) throws -> UInt32 {
            let start = at + 6 + 8 * i
            guard start + 8 <= bytes.count, let v = UInt32(String(decoding: bytes[start..<start + 8], as: UTF8.self), radix: 16)
            else { throw BadArchive(offset: at) }
            return v
        }
        func aligned(_ n: Int) -> Int { (n + 3) & ~3 }
        while at + 110 <= bytes.count {
            XCTAssertEqual(String(decoding: bytes[at..<at + 6], as: UTF8.self), "070701", "magic at \(at)")
            let mode = try field(1), size = Int(try field(6)), nameSize = Int(try field(11))
            let rdev = [try field(9), try field(10)]
            let nameStart = at + 110
            let name = String(decoding: bytes[nameStart..<nameStart + nameSize - 1], as: UTF8.self)
            XCTAssertEqual(bytes[nameStart + nameSize - 1], 0, "name of \(name) ends in NUL")
            let dataStart = aligned(nameStart + nameSize)
            entries.append(NewcEntry(name: name, mode: mode, rdev: rdev,
                                     data: Data(bytes[dataStart..<dataStart + size])))
            at = aligned(dataStart + size)
            if name == "TRAILER!!!" { break }
        }
        XCTAssertEqual(at, bytes.count, "nothing after the trailer")
        return entries
    }
}
