import XCTest
@testable import FilmCore

/// The fast grain held to the physical one: for every preset's grain, `GrainModel` (which the
/// renderer follows, see `GrainTests`) against the Boolean model rendered disc by disc
/// (`BooleanGrainReference`) — RMS granularity across densities and the half-power frequency.
final class BooleanGrainTests: XCTestCase {
    /// Each distinct grain among the built-in presets, with a preset that has it.
    static let grains: [(name: String, grain: Preset.Grain)] = {
        var seen: [Preset.Grain] = []
        var out: [(String, Preset.Grain)] = []
        for p in BuiltinPresets.all where !p.grain.isOff && !seen.contains(p.grain) {
            seen.append(p.grain)
            out.append((p.name, p.grain))
        }
        return out
    }()

    /// Output pixels per side of a reference patch at `scale`: `largest`, or fewer (down to
    /// `smallest`) where the film is so finely grained that it would need over `discs` discs at
    /// density 1 (the reference's cost is its disc count; fine grain needs less area to measure).
    static func patchPixels(_ model: GrainModel, scale: Double, smallest: Int, largest: Int, discs: Double) -> Int {
        let discsPerFilmPixel = model.populations.reduce(0.0) { sum, p in
            sum + GrainModel.unsaturatedDensity(1) * p.densityShare / (model.clumpDensity * p.discs.meanArea)
        }
        let side = (discs / discsPerFilmPixel).squareRoot() / scale
        return min(largest, max(smallest, Int(side) / smallest * smallest))
    }

    /// RMS granularity σ_D through pixels two film pixels wide, at densities from near the base
    /// to near D-max: the model within 15 % of the reference (at the reference's own mean
    /// density), and the reference itself with Selwyn's shape — up from D 0.3, down to D 2.4.
    func testGranularityAcrossDensitiesMatchesTheReference() {
        let densities = [0.3, 1.0, 2.4]
        var worst = (0.0, "")
        for (index, (name, grain)) in Self.grains.enumerated() {
            let model = GrainModel(grain)
            let reference = BooleanGrainReference(model)
            let variance = model.apertureVariance(scale: 2)
            var measured: [Double] = []
            for (k, density) in densities.enumerated() {
                let pixels = Self.patchPixels(model, scale: 2, smallest: 48, largest: 64, discs: 2_500_000)
                let patch = reference.patch(density: density, pixels: pixels, scale: 2, samples: 4, seed: UInt64(100 * index + k))
                let sigma = Stats.sd(patch)
                let expected = GrainModel.densityDeviation(density: Stats.mean(patch), variance: variance)
                let error = sigma / expected - 1
                XCTAssertLessThanOrEqual(abs(error), 0.15, "\(name) at D \(density): reference σ_D \(sigma), model \(expected)")
                if abs(error) > worst.0 { worst = (abs(error), "\(name) at D \(density)") }
                measured.append(sigma)
            }
            XCTAssertGreaterThan(measured[1], measured[0], "\(name): granularity rises from the base")
            XCTAssertLessThan(measured[2], measured[1], "\(name): granularity falls towards D-max")
        }
        print("σ_D model vs Boolean reference, worst: \(String(format: "%+.1f", 100 * worst.0)) % (\(worst.1))")
    }

    /// The frequency below which half the grain's power lies (through reference pixels, at
    /// density 1.0): the fast texture within 20 % of the reference.
    func testHalfPowerFrequencyMatchesTheReference() {
        var worst = (0.0, "")
        for (index, (name, grain)) in Self.grains.enumerated() {
            let model = GrainModel(grain)
            let pixels = Self.patchPixels(model, scale: 1, smallest: 64, largest: 192, discs: 3_000_000)
            let reference = BooleanGrainReference(model).patch(density: 1, pixels: pixels, scale: 1, samples: 3, seed: UInt64(7 + index))
            let texture = GrainTexture(model: model, seed: 9, scale: 1)
            let fast = stride(from: 0, to: texture.noise.count, by: 3).map { Double(texture.noise[$0]) }
            let fRef = Stats.halfPowerFrequency(reference, width: pixels, height: pixels, size: 64)
            let fFast = Stats.halfPowerFrequency(fast, width: GrainTexture.tileSize, height: GrainTexture.tileSize, size: 64)
            let error = fFast / fRef - 1
            XCTAssertLessThanOrEqual(abs(error), 0.2, "\(name): half-power frequency fast \(fFast), reference \(fRef) cycles per pixel")
            if abs(error) > worst.0 { worst = (abs(error), name) }
        }
        print("half-power frequency fast vs Boolean reference, worst: \(String(format: "%.1f", 100 * worst.0)) % (\(worst.1))")
    }
}

