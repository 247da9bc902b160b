import Canvas

/// Where `OverlayRenderer` draws each element of a model, in pixels of the frame. Every rect
/// covers all the pixels its element may touch (text cells plus their outline); an element
/// that is not shown is nil (the grid: empty).
///
/// Tests and the daemon's end-to-end checks use it to look for pixels "where they belong".
public struct OverlayLayout: Sendable, Equatable {
    public var width: Int
    public var height: Int
    /// The font scale for ordinary text (`BitmapFont` pixels per font pixel).
    public var textScale: Int
    /// The distance kept from the frame's edges.
    public var margin: Int

    /// The rule-of-thirds lines: vertical at x = w/3 and 2w/3, then horizontal at y = h/3 and 2h/3.
    public var gridLines: [Rect] = []
    public var presetName: Rect?
    public var tierBadge: Rect?
    public var aeBadge: Rect?
    public var afBadge: Rect?
    public var lensLabel: Rect?
    /// "1234 left" (photos) or "12:34 left" (video), below the lens.
    public var shotsRemaining: Rect?
    /// The red dot and "REC 01:23" (or "VIDEO"), top centre.
    public var recording: Rect?
    /// The EV scale's ticks (−3 at the left edge, +3 at the right).
    public var evScale: Rect?
    /// The marker on the scale at the current EV.
    public var evMarker: Rect?
    /// "+1.3 EV", right of the scale.
    public var evText: Rect?
    /// "Intensity 70 %", above the scale.
    public var intensityText: Rect?
    public var reticle: Rect?
    public var shutterMarker: Rect?
    public var watermark: Rect?
    /// The dark band behind the banner text (full width).
    public var banner: Rect?
    /// The dark band behind the prompt (full width).
    public var prompt: Rect?
    /// The countdown's numeral (photobooth).
    public var countdown: Rect?
    /// The idle screen's title and line (photobooth).
    public var attractTitle: Rect?
    public var attractLine: Rect?
    /// The QR code's white square, quiet zone included, and its caption.
    public var qrCode: Rect?
    public var qrCaption: Rect?

    /// Every element that is shown, with a name (for test messages and debugging).
    public var elements: [(name: String, rect: Rect)] {
        let all: [(String, Rect?)] = [
            ("presetName", presetName), ("tierBadge", tierBadge), ("aeBadge", aeBadge), ("afBadge", afBadge),
            ("lensLabel", lensLabel), ("shotsRemaining", shotsRemaining), ("recording", recording),
            ("evScale", evScale), ("evMarker", evMarker), ("evText", evText), ("intensityText", intensityText),
            ("reticle", reticle), ("shutterMarker", shutterMarker), ("watermark", watermark),
            ("banner", banner), ("prompt", prompt), ("countdown", countdown), ("attractTitle", attractTitle),
            ("attractLine", attractLine), ("qrCode", qrCode), ("qrCaption", qrCaption),
        ]
        return all.compactMap { name, rect in rect.map { (name, $0) } }
            + gridLines.enumerated().map { ("grid\($0.offset)", $0.element) }
    }
}
