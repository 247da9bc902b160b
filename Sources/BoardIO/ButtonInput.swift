import Controls
import Foundation
import System

/// What the buttons and the encoder mean, from edges: pure logic, driven by `ButtonInput`'s
/// thread and by tests with synthetic timestamps.
///
/// Buttons are pulled up and close to ground: a press is the debounced level going low.
/// Button lines are debounced here (`Debouncer`, stable for `debounce` ns) unless the kernel
/// already does it; the encoder's phases are never debounced (at 200 detents/s an edge comes
/// every 2.5 ms per phase) — the quadrature transition table makes bounce cancel out.
public struct ButtonLogic: Sendable {
    public let pins: [ControlPin: Int]
    private let roles: [Int: ControlPin]
    private var debouncer: Debouncer
    private var decoder: QuadratureDecoder?
    private var acceleration: EncoderAcceleration
    private var seqnos: [Int: UInt64] = [:]
    private var encoderLevels: (a: Bool, b: Bool) = (true, true)
    /// Events the kernel lost (sequence-number gaps, libgpiod 2.x).
    public private(set) var lostEvents: UInt64 = 0

    /// `levels`: each offset's level at the start (true: high).
    public init(pins: [ControlPin: Int], debounceNanoseconds: UInt64, transitionsPerDetent: Int = 4,
                acceleration: EncoderAcceleration = EncoderAcceleration(), levels: [Int: Bool] = [:]) {
        self.pins = pins
        var roles: [Int: ControlPin] = [:]
        for (pin, offset) in pins { roles[offset] = pin }
        self.roles = roles
        var buttonLevels: [Int: Bool] = [:]
        for (pin, offset) in pins where pin.pressEvent != nil { buttonLevels[offset] = levels[offset] ?? true }
        debouncer = Debouncer(periodNanoseconds: debounceNanoseconds, levels: buttonLevels)
        if let a = pins[.encoderA], let b = pins[.encoderB] {
            encoderLevels = (levels[a] ?? true, levels[b] ?? true)
            decoder = QuadratureDecoder(transitionsPerDetent: transitionsPerDetent, a: encoderLevels.a, b: encoderLevels.b)
        }
        self.acceleration = acceleration
    }

    /// The earliest time `tick` has something to decide.
    public var nextDeadline: UInt64? { debouncer.nextDeadline }

    public mutating func edge(_ e: GPIOEdge) -> [InputEvent] {
        if e.seqno != 0 {
            if let last = seqnos[e.offset], e.seqno > last + 1 { lostEvents += e.seqno - last - 1 }
            seqnos[e.offset] = e.seqno
        }
        guard let role = roles[e.offset] else { return [] }
        switch role {
        case .encoderA, .encoderB:
            if role == .encoderA { encoderLevels.a = e.rising } else { encoderLevels.b = e.rising }
            guard var d = decoder else { return [] }
            let detents = d.edge(role == .encoderA ? .a : .b, level: e.rising)
            decoder = d
            return turned(detents, at: e.time)
        default:
            return presses(debouncer.edge(line: e.offset, level: e.rising, at: e.time))
        }
    }

    public mutating func tick(at now: UInt64) -> [InputEvent] {
        presses(debouncer.tick(at: now))
    }

    /// The levels read from the hardware while idle: repairs what lost events left wrong.
    public mutating func resync(levels: [Int: Bool], at now: UInt64) -> [InputEvent] {
        var out: [InputEvent] = []
        for (offset, level) in levels.sorted(by: { $0.key < $1.key }) {
            guard let role = roles[offset], role.pressEvent != nil else { continue }
            out += presses(debouncer.observed(line: offset, level: level, at: now))
        }
        if let a = pins[.encoderA], let b = pins[.encoderB], let la = levels[a], let lb = levels[b],
           (la, lb) != encoderLevels, var d = decoder {
            encoderLevels = (la, lb)
            let detents = d.levels(a: la, b: lb)
            decoder = d
            out += turned(detents, at: now)
        }
        return out
    }

    private mutating func turned(_ detents: Int, at time: UInt64) -> [InputEvent] {
        guard detents != 0 else { return [] }
        return [.encoderTurned(acceleration.apply(detents, at: time))]
    }

    private func presses(_ changes: [Debouncer.Change]) -> [InputEvent] {
        changes.compactMap { c in c.level ? nil : roles[c.line]?.pressEvent }
    }
}

/// GPIO buttons and the rotary encoder through libgpiod: requests the lines, and on its own
/// thread polls the request's fd (50 ms timeout, so `stop` is quick), turns edges into
/// `InputEvent`s (`ButtonLogic`) and queues them for `drain()`. A chip that vanishes (or any
/// read error) ends the thread with one warning; the daemon keeps running without buttons.
public final class ButtonInput: InputSource, Sendable {
    public struct Settings: Sendable, Equatable {
        /// The chip: path, name or label.
        public var chip: String
        public var pins: [ControlPin: Int]
        public var debounceMilliseconds: Int = 5
        public var transitionsPerDetent: Int = 4
        public var acceleration = EncoderAcceleration()
        public init(chip: String, pins: [ControlPin: Int]) {
            self.chip = chip
            self.pins = pins
        }
    }

