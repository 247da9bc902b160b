/// A device that produces input events (touch screen, keyboard, GPIO buttons…), drained by
/// the controller once per loop. `drain` must not block.
public protocol InputSource: AnyObject {
    func drain() -> [InputEvent]
}
