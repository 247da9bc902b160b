import TestFixtures
import XCTest
@testable import FilmCore
import Raster

/// The point-and-shoot date imprint: seven-segment digits exposed into the film as light.
final class DateStampTests: XCTestCase {
    let text = "'98 11 30"

    func render(_ image: RGBImage, stamp: String?, preset: Preset = BuiltinPresets.portra) -> RGBImage {
        TestImages.render(image, preset, RenderSettings(grainEnabled: false, dateStamp: stamp))
    }

    /// The date is there, readable, in the lower right, and nowhere else.
    func testTheDateIsImprintedReadablyInTheLowerRight() {
        let image = TestImages.flat(480, 320, 40)
        let plain = render(image, stamp: nil)
        let stamped = render(image, stamp: text)
        XCTAssertEqual(readDateStamp(stamped, over: plain, text: text), "981130")
        var changed = (minX: Int.max, minY: Int.max, maxX: 0, maxY: 0)
        for y in 0..<320 {
            for x in 0..<480 where stamped[x, y] != plain[x, y] {
                changed = (min(changed.minX, x), min(changed.minY, y), max(changed.maxX, x), max(changed.maxY, y))
            }
        }
        XCTAssertGreaterThan(changed.minX, 480 * 3 / 4, "only the lower right changes: \(changed)")
        XCTAssertGreaterThan(changed.minY, 320 * 4 / 5, "\(changed)")
        XCTAssertLessThan(changed.maxX, 480 - 5, "a margin on the right: \(changed)")
        XCTAssertLessThan(changed.maxY, 320 - 5, "a margin at the bottom: \(changed)")
    }

    /// It is light exposed into the film: orange-red (red, then green, little blue) on a dark
    /// frame, with a red glow around the digits; on a bright sky it adds little.
    func testTheImprintIsOrangeRedLightWithAGlow() {
        let dark = TestImages.flat(480, 320, 30)
        let plain = render(dark, stamp: nil), stamped = render(dark, stamp: text)
        let layout = DateStamp(text)!.layout(frameWidth: 480, frameHeight: 320)
        // The middle of the first '8''s middle segment, and a point just outside its top right.
        let core = layout.place([0.5, 0.5], 1), outside = layout.place([1.2, 0.5], 1)
        func inc(_ p: SIMD2<Double>) -> SIMD3<Int> {
            let x = layout.x + Int(p.x), y = layout.y + Int(p.y)
            return SIMD3(Int(stamped[x, y].x) - Int(plain[x, y].x), Int(stamped[x, y].y) - Int(plain[x, y].y),
                         Int(stamped[x, y].z) - Int(plain[x, y].z))
        }
        let c = inc(core), g = inc(outside)
        XCTAssertGreaterThan(c.x, 150, "bright red core \(c)")
        XCTAssertGreaterThan(c.x, c.y + 40, "orange-red: red over green \(c)")
        XCTAssertGreaterThan(c.y, c.z, "green over blue \(c)")
        XCTAssertGreaterThan(g.x, 3, "a glow beside the digit \(g)")
        XCTAssertGreaterThan(g.x, 2 * max(g.y, 0), "the glow is red \(g)")
        // On white the film is already exposed: the imprint barely shows.
        let white = TestImages.flat(480, 320, 250)
        let w0 = render(white, stamp: nil), w1 = render(white, stamp: text)
        let x = layout.x + Int(core.x), y = layout.y + Int(core.y)
        XCTAssertLessThan(Int(w1[x, y].x) - Int(w0[x, y].x), 15)
    }

    /// Sized on the frame: the preview and the photo put the imprint in the same place, the
    /// same size relative to the frame.
    func testPreviewAndPhotoPlaceTheImprintAlike() {
        let stamp = DateStamp(text)!
        let preview = stamp.light(frameWidth: 800, frameHeight: 600)
        let photo = stamp.light(frameWidth: 4000, frameHeight: 3000)
        XCTAssertEqual(Double(photo.x) / 4000, Double(preview.x) / 800, accuracy: 0.004)
        XCTAssertEqual(Double(photo.y) / 3000, Double(preview.y) / 600, accuracy: 0.004)
        XCTAssertEqual(Double(photo.width) / 4000, Double(preview.width) / 800, accuracy: 0.004)
    }

    /// The fast pipeline with the stamp against the reference pipeline with it.
    func testFastPathWithTheStampMatchesTheReference() {
        let image = TestImages.sweep(160, 120)
        for preset in [BuiltinPresets.portra, BuiltinPresets.cinestill800t] {
            let settings = RenderSettings(grainEnabled: false, dateStamp: text)
            let fast = TestImages.render(image, preset, settings)
            let reference = ReferencePipeline(preset: preset, settings: settings).render(image, grain: nil)
            var worst = 0
            for i in fast.pixels.indices { worst = max(worst, abs(Int(fast.pixels[i]) - Int(reference.pixels[i]))) }
            XCTAssertLessThanOrEqual(worst, 6, preset.id)
        }
    }

    /// The stamp is the camera's, not the look's: it is there whatever the intensity dial says.
    func testTheIntensityDialDoesNotFadeTheStamp() {
        let image = TestImages.flat(480, 320, 40)
        for intensity in [0.0, 0.5] {
            let plain = TestImages.render(image, BuiltinPresets.portra, RenderSettings(intensity: intensity, grainEnabled: false))
            let stamped = TestImages.render(image, BuiltinPresets.portra, RenderSettings(intensity: intensity, grainEnabled: false, dateStamp: text))
            XCTAssertEqual(readDateStamp(stamped, over: plain, text: text), "981130", "at intensity \(intensity)")
            let reference = ReferencePipeline(preset: BuiltinPresets.portra, settings: RenderSettings(intensity: intensity, grainEnabled: false, dateStamp: text))
                .render(image, grain: nil)
            var worst = 0
            for i in stamped.pixels.indices { worst = max(worst, abs(Int(stamped.pixels[i]) - Int(reference.pixels[i]))) }
            XCTAssertLessThanOrEqual(worst, 6, "fast against reference at intensity \(intensity)")
        }
    }

    /// A stamp beside the buffer (a tile of a wider frame, or a frame too narrow for it)
    /// changes nothing there and breaks nothing.
    func testAStampOutsideTheBufferIsLeftOut() {
        let tile = TestImages.flat(100, 40, 40)
        let window = FrameWindow(frameWidth: 480, frameHeight: 320, x: 0, y: 280)
        let settings = RenderSettings(grainEnabled: false, dateStamp: text)
        XCTAssertEqual(TestImages.render(tile, BuiltinPresets.portra, settings, window: window),
                       TestImages.render(tile, BuiltinPresets.portra, RenderSettings(grainEnabled: false), window: window))
        let narrow = TestImages.flat(12, 400, 40)
        _ = TestImages.render(narrow, BuiltinPresets.portra, settings)
        _ = TestImages.render(narrow, BuiltinPresets.portra, RenderSettings(intensity: 0, dateStamp: text))
    }

    func testOnlyWhatSevenSegmentsCanShowIsAccepted() {
        XCTAssertNotNil(DateStamp("'98 11 30"))
        XCTAssertNotNil(DateStamp("30-11-1998 23:59"))
        XCTAssertNil(DateStamp("'98 NOV 30"))
        // An unknown text in the settings imprints nothing rather than failing a frame.
        let image = TestImages.flat(64, 48, 40)
        XCTAssertEqual(render(image, stamp: "NOV"), render(image, stamp: nil))
    }
}
