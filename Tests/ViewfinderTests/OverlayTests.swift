import TestFixtures
import XCTest
import Canvas
import FilmCore
import ImageFiles
@testable import Viewfinder
import Raster

final class OverlayTests: XCTestCase {
    static let sizes = [(480, 320), (1920, 1080)]

    /// Everything on at once, as a busy camera would show it.
    static func fullModel() -> OverlayModel {
        var model = OverlayModel.camera(presetName: "Kodak Portra 400", isPro: true, lensLabel: "26 mm")
        model.grid = true
        model.ev = 1.3
        model.intensity = 0.7
        model.intensityVisible = true
        model.aeLocked = true
        model.afLocked = true
        model.focusPoint = SIMD2(0.7, 0.4)
        model.shotsRemaining = 1234
        model.watermark = true
        model.banner = "Busy \u{2014} photo queue full"
        model.prompt = "Press the button you want as shutter"
        return model
    }

    /// Draws `model` over a flat grey frame; returns the frame and the layout used.
    func render(_ model: OverlayModel, width: Int, height: Int, gray: UInt8 = 120) -> (RGBImage, OverlayLayout) {
        var renderer = OverlayRenderer(width: width, height: height)
        var image = flatImage(width: width, height: height, gray: gray)
        renderer.draw(model, on: &image)
        XCTAssertEqual(renderer.layout, OverlayRenderer.layout(for: model, width: width, height: height))
        return (image, renderer.layout)
    }

    /// The pixels that differ from the flat grey background.
    func changedPixels(_ image: RGBImage, gray: UInt8 = 120) -> [Point] {
        var points: [Point] = []
        image.pixels.withUnsafeBufferPointer { p in
            for i in stride(from: 0, to: p.count, by: 3) where p[i] != gray || p[i + 1] != gray || p[i + 2] != gray {
                let n = i / 3
                points.append(Point(x: n % image.width, y: n / image.width))
            }
        }
        return points
    }

    func changed(_ image: RGBImage, in rect: Rect, gray: UInt8 = 120) -> Int {
        var count = 0
        for y in max(0, rect.y) ..< min(image.height, rect.maxY) {
            for x in max(0, rect.x) ..< min(image.width, rect.maxX) where image[x, y] != SIMD3(repeating: gray) {
                count += 1
            }
        }
        return count
    }

    /// Asserts that every changed pixel lies in one of `rects`, and each rect has some.
    func assertChangesOnly(in rects: [Rect], _ image: RGBImage, _ label: String,
                           file: StaticString = #filePath, line: UInt = #line) {
        let changes = changedPixels(image)
        XCTAssertFalse(changes.isEmpty, "\(label): nothing drawn", file: file, line: line)
        let stray = changes.filter { p in !rects.contains { $0.contains(p) } }
        XCTAssertTrue(stray.isEmpty, "\(label): \(stray.count) pixels drawn outside \(rects), e.g. \(stray.prefix(3))",
                      file: file, line: line)
        for rect in rects {
            XCTAssertGreaterThan(changed(image, in: rect), 0, "\(label): nothing in \(rect)", file: file, line: line)
        }
    }

    func testAnEmptyModelDrawsNothing() {
        for (w, h) in Self.sizes {
            let (image, layout) = render(OverlayModel(), width: w, height: h)
            XCTAssertEqual(image, flatImage(width: w, height: h, gray: 120))
            XCTAssertTrue(layout.elements.isEmpty, "\(layout.elements.map(\.name))")
        }
    }

