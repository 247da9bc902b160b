import Foundation
import Raster

/// The per-pixel tables of light added before the film's colour stages (halation, a date
/// stamp): each 8-bit input level's linear light and the light halation takes from it, in
/// 1/65535ths, and the way back from linear light to an 8-bit level for the colour LUT.
/// Compiled with the look (they depend on its halation and exposure, not on the frame size).
struct LightTables: Sendable {
    static let unit: Float = 65535
    /// Linear light of each 8-bit sRGB level, in 1/65535ths.
    static let linear: [Int32] = (0..<256).map { Int32((ColorMath.srgbToLinear(Double($0) / 255) * 65535).rounded()) }
    /// 8-bit sRGB level of linear light (in 1/65535ths) >> `encodeShift`, rounded to nearest.
    static let encodeShift: Int32 = 2
    static let encode: [UInt8] = (0..<(65536 >> 2)).map { i in
        let l = (Double(i) + 0.5) * 4 / 65535
        return UInt8(min(255, max(0, (ColorMath.linearToSRGB(l) * 255).rounded())))
    }

    /// Per level, the light halation takes from each channel (r, g, b, 0) — in 1/65535ths for
    /// the pixel loop and as a fraction for the reduced copy it spreads.
    let scattered: [Int32]
    let scatteredLight: [SIMD4<Float>]
    /// The lowest level any channel scatters from (256 when none does).
    let firstScatteringLevel: Int

    init(halation: Preset.Halation, gain: Double) {
        var fixed = [Int32](repeating: 0, count: 256 * 4)
        var light = [SIMD4<Float>](repeating: .zero, count: 256)
        var first = 256
        for v in 0..<256 {
            let l = ColorMath.srgbToLinear(Double(v) / 255)
            let s = halation.isOff ? .zero : halation.scattered(SIMD3(repeating: l), gain: gain)
            for c in 0..<3 { fixed[v * 4 + c] = Int32((s[c] * 65535).rounded()) }
            light[v] = SIMD4(Float(s.x), Float(s.y), Float(s.z), 0)
            if s.max() > 0 && first == 256 { first = v }
        }
        scattered = fixed
        scatteredLight = light
        firstScatteringLevel = first
    }
}

/// The light stage of a `FilmRenderer`, for one frame size: halation (the frame's scattered
/// light reduced, spread by a sum of box-blurred Gaussians fitted to the exponential halo, and
/// interpolated back row by row) and a date stamp's light. `prepare` makes the frame's halo
/// before its rows render; `fillRow` then writes each row's added light into a worker's
/// scratch row. All buffers are allocated here: nothing per frame.
///
/// `@unchecked Sendable`: its buffers are written by `prepare` (each worker its own rows of the
/// reduced frame, before any row renders) and only read afterwards, but for each worker's own
/// scratch row in `fillRow`.
final class LightStage: @unchecked Sendable {
    let width: Int
    let height: Int
    let tables: LightTables
    let halation: Bool
    let kernel: HalationKernel?
    let stamp: StampLight?
    /// The stamp's light in 1/65535ths (r, g, b, 0), row by row (stamp.width × stamp.height).
    private let stampFixed: UnsafeMutablePointer<SIMD4<Int32>>
    /// The reduced frame's size.
    let lowWidth: Int
    let lowHeight: Int
    /// The blurs run on the reduced frame with a dark border of `pad` pixels all round (three
    /// times the widest box): a pass must not cut off what the pass before spread past the
    /// frame's edge, or light near the edges would be lost twice. `gridWidth` × `gridHeight`.
    let pad: Int
    let gridWidth: Int
    let gridHeight: Int
    private let base: UnsafeMutablePointer<SIMD4<Float>>
    /// Each component's blurred copy.
    private let blurred: [UnsafeMutablePointer<SIMD4<Float>>]
    /// Per thread blurring components at once: a buffer between passes, a column sum and a
    /// place for the row blur's writes past the last row.
    private let scratchSets: [(spare: UnsafeMutablePointer<SIMD4<Float>>, column: UnsafeMutablePointer<SIMD4<Float>>,
                               spare4: UnsafeMutablePointer<SIMD4<Float>>)]
    private let halo: UnsafeMutablePointer<SIMD4<Float>>
    /// The halo in 1/65535ths, what rows are interpolated from.
    private let haloFixed: UnsafeMutablePointer<SIMD4<Int32>>
    /// 1 / (pixels of the frame in a reduced pixel): a block cut off by the frame's edge is
    /// averaged over the whole block (beyond the frame is dark), so it spreads the light it holds.
    private let blockScale: Float
    /// Per column of the buffer: the reduced column left of it and the weight of the right one
    /// (in 1/256ths).
    private let columnIndex: UnsafeMutablePointer<Int32>
    private let columnWeight: UnsafeMutablePointer<Int32>
    /// One reduced row per worker.
    private let lowRows: UnsafeMutablePointer<SIMD4<Int32>>
    private let workers: Int

