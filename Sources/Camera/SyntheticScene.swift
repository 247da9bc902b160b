import Foundation

/// sRGB transfer tables shared by the simulated camera's renderers.
enum SRGBTables {
    /// Linear light 0…1 in 4096 steps → sRGB byte.
    static let encode: [UInt8] = (0..<4096).map { i in
        let v = Double(i) / 4095
        let s = v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055
        return UInt8((s * 255).rounded())
    }

    /// sRGB byte → linear light 0…1.
    static let decode: [Float] = (0..<256).map { i in
        let s = Double(i) / 255
        return Float(s <= 0.04045 ? s / 12.92 : pow((s + 0.055) / 1.055, 2.4))
    }
}

/// Where each pixel of an image of a given size samples the scene, precomputed once per size
/// (at `start()` for the preview) so that rendering a frame allocates nothing.
///
/// Scene coordinates: u to the right, v down, (0, 0) on the optical axis; the widest (13 mm)
/// lens sees u ∈ −1…1. A lens of `f` mm-equivalent sees u ∈ ±13/f, and v over the same scale
/// by the image's aspect ratio.
struct SamplingGrid: Sendable {
    let width: Int
    let height: Int
    /// u of pixel x's centre is `u0 + (x + 0.5) * du`; likewise v.
    let u0: Float
    let du: Float
    let v0: Float
    let dv: Float
    /// Texture tile column for each x, and tile row × tile width for each y.
    let columnTexture: [Int32]
    let rowTexture: [Int32]

    init(width: Int, height: Int, halfWidth: Double) {
        self.width = width
        self.height = height
        let halfHeight = halfWidth * Double(height) / Double(width)
        u0 = Float(-halfWidth)
        du = Float(2 * halfWidth / Double(width))
        v0 = Float(-halfHeight)
        dv = Float(2 * halfHeight / Double(height))
        let u0 = self.u0, du = self.du, v0 = self.v0, dv = self.dv
        let mask = SyntheticScene.textureSize - 1
        columnTexture = (0..<width).map { x in
            let u = u0 + (Float(x) + 0.5) * du
            return Int32(Int((u + 64) * SyntheticScene.textureFrequency) & mask)
        }
        rowTexture = (0..<height).map { y in
            let v = v0 + (Float(y) + 0.5) * dv
            return Int32((Int((v + 64) * SyntheticScene.textureFrequency) & mask) * SyntheticScene.textureSize)
        }
    }

    /// The scene point under a normalised image point (0…1, origin top left).
    func scenePoint(_ p: SIMD2<Double>) -> (u: Double, v: Double) {
        let x = min(max(p.x, 0), 1), y = min(max(p.y, 0), 1)
        return (Double(u0) + x * Double(du) * Double(width), Double(v0) + y * Double(dv) * Double(height))
    }
}

/// The simulated camera's synthetic world: a sky gradient with a sun and a drifting cloud over
/// textured ground, a bouncing red ball, a drifting blue box and, on the optical axis, a
/// checkerboard with a magenta dot circling it (so even the tele lens sees motion and detail).
/// Radiance is linear light; 1 is diffuse white at the reference light level.
struct SyntheticScene: Sendable {
    static let textureSize = 64
    /// Texture cells per scene unit.
    static let textureFrequency: Float = 160
    static let horizon: Float = 0.1

