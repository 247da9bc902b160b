import Dispatch
import Foundation
import Raster

/// A preset and render settings compiled into the data the per-frame loop needs: the colour
/// LUT, the film's grain model, the blend weight. Compile once per change (preset, EV,
/// intensity, seed); render every frame with a `FilmRenderer`, which adds what depends on
/// the output size (the grain texture for that pixel size, the vignette's terms).
///
/// Immutable after `init` but for the cache of grain textures by output scale (behind a lock),
/// which is why it is `@unchecked Sendable`.
public final class FilmLook: @unchecked Sendable {
    public let preset: Preset
    public let settings: RenderSettings
    public let lut: ColorLUT
    /// nil when the look has no grain (or grain is turned off).
    public let grainModel: GrainModel?
    /// Intensity in 1/256ths: 0 is the original bit for bit, 256 the full look.
    let blendWeight: Int32
    /// Linear light in and out of the light stage (halation, a date stamp).
    let lightTables: LightTables
    private let textureLock = NSLock()
    private var textures: [GrainTexture] = []
    private var stamps: [(frameWidth: Int, frameHeight: Int, light: StampLight)] = []

    /// Compiles `preset` with `settings`. A texture from an earlier look with the same grain
    /// parameters and seed can be passed in to skip regenerating it.
    public init(preset: Preset, settings: RenderSettings = RenderSettings(), reusing texture: GrainTexture? = nil) {
        self.preset = preset
        self.settings = settings
        let reference = ReferencePipeline(preset: preset, settings: settings)
        lut = ColorLUT { reference.color($0) }
        let wantsGrain = settings.grainEnabled && !preset.grain.isOff
        grainModel = wantsGrain ? GrainModel(preset.grain) : nil
        if wantsGrain, let texture, texture.grain == preset.grain, texture.seed == settings.grainSeed {
            textures = [texture]
        }
        blendWeight = Int32((min(max(settings.intensity, 0), 1) * 256).rounded())
        lightTables = LightTables(halation: preset.halation, gain: reference.exposureGain)
    }

    /// The grain texture for output pixels `scale` film pixels wide (made once per scale and
    /// kept; nil without grain).
    public func grainTexture(scale: Double) -> GrainTexture? {
        guard let grainModel else { return nil }
        textureLock.lock()
        defer { textureLock.unlock() }
        if let t = textures.first(where: { abs($0.scale - scale) < 1e-9 }) { return t }
        let t = GrainTexture(model: grainModel, seed: settings.grainSeed, scale: scale)
        textures.append(t)
        if textures.count > 4 { textures.removeFirst() }
        return t
    }

    /// The date stamp's light for a frame of this size (made once per size and kept; nil
    /// without a stamp). The look compiler makes it ahead, so the preview never waits for one.
    public func stampLight(frameWidth: Int, frameHeight: Int) -> StampLight? {
        guard let stamp = settings.dateStamp.flatMap(DateStamp.init) else { return nil }
        textureLock.lock()
        defer { textureLock.unlock() }
        if let s = stamps.first(where: { $0.frameWidth == frameWidth && $0.frameHeight == frameHeight }) { return s.light }
        let light = stamp.light(frameWidth: frameWidth, frameHeight: frameHeight)
        stamps.append((frameWidth, frameHeight, light))
        if stamps.count > 4 { stamps.removeFirst() }
        return light
    }

    /// The most recently made grain texture (for `reusing:` by the next look), if any.
    public var grainTexture: GrainTexture? {
        textureLock.lock()
        defer { textureLock.unlock() }
        return textures.last
    }

    /// The colour stages as a `.cube` LUT (what `loopix` exports for other tools).
    public func cube() -> CubeLUT { lut.cube(title: preset.name) }
}

/// Which stages a render runs; the benchmark times them apart. `.all` is the pipeline.
public struct RenderStages: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let color = RenderStages(rawValue: 1)
    public static let vignette = RenderStages(rawValue: 2)
    public static let grain = RenderStages(rawValue: 4)
    public static let blend = RenderStages(rawValue: 8)
    /// Light added before the colour stages: halation and a date stamp.
    public static let light = RenderStages(rawValue: 16)
    public static let all: RenderStages = [.light, .color, .vignette, .grain, .blend]
}

