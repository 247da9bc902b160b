import Canvas
import Raster
import Foundation
import QRCode

/// Draws an `OverlayModel` over a preview frame with `Canvas`: grid, preset and tier, lens,
/// AE-L/AF-L, reticle, REC and time, shots remaining, EV scale, intensity, shutter-side
/// marker, watermark, banner and prompt.
///
/// Text is the built-in bitmap font at a scale picked from the frame height, so the same
/// layout reads on a 480×320 panel and on a 1080p monitor. Every text is outlined in black so
/// it reads over any photo.
///
/// Allocation: the strings and the layout are built when the model (or the frame size)
/// changes — a few small Strings (EV "+1.3 EV", "Intensity 70 %", "REC 01:23", a truncated
/// name) and the layout's grid array. Drawing the same model again allocates nothing: the
/// frame is swapped into the renderer's canvas and back, and `Canvas` drawing does not
/// allocate. (`elapsedSeconds` is whole seconds, so a recording re-formats once a second.)
public struct OverlayRenderer: Sendable {
    public private(set) var width: Int
    public private(set) var height: Int
    /// The layout of the last model drawn (or of an empty model before the first draw).
    public private(set) var layout: OverlayLayout

    private var model: OverlayModel
    private var texts: Texts
    /// Frames are swapped in for drawing; between draws it holds a 1×1 placeholder.
    private var canvas: Canvas

    public init(width: Int, height: Int) {
        self.width = max(1, width)
        self.height = max(1, height)
        model = OverlayModel()
        (layout, texts) = OverlayRenderer.prepare(model, width: self.width, height: self.height)
        canvas = Canvas(image: RGBImage(width: 1, height: 1))
    }

    /// Where `model`'s elements go on a frame of `width` × `height`.
    public static func layout(for model: OverlayModel, width: Int, height: Int) -> OverlayLayout {
        prepare(model, width: max(1, width), height: max(1, height)).0
    }

    /// Draws `model` over `image`. A frame of another size than the renderer's re-lays out for it.
    public mutating func draw(_ model: OverlayModel, on image: inout RGBImage) {
        if model != self.model || image.width != width || image.height != height {
            width = image.width
            height = image.height
            self.model = model
            (layout, texts) = OverlayRenderer.prepare(model, width: width, height: height)
        }
        swap(&canvas.image, &image)
        render()
        swap(&canvas.image, &image)
    }

    // MARK: - Strings

    /// "+1.3 EV", "−0.7 EV", "±0.0 EV" (clamped to ±3; always 7 characters).
    static func evText(_ ev: Double) -> String {
        let clamped = ev.isFinite ? min(max(ev, -3), 3) : 0
        let tenths = Int((abs(clamped) * 10).rounded())
        let sign = tenths == 0 ? "±" : (clamped < 0 ? "\u{2212}" : "+")
        return "\(sign)\(tenths / 10).\(tenths % 10) EV"
    }

    /// "Intensity 70 %".
    static func intensityText(_ intensity: Double) -> String {
        let percent = intensity.isFinite ? Int((min(max(intensity, 0), 1) * 100).rounded()) : 0
        return "Intensity \(percent) %"
    }

    /// "mm:ss", or "h:mm:ss" from an hour on.
    public static func timeText(_ seconds: Int) -> String {
        let s = max(0, seconds)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        if s >= 3600 { return "\(s / 3600):\(two(s / 60 % 60)):\(two(s % 60))" }
        return "\(two(s / 60)):\(two(s % 60))"
    }

    static let watermarkText = "LOOPIX PRO \u{2014} UNLICENSED"

    // MARK: - Layout

    struct Texts: Sendable {
        var presetName = ""
        var tier = ""
        var lens = ""
        var shots = ""
        var recording = ""
        var ev = ""
        var intensity = ""
        var banner = ""
        var prompt = ""
        var countdown = ""
        var attractTitle = ""
        var attractLine = ""
        var qrCaption = ""
        var countdownScale = 1
        var attractTitleScale = 1
        var attractLineScale = 1
        var captionScale = 1
        /// Pixels per QR module.
        var qrModule = 1
        var bannerScale = 1
        var promptScale = 1
        var watermarkScale = 1
    }

