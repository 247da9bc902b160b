/// What a person (or a script) asks of the camera, whichever device it came from: GPIO
/// buttons, the rotary encoder, a touch screen, the keyboard of the desktop window or the
/// control socket all become these. The controller turns them into state changes.
public enum InputEvent: Sendable, Equatable {
    /// The physical button on the left or right of the body. Which one is the shutter
    /// depends on handedness; the other one is next-filter.
    case leftButton
    case rightButton
    /// The shutter itself (keyboard space, socket `capture`).
    case shutter
    /// The rotary encoder turned by this many detents (positive: clockwise).
    case encoderTurned(Int)
    /// The encoder's push switch: toggles the dial between EV and intensity.
    case encoderPressed
    /// Photo ⇄ video.
    case mode
    case nextLens
    case nextFilter
    case previousFilter
    case aeLock
    case afLock
    case grid
    case handedness
    /// A tap on the preview at normalised coordinates (0…1, origin top left, after rotation).
    case focusTap(x: Double, y: Double)
    /// The trigger input's edge (a GPIO line of a headless rig), at its kernel timestamp
    /// (CLOCK_MONOTONIC, ns): the photo is the frame exposed from that moment on.
    case trigger(atNs: UInt64)
}
