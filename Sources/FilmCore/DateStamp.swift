import Foundation

/// The point-and-shoot date imprint: seven-segment digits that LEDs behind the film exposed
/// into it, in the lower right of the frame. It is light, not paint: the digits are added to
/// the scene's linear light before the film's colour stages (so the look's curves shape them
/// like any highlight), orange-red, with soft edges and a red glow around them — the touch of
/// halation the LEDs' light gets in the base.
///
/// Sizes are fractions of the frame, so preview and photo show the same imprint.
public struct DateStamp: Sendable, Equatable {
    /// What is imprinted, e.g. "'98 11 30": digits, spaces and ' - . : /.
    public let text: String

    /// The characters a seven-segment imprint can show.
    public static let characters: Set<Character> = Set("0123456789 '-.:/")

    /// nil when `text` holds a character the imprint cannot show.
    public init?(_ text: String) {
        guard text.allSatisfy({ Self.characters.contains($0) }) else { return nil }
        self.text = text
    }

    /// The digits' height as a fraction of the frame's height.
    public static let heightFraction = 0.034
    /// The LED's light (linear, per channel) at full coverage: overexposed red, so the core
    /// comes out orange and the edges red.
    public static let color = SIMD3<Double>(1.8, 0.3, 0.05)
    /// The glow's share of the light and its colour (redder than the digits).
    public static let glow = SIMD3<Double>(0.45, 0.05, 0.005)

    /// Where the imprint's characters sit in a frame.
    public struct Layout: Sendable {
        /// The digits' height in pixels.
        public let height: Double
        /// The blank border around the digits in the light's rectangle (room for the glow).
        public let pad: Int
        /// The rectangle's top left corner in the frame and its size.
        public let x: Int, y: Int, width: Int, rectHeight: Int
        /// Each character with its pen position (from the rectangle's left).
        public let pens: [(Character, Double)]
        static let slant = 0.12

        /// A point of character `index`'s glyph space (x 0…1 across the cell, y 0 at the top …
        /// 1 at the bottom) in the rectangle's pixels, slanted like the classic data backs.
        public func place(_ p: SIMD2<Double>, _ index: Int) -> SIMD2<Double> {
            SIMD2(pens[index].1 + p.x * 0.62 * height + (1 - p.y) * Self.slant * height, Double(pad) + p.y * height)
        }
    }

    public func layout(frameWidth: Int, frameHeight: Int) -> Layout {
        let h = max(6, Double(frameHeight) * Self.heightFraction)
        let cell = 0.62 * h, gap = 0.2 * h
        let advances = text.map { Self.advance($0) * cell + gap }
        let textWidth = max(1, advances.reduce(0, +) - gap)
        // About one digit up from the bottom edge and two in from the right.
        let bottom = 1.1 * h, right = 2 * h
        let pad = Int((0.5 * h).rounded(.up))
        var pens: [(Character, Double)] = []
        var pen = Double(pad)
        for (ch, advance) in zip(text, advances) {
            pens.append((ch, pen))
            pen += advance
        }
        return Layout(height: h, pad: pad,
                      x: Int((Double(frameWidth) - right - textWidth).rounded()) - pad,
                      y: Int((Double(frameHeight) - bottom - h).rounded()) - pad,
                      width: Int(textWidth.rounded(.up)) + 2 * pad, rectHeight: Int(h.rounded(.up)) + 2 * pad, pens: pens)
    }

