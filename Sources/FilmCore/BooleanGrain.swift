import Foundation

/// The Boolean model of film grain (Newson, Delon, Galerne, "A Stochastic Film Grain Model
/// for Resolution-Independent Rendering", 2017) rendered directly: discs of random radius
/// dropped by a Poisson process onto the film, the film's density at a point from the discs
/// covering it, and each output pixel the light its aperture lets through. Slow and written to
/// be read, for small patches: the physical reference the fast grain (`GrainModel`,
/// `GrainTexture`) is tested against, as `ReferencePipeline` is for colour.
///
/// The discs are `GrainModel`'s: its populations (radii log-normal around a median, truncated
/// at ±3 standard deviations), each disc adding `clumpDensity` to the unsaturated density s
/// where it lies; the film saturates point by point, D = Dmax·(1 − e^(−s/Dmax)), and a pixel
/// shows −log10 of the mean transmittance over its area (the viewing aperture).
public struct BooleanGrainReference: Sendable {
    public let model: GrainModel

    public init(_ model: GrainModel) { self.model = model }

    /// The densities of an n × n patch of output pixels, each `scale` film pixels wide, on film
    /// developed to density `density` (row-major). Each pixel's aperture is integrated on
    /// `samples` × `samples` points.
    public func patch(density: Double, pixels n: Int, scale: Double, samples m: Int = 4, seed: UInt64 = 1) -> [Double] {
        let s = GrainModel.unsaturatedDensity(density)
        let d = model.clumpDensity
        let points = n * m
        let spacing = scale / Double(m)
        let side = Double(n) * scale
        var rng = SplitMix64(seed: seed)
        var unsaturated = [Double](repeating: 0, count: points * points)
        unsaturated.withUnsafeMutableBufferPointer { field in
            for population in model.populations {
                let discs = population.discs
                let largest = discs.medianRadius * Foundation.exp(3 * discs.logSpread)
                // Discs per square film pixel: this population's share of s, d per disc.
                let rate = s * population.densityShare / (d * discs.meanArea)
                let extended = side + 2 * largest
                let mean = rate * extended * extended
                // The Poisson count, by its normal approximation (means here are thousands).
                let count = max(0, Int((mean + mean.squareRoot() * rng.gaussian()).rounded()))
                for _ in 0..<count {
                    var z = rng.gaussian()
                    while abs(z) > 3 { z = rng.gaussian() }
                    let r = discs.medianRadius * Foundation.exp(discs.logSpread * z)
                    let cx = rng.unit() * extended - largest, cy = rng.unit() * extended - largest
                    // Sample points (i + ½)·spacing inside the disc: per row, the chord's span.
                    let y0 = max(0, Int(((cy - r) / spacing - 0.5).rounded(.up)))
                    let y1 = min(points - 1, Int(((cy + r) / spacing - 0.5).rounded(.down)))
                    if y0 > y1 { continue }
                    for y in y0...y1 {
                        let dy = (Double(y) + 0.5) * spacing - cy
                        let half = (r * r - dy * dy).squareRoot()
                        let x0 = max(0, Int(((cx - half) / spacing - 0.5).rounded(.up)))
                        let x1 = min(points - 1, Int(((cx + half) / spacing - 0.5).rounded(.down)))
                        if x0 > x1 { continue }
                        let row = field.baseAddress! + y * points
                        for x in x0...x1 { row[x] += d }
                    }
                }
            }
        }
        var out = [Double](repeating: 0, count: n * n)
        let dmax = GrainModel.maximumDensity
        for py in 0..<n {
            for px in 0..<n {
                var light = 0.0
                for sy in 0..<m {
                    for sx in 0..<m {
                        let u = unsaturated[(py * m + sy) * points + px * m + sx]
                        light += Foundation.pow(10, -dmax * (1 - Foundation.exp(-u / dmax)))
                    }
                }
                out[py * n + px] = -Foundation.log10(light / Double(m * m))
            }
        }
        return out
    }
}
