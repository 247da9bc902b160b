/// A device that produces input events on its own thread (GPIO buttons and the encoder, a
/// touch screen); the controller drains every source once per loop, on its own thread.
public protocol InputSource: AnyObject {
    /// A short name for logs ("GPIO buttons on pinctrl-bcm2835").
    var name: String { get }
    /// The events that arrived since the last call, oldest first. Never blocks.
    func drain() -> [InputEvent]
}

/// The controls wired to the board's GPIO header, by the names board files and the
/// configuration use (`boards/*.json`, `gpio.pins`).
public enum ControlPin: String, Sendable, CaseIterable, Comparable {
    case shutterLeft = "shutter-left"
    case shutterRight = "shutter-right"
    case encoderA = "encoder-a"
    case encoderB = "encoder-b"
    case encoderSwitch = "encoder-switch"
    case mode
    case lens
    case filter
    case aeLock = "ae-lock"
    case afLock = "af-lock"

    /// What pressing it means; nil for the encoder's A and B phases (they turn the dial).
    public var pressEvent: InputEvent? {
        switch self {
        case .shutterLeft: return .leftButton
        case .shutterRight: return .rightButton
        case .encoderSwitch: return .encoderPressed
        case .mode: return .mode
        case .lens: return .nextLens
        case .filter: return .nextFilter
        case .aeLock: return .aeLock
        case .afLock: return .afLock
        case .encoderA, .encoderB: return nil
        }
    }

    public static func < (a: ControlPin, b: ControlPin) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}
