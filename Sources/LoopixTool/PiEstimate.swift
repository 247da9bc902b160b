import Foundation

/// Rough figures for a Raspberry Pi from this machine's: a time measured on one core here is
/// scaled by single-core sysbench CPU results (primes to 10 000, events a second) and spread
/// over the Pi's four cores as if they scaled perfectly — an order of magnitude, not a promise:
/// sysbench is scalar integer work, the film engine SIMD, and x265 something else again.
///
/// The Pi figures are leoncode.co.uk's (sysbench 1.0.20, one thread): Pi 3B+ 687, Pi 4 1478,
/// Pi 5 2737. A Pi Zero 2 W has the Pi 3B+'s Cortex-A53 at 1.0 GHz instead of 1.4: 491.
enum PiEstimate {
    struct Board {
        let name: String
        let eventsPerSecond: Double
        let cores: Int

        /// Seconds on all its cores for what takes `oneCoreHere` seconds on one core here.
        func allCores(oneCoreHere: Double) -> Double {
            oneCoreHere * PiEstimate.here / eventsPerSecond / Double(cores)
        }
    }

    static let boards = [
        Board(name: "Pi Zero 2 W", eventsPerSecond: 491, cores: 4),
        Board(name: "Pi 4", eventsPerSecond: 1478, cores: 4),
        Board(name: "Pi 5", eventsPerSecond: 2737, cores: 4),
    ]

    /// This machine's single-core events a second: measured with sysbench when it is installed
    /// (3 s), else the figure measured here when the README's tables were made.
    static let here: Double = {
        if let sysbench = Subprocess.find("sysbench") {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: sysbench)
            p.arguments = ["cpu", "--threads=1", "--time=3", "run"]
            let out = Pipe()
            p.standardOutput = out
            p.standardError = FileHandle.nullDevice
            if (try? p.run()) != nil {
                let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                p.waitUntilExit()
                if let line = text.split(separator: "\n").first(where: { $0.contains("events per second:") }),
                   let value = Double(line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)), value > 0 {
                    return value
                }
            }
        }
        return 4519
    }()
}