    /// A noise tile, −1…1, shared by every render.
    static let texture: [Float] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (0..<(textureSize * textureSize)).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Float(state >> 40) / Float(1 << 23) - 1
        }
    }()

    struct Disc: Sendable {
        var u: Float, v: Float, r: Float
        var red: Float, green: Float, blue: Float
        var depth: Double
    }

    var sun = Disc(u: 0.62, v: -0.42, r: 0.07, red: 6, green: 5.2, blue: 3.8, depth: 0)
    var ball = Disc(u: -0.5, v: 0.35, r: 0.11, red: 0.70, green: 0.06, blue: 0.05, depth: 2.5)
    var dot = Disc(u: 0.1, v: 0.05, r: 0.025, red: 0.60, green: 0.05, blue: 0.50, depth: 0.75)
    /// The blue box: centre and half sizes.
    var boxU: Float = 0.45, boxV: Float = 0.32
    let boxHalfU: Float = 0.14, boxHalfV: Float = 0.12
    static let boxColor: (Float, Float, Float) = (0.05, 0.15, 0.55)
    static let boxDepth = 1.25
    /// The checkerboard on the axis: centre, half size, cell size.
    let checkerU: Float = 0, checkerV: Float = 0.05, checkerHalf: Float = 0.07, checkerCell: Float = 0.0175
    static let checkerDepth = 0.8
    /// The cloud: centre and radii.
    var cloudU: Float = -0.3, cloudV: Float = -0.5
    let cloudRU: Float = 0.28, cloudRV: Float = 0.09

    /// Moves everything to where it is `t` seconds after the camera started.
    mutating func update(time t: Double) {
        let twoPi = 2 * Double.pi
        sun.u = Float(0.62 + 0.02 * sin(twoPi * t / 60))
        sun.v = Float(-0.42 - 0.01 * sin(twoPi * t / 45))
        ball.u = Float(-0.5 + 0.3 * sin(twoPi * t / 4))
        ball.v = Float(0.35 - 0.18 * abs(sin(twoPi * t / 1.5)))
        boxU = Float(0.45 + 0.1 * sin(twoPi * t / 7))
        dot.u = Float(0.1 * cos(twoPi * t / 3))
        dot.v = Float(0.05 + 0.1 * sin(twoPi * t / 3))
        // The cloud crosses the sky in 40 s and wraps around.
        let phase = (t / 40 + 0.4).truncatingRemainder(dividingBy: 1)
        cloudU = Float(-1.4 + 2.8 * phase)
    }

    /// Focus distance in dioptres (0 = infinity) of what is at scene point (u, v).
    func depth(u: Double, v: Double) -> Double {
        func inside(_ d: Disc) -> Bool {
            let du = u - Double(d.u), dv = v - Double(d.v)
            return du * du + dv * dv <= Double(d.r * d.r)
        }
        if inside(dot) { return dot.depth }
        if abs(u - Double(checkerU)) <= Double(checkerHalf) && abs(v - Double(checkerV)) <= Double(checkerHalf) {
            return Self.checkerDepth
        }
        if inside(ball) { return ball.depth }
        if abs(u - Double(boxU)) <= Double(boxHalfU) && abs(v - Double(boxV)) <= Double(boxHalfV) { return Self.boxDepth }
        if inside(sun) { return sun.depth }
        let h = Double(Self.horizon)
        // Ground: nearer towards the bottom (4 dioptres = 25 cm at the bottom of the widest view).
        return v > h ? (v - h) * 5 : 0
    }

    /// Renders the scene, multiplied by `gain` (linear), into `out` (RGB, grid.width × grid.height).
    func render(into out: UnsafeMutableBufferPointer<UInt8>, grid: SamplingGrid, gain: Float) {
        SRGBTables.encode.withUnsafeBufferPointer { enc in
            Self.texture.withUnsafeBufferPointer { tex in
                grid.columnTexture.withUnsafeBufferPointer { colTex in
                    grid.rowTexture.withUnsafeBufferPointer { rowTex in
                        renderRows(out: out, enc: enc, tex: tex, colTex: colTex, rowTex: rowTex, grid: grid, gain: gain)
                    }
                }
            }
        }
    }

    @inline(__always)
    private static func encode(_ v: Float, _ enc: UnsafeBufferPointer<UInt8>) -> UInt8 {
        let c = v < 0 ? 0 : (v > 1 ? 1 : v)
        return enc[Int(c * 4095 + 0.5)]
    }

    /// The pixel columns whose centres lie in u ∈ lo…hi, clamped to the image.
    @inline(__always)
    private static func span(_ lo: Float, _ hi: Float, _ grid: SamplingGrid) -> Range<Int> {
        let a = Int(((lo - grid.u0) / grid.du - 0.5).rounded(.up))
        let b = Int(((hi - grid.u0) / grid.du - 0.5).rounded(.down))
        let s = max(a, 0), e = min(b, grid.width - 1)
        return s <= e ? s..<(e + 1) : 0..<0
    }

    private func renderRows(out: UnsafeMutableBufferPointer<UInt8>, enc: UnsafeBufferPointer<UInt8>,
                            tex: UnsafeBufferPointer<Float>, colTex: UnsafeBufferPointer<Int32>,
                            rowTex: UnsafeBufferPointer<Int32>, grid: SamplingGrid, gain: Float) {
        let width = grid.width
        let skyTop: Float = -0.8
        for y in 0..<grid.height {
            let v = grid.v0 + (Float(y) + 0.5) * grid.dv
            let texRow = Int(rowTex[y])
            let row = y * width * 3
            // Background colour of this row.
            var r: Float, g: Float, b: Float, amp: Float
            if v < Self.horizon {
                let t = min(max((v - skyTop) / (Self.horizon - skyTop), 0), 1)
                r = 0.10 + (0.55 - 0.10) * t
                g = 0.22 + (0.70 - 0.22) * t
                b = 0.60 + (0.90 - 0.60) * t
                amp = 0.04
            } else {
                let t = min((v - Self.horizon) / 0.7, 1)
                r = 0.12 + (0.22 - 0.12) * t
                g = 0.22 + (0.15 - 0.22) * t
                b = 0.06 + (0.07 - 0.06) * t
                amp = 0.25
            }
            r *= gain; g *= gain; b *= gain
            for x in 0..<width {
                let n = 1 + amp * tex[texRow + Int(colTex[x])]
                let i = row + x * 3
                out[i] = Self.encode(r * n, enc)
                out[i + 1] = Self.encode(g * n, enc)
                out[i + 2] = Self.encode(b * n, enc)
            }
            // The cloud, soft-edged, blended over the sky.
            let cdv = (v - cloudV) / cloudRV
            if cdv * cdv < 1 {
                let half = cloudRU * (1 - cdv * cdv).squareRoot()
                for x in Self.span(cloudU - half, cloudU + half, grid) {
                    let u = grid.u0 + (Float(x) + 0.5) * grid.du
                    let cdu = (u - cloudU) / cloudRU
                    let alpha = 0.85 * (1 - cdu * cdu - cdv * cdv)
                    let n = 1 + 0.04 * tex[texRow + Int(colTex[x])]
                    let i = row + x * 3
                    let keep = 1 - alpha
                    let cr = (r * keep + 0.92 * gain * alpha) * n
                    let cg = (g * keep + 0.92 * gain * alpha) * n
                    let cb = (b * keep + 0.95 * gain * alpha) * n
                    out[i] = Self.encode(cr, enc)
                    out[i + 1] = Self.encode(cg, enc)
                    out[i + 2] = Self.encode(cb, enc)
                }
            }
            fill(sun, v: v, row: row, grid: grid, gain: gain, amp: 0, out: out, enc: enc, tex: tex, texRow: texRow, colTex: colTex)
            if abs(v - boxV) <= boxHalfV {
                let (br, bg, bb) = Self.boxColor
                fillSpan(Self.span(boxU - boxHalfU, boxU + boxHalfU, grid), red: br * gain, green: bg * gain, blue: bb * gain,
                         amp: 0.08, row: row, out: out, enc: enc, tex: tex, texRow: texRow, colTex: colTex)
            }
            fill(ball, v: v, row: row, grid: grid, gain: gain, amp: 0.05, out: out, enc: enc, tex: tex, texRow: texRow, colTex: colTex)
            if abs(v - checkerV) <= checkerHalf {
                let cellRow = Int(((v - checkerV + checkerHalf) / checkerCell).rounded(.down))
                for x in Self.span(checkerU - checkerHalf, checkerU + checkerHalf, grid) {
                    let u = grid.u0 + (Float(x) + 0.5) * grid.du
                    let cellColumn = Int(((u - checkerU + checkerHalf) / checkerCell).rounded(.down))
                    let level: Float = (cellRow + cellColumn) & 1 == 0 ? 0.8 * gain : 0.04 * gain
                    let e = Self.encode(level, enc)
                    let i = row + x * 3
                    out[i] = e
                    out[i + 1] = e
                    out[i + 2] = e
                }
            }
            fill(dot, v: v, row: row, grid: grid, gain: gain, amp: 0.05, out: out, enc: enc, tex: tex, texRow: texRow, colTex: colTex)
        }
    }

    private func fill(_ d: Disc, v: Float, row: Int, grid: SamplingGrid, gain: Float, amp: Float,
                      out: UnsafeMutableBufferPointer<UInt8>, enc: UnsafeBufferPointer<UInt8>,
                      tex: UnsafeBufferPointer<Float>, texRow: Int, colTex: UnsafeBufferPointer<Int32>) {
        let dv = v - d.v
        let rr = d.r * d.r - dv * dv
        guard rr > 0 else { return }
        let half = rr.squareRoot()
        fillSpan(Self.span(d.u - half, d.u + half, grid), red: d.red * gain, green: d.green * gain, blue: d.blue * gain,
                 amp: amp, row: row, out: out, enc: enc, tex: tex, texRow: texRow, colTex: colTex)
    }

    private func fillSpan(_ span: Range<Int>, red: Float, green: Float, blue: Float, amp: Float, row: Int,
                          out: UnsafeMutableBufferPointer<UInt8>, enc: UnsafeBufferPointer<UInt8>,
                          tex: UnsafeBufferPointer<Float>, texRow: Int, colTex: UnsafeBufferPointer<Int32>) {
        for x in span {
            let n = 1 + amp * tex[texRow + Int(colTex[x])]
            let i = row + x * 3
            out[i] = Self.encode(red * n, enc)
            out[i + 1] = Self.encode(green * n, enc)
            out[i + 2] = Self.encode(blue * n, enc)
        }
    }
}
