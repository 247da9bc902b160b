import Foundation
import Raster

extension Preset {
    /// Halation: light that passes through the emulsion, reflects off the back of the film base
    /// and comes back to expose the film again in a halo around bright light. It reaches the
    /// bottom (red-sensitive) layer first, so the halo is red-orange: red widest and strongest,
    /// green less and narrower, blue almost none. Stocks without an anti-halation layer
    /// (CineStill, made from motion-picture film with its rem-jet removed) show it strongly;
    /// others faintly or not at all.
    ///
    /// The model, in linear light before the film's colour stages: the light above a soft
    /// `threshold` (after EV and the look's exposure), times each channel's amount, is taken
    /// out of each pixel and spread around it with a radial profile close to exp(−r/ρ), ρ a
    /// fraction of the frame diagonal — so preview and photo show the same halo — and the light
    /// spread adds up to the light taken (energy is preserved but for what leaves the frame).
    public struct Halation: Sendable, Equatable {
        /// 0 (off) … 1: the share of red light above the threshold that is spread.
        public var amount: Double = 0
        /// 0.001…0.05: the red halo's 1/e radius ρ as a fraction of the frame diagonal.
        public var radius: Double = 0.01
        /// 0.1…1: linear light where halation starts (a soft knee of ±0.1 around it).
        public var threshold: Double = 0.7
        /// 0…1: green's amount relative to red's.
        public var green: Double = 0.2
        /// 0…1: blue's amount relative to red's.
        public var blue: Double = 0.02

        public init(amount: Double = 0, radius: Double = 0.01, threshold: Double = 0.7, green: Double = 0.2, blue: Double = 0.02) {
            self.amount = amount
            self.radius = radius
            self.threshold = threshold
            self.green = green
            self.blue = blue
        }

        public var isOff: Bool { amount <= 0 }

        /// Each channel's radius relative to red's: the light that reaches the upper layers
        /// after the reflection has spread less.
        public static let channelRadii = SIMD3<Double>(1, 0.55, 0.35)
        /// Half the width of the soft threshold, in linear light.
        public static let knee = 0.1

        /// The share of each channel's light above the threshold that is spread.
        public var channelAmounts: SIMD3<Double> { SIMD3(amount, amount * green, amount * blue) }

        /// Light above the threshold: 0 below threshold − knee, x − threshold above
        /// threshold + knee, a quadratic that joins the two smoothly in between.
        public func excess(_ x: Double) -> Double {
            let k = min(Self.knee, threshold)
            if x <= threshold - k { return 0 }
            if x >= threshold + k { return x - threshold }
            let d = x - threshold + k
            return d * d / (4 * k)
        }

        /// The light each channel of a pixel of linear light `linear` gives to the halo, when
        /// exposure multiplies it by `gain` before the film sees it.
        public func scattered(_ linear: SIMD3<Double>, gain: Double) -> SIMD3<Double> {
            let a = channelAmounts
            return SIMD3(a.x * excess(linear.x * gain), a.y * excess(linear.y * gain), a.z * excess(linear.z * gain)) / gain
        }

        /// Each channel's 1/e radius in pixels of a width × height frame.
        public func radii(width: Int, height: Int) -> SIMD3<Double> {
            let diagonal = (Double(width * width) + Double(height * height)).squareRoot()
            return Self.channelRadii * (radius * diagonal)
        }
    }
}

/// The halation stage written to be read: every pixel's scattered light spread over its
/// neighbours with the exact exponential profile, in `Double`. Slow (it visits every
/// neighbour within 8ρ of every bright pixel): for tests on small images, beside the fast
/// stage in `LightStage`.
public enum HalationReference {
    /// Linear light of every pixel of `image` after halation (row by row, unclamped), plus
    /// `extra` (linear light per pixel: a date stamp's, which carries its own glow and is not
    /// spread again).
    public static func light(_ image: RGBImage, halation: Preset.Halation, gain: Double,
                             extra: ((Int, Int) -> SIMD3<Double>)? = nil) -> [SIMD3<Double>] {
        let w = image.width, h = image.height
        var light = [SIMD3<Double>](repeating: .zero, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                let p = image[x, y]
                light[y * w + x] = ColorMath.srgbToLinear(SIMD3<Double>(Double(p.x), Double(p.y), Double(p.z)) / 255)
            }
        }
        func plusExtra(_ l: [SIMD3<Double>]) -> [SIMD3<Double>] {
            guard let extra else { return l }
            var out = l
            for y in 0..<h { for x in 0..<w { out[y * w + x] += extra(x, y) } }
            return out
        }
        guard !halation.isOff else { return plusExtra(light) }
        let radii = halation.radii(width: w, height: h)
        let reach = Int((8 * radii.max()).rounded(.up))
        // The discrete kernel, each channel normalised to sum to one over its disc.
        let side = 2 * reach + 1
        var kernel = [SIMD3<Double>](repeating: .zero, count: side * side)
        var sums = SIMD3<Double>.zero
        for dy in -reach...reach {
            for dx in -reach...reach {
                let d = (Double(dx * dx + dy * dy)).squareRoot()
                var k = SIMD3<Double>.zero
                for c in 0..<3 where d <= 8 * radii[c] { k[c] = Foundation.exp(-d / max(radii[c], 1e-9)) }
                kernel[(dy + reach) * side + dx + reach] = k
                sums += k
            }
        }
        for i in kernel.indices { kernel[i] /= sums }
        var out = light
        for y in 0..<h {
            for x in 0..<w {
                let s = halation.scattered(light[y * w + x], gain: gain)
                guard s != .zero else { continue }
                out[y * w + x] -= s
                for dy in max(-reach, -y)...min(reach, h - 1 - y) {
                    for dx in max(-reach, -x)...min(reach, w - 1 - x) {
                        out[(y + dy) * w + x + dx] += s * kernel[(dy + reach) * side + dx + reach]
                    }
                }
            }
        }
        return plusExtra(out)
    }
}

