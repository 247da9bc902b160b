/// Median, minimum and maximum of a few measurements (the benchmark's figures, all of them).
struct Stats {
    let median: Double, min: Double, max: Double
    /// The measurements, in the order they were made.
    let values: [Double]
    init(_ values: [Double]) {
        self.values = values
        let sorted = values.sorted()
        median = sorted.isEmpty ? 0 : sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        min = sorted.first ?? 0
        max = sorted.last ?? 0
    }
    /// Spread beyond 15 % of the median is marked: such a figure should not decide anything.
    /// (A difference whose median is near zero is noisy as soon as its rounds disagree.)
    var noisy: Bool { median != 0 ? (max - min) / abs(median) > 0.15 : max != min }
    /// "1.2 (1.1–1.4)", " noisy" appended when the spread is too wide.
    var text: String { String(format: "%.1f (%.1f–%.1f)%@", median, min, max, noisy ? " noisy" : "") }
    /// The same with two decimals.
    var text2: String { String(format: "%.2f (%.2f–%.2f)%@", median, min, max, noisy ? " noisy" : "") }
    /// "12.47 ns/pixel (10.78–12.95)", " noisy" appended when the spread is too wide.
    func text(_ unit: String, decimals: Int = 2) -> String {
        let f = "%.\(decimals)f"
        return String(format: "\(f)%@ (\(f)–\(f))%@", median, unit, min, max, noisy ? " noisy" : "")
    }

    /// A stage's cost made as per-round differences of two timings, scaled to `unit`
    /// ("0.22 ms a frame (0.07–0.27) noisy"): a median at or below zero is no cost the rounds
    /// can see and says so, never printing a negative time.
    func costText(_ unit: String, scale: Double) -> String {
        let scaled = Stats(values.map { $0 * scale })
        guard scaled.median > 0 else {
            return String(format: "below the rounds' noise (their differences %.2f–%.2f%@)", scaled.min, scaled.max, unit)
        }
        return scaled.text(unit)
    }
}