    func testGridLinesLieExactlyOnTheThirdsAndNowhereElse() {
        for (w, h) in [(480, 320), (1920, 1080), (100, 61)] {
            var model = OverlayModel()
            model.grid = true
            let (image, layout) = render(model, width: w, height: h)
            XCTAssertEqual(layout.gridLines.map(\.x), [w / 3, 2 * w / 3, 0, 0])
            XCTAssertEqual(layout.gridLines.map(\.y), [0, 0, h / 3, 2 * h / 3])
            let base = SIMD3<UInt8>(repeating: 120)
            for y in stride(from: 0, to: h, by: 7) {
                XCTAssertNotEqual(image[w / 3, y], base)
                XCTAssertNotEqual(image[2 * w / 3, y], base)
                XCTAssertGreaterThan(image[w / 3, y].x, 120, "lines are light")
                XCTAssertLessThan(image[w / 3, y].x, 255, "lines are translucent")
            }
            for x in stride(from: 0, to: w, by: 5) {
                XCTAssertNotEqual(image[x, h / 3], base)
                XCTAssertNotEqual(image[x, 2 * h / 3], base)
            }
            assertChangesOnly(in: layout.gridLines, image, "grid \(w)×\(h)")
            // Thin: at most 2 pixels wide even at 1080p.
            XCTAssertTrue(layout.gridLines.allSatisfy { min($0.width, $0.height) <= 2 })
        }
    }

    func testPresetNameIsDrawnInsideItsRectTopLeftAtEverySize() {
        var previousScale = 0
        for (w, h) in Self.sizes {
            var model = OverlayModel()
            model.presetName = "Kodak Portra 400"
            let (image, layout) = render(model, width: w, height: h)
            let name = try! XCTUnwrap(layout.presetName)
            let badge = try! XCTUnwrap(layout.tierBadge)
            assertChangesOnly(in: [name, badge], image, "preset \(w)×\(h)")
            XCTAssertLessThan(name.x, w / 4, "top left")
            XCTAssertLessThan(name.maxY, h / 4, "top left")
            XCTAssertGreaterThanOrEqual(name.x, 0)
            XCTAssertGreaterThanOrEqual(name.y, 0)
            // White text (with a black outline) is in there.
            var white = 0
            for y in name.y ..< name.maxY { for x in name.x ..< name.maxX where image[x, y] == SIMD3(255, 255, 255) { white += 1 } }
            XCTAssertGreaterThan(white, 16 * layout.textScale * layout.textScale, "\(w)×\(h)")
            // Larger frames get larger text: caps of at least 14 px, about 1/40 of the height.
            XCTAssertGreaterThan(layout.textScale, previousScale)
            XCTAssertGreaterThanOrEqual(layout.textScale * BitmapFont.capHeight, max(14, h / 50))
            previousScale = layout.textScale
        }
    }

    func testTierBadgeSaysProOrFreeInItsColour() {
        var model = OverlayModel()
        model.presetName = "Velvia 50"
        model.isPro = true
        let (pro, proLayout) = render(model, width: 480, height: 320)
        model.isPro = false
        let (free, freeLayout) = render(model, width: 480, height: 320)
        XCTAssertGreaterThan(count(Color.orange, in: proLayout.tierBadge!, of: pro), 0)
        XCTAssertEqual(count(Color.orange, in: freeLayout.tierBadge!, of: free), 0)
        XCTAssertGreaterThan(freeLayout.tierBadge!.width, proLayout.tierBadge!.width, "FREE is longer than PRO")
    }

    func testLockBadgesAppearOnlyWhenLocked() {
        for (w, h) in Self.sizes {
            let (none, noneLayout) = render(OverlayModel(), width: w, height: h)
            XCTAssertNil(noneLayout.aeBadge)
            XCTAssertNil(noneLayout.afBadge)
            XCTAssertTrue(changedPixels(none).isEmpty)

            var model = OverlayModel()
            model.aeLocked = true
            let (ae, aeLayout) = render(model, width: w, height: h)
            XCTAssertNil(aeLayout.afBadge)
            assertChangesOnly(in: [aeLayout.aeBadge!], ae, "AE-L")
            XCTAssertGreaterThan(count(.yellow, in: aeLayout.aeBadge!, of: ae), 0)

            model.aeLocked = false
            model.afLocked = true
            let (af, afLayout) = render(model, width: w, height: h)
            XCTAssertNil(afLayout.aeBadge)
            assertChangesOnly(in: [afLayout.afBadge!], af, "AF-L")

            model.aeLocked = true
            let both = OverlayRenderer.layout(for: model, width: w, height: h)
            XCTAssertNil(both.aeBadge!.intersection(both.afBadge!), "side by side")
        }
    }

