import Foundation

/// A plain radix-2 complex FFT over square grids whose side is a power of two, in `Double`.
/// Used where grain and halation data are compiled (never per frame) and by the tests that
/// measure spectra; clarity over speed.
struct FFT2D {
    let size: Int
    private let log2Size: Int
    private let cosines: [Double]
    private let sines: [Double]
    private let reversed: [Int]

    init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        log2Size = size.trailingZeroBitCount
        cosines = (0..<size / 2).map { Foundation.cos(2 * Double.pi * Double($0) / Double(size)) }
        sines = (0..<size / 2).map { Foundation.sin(2 * Double.pi * Double($0) / Double(size)) }
        let bits = size.trailingZeroBitCount
        reversed = (0..<size).map { i in
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            return r
        }
    }

    /// Transforms `re`/`im` (row-major, size × size) in place. Forward: Σ x·e^(−2πi k·n/N);
    /// inverse: the same with +, unscaled (divide by N² to invert a forward transform).
    func transform(_ re: inout [Double], _ im: inout [Double], inverse: Bool = false) {
        precondition(re.count == size * size && im.count == size * size)
        var rowRe = [Double](repeating: 0, count: size), rowIm = rowRe
        for y in 0..<size {
            for x in 0..<size { rowRe[x] = re[y * size + x]; rowIm[x] = im[y * size + x] }
            line(&rowRe, &rowIm, inverse: inverse)
            for x in 0..<size { re[y * size + x] = rowRe[x]; im[y * size + x] = rowIm[x] }
        }
        for x in 0..<size {
            for y in 0..<size { rowRe[y] = re[y * size + x]; rowIm[y] = im[y * size + x] }
            line(&rowRe, &rowIm, inverse: inverse)
            for y in 0..<size { re[y * size + x] = rowRe[y]; im[y * size + x] = rowIm[y] }
        }
    }

    /// One-dimensional iterative Cooley–Tukey transform of one line.
    private func line(_ re: inout [Double], _ im: inout [Double], inverse: Bool) {
        let n = size
        for i in 0..<n {
            let j = reversed[i]
            if j > i { re.swapAt(i, j); im.swapAt(i, j) }
        }
        let sign = inverse ? 1.0 : -1.0
        var half = 1
        while half < n {
            let step = n / (2 * half)
            var start = 0
            while start < n {
                for k in 0..<half {
                    let c = cosines[k * step], s = sign * sines[k * step]
                    let a = start + k, b = a + half
                    let tr = re[b] * c - im[b] * s, ti = re[b] * s + im[b] * c
                    re[b] = re[a] - tr; im[b] = im[a] - ti
                    re[a] += tr; im[a] += ti
                }
                start += 2 * half
            }
            half *= 2
        }
    }

    /// Signed frequency (cycles per sample) of grid index `i`: 0, 1/N, …, −1/N.
    func frequency(_ i: Int) -> Double {
        Double(i < size / 2 ? i : i - size) / Double(size)
    }
}
