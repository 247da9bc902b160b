import Controls

/// The desktop window's keyboard, until the shared `KeyboardMap` lands in Controls:
///
/// | key | event |
/// |---|---|
/// | `[` / `]` | left / right button |
/// | space | shutter |
/// | ↑ / ↓ | encoder +1 / −1 |
/// | return | encoder pressed |
/// | `m` | photo ⇄ video |
/// | `l` | next lens |
/// | `f` / `b` | next / previous filter |
/// | `a` / `d` | AE lock / AF lock |
/// | `g` | grid |
/// | `h` | handedness |
public enum DisplayKeys {
    /// A key as the window sees it.
    public enum Key: Sendable, Hashable {
        /// A printable key, as its unshifted character.
        case character(Unicode.Scalar)
        case up
        case down
        case enter
    }

    /// The event for `key`, or nil if the key means nothing.
    public static func event(for key: Key) -> InputEvent? {
        switch key {
        case .up: return .encoderTurned(1)
        case .down: return .encoderTurned(-1)
        case .enter: return .encoderPressed
        case .character(let c):
            switch c {
            case "[": return .leftButton
            case "]": return .rightButton
            case " ": return .shutter
            case "m", "M": return .mode
            case "l", "L": return .nextLens
            case "f", "F": return .nextFilter
            case "b", "B": return .previousFilter
            case "a", "A": return .aeLock
            case "d", "D": return .afLock
            case "g", "G": return .grid
            case "h", "H": return .handedness
            default: return nil
            }
        }
    }

    /// Whether holding the key down should repeat its event (the encoder keys do; a held
    /// shutter or lock key must not fire again).
    public static func repeats(_ key: Key) -> Bool {
        key == .up || key == .down
    }
}