    func testBannerIsCentredTextOnADarkBand() {
        for (w, h) in Self.sizes {
            var model = OverlayModel()
            model.banner = "Storage full"
            let (image, layout) = render(model, width: w, height: h, gray: 200)
            let band = try! XCTUnwrap(layout.banner)
            XCTAssertEqual(band.width, w)
            XCTAssertLessThanOrEqual(abs(band.midY - h / 2), 1)
            XCTAssertLessThan(image[2, band.midY].x, 100, "dark band")
            XCTAssertEqual(image[2, band.y - 1], SIMD3(repeating: 200), "nothing above the band")
            XCTAssertEqual(image[2, band.maxY], SIMD3(repeating: 200), "nothing below the band")
            // White text roughly centred horizontally.
            var xs: [Int] = []
            for y in band.y ..< band.maxY { for x in 0 ..< w where image[x, y] == SIMD3(255, 255, 255) { xs.append(x) } }
            XCTAssertFalse(xs.isEmpty)
            let centre = (xs.min()! + xs.max()!) / 2
            XCTAssertLessThanOrEqual(abs(centre - w / 2), 2 * layout.textScale)
        }
        // A long banner still fits a small panel (smaller text or "…").
        var model = OverlayModel()
        model.banner = String(repeating: "Camera not connected. ", count: 4)
        let (image, layout) = render(model, width: 480, height: 320, gray: 200)
        let band = layout.banner!
        XCTAssertEqual(image[1, band.midY].x < 100, true)
        XCTAssertNotEqual(image[0, band.midY], SIMD3(255, 255, 255), "no text at the very edge")
    }

    func testWatermarkOnlyWhenSet() {
        for (w, h) in Self.sizes {
            var model = OverlayModel.camera(presetName: "Velvia 50", isPro: true, lensLabel: "26 mm")
            let without = OverlayRenderer.layout(for: model, width: w, height: h)
            XCTAssertNil(without.watermark)
            model.watermark = true
            let (withMark, layout) = render(model, width: w, height: h)
            let rect = try! XCTUnwrap(layout.watermark)
            XCTAssertGreaterThan(changed(withMark, in: rect), 0)
            XCTAssertGreaterThan(rect.width, w * 2 / 5, "big enough to spoil the picture")
            XCTAssertLessThanOrEqual(rect.maxX, w)
            XCTAssertGreaterThanOrEqual(rect.x, 0)
            model.watermark = false
            let (withoutMark, _) = render(model, width: w, height: h)
            XCTAssertEqual(changed(withoutMark, in: rect), 0)
            var only = OverlayModel()
            only.watermark = true
            let (onlyImage, onlyLayout) = render(only, width: w, height: h)
            assertChangesOnly(in: [onlyLayout.watermark!], onlyImage, "watermark")
        }
    }

    func testShutterMarkerFollowsHandedness() {
        for (w, h) in Self.sizes {
            var model = OverlayModel()
            model.shutterMarkerVisible = true
            model.shutterOnRight = true
            let (right, rightLayout) = render(model, width: w, height: h)
            let r = try! XCTUnwrap(rightLayout.shutterMarker)
            XCTAssertEqual(r.maxX, w, "at the right edge")
            assertChangesOnly(in: [r], right, "marker right")
            XCTAssertNotEqual(right[w - 1, h / 2], SIMD3(repeating: 120))
            XCTAssertEqual(right[0, h / 2], SIMD3(repeating: 120))

            model.shutterOnRight = false
            let (left, leftLayout) = render(model, width: w, height: h)
            let l = try! XCTUnwrap(leftLayout.shutterMarker)
            XCTAssertEqual(l.x, 0, "at the left edge")
            assertChangesOnly(in: [l], left, "marker left")
            XCTAssertNotEqual(left[0, h / 2], SIMD3(repeating: 120))
            XCTAssertEqual(left[w - 1, h / 2], SIMD3(repeating: 120))
            // Mirror images of each other.
            XCTAssertEqual(l.width, r.width)
            XCTAssertEqual(left[l.width - 1, h / 2], right[w - l.width, h / 2])
        }
    }