/// Where the pixels a renderer fills sit in the picture: the whole frame's size and this
/// buffer's offset in it. Grain (on the film's scale, anchored to the frame) and the vignette
/// follow the frame, so a tile of a photo renders exactly as that part of the whole would.
public struct FrameWindow: Sendable, Equatable {
    public var frameWidth: Int
    public var frameHeight: Int
    public var x: Int
    public var y: Int

    public init(frameWidth: Int, frameHeight: Int, x: Int = 0, y: Int = 0) {
        self.frameWidth = frameWidth
        self.frameHeight = frameHeight
        self.x = x
        self.y = y
    }

    /// The whole frame of width × height.
    public static func whole(_ width: Int, _ height: Int) -> FrameWindow { FrameWindow(frameWidth: width, frameHeight: height) }

    /// Film pixels per pixel of this frame.
    public var filmScale: Double { GrainModel.filmScale(width: frameWidth, height: frameHeight) }
}

/// A `FilmLook` prepared for one frame size: the vignette's per-axis terms and radial table,
/// the grain texture for this pixel size and its density table, the light stage's buffers
/// (halation's reduced frame, the date stamp's light). Everything is allocated here;
/// `render` allocates nothing, so it is what the preview loop calls for every frame.
///
/// `@unchecked Sendable`: the look and the tables are read-only once made; `render` (one call
/// at a time, the caller's) fills the light stage before handing out rows, and each worker
/// writes only its rows and its own scratch row.
public final class FilmRenderer: @unchecked Sendable {
    public let look: FilmLook
    public let width: Int
    public let height: Int
    public let window: FrameWindow
    /// The grain this pixel size sees (nil without grain).
    public let grainTexture: GrainTexture?
    /// Squared normalised radius per column and per row, in 1/2^20ths (sum ≤ 2^21). Unsigned,
    /// so that the mask's index needs no sign extension in the pixel loop.
    private let columnTerms: UnsafeMutablePointer<UInt32>
    private let rowTerms: UnsafeMutablePointer<UInt32>
    /// Mask in 1/4096ths for squared radius index (r² × 2048), 4097 entries.
    private let vignetteTable: UnsafeMutablePointer<Int32>
    /// Some of the mask is above 1 (a negative amount lightens the corners): its products need
    /// clamping.
    private let vignetteBrightens: Bool
    /// One row of grain per worker (3 bytes a pixel, as the image's), filled before the row's
    /// pixels.
    private let grainRows: UnsafeMutablePointer<UInt8>
    /// Density-table indices per worker for `PixelRow.grain`, `PixelRow.grainChunk` of them.
    private let grainIndices: UnsafeMutablePointer<UInt16>
    /// The grain row's runs per worker (`GrainTexture.planRow`), kept while its rows read the
    /// same block rows: `GrainTexture.runCapacity(width:)` of them.
    private let grainRuns: UnsafeMutablePointer<GrainTexture.Run>
    /// Workers a render can use (one grain row each).
    public let maximumThreads: Int
    /// Halation and the date stamp (nil when the look has neither).
    let light: LightStage?
    /// One row of added light per worker (r, g, b, 0 as Int32 per pixel).
    private let lightRows: UnsafeMutablePointer<SIMD4<Int32>>
    /// Two rows of 8-bit levels per worker: the levels the film sees with the light added, and
    /// the blend's original with the date stamp.
    private let levelRows: UnsafeMutablePointer<UInt8>
    /// One row of 8-bit levels per worker: the blend's original when the render is in place
    /// (the look's row overwrites it before the blend reads it).
    private let originalRows: UnsafeMutablePointer<UInt8>
    static let radiusShift: UInt32 = 9
    private static let vignetteEntries = 4097

