import System

/// How a photobooth session goes: the countdown, the shots, how they are put together, how
/// long the result is shown.
public struct BoothSettings: Sendable, Equatable {
    public enum Layout: String, Sendable, Equatable, CaseIterable {
        /// One column, like the strips of a photo booth.
        case strip
        /// Two columns (2×2 for four shots).
        case grid
    }
    /// 0: the shot is taken at the press.
    public var countdownSeconds = 3
    /// How long the developed photo (or the collage) stays on the screen.
    public var reviewSeconds = 6
    /// Shots per session, 1…4; more than one are also put together into a collage.
    public var shots = 1
    public var layout = Layout.strip
    public enum PrintMode: String, Sendable, Equatable, CaseIterable {
        case off
        /// Each session's result (the photo, or the collage) is printed.
        case auto
        /// A press of the big button during the review prints it (once); the next press
        /// starts a new session.
        case button
    }
    /// A flash or ring light on the board's `flash` output line.
    public enum FlashMode: String, Sendable, Equatable, CaseIterable {
        case off
        /// On for each shot's exposure only.
        case exposure
        /// On from the press to the session's last shot (a ring light the guests pose in).
        case session
    }
    /// Printing through CUPS.
    public var print = PrintMode.off
    public var flash = FlashMode.off
    /// A collage template (`template.json` beside its PNG frame); nil: the plain layout.
    public var template: String? = nil
    /// The CUPS queue; nil: the default printer.
    public var printer: String? = nil
    public var copies = 1
    public init() {}
}

/// The photobooth's course, as a pure value the controller drives with the time and what
/// happened: idle ("attract") → countdown → shot (→ countdown → shot …) → developing →
/// review → attract. It says when to take a shot, when to put the shots together and when
/// the review is over; the controller does the work and reports back.
public struct Booth: Sendable, Equatable {
    public enum Phase: Sendable, Equatable {
        case attract
        /// Counting down to shot `shot` (1-based), which is taken at `endsAt` (monotonic ns).
        case countdown(shot: Int, endsAt: UInt64)
        /// Every shot is taken; waiting for them (and the collage) to be saved.
        case developing
        /// Showing the result until `until`.
        case review(until: UInt64)
    }

    /// What the controller must do now.
    public enum Action: Sendable, Equatable {
        /// Take shot `shot` now; `due` is when it was due (the countdown's end or the press).
        case capture(shot: Int, due: UInt64)
        /// Put these saved photos together, in order.
        case compose([String])
        /// Show this photo (the single shot, or the collage) for review.
        case review(String)
        /// Print this photo (the one being reviewed), asked for by the button.
        case print(String)
    }

    public let settings: BoothSettings
    public private(set) var phase = Phase.attract
    /// The session's shots as they were answered (their paths), in order.
    public private(set) var taken: [String] = []
    /// Those of them saved so far.
    public private(set) var saved: Set<String> = []
    /// The photo being reviewed, and whether the button has printed it.
    public private(set) var reviewed: String?
    public private(set) var printRequested = false

    public init(settings: BoothSettings) {
        var s = settings
        s.shots = min(max(s.shots, 1), 4)
        s.countdownSeconds = max(0, s.countdownSeconds)
        s.reviewSeconds = max(1, s.reviewSeconds)
        self.settings = s
    }

    /// The big button. Idle or reviewing: a new session (the countdown, or at once the first
    /// shot without one) — except the first press of a review with `print: button`, which
    /// prints what is shown and keeps it on screen for another `reviewSeconds`. Otherwise it
    /// is ignored: a session runs to its end.
    public mutating func press(now: UInt64) -> Action? {
        if isReviewing, settings.print == .button, !printRequested, let reviewed {
            printRequested = true
            phase = .review(until: now + UInt64(settings.reviewSeconds) * 1_000_000_000)
            return .print(reviewed)
        }
        switch phase {
        case .attract, .review:
            reviewed = nil
            printRequested = false
            taken = []
            saved = []
            return startShot(1, now: now)
        case .countdown, .developing:
            return nil
        }
    }