    func testEVMarkerSitsAtTheValueOnTheScale() throws {
        var model = OverlayModel()
        model.evScaleVisible = true
        var centres: [Int] = []
        for ev in [-3.0, -1.0, 0.0, 1.3, 3.0, 7.0] {
            model.ev = ev
            let layout = OverlayRenderer.layout(for: model, width: 480, height: 320)
            let scale = try XCTUnwrap(layout.evScale)
            let marker = try XCTUnwrap(layout.evMarker)
            let s = layout.textScale
            let left = scale.x + s, right = scale.maxX - s - 1
            let expected = Double(left) + (min(ev, 3) + 3) / 6 * Double(right - left)
            XCTAssertEqual(Double(marker.midX), expected, accuracy: 1, "ev \(ev)")
            XCTAssertGreaterThan(scale.y, 320 * 3 / 4, "at the bottom")
            centres.append(marker.midX)
        }
        XCTAssertEqual(centres, centres.sorted())
        XCTAssertEqual(centres[4], centres[5], "clamped at +3")
        model.ev = 1.3
        let (image, layout) = render(model, width: 480, height: 320)
        XCTAssertGreaterThan(count(.yellow, in: layout.evMarker!, of: image), 0, "the dial is on EV")
        XCTAssertGreaterThan(count(.yellow, in: layout.evText!, of: image), 0)
        assertChangesOnly(in: [layout.evScale!, layout.evMarker!.insetBy(dx: -1, dy: -1), layout.evText!], image, "EV")
    }

    func testFormattedTexts() {
        XCTAssertEqual(OverlayRenderer.evText(1.3), "+1.3 EV")
        XCTAssertEqual(OverlayRenderer.evText(-0.7), "\u{2212}0.7 EV")
        XCTAssertEqual(OverlayRenderer.evText(0), "±0.0 EV")
        XCTAssertEqual(OverlayRenderer.evText(-0.01), "±0.0 EV")
        XCTAssertEqual(OverlayRenderer.evText(9), "+3.0 EV")
        XCTAssertEqual(OverlayRenderer.evText(.nan), "±0.0 EV")
        XCTAssertEqual(OverlayRenderer.intensityText(0.7), "Intensity 70 %")
        XCTAssertEqual(OverlayRenderer.intensityText(1.5), "Intensity 100 %")
        XCTAssertEqual(OverlayRenderer.timeText(83), "01:23")
        XCTAssertEqual(OverlayRenderer.timeText(0), "00:00")
        XCTAssertEqual(OverlayRenderer.timeText(3723), "1:02:03")
    }

    func testIntensityShowsWhileAdjustingOrOnTheDial() {
        var model = OverlayModel()
        model.intensity = 0.7
        XCTAssertNil(OverlayRenderer.layout(for: model, width: 480, height: 320).intensityText)
        model.intensityVisible = true
        let (image, layout) = render(model, width: 480, height: 320)
        assertChangesOnly(in: [layout.intensityText!], image, "intensity")
        XCTAssertEqual(count(.yellow, in: layout.intensityText!, of: image), 0, "the dial is on EV")
        model.intensityVisible = false
        model.dial = .intensity
        let (dialImage, dialLayout) = render(model, width: 480, height: 320)
        XCTAssertGreaterThan(count(.yellow, in: dialLayout.intensityText!, of: dialImage), 0)
    }

