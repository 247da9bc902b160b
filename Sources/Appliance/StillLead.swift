/// How long before a booth shot is due a camera that is reconfigured for each still (one stream:
/// the viewfinder stops, the sensor restarts at full size) is asked for it, so that the exposure
/// lands on the countdown's end rather than a reconfiguration later.
///
/// The camera says how long its reconfiguration took (from the call to the still stream's first
/// frame); the lead is that, half as much again and 100 ms, so that it follows a reconfiguration
/// that slows while earlier photos are developed, and shrinks back (a shorter frozen viewfinder)
/// when it speeds up. A camera that cannot say only grows the lead after a late shot: by 1.5×
/// what it was late and 100 ms. Always within 0…3 s (the countdown's own length is the user's).
struct StillLead {
    static let initialNs: UInt64 = 1_000_000_000
    static let maxNs: UInt64 = 3_000_000_000
    /// A shot exposed this long after it was due is late.
    static let onTimeNs: UInt64 = 50_000_000
    static let marginNs: UInt64 = 100_000_000

    private(set) var ns: UInt64 = StillLead.initialNs

    /// Learns from a shot: `exposure` its sensor timestamp, `due` its countdown's end,
    /// `startDelay` the camera's reconfiguration (0: unknown), `skippedPeriod` nonzero when
    /// frames before `due` were skipped (the still came early enough). Returns the line to log
    /// when the lead changed by more than the on-time bound, or a late shot could not move it
    /// (it is at its bound); nil otherwise.
    mutating func learn(exposure: UInt64, due: UInt64, startDelay: UInt64, skippedPeriod: UInt64) -> String? {
        let late = exposure > due ? exposure - due : 0
        let old = ns
        if startDelay > 0 {
            let delay = min(startDelay, Self.maxNs)
            ns = min(Self.maxNs, delay + delay / 2 + Self.marginNs)
        } else if skippedPeriod == 0 && late > Self.onTimeNs {
            ns = min(Self.maxNs, ns + late + late / 2 + Self.marginNs)
        }
        let lateAtBound = ns == Self.maxNs && skippedPeriod == 0 && late > Self.onTimeNs
        guard max(ns, old) - min(ns, old) > Self.onTimeNs || lateAtBound else { return nil }
        let why = startDelay > 0 ? "the camera took \(startDelay / 1_000_000) ms to start the still" : "the still came \(late / 1_000_000) ms after the countdown's end"
        return "booth: \(why); asking \(ns / 1_000_000) ms early from now on"
    }
}
