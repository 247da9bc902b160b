import CSystemd
import System

/// Tells the service manager how the daemon is doing: `READY=1` once it serves, `STATUS=` a
/// line a person sees in `systemctl status`, `RELOADING=1`/`READY=1` around a reload,
/// `STOPPING=1` while it finishes, `WATCHDOG=1` while its loop really runs. Through libsystemd's
/// `sd_notify` (a no-op when not started by systemd, `$NOTIFY_SOCKET` unset).
public final class ServiceNotifier {
    /// How often to ping the watchdog (half its timeout); nil when systemd set none.
    public let watchdogInterval: Double?
    private var nextPing = Deadline(nanoseconds: 0)
    private var lastStatus = ""
    private(set) var isReady = false

    public init() {
        var usec: UInt64 = 0
        watchdogInterval = sd_watchdog_enabled(0, &usec) > 0 && usec > 0 ? Double(usec) / 2e6 : nil
    }

    private func send(_ text: String) {
        _ = sd_notify(0, text)
    }

    /// The daemon serves: the socket listens and the first frame is shown (or, headless, the
    /// camera delivers). Once.
    public func ready() {
        guard !isReady else { return }
        isReady = true
        send("READY=1\nSTATUS=\(lastStatus)")
    }

    /// One line for `systemctl status`; sent only when it changes.
    public func status(_ text: String) {
        guard text != lastStatus else { return }
        lastStatus = text
        send("STATUS=\(text)")
    }

    public func reloading() {
        send("RELOADING=1\nMONOTONIC_USEC=\(MonotonicClock.now() / 1000)")
    }

    public func reloaded() { send("READY=1") }

    public func stopping() { send("STOPPING=1\nSTATUS=Stopping: finishing queued photos") }

    /// Called every turn of the controller's loop: pings the watchdog when it is time. A loop
    /// that hangs stops calling this, and systemd restarts the daemon.
    public func loopAlive() {
        guard let interval = watchdogInterval, nextPing.hasPassed else { return }
        nextPing = .after(seconds: interval)
        send("WATCHDOG=1")
    }
}
