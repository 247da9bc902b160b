/// One reading of the motion sensor.
public struct MotionSample: Sendable, Equatable {
    /// Acceleration in g (gravity included), sensor axes mapped to the camera's:
    /// x to the right, y up, z out of the lens towards the subject.
    public var acceleration: SIMD3<Double>
    /// Angular rate in degrees per second.
    public var rotation: SIMD3<Double>

    public init(acceleration: SIMD3<Double>, rotation: SIMD3<Double>) {
        self.acceleration = acceleration
        self.rotation = rotation
    }

    /// Camera level and still, held the normal (landscape) way.
    public static let level = MotionSample(acceleration: SIMD3(0, -1, 0), rotation: .zero)
}

/// A source of motion samples, polled by the controller at its own pace (50–100 Hz).
public protocol MotionSensor: AnyObject, Sendable {
    /// A short name for logs ("MPU-6050 on i2c-1", "simulated").
    var name: String { get }
    /// The latest sample; throws when the sensor stopped answering or returns garbage.
    func read() throws -> MotionSample
}