    init?(look: FilmLook, width: Int, height: Int, window: FrameWindow, workers: Int) {
        let halation = !look.preset.halation.isOff
        // The stamp, clipped to this buffer (in buffer coordinates).
        var stamp: StampLight?
        if let whole = look.stampLight(frameWidth: window.frameWidth, frameHeight: window.frameHeight) {
            stamp = StampLight(x: whole.x - window.x, y: whole.y - window.y, width: whole.width, height: whole.height, pixels: whole.pixels)
        }
        guard halation || stamp != nil else { return nil }
        self.width = width
        self.height = height
        self.halation = halation
        self.stamp = stamp
        let stampPixels = stamp?.pixels ?? []
        stampFixed = .allocate(capacity: max(1, stampPixels.count))
        for (i, p) in stampPixels.enumerated() {
            stampFixed[i] = SIMD4(Int32((p.x * LightTables.unit).rounded()), Int32((p.y * LightTables.unit).rounded()),
                                  Int32((p.z * LightTables.unit).rounded()), 0)
        }
        self.workers = workers
        tables = look.lightTables
        let kernel = halation ? HalationKernel(radii: look.preset.halation.radii(width: window.frameWidth, height: window.frameHeight)) : nil
        self.kernel = kernel
        let f = kernel?.factor ?? 1
        let lw = halation ? (width + f - 1) / f : 1
        lowWidth = lw
        lowHeight = halation ? (height + f - 1) / f : 1
        let pad = 3 * (kernel?.boxRadii.max() ?? 0)
        self.pad = pad
        let gw = lw + 2 * pad
        gridWidth = gw
        gridHeight = lowHeight + 2 * pad
        let n = gw * gridHeight
        base = .allocate(capacity: n)
        base.initialize(repeating: .zero, count: n)
        let components = kernel?.boxRadii.count ?? 0
        blurred = (0..<components).map { _ in .allocate(capacity: n) }
        scratchSets = (0..<max(1, min(workers, components))).map { _ in
            (spare: .allocate(capacity: n), column: .allocate(capacity: gw), spare4: .allocate(capacity: 1))
        }
        halo = .allocate(capacity: n)
        haloFixed = .allocate(capacity: n)
        blockScale = 1 / Float(f * f)
        columnIndex = .allocate(capacity: width)
        columnWeight = .allocate(capacity: width)
        for x in 0..<width {
            let (i, t) = Self.interpolation(x, factor: f, count: lowWidth)
            columnIndex[x] = Int32(i)
            columnWeight[x] = Int32((t * 256).rounded())
        }
        lowRows = .allocate(capacity: workers * lowWidth)
        halo.initialize(repeating: .zero, count: n)
        haloFixed.initialize(repeating: .zero, count: n)
    }

    deinit {
        for p in [base, halo] + blurred { p.deallocate() }
        for set in scratchSets {
            set.spare.deallocate()
            set.column.deallocate()
            set.spare4.deallocate()
        }
        haloFixed.deallocate()
        stampFixed.deallocate()
        columnIndex.deallocate()
        columnWeight.deallocate()
        lowRows.deallocate()
    }

    /// Where pixel `x` falls between reduced pixels: the one left of (or at) it and the right
    /// one's weight (clamped at the edges).
    static func interpolation(_ x: Int, factor: Int, count: Int) -> (Int, Float) {
        let u = (Float(x) + 0.5) / Float(factor) - 0.5
        if u <= 0 { return (0, 0) }
        let i = Int(u)
        if i >= count - 1 { return (count - 1, 0) }
        return (i, u - Float(i))
    }

