import Glibc
import System

/// Every error the Display module throws. `description` is one line: which display, what was
/// being done, and the problem (SDL's own message where SDL failed).
public enum DisplayError: Error, CustomStringConvertible, Equatable, Sendable {
    /// An SDL call failed. `action` names the call and what it was for
    /// ("SDL_Init(video)", "SDL_CreateWindow 800×480"); `message` is `SDL_GetError()`.
    case sdl(action: String, message: String)
    /// `show` was handed a frame whose size is not the display's.
    case frameSize(display: String, expectedWidth: Int, expectedHeight: Int, width: Int, height: Int)
    /// `snapshot` was asked for before any frame was shown.
    case noFrame(display: String)
    /// Dimensions that no display can have (zero or negative, or absurdly large).
    case invalidSize(display: String, width: Int, height: Int)
    /// A DRM/KMS call failed: the device ("/dev/dri/card0"), what was being done
    /// ("drmModeSetCrtc HDMI-A-1 1920×1080"), and errno.
    case drm(device: String, action: String, errno: Errno)
    /// Another process (a compositor, another loopixd) is DRM master of the device.
    case drmMaster(device: String, errno: Errno)
    /// No card has a connected connector (or the one asked for); `detail` says what was found.
    case noConnectedDisplay(detail: String)
    /// The connector has no mode matching the configuration.
    case noMode(device: String, connector: String, asked: String, available: String)

    public var description: String {
        switch self {
        case .sdl(let action, let message):
            return "SDL: \(action) failed: \(message.isEmpty ? "no reason given" : message)"
        case .frameSize(let display, let ew, let eh, let w, let h):
            return "\(display): show: frame is \(w)×\(h), the display is \(ew)×\(eh)"
        case .noFrame(let display):
            return "\(display): snapshot: no frame has been shown yet"
        case .invalidSize(let display, let w, let h):
            return "\(display): create: \(w)×\(h) is not a valid display size"
        case .drm(let device, let action, let code):
            return "\(device): \(action) failed: \(code)"
        case .drmMaster(let device, let code):
            return "\(device): another program holds the display (DRM master): \(code)"
        case .noConnectedDisplay(let detail):
            return "KMS: no connected display: \(detail)"
        case .noMode(let device, let connector, let asked, let available):
            return "\(device): \(connector): no mode \(asked) (available: \(available))"
        }
    }
}

/// The largest side any display may have (8K and then some).
let maximumDisplaySide = 16_384