    /// The font scale for a frame `height` pixels tall: caps about 1/40 of the height, at least 2.
    static func textScale(height: Int) -> Int {
        max(2, BitmapFont.scale(forCapHeight: height / 40))
    }

    /// The rect a text drawn at `origin` with a `scale`-pixel outline may touch.
    static func textRect(_ text: String, at origin: Point, scale: Int) -> Rect {
        Rect(x: origin.x - scale, y: origin.y - scale,
             width: BitmapFont.width(of: text, scale: scale) + 2 * scale,
             height: BitmapFont.height(of: text, scale: scale) + 2 * scale)
    }

    /// Width of the ink of `text` (without the spacing column after the last character).
    static func inkWidth(_ text: String, scale: Int) -> Int {
        max(0, BitmapFont.width(of: text, scale: scale) - (BitmapFont.cellWidth - BitmapFont.glyphWidth) * scale)
    }

    /// The largest scale ≤ `preferred` at which `text` fits in `available` pixels, and the text
    /// (truncated with "…" if it does not fit even at scale 1).
    static func fit(_ text: String, preferred: Int, available: Int) -> (String, Int) {
        var scale = max(1, preferred)
        while scale > 1 && BitmapFont.width(of: text, scale: scale) > available { scale -= 1 }
        return (BitmapFont.truncated(text, toWidth: available, scale: scale), scale)
    }

