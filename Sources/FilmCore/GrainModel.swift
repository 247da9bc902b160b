import Foundation

/// Film grain as the film makes it, independent of any pixel grid.
///
/// The developed emulsion is modelled as silver clumps — discs of random radius placed by a
/// Poisson process (the Boolean model of Newson, Delon and Galerne, 2017, with semi-opaque
/// discs: each adds `clumpDensity` to the optical density where it lies). Three populations
/// of discs give the texture: fine crystals (radius `size`, spread by `roughness`), clumps
/// (2.5× larger, weighted by `worley` and `clumping`) and a soft mottle (7× larger, weighted by
/// `simplex`). Sizes are in film pixels: pixels of the 12 MP reference frame (4056 across its
/// long side, the 36 mm of a 35 mm negative), so a preset's grain is the same on the film at
/// every output size; a smaller output sees it through a larger pixel, which averages it down.
///
/// Silver is finite: the density a region can reach saturates at `maximumDensity`, so the
/// unsaturated density s maps to D = Dmax·(1 − e^(−s/Dmax)). The RMS granularity that follows
/// has Selwyn's shape: σ_D rises as √D from the film base (Siedentopf's law for Poisson grains),
/// peaks, and falls towards D-max where the emulsion is used up.
///
/// Tones: each channel's display value is taken as a transmittance T, density D = −log10 T.
public struct GrainModel: Sendable {
    /// Film pixels across the long side of the reference frame (4056 × 3040, 12 MP).
    public static let referenceLongSide = 4056.0
    /// D-max: the density of fully developed film (and the darkest transmittance, 10^−3).
    public static let maximumDensity = 3.0
    static let minimumTransmittance = 0.001
    /// σ_D at density 1.0 through a pixel of the reference frame, for `amount` 1.
    public static let deviationAtUnitDensity = 0.15

    /// One population of discs and its share of the film's density.
    struct Population: Sendable {
        let discs: GrainSpectrum.Discs
        /// Share of the grain variance seen through a reference pixel (the preset's weight).
        let varianceShare: Double
        /// Share φ of the mean density these discs carry.
        let densityShare: Double
    }

    public let grain: Preset.Grain
    let populations: [Population]
    /// Density d each disc adds where it lies.
    public let clumpDensity: Double
    /// The film's grain power spectrum per unit of unsaturated density, d·Σφ·P(ν), sampled at
    /// ν_i = maxFrequency·(i/n)² (fine steps at low frequencies, where the large discs live).
    private let spectrumTable: [Double]
    /// Variance per unit of unsaturated density through a reference pixel, V(1).
    public let referenceVariance: Double

    static let maxFrequency = 8.0
    static let spectrumNodes = 2048

    public init(_ g: Preset.Grain) {
        grain = g
        let size = min(max(g.size, 0.5), 4)
        let r = min(max(g.roughness, 0), 1)
        var specs: [(GrainSpectrum.Discs, Double)] = []
        if g.gaussian > 0 { specs.append((.init(medianRadius: size, logSpread: 0.2 + 0.4 * r), g.gaussian)) }
        let clumps = g.worley * (1 + 2 * min(max(g.clumping, 0), 1))
        if clumps > 0 { specs.append((.init(medianRadius: 2.5 * size, logSpread: 0.3 + 0.2 * r), clumps)) }
        if g.simplex > 0 { specs.append((.init(medianRadius: 7 * size, logSpread: 0.35), g.simplex)) }
        if specs.isEmpty { specs.append((.init(medianRadius: size, logSpread: 0.2 + 0.4 * r), 1)) }

        let nodes = Self.nodes
        // Each population's normalised spectrum P(ν) and the share g of it a reference pixel passes.
        let shapes = specs.map { s in nodes.map { s.0.normalizedPower($0) } }
        let passed = shapes.map { Self.integrate($0, transferScale: 1) }
        // φ_j ∝ w_j / g_j, so that the variance through a reference pixel splits as the weights.
        let weightSum = specs.reduce(0) { $0 + $1.1 }
        let raw = zip(specs, passed).map { $0.1 / $1 }
        let rawSum = raw.reduce(0, +)
        populations = zip(specs, raw).map { Population(discs: $0.0, varianceShare: $0.1 / weightSum, densityShare: $1 / rawSum) }
        // Σφ·g: the variance per unit density per unit d through a reference pixel.
        let passedPerClump = zip(raw, passed).reduce(0) { $0 + $1.0 / rawSum * $1.1 }
        let target = Self.deviationAtUnitDensity * max(g.amount, 0)
        let slope = 1 - 1 / Self.maximumDensity
        let d = target * target / (slope * slope * Self.unsaturatedDensity(1) * passedPerClump)
        clumpDensity = d
        var table = [Double](repeating: 0, count: nodes.count)
        for (p, shape) in zip(populations, shapes) {
            for i in table.indices { table[i] += d * p.densityShare * shape[i] }
        }
        spectrumTable = table
        referenceVariance = d * passedPerClump
    }

