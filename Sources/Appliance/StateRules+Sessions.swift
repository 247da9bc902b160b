/// The rules of what runs over time: a photobooth session and a timelapse. Their timers and
/// the camera's reports arrive as commands like any button, so a shot a countdown takes and a
/// shot a press takes go the same way.
extension StateRules {
    func booth(_ command: Command, _ s: inout CameraState) -> Outcome {
        var effects: [Effect] = []
        if case .setBooth(let on) = command {
            guard on != s.booth else { return Outcome() }
            if on && s.recording { return .refused("Stop recording first: a booth takes photos") }
            s.session = on ? Booth(settings: boothSettings) : nil
            effects = [.boothChanged]
            if on && s.mode != .photo {
                s.mode = .photo
                effects.append(.modeChanged)
            }
        } else {
            // The session's own course: what it asks for next, if anything.
            guard var session = s.session else { return Outcome() }
            let action: Booth.Action?
            switch command {
            case .boothPress(let now): action = session.press(now: now)
            case .boothTick(let now, let lead): action = session.tick(now: now, lead: lead)
            case .boothShotTaken(let path, let now): action = session.shotTaken(path, now: now)
            case .photoSaved(let path, let now): action = session.photoSaved(path, now: now)
            case .collageSaved(let path?, let now): action = session.composed(path, now: now)
            case .collageSaved(nil, _):
                session.failed()
                action = nil
            case .photoLost(let path):
                if session.taken.contains(path) { session.failed() }
                action = nil
            default:
                return Outcome()
            }
            s.session = session
            effects = action.map { [.booth($0)] } ?? []
        }
        // Between exposures the flash follows the session (on for a whole session, or off).
        let flash = s.session?.flashWanted(exposing: false) ?? false
        if flash != s.flash {
            s.flash = flash
            effects.append(.flashChanged)
        }
        return Outcome(effects)
    }

    func interval(_ command: Command, _ s: inout CameraState) -> Outcome {
        switch command {
        case .startInterval(let schedule):
            s.interval = schedule
            return Outcome([.saveInterval])
        case .stopInterval:
            guard let running = s.interval else { return .refused("no interval is running") }
            s.interval = nil
            return Outcome([.saveInterval, .intervalEnded(taken: running.taken, skipped: running.skipped, stopped: true)])
        case .intervalTick(let now, let queueFull):
            guard var schedule = s.interval else { return Outcome() }
            var effects: [Effect] = []
            if let slot = schedule.due(now: now) {
                // Kept on disk before the slot's shot, so a crash after it never shoots it twice.
                effects.append(.saveInterval)
                let reason = s.booth ? "photobooth mode" : s.recording ? "recording" : queueFull ? "photos still being saved" : nil
                if let reason {
                    schedule.shot(false)
                    effects += [.intervalSkipped(slot: slot, reason: reason), .saveInterval]
                } else {
                    effects.append(.capture)  // the shutter's own effect: its shot counts in .intervalShotDone
                }
            }
            s.interval = schedule
            if effects.last != .capture && schedule.isFinished(now: now) {
                s.interval = nil
                effects += [.intervalEnded(taken: schedule.taken, skipped: schedule.skipped, stopped: false), .saveInterval]
            }
            return Outcome(effects)
        case .intervalShotDone(let taken, let now):
            guard var schedule = s.interval else { return Outcome() }
            schedule.shot(taken)
            s.interval = schedule
            var effects: [Effect] = [.saveInterval]
            if schedule.isFinished(now: now) {
                s.interval = nil
                effects += [.intervalEnded(taken: schedule.taken, skipped: schedule.skipped, stopped: false), .saveInterval]
            }
            return Outcome(effects)
        default:
            return Outcome()
        }
    }
}