    /// Makes the frame's halo from `source` (before any row is rendered: the destination may
    /// be the source). The reduced copy (a reduced row at a time) is made on `threads` workers,
    /// the blurs (a component at a time) on as many as there are scratch sets, up to that.
    func prepare(source: UnsafePointer<UInt8>, threads: Int = 1, parallel: any ParallelWork = DispatchParallelWork()) {
        guard halation, let kernel else { return }
        let n = gridWidth * gridHeight
        // The frame as an address (pointers are not Sendable): it outlives the call, and the
        // workers only read it, each writing its own rows of the reduced frame.
        let src = UInt(bitPattern: source)
        parallel.performInStrips(rows: lowHeight, stripRows: 1, workers: threads) { rows, _ in
            for j in rows { self.reduceRow(j, source: UnsafePointer(bitPattern: src)!) }
        }
        // The components are independent: blurred side by side, one set of scratch per worker.
        parallel.performInStrips(rows: kernel.boxRadii.count, stripRows: 1, workers: min(threads, scratchSets.count)) { components, set in
            for k in components { self.blur(component: k, set: set) }
        }
        halo.update(repeating: .zero, count: n)
        for (k, weight) in kernel.weights.enumerated() {
            let b = blurred[k]
            for i in 0..<n { halo[i] += weight * b[i] }
        }
        let unit = SIMD4<Float>(repeating: LightTables.unit), half = SIMD4<Float>(repeating: 0.5)
        for i in 0..<n {
            let h = pointwiseMax(halo[i], .zero) * unit + half
            haloFixed[i] = SIMD4(Int32(h.x), Int32(h.y), Int32(h.z), 0)
        }
    }

    /// Reduced row `j` of the scattered light: each reduced pixel the mean of its block.
    private func reduceRow(_ j: Int, source: UnsafePointer<UInt8>) {
        let f = kernel!.factor, lw = lowWidth
        let low = base + (j + pad) * gridWidth + pad
        low.update(repeating: .zero, count: lw)
        let first = tables.firstScatteringLevel
        tables.scatteredLight.withUnsafeBufferPointer { scattered in
            for y in (j * f)..<min((j + 1) * f, height) {
                let row = source + y * width * 3
                for i in 0..<lw {
                    var sum = SIMD4<Float>.zero
                    for x in (i * f)..<min((i + 1) * f, width) {
                        let r = Int(row[x &* 3]), g = Int(row[x &* 3 &+ 1]), b = Int(row[x &* 3 &+ 2])
                        guard max(r, g, b) >= first else { continue }
                        sum += SIMD4(scattered[r].x, scattered[g].y, scattered[b].z, 0)
                    }
                    low[i] += sum
                }
            }
        }
        let scale = SIMD4<Float>(repeating: blockScale)
        for i in 0..<lw { low[i] *= scale }
    }

    /// Component `k`: the reduced copy through three box blurs of its radius each way.
    private func blur(component k: Int, set: Int) {
        let radius = kernel!.boxRadii[k], out = blurred[k], scratch = scratchSets[set]
        out.update(from: base, count: gridWidth * gridHeight)
        for _ in 0..<3 {
            boxRows(out, into: scratch.spare, radius: radius, spare4: scratch.spare4)
            boxColumns(scratch.spare, into: out, radius: radius, column: scratch.column)
        }
    }

    /// A box blur of `radius` along each reduced row (light beyond the frame is lost). A running
    /// sum is one long dependency chain, so four rows are summed side by side.
    private func boxRows(_ src: UnsafeMutablePointer<SIMD4<Float>>, into dst: UnsafeMutablePointer<SIMD4<Float>>, radius r: Int,
                         spare4: UnsafeMutablePointer<SIMD4<Float>>) {
        let lw = gridWidth
        let norm = SIMD4<Float>(repeating: 1 / Float(2 * r + 1))
        var j = 0
        while j < gridHeight {
            let rows = min(4, gridHeight - j)
            let s0 = src + j * lw, d0 = dst + j * lw
            let s1 = rows > 1 ? s0 + lw : s0, s2 = rows > 2 ? s0 + 2 * lw : s0, s3 = rows > 3 ? s0 + 3 * lw : s0
            let d1 = rows > 1 ? d0 + lw : spare4, d2 = rows > 2 ? d0 + 2 * lw : spare4, d3 = rows > 3 ? d0 + 3 * lw : spare4
            var a = SIMD4<Float>.zero, b = a, c = a, d = a
            for i in 0..<min(r, lw) { a += s0[i]; b += s1[i]; c += s2[i]; d += s3[i] }
            for i in 0..<lw {
                if i + r < lw { a += s0[i + r]; b += s1[i + r]; c += s2[i + r]; d += s3[i + r] }
                d0[i] = a * norm
                d1[rows > 1 ? i : 0] = b * norm
                d2[rows > 2 ? i : 0] = c * norm
                d3[rows > 3 ? i : 0] = d * norm
                if i - r >= 0 { a -= s0[i - r]; b -= s1[i - r]; c -= s2[i - r]; d -= s3[i - r] }
            }
            j += 4
        }
    }

