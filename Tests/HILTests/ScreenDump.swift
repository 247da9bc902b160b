import Foundation
import XCTest

/// What qemu shows of the VM's virtio-gpu display, dumped by the host (scripts/hil/run
/// --screen answers `screen.request` in the shared directory with `screen.ppm` and
/// `screen.done`): the picture that was scanned out, not a buffer the guest wrote.
struct ScreenDump {
    let width: Int
    let height: Int
    /// RGB, 3 bytes a pixel, rows top to bottom.
    let pixels: [UInt8]

    /// Skips unless the VM has the virtio-gpu display (scripts/hil/run --screen).
    static func requireScreen() throws {
        try Bench.requireBench()
        guard Bench.environment["LOOPIX_HIL_SCREEN"] == "1" else {
            throw XCTSkip("no virtio-gpu display: run scripts/hil/run --screen FILE")
        }
    }

    /// The DRM card the virtio-gpu driver made (/dev/dri/cardN).
    static func virtioCard() throws -> String {
        try requireScreen()
        let drm = "/sys/class/drm"
        for name in (try FileManager.default.contentsOfDirectory(atPath: drm)).sorted()
        where name.hasPrefix("card") && !name.contains("-") {
            let device = "\(drm)/\(name)/device"
            var drivers = ["\(device)/driver"]
            drivers += ((try? FileManager.default.contentsOfDirectory(atPath: device)) ?? [])
                .filter { $0.hasPrefix("virtio") }.map { "\(device)/\($0)/driver" }
            for link in drivers {
                if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link),
                   target.hasSuffix("/virtio_gpu") {
                    return "/dev/dri/\(name)"
                }
            }
        }
        XCTFail("the VM has a virtio-gpu display but no card of the virtio_gpu driver")
        throw XCTSkip("no virtio_gpu card")
    }

    /// Asks the host for a dump of the screen now and reads it.
    static func take() throws -> ScreenDump {
        let out = try Bench.value("LOOPIX_HIL_OUT")
        let fm = FileManager.default
        // The request goes first: the host answers a request whenever no screen.done is there.
        try? fm.removeItem(atPath: "\(out)/screen.request")
        try? fm.removeItem(atPath: "\(out)/screen.done")
        try? fm.removeItem(atPath: "\(out)/screen.ppm")
        XCTAssertTrue(fm.createFile(atPath: "\(out)/screen.request", contents: nil))
        let end = Date(timeIntervalSinceNow: 30)
        while !fm.fileExists(atPath: "\(out)/screen.done") && Date() < end {
            Thread.sleep(forTimeInterval: 0.1)
        }
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(out)/screen.ppm")))
        return try parse(data)
    }

    /// A binary PPM as qemu writes it: "P6\nW H\n255\n" then the pixels.
    static func parse(_ data: [UInt8]) throws -> ScreenDump {
        var fields: [String] = []
        var i = 0
        while fields.count < 4 && i < data.count {
            while i < data.count && (data[i] == 0x20 || data[i] == 0x0A) { i += 1 }
            var word = ""
            while i < data.count && data[i] != 0x20 && data[i] != 0x0A { word.append(Character(UnicodeScalar(data[i]))); i += 1 }
            fields.append(word)
        }
        i += 1 // the single whitespace after the maximum value
        guard fields.count == 4, fields[0] == "P6", let w = Int(fields[1]), let h = Int(fields[2]), fields[3] == "255",
              data.count - i == w * h * 3 else {
            XCTFail("not a P6 PPM of 8-bit samples: \(fields), \(data.count) bytes")
            throw XCTSkip("bad dump")
        }
        return ScreenDump(width: w, height: h, pixels: Array(data[i...]))
    }

    /// The RGB at (x, y).
    func rgb(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8) {
        let o = (y * width + x) * 3
        return (pixels[o], pixels[o + 1], pixels[o + 2])
    }
}
