/// Maps a touch screen's raw coordinates to the upright picture's normalised coordinates:
/// the axis ranges come from the device's absinfo (ABS_X/ABS_Y or ABS_MT_POSITION_X/Y), the
/// panel's rotation turns them back (see `ScreenRotation.unrotate`).
public struct TouchMapping: Sendable, Equatable {
    public var minX: Int32
    public var maxX: Int32
    public var minY: Int32
    public var maxY: Int32
    public var rotation: ScreenRotation

    public init(minX: Int32, maxX: Int32, minY: Int32, maxY: Int32, rotation: ScreenRotation) {
        self.minX = minX
        self.maxX = maxX
        self.minY = minY
        self.maxY = maxY
        self.rotation = rotation
    }

    /// The picture's normalised point (0…1, origin top left) under a raw touch point.
    public func map(rawX: Int32, rawY: Int32) -> (x: Double, y: Double) {
        func normalise(_ v: Int32, _ lo: Int32, _ hi: Int32) -> Double {
            guard hi > lo else { return 0.5 }
            let t = (Double(v) - Double(lo)) / (Double(hi) - Double(lo))
            return min(1, max(0, t))
        }
        let u = normalise(rawX, minX, maxX)
        let v = normalise(rawY, minY, maxY)
        return rotation.unrotate(panelX: u, panelY: v)
    }
}

/// Linux key codes (input-event-codes.h) → the key names `KeyboardMap` understands.
public enum EvdevKeyNames {
    public static let names: [UInt16: String] = {
        var n: [UInt16: String] = [
            1: "escape", 26: "[", 27: "]", 28: "return", 96: "return", 57: "space",
            103: "up", 108: "down", 105: "left", 106: "right",
        ]
        let rows: [(UInt16, String)] = [(16, "qwertyuiop"), (30, "asdfghjkl"), (44, "zxcvbnm")]
        for (start, letters) in rows {
            for (i, c) in letters.enumerated() { n[start + UInt16(i)] = String(c) }
        }
        let digits: [(UInt16, String)] = [(2, "1"), (3, "2"), (4, "3"), (5, "4"), (6, "5"), (7, "6"), (8, "7"), (9, "8"), (10, "9"), (11, "0")]
        for (code, d) in digits { n[code] = d }
        return n
    }()
    /// KEY_LEFTSHIFT, KEY_RIGHTSHIFT.
    public static let shiftKeys: Set<UInt16> = [42, 54]

    public static func name(code: UInt16, shift: Bool) -> String? {
        guard let base = names[code] else { return nil }
        return shift ? "shift+\(base)" : base
    }
}