    static func prepare(_ model: OverlayModel, width w: Int, height h: Int) -> (OverlayLayout, Texts) {
        let s = textScale(height: h)
        let m = max(4, min(w, h) / 60)
        let cell = BitmapFont.cellHeight * s
        let cap = BitmapFont.capHeight * s
        let rowStep = cell + 3 * s
        var layout = OverlayLayout(width: w, height: h, textScale: s, margin: m)
        var t = Texts()

        if model.grid {
            let thickness = max(1, h / 720)
            layout.gridLines = [
                Rect(x: w / 3, y: 0, width: thickness, height: h),
                Rect(x: 2 * w / 3, y: 0, width: thickness, height: h),
                Rect(x: 0, y: h / 3, width: w, height: thickness),
                Rect(x: 0, y: 2 * h / 3, width: w, height: thickness),
            ]
        }

        // Video: REC dot and time top centre, or — when the look's name and the lens would not
        // fit beside it (a small panel) — on the second row at the right. Top right: the lens.
        // The name gets what is left.
        let secondRow = m + rowStep
        var leftEnd = w - m
        var rightStart = m
        if model.mode == .video {
            t.recording = model.recording ? "REC \(timeText(model.elapsedSeconds))" : "VIDEO"
            let dot = model.recording ? cap + 2 * s : 0
            let groupWidth = dot + inkWidth(t.recording, scale: s)
            let centreX = (w - groupWidth) / 2
            let nameNeeds = model.presetName.isEmpty ? 0
                : inkWidth(model.presetName, scale: s) + 3 * s + inkWidth(model.isPro ? "PRO" : "FREE", scale: s) + 4 * s
            let lensNeeds = model.lensLabel.isEmpty ? 0 : inkWidth(model.lensLabel, scale: s)
            if m + nameNeeds + 4 * s <= centreX && centreX + groupWidth + 4 * s + lensNeeds <= w - m {
                layout.recording = Rect(x: centreX - s, y: m - s, width: groupWidth + 2 * s, height: cell + 2 * s)
                leftEnd = centreX - 4 * s
                rightStart = centreX + groupWidth + 4 * s
            } else {
                layout.recording = Rect(x: w - m - groupWidth - s, y: secondRow - s, width: groupWidth + 2 * s,
                                        height: cell + 2 * s)
            }
        }
        if !model.lensLabel.isEmpty {
            let room = max(0, min(w / 2 - m, w - m - rightStart))
            t.lens = BitmapFont.truncated(model.lensLabel, toWidth: room, scale: s)
            let rect = textRect(t.lens, at: Point(x: w - m - inkWidth(t.lens, scale: s), y: m), scale: s)
            layout.lensLabel = rect
            leftEnd = min(leftEnd, rect.x - 3 * s)
        }

        // Top left: preset name and tier badge; AE-L / AF-L below.
        if !model.presetName.isEmpty {
            t.tier = model.isPro ? "PRO" : "FREE"
            let badgeWidth = inkWidth(t.tier, scale: s) + 4 * s
            let nameRoom = max(0, leftEnd - m - badgeWidth - 3 * s)
            t.presetName = BitmapFont.truncated(model.presetName, toWidth: nameRoom, scale: s)
            layout.presetName = textRect(t.presetName, at: Point(x: m, y: m), scale: s)
            let badgeX = m + inkWidth(t.presetName, scale: s) + 3 * s
            layout.tierBadge = Rect(x: badgeX, y: m - s, width: badgeWidth, height: cap + 2 * s)
        }
        var badgeX = m
        for (locked, label) in [(model.aeLocked, "AE-L"), (model.afLocked, "AF-L")] where locked {
            let rect = Rect(x: badgeX, y: secondRow - s, width: inkWidth(label, scale: s) + 4 * s, height: cap + 2 * s)
            if label == "AE-L" { layout.aeBadge = rect } else { layout.afBadge = rect }
            badgeX = rect.maxX + 2 * s
        }

        // What still fits below the lens: photos (photo mode) or recording time (video mode).
        if model.mode == .photo, let shots = model.shotsRemaining {
            t.shots = "\(max(0, shots)) left"
        } else if model.mode == .video, let seconds = model.secondsRemaining {
            t.shots = "\(Self.timeText(seconds)) left"
        }
        if !t.shots.isEmpty {
            // Below REC when that had to move to the second row.
            let row = layout.recording.map { $0.y == secondRow - s } == true ? secondRow + rowStep : secondRow
            layout.shotsRemaining = textRect(t.shots, at: Point(x: w - m - inkWidth(t.shots, scale: s), y: row),
                                             scale: s)
        }

        // Bottom: EV scale with its value; intensity above it.
        var bottomRow = h - m - cell
        if model.evScaleVisible {
            t.ev = evText(model.ev)
            let step = max(4, w / 18)  // px between whole stops: the scale is a third of the width
            let scaleWidth = 6 * step + 1
            let groupWidth = scaleWidth + 3 * s + inkWidth(t.ev, scale: s)
            let x0 = (w - groupWidth) / 2
            layout.evScale = Rect(x: x0 - s, y: bottomRow - s, width: scaleWidth + 2 * s, height: cap + 2 * s)
            let clamped = model.ev.isFinite ? min(max(model.ev, -3), 3) : 0
            let position = x0 + Int(((clamped + 3) / 6 * Double(scaleWidth - 1)).rounded())
            let markerWidth = max(3, 2 * s) | 1
            layout.evMarker = Rect(x: position - markerWidth / 2, y: bottomRow - 2 * s, width: markerWidth, height: cap + 3 * s)
            layout.evText = textRect(t.ev, at: Point(x: x0 + scaleWidth + 3 * s, y: bottomRow), scale: s)
            bottomRow -= rowStep
        }
        if model.intensityVisible || model.dial == .intensity {
            t.intensity = intensityText(model.intensity)
            let x = (w - inkWidth(t.intensity, scale: s)) / 2
            layout.intensityText = textRect(t.intensity, at: Point(x: x, y: bottomRow), scale: s)
        }

        // Focus reticle.
        if let focus = model.focusPoint, focus.x.isFinite, focus.y.isFinite {
            let side = max(12, h / 8)
            let cx = Int((min(max(focus.x, 0), 1) * Double(w)).rounded())
            let cy = Int((min(max(focus.y, 0), 1) * Double(h)).rounded())
            layout.reticle = Rect(x: cx - side / 2, y: cy - side / 2, width: side, height: side)
        }

        // Shutter side: a bar on the edge and an arrow pointing at it.
        if model.shutterMarkerVisible {
            let bar = max(3, 2 * s)
            let arrow = max(4, h / 24)
            let markerHeight = max(2 * arrow, h / 6)
            let total = bar + s + arrow
            let x = model.shutterOnRight ? w - total : 0
            layout.shutterMarker = Rect(x: x, y: (h - markerHeight) / 2, width: total, height: markerHeight)
        }

        // Watermark, below the middle.
        if model.watermark {
            let (_, scale) = fit(watermarkText, preferred: 2 * s, available: w - 2 * m)
            t.watermarkScale = scale
            let x = (w - inkWidth(watermarkText, scale: scale)) / 2
            let y = h * 7 / 10 - BitmapFont.cellHeight * scale / 2
            layout.watermark = textRect(watermarkText, at: Point(x: x, y: y), scale: scale)
        }

        // Banner across the middle, prompt across the upper third.
        if let banner = model.banner, !banner.isEmpty {
            (t.banner, t.bannerScale) = fit(banner, preferred: s + 1, available: w - 2 * m)
            let band = BitmapFont.cellHeight * t.bannerScale + 4 * t.bannerScale
            layout.banner = Rect(x: 0, y: h / 2 - band / 2, width: w, height: band)
        }
        if let prompt = model.prompt, !prompt.isEmpty {
            (t.prompt, t.promptScale) = fit(prompt, preferred: s, available: w - 2 * m)
            let band = BitmapFont.cellHeight * t.promptScale + 4 * t.promptScale
            layout.prompt = Rect(x: 0, y: h * 3 / 10 - band / 2, width: w, height: band)
        }
        prepareBooth(model, &layout, &t)
        return (layout, t)
    }

