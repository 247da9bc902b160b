import BoardIO

/// A light the booth switches: a flash for each exposure or a ring light for a session. The
/// daemon's is the board's `flash` GPIO output line; tests record what they are told.
public protocol FlashLight: AnyObject {
    /// On (true) or off; throws when the line cannot be driven.
    func set(_ on: Bool) throws
}

extension GPIOOutput: FlashLight {}