    /// The imprint's light for a width × height frame: a rectangle in the frame and the linear
    /// light to add to each of its pixels.
    public func light(frameWidth: Int, frameHeight: Int) -> StampLight {
        let layout = layout(frameWidth: frameWidth, frameHeight: frameHeight)
        let h = layout.height, width = layout.width, height = layout.rectHeight
        // Coverage of the segments, soft-edged.
        let thickness = 0.13 * h, softness = max(0.6, 0.05 * h)
        var segments: [(SIMD2<Double>, SIMD2<Double>)] = []
        for (index, (ch, _)) in layout.pens.enumerated() {
            for (a, b) in Self.strokes(ch) { segments.append((layout.place(a, index), layout.place(b, index))) }
        }
        var coverage = [Double](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let p = SIMD2<Double>(Double(x) + 0.5, Double(y) + 0.5)
                var d = Double.infinity
                for (a, b) in segments { d = min(d, Self.distance(p, a, b)) }
                coverage[y * width + x] = min(1, max(0, (thickness / 2 - d) / softness + 0.5))
            }
        }
        let glow = Self.blurred(coverage, width: width, height: height, radius: max(1, Int((0.12 * h).rounded())))
        var pixels = [SIMD3<Float>](repeating: .zero, count: width * height)
        for i in pixels.indices {
            let l = Self.color * coverage[i] + Self.glow * glow[i]
            pixels[i] = SIMD3(Float(l.x), Float(l.y), Float(l.z))
        }
        return StampLight(x: layout.x, y: layout.y, width: width, height: height, pixels: pixels)
    }

    /// A character's width in cells.
    static func advance(_ ch: Character) -> Double {
        switch ch {
        case "'", ".", ":": return 0.35
        case " ": return 0.6
        default: return 1
        }
    }

    /// A character's strokes in glyph space (x 0…1, y 0…1 downwards).
    static func strokes(_ ch: Character) -> [(SIMD2<Double>, SIMD2<Double>)] {
        let segs: [Character: String] = [
            "0": "abcdef", "1": "bc", "2": "abged", "3": "abgcd", "4": "fgbc", "5": "afgcd", "6": "afgedc",
            "7": "abc", "8": "abcdefg", "9": "abcdfg", "-": "g",
        ]
        let inset = 0.1
        let l = inset, r = 1 - inset, t = 0.0, m = 0.5, b = 1.0
        func s(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) -> (SIMD2<Double>, SIMD2<Double>) { (SIMD2(x0, y0), SIMD2(x1, y1)) }
        switch ch {
        case "'": return [s(0.5, 0, 0.35, 0.28)]
        case ".": return [s(0.5, 0.97, 0.5, 0.97)]
        case ":": return [s(0.5, 0.3, 0.5, 0.3), s(0.5, 0.75, 0.5, 0.75)]
        case "/": return [s(0.9, 0.02, 0.1, 0.98)]
        default: break
        }
        guard let on = segs[ch] else { return [] }
        let g = 0.09   // segments stop short of each other, as on a display
        var out: [(SIMD2<Double>, SIMD2<Double>)] = []
        for seg in on {
            switch seg {
            case "a": out.append(s(l + g, t, r - g, t))
            case "b": out.append(s(r, t + g, r, m - g))
            case "c": out.append(s(r, m + g, r, b - g))
            case "d": out.append(s(l + g, b, r - g, b))
            case "e": out.append(s(l, m + g, l, b - g))
            case "f": out.append(s(l, t + g, l, m - g))
            case "g": out.append(s(l + g, m, r - g, m))
            default: break
            }
        }
        return out
    }

    /// Distance from p to the segment a–b.
    static func distance(_ p: SIMD2<Double>, _ a: SIMD2<Double>, _ b: SIMD2<Double>) -> Double {
        let ab = b - a, ap = p - a
        let len2 = (ab * ab).sum()
        let t = len2 > 0 ? min(1, max(0, (ap * ab).sum() / len2)) : 0
        let d = ap - t * ab
        return (d * d).sum().squareRoot()
    }

    /// Three box blurs of `radius` (a near-Gaussian glow), normalised to keep the total.
    static func blurred(_ values: [Double], width: Int, height: Int, radius: Int) -> [Double] {
        var a = values, b = values
        let norm = 1 / Double(2 * radius + 1)
        for _ in 0..<3 {
            for y in 0..<height {
                for x in 0..<width {
                    var s = 0.0
                    for dx in -radius...radius where x + dx >= 0 && x + dx < width { s += a[y * width + x + dx] }
                    b[y * width + x] = s * norm
                }
            }
            for y in 0..<height {
                for x in 0..<width {
                    var s = 0.0
                    for dy in -radius...radius where y + dy >= 0 && y + dy < height { s += b[(y + dy) * width + x] }
                    a[y * width + x] = s * norm
                }
            }
        }
        return a
    }
}

/// Light to add to a rectangle of a frame (linear, per pixel, row by row).
public struct StampLight: Sendable, Equatable {
    public let x: Int
    public let y: Int
    public let width: Int
    public let height: Int
    public let pixels: [SIMD3<Float>]

    /// The light at frame pixel (x, y) (zero outside the rectangle).
    public func at(_ fx: Int, _ fy: Int) -> SIMD3<Double> {
        let lx = fx - x, ly = fy - y
        guard lx >= 0, ly >= 0, lx < width, ly < height else { return .zero }
        let p = pixels[ly * width + lx]
        return SIMD3(Double(p.x), Double(p.y), Double(p.z))
    }
}
