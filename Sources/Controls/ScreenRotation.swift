/// How a panel is mounted: the clockwise angle by which the upright picture is turned on its
/// way into the panel's scan-out buffer (90 or 270 for a portrait panel used in landscape).
/// Touch coordinates, which a panel reports in its own orientation, are turned back by the
/// same angle (`unrotate`).
public enum ScreenRotation: Int, Sendable, Equatable, CaseIterable {
    case none = 0
    case quarter = 90
    case half = 180
    case threeQuarters = 270

    public init?(degrees: Int) { self.init(rawValue: degrees) }

    public var degrees: Int { rawValue }

    /// Whether the panel's width is the picture's height.
    public var swapsAxes: Bool { self == .quarter || self == .threeQuarters }

    /// Maps a normalised point on the panel (0…1, origin at the panel's own top left) to the
    /// upright picture's normalised coordinates (origin top left).
    public func unrotate(panelX u: Double, panelY v: Double) -> (x: Double, y: Double) {
        switch self {
        case .none: return (u, v)
        case .quarter: return (v, 1 - u)
        case .half: return (1 - u, 1 - v)
        case .threeQuarters: return (1 - v, u)
        }
    }
}
