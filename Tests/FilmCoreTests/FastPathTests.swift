import TestFixtures
import XCTest
@testable import FilmCore
import Raster

/// The fast path (baked LUT, fixed point, tables) against the float reference.
final class FastPathTests: XCTestCase {
    /// Largest per-channel difference, the mean absolute difference (8-bit levels), and the
    /// share of channel values more than one level apart.
    func difference(_ a: RGBImage, _ b: RGBImage) -> (max: Int, mean: Double, beyondOne: Double) {
        var worst = 0, total = 0, beyond = 0
        for i in a.pixels.indices {
            let d = abs(Int(a.pixels[i]) - Int(b.pixels[i]))
            worst = max(worst, d)
            total += d
            if d > 1 { beyond += 1 }
        }
        return (worst, Double(total) / Double(a.pixels.count), Double(beyond) / Double(a.pixels.count))
    }

    /// The bound, with grain off, for every built-in preset at EV 0 and +1: at most 1/255 per
    /// channel on 99.5 % of values, never more than 3/255, mean under 0.25/255. The few values
    /// past one level sit where the transform bends hardest (near-primary colours, where the
    /// sRGB curve is steepest), which a 33-point lattice cannot follow exactly.
    /// Halation is off here (its halo on these tiny frames is under a pixel, which the fast
    /// stage leaves out); `HalationTests` holds it to its own reference.
    func testFastPathMatchesReferenceWithinOneLevelForEveryPreset() {
        let image = TestImages.sweep(96, 72)
        let random = TestImages.random(48, 32)
        for var preset in BuiltinPresets.all {
            preset.halation.amount = 0
            for (input, ev) in [(image, 0.0), (random, 1.0)] {
                let settings = RenderSettings(ev: ev, intensity: 1, grainEnabled: false)
                let fast = TestImages.render(input, preset, settings)
                let reference = ReferencePipeline(preset: preset, settings: settings).render(input, grain: nil)
                let d = difference(fast, reference)
                XCTAssertLessThanOrEqual(d.max, 3, "\(preset.id) at EV \(ev): max difference \(d.max)/255")
                XCTAssertLessThanOrEqual(d.beyondOne, 0.005, "\(preset.id) at EV \(ev): \(d.beyondOne * 100) % beyond 1/255")
                XCTAssertLessThan(d.mean, 0.25, "\(preset.id): mean difference \(d.mean)/255")
            }
        }
    }

    func testFastPathMatchesReferenceAtPartialIntensityAndWithGrain() {
        let image = TestImages.sweep(64, 64)
        let preset = BuiltinPresets.portra
        let settings = RenderSettings(ev: -0.5, intensity: 0.6, grainSeed: 99)
        let look = FilmLook(preset: preset, settings: settings)
        var fast = image
        let renderer = FilmRenderer(look: look, width: 64, height: 64)
        renderer.render(&fast, grainFrame: 3)
        let reference = ReferencePipeline(preset: preset, settings: settings).render(image, grain: renderer.grainTexture, grainFrame: 3)
        let d = difference(fast, reference)
        // Grain adds the noise quantisation (1/32 σ) and a second rounding through the density table.
        XCTAssertLessThanOrEqual(d.max, 3, "max difference \(d.max)/255")
        XCTAssertLessThan(d.mean, 0.6)
    }

    func testIntensityZeroIsBitExactIdentityAndOneIsTheFullLook() {
        let image = TestImages.random(40, 30)
        for preset in [BuiltinPresets.velvia50, BuiltinPresets.trix400, BuiltinPresets.cinestill800t] {
            XCTAssertEqual(TestImages.render(image, preset, RenderSettings(intensity: 0)), image, preset.id)
            let full = TestImages.render(image, preset, RenderSettings(intensity: 1))
            var unblended = image
            FilmRenderer(look: FilmLook(preset: preset, settings: RenderSettings(intensity: 1)), width: 40, height: 30)
                .render(&unblended, grainFrame: 0, stages: [.light, .color, .vignette, .grain])
            XCTAssertEqual(full, unblended, "intensity 1 is the look with no blend")
            XCTAssertNotEqual(full, image)
            // Halfway sits between the two.
            let half = TestImages.render(image, preset, RenderSettings(intensity: 0.5))
            for i in stride(from: 0, to: image.pixels.count, by: 97) {
                let expected = (Int(image.pixels[i]) + Int(full.pixels[i])) / 2
                XCTAssertLessThanOrEqual(abs(Int(half.pixels[i]) - expected), 1)
            }
        }
    }

