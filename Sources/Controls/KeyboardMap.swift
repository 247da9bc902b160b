/// What the keys of the desktop window (and key names sent to the control socket) mean.
///
/// | key | event |
/// |---|---|
/// | `[` | left button (`leftButton`) |
/// | `]` | right button (`rightButton`) |
/// | `space` | shutter |
/// | `up` / `down` | encoder turned +1 / −1 |
/// | `return` (or `enter`) | encoder pressed (EV ⇄ intensity) |
/// | `m` | photo ⇄ video (`mode`) |
/// | `l` | next lens |
/// | `f` | next filter |
/// | `shift+f` or `b` | previous filter |
/// | `a` | AE lock |
/// | `d` | AF lock |
/// | `g` | grid |
/// | `h` | handedness |
///
/// Key names are matched case-insensitively, as SDL names them ("Space", "Return", "Up") or
/// as typed: a single uppercase letter means that letter with shift (`F` = `shift+f`), and
/// `" "` is `space`. Modifiers are written before the key, joined with `+` (`shift+f`);
/// a key with a modifier that has no binding of its own means nothing (`ctrl+l` → nil).
public struct KeyboardMap: Sendable, Equatable {
    /// Normalised key name (see `normalise`) → event.
    public var bindings: [String: InputEvent]

    /// The table above.
    public static let standard = KeyboardMap(bindings: [
        "[": .leftButton,
        "]": .rightButton,
        "space": .shutter,
        "up": .encoderTurned(1),
        "down": .encoderTurned(-1),
        "return": .encoderPressed,
        "m": .mode,
        "l": .nextLens,
        "f": .nextFilter,
        "shift+f": .previousFilter,
        "b": .previousFilter,
        "a": .aeLock,
        "d": .afLock,
        "g": .grid,
        "h": .handedness,
    ])

    /// Keys whose event repeats while the key is held (the encoder); a held shutter or lock
    /// key must fire once.
    public static let repeatingEvents: [InputEvent] = [.encoderTurned(1), .encoderTurned(-1)]

    public init(bindings: [String: InputEvent]) {
        var normalised: [String: InputEvent] = [:]
        for (key, event) in bindings { normalised[Self.normalise(key)] = event }
        self.bindings = normalised
    }

    public init() { self = .standard }

    /// The event `key` stands for, or nil when it means nothing.
    public func event(forKey key: String) -> InputEvent? {
        bindings[Self.normalise(key)]
    }

    /// Whether holding `key` down should repeat its event.
    public func repeats(key: String) -> Bool {
        guard let event = event(forKey: key) else { return false }
        return Self.repeatingEvents.contains(event)
    }

    /// Lowercased, modifiers sorted and joined with `+`, aliases resolved: "Shift+F" and "F"
    /// → "shift+f", " " and "Space" → "space", "Enter" and "Keypad Enter" → "return".
    public static func normalise(_ key: String) -> String {
        if key == " " { return "space" }
        var parts = key.split(separator: "+", omittingEmptySubsequences: false).map {
            $0.trimmedOfSpaces()
        }
        // "+" itself, or "shift++".
        if parts.count > 1, parts.last == "", parts[parts.count - 2] == "" {
            parts.removeLast(2)
            parts.append("+")
        }
        guard var name = parts.popLast(), !name.isEmpty else { return key.lowercased() }
        var modifiers = Set(parts.map { $0.lowercased() }.filter { !$0.isEmpty })
        if name.count == 1, let c = name.first, c.isUppercase {
            modifiers.insert("shift")
        }
        name = name.lowercased()
        switch name {
        case "enter", "keypad enter", "kp_enter", "return2": name = "return"
        case " ", "spacebar": name = "space"
        case "leftbracket", "left bracket": name = "["
        case "rightbracket", "right bracket": name = "]"
        default: break
        }
        return (modifiers.sorted() + [name]).joined(separator: "+")
    }
}

private extension Substring {
    func trimmedOfSpaces() -> String {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
