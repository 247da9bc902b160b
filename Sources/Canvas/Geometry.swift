import Raster
/// An opaque 8-bit sRGB colour, in the same encoding as `RGBImage` pixels.
public struct Color: Sendable, Hashable {
    public var r: UInt8
    public var g: UInt8
    public var b: UInt8

    public init(r: UInt8, g: UInt8, b: UInt8) {
        self.r = r
        self.g = g
        self.b = b
    }

    /// A neutral grey, 0 black … 255 white.
    public init(gray: UInt8) {
        self.init(r: gray, g: gray, b: gray)
    }

    public init(_ pixel: SIMD3<UInt8>) {
        self.init(r: pixel.x, g: pixel.y, b: pixel.z)
    }

    public var simd: SIMD3<UInt8> { SIMD3(r, g, b) }

    public static let black = Color(gray: 0)
    public static let white = Color(gray: 255)
    public static let gray = Color(gray: 128)
    public static let darkGray = Color(gray: 48)
    public static let lightGray = Color(gray: 200)
    public static let red = Color(r: 230, g: 40, b: 40)
    public static let green = Color(r: 60, g: 200, b: 80)
    public static let blue = Color(r: 50, g: 110, b: 230)
    public static let yellow = Color(r: 250, g: 210, b: 40)
    public static let orange = Color(r: 250, g: 140, b: 30)
}

/// A point in pixel coordinates: x to the right, y down, (0, 0) the top-left pixel.
public struct Point: Sendable, Hashable {
    public var x: Int
    public var y: Int

    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }

    public static let zero = Point(x: 0, y: 0)
}

/// An integer pixel rectangle: the pixels `x ..< x + width` × `y ..< y + height`.
///
/// A rectangle with a zero or negative size is empty. Coordinates may lie anywhere,
/// including outside the image: drawing clips.
public struct Rect: Sendable, Hashable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public init(origin: Point, width: Int, height: Int) {
        self.init(x: origin.x, y: origin.y, width: width, height: height)
    }

    public var origin: Point { Point(x: x, y: y) }
    public var isEmpty: Bool { width <= 0 || height <= 0 }
    /// One past the last column (saturating, never overflows).
    public var maxX: Int { saturatingAdd(x, width) }
    /// One past the last row (saturating, never overflows).
    public var maxY: Int { saturatingAdd(y, height) }
    public var midX: Int { saturatingAdd(x, width / 2) }
    public var midY: Int { saturatingAdd(y, height / 2) }

    public func contains(_ p: Point) -> Bool {
        p.x >= x && p.x < maxX && p.y >= y && p.y < maxY
    }

    /// The overlap of two rectangles, or nil if they do not overlap.
    public func intersection(_ other: Rect) -> Rect? {
        let x0 = Swift.max(x, other.x), y0 = Swift.max(y, other.y)
        let x1 = Swift.min(maxX, other.maxX), y1 = Swift.min(maxY, other.maxY)
        guard x1 > x0, y1 > y0 else { return nil }
        let (w, wo) = x1.subtractingReportingOverflow(x0)
        let (h, ho) = y1.subtractingReportingOverflow(y0)
        return Rect(x: x0, y: y0, width: wo ? Int.max : w, height: ho ? Int.max : h)
    }

    /// Shrinks (positive) or grows (negative) the rectangle on every side.
    public func insetBy(dx: Int, dy: Int) -> Rect {
        Rect(x: saturatingAdd(x, dx), y: saturatingAdd(y, dy),
             width: saturatingAdd(width, -saturatingMultiply(2, dx)),
             height: saturatingAdd(height, -saturatingMultiply(2, dy)))
    }

    /// The largest rectangle with the aspect ratio `width : height` that fits inside this one,
    /// centred (letterboxing a thumbnail into its grid cell).
    public func aspectFit(width w: Int, height h: Int) -> Rect {
        guard w > 0, h > 0, !isEmpty else { return Rect(x: x, y: y, width: 0, height: 0) }
        var fw = width
        var fh = roundToInt(Double(width) * Double(h) / Double(w))
        if fh > height {
            fh = height
            fw = roundToInt(Double(height) * Double(w) / Double(h))
        }
        fw = Swift.max(1, Swift.min(fw, width))
        fh = Swift.max(1, Swift.min(fh, height))
        return Rect(x: x + (width - fw) / 2, y: y + (height - fh) / 2, width: fw, height: fh)
    }
}

@inline(__always)
func saturatingAdd(_ a: Int, _ b: Int) -> Int {
    let (sum, overflow) = a.addingReportingOverflow(b)
    if overflow { return b > 0 ? Int.max : Int.min }
    return sum
}

@inline(__always)
func saturatingMultiply(_ a: Int, _ b: Int) -> Int {
    let (product, overflow) = a.multipliedReportingOverflow(by: b)
    if overflow { return (a < 0) == (b < 0) ? Int.max : Int.min }
    return product
}

// Rounding and square roots without libm: the module imports nothing from C (not even Glibc),
// and debug builds would otherwise call `round`/`sqrt` from a library nobody links.

/// `x` rounded half away from zero; `x` must be finite and well inside the range of `Int`.
@inline(__always)
func roundToInt(_ x: Double) -> Int {
    x >= 0 ? Int(x + 0.5) : -Int(-x + 0.5)
}

/// √x for finite x ≥ 0 by Newton's method (ample precision for pixel geometry).
func squareRoot(_ x: Double) -> Double {
    guard x > 0 else { return 0 }
    var r = x > 1 ? x / 2 : 1
    for _ in 0 ..< 64 {
        let next = (r + x / r) / 2
        if next >= r { break }
        r = next
    }
    return r
}
