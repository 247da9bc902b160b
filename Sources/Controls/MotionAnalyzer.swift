import Foundation

/// Turns motion samples into the two things the camera does with motion: how fast the film
/// grain moves (`grainRate`) and which way up a photo is (`orientation`, an EXIF value).
///
/// Axes (as `MotionSample`): x to the camera's right, y up, z out of the lens towards the
/// subject, seen by the photographer behind the camera; `acceleration` points the way gravity
/// pulls, so a level camera reads (0, −1, 0).
///
/// Motion level (`activity`, 0…1): the larger of the gyro magnitude between `stillRotation`
/// and `movingRotation` °/s and the deviation of |acceleration| from 1 g between
/// `stillAcceleration` and `movingAcceleration`, each mapped linearly to 0…1. Below
/// `stillActivity` the camera is resting; once it has rested for `stillHold` seconds (2 s),
/// the grain slows to `stillGrainRate` (0.15); any motion brings it back to
/// `movingGrainRate` (1). The rate follows its target exponentially, quickly (time constant
/// `riseTime`) when motion starts and gently (`fallTime`) when it stops.
///
/// Orientation, from gravity in the x–y plane (low-passed with `gravitySmoothing`), by the
/// roll angle atan2(gx, −gy):
///
/// | how the camera is held (from behind) | gravity reads | roll | EXIF |
/// |---|---|---|---|
/// | level, landscape | (0, −1, 0) | 0° | 1 (as is) |
/// | turned 90° clockwise (right side down, portrait) | (1, 0, 0) | 90° | 6 (rotate 90° CW to view) |
/// | upside down | (0, 1, 0) | 180° | 3 (rotate 180°) |
/// | turned 90° anticlockwise (left side down) | (−1, 0, 0) | −90° | 8 (rotate 90° CCW to view) |
///
/// With hysteresis: the orientation changes only once the roll is more than 45° +
/// `orientationMargin` (15°) from the current pose's angle, so jitter around 45° does not
/// flip it; pointing at the sky or the ground (less than `minimumTilt` g in the x–y plane) or
/// strong shaking (|acceleration| not within 0.5…1.5 g) keeps the last orientation. The first
/// usable sample sets it directly.
public struct MotionAnalyzer: Sendable {
    public struct Settings: Sendable, Equatable {
        public var stillRotation = 4.0
        public var movingRotation = 40.0
        public var stillAcceleration = 0.04
        public var movingAcceleration = 0.3
        public var stillActivity = 0.1
        public var stillHold = 2.0
        public var stillGrainRate = 0.15
        public var movingGrainRate = 1.0
        public var riseTime = 0.1
        public var fallTime = 0.5
        public var orientationMargin = 15.0
        public var minimumTilt = 0.5
        public var gravitySmoothing = 0.1

        public init() {}
    }

    public var settings: Settings
    /// How fast the grain should move, stillGrainRate…movingGrainRate (0…1), smoothed.
    public private(set) var grainRate: Double
    /// EXIF orientation of a photo taken now: 1, 6, 3 or 8.
    public private(set) var orientation = 1
    /// Motion level of the latest sample, 0 (resting) … 1 (moving).
    public private(set) var activity = 0.0
    /// Whether the camera has rested for `stillHold` seconds.
    public private(set) var isStill = false

    private var lastTime: Double? = nil
    private var restingSince: Double? = nil
    private var gravity: SIMD3<Double>? = nil
    private var hasOrientation = false

    public init(settings: Settings = Settings()) {
        self.settings = settings
        grainRate = settings.movingGrainRate
    }

    /// Adds a sample taken at `time` nanoseconds on a monotonic clock.
    public mutating func add(_ sample: MotionSample, atNanoseconds time: UInt64) {
        add(sample, at: Double(time) / 1e9)
    }

    /// Adds a sample taken at `time` seconds on a monotonic clock. Samples out of order count
    /// as simultaneous; gaps longer than a second count as one second.
    public mutating func add(_ sample: MotionSample, at time: Double) {
        let dt = lastTime.map { min(max(time - $0, 0), 1) } ?? 0
        lastTime = max(time, lastTime ?? time)
        let now = lastTime ?? time

        // Motion level and grain rate.
        let r = sample.rotation, a = sample.acceleration
        let rotation = (r * r).sum().squareRoot()
        let magnitude = (a * a).sum().squareRoot()
        let s = settings
        func level(_ v: Double, _ lo: Double, _ hi: Double) -> Double {
            hi > lo ? min(max((v - lo) / (hi - lo), 0), 1) : (v > lo ? 1 : 0)
        }
        activity = max(level(rotation, s.stillRotation, s.movingRotation),
                       level(abs(magnitude - 1), s.stillAcceleration, s.movingAcceleration))
        if activity < s.stillActivity {
            if restingSince == nil { restingSince = now }
        } else {
            restingSince = nil
        }
        isStill = restingSince.map { now - $0 >= s.stillHold } ?? false
        let target = isStill ? s.stillGrainRate : s.movingGrainRate
        let tau = target > grainRate ? s.riseTime : s.fallTime
        grainRate += (target - grainRate) * (tau > 0 ? 1 - exp(-dt / tau) : 1)

        // Orientation.
        guard magnitude > 0.5 && magnitude < 1.5 else { return }
        if let g = gravity, s.gravitySmoothing > 0 {
            gravity = g + (a - g) * (1 - exp(-dt / s.gravitySmoothing))
        } else {
            gravity = a
        }
        guard let g = gravity else { return }
        let tilt = (g.x * g.x + g.y * g.y).squareRoot()
        guard tilt >= s.minimumTilt else { return }
        let roll = atan2(g.x, -g.y) * 180 / .pi
        let current = Self.angle(ofOrientation: orientation)
        if !hasOrientation || Self.distance(roll, current) > 45 + s.orientationMargin {
            orientation = Self.orientation(nearest: roll)
            hasOrientation = true
        }
    }

    /// The roll angle (degrees) each EXIF orientation stands for.
    static func angle(ofOrientation o: Int) -> Double {
        switch o {
        case 6: return 90
        case 3: return 180
        case 8: return -90
        default: return 0
        }
    }

    static func orientation(nearest roll: Double) -> Int {
        [1, 6, 3, 8].min { distance(roll, angle(ofOrientation: $0)) < distance(roll, angle(ofOrientation: $1)) } ?? 1
    }

    /// Angular distance in degrees, 0…180.
    static func distance(_ a: Double, _ b: Double) -> Double {
        let d = abs(a - b).truncatingRemainder(dividingBy: 360)
        return d > 180 ? 360 - d : d
    }
}