    /// A renderer for `width` × `height` buffers that are `window` of a frame (the whole
    /// frame when nil).
    public init(look: FilmLook, width: Int, height: Int, window: FrameWindow? = nil) {
        precondition(width > 0 && height > 0, "frame size must be positive")
        self.look = look
        self.width = width
        self.height = height
        let window = window ?? .whole(width, height)
        self.window = window
        let v = look.preset.vignette
        let scales = v.axisScales(width: window.frameWidth, height: window.frameHeight)
        columnTerms = .allocate(capacity: width)
        rowTerms = .allocate(capacity: height)
        for x in 0..<width {
            let u = Preset.Vignette.axisCoordinate(x + window.x, window.frameWidth) * scales.x
            columnTerms[x] = UInt32((u * u * 1_048_576).rounded())
        }
        for y in 0..<height {
            let u = Preset.Vignette.axisCoordinate(y + window.y, window.frameHeight) * scales.y
            rowTerms[y] = UInt32((u * u * 1_048_576).rounded())
        }
        vignetteTable = .allocate(capacity: Self.vignetteEntries)
        maximumThreads = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 64))
        grainRows = .allocate(capacity: maximumThreads * width * GrainTexture.texelBytes)
        grainIndices = .allocate(capacity: maximumThreads * PixelRow.grainChunk)
        grainRuns = .allocate(capacity: maximumThreads * GrainTexture.runCapacity(width: width))
        for i in 0..<Self.vignetteEntries {
            // The centre of each r² bin.
            let r2 = (Double(i) + 0.5) / 2048
            vignetteTable[i] = Int32((v.mask(radiusSquared: r2) * 4096).rounded())
        }
        let table = vignetteTable
        vignetteBrightens = (0..<Self.vignetteEntries).contains { table[$0] > 4096 }
        let texture = look.grainTexture(scale: window.filmScale)
        grainTexture = texture
        light = LightStage(look: look, width: width, height: height, window: window, workers: maximumThreads)
        lightRows = .allocate(capacity: light == nil ? 1 : maximumThreads * width)
        levelRows = .allocate(capacity: light == nil ? 1 : maximumThreads * width * 6)
        originalRows = .allocate(capacity: maximumThreads * width * 3)
    }

    deinit {
        columnTerms.deallocate()
        rowTerms.deallocate()
        vignetteTable.deallocate()
        grainRows.deallocate()
        grainIndices.deallocate()
        grainRuns.deallocate()
        lightRows.deallocate()
        levelRows.deallocate()
        originalRows.deallocate()
    }

    /// Renders `source` into `destination` (each width × height × 3 bytes; they may be the
    /// same buffer) on `threads` threads, in strips of rows. `grainFrame` picks the grain
    /// pattern (see `GrainClock`). `intensity` overrides the look's own for this frame, so a
    /// dial can move without recompiling the look.
    /// `parallel` runs the strips (Dispatch's pool unless told otherwise: a photo develops on
    /// `BackgroundThreads`, below the preview).
    public func render(source: UnsafePointer<UInt8>, destination: UnsafeMutablePointer<UInt8>,
                       grainFrame: UInt64, threads: Int = 1, stages: RenderStages = .all, intensity: Double? = nil,
                       parallel: any ParallelWork = DispatchParallelWork()) {
        let weight = intensity.map { Int32((min(max($0, 0), 1) * 256).rounded()) } ?? look.blendWeight
        let threads = max(1, min(threads, height, maximumThreads))
        // The halo is made from the whole source before any row is written (not when the
        // original is all that is shown).
        if stages.contains(.light) && !(weight == 0 && stages.contains(.blend)) {
            light?.prepare(source: source, threads: threads, parallel: parallel)
        }
        if threads == 1 {
            renderRows(0..<height, source: source, destination: destination, grainFrame: grainFrame, stages: stages, weight: weight,
                       worker: 0)
            return
        }
        // Strips of 16 rows, each worker taking the next one left (see `performInStrips`).
        // The buffers as addresses (pointers are not Sendable): both outlive the call, which
        // returns when every strip is done, and each strip writes only its own rows.
        let src = UInt(bitPattern: source), dst = UInt(bitPattern: destination)
        parallel.performInStrips(rows: height, stripRows: 16, workers: threads) { rows, worker in
            self.renderRows(rows, source: UnsafePointer(bitPattern: src)!, destination: UnsafeMutablePointer(bitPattern: dst)!,
                            grainFrame: grainFrame, stages: stages, weight: weight, worker: worker)
        }
    }

    /// Renders an image in place.
    public func render(_ image: inout RGBImage, grainFrame: UInt64, threads: Int = 1, stages: RenderStages = .all,
                       intensity: Double? = nil, parallel: any ParallelWork = DispatchParallelWork()) {
        precondition(image.width == width && image.height == height, "image is not the renderer's size")
        image.pixels.withUnsafeMutableBufferPointer { p in
            render(source: UnsafePointer(p.baseAddress!), destination: p.baseAddress!, grainFrame: grainFrame, threads: threads,
                   stages: stages, intensity: intensity, parallel: parallel)
        }
    }

    /// The stamp's columns of a row: `source`'s levels with the stamp's light, into `destination`
    /// (which may be `source`); the other columns are left as they are.
    static func stampRow(_ source: UnsafePointer<UInt8>, into destination: UnsafeMutablePointer<UInt8>,
                         span: (columns: Range<Int>, light: UnsafePointer<SIMD4<Int32>>)) {
        for px in span.columns {
            for c in 0..<3 { destination[px * 3 + c] = stamped(source[px * 3 + c], span.light[px][c]) }
        }
    }

    /// An 8-bit level with a stamp's light (1/65535ths) added in linear light.
    @inline(__always)
    static func stamped(_ level: UInt8, _ light: Int32) -> UInt8 {
        let l = min(LightTables.linear[Int(level)] &+ light, 65535)
        return LightTables.encode[Int(l &>> LightTables.encodeShift)]
    }

    /// The inner loop: light → LUT → vignette → grain → blend for each pixel of `rows`, with
    /// worker `worker`'s scratch rows.
    func renderRows(_ rows: Range<Int>, source: UnsafePointer<UInt8>, destination: UnsafeMutablePointer<UInt8>,
                    grainFrame: UInt64, stages: RenderStages, weight w: Int32, worker: Int) {
        let scratch = grainRows + worker * width * GrainTexture.texelBytes
        let runs = grainRuns + worker * GrainTexture.runCapacity(width: width)
        let lightScratch = lightRows + (light == nil ? 0 : worker * width)
        let light = stages.contains(.light) ? self.light : nil
        let look = self.look
        let rowBytes = width * 3
        if w == 0 && stages.contains(.blend) {
            // Intensity 0: the original, bit for bit — but for a date stamp, which is the
            // camera's, not the look's.
            if source != UnsafePointer(destination) {
                for y in rows { (destination + y * rowBytes).update(from: source + y * rowBytes, count: rowBytes) }
            }
            if let light {
                for y in rows {
                    guard let span = light.stampSpan(y) else { continue }
                    Self.stampRow(source + y * rowBytes, into: destination + y * rowBytes, span: span)
                }
            }
            return
        }
        let useColor = stages.contains(.color)
        let vignette: VignetteMode = !stages.contains(.vignette) || look.preset.vignette.amount == 0 ? .off
            : vignetteBrightens ? .brightens : .darkens
        let texture = stages.contains(.grain) ? grainTexture : nil
        let useBlend = stages.contains(.blend) && w != 256
        let keep = 256 - w
        let seed = look.settings.grainSeed
        let width = self.width, window = self.window
        look.lut.withView { lut in
        LightTables.linear.withUnsafeBufferPointer { linear in
        LightTables.encode.withUnsafeBufferPointer { encode in
        look.lightTables.scattered.withUnsafeBufferPointer { scattered in
        GrainTexture.fixedBlendWeights.withUnsafeBufferPointer { blend in
        GrainTexture.bandWeights.withUnsafeBufferPointer { bandWeights in
        (texture?.quantized ?? []).withUnsafeBufferPointer { tile in
        (texture?.densityTable ?? []).withUnsafeBufferPointer { grainTable in
            // The block rows the grain row was last planned for, and its runs.
            var planned: GrainTexture.BlockRows? = nil, runCount = 0
            for y in rows {
                let src = source + y * rowBytes
                let dst = destination + y * rowBytes
                let rowTerm = rowTerms[y]
                // The row's grain first, into this worker's scratch row (mostly copies of tile
                // rows), then the pixels. Its runs are planned again only where the rows move to
                // other block rows (every 16 to 48 rows).
                if texture != nil {
                    let frameY = y + window.y
                    let blockRows = GrainTexture.BlockRows(frameY: frameY, weights: blend.baseAddress!)
                    if blockRows != planned {
                        runCount = GrainTexture.planRow(runs, width: width, windowX: window.x, rows: blockRows, seed: seed,
                                                        frame: grainFrame)
                        planned = blockRows
                    }
                    GrainTexture.fillRow(scratch, runs: runs, count: runCount, frameY: frameY, rows: blockRows,
                                         tile: tile.baseAddress!, bandWeights: bandWeights.baseAddress!)
                }
                // The row's added light (halation, the date stamp), when it has any, in a pass of
                // its own: the film sees the scene's light less what halation spreads from the
                // pixel, plus what reaches it, back to 8-bit levels for the LUT. The blend's
                // original carries the stamp too (it is the camera's, not the look's). The main
                // loop below then reads two rows and keeps few values live.
                var filmIn = UnsafePointer(src), blendIn = UnsafePointer(src)
                if let light, light.rowHasLight(y) {
                    light.fillRow(y, into: lightScratch, worker: worker)
                    let lit = levelRows + worker * width * 6
                    let lin = linear.baseAddress!, enc = encode.baseAddress!, sc = scattered.baseAddress!
                    let shift = LightTables.encodeShift
                    for px in 0..<width {
                        let i = px &* 3, l = lightScratch[px]
                        let r = Int(src[i]), g = Int(src[i &+ 1]), b = Int(src[i &+ 2])
                        let lr = min(max(lin[r] &- sc[r &* 4] &+ l.x, 0), 65535)
                        let lg = min(max(lin[g] &- sc[g &* 4 &+ 1] &+ l.y, 0), 65535)
                        let lb = min(max(lin[b] &- sc[b &* 4 &+ 2] &+ l.z, 0), 65535)
                        lit[i] = enc[Int(lr &>> shift)]
                        lit[i &+ 1] = enc[Int(lg &>> shift)]
                        lit[i &+ 2] = enc[Int(lb &>> shift)]
                    }
                    filmIn = UnsafePointer(lit)
                }
                if useBlend, let span = light?.stampSpan(y) {
                    let stamped = levelRows + worker * width * 6 + rowBytes
                    stamped.update(from: src, count: rowBytes)
                    Self.stampRow(src, into: stamped, span: span)
                    blendIn = UnsafePointer(stamped)
                }
                if useBlend && blendIn == UnsafePointer(dst) {
                    let original = originalRows + worker * rowBytes
                    original.update(from: src, count: rowBytes)
                    blendIn = UnsafePointer(original)
                }
                let row = PixelRow(width: width, filmIn: filmIn, blendIn: blendIn, destination: dst, lut: lut,
                                   vignetteTable: UnsafePointer(vignetteTable), columnTerms: UnsafePointer(columnTerms), rowTerm: rowTerm,
                                   grain: UnsafePointer(scratch), grainTable: grainTable.baseAddress,
                                   grainIndices: grainIndices + worker * PixelRow.grainChunk, keep: keep, weight: w)
                row.render(color: useColor, vignette: vignette, grain: texture != nil, blend: useBlend)
            }
        }}}}}}}}
    }
}