    func testRecordingShowsARedDotAndTimeInVideoModeOnly() {
        var model = OverlayModel()
        model.recording = true
        model.elapsedSeconds = 83
        model.shotsRemaining = 20
        XCTAssertNil(OverlayRenderer.layout(for: model, width: 480, height: 320).recording, "photo mode")
        model.mode = .video
        let (image, layout) = render(model, width: 480, height: 320)
        let rect = try! XCTUnwrap(layout.recording)
        XCTAssertNil(layout.shotsRemaining, "no shot count while filming")
        XCTAssertGreaterThan(count(.red, in: rect, of: image), 0)
        XCTAssertLessThanOrEqual(abs(rect.midX - 240), 2, "top centre")
        XCTAssertLessThan(rect.y, 320 / 10)
        assertChangesOnly(in: [rect], image, "REC")
        model.recording = false
        let (idle, idleLayout) = render(model, width: 480, height: 320)
        XCTAssertEqual(count(.red, in: idleLayout.recording!, of: idle), 0)
    }

    func testRecordingMovesToTheSecondRowRatherThanCutTheLooksName() throws {
        var model = OverlayModel.camera(presetName: "Kodak Portra 400", isPro: true, lensLabel: "26 mm")
        model.mode = .video
        model.recording = true
        model.elapsedSeconds = 83
        let small = OverlayRenderer.layout(for: model, width: 480, height: 320)
        let big = OverlayRenderer.layout(for: model, width: 1920, height: 1080)
        // 1080p: everything on the top row, REC centred.
        XCTAssertLessThanOrEqual(abs(try XCTUnwrap(big.recording).midX - 960), 2)
        XCTAssertEqual(big.recording!.y, big.presetName!.y)
        // 480×320: the name is not truncated; REC goes below the lens, at the right.
        let rec = try XCTUnwrap(small.recording)
        let name = try XCTUnwrap(small.presetName)
        XCTAssertEqual(name.width, BitmapFont.width(of: "Kodak Portra 400", scale: small.textScale) + 2 * small.textScale)
        XCTAssertGreaterThan(rec.y, name.maxY - small.textScale)
        XCTAssertLessThanOrEqual(rec.maxX, 480)
        XCTAssertGreaterThan(rec.x, 240)
        for other in [small.presetName!, small.tierBadge!, small.lensLabel!, small.evScale!] {
            XCTAssertNil(rec.intersection(other))
        }
    }

    func testReticleSurroundsTheFocusPointAndTurnsGreenWhenLocked() {
        var model = OverlayModel()
        model.focusPoint = SIMD2(0.25, 0.5)
        let (image, layout) = render(model, width: 480, height: 320)
        let r = try! XCTUnwrap(layout.reticle)
        XCTAssertLessThanOrEqual(abs(r.midX - 120), 1)
        XCTAssertLessThanOrEqual(abs(r.midY - 160), 1)
        assertChangesOnly(in: [r.insetBy(dx: -2, dy: -2)], image, "reticle")
        XCTAssertEqual(image[r.midX, r.midY], SIMD3(repeating: 120), "the subject itself stays clear")
        XCTAssertEqual(count(.green, in: r, of: image), 0)
        model.afLocked = true
        let (locked, _) = render(model, width: 480, height: 320)
        XCTAssertGreaterThan(count(.green, in: r, of: locked), 0)
    }

