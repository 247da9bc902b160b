import Controls
import Raster
import ImageFiles

/// A display with no screen: it keeps the last frame it was shown, for tests, the daemon's
/// end-to-end checks (`snapshot`) and headless capture rigs.
///
/// `show` copies the frame into a buffer allocated once in `init`, so showing does not
/// allocate — unless a caller still holds a copy of `lastFrame` from before, in which case
/// that caller's copy is kept intact (copy-on-write) and the buffer is allocated afresh once.
public final class HeadlessDisplay: DisplaySink {
    public let width: Int
    public let height: Int
    public var name: String { "headless \(width)×\(height)" }
    /// The last frame shown (black before the first).
    public private(set) var lastFrame: RGBImage
    /// How many frames have been shown.
    public private(set) var framesShown = 0
    /// Never true: there is no window to close.
    public var closeRequested: Bool { false }

    public init(width: Int, height: Int) throws {
        guard width > 0, height > 0, width <= maximumDisplaySide, height <= maximumDisplaySide else {
            throw DisplayError.invalidSize(display: "headless", width: width, height: height)
        }
        self.width = width
        self.height = height
        self.lastFrame = RGBImage(width: width, height: height)
    }

    public func show(_ frame: RGBImage) throws {
        guard frame.width == width, frame.height == height else {
            throw DisplayError.frameSize(display: name, expectedWidth: width, expectedHeight: height,
                                         width: frame.width, height: frame.height)
        }
        lastFrame.pixels.withUnsafeMutableBytes { destination in
            frame.pixels.withUnsafeBytes { source in
                destination.copyMemory(from: source)
            }
        }
        framesShown += 1
    }

    /// Headless displays have no input of their own.
    public func pollEvents() -> [InputEvent] { [] }

    /// Writes the last shown frame to `path` as PNG, replacing a file of that name (atomically).
    /// Throws `DisplayError.noFrame` before the first frame, else the writer's `ImageFileError`
    /// (which names the path and what failed).
    public func snapshot(to path: String) throws {
        guard framesShown > 0 else { throw DisplayError.noFrame(display: name) }
        try ImageWriter.write(lastFrame, to: path, format: .png, replace: true)
    }
}