/// A type-level switch for one stage of the pixel loop, so that each combination of stages
/// gets a loop of its own with nothing of the others in it (fewer values live, no tests).
protocol StageSwitch { static var on: Bool { get } }
enum StageOn: StageSwitch { static var on: Bool { true } }
enum StageOff: StageSwitch { static var on: Bool { false } }

/// The vignette's: off, on, and whether it can lighten (a mask above 1, whose products are
/// clamped; one that only darkens cannot overflow a level).
protocol VignetteSwitch: StageSwitch { static var brightens: Bool { get } }
enum VignetteOff: VignetteSwitch { static var on: Bool { false }; static var brightens: Bool { false } }
enum VignetteDarkens: VignetteSwitch { static var on: Bool { true }; static var brightens: Bool { false } }
enum VignetteBrightens: VignetteSwitch { static var on: Bool { true }; static var brightens: Bool { true } }
enum VignetteMode { case off, darkens, brightens }

/// One row's pixels through the colour LUT, vignette, grain and blend, from the film's levels
/// (`filmIn`: the source, or the source with the row's light) and the blend's original.
struct PixelRow {
    let width: Int
    let filmIn: UnsafePointer<UInt8>
    let blendIn: UnsafePointer<UInt8>
    let destination: UnsafeMutablePointer<UInt8>
    let lut: ColorLUTView
    let vignetteTable: UnsafePointer<Int32>
    let columnTerms: UnsafePointer<UInt32>
    let rowTerm: UInt32
    /// The row's grain, 3 bytes a pixel, and the density table it indexes.
    let grain: UnsafePointer<UInt8>
    let grainTable: UnsafePointer<UInt8>?
    let grainIndices: UnsafeMutablePointer<UInt16>
    /// The blend's weights of the original and the look, in 1/256ths.
    let keep: Int32
    let weight: Int32