    /// The photobooth's elements: the countdown numeral, the idle screen's title and line, the
    /// QR code and its caption.
    private static func prepareBooth(_ model: OverlayModel, _ layout: inout OverlayLayout, _ t: inout Texts) {
        let w = layout.width, h = layout.height, m = layout.margin, s = layout.textScale
        if let n = model.countdown {
            t.countdown = "\(n)"
            // Numerals two fifths of the screen tall, below the prompt's band ("Photo 2 of 4").
            t.countdownScale = max(s, BitmapFont.scale(forCapHeight: h * 2 / 5))
            let (text, scale) = fit(t.countdown, preferred: t.countdownScale, available: w - 2 * m)
            (t.countdown, t.countdownScale) = (text, scale)
            let x = (w - inkWidth(text, scale: scale)) / 2, y = h * 3 / 5 - BitmapFont.capHeight * scale / 2
            layout.countdown = textRect(text, at: Point(x: x, y: y), scale: scale)
        }
        if let title = model.attractTitle, !title.isEmpty {
            (t.attractTitle, t.attractTitleScale) = fit(title, preferred: max(s, BitmapFont.scale(forCapHeight: h / 10)), available: w - 2 * m)
            let x = (w - inkWidth(t.attractTitle, scale: t.attractTitleScale)) / 2
            let y = h * 2 / 5 - BitmapFont.capHeight * t.attractTitleScale
            layout.attractTitle = textRect(t.attractTitle, at: Point(x: x, y: y), scale: t.attractTitleScale)
        }
        if let line = model.attractLine, !line.isEmpty {
            (t.attractLine, t.attractLineScale) = fit(line, preferred: max(s, BitmapFont.scale(forCapHeight: h / 16)), available: w - 2 * m)
            let x = (w - inkWidth(t.attractLine, scale: t.attractLineScale)) / 2
            let y = h * 3 / 5
            layout.attractLine = textRect(t.attractLine, at: Point(x: x, y: y), scale: t.attractLineScale)
        }
        if let code = model.qrCode {
            // A square of about 40 % of the height (phones read it across a booth), whole pixels
            // per module, with the 4-module quiet zone the standard asks for.
            let modules = code.size + 8
            t.qrModule = max(2, min(h * 2 / 5, w / 3) / modules)
            let side = modules * t.qrModule
            let rect = Rect(x: w - m - side, y: h - m - side, width: side, height: side)
            layout.qrCode = rect
            if let caption = model.qrCaption, !caption.isEmpty {
                (t.qrCaption, t.captionScale) = fit(caption, preferred: s, available: w - 2 * m)
                let x = max(m, rect.maxX - inkWidth(t.qrCaption, scale: t.captionScale))
                layout.qrCaption = textRect(t.qrCaption, at: Point(x: x, y: rect.y - BitmapFont.cellHeight * t.captionScale - 2 * s),
                                            scale: t.captionScale)
            }
        }
    }

    // MARK: - Drawing (no allocation)

