import Foundation
import System

/// Why a motion sensor gave no sample.
public enum MotionSensorError: Error, Equatable, CustomStringConvertible {
    /// The sensor stopped answering (I2C error, unplugged, or `ScriptedMotion.fail(true)`).
    case notResponding(String)
    /// It answered with something impossible.
    case badData(String)

    public var description: String {
        switch self {
        case .notResponding(let what): return "motion sensor not responding (\(what))"
        case .badData(let what): return "motion sensor returned bad data (\(what))"
        }
    }
}

/// The IMU's simulated twin: a constant sample, or a script of steps that loops.
///
/// A script is a list of (duration in seconds, sample) steps; `read()` returns the sample of
/// the step the clock is in, counting from when the script was set, and starts over after the
/// last. Steps of zero or negative duration are skipped; a script with no positive duration
/// behaves as its first sample (or `.level` when empty). Thread-safe: `fail`, `set` and
/// `run` may be called from any thread.
public final class ScriptedMotion: MotionSensor {
    public typealias Step = (duration: Double, sample: MotionSample)

    public let name: String
    private let clock: @Sendable () -> Double
    private let state: Locked<State>

    private struct State {
        var steps: [Step]
        var total: Double
        var origin: Double
        var failing = false
    }

    /// Seconds on a monotonic clock.
    public static let monotonicSeconds: @Sendable () -> Double = {
        MonotonicClock.seconds()
    }

    /// Always `sample`.
    public convenience init(_ sample: MotionSample = .level, name: String = "simulated",
                            clock: @escaping @Sendable () -> Double = ScriptedMotion.monotonicSeconds) {
        self.init(script: [(1, sample)], name: name, clock: clock)
    }

    /// Plays `script` in a loop, timed by `clock` (seconds).
    public init(script: [Step], name: String = "simulated",
                clock: @escaping @Sendable () -> Double = ScriptedMotion.monotonicSeconds) {
        self.name = name
        self.clock = clock
        let (steps, total) = Self.prepare(script)
        state = Locked(State(steps: steps, total: total, origin: clock()))
    }

    /// From now on, always `sample`.
    public func set(_ sample: MotionSample) { run([(1, sample)]) }

    /// From now on, play `script` from its start.
    public func run(_ script: [Step]) {
        let (steps, total) = Self.prepare(script)
        let now = clock()
        state.withLock { s in
            s.steps = steps
            s.total = total
            s.origin = now
        }
    }

    /// While `on`, `read()` throws `.notResponding`, as a sensor that stopped answering.
    public func fail(_ on: Bool) {
        state.withLock { $0.failing = on }
    }

    public func read() throws -> MotionSample {
        let now = clock()
        return try state.withLock { s in
            if s.failing { throw MotionSensorError.notResponding("reading \(name)") }
            guard s.total > 0 else { return s.steps.first?.sample ?? .level }
            var t = (now - s.origin).truncatingRemainder(dividingBy: s.total)
            if t < 0 { t += s.total }
            for step in s.steps {
                if t < step.duration { return step.sample }
                t -= step.duration
            }
            return s.steps[s.steps.count - 1].sample
        }
    }

    private static func prepare(_ script: [Step]) -> ([Step], Double) {
        let positive = script.filter { $0.duration > 0 && $0.duration.isFinite }
        if positive.isEmpty { return (Array(script.prefix(1)), 0) }
        return (positive, positive.reduce(0) { $0 + $1.duration })
    }
}