    func render(color: Bool, vignette: VignetteMode, grain: Bool, blend: Bool) {
        color ? withVignette(StageOn.self, vignette, grain, blend) : withVignette(StageOff.self, vignette, grain, blend)
    }

    private func withVignette<C: StageSwitch>(_ c: C.Type, _ vignette: VignetteMode, _ grain: Bool, _ blend: Bool) {
        switch vignette {
        case .off: withGrain(c, VignetteOff.self, grain, blend)
        case .darkens: withGrain(c, VignetteDarkens.self, grain, blend)
        case .brightens: withGrain(c, VignetteBrightens.self, grain, blend)
        }
    }

    private func withGrain<C: StageSwitch, V: VignetteSwitch>(_ c: C.Type, _ v: V.Type, _ grain: Bool, _ blend: Bool) {
        grain ? withBlend(c, v, StageOn.self, blend) : withBlend(c, v, StageOff.self, blend)
    }

    private func withBlend<C: StageSwitch, V: VignetteSwitch, G: StageSwitch>(_ c: C.Type, _ v: V.Type, _ g: G.Type, _ blend: Bool) {
        blend ? pixels(c, v, g, StageOn.self) : pixels(c, v, g, StageOff.self)
    }

    // Never inlined: each combination is a function of its own, whose loop gets the registers
    // to itself (inlined into `renderRows`, LLVM shuffled ten registers a pixel around it).
    @inline(never)
    private func pixels<C: StageSwitch, V: VignetteSwitch, G: StageSwitch, B: StageSwitch>(_: C.Type, _: V.Type, _: G.Type, _: B.Type) {
        let src = filmIn, dst = destination, grain = grain, table = grainTable ?? grain // (not read without grain)
        /// One pixel's colour (8.8 fixed point, from here on one channel per scalar: cheaper
        /// than moving lanes in and out of a vector for table lookups) through the other stages.
        @inline(__always) func finish(_ px: Int, _ vr: Int32, _ vg: Int32, _ vb: Int32) {
            let i = px &* 3
            var or: Int32, og: Int32, ob: Int32
            if V.on {
                // 8.8 × the mask in 1/4096ths to 8 bits, rounded once.
                let m = vignetteTable[Int((columnTerms[px] &+ rowTerm) &>> FilmRenderer.radiusShift)]
                or = (vr &* m &+ (1 << 19)) &>> 20
                og = (vg &* m &+ (1 << 19)) &>> 20
                ob = (vb &* m &+ (1 << 19)) &>> 20
                if V.brightens { (or, og, ob) = (min(or, 255), min(og, 255), min(ob, 255)) }
            } else {
                (or, og, ob) = ((vr &+ 128) &>> 8, (vg &+ 128) &>> 8, (vb &+ 128) &>> 8)
            }
            dst[i] = UInt8(truncatingIfNeeded: or)
            dst[i &+ 1] = UInt8(truncatingIfNeeded: og)
            dst[i &+ 2] = UInt8(truncatingIfNeeded: ob)
        }
        if C.on {
            // Eight pixels' LUT cells in vector lanes, then each pixel on its own. A chunk's
            // source is read before its pixels are written, so `dst` may be `src`.
            var cells = ColorLUTCells()
            var chunk = 0
            while chunk < width {
                let lanes = cells.fill(lut, pixels: src + chunk &* 3, count: width &- chunk)
                @inline(__always) func pixel(_ k: Int) {
                    let (vr, vg, vb) = cells.value(lut, pixel: k)
                    finish(chunk &+ k, vr, vg, vb)
                }
                if lanes == 8 {
                    // Written out, so that each pixel's lane is a constant and there is no
                    // loop (with the channels' lane order, full pipeline 93.7 → 89.4
                    // instructions a pixel).
                    pixel(0); pixel(1); pixel(2); pixel(3); pixel(4); pixel(5); pixel(6); pixel(7)
                } else {
                    for k in 0..<lanes { pixel(k) }
                }
                chunk &+= lanes
            }
        } else if V.on || !G.on {
            for px in 0..<width {
                let i = px &* 3
                finish(px, Int32(src[i]) &<< 8, Int32(src[i &+ 1]) &<< 8, Int32(src[i &+ 2]) &<< 8)
            }
        }
        // The grain reads the levels just written, or the film's own when no stage before it
        // is on; with the blend on, it blends each chunk it has just written (still in L1).
        if G.on {
            let original = B.on ? (original: blendIn, keep: keep, weight: weight) : nil
            if C.on || V.on {
                Self.grain(StageOff.self, levels: UnsafePointer(dst), noise: grain, table: table, indices: grainIndices, into: dst,
                           count: width * 3, blend: original)
            } else {
                Self.grain(StageOn.self, levels: src, noise: grain, table: table, indices: grainIndices, into: dst,
                           count: width * 3, blend: original)
            }
        } else if B.on {
            Self.blend(original: blendIn, into: dst, count: width * 3, keep: keep, weight: weight)
        }
    }

