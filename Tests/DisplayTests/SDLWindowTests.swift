import TestFixtures
import XCTest
import CSDL2
import Controls
import FilmCore
@testable import Display
import Raster

/// The SDL window under SDL's dummy video driver: no screen needed.
final class SDLWindowTests: XCTestCase {
    override func setUp() {
        super.setUp()
        setenv("SDL_VIDEODRIVER", "dummy", 1)
    }

    func testWindowOpensAndShowsFramesUnderTheDummyDriver() throws {
        let window = try SDLWindow(width: 64, height: 40, title: "test")
        XCTAssertEqual(window.width, 64)
        XCTAssertEqual(window.height, 40)
        // The dummy driver has SDL's software renderer, so the streaming-texture path is used.
        XCTAssertEqual(window.presentation, .renderer)
        for seed in 0 ..< 3 { try window.show(patternImage(width: 64, height: 40, seed: seed)) }
        XCTAssertThrowsError(try window.show(RGBImage(width: 40, height: 64))) { error in
            guard case .frameSize? = error as? DisplayError else { return XCTFail("\(error)") }
        }
        XCTAssertFalse(window.closeRequested)
    }

    func testWindowSurfaceFallbackPutsTheFramesPixelsOnTheSurface() throws {
        let window = try SDLWindow(width: 32, height: 20, preferRenderer: false)
        XCTAssertEqual(window.presentation, .windowSurface)
        let frame = patternImage(width: 32, height: 20, seed: 5)
        try window.show(frame)
        // Read the surface back as RGB24 and compare.
        let surface = try XCTUnwrap(SDL_GetWindowFromID(window.windowID).flatMap { SDL_GetWindowSurface($0) })
        var back = [UInt8](repeating: 0, count: 32 * 20 * 3)
        let status = back.withUnsafeMutableBytes { out in
            SDL_ConvertPixels(32, 20, surface.pointee.format.pointee.format, surface.pointee.pixels, surface.pointee.pitch,
                              UInt32(SDL_PIXELFORMAT_RGB24.rawValue), out.baseAddress, 32 * 3)
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(back, frame.pixels)
    }

    func testPushedKeysComeBackAsTheirEvents() throws {
        let window = try SDLWindow(width: 64, height: 40)
        _ = window.pollEvents()  // whatever the driver queued when the window appeared
        let keys: [(Int32, InputEvent)] = [
            (Int32(UInt8(ascii: "[")), .leftButton), (Int32(UInt8(ascii: "]")), .rightButton),
            (Int32(UInt8(ascii: " ")), .shutter), (Int32(SDLK_UP.rawValue), .encoderTurned(1)),
            (Int32(SDLK_DOWN.rawValue), .encoderTurned(-1)), (Int32(SDLK_RETURN.rawValue), .encoderPressed),
            (Int32(UInt8(ascii: "m")), .mode), (Int32(UInt8(ascii: "l")), .nextLens),
            (Int32(UInt8(ascii: "f")), .nextFilter), (Int32(UInt8(ascii: "b")), .previousFilter),
            (Int32(UInt8(ascii: "a")), .aeLock), (Int32(UInt8(ascii: "d")), .afLock),
            (Int32(UInt8(ascii: "g")), .grid), (Int32(UInt8(ascii: "h")), .handedness),
        ]
        for (sym, _) in keys { try push(keyDown: sym, window: window) }
        try push(keyDown: Int32(UInt8(ascii: "z")), window: window)  // unmapped: nothing
        XCTAssertEqual(window.pollEvents(), keys.map { $0.1 })
        XCTAssertEqual(window.pollEvents(), [])

        // A held shutter does not fire again; a held encoder key does.
        try push(keyDown: Int32(UInt8(ascii: " ")), window: window, repeat: true)
        try push(keyDown: Int32(SDLK_UP.rawValue), window: window, repeat: true)
        XCTAssertEqual(window.pollEvents(), [.encoderTurned(1)])
        XCTAssertFalse(window.closeRequested)
    }

    func testLeftClickIsAFocusTapAtTheNormalisedPosition() throws {
        let window = try SDLWindow(width: 100, height: 50)
        _ = window.pollEvents()
        var event = SDL_Event()
        event.type = SDL_MOUSEBUTTONDOWN.rawValue
        event.button.windowID = window.windowID
        event.button.button = UInt8(SDL_BUTTON_LEFT)
        event.button.state = UInt8(SDL_PRESSED)
        event.button.clicks = 1
        event.button.x = 74
        event.button.y = 12
        XCTAssertEqual(SDL_PushEvent(&event), 1)
        event.button.button = UInt8(SDL_BUTTON_RIGHT)
        XCTAssertEqual(SDL_PushEvent(&event), 1)  // right clicks mean nothing
        let events = window.pollEvents()
        XCTAssertEqual(events.count, 1)
        guard case .focusTap(let x, let y)? = events.first else { return XCTFail("\(events)") }
        XCTAssertEqual(x, 0.745, accuracy: 1e-9)
        XCTAssertEqual(y, 0.25, accuracy: 1e-9)
    }

    func testQuitEventSetsCloseRequested() throws {
        let window = try SDLWindow(width: 64, height: 40)
        _ = window.pollEvents()
        XCTAssertFalse(window.closeRequested)
        var event = SDL_Event()
        event.type = SDL_QUIT.rawValue
        XCTAssertEqual(SDL_PushEvent(&event), 1)
        XCTAssertEqual(window.pollEvents(), [])
        XCTAssertTrue(window.closeRequested)
    }

    func testTwoWindowsShareSDLAndItSurvivesTheFirstClosing() throws {
        var first: SDLWindow? = try SDLWindow(width: 16, height: 16)
        let second = try SDLWindow(width: 24, height: 16)
        first = nil
        XCTAssertNil(first)
        try second.show(patternImage(width: 24, height: 16))
        XCTAssertNotEqual(SDL_WasInit(UInt32(SDL_INIT_VIDEO)), 0)
    }

    func testSDLShutsDownWithTheLastWindow() throws {
        do {
            let window = try SDLWindow(width: 16, height: 16)
            try window.show(patternImage(width: 16, height: 16))
        }
        XCTAssertEqual(SDL_WasInit(UInt32(SDL_INIT_VIDEO)), 0)
    }

    func testNoVideoDeviceIsATypedErrorNamingTheCall() {
        setenv("SDL_VIDEODRIVER", "no-such-driver", 1)
        defer { setenv("SDL_VIDEODRIVER", "dummy", 1) }
        XCTAssertThrowsError(try SDLWindow(width: 16, height: 16)) { error in
            guard case .sdl(let action, let message)? = error as? DisplayError else { return XCTFail("\(error)") }
            XCTAssertEqual(action, "SDL_Init(video)")
            XCTAssertFalse(message.isEmpty)
            XCTAssertTrue("\(error)".hasPrefix("SDL: SDL_Init(video) failed: "), "\(error)")
        }
    }

    private func push(keyDown sym: Int32, window: SDLWindow, repeat isRepeat: Bool = false) throws {
        var event = SDL_Event()
        event.type = SDL_KEYDOWN.rawValue
        event.key.windowID = window.windowID
        event.key.state = UInt8(SDL_PRESSED)
        event.key.repeat = isRepeat ? 1 : 0
        event.key.keysym.sym = sym
        XCTAssertEqual(SDL_PushEvent(&event), 1, sdlError())
    }
}