    /// The time passes: a countdown that ended takes its shot; a review that ended goes idle.
    /// `lead`: how long before the countdown's end the camera must be asked (one that is
    /// reconfigured for a still); the shot is still due at the end.
    public mutating func tick(now: UInt64, lead: UInt64 = 0) -> Action? {
        switch phase {
        case .countdown(let shot, let endsAt) where endsAt != .max && now >= endsAt - min(lead, endsAt):
            // Until the controller reports the shot, the countdown shows 0 and nothing repeats.
            phase = .countdown(shot: shot, endsAt: .max)
            return .capture(shot: shot, due: endsAt)
        case .review(let until) where now >= until:
            phase = .attract
            reviewed = nil
            return nil
        default:
            return nil
        }
    }

    /// The shot was taken (its file's path) or refused (nil: the session ends, back to idle).
    public mutating func shotTaken(_ path: String?, now: UInt64) -> Action? {
        guard let path else {
            phase = .attract
            taken = []
            return nil
        }
        taken.append(path)
        if taken.count < settings.shots { return startShot(taken.count + 1, now: now) }
        phase = .developing
        return finishIfSaved(now: now)
    }

    /// A photo was saved (any photo: those not of this session are ignored).
    public mutating func photoSaved(_ path: String, now: UInt64) -> Action? {
        guard taken.contains(path) else { return nil }
        saved.insert(path)
        return phase == .developing ? finishIfSaved(now: now) : nil
    }

    /// A photo of the session was lost, or the collage could not be made: the session ends.
    public mutating func failed() {
        phase = .attract
        taken = []
    }

    /// The collage was saved: review it.
    public mutating func composed(_ path: String, now: UInt64) -> Action? {
        guard phase == .developing else { return nil }
        return startReview(path, now: now)
    }

    /// The numeral to show during a countdown (3, 2, 1), nil otherwise.
    public func countdownNumeral(now: UInt64) -> Int? {
        guard case .countdown(_, let endsAt) = phase else { return nil }
        guard endsAt != .max, endsAt > now else { return nil }
        return Int((endsAt - now + 999_999_999) / 1_000_000_000)
    }

    public var isReviewing: Bool {
        if case .review = phase { return true }
        return false
    }

    /// The shot being counted down to (1-based), nil outside a countdown.
    public var currentShot: Int? {
        if case .countdown(let shot, _) = phase { return shot }
        return nil
    }

    public var phaseName: String {
        switch phase {
        case .attract: return "attract"
        case .countdown: return "countdown"
        case .developing: return "developing"
        case .review: return "review"
        }
    }

    private mutating func startShot(_ shot: Int, now: UInt64) -> Action? {
        if settings.countdownSeconds == 0 && shot == 1 {
            phase = .countdown(shot: shot, endsAt: .max)
            return .capture(shot: shot, due: now)
        }
        // Without a countdown, later shots still wait a second: the guests change their pose.
        phase = .countdown(shot: shot, endsAt: now + UInt64(max(1, settings.countdownSeconds)) * 1_000_000_000)
        return nil
    }

    private mutating func finishIfSaved(now: UInt64) -> Action? {
        guard taken.allSatisfy(saved.contains) else { return nil }
        if taken.count == 1 { return startReview(taken[0], now: now) }
        return .compose(taken)
    }

    private mutating func startReview(_ path: String, now: UInt64) -> Action {
        phase = .review(until: now + UInt64(settings.reviewSeconds) * 1_000_000_000)
        reviewed = path
        printRequested = false
        return .review(path)
    }

    /// Whether the flash should be on now: during a shot's exposure (the controller says) or,
    /// for a ring light, from the press until the session's shots are taken.
    public func flashWanted(exposing: Bool) -> Bool {
        switch settings.flash {
        case .off: return false
        case .exposure: return exposing
        case .session:
            if case .countdown = phase { return true }
            return exposing
        }
    }
}