    public let name: String
    private let thread: InputThread

    /// Requests the lines and starts the thread; problems found later are logged (one line each).
    public init(_ settings: Settings) throws(GPIOError) {
        let order = settings.pins.sorted { $0.key < $1.key }
        let offsets = order.map(\.value)
        let debounceUs = UInt32(max(0, settings.debounceMilliseconds) * 1000)
        let perLine = order.map { $0.key.pressEvent == nil ? 0 : debounceUs }
        let lines = try GPIOLines(chip: settings.chip, offsets: offsets, debounceMicroseconds: perLine)
        let name = "GPIO buttons on \(settings.chip)"
        self.name = name
        if lines.noBias { Log.warning("\(name): the kernel refused pull-ups (needs Linux 5.5+): fit external pull-up resistors") }
        var levels: [Int: Bool] = [:]
        if let v = try? lines.values() { for (o, l) in zip(offsets, v) { levels[o] = l } }
        let logic = ButtonLogic(pins: settings.pins,
                                debounceNanoseconds: lines.kernelDebounce ? 0 : UInt64(debounceUs) * 1000,
                                transitionsPerDetent: settings.transitionsPerDetent,
                                acceleration: settings.acceleration, levels: levels)
        let events = Locked<[InputEvent]>([])
        let reader = Reader(lines: lines, logic: logic, name: name, events: events)
        thread = try InputThread("loopix.gpio", input: name, events: events) { token in reader.run(token) }
    }

    public func drain() -> [InputEvent] { thread.drain() }

    /// Stops the thread and keeps the lines until deinit.
    public func stop() { thread.stop() }

    /// Whether the thread is still reading (false after a vanished chip or `stop`).
    public var isRunning: Bool { thread.isRunning }

    /// The reading loop. `@unchecked Sendable`: `lines` and `logic` are touched only by the
    /// reading thread (after `init`); the events go out through the locked queue.
    private final class Reader: @unchecked Sendable {
        let lines: GPIOLines
        var logic: ButtonLogic
        let name: String
        let events: Locked<[InputEvent]>

        init(lines: GPIOLines, logic: ButtonLogic, name: String, events: Locked<[InputEvent]>) {
            self.lines = lines
            self.logic = logic
            self.name = name
            self.events = events
        }

        func emit(_ new: [InputEvent]) {
            guard !new.isEmpty else { return }
            events.withLock { q in
                for e in new {
                    if case .encoderTurned(let n) = e, case .encoderTurned(let m)? = q.last, (n > 0) == (m > 0) {
                        q[q.count - 1] = .encoderTurned(m + n)
                    } else {
                        q.append(e)
                    }
                }
            }
        }

        func run(_ token: WorkerThread.Token) {
            var lost: UInt64 = 0
            var idleSince = MonotonicClock.now()
            while !token.shouldStop {
                var timeout: Int32 = 50
                if let deadline = logic.nextDeadline {
                    timeout = min(50, Deadline(nanoseconds: deadline).pollTimeout)
                }
                var p = pollfd(fd: lines.fd, events: Int16(POLLIN), revents: 0)
                let r = poll(&p, 1, timeout)
                if r < 0 && errno != EINTR {
                    Log.warning("\(name): polling stopped (\(Errno.current)); buttons and encoder off")
                    return
                }
                if r > 0 && p.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && p.revents & Int16(POLLIN) == 0 {
                    Log.warning("\(name): the GPIO chip is gone; buttons and encoder off")
                    return
                }
                do {
                    if r > 0 {
                        for e in try lines.readEvents() { emit(logic.edge(e)) }
                        idleSince = MonotonicClock.now()
                    }
                    emit(logic.tick(at: MonotonicClock.now()))
                    // Idle for 200 ms: compare with the real levels (repairs lost events).
                    let t = MonotonicClock.now()
                    if r == 0 && logic.nextDeadline == nil && t - idleSince > 200_000_000 {
                        let v = try lines.values()
                        // An edge from before that read is queued by now: if one is, the events
                        // say more than the snapshot (a snapshot two encoder steps ahead of the
                        // decoder would lose both), so they go first and the resync waits.
                        var pending = pollfd(fd: lines.fd, events: Int16(POLLIN), revents: 0)
                        if poll(&pending, 1, 0) == 0 {
                            var levels: [Int: Bool] = [:]
                            for (o, l) in zip(lines.offsets, v) { levels[o] = l }
                            emit(logic.resync(levels: levels, at: t))
                        }
                        idleSince = t
                    }
                } catch {
                    Log.warning("\(name): \(error); buttons and encoder off")
                    return
                }
                if logic.lostEvents > lost {
                    Log.warning("\(name): the kernel's event buffer overflowed, \(logic.lostEvents - lost) edge events lost (levels resynchronised when idle)")
                    lost = logic.lostEvents
                }
            }
        }
    }
}
