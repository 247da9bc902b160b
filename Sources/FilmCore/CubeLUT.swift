/// A 3D colour lookup table in the `.cube` format that Resolve and Adobe write:
/// `LUT_3D_SIZE N`, optional `TITLE`, `DOMAIN_MIN`/`DOMAIN_MAX` (or Resolve's
/// `LUT_3D_INPUT_RANGE`), then N³ lines of "r g b" with red changing fastest.
public struct CubeLUT: Sendable, Equatable {
    public var title: String?
    public let size: Int
    public var domainMin: SIMD3<Float>
    public var domainMax: SIMD3<Float>
    /// `size³` output colours, red index fastest, then green, then blue.
    public let table: [SIMD3<Float>]

    public init(title: String? = nil, size: Int, domainMin: SIMD3<Float> = .zero,
                domainMax: SIMD3<Float> = .one, table: [SIMD3<Float>]) {
        precondition(size >= 2 && table.count == size * size * size, "a \(size)³ cube needs \(size * size * size) entries")
        self.title = title
        self.size = size
        self.domainMin = domainMin
        self.domainMax = domainMax
        self.table = table
    }

    /// Why a `.cube` text was rejected, with the 1-based line it was found on (0: the file as a whole).
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let line: Int
        public let message: String
        public var description: String { line > 0 ? "line \(line): \(message)" : message }
    }

    /// The largest LUT accepted (256³ entries is already 200 MB of text).
    public static let maximumSize = 256

    /// Parses `.cube` text; every problem names its line.
    public init(parsing text: String) throws(ParseError) {
        var size: Int?
        var title: String?
        var domainMin = SIMD3<Float>.zero, domainMax = SIMD3<Float>.one
        var table: [SIMD3<Float>] = []
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = Substring(rawLine)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard let keyword = words.first else { continue }
            func numbers(_ count: Int) throws(ParseError) -> [Float] {
                let values = words.dropFirst().map { Float(String($0)) }
                guard values.count == count, values.allSatisfy({ $0 != nil && $0!.isFinite }) else {
                    throw ParseError(line: lineNumber, message: "\(keyword) needs \(count) numbers")
                }
                return values.map { $0! }
            }
            switch keyword {
            case "TITLE":
                title = line.drop(while: { $0 != "\"" }).dropFirst().prefix(while: { $0 != "\"" }).description
            case "LUT_3D_SIZE":
                guard size == nil else { throw ParseError(line: lineNumber, message: "LUT_3D_SIZE given twice") }
                guard words.count == 2, let n = Int(words[1]), n >= 2, n <= Self.maximumSize else {
                    throw ParseError(line: lineNumber, message: "LUT_3D_SIZE must be a whole number from 2 to \(Self.maximumSize)")
                }
                size = n
                table.reserveCapacity(n * n * n)
            case "LUT_1D_SIZE":
                throw ParseError(line: lineNumber, message: "1D LUTs are not supported; a 3D LUT (LUT_3D_SIZE) is needed")
            case "DOMAIN_MIN":
                let v = try numbers(3)
                domainMin = SIMD3(v[0], v[1], v[2])
            case "DOMAIN_MAX":
                let v = try numbers(3)
                domainMax = SIMD3(v[0], v[1], v[2])
            case "LUT_3D_INPUT_RANGE":
                let v = try numbers(2)
                domainMin = SIMD3(repeating: v[0])
                domainMax = SIMD3(repeating: v[1])
            default:
                guard let first = keyword.first, first.isNumber || first == "-" || first == "." || first == "+" else {
                    throw ParseError(line: lineNumber, message: "unknown keyword \"\(keyword)\"")
                }
                guard let n = size else {
                    throw ParseError(line: lineNumber, message: "table data before LUT_3D_SIZE")
                }
                guard words.count == 3, let r = Float(String(words[0])), let g = Float(String(words[1])),
                      let b = Float(String(words[2])), r.isFinite, g.isFinite, b.isFinite else {
                    throw ParseError(line: lineNumber, message: "a table line needs three numbers (r g b)")
                }
                guard table.count < n * n * n else {
                    throw ParseError(line: lineNumber, message: "more than \(n * n * n) table entries for LUT_3D_SIZE \(n)")
                }
                table.append(SIMD3(r, g, b))
            }
        }
        guard let n = size else { throw ParseError(line: 0, message: "no LUT_3D_SIZE line") }
        guard table.count == n * n * n else {
            throw ParseError(line: lineNumber, message: "\(table.count) table entries, LUT_3D_SIZE \(n) needs \(n * n * n)")
        }
        guard all(domainMax .> domainMin) else {
            throw ParseError(line: 0, message: "DOMAIN_MAX must be above DOMAIN_MIN in every channel")
        }
        self.init(title: title, size: n, domainMin: domainMin, domainMax: domainMax, table: table)
    }

    /// The `.cube` text of this LUT.
    public var text: String {
        var out = ""
        out.reserveCapacity(table.count * 28 + 100)
        if let title { out += "TITLE \"\(title)\"\n" }
        out += "LUT_3D_SIZE \(size)\n"
        if domainMin != .zero || domainMax != .one {
            out += "DOMAIN_MIN \(domainMin.x) \(domainMin.y) \(domainMin.z)\n"
            out += "DOMAIN_MAX \(domainMax.x) \(domainMax.y) \(domainMax.z)\n"
        }
        for c in table { out += "\(Self.format(c.x)) \(Self.format(c.y)) \(Self.format(c.z))\n" }
        return out
    }

    private static func format(_ v: Float) -> String {
        // Six decimals, without Foundation's String(format:).
        let scaled = Int((Double(v) * 1_000_000).rounded())
        let sign = scaled < 0 ? "-" : ""
        let a = abs(scaled)
        let frac = String(a % 1_000_000)
        return "\(sign)\(a / 1_000_000).\(String(repeating: "0", count: 6 - frac.count))\(frac)"
    }

    /// Looks up `c` (in the LUT's domain) with tetrahedral interpolation.
    public func apply(_ c: SIMD3<Double>) -> SIMD3<Double> {
        let lo = SIMD3<Double>(domainMin), hi = SIMD3<Double>(domainMax)
        let n = Double(size - 1)
        var p = (c - lo) / (hi - lo) * n
        p.clamp(lowerBound: .zero, upperBound: SIMD3(repeating: n))
        let i0 = SIMD3<Int>(min(Int(p.x), size - 2), min(Int(p.y), size - 2), min(Int(p.z), size - 2))
        let f = p - SIMD3<Double>(Double(i0.x), Double(i0.y), Double(i0.z))
        func at(_ dx: Int, _ dy: Int, _ dz: Int) -> SIMD3<Double> {
            SIMD3<Double>(table[(i0.x + dx) + (i0.y + dy) * size + (i0.z + dz) * size * size])
        }
        return Tetrahedral.interpolate(fraction: f, at)
    }
}