    /// The same down each reduced column, a row at a time.
    private func boxColumns(_ src: UnsafeMutablePointer<SIMD4<Float>>, into dst: UnsafeMutablePointer<SIMD4<Float>>, radius r: Int,
                            column: UnsafeMutablePointer<SIMD4<Float>>) {
        let lw = gridWidth, lh = gridHeight
        let norm = 1 / Float(2 * r + 1)
        column.update(repeating: .zero, count: lw)
        for j in 0..<min(r, lh) {
            for i in 0..<lw { column[i] += src[j * lw + i] }
        }
        for j in 0..<lh {
            if j + r < lh { for i in 0..<lw { column[i] += src[(j + r) * lw + i] } }
            for i in 0..<lw { dst[j * lw + i] = column[i] * norm }
            if j - r >= 0 { for i in 0..<lw { column[i] -= src[(j - r) * lw + i] } }
        }
    }

    /// Whether row `y` gets any light (every row with halation; the stamp's rows otherwise).
    func rowHasLight(_ y: Int) -> Bool {
        if halation { return true }
        guard let stamp else { return false }
        return y >= stamp.y && y < stamp.y + stamp.height
    }

    /// Writes row `y`'s added light (r, g, b, 0 per pixel, in 1/65535ths) into `scratch`:
    /// integer interpolation of the fixed-point halo (no conversion per pixel), then the stamp.
    func fillRow(_ y: Int, into scratch: UnsafeMutablePointer<SIMD4<Int32>>, worker: Int) {
        if halation, let kernel {
            let (j, t) = Self.interpolation(y, factor: kernel.factor, count: lowHeight)
            let j1 = min(j + 1, lowHeight - 1)
            let tw = SIMD4<Int32>(repeating: Int32((t * 256).rounded()))
            let low = lowRows + worker * lowWidth
            let a = haloFixed + (j + pad) * gridWidth + pad, b = haloFixed + (j1 + pad) * gridWidth + pad
            for i in 0..<lowWidth { low[i] = a[i] &+ (((b[i] &- a[i]) &* tw) &>> 8) }
            let last = lowWidth - 1
            for x in 0..<width {
                let i = Int(columnIndex[x])
                let h0 = low[i], h1 = low[min(i &+ 1, last)]
                scratch[x] = h0 &+ (((h1 &- h0) &* SIMD4(repeating: columnWeight[x])) &>> 8)
            }
        } else {
            scratch.update(repeating: .zero, count: width)
        }
        if let span = stampSpan(y) {
            for x in span.columns { scratch[x] &+= span.light[x] }
        }
    }

    /// Where row `y` crosses the stamp: the buffer's columns it covers (never empty) and its
    /// light, indexed by buffer column; nil for rows it misses.
    func stampSpan(_ y: Int) -> (columns: Range<Int>, light: UnsafePointer<SIMD4<Int32>>)? {
        guard let stamp, y >= stamp.y, y < stamp.y + stamp.height else { return nil }
        let lo = max(0, stamp.x), hi = min(width, stamp.x + stamp.width)
        guard lo < hi else { return nil }
        // Offset so that the buffer's column indexes it; only lo..<hi are ever read.
        return (lo..<hi, UnsafePointer(stampFixed + (y - stamp.y) * stamp.width) - stamp.x)
    }

    /// The added light at buffer pixel (x, y), as `fillRow` interpolates it (tests).
    func haloLight(x: Int, y: Int) -> SIMD3<Double> {
        let row = UnsafeMutablePointer<SIMD4<Int32>>.allocate(capacity: width)
        defer { row.deallocate() }
        fillRow(y, into: row, worker: 0)
        return SIMD3(Double(row[x].x), Double(row[x].y), Double(row[x].z)) / 65535
    }
}
