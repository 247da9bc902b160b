import Controls
import Foundation
import System

/// The trigger line of a headless rig (a PIR sensor, a light barrier, another camera's sync
/// output, a switch): one GPIO line read on its own thread; each edge of the chosen kind
/// becomes `InputEvent.trigger` carrying the kernel's timestamp of the edge. A vanished chip ends
/// the thread with one warning; the daemon keeps running.
public final class TriggerInput: InputSource, Sendable {
    public struct Settings: Sendable, Equatable {
        public var chip: String
        public var line: Int
        public var edge = TriggerEdge.falling
        public var debounceMilliseconds = 10
        public init(chip: String, line: Int) {
            self.chip = chip
            self.line = line
        }
    }

    public let name: String
    private let thread: InputThread

    /// Requests the line (input, pull-up, both edges: the kind is chosen here, so the kernel's
    /// timestamps of every edge are seen) and starts the thread.
    public init(_ settings: Settings) throws(GPIOError) {
        let lines = try GPIOLines(chip: settings.chip, offsets: [settings.line], consumer: "loopixd-trigger")
        let name = "GPIO trigger on \(settings.chip) line \(settings.line)"
        self.name = name
        let events = Locked<[InputEvent]>([])
        let reader = Reader(lines: lines, name: name, events: events,
                            logic: TriggerLogic(edge: settings.edge, debounceNanoseconds: UInt64(max(0, settings.debounceMilliseconds)) * 1_000_000))
        thread = try InputThread("loopix.trigger", input: name, events: events) { token in reader.run(token) }
    }

    public func drain() -> [InputEvent] { thread.drain() }

    /// The reading loop. `@unchecked Sendable`: `lines` and `logic` are touched only by the
    /// reading thread (after `init`); the events go out through the locked queue.
    private final class Reader: @unchecked Sendable {
        let lines: GPIOLines
        let name: String
        let events: Locked<[InputEvent]>
        var logic: TriggerLogic

        init(lines: GPIOLines, name: String, events: Locked<[InputEvent]>, logic: TriggerLogic) {
            self.lines = lines
            self.name = name
            self.events = events
            self.logic = logic
        }

        func run(_ token: WorkerThread.Token) {
            while !token.shouldStop {
                var p = pollfd(fd: lines.fd, events: Int16(POLLIN), revents: 0)
                let r = poll(&p, 1, 50)
                if r < 0 && errno != EINTR {
                    Log.warning("\(name): polling stopped (\(Errno.current)); no trigger")
                    return
                }
                guard r > 0 else { continue }
                if p.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && p.revents & Int16(POLLIN) == 0 {
                    Log.warning("\(name): the GPIO chip is gone; no trigger")
                    return
                }
                do {
                    let fired = try lines.readEvents().compactMap { logic.edge(rising: $0.rising, at: $0.time) }
                    if !fired.isEmpty { events.withLock { $0 += fired.map { .trigger(atNs: $0) } } }
                } catch {
                    Log.warning("\(name): \(error); no trigger")
                    return
                }
            }
        }
    }
}