/// Tetrahedral interpolation inside one lattice cube: the cube is split into six tetrahedra
/// along its main diagonal; the fractional position picks one, and the result is a weighted
/// sum of its four corners. Exact on the lattice, continuous across cells.
enum Tetrahedral {
    /// Barycentric weights of c000, A, B and c111 for fractions sorted f1 ≥ f2 ≥ f3.
    @inline(__always)
    static func blend(_ c000: SIMD3<Double>, _ a: SIMD3<Double>, _ b: SIMD3<Double>, _ c111: SIMD3<Double>,
                      _ f1: Double, _ f2: Double, _ f3: Double) -> SIMD3<Double> {
        // Written as separate steps: one long SIMD expression takes Swift 6.0's type checker minutes.
        var out: SIMD3<Double> = c000 * (1 - f1)
        out += a * (f1 - f2)
        out += b * (f2 - f3)
        out += c111 * f3
        return out
    }

    @inline(__always)
    static func interpolate(fraction f: SIMD3<Double>, _ corner: (Int, Int, Int) -> SIMD3<Double>) -> SIMD3<Double> {
        let c000 = corner(0, 0, 0), c111 = corner(1, 1, 1)
        if f.x >= f.y {
            if f.y >= f.z {
                return blend(c000, corner(1, 0, 0), corner(1, 1, 0), c111, f.x, f.y, f.z)
            } else if f.x >= f.z {
                return blend(c000, corner(1, 0, 0), corner(1, 0, 1), c111, f.x, f.z, f.y)
            } else {
                return blend(c000, corner(0, 0, 1), corner(1, 0, 1), c111, f.z, f.x, f.y)
            }
        } else {
            if f.z >= f.y {
                return blend(c000, corner(0, 0, 1), corner(0, 1, 1), c111, f.z, f.y, f.x)
            } else if f.z >= f.x {
                return blend(c000, corner(0, 1, 0), corner(0, 1, 1), c111, f.y, f.z, f.x)
            } else {
                return blend(c000, corner(0, 1, 0), corner(1, 1, 0), c111, f.y, f.x, f.z)
            }
        }
    }
}