    func testThreadsGiveTheSameResultAsOneThread() {
        let image = TestImages.random(70, 53)
        let preset = BuiltinPresets.hp5
        XCTAssertEqual(TestImages.render(image, preset, frame: 5, threads: 1),
                       TestImages.render(image, preset, frame: 5, threads: 4))
    }

    /// Workers take the next strip left, not a fixed share: when the first worker returns, the
    /// frame is done, so a worker that starts late (or loses its core a while) finds nothing
    /// left and the frame does not wait for it.
    func testAWorkerThatStartsLateFindsTheFrameDone() throws {
        let image = TestImages.random(64, 100) // 7 strips of 16 rows
        let renderer = FilmRenderer(look: FilmLook(preset: BuiltinPresets.hp5), width: 64, height: 100)
        try XCTSkipIf(renderer.maximumThreads < 2, "one processor: the renderer runs no workers")
        let expected = TestImages.render(image, BuiltinPresets.hp5, frame: 5, threads: 1)
        var out = image.pixels
        let snapshot = Snapshot()
        out.withUnsafeMutableBufferPointer { p in
            let address = UInt(bitPattern: p.baseAddress!), count = p.count
            let late = OneWorkerAfterAnother {
                snapshot.pixels = Array(UnsafeBufferPointer(start: UnsafePointer<UInt8>(bitPattern: address), count: count))
            }
            renderer.render(source: UnsafePointer(p.baseAddress!), destination: p.baseAddress!, grainFrame: 5, threads: 2, parallel: late)
        }
        XCTAssertEqual(snapshot.pixels, expected.pixels, "done when the first worker returned")
        XCTAssertEqual(out, expected.pixels)
    }

    final class Snapshot: @unchecked Sendable { // @unchecked: written and read on the test's thread only
        var pixels: [UInt8]?
    }