extension Stats {
    /// The radial frequency (cycles per pixel) below which half the power of the field's
    /// `size` × `size` patches lies (the mean of each patch removed).
    static func halfPowerFrequency(_ f: [Double], width: Int, height: Int, size: Int) -> Double {
        var power = periodogram(f, width: width, height: height, size: size)
        power.sort { $0.frequency < $1.frequency }
        let half = power.reduce(0) { $0 + $1.power } / 2
        // The cumulative power by radius, interpolated between the grid's radii (sparse at low
        // frequencies, where a step is 10 % or more).
        var sum = 0.0, previous = (frequency: 0.0, cumulative: 0.0)
        var i = 0
        while i < power.count {
            let f = power[i].frequency
            while i < power.count && power[i].frequency == f {
                sum += power[i].power
                i += 1
            }
            if sum >= half {
                return previous.frequency + (f - previous.frequency) * (half - previous.cumulative) / (sum - previous.cumulative)
            }
            previous = (f, sum)
        }
        return previous.frequency
    }
}

/// The stocks ordered by RMS granularity as their makers publish it.
final class GranularityOrderTests: XCTestCase {
    /// σ_D × 1000 at density 1.0 through a 48 µm circular aperture (the data sheets' reading):
    /// on a 36 mm frame 4056 film pixels wide, a square of the same area is 4.79 film pixels.
    static func rmsGranularity(_ preset: Preset) -> Double {
        let model = GrainModel(preset.grain)
        let pixel = 36_000.0 / GrainModel.referenceLongSide
        let side = (Double.pi * 24 * 24).squareRoot() / pixel
        return 1000 * GrainModel.densityDeviation(density: 1, variance: model.apertureVariance(scale: side))
    }

    /// Published figures (README, "Grain": sources): diffuse RMS granularity for black-and-white
    /// and slide films, Kodak's Print Grain Index for its colour negatives — two scales that
    /// cannot be compared with each other, so each is an order of its own.
    static let publishedRMS: [(Preset, Double)] = [
        (BuiltinPresets.tmax100, 8), (BuiltinPresets.ektachrome100, 8), (BuiltinPresets.provia100f, 8),
        (BuiltinPresets.velvia50, 9), (BuiltinPresets.kodachrome64, 10), (BuiltinPresets.fomapan100, 13.5),
        (BuiltinPresets.trix400, 17),
    ]
    static let publishedPGI: [(Preset, Double)] = [
        (BuiltinPresets.ektar100, 25), (BuiltinPresets.portra160, 28), (BuiltinPresets.portra, 37),
        (BuiltinPresets.gold200, 44), (BuiltinPresets.ultramax400, 46), (BuiltinPresets.portra800, 48),
    ]

    func testStocksOrderAsTheirPublishedGranularity() {
        for preset in BuiltinPresets.all where !preset.grain.isOff {
            print(String(format: "granularity %-24@ %5.1f", preset.name as NSString, Self.rmsGranularity(preset)))
        }
        for table in [Self.publishedRMS, Self.publishedPGI] {
            for i in table.indices {
                for j in table.indices where table[i].1 < table[j].1 {
                    let a = Self.rmsGranularity(table[i].0), b = Self.rmsGranularity(table[j].0)
                    XCTAssertLessThan(a, b, "\(table[i].0.name) (published \(table[i].1)) should be finer than \(table[j].0.name) (\(table[j].1))")
                }
            }
        }
    }
}