/// How the fast stage approximates the exponential halo: a sum of Gaussians, each made by
/// three box blurs of a given radius on a copy reduced by `factor`, with weights fitted (least
/// squares over the radial profile, area-weighted) to exp(−r/ρ) for each channel's ρ.
struct HalationKernel: Sendable, Equatable {
    /// Pixels of the frame per pixel of the reduced copy.
    let factor: Int
    /// Box radii (in reduced pixels) of the components.
    let boxRadii: [Int]
    /// Per component, each channel's weight (r, g, b, 0); each channel's weights sum to one.
    let weights: [SIMD4<Float>]

    /// The reduced copy is made so that red's ρ spans about 2.5 of its pixels: the cost is
    /// then the same at every frame size (a 200×120 copy of an 800×480 preview, 169×127 of a
    /// 12 MP photo).
    init(radii: SIMD3<Double>) {
        let factor = max(1, Int((radii.x / 2.5).rounded()))
        self.factor = factor
        let f = Double(factor)
        let rhoLow = radii.x / f
        var boxes: [Int] = []
        for t in [0.15, 0.35, 0.75, 1.6, 3.4] {
            let sigma = t * rhoLow
            // Three passes of a box of radius r have variance r(r + 1).
            let r = max(0, Int(((sigma * sigma + 0.25).squareRoot() - 0.5).rounded()))
            if !boxes.contains(r) { boxes.append(r) }
        }
        boxRadii = boxes
        // Each component's σ on the frame: the boxes', the reduction's and the interpolation's.
        let sigmas = boxes.map { r in max(0.5, (f * f * Double(r * (r + 1)) + (f * f - 1) / 4).squareRoot()) }
        var perChannel: [[Double]] = []
        for c in 0..<3 { perChannel.append(Self.fit(sigmas: sigmas, rho: max(radii[c], 0.25))) }
        weights = boxes.indices.map { i in SIMD4(Float(perChannel[0][i]), Float(perChannel[1][i]), Float(perChannel[2][i]), 0) }
    }

    /// Non-negative weights of 2D Gaussians of `sigmas` whose sum best matches exp(−r/ρ)
    /// (both normalised to unit volume), normalised to sum to one.
    static func fit(sigmas: [Double], rho: Double) -> [Double] {
        let radii = (0..<240).map { Double($0) * 6 * rho / 240 }
        func gauss(_ s: Double, _ r: Double) -> Double { Foundation.exp(-r * r / (2 * s * s)) / (2 * Double.pi * s * s) }
        let target = radii.map { Foundation.exp(-$0 / rho) / (2 * Double.pi * rho * rho) }
        var active = Array(sigmas.indices)
        var solution = [Double](repeating: 0, count: sigmas.count)
        while !active.isEmpty {
            let n = active.count
            var a = [Double](repeating: 0, count: n * n), b = [Double](repeating: 0, count: n)
            for (k, r) in radii.enumerated() {
                let area = r + 0.5 * rho / 240   // the ring's share of the volume
                let g = active.map { gauss(sigmas[$0], r) }
                for i in 0..<n {
                    b[i] += area * g[i] * target[k]
                    for j in 0..<n { a[i * n + j] += area * g[i] * g[j] }
                }
            }
            guard let x = solve(a, b, n), let worst = x.indices.min(by: { x[$0] < x[$1] }) else { break }
            if x[worst] >= 0 {
                for (i, s) in active.enumerated() { solution[s] = x[i] }
                break
            }
            active.remove(at: worst)
        }
        let total = solution.reduce(0, +)
        if total <= 0 {
            // Nothing fitted (a degenerate size): the widest component carries it all.
            var w = [Double](repeating: 0, count: sigmas.count)
            w[sigmas.indices.max(by: { sigmas[$0] < sigmas[$1] })!] = 1
            return w
        }
        return solution.map { $0 / total }
    }

    /// Gaussian elimination with partial pivoting; nil when singular.
    static func solve(_ a: [Double], _ b: [Double], _ n: Int) -> [Double]? {
        var m = a, v = b
        for col in 0..<n {
            guard let pivot = (col..<n).max(by: { abs(m[$0 * n + col]) < abs(m[$1 * n + col]) }),
                  abs(m[pivot * n + col]) > 1e-300 else { return nil }
            if pivot != col {
                for j in 0..<n { m.swapAt(col * n + j, pivot * n + j) }
                v.swapAt(col, pivot)
            }
            for row in (col + 1)..<n {
                let f = m[row * n + col] / m[col * n + col]
                for j in col..<n { m[row * n + j] -= f * m[col * n + j] }
                v[row] -= f * v[col]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var s = v[row]
            for j in (row + 1)..<n { s -= m[row * n + j] * x[j] }
            x[row] = s / m[row * n + row]
        }
        return x
    }
}