    /// Bytes the grain pass takes at a time: its density-table indices for them fit a
    /// worker's `grainIndices` (1 KB).
    static let grainChunk = 512

    /// The grain, in a pass of its own over the row's bytes, `grainChunk` at a time: a byte's
    /// level and the grain row's byte (its noise) make its index into the density table,
    /// level << 8 | noise, 16 at a time in vector lanes, stored into `indices`; then the table
    /// is read a byte at a time (neither SSE2 nor NEON has a gather), eight bytes gathered in a
    /// register for each store. The indices go through
    /// memory on purpose: read back, each costs one load, where taking lanes out of a register
    /// costs two or three instructions. `levels` may be `out`. With `blend`, each 16 bytes
    /// gathered are blended with the original in registers and stored once: no pass of its
    /// own over the row's bytes (which at 12 MP no longer fit the cache), and no reload.
    /// `AskAhead`: whether the pass asks for `levels` ahead of it (`Prefetch`): on for the
    /// frame's own levels, off when a stage before has just written them (they are in L1).
    /// A switch of the type, not a flag: the prefetch is a call SIL knows nothing of, and a
    /// caller whose callee makes it loses some of its optimisations (in the full pipeline the
    /// LUT loop's group of cells came to be checked for exclusive access, and 3 % slower).
    static func grain<AskAhead: StageSwitch>(_: AskAhead.Type, levels: UnsafePointer<UInt8>, noise: UnsafePointer<UInt8>, table: UnsafePointer<UInt8>,
                      indices: UnsafeMutablePointer<UInt16>, into out: UnsafeMutablePointer<UInt8>, count: Int,
                      blend: (original: UnsafePointer<UInt8>, keep: Int32, weight: Int32)? = nil) {
        @inline(__always) func lanes(_ level: SIMD8<UInt8>, _ noise: SIMD8<UInt8>) -> SIMD8<UInt16> {
            SIMD8<UInt16>(truncatingIfNeeded: level) &<< 8 | SIMD8<UInt16>(truncatingIfNeeded: noise)
        }
        var start = 0
        while start < count {
            let n = min(grainChunk, count &- start)
            let l = levels + start, g = noise + start, o = out + start
            // The levels' lines 2 KB ahead (see `Prefetch`): the frame's own at 12 MP come from
            // memory.
            if AskAhead.on {
                var line = 0
                while line < n {
                    Prefetch.ahead(of: l, line)
                    line &+= 64
                }
            }
            @inline(__always) func sixteenIndices(_ i: Int) {
                let lv = UnsafeRawPointer(l + i).loadUnaligned(as: SIMD16<UInt8>.self)
                let gv = UnsafeRawPointer(g + i).loadUnaligned(as: SIMD16<UInt8>.self)
                let target = UnsafeMutableRawPointer(indices + i)
                target.storeBytes(of: lanes(lv.lowHalf, gv.lowHalf), as: SIMD8<UInt16>.self)
                target.storeBytes(of: lanes(lv.highHalf, gv.highHalf), toByteOffset: 16, as: SIMD8<UInt16>.self)
            }
            var i = sixteens(n, sixteenIndices)
            while i < n {
                indices[i] = UInt16(l[i]) &<< 8 | UInt16(g[i])
                i &+= 1
            }
            // 16 lookups at a time, each eight gathered into a 64-bit word in a register and
            // stored at once: with a store a byte, the stores were what the pass waited on.
            @inline(__always) func eight(_ from: Int) -> UInt64 {
                var v: UInt64 = 0
                for j in 0..<8 { v |= UInt64(table[Int(indices[from &+ j])]) &<< UInt64(8 &* j) }
                return v.littleEndian
            }
            if let blend {
                // The blend on the 16 bytes just gathered, still in registers: one store.
                let mix = BlendWeights(keep: blend.keep, weight: blend.weight), original = blend.original + start
                @inline(__always) func sixteen(_ k: Int) {
                    let look = unsafeBitCast(SIMD2<UInt64>(eight(k), eight(k &+ 8)), to: SIMD16<UInt8>.self)
                    let a = UnsafeRawPointer(original + k).loadUnaligned(as: SIMD16<UInt8>.self)
                    UnsafeMutableRawPointer(o + k).storeBytes(of: mix(a, look), as: SIMD16<UInt8>.self)
                }
                var k = sixteens(n, sixteen)
                while k < n {
                    o[k] = mix(original[k], table[Int(indices[k])])
                    k &+= 1
                }
            } else {
                @inline(__always) func sixteen(_ k: Int) {
                    UnsafeMutableRawPointer(o + k).storeBytes(of: eight(k), as: UInt64.self)
                    UnsafeMutableRawPointer(o + (k &+ 8)).storeBytes(of: eight(k &+ 8), as: UInt64.self)
                }
                var k = sixteens(n, sixteen)
                while k < n {
                    o[k] = table[Int(indices[k])]
                    k &+= 1
                }
            }
            start &+= n
        }
    }