    /// The frequencies the spectrum is sampled at.
    private static let nodes: [Double] = (0...spectrumNodes).map {
        let t = Double($0) / Double(spectrumNodes)
        return maxFrequency * t * t
    }

    /// ∫ f(ν)·pixelTransfer(k·ν)·2πν dν over the sampled frequencies (trapezoid rule).
    private static func integrate(_ f: [Double], transferScale k: Double) -> Double {
        var sum = 0.0
        for i in 1..<nodes.count {
            let a = nodes[i - 1], b = nodes[i]
            let fa = f[i - 1] * GrainSpectrum.pixelTransfer(k * a) * a
            let fb = f[i] * GrainSpectrum.pixelTransfer(k * b) * b
            sum += 0.5 * (fa + fb) * (b - a)
        }
        return 2 * Double.pi * sum
    }

    // MARK: Scale

    /// Film pixels per output pixel for a frame of width × height: the long side of any output
    /// spans the film's long side (the camera crops shorter sides, never the long one).
    public static func filmScale(width: Int, height: Int) -> Double {
        referenceLongSide / Double(max(width, height, 1))
    }

    /// The grain power spectrum at ν cycles per film pixel, per unit of unsaturated density.
    public func spectrum(_ nu: Double) -> Double {
        let nu = abs(nu)
        guard nu < Self.maxFrequency else { return 0 }
        let p = (nu / Self.maxFrequency).squareRoot() * Double(Self.spectrumNodes)
        let i = min(Int(p), Self.spectrumNodes - 1)
        let a = Self.nodes[i], b = Self.nodes[i + 1]
        let f = (nu - a) / (b - a)
        return spectrumTable[i] * (1 - f) + spectrumTable[i + 1] * f
    }

    /// Variance per unit of unsaturated density seen through an output pixel `scale` film
    /// pixels wide: the spectrum times the pixel's transfer, integrated. 1 is `referenceVariance`.
    public func apertureVariance(scale: Double) -> Double {
        Self.integrate(spectrumTable, transferScale: scale)
    }

    // MARK: Tones

    public static func density(_ transmittance: Double) -> Double {
        -Foundation.log10(max(transmittance, minimumTransmittance))
    }

    /// The unsaturated density s that saturates to D: D = Dmax·(1 − e^(−s/Dmax)).
    public static func unsaturatedDensity(_ d: Double) -> Double {
        let ratio = min(max(d, 0), maximumDensity * 0.999) / maximumDensity
        return -maximumDensity * Foundation.log(1 - ratio)
    }

    /// RMS granularity σ_D at density D through pixels `scale` film pixels wide, for a film
    /// whose aperture variance at that scale is `variance` (see `apertureVariance`):
    /// the slope of the saturation times the Poisson deviation of s, (1 − D/Dmax)·√(s·V).
    public static func densityDeviation(density d: Double, variance: Double) -> Double {
        let clamped = min(max(d, 0), maximumDensity)
        return (1 - clamped / maximumDensity) * (unsaturatedDensity(clamped) * variance).squareRoot()
    }

    /// σ_D for a display value (taken as transmittance) through a reference pixel.
    public func densityDeviation(value: Double, scale: Double = 1) -> Double {
        Self.densityDeviation(density: Self.density(value), variance: scale == 1 ? referenceVariance : apertureVariance(scale: scale))
    }

    /// One channel: T → D, D + σ_D(D)·noise, back to T (clamped to 0…1). `variance` is the
    /// aperture variance of the output's pixel (`apertureVariance(scale:)`).
    public static func apply(_ value: Double, noise: Double, variance: Double) -> Double {
        let d = density(value)
        let out = d + densityDeviation(density: d, variance: variance) * noise
        return ColorMath.clamp01(Foundation.pow(10, -out))
    }
}