    func testSeparateSourceAndDestinationBuffers() {
        let image = TestImages.random(33, 17)
        let renderer = FilmRenderer(look: FilmLook(preset: BuiltinPresets.ektar100), width: 33, height: 17)
        var out = [UInt8](repeating: 0, count: image.pixels.count)
        image.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                renderer.render(source: src.baseAddress!, destination: dst.baseAddress!, grainFrame: 1)
            }
        }
        var inPlace = image
        renderer.render(&inPlace, grainFrame: 1)
        XCTAssertEqual(out, inPlace.pixels)
    }

    func testExportedCubeReproducesTheLUT() throws {
        let look = FilmLook(preset: BuiltinPresets.gold200, settings: RenderSettings(grainEnabled: false))
        let cube = try CubeLUT(parsing: look.cube().text)
        XCTAssertEqual(cube.size, ColorLUT.defaultGridSize)
        XCTAssertEqual(cube.title, "Kodak Gold 200")
        let reference = ReferencePipeline(preset: BuiltinPresets.gold200)
        for c in [SIMD3<Double>(0.2, 0.5, 0.7), SIMD3(0.9, 0.1, 0.4), SIMD3(0, 0, 0), SIMD3(1, 1, 1)] {
            let a = cube.apply(c), b = reference.color(c)
            XCTAssertEqual(a.x, b.x, accuracy: 2.0 / 255)
            XCTAssertEqual(a.y, b.y, accuracy: 2.0 / 255)
            XCTAssertEqual(a.z, b.z, accuracy: 2.0 / 255)
        }
    }

    /// The packed lookup (three channels in one UInt64, four multiplies) against the same
    /// tetrahedral interpolation done per channel in Double on the LUT's own lattice, for
    /// lattices at the extremes — every entry white, one channel full and its neighbours
    /// black, a steep ramp — and every input level along each axis: within 1/256 of a level
    /// (the 1/32-level entries' rounding), so no field ever carries into the next.
    func testPackedLookupIsTetrahedralInterpolationWithoutCarries() {
        let transforms: [(String, (SIMD3<Double>) -> SIMD3<Double>)] = [
            ("white", { _ in SIMD3(1, 1, 1) }),
            ("green only", { _ in SIMD3(0, 1, 0) }),
            ("red and blue", { _ in SIMD3(1, 0, 1) }),
            ("steep", { c in SIMD3(c.x * c.x, (c.y * 4).truncatingRemainder(dividingBy: 1), 1 - c.z) }),
        ]
        for (name, transform) in transforms {
          for gridSize in [2, 9, 33, ColorLUT.maxGridSize] {
            let lut = ColorLUT(gridSize: gridSize, transform: transform)
            let n = lut.gridSize, top = Double(255 * ColorLUT.fieldScale)
            func node(_ r: Int, _ g: Int, _ b: Int) -> SIMD3<Double> {
                let (x, y, z) = ColorLUT.unpack(lut.entries[r + g * n + b * n * n])
                return SIMD3(Double(x), Double(y), Double(z)) / top * 65280
            }
            /// Tetrahedral interpolation in Double with the fast path's own lattice positions.
            func expected(_ r: Int, _ g: Int, _ b: Int) -> SIMD3<Double> {
                let i = [r, g, b].map { lut.base($0) }, f = [r, g, b].map { Double(lut.fraction($0)) / 256 }
                let order = [0, 1, 2].sorted { f[$0] > f[$1] || (f[$0] == f[$1] && $0 < $1) }
                var p = i, sum = node(p[0], p[1], p[2]) * (1 - f[order[0]])
                for (k, axis) in order.enumerated() {
                    p[axis] += 1
                    let next = k < 2 ? f[order[k + 1]] : 0
                    sum += node(p[0], p[1], p[2]) * (f[axis] - next)
                }
                return sum
            }
            // Eight pixels at a time through the vector lanes, and the last group short.
            var pixels: [(Int, Int, Int)] = []
            for v in 0..<256 {
                pixels += [(v, 37, 200), (90, v, 3), (255, 128, v), (v, v, v), (v, 255 - v, v / 2)]
            }
            pixels += [(1, 2, 3), (4, 5, 6), (7, 8, 9)]
            let bytes = pixels.flatMap { [UInt8($0.0), UInt8($0.1), UInt8($0.2)] }
            lut.withView { view in
                var cells = ColorLUTCells()
                var at = 0
                while at < pixels.count {
                    let lanes = bytes.withUnsafeBufferPointer { cells.fill(view, pixels: $0.baseAddress! + at * 3, count: pixels.count - at) }
                    XCTAssertEqual(lanes, min(8, pixels.count - at))
                    for lane in 0..<lanes {
                        let (r, g, b) = pixels[at + lane]
                        let got = cells.value(view, pixel: lane), want = expected(r, g, b)
                        for (c, value) in [got.0, got.1, got.2].enumerated() {
                            XCTAssertEqual(Double(value), want[c], accuracy: 1.01, "\(name), \(gridSize)³, at (\(r), \(g), \(b)), channel \(c)")
                        }
                    }
                    at += lanes
                }
            }
          }
        }
    }

    /// The vector lanes' lattice positions are `ColorLUT.base` and `fraction` (v · (n − 1) / 255
    /// split into whole and 1/256ths, rounded; the top level at 256 of the last cell) for every
    /// level and every grid size up to 256 (the LUT allows up to `ColorLUT.maxGridSize`).
    func testLatticePositionsInLanesForEveryGridSize() {
        for n in 2...256 {
            for start in stride(from: 0, to: 256, by: 8) {
                let v = SIMD8<UInt16>((0..<8).map { UInt16(start + $0) })
                let (base, fraction) = ColorLUTCells.lattice(v, gridSize: n)
                for l in 0..<8 {
                    let level = start + l, exact = Double(level * (n - 1)) / 255
                    let wantBase = level == 255 ? n - 2 : Int(exact.rounded(.down))
                    let wantFraction = level == 255 ? 256 : Int(((exact - Double(wantBase)) * 256).rounded())
                    XCTAssertEqual(Int(base[l]), wantBase, "grid \(n), level \(level)")
                    XCTAssertEqual(Int(fraction[l]), wantFraction, "grid \(n), level \(level)")
                }
            }
        }
    }

    /// `ColorLUTCells.value` reads the weights back at `weightsOffset`.
    func testCellLayoutIsWhatTheLaneReadsAssume() {
        XCTAssertEqual(MemoryLayout<ColorLUTCells>.offset(of: \ColorLUTCells.node), 0)
        XCTAssertEqual(MemoryLayout<ColorLUTCells>.offset(of: \ColorLUTCells.cornerA), 16)
        XCTAssertEqual(MemoryLayout<ColorLUTCells>.offset(of: \ColorLUTCells.cornerB), 32)
        XCTAssertEqual(MemoryLayout<ColorLUTCells>.offset(of: \ColorLUTCells.w0), ColorLUTCells.weightsOffset)
        XCTAssertEqual(MemoryLayout<ColorLUTCells>.offset(of: \ColorLUTCells.w1), ColorLUTCells.weightsOffset + 48)
    }

    /// The grain pass (indices made 16 at a time in lanes, through memory, then the table read
    /// byte by byte, eight bytes to a 64-bit store) is table[level << 8 | noise] for every
    /// byte, in order: lengths that end inside a
    /// group of 16 and span several of its 512-byte chunks, in place and into another buffer,
    /// over every level and noise byte.
    func testTheGrainPassIsTheDensityTableByteForByte() {
        var rng = SplitMix64(seed: 17)
        let table = (0..<65536).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        var indices = [UInt16](repeating: 0, count: PixelRow.grainChunk)
        for count in [0, 1, 15, 16, 17, 511, 512, 513, 1290, 3 * 1280] {
            let levels = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let noise = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let want = (0..<count).map { table[Int(levels[$0]) << 8 | Int(noise[$0])] }
            // With the blend, the same bytes blended with an original: (original × keep +
            // look × weight + 128) / 256, in the gather's registers.
            let original = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let (keep, weight): (Int32, Int32) = (77, 179)
            let blended = (0..<count).map { UInt8((Int32(original[$0]) * keep + Int32(want[$0]) * weight + 128) >> 8) }
            for inPlace in [false, true] {
                for (blend, askAhead) in [(false, false), (false, true), (true, false), (true, true)] {
                    var out = inPlace ? levels : [UInt8](repeating: 0, count: count)
                    let source = levels
                    out.withUnsafeMutableBufferPointer { o in
                        source.withUnsafeBufferPointer { l in
                            noise.withUnsafeBufferPointer { g in
                                table.withUnsafeBufferPointer { t in
                                    original.withUnsafeBufferPointer { a in
                                        indices.withUnsafeMutableBufferPointer { ix in
                                            guard let o = o.baseAddress, let g = g.baseAddress else { return } // count 0
                                            let levels = inPlace ? UnsafePointer(o) : l.baseAddress!
                                            let mix = blend ? (original: a.baseAddress!, keep: keep, weight: weight) : nil
                                            // Asking for the levels ahead (past the buffer's end too) or not.
                                            if askAhead {
                                                PixelRow.grain(StageOn.self, levels: levels, noise: g, table: t.baseAddress!,
                                                               indices: ix.baseAddress!, into: o, count: count, blend: mix)
                                            } else {
                                                PixelRow.grain(StageOff.self, levels: levels, noise: g, table: t.baseAddress!,
                                                               indices: ix.baseAddress!, into: o, count: count, blend: mix)
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    XCTAssertEqual(out, blend ? blended : want, "\(count) bytes, in place: \(inPlace), blended: \(blend), asking ahead: \(askAhead)")
                }
            }
        }
    }

    /// The renderer plans a grain row's runs once for all the rows that read the same block
    /// rows and reuses the plan: every row of a grain-only render — on two workers, in strips
    /// that start at any row, in windows whose blocks start anywhere — is the density table
    /// read with the grain row `GrainTexture.fillRow` makes for that row alone.
    func testTheRenderersGrainRowsAreEachRowsOwn() {
        let (width, height) = (150, 140)
        let image = TestImages.random(width, height)
        let settings = RenderSettings(intensity: 1, grainSeed: 5)
        var checkedRows = 0
        for window in [FrameWindow.whole(width, height), FrameWindow(frameWidth: 1000, frameHeight: 800, x: 37, y: 21),
                       FrameWindow(frameWidth: 1000, frameHeight: 800, x: 500, y: 611)] {
            let look = FilmLook(preset: BuiltinPresets.portra, settings: settings)
            let renderer = FilmRenderer(look: look, width: width, height: height, window: window)
            guard let texture = renderer.grainTexture else { return XCTFail("Portra has grain") }
            var out = image
            renderer.render(&out, grainFrame: 9, threads: 2, stages: [.grain])
            var row = [UInt8](repeating: 0, count: width * 3)
            for y in 0..<height {
                texture.quantized.withUnsafeBufferPointer { tile in
                    GrainTexture.fixedBlendWeights.withUnsafeBufferPointer { weights in
                        GrainTexture.bandWeights.withUnsafeBufferPointer { bandWeights in
                            GrainTexture.fillRow(&row, width: width, windowX: window.x, frameY: y + window.y, seed: settings.grainSeed,
                                                 frame: 9, tile: tile.baseAddress!, weights: weights.baseAddress!,
                                                 bandWeights: bandWeights.baseAddress!)
                        }
                    }
                }
                let at = y * width * 3
                let want = (0..<(width * 3)).map { texture.densityTable[Int(image.pixels[at + $0]) << 8 | Int(row[$0])] }
                XCTAssertEqual(Array(out.pixels[at..<(at + width * 3)]), want, "row \(y) of window (\(window.x), \(window.y))")
                checkedRows += 1
            }
        }
        XCTAssertEqual(checkedRows, 3 * height)
    }
}
