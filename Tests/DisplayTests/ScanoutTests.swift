import Controls
import FilmCore
import System
import XCTest
@testable import Display
@testable import PixelFormats
import Raster

final class ScanoutTests: XCTestCase {
    /// A frame whose every pixel names its own coordinates: R = x, G = y, B = 7.
    private func coordinateFrame(_ w: Int, _ h: Int) -> RGBImage {
        var image = RGBImage(width: w, height: h)
        for y in 0..<h {
            for x in 0..<w {
                let i = (y * w + x) * 3
                image.pixels[i] = UInt8(x)
                image.pixels[i + 1] = UInt8(y)
                image.pixels[i + 2] = 7
            }
        }
        return image
    }

    func testLetterbox() {
        XCTAssertTrue(ScanoutMap.letterbox(sourceWidth: 800, sourceHeight: 480, width: 800, height: 480) == (0, 0, 800, 480))
        // 4:3 into 16:9: bars left and right.
        XCTAssertTrue(ScanoutMap.letterbox(sourceWidth: 640, sourceHeight: 480, width: 1920, height: 1080) == (240, 0, 1440, 1080))
        // 16:9 into 4:3: bars top and bottom.
        XCTAssertTrue(ScanoutMap.letterbox(sourceWidth: 1920, sourceHeight: 1080, width: 1024, height: 768) == (0, 96, 1024, 576))
    }

    func testIdentityMapIsOneToOne() {
        let map = ScanoutMap(sourceWidth: 40, sourceHeight: 30, bufferWidth: 40, bufferHeight: 30, rotation: .none)
        XCTAssertEqual(map.contentX, 0)
        XCTAssertEqual(map.contentWidth, 40)
        for (x, y) in [(0, 0), (39, 0), (0, 29), (17, 11), (39, 29)] {
            XCTAssertTrue(map.sourcePixel(bufferX: x, bufferY: y)! == (x, y))
        }
    }

    /// The picture's corners land where a clockwise turn puts them, for every rotation.
    func testRotationCorners() {
        let w = 40, h = 30
        for rotation in ScreenRotation.allCases {
            let bw = rotation.swapsAxes ? h : w, bh = rotation.swapsAxes ? w : h
            let map = ScanoutMap(sourceWidth: w, sourceHeight: h, bufferWidth: bw, bufferHeight: bh, rotation: rotation)
            XCTAssertEqual(map.contentWidth, bw, "\(rotation)")
            XCTAssertEqual(map.contentHeight, bh, "\(rotation)")
            // Where the picture's top-left pixel goes.
            let topLeft: (Int, Int)
            switch rotation {
            case .none: topLeft = (0, 0)
            case .quarter: topLeft = (bw - 1, 0)        // turned clockwise: top-left → top-right
            case .half: topLeft = (bw - 1, bh - 1)
            case .threeQuarters: topLeft = (0, bh - 1)
            }
            XCTAssertTrue(map.sourcePixel(bufferX: topLeft.0, bufferY: topLeft.1)! == (0, 0), "\(rotation)")
            // Every buffer pixel maps to a distinct source pixel (a bijection at equal size).
            var seen = Set<Int>()
            for by in 0..<bh {
                for bx in 0..<bw {
                    let p = map.sourcePixel(bufferX: bx, bufferY: by)!
                    seen.insert(p.y * w + p.x)
                }
            }
            XCTAssertEqual(seen.count, w * h, "\(rotation)")
        }
    }

    func testQuarterTurnMapsPixelsExactly() {
        // Clockwise: picture (x, y) → buffer (H-1-y, x).
        let w = 6, h = 4
        let map = ScanoutMap(sourceWidth: w, sourceHeight: h, bufferWidth: h, bufferHeight: w, rotation: .quarter)
        for y in 0..<h {
            for x in 0..<w {
                XCTAssertTrue(map.sourcePixel(bufferX: h - 1 - y, bufferY: x)! == (x, y))
            }
        }
        let three = ScanoutMap(sourceWidth: w, sourceHeight: h, bufferWidth: h, bufferHeight: w, rotation: .threeQuarters)
        for y in 0..<h {
            for x in 0..<w {
                XCTAssertTrue(three.sourcePixel(bufferX: y, bufferY: w - 1 - x)! == (x, y))
            }
        }
    }