    /// `body(k)` for k = 0, 16, 32 … while k + 16 ≤ `count`, two calls a step (half the loop
    /// branches of the grain pass's loops: grain + blend 27.2 → 26.3 instructions a pixel);
    /// returns the first k it did not do. Pass a local `@inline(__always)` function: a
    /// closure literal here was left out of line.
    @inline(__always)
    static func sixteens(_ count: Int, _ body: (Int) -> Void) -> Int {
        var k = 0
        while k &+ 32 <= count {
            body(k)
            body(k &+ 16)
            k &+= 32
        }
        if k &+ 16 <= count {
            body(k)
            k &+= 16
        }
        return k
    }

    /// The blend without the grain, in a pass of its own over the row's bytes, 16 at a time
    /// (`BlendWeights`). `original` must not be `look`.
    static func blend(original: UnsafePointer<UInt8>, into look: UnsafeMutablePointer<UInt8>, count: Int, keep: Int32, weight: Int32) {
        let mix = BlendWeights(keep: keep, weight: weight)
        var i = 0
        while i &+ 16 <= count {
            let a = UnsafeRawPointer(original + i).loadUnaligned(as: SIMD16<UInt8>.self)
            let b = UnsafeRawPointer(look + i).loadUnaligned(as: SIMD16<UInt8>.self)
            UnsafeMutableRawPointer(look + i).storeBytes(of: mix(a, b), as: SIMD16<UInt8>.self)
            i &+= 16
        }
        while i < count {
            look[i] = mix(original[i], look[i])
            i &+= 1
        }
    }
}