    private mutating func render() {
        let s = layout.textScale
        let outline = TextStyle.outline(.black)
        let highlight = Color.yellow

        for line in layout.gridLines {
            canvas.fill(line, color: .white, opacity: 0.45)
        }
        if let rect = layout.reticle {
            drawReticle(rect, color: model.afLocked ? .green : .white)
        }
        if let rect = layout.presetName {
            canvas.draw(text: texts.presetName, at: Point(x: rect.x + s, y: rect.y + s), scale: s, color: .white, style: outline)
        }
        if let rect = layout.tierBadge {
            let color = model.isPro ? Color.orange : Color.lightGray
            drawBadge(texts.tier, in: rect, color: color)
        }
        if let rect = layout.aeBadge { drawBadge("AE-L", in: rect, color: highlight) }
        if let rect = layout.afBadge { drawBadge("AF-L", in: rect, color: highlight) }
        if let rect = layout.lensLabel {
            canvas.draw(text: texts.lens, at: Point(x: rect.x + s, y: rect.y + s), scale: s, color: .white, style: outline)
        }
        if let rect = layout.shotsRemaining {
            let empty = model.mode == .photo ? model.shotsRemaining == 0 : model.secondsRemaining == 0
            let color = empty ? Color.red : Color.white
            canvas.draw(text: texts.shots, at: Point(x: rect.x + s, y: rect.y + s), scale: s, color: color, style: outline)
        }
        if let rect = layout.recording {
            var x = rect.x + s
            if model.recording {
                let diameter = BitmapFont.capHeight * s
                drawDot(Rect(x: x, y: rect.y + s, width: diameter, height: diameter), color: .red)
                x += diameter + 2 * s
            }
            canvas.draw(text: texts.recording, at: Point(x: x, y: rect.y + s), scale: s,
                        color: model.recording ? .red : .white, style: outline)
        }
        if let rect = layout.evScale {
            drawEVScale(rect)
        }
        if let rect = layout.evMarker {
            canvas.fill(rect.insetBy(dx: -1, dy: -1), color: .black, opacity: 0.6)
            canvas.fill(rect, color: model.dial == .ev ? highlight : .white)
        }
        if let rect = layout.evText {
            canvas.draw(text: texts.ev, at: Point(x: rect.x + s, y: rect.y + s), scale: s,
                        color: model.dial == .ev ? highlight : .white, style: outline)
        }
        if let rect = layout.intensityText {
            canvas.draw(text: texts.intensity, at: Point(x: rect.x + s, y: rect.y + s), scale: s,
                        color: model.dial == .intensity ? highlight : .white, style: outline)
        }
        if let rect = layout.shutterMarker {
            drawShutterMarker(rect)
        }
        if let rect = layout.watermark {
            let ws = texts.watermarkScale
            canvas.draw(text: OverlayRenderer.watermarkText, at: Point(x: rect.x + ws, y: rect.y + ws), scale: ws,
                        color: Color(gray: 225), style: .shadow(.black))
        }
        if let rect = layout.prompt {
            canvas.fill(rect, color: .black, opacity: 0.6)
            canvas.draw(text: texts.prompt, centeredIn: rect, scale: texts.promptScale, color: .white)
        }
        if let rect = layout.banner {
            canvas.fill(rect, color: .black, opacity: 0.72)
            canvas.draw(text: texts.banner, centeredIn: rect, scale: texts.bannerScale, color: .white)
        }
        renderBooth()
    }

    private mutating func renderBooth() {
        drawOutlined(texts.countdown, in: layout.countdown, scale: texts.countdownScale, color: .white)
        drawOutlined(texts.attractTitle, in: layout.attractTitle, scale: texts.attractTitleScale, color: .white)
        drawOutlined(texts.attractLine, in: layout.attractLine, scale: texts.attractLineScale, color: .yellow)
        drawOutlined(texts.qrCaption, in: layout.qrCaption, scale: texts.captionScale, color: .white)
        if let rect = layout.qrCode, let code = model.qrCode {
            canvas.fill(rect, color: .white)
            let px = texts.qrModule, quiet = 4 * px
            for y in 0 ..< code.size {
                for x in 0 ..< code.size where code.isDark(x: x, y: y) {
                    canvas.fill(Rect(x: rect.x + quiet + x * px, y: rect.y + quiet + y * px, width: px, height: px), color: .black)
                }
            }
        }
    }

