import CSDL2
import Controls
import Raster
import Foundation

/// A desktop window for developing on a laptop (SDL2): shows the composed frames and turns the
/// keyboard (see `KeyboardMap` in Controls) and left mouse clicks (`focusTap`) into input events.
///
/// Needs a display server; without one `init` throws (`DisplayError.sdl`) and the daemon falls
/// back to `HeadlessDisplay`. With `SDL_VIDEODRIVER=dummy` it runs anywhere (CI).
///
/// Frames go through a streaming RGB24 texture and an SDL renderer (scaled to the window,
/// letterboxed); if no renderer can be made, they are converted straight into the window's
/// surface instead. Not thread-safe: create it, show frames and poll events on one thread.
public final class SDLWindow: DisplaySink {
    /// How frames reach the screen.
    public enum Presentation: Sendable, Equatable {
        /// Streaming texture + renderer (the normal path; scales with the window).
        case renderer
        /// `SDL_ConvertPixels` into the window surface (no renderer available).
        case windowSurface
    }

    public let width: Int
    public let height: Int
    /// Which key does what (Controls' standard map unless the daemon passes another).
    public var keyboard = KeyboardMap.standard
    public let title: String
    public var name: String { "SDL window \(width)×\(height)" }
    public let presentation: Presentation
    public private(set) var closeRequested = false

    // The window owns its handles through these; each frees its own in deinit, and each holds
    // its parent (texture → renderer → window → library), so they go in the right order.
    private let window: SDLWindowHandle
    private let renderer: SDLRendererHandle?
    private let texture: SDLTextureHandle?

    /// Opens a window of `width` × `height` (the frame size; the window can be resized when
    /// frames go through a renderer). `preferRenderer: false` forces the window-surface path.
    public init(width: Int, height: Int, title: String = "Loopix", preferRenderer: Bool = true) throws {
        guard width > 0, height > 0, width <= maximumDisplaySide, height <= maximumDisplaySide else {
            throw DisplayError.invalidSize(display: "SDL window", width: width, height: height)
        }
        self.width = width
        self.height = height
        self.title = title
        let library = try SDLLibrary.acquire()
        var window = try SDLWindowHandle(library: library, title: title, width: width, height: height,
                                         resizable: preferRenderer)
        var renderer: SDLRendererHandle? = nil
        var texture: SDLTextureHandle? = nil
        if preferRenderer, let r = SDLRendererHandle(window: window, width: width, height: height) {
            if let t = SDLTextureHandle(renderer: r, width: width, height: height) {
                renderer = r
                texture = t
            }
        }
        if renderer == nil && preferRenderer {
            // The renderer may have taken over the window's surface; start from a fresh window.
            window = try SDLWindowHandle(library: library, title: title, width: width, height: height, resizable: false)
        }
        self.window = window
        self.renderer = renderer
        self.texture = texture
        presentation = texture != nil ? .renderer : .windowSurface
    }

    /// The SDL window ID (for events addressed to this window).
    public var windowID: UInt32 { SDL_GetWindowID(window.pointer) }

    public func show(_ frame: RGBImage) throws {
        guard frame.width == width, frame.height == height else {
            throw DisplayError.frameSize(display: name, expectedWidth: width, expectedHeight: height,
                                         width: frame.width, height: frame.height)
        }
        if let renderer, let texture {
            try frame.pixels.withUnsafeBytes { bytes in
                try sdlCheck(SDL_UpdateTexture(texture.pointer, nil, bytes.baseAddress, Int32(width * 3)),
                             "SDL_UpdateTexture (upload a \(width)×\(height) frame)")
            }
            try sdlCheck(SDL_SetRenderDrawColor(renderer.pointer, 0, 0, 0, 255), "SDL_SetRenderDrawColor")
            try sdlCheck(SDL_RenderClear(renderer.pointer), "SDL_RenderClear")
            try sdlCheck(SDL_RenderCopy(renderer.pointer, texture.pointer, nil, nil), "SDL_RenderCopy (draw the frame)")
            SDL_RenderPresent(renderer.pointer)
        } else {
            try blitToSurface(frame)
        }
    }

