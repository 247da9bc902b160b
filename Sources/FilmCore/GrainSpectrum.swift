import Foundation

/// The power spectrum of grain as the film makes it, before any pixel sees it: shot noise of
/// discs (silver clumps) of random radius placed by a Poisson process. By Campbell's theorem
/// the density field of such discs has the power spectrum λ·d²·E[|F_r(ν)|²], F_r the Fourier
/// transform of a disc of radius r — an Airy pattern, πr²·2J₁(2πrν)/(2πrν).
///
/// Frequencies ν are in cycles per film pixel (a pixel of the 12 MP reference frame).
enum GrainSpectrum {
    /// One population of discs: radii log-normally distributed around `medianRadius` (film
    /// pixels) with log standard deviation `logSpread`.
    struct Discs: Sendable, Equatable {
        var medianRadius: Double
        var logSpread: Double

        /// Quadrature nodes (radius, weight) over the log-normal distribution.
        var radii: [(radius: Double, weight: Double)] {
            let nodes = 25
            var out: [(Double, Double)] = []
            var total = 0.0
            for i in 0..<nodes {
                let z = -3 + 6 * Double(i) / Double(nodes - 1)
                let w = Foundation.exp(-z * z / 2)
                out.append((medianRadius * Foundation.exp(logSpread * z), w))
                total += w
            }
            return out.map { ($0.0, $0.1 / total) }
        }

        /// Mean disc area E[πr²].
        var meanArea: Double { radii.reduce(0) { $0 + $1.weight * Double.pi * $1.radius * $1.radius } }

        /// E[|F_r(ν)|²] / E[area]: the spectrum per unit density and per unit disc density;
        /// it integrates to 1 over the plane (Parseval), so it is the shape alone.
        func normalizedPower(_ nu: Double) -> Double {
            var sum = 0.0
            for (r, w) in radii {
                let area = Double.pi * r * r
                sum += w * area * area * GrainSpectrum.airyPower(2 * Double.pi * r * nu)
            }
            return sum / meanArea
        }
    }

    /// (2·J₁(x)/x)², the disc's normalised power at x = 2πrν.
    static func airyPower(_ x: Double) -> Double {
        let x = abs(x)
        if x < airyLimit {
            let p = x / airyStep
            let i = Int(p)
            let f = p - Double(i)
            return airyTable[i] * (1 - f) + airyTable[i + 1] * f
        }
        let a = 2 * besselJ1(x) / x
        return a * a
    }

    private static let airyStep = 1.0 / 256
    private static let airyLimit = 48.0
    private static let airyTable: [Double] = (0...Int(airyLimit / airyStep) + 1).map { i in
        let x = Double(i) * airyStep
        if x == 0 { return 1 }
        let a = 2 * besselJ1(x) / x
        return a * a
    }

    /// J₁ by its integral (1/2π)∫cos(τ − x·sin τ)dτ over a period, which the trapezoid rule
    /// integrates to machine precision for x well below the node count; past that, Hankel's
    /// asymptotic form.
    static func besselJ1(_ x: Double) -> Double {
        if x > 60 {
            let w = x - 0.75 * Double.pi
            let p = 1 - 0.1171875 / (x * x), q = 0.375 / x
            return (2 / (Double.pi * x)).squareRoot() * (p * Foundation.cos(w) - q * Foundation.sin(w))
        }
        let nodes = 96
        var sum = 0.0
        for i in 0..<nodes {
            let t = 2 * Double.pi * Double(i) / Double(nodes)
            sum += Foundation.cos(t - x * Foundation.sin(t))
        }
        return sum / Double(nodes)
    }

    /// sin(πx)/(πx): the transfer of a box one unit wide.
    static func sinc(_ x: Double) -> Double {
        x == 0 ? 1 : Foundation.sin(Double.pi * x) / (Double.pi * x)
    }

    /// The power transfer of a unit square aperture (a pixel), averaged over directions, at
    /// radial frequency u (cycles per pixel): (2/π)∫ sinc²(u cos θ)·sinc²(u sin θ) dθ.
    static func pixelTransfer(_ u: Double) -> Double {
        let p = u / transferStep
        let i = Int(p)
        if i + 1 >= transferTable.count { return 0 }
        let f = p - Double(i)
        return transferTable[i] * (1 - f) + transferTable[i + 1] * f
    }

    private static let transferStep = 1.0 / 64
    private static let transferTable: [Double] = (0...(64 * 64)).map { i in
        let u = Double(i) * transferStep
        let steps = 64
        var sum = 0.0
        for k in 0..<steps {
            let theta = (Double(k) + 0.5) / Double(steps) * Double.pi / 2
            let a = sinc(u * Foundation.cos(theta)), b = sinc(u * Foundation.sin(theta))
            sum += a * a * b * b
        }
        return sum / Double(steps)
    }
}
