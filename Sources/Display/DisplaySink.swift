import Controls
import Raster

/// Where composed frames go: a KMS display on the Pi, a desktop window, or nowhere
/// (headless). `show` copies or flips the frame; it must not keep a reference to it.
public protocol DisplaySink: AnyObject {
    /// A short name for logs ("headless 800×480", "SDL window").
    var name: String { get }
    var width: Int { get }
    var height: Int { get }
    /// Shows a frame of width × height.
    func show(_ frame: RGBImage) throws
    /// Input that arrived through the display (keyboard and mouse of a window; nothing for
    /// headless). Non-blocking.
    func pollEvents() -> [InputEvent]
    /// True once the user closed the window (the daemon then exits).
    var closeRequested: Bool { get }
}