    private func blitToSurface(_ frame: RGBImage) throws {
        guard let surface = SDL_GetWindowSurface(window.pointer) else {
            throw DisplayError.sdl(action: "SDL_GetWindowSurface (show a frame)", message: sdlError())
        }
        let mustLock = (surface.pointee.flags & UInt32(SDL_RLEACCEL)) != 0
        if mustLock { try sdlCheck(SDL_LockSurface(surface), "SDL_LockSurface (show a frame)") }
        defer { if mustLock { SDL_UnlockSurface(surface) } }
        let w = min(width, Int(surface.pointee.w)), h = min(height, Int(surface.pointee.h))
        guard w > 0, h > 0, let destination = surface.pointee.pixels, let format = surface.pointee.format else { return }
        try frame.pixels.withUnsafeBytes { bytes in
            try sdlCheck(SDL_ConvertPixels(Int32(w), Int32(h), UInt32(SDL_PIXELFORMAT_RGB24.rawValue), bytes.baseAddress,
                                           Int32(width * 3), format.pointee.format, destination, surface.pointee.pitch),
                         "SDL_ConvertPixels (RGB24 frame into the window surface)")
        }
        try sdlCheck(SDL_UpdateWindowSurface(window.pointer), "SDL_UpdateWindowSurface")
    }

    /// Drains SDL's event queue: mapped keys, left clicks as `focusTap`, and window close
    /// (or Escape) sets `closeRequested`.
    public func pollEvents() -> [InputEvent] {
        var events: [InputEvent] = []
        var event = SDL_Event()
        while SDL_PollEvent(&event) != 0 {
            if let e = translate(event) { events.append(e) }
        }
        return events
    }

    private func translate(_ event: SDL_Event) -> InputEvent? {
        switch event.type {
        case SDL_QUIT.rawValue:
            closeRequested = true
        case SDL_WINDOWEVENT.rawValue:
            if event.window.event == UInt8(SDL_WINDOWEVENT_CLOSE.rawValue), event.window.windowID == windowID {
                closeRequested = true
            }
        case SDL_KEYDOWN.rawValue:
            let sym = event.key.keysym.sym
            if sym == Int32(SDLK_ESCAPE.rawValue) {
                closeRequested = true
                return nil
            }
            guard var key = SDLWindow.keyName(sym) else { return nil }
            if event.key.keysym.mod & UInt16(KMOD_SHIFT.rawValue) != 0 { key = "shift+" + key }
            if event.key.repeat != 0 && !keyboard.repeats(key: key) { return nil }
            return keyboard.event(forKey: key)
        case SDL_MOUSEBUTTONDOWN.rawValue:
            guard event.button.button == UInt8(SDL_BUTTON_LEFT), event.button.which != UInt32.max /* SDL_TOUCH_MOUSEID */ else {
                return nil
            }
            // With a renderer, SDL has already mapped the position into frame coordinates.
            let x = min(max((Double(event.button.x) + 0.5) / Double(width), 0), 1)
            let y = min(max((Double(event.button.y) + 0.5) / Double(height), 0), 1)
            return .focusTap(x: x, y: y)
        default:
            break
        }
        return nil
    }

    /// The `KeyboardMap` name of an SDL keycode ("up", "return", "space", "f").
    static func keyName(_ sym: SDL_Keycode) -> String? {
        switch sym {
        case Int32(SDLK_UP.rawValue): return "up"
        case Int32(SDLK_DOWN.rawValue): return "down"
        case Int32(SDLK_RETURN.rawValue), Int32(SDLK_KP_ENTER.rawValue): return "return"
        case 0x20: return "space"
        case 0x21 ... 0x7E: return Unicode.Scalar(UInt32(sym)).map { String(Character($0)) }
        default: return nil
        }
    }
}

