// swift-tools-version:6.0
// Loopix — camera firmware for the Raspberry Pi that makes every frame look like analog film.
// Builds with Swift 6.0 (Debian 13 `swiftlang`) and newer; uses nothing newer than 6.0.
import PackageDescription

let package = Package(
    name: "Loopix",
    products: [
        .executable(name: "loopix", targets: ["loopix"]),
        .executable(name: "loopixd", targets: ["loopixd"]),
        .library(name: "FilmCore", targets: ["FilmCore"]),
    ],
    targets: [
        // The film engine: pure Swift, no C, no I/O.
        .target(name: "FilmCore"),
        // Software drawing (rectangles, lines, a built-in bitmap font) for contact sheets and overlays.
        .target(name: "Canvas", dependencies: ["FilmCore"]),

        // C libraries, each wrapped in exactly one Swift module (ImageFiles): a `[system]` module
        // map, the pkg-config name and the Debian package that provides it (written out
        // literally: ../shared/tools/trixie-build reads the `.apt([...])` lists).
        // libheif-dev pulls libheif1: on bookworm x265/libde265 are built in; on trixie the HEVC
        // encoder is the separate (merely recommended) package libheif-plugin-x265.
        .systemLibrary(name: "CHeif", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CLcms2", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        .systemLibrary(name: "CExif", pkgConfig: "libexif", providers: [.apt(["libexif-dev"])]),
        .systemLibrary(name: "CJpeg", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CPng", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        // Linux system calls that Glibc's Swift overlay does not import (renameat2).
        .target(name: "CLoopixSys"),
        // setjmp-guarded C helpers for libjpeg and libpng's classic API (their error handlers
        // longjmp, which must never cross Swift frames). Used only by ImageFiles.
        .target(name: "CImageShim", dependencies: ["CJpeg", "CPng"],
                linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("png16")]),

        // Photo files: HEIC (libheif), JPEG, PNG, EXIF, ICC; atomic writes.
        .target(name: "ImageFiles", dependencies: ["FilmCore", "CHeif", "CLcms2", "CExif", "CJpeg", "CPng", "CImageShim", "CLoopixSys"]),

        // Input events and motion: what buttons, encoder, touch, keyboard and socket turn into.
        // evdev touch screens and USB keyboards (libevdev) become input events here too.
        .systemLibrary(name: "CEvdev", pkgConfig: "libevdev", providers: [.apt(["libevdev-dev"])]),
        .target(name: "Controls", dependencies: ["CEvdev"]),
        // The Pi's low-level buses: GPIO lines through libgpiod (one C shim for libgpiod 1.6 and
        // 2.x, chosen at compile time) and I2C/SMBus through i2c-dev (a tiny ioctl shim, no libi2c).
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        .target(name: "CGPIOShim", dependencies: ["CGPIOD"], linkerSettings: [.linkedLibrary("gpiod")]),
        .target(name: "CI2C"),
        .target(name: "GPIO", dependencies: ["Controls", "CGPIOShim", "CI2C"]),
        // libcamera (C++) behind a small C ABI; the only code that includes libcamera's headers.
        .systemLibrary(name: "CLibcamera", pkgConfig: "libcamera", providers: [.apt(["libcamera-dev"])]),
        .target(name: "CLibcameraShim", dependencies: ["CLibcamera"]),
        // Cameras: the CameraSource interface, the lens table, the simulated camera, the libcamera backend.
        .target(name: "Camera", dependencies: ["FilmCore", "Controls", "CLibcameraShim"]),
        // Displays: the DisplaySink interface, headless and SDL2 window twins, the on-screen interface.
        .systemLibrary(name: "CSDL2", pkgConfig: "sdl2", providers: [.apt(["libsdl2-dev"])]),
        // DRM/KMS (libdrm) for the Pi's HDMI and DSI panels; CLoopixDRM holds the dumb-buffer
        // ioctls, mmap and flip-event reads that Swift cannot make (kernel UAPI, no libdrm link).
        .systemLibrary(name: "CDRM", pkgConfig: "libdrm", providers: [.apt(["libdrm-dev"])]),
        .target(name: "CLoopixDRM"),
        .target(name: "Display", dependencies: ["FilmCore", "Canvas", "Controls", "ImageFiles", "CSDL2", "CDRM", "CLoopixDRM"]),
        // The daemon's brain: state, controller, capture, storage, settings, config, license, socket.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .target(name: "Appliance", dependencies: ["FilmCore", "Canvas", "ImageFiles", "Camera", "Display", "Controls", "GPIO", "CSodium"]),
        .executableTarget(name: "loopixd", dependencies: ["Appliance"]),

        // The `loopix` command's logic (develop, presets, contact sheet, bench, ctl, license), testable as a library.
        .target(name: "LoopixTool", dependencies: ["FilmCore", "Canvas", "ImageFiles", "Appliance"]),
        .executableTarget(name: "loopix", dependencies: ["LoopixTool"]),

        .testTarget(name: "FilmCoreTests", dependencies: ["FilmCore"]),
        .testTarget(name: "CanvasTests", dependencies: ["Canvas"]),
        .testTarget(name: "ImageFilesTests", dependencies: ["ImageFiles"]),
        .testTarget(name: "LoopixToolTests", dependencies: ["LoopixTool", "ImageFiles"]),
        .testTarget(name: "ControlsTests", dependencies: ["Controls"]),
        .testTarget(name: "GPIOTests", dependencies: ["GPIO", "Controls"]),
        .testTarget(name: "CameraTests", dependencies: ["Camera"]),
        .testTarget(name: "DisplayTests", dependencies: ["Display", "ImageFiles"]),
        .testTarget(name: "ApplianceTests", dependencies: ["Appliance", "ImageFiles"]),
        // Hardware-in-the-loop: the real kernel interfaces (vimc, vkms, gpio-sim, i2c-stub) in a
        // VM booted by scripts/hil/run. Skips, saying why, outside the bench.
        .testTarget(name: "HILTests", dependencies: ["GPIO", "Controls", "Camera", "Display", "Appliance", "ImageFiles", "FilmCore"]),
        // The project's shell scripts (scripts/hil/run's choice of KVM or emulation) run against fakes.
        .testTarget(name: "ScriptTests"),
    ],
    swiftLanguageModes: [.v6]
)
