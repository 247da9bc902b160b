import Controls
import Foundation

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
public final class ButtonInput: InputSource {
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
    private let worker: Worker

    /// Requests the lines and starts the thread. `warn` gets one-line problems (from the thread).
    public init(_ settings: Settings, warn: @escaping @Sendable (String) -> Void = { _ in }) throws(GPIOError) {
        let order = settings.pins.sorted { $0.key < $1.key }
        let offsets = order.map(\.value)
        let debounceUs = UInt32(max(0, settings.debounceMilliseconds) * 1000)
        let perLine = order.map { $0.key.pressEvent == nil ? 0 : debounceUs }
        let lines = try GPIOLines(chip: settings.chip, offsets: offsets, debounceMicroseconds: perLine)
        name = "GPIO buttons on \(settings.chip)"
        if lines.noBias { warn("\(name): the kernel refused pull-ups (needs Linux 5.5+): fit external pull-up resistors") }
        var levels: [Int: Bool] = [:]
        if let v = try? lines.values() { for (o, l) in zip(offsets, v) { levels[o] = l } }
        let logic = ButtonLogic(pins: settings.pins,
                                debounceNanoseconds: lines.kernelDebounce ? 0 : UInt64(debounceUs) * 1000,
                                transitionsPerDetent: settings.transitionsPerDetent,
                                acceleration: settings.acceleration, levels: levels)
        worker = Worker(lines: lines, logic: logic, name: name, warn: warn)
        worker.start()
    }

    deinit { worker.stop() }

    public func drain() -> [InputEvent] {
        worker.queue.withLock { q in
            defer { q.removeAll(keepingCapacity: true) }
            return q
        }
    }

    /// Stops the thread and keeps the lines until deinit.
    public func stop() { worker.stop() }

    /// Whether the thread is still reading (false after a vanished chip or `stop`).
    public var isRunning: Bool { worker.flags.withLock { $0.running } }

    /// The reading thread's state; the thread holds this, not the `ButtonInput`, so dropping
    /// the input stops it. `lines` and `logic` are touched only by the thread (and `init`).
    private final class Worker: @unchecked Sendable {
        let lines: GPIOLines
        var logic: ButtonLogic
        let name: String
        let warn: @Sendable (String) -> Void
        let queue = Locked<[InputEvent]>([])
        struct Flags { var stopping = false; var running = false }
        let flags = Locked(Flags())
        let done = DispatchSemaphore(value: 0)

        init(lines: GPIOLines, logic: ButtonLogic, name: String, warn: @escaping @Sendable (String) -> Void) {
            self.lines = lines
            self.logic = logic
            self.name = name
            self.warn = warn
        }

        func start() {
            flags.withLock { $0.running = true }
            let thread = Thread { [self] in
                run()
                flags.withLock { $0.running = false }
                done.signal()
            }
            thread.name = "loopix.gpio"
            thread.start()
        }

        func stop() {
            let wait = flags.withLock { f -> Bool in
                let was = f.running && !f.stopping
                f.stopping = true
                return was
            }
            if wait { done.wait() }
        }

        static func now() -> UInt64 {
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        }

        func emit(_ events: [InputEvent]) {
            guard !events.isEmpty else { return }
            queue.withLock { q in
                for e in events {
                    if case .encoderTurned(let n) = e, case .encoderTurned(let m)? = q.last, (n > 0) == (m > 0) {
                        q[q.count - 1] = .encoderTurned(m + n)
                    } else {
                        q.append(e)
                    }
                }
            }
        }

        func run() {
            var lost: UInt64 = 0
            var idleSince = Self.now()
            while !flags.withLock({ $0.stopping }) {
                let now = Self.now()
                var timeout: Int32 = 50
                if let deadline = logic.nextDeadline {
                    timeout = deadline <= now ? 0 : Int32(min(50, (deadline - now + 999_999) / 1_000_000))
                }
                var p = pollfd(fd: lines.fd, events: Int16(POLLIN), revents: 0)
                let r = poll(&p, 1, timeout)
                if r < 0 && errno != EINTR {
                    warn("\(name): polling stopped (\(String(cString: strerror(errno)))); buttons and encoder off")
                    return
                }
                if r > 0 && p.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && p.revents & Int16(POLLIN) == 0 {
                    warn("\(name): the GPIO chip is gone; buttons and encoder off")
                    return
                }
                do {
                    if r > 0 {
                        for e in try lines.readEvents() { emit(logic.edge(e)) }
                        idleSince = Self.now()
                    }
                    emit(logic.tick(at: Self.now()))
                    // Idle for 200 ms: compare with the real levels (repairs lost events).
                    let t = Self.now()
                    if r == 0 && logic.nextDeadline == nil && t - idleSince > 200_000_000 {
                        let v = try lines.values()
                        var levels: [Int: Bool] = [:]
                        for (o, l) in zip(lines.offsets, v) { levels[o] = l }
                        emit(logic.resync(levels: levels, at: t))
                        idleSince = t
                    }
                } catch {
                    warn("\(name): \(error); buttons and encoder off")
                    return
                }
                if logic.lostEvents > lost {
                    warn("\(name): the kernel's event buffer overflowed, \(logic.lostEvents - lost) edge events lost (levels resynchronised when idle)")
                    lost = logic.lostEvents
                }
            }
        }
    }
}