// MARK: - Handles

/// SDL itself: `SDL_Init(video)` when the first window needs it, `SDL_Quit` in the deinit of
/// the last owner (every live window handle holds it).
final class SDLLibrary: @unchecked Sendable {
    // @unchecked: the only mutable state is the static weak reference, guarded by `lock`.
    private static let lock = NSLock()
    nonisolated(unsafe) private static weak var current: SDLLibrary?

    private init() {}

    static func acquire() throws -> SDLLibrary {
        lock.lock()
        defer { lock.unlock() }
        if let current { return current }
        // The daemon handles SIGINT/SIGTERM itself; SDL must not turn them into quit events.
        SDL_SetHint("SDL_NO_SIGNAL_HANDLERS", "1")
        guard SDL_Init(UInt32(SDL_INIT_VIDEO)) == 0 else {
            let message = sdlError()
            SDL_Quit()
            throw DisplayError.sdl(action: "SDL_Init(video)", message: message)
        }
        let library = SDLLibrary()
        current = library
        return library
    }

    deinit {
        SDLLibrary.lock.lock()
        SDL_Quit()
        SDLLibrary.lock.unlock()
    }
}

/// Owns one `SDL_Window`.
final class SDLWindowHandle {
    let pointer: OpaquePointer
    private let library: SDLLibrary

    init(library: SDLLibrary, title: String, width: Int, height: Int, resizable: Bool) throws {
        var flags = SDL_WINDOW_SHOWN.rawValue
        if resizable { flags |= SDL_WINDOW_RESIZABLE.rawValue }
        let centred = Int32(bitPattern: UInt32(SDL_WINDOWPOS_CENTERED_MASK))
        guard let window = SDL_CreateWindow(title, centred, centred, Int32(width), Int32(height), flags) else {
            throw DisplayError.sdl(action: "SDL_CreateWindow \(width)×\(height)", message: sdlError())
        }
        self.pointer = window
        self.library = library
    }

    deinit { SDL_DestroyWindow(pointer) }
}

/// Owns one `SDL_Renderer` (nil from `init` if the window cannot have one, e.g. no driver).
final class SDLRendererHandle {
    let pointer: OpaquePointer
    private let window: SDLWindowHandle

    init?(window: SDLWindowHandle, width: Int, height: Int) {
        guard let renderer = SDL_CreateRenderer(window.pointer, -1, 0) else { return nil }
        self.pointer = renderer
        self.window = window
        // Letterbox when the window is resized; mouse positions come back in frame pixels.
        _ = SDL_RenderSetLogicalSize(renderer, Int32(width), Int32(height))
    }

    deinit { SDL_DestroyRenderer(pointer) }
}

/// Owns one streaming RGB24 `SDL_Texture` the size of the frames.
final class SDLTextureHandle {
    let pointer: OpaquePointer
    private let renderer: SDLRendererHandle

    init?(renderer: SDLRendererHandle, width: Int, height: Int) {
        guard let texture = SDL_CreateTexture(renderer.pointer, UInt32(SDL_PIXELFORMAT_RGB24.rawValue),
                                              Int32(SDL_TEXTUREACCESS_STREAMING.rawValue), Int32(width), Int32(height))
        else { return nil }
        self.pointer = texture
        self.renderer = renderer
    }

    deinit { SDL_DestroyTexture(pointer) }
}

/// SDL's last error message.
func sdlError() -> String {
    guard let message = SDL_GetError() else { return "" }
    return String(cString: message)
}

/// Throws `DisplayError.sdl` if an SDL call returned a negative status.
@inline(__always)
func sdlCheck(_ status: Int32, _ action: @autoclosure () -> String) throws {
    if status < 0 { throw DisplayError.sdl(action: action(), message: sdlError()) }
}
