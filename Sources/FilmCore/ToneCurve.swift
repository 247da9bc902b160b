/// A tone curve through five control points at input 0, ¼, ½, ¾ and 1 (shadows, darks,
/// midtones, lights, highlights): a monotone cubic (Fritsch–Carlson) that passes through
/// every point and never overshoots them, so a rising set of points gives a rising curve.
public struct ToneCurve: Sendable, Equatable {
    /// Output levels at inputs 0, 0.25, 0.5, 0.75, 1; each 0…1 and non-decreasing.
    public var points: [Double] {
        didSet { spline = MonotoneCubic(xs: Self.inputs, ys: points) }
    }
    /// The Hermite tangents, computed once per change of `points` (a LUT bake evaluates the
    /// curve tens of thousands of times).
    private var spline: MonotoneCubic

    public static let inputs: [Double] = [0, 0.25, 0.5, 0.75, 1]
    public static let identity = ToneCurve(points: [0, 0.25, 0.5, 0.75, 1])

    public init(points: [Double]) {
        precondition(points.count == 5, "a tone curve has five control points")
        self.points = points
        spline = MonotoneCubic(xs: Self.inputs, ys: points)
    }

    public static func == (a: ToneCurve, b: ToneCurve) -> Bool { a.points == b.points }

    private enum CodingKeys: String, CodingKey { case points }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let points = try c.decode([Double].self, forKey: .points)
        guard points.count == 5 else {
            throw DecodingError.dataCorruptedError(forKey: .points, in: c, debugDescription: "a tone curve has five control points")
        }
        self.init(points: points)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(points, forKey: .points)
    }

    public init(_ shadows: Double, _ darks: Double, _ midtones: Double, _ lights: Double, _ highlights: Double) {
        self.init(points: [shadows, darks, midtones, lights, highlights])
    }

    public var isIdentity: Bool { self == .identity }

    /// Evaluates the curve at `x` (clamped to 0…1).
    public func callAsFunction(_ x: Double) -> Double {
        spline.evaluate(x)
    }
}

/// Fritsch–Carlson monotone cubic Hermite interpolation.
struct MonotoneCubic: Sendable {
    let xs: [Double]
    let ys: [Double]
    let tangents: [Double]

    init(xs: [Double], ys: [Double]) {
        let n = xs.count
        var secants = [Double](repeating: 0, count: n - 1)
        for i in 0..<(n - 1) { secants[i] = (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]) }
        var m = [Double](repeating: 0, count: n)
        m[0] = secants[0]
        m[n - 1] = secants[n - 2]
        for i in 1..<(n - 1) {
            m[i] = secants[i - 1] * secants[i] <= 0 ? 0 : (secants[i - 1] + secants[i]) / 2
        }
        // Limit the tangents so that no segment overshoots (α² + β² ≤ 9).
        for i in 0..<(n - 1) {
            if secants[i] == 0 {
                m[i] = 0
                m[i + 1] = 0
                continue
            }
            let a = m[i] / secants[i], b = m[i + 1] / secants[i]
            let s = a * a + b * b
            if s > 9 {
                let t = 3 / s.squareRoot()
                m[i] = t * a * secants[i]
                m[i + 1] = t * b * secants[i]
            }
        }
        self.xs = xs
        self.ys = ys
        self.tangents = m
    }

    func evaluate(_ xIn: Double) -> Double {
        let x = min(max(xIn, xs[0]), xs[xs.count - 1])
        var i = 0
        while i < xs.count - 2 && x > xs[i + 1] { i += 1 }
        let h = xs[i + 1] - xs[i]
        let t = (x - xs[i]) / h
        let t2 = t * t, t3 = t2 * t
        let h00 = 2 * t3 - 3 * t2 + 1, h10 = t3 - 2 * t2 + t
        let h01 = -2 * t3 + 3 * t2, h11 = t3 - t2
        return h00 * ys[i] + h10 * h * tangents[i] + h01 * ys[i + 1] + h11 * h * tangents[i + 1]
    }
}