    func testScaledLetterboxedConversion() {
        // 20×10 into 40×40: scaled ×2 to 40×20, bars of 10 rows above and below.
        let frame = coordinateFrame(20, 10)
        let map = ScanoutMap(sourceWidth: 20, sourceHeight: 10, bufferWidth: 40, bufferHeight: 40, rotation: .none)
        XCTAssertEqual(map.contentY, 10)
        XCTAssertEqual(map.contentHeight, 20)
        let pitch = 40 * 4 + 16
        var buffer = [UInt8](repeating: 0xAA, count: pitch * 40)
        buffer.withUnsafeMutableBytes { raw in
            map.clear(raw.baseAddress!, pitch: pitch)
            map.convert(frame, into: raw.baseAddress!, pitch: pitch, format: .xrgb8888)
        }
        func pixel(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8) {
            let o = y * pitch + x * 4
            return (buffer[o + 2], buffer[o + 1], buffer[o]) // B, G, R, X in memory
        }
        XCTAssertTrue(pixel(5, 5) == (0, 0, 0), "bar")
        XCTAssertTrue(pixel(5, 35) == (0, 0, 0), "bar")
        XCTAssertTrue(pixel(0, 10) == (0, 0, 7))
        XCTAssertTrue(pixel(39, 29) == (19, 9, 7))
        XCTAssertTrue(pixel(7, 15) == (3, 2, 7))
        XCTAssertEqual(buffer[10 * pitch + 3], 0xFF, "X byte opaque")
    }

    /// At the frame's own size (rows packed eight pixels at a time, then one by one), every
    /// width from 1 to 40: each pixel lands as B, G, R, 0xFF and the pitch's padding is untouched.
    func testUnscaledRowsPackEveryPixelAndNoMore() {
        for width in 1...40 {
            let height = 3, pitch = width * 4 + 12
            var frame = RGBImage(width: width, height: height)
            for i in frame.pixels.indices { frame.pixels[i] = UInt8(truncatingIfNeeded: i &* 151 &+ width) }
            let map = ScanoutMap(sourceWidth: width, sourceHeight: height, bufferWidth: width, bufferHeight: height, rotation: .none)
            var buffer = [UInt8](repeating: 0xAA, count: pitch * height)
            buffer.withUnsafeMutableBytes { map.convert(frame, into: $0.baseAddress!, pitch: pitch, format: .xrgb8888) }
            for y in 0..<height {
                for x in 0..<width {
                    let o = y * pitch + x * 4, p = frame[x, y]
                    XCTAssertEqual(Array(buffer[o..<(o + 4)]), [p.z, p.y, p.x, 0xFF], "width \(width): pixel (\(x), \(y))")
                }
                XCTAssertEqual(Set(buffer[(y * pitch + width * 4)..<((y + 1) * pitch)]), [0xAA], "width \(width): row \(y)'s padding")
            }
        }
    }

    /// In bands on several threads, every rotation and format fills the buffer as one thread does.
    func testBandsOnSeveralThreadsFillTheSameBuffer() {
        let frame = coordinateFrame(64, 48)
        for rotation in ScreenRotation.allCases {
            for format in [ScanoutFormat.xrgb8888, .rgb565] {
                let map = ScanoutMap(sourceWidth: 64, sourceHeight: 48, bufferWidth: 100, bufferHeight: 90, rotation: rotation)
                let pitch = 100 * 4
                var one = [UInt8](repeating: 0, count: pitch * 90), four = one
                one.withUnsafeMutableBytes { map.convert(frame, into: $0.baseAddress!, pitch: pitch, format: format) }
                four.withUnsafeMutableBytes { map.convert(frame, into: $0.baseAddress!, pitch: pitch, format: format, threads: 4) }
                XCTAssertEqual(one, four, "\(rotation) \(format)")
            }
        }
    }

    func testRGB565Conversion() {
        var frame = RGBImage(width: 2, height: 1)
        frame.pixels = [255, 0, 0, 0, 255, 255]
        let map = ScanoutMap(sourceWidth: 2, sourceHeight: 1, bufferWidth: 2, bufferHeight: 1, rotation: .none)
        var buffer = [UInt16](repeating: 0, count: 2)
        buffer.withUnsafeMutableBytes { map.convert(frame, into: $0.baseAddress!, pitch: 4, format: .rgb565) }
        XCTAssertEqual(buffer, [0xF800, 0x07FF])
    }