    /// Outlined text in its layout rect (laid out by `textRect`: the outline's margin inside).
    private mutating func drawOutlined(_ text: String, in rect: Rect?, scale: Int, color: Color) {
        guard let rect else { return }
        canvas.draw(text: text, at: Point(x: rect.x + scale, y: rect.y + scale), scale: scale, color: color, style: .outline(.black))
    }

    /// A small box outlined in `color` with `text` in it.
    private mutating func drawBadge(_ text: String, in rect: Rect, color: Color) {
        let s = layout.textScale
        canvas.fill(rect, color: .black, opacity: 0.55)
        canvas.strokeRect(rect, color: color, width: max(1, s / 2))
        canvas.draw(text: text, at: Point(x: rect.x + 2 * s, y: rect.y + s), scale: s, color: color)
    }

    /// Four corner brackets.
    private mutating func drawReticle(_ r: Rect, color: Color) {
        let t = max(1, layout.height / 360)
        let arm = max(4, r.width / 4)
        let shade = Color.black
        for corner in 0 ..< 4 {  // (no array literal here: drawing must not allocate)
            let dx = corner & 1 == 0 ? 1 : -1, dy = corner < 2 ? 1 : -1
            let x = dx > 0 ? r.x : r.maxX, y = dy > 0 ? r.y : r.maxY
            let horizontal = Rect(x: dx > 0 ? x : x - arm, y: dy > 0 ? y : y - t, width: arm, height: t)
            let vertical = Rect(x: dx > 0 ? x : x - t, y: dy > 0 ? y : y - arm, width: t, height: arm)
            canvas.fill(horizontal.insetBy(dx: -1, dy: -1), color: shade, opacity: 0.5)
            canvas.fill(vertical.insetBy(dx: -1, dy: -1), color: shade, opacity: 0.5)
            canvas.fill(horizontal, color: color)
            canvas.fill(vertical, color: color)
        }
    }

    /// A filled disc inscribed in `r`.
    private mutating func drawDot(_ r: Rect, color: Color) {
        let radius = Double(r.width) / 2
        for row in 0 ..< r.height {
            let dy = Double(row) + 0.5 - radius
            let half = (radius * radius - dy * dy).squareRoot()
            let x0 = Int((radius - half).rounded())
            let x1 = Int((radius + half).rounded())
            canvas.fill(Rect(x: r.x + x0, y: r.y + row, width: x1 - x0, height: 1), color: color)
        }
    }

    /// Ticks at −3…+3 on a translucent dark strip; zero is taller.
    private mutating func drawEVScale(_ rect: Rect) {
        let s = layout.textScale
        canvas.fill(rect, color: .black, opacity: 0.35)
        let x0 = rect.x + s, top = rect.y + s
        let scaleWidth = rect.width - 2 * s
        let tall = BitmapFont.capHeight * s
        let line = max(1, s / 2)
        let bottom = top + tall
        canvas.fill(Rect(x: x0, y: bottom - line, width: scaleWidth, height: line), color: .white)
        for i in 0 ... 6 {
            let x = x0 + i * (scaleWidth - 1) / 6
            let height = i == 3 ? tall : tall / 2
            canvas.fill(Rect(x: x - line / 2, y: bottom - height, width: line, height: height), color: .white)
        }
    }

    /// The bar on the edge and an arrow beside it pointing at the edge.
    private mutating func drawShutterMarker(_ rect: Rect) {
        let s = layout.textScale
        let bar = max(3, 2 * s)
        let arrow = rect.width - bar - s
        let onRight = model.shutterOnRight
        let barRect = Rect(x: onRight ? rect.maxX - bar : rect.x, y: rect.y, width: bar, height: rect.height)
        canvas.fill(barRect, color: .white, opacity: 0.85)
        let midY = rect.midY
        for i in 0 ..< arrow {
            // Column i counted from the tip (next to the bar) outwards: the arrow widens away from the edge.
            let x = onRight ? barRect.x - s - 1 - i : barRect.maxX + s + i
            let half = i / 2 + 1
            canvas.fill(Rect(x: x, y: midY - half, width: 1, height: 2 * half), color: .white, opacity: 0.85)
        }
    }
}
