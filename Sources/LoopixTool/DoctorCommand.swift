import Foundation
import System
#if canImport(Glibc)
import Glibc
#endif

/// `loopix doctor`: runs `loopixd --doctor`, which links the device libraries this tool keeps
/// out of itself (libcamera, DRM, libgpiod). loopixd is looked for beside `loopix`, then on $PATH.
enum DoctorCommand {
    static let help = """
    Usage: loopix doctor [--json] [--config PATH]

    Checks this machine for Loopix: the board, config.txt, cameras, screens, GPIO lines (free, or
    held by whom), the motion sensor's WHO_AM_I, storage and photos left, the daemon and its
    service, the license. One line per finding with what to do; exit status 1 when something the
    configuration requires is missing. Runs loopixd --doctor.
    """

    /// Where loopixd is: beside this program, else on $PATH.
    static func daemonPath() -> String? {
        let beside = (Subprocess.ownExecutable() as NSString).deletingLastPathComponent + "/loopixd"
        if access(beside, X_OK) == 0 { return beside }
        return Subprocess.find("loopixd")
    }

    /// Replaces this process with `loopixd --doctor …`; returns only when that fails.
    static func run(_ arguments: [String]) throws(ToolError) {
        guard let daemon = daemonPath() else {
            throw ToolError("doctor: loopixd is not installed beside loopix or on $PATH (it does the checking)")
        }
        let argv = [daemon, "--doctor"] + arguments
        var cArgs = argv.map { strdup($0) }
        cArgs.append(nil)
        execv(daemon, cArgs)
        let problem = Errno.current
        cArgs.forEach { free($0) }
        throw ToolError("doctor: cannot run \(daemon): \(problem)")
    }
}