    func testEverythingOnFitsInsideTheFrameWithoutCollisions() {
        for (w, h) in Self.sizes {
            let layout = OverlayRenderer.layout(for: Self.fullModel(), width: w, height: h)
            let frame = Rect(x: 0, y: 0, width: w, height: h)
            for (name, rect) in layout.elements where name != "reticle" {
                XCTAssertEqual(rect.intersection(frame), rect, "\(name) \(rect) leaves the \(w)×\(h) frame")
            }
            // The furniture round the edges must not overlap each other.
            let furniture = layout.elements.filter {
                ["presetName", "tierBadge", "aeBadge", "afBadge", "lensLabel", "shotsRemaining",
                 "evScale", "evText", "intensityText", "banner", "prompt", "watermark", "shutterMarker"].contains($0.name)
            }
            XCTAssertEqual(furniture.count, 13)
            for (i, a) in furniture.enumerated() {
                // (The banner is a full-width band across the middle: the edge marker may pass under it.)
                for b in furniture[(i + 1)...] where !(a.name == "shutterMarker" && b.name == "banner") {
                    XCTAssertNil(a.rect.intersection(b.rect), "\(w)×\(h): \(a.name) \(a.rect) overlaps \(b.name) \(b.rect)")
                }
            }
        }
    }

    func testRedrawingTheSameModelGivesTheSameFrameAndAFrameSizeChangeRelaysOut() {
        var renderer = OverlayRenderer(width: 480, height: 320)
        let model = Self.fullModel()
        var first = patternImage(width: 480, height: 320)
        renderer.draw(model, on: &first)
        var second = patternImage(width: 480, height: 320)
        renderer.draw(model, on: &second)
        XCTAssertEqual(first, second)
        var big = patternImage(width: 1920, height: 1080)
        renderer.draw(model, on: &big)
        XCTAssertEqual(renderer.width, 1920)
        XCTAssertEqual(renderer.layout, OverlayRenderer.layout(for: model, width: 1920, height: 1080))
    }

    /// Writes the full overlay at both sizes when LOOPIX_OVERLAY_PREVIEW names a directory
    /// (for looking at it; nothing is asserted about the picture).
    /// Every size's photo and video overlay, as PNGs (in $LOOPIX_OVERLAY_PREVIEW when set, to
    /// look at): each file holds exactly the pixels drawn, and the video overlay differs from
    /// the photo one.
    func testWritePreviewImages() throws {
        var dir = ProcessInfo.processInfo.environment["LOOPIX_OVERLAY_PREVIEW"] ?? ""
        if dir.isEmpty {
            dir = try makeTemporaryDirectory("overlay")
            addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        }
        for (w, h) in Self.sizes {
            var renderer = OverlayRenderer(width: w, height: h)
            var image = patternImage(width: w, height: h)
            renderer.draw(Self.fullModel(), on: &image)
            try ImageWriter.write(image, to: "\(dir)/overlay-\(w)x\(h).png", format: .png, replace: true)
            var video = Self.fullModel()
            video.mode = .video
            video.recording = true
            video.elapsedSeconds = 83
            video.banner = nil
            video.prompt = nil
            video.shutterOnRight = false
            video.dial = .intensity
            var image2 = patternImage(width: w, height: h)
            renderer.draw(video, on: &image2)
            try ImageWriter.write(image2, to: "\(dir)/overlay-video-\(w)x\(h).png", format: .png, replace: true)
            XCTAssertEqual(try ImageReader.read(path: "\(dir)/overlay-\(w)x\(h).png").pixels, image.pixels, "\(w)×\(h)")
            XCTAssertEqual(try ImageReader.read(path: "\(dir)/overlay-video-\(w)x\(h).png").pixels, image2.pixels, "\(w)×\(h)")
            XCTAssertNotEqual(image.pixels, image2.pixels, "the video overlay at \(w)×\(h) is its own")
            XCTAssertNotEqual(image.pixels, patternImage(width: w, height: h).pixels, "something was drawn at \(w)×\(h)")
        }
    }

    private func count(_ color: Color, in rect: Rect, of image: RGBImage) -> Int {
        var n = 0
        for y in max(0, rect.y) ..< min(image.height, rect.maxY) {
            for x in max(0, rect.x) ..< min(image.width, rect.maxX) where image[x, y] == color.simd { n += 1 }
        }
        return n
    }
}