    func testConnectorNames() {
        XCTAssertEqual(ConnectorNaming.name(type: 11, typeID: 1), "HDMI-A-1")
        XCTAssertEqual(ConnectorNaming.name(type: 11, typeID: 2), "HDMI-A-2")
        XCTAssertEqual(ConnectorNaming.name(type: 16, typeID: 1), "DSI-1")
        XCTAssertEqual(ConnectorNaming.name(type: 15, typeID: 1), "Virtual-1")
        XCTAssertEqual(ConnectorNaming.name(type: 17, typeID: 1), "DPI-1")
        XCTAssertEqual(ConnectorNaming.name(type: 18, typeID: 1), "Writeback-1")
        XCTAssertEqual(ConnectorNaming.name(type: 10, typeID: 3), "DP-3")
        XCTAssertEqual(ConnectorNaming.name(type: 99, typeID: 1), "Unknown-1")
    }

    func testModeParsing() {
        XCTAssertEqual(ModeSpec("1920x1080"), ModeSpec(width: 1920, height: 1080))
        XCTAssertEqual(ModeSpec("1280x720@60"), ModeSpec(width: 1280, height: 720, refresh: 60))
        XCTAssertEqual(ModeSpec("1920x1080@59.94"), ModeSpec(width: 1920, height: 1080, refresh: 59.94))
        XCTAssertEqual(ModeSpec("800×480"), ModeSpec(width: 800, height: 480))
        for bad in ["", "1920", "1920x", "x1080", "1920x1080@", "1920x1080@0", "-1x5", "1920x1080x3", "axb", "1920 x 1080", "0x480", "99999x1"] {
            XCTAssertNil(ModeSpec(bad), bad)
        }
        XCTAssertEqual(ModeSpec("1280x720@60")?.description, "1280x720@60")
        XCTAssertEqual(ModeSpec("1920x1080")?.description, "1920x1080")
    }

    func testModeChoice() {
        let modes = [
            ModeCandidate(width: 1920, height: 1080, refresh: 60, preferred: true),
            ModeCandidate(width: 1920, height: 1080, refresh: 50, preferred: false),
            ModeCandidate(width: 1280, height: 720, refresh: 50, preferred: false),
            ModeCandidate(width: 1280, height: 720, refresh: 59.94, preferred: false),
            ModeCandidate(width: 800, height: 600, refresh: 60, preferred: false),
        ]
        XCTAssertEqual(ModeCandidate.choose(modes, spec: nil), 0)
        XCTAssertEqual(ModeCandidate.choose(modes, spec: ModeSpec("1920x1080@50")), 1)
        XCTAssertEqual(ModeCandidate.choose(modes, spec: ModeSpec("1280x720")), 3, "highest rate of that size")
        XCTAssertEqual(ModeCandidate.choose(modes, spec: ModeSpec("1280x720@60")), 3, "59.94 is within 0.5 Hz")
        XCTAssertNil(ModeCandidate.choose(modes, spec: ModeSpec("1280x720@30")))
        XCTAssertNil(ModeCandidate.choose(modes, spec: ModeSpec("640x480")))
        XCTAssertNil(ModeCandidate.choose([], spec: nil))
        let noPreferred = [ModeCandidate(width: 640, height: 480, refresh: 60, preferred: false)]
        XCTAssertEqual(ModeCandidate.choose(noPreferred, spec: nil), 0)
    }

    func testNoCardsGivesOneClearError() {
        XCTAssertThrowsError(try KMSDisplay(KMSConfiguration(cards: ["/nonexistent/card0"]))) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("KMS: no connected display: looked for a connected connector on /nonexistent/card0"), text)
            XCTAssertFalse(text.contains("\n"))
        }
        XCTAssertEqual(KMSDisplay.cardPaths(directory: "/nonexistent"), [])
        XCTAssertEqual(DisplayError.drmMaster(device: "/dev/dri/card0", errno: Errno(EBUSY)).description,
                       "/dev/dri/card0: another program holds the display (DRM master): Device or resource busy (errno 16)")
    }
}