/// The blend's weights, in 1/256ths of the original's (keep) and the look's (weight), keep +
/// weight = 256, so that every sum fits 16 bits: (original × keep + look × weight + 128) / 256.
struct BlendWeights {
    let keep: Int32, weight: Int32
    let keepLanes: SIMD8<UInt16>, weightLanes: SIMD8<UInt16>

    init(keep: Int32, weight: Int32) {
        self.keep = keep
        self.weight = weight
        keepLanes = SIMD8(repeating: UInt16(truncatingIfNeeded: keep))
        weightLanes = SIMD8(repeating: UInt16(truncatingIfNeeded: weight))
    }

    @inline(__always)
    func callAsFunction(_ original: UInt8, _ look: UInt8) -> UInt8 {
        UInt8(truncatingIfNeeded: (Int32(original) &* keep &+ Int32(look) &* weight &+ 128) &>> 8)
    }

    /// 16 bytes, in two 8-lane halves.
    @inline(__always)
    func callAsFunction(_ original: SIMD16<UInt8>, _ look: SIMD16<UInt8>) -> SIMD16<UInt8> {
        @inline(__always) func half(_ a: SIMD8<UInt8>, _ b: SIMD8<UInt8>) -> SIMD8<UInt8> {
            SIMD8<UInt8>(lowBytes: (SIMD8<UInt16>(widening: a) &* keepLanes &+ SIMD8<UInt16>(widening: b) &* weightLanes &+ 128) &>> 8)
        }
        return SIMD16(lowHalf: half(original.lowHalf, look.lowHalf), highHalf: half(original.highHalf, look.highHalf))
    }
}
