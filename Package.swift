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
        // The floor every other module stands on: typed errno errors, an owning ~Copyable file
        // descriptor, the monotonic clock, locks, the logger, the worker-thread helper.
        // Linux calls that Glibc's Swift overlay does not import (renameat2, the thread's name).
        .target(name: "CLoopixSys"),
        .target(name: "System", dependencies: ["CLoopixSys"]),
        // The one strict JSON reader and writer (RFC 8259; errors say line and column; unknown
        // fields are errors). Pure Swift, below FilmCore so presets read the same way as the rest.
        .target(name: "StrictJSON"),

        // The film engine: pure Swift, no C, no I/O. Optimised in debug builds too: its vector
        // lanes (SIMD16) are generic code that -Onone leaves unspecialised, some ten times
        // slower per pixel than the scalar loops they replaced, and the tests run the engine,
        // and a debug loopixd, at the frame rates of the real thing.
        // The image every module exchanges (8-bit RGB) and parallel work over its rows: below the
        // film engine, so that drawing, cameras, screens and clips need no engine for a picture.
        // Optimised in debug builds like FilmCore, whose loops inline it.
        .target(name: "Raster", swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        .target(name: "FilmCore", dependencies: ["StrictJSON", "Raster"],
                swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        // Software drawing (rectangles, lines, a built-in bitmap font) for contact sheets and overlays.
        .target(name: "Canvas", dependencies: ["Raster"]),

        // C libraries, each wrapped in exactly one Swift module: a `[system]` module map, the
        // pkg-config name and the Debian package that provides it (written out literally:
        // ../shared/tools/trixie-build reads the `.apt([...])` lists).
        // libheif-dev pulls libheif1: on bookworm x265/libde265 are built in; on trixie the HEVC
        // encoder is the separate (merely recommended) package libheif-plugin-x265.
        .systemLibrary(name: "CHeif", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CLcms2", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        .systemLibrary(name: "CExif", pkgConfig: "libexif", providers: [.apt(["libexif-dev"])]),
        .systemLibrary(name: "CJpeg", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CPng", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        // setjmp-guarded C helpers for libjpeg and libpng's classic API (their error handlers
        // longjmp, which must never cross Swift frames). Used only by ImageFiles.
        .target(name: "CImageShim", dependencies: ["CJpeg", "CPng"],
                linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("png16")]),

        // Raw negatives: DNG written through libtiff (CTiffShim holds its variadic calls and a
        // TIFF written into memory), read and demosaiced by libraw (its thread-safe libraw_r).
        .systemLibrary(name: "CTiff", pkgConfig: "libtiff-4", providers: [.apt(["libtiff-dev"])]),
        .target(name: "CTiffShim", dependencies: ["CTiff"], linkerSettings: [.linkedLibrary("tiff")]),
        .systemLibrary(name: "CRaw", providers: [.apt(["libraw-dev"])]),

        // Photo files: HEIC (libheif), JPEG, PNG, EXIF, ICC, DNG (libtiff, libraw); atomic writes.
        .target(name: "ImageFiles", dependencies: ["System", "FilmCore", "Raster", "CHeif", "CLcms2", "CExif", "CJpeg", "CPng", "CImageShim",
                                                   "CTiff", "CTiffShim", "CRaw"]),

        // The control socket's language: requests, replies, the client, the license format
        // (Ed25519 through libsodium). What `loopix` needs to talk to the daemon, and no more.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .target(name: "ControlProtocol", dependencies: ["System", "StrictJSON", "CSodium"]),

        // Pure input logic: events, debouncer, quadrature decoder, key and touch maps, motion
        // analysis and the scripted motion sensor. No devices.
        .target(name: "Controls", dependencies: ["System"]),
        // The board's devices: GPIO buttons and encoder through libgpiod (one C shim for
        // libgpiod 1.6 and 2.x, chosen at compile time), I2C/SMBus through i2c-dev (a tiny ioctl
        // shim, no libi2c) and the IMU on it, touch screens and keyboards through libevdev.
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        .target(name: "CGPIOShim", dependencies: ["CGPIOD"], linkerSettings: [.linkedLibrary("gpiod")]),
        .target(name: "CI2C"),
        .systemLibrary(name: "CEvdev", pkgConfig: "libevdev", providers: [.apt(["libevdev-dev"])]),
        .target(name: "BoardIO", dependencies: ["System", "Controls", "CGPIOShim", "CI2C", "CEvdev"]),
        // libcamera (C++) behind a small C ABI; the only code that includes libcamera's headers.
        .systemLibrary(name: "CLibcamera", pkgConfig: "libcamera", providers: [.apt(["libcamera-dev"])]),
        .target(name: "CLibcameraShim", dependencies: ["CLibcamera"]),
        // Pixel formats, pure Swift: camera frames (YUV, RGB and their strides) to the engine's
        // RGB (`FrameConverter`), the engine's RGB to a screen's buffer (`ScanoutMap`), display
        // modes and connector names. Here, not in Camera or Display, so that `loopix bench`
        // measures them without linking a device library.
        .target(name: "PixelFormats", dependencies: ["FilmCore", "Raster", "Controls"]),
        // Cameras: the CameraSource interface, the lens table, the simulated camera, the libcamera backend.
        .target(name: "Camera", dependencies: ["System", "StrictJSON", "FilmCore", "Raster", "Controls", "PixelFormats", "CLibcameraShim"]),
        // Displays: the DisplaySink interface and its sinks: KMS (libdrm), SDL2 window, headless.
        .systemLibrary(name: "CSDL2", pkgConfig: "sdl2", providers: [.apt(["libsdl2-dev"])]),
        // CLoopixDRM holds the dumb-buffer ioctls, mmap and flip-event reads that Swift cannot
        // make (kernel UAPI, no libdrm link).
        .systemLibrary(name: "CDRM", pkgConfig: "libdrm", providers: [.apt(["libdrm-dev"])]),
        .target(name: "CLoopixDRM"),
        .target(name: "Display", dependencies: ["System", "Raster", "Controls", "ImageFiles", "PixelFormats", "CSDL2", "CDRM", "CLoopixDRM"]),
        // Video: H.264 and AAC through FFmpeg's libraries (libavcodec, libavformat, libswscale,
        // libavutil; CLoopixAV holds their macros and the differences between FFmpeg 5.1 and 7.1)
        // into fragmented MP4. A codec, like libheif: no device.
        .systemLibrary(name: "CFFmpeg", pkgConfig: "libavformat",
                       providers: [.apt(["libavcodec-dev", "libavformat-dev", "libavutil-dev", "libswscale-dev"])]),
        .target(name: "CLoopixAV", dependencies: ["CFFmpeg"]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .target(name: "Video", dependencies: ["System", "Raster", "CFFmpeg", "CLoopixAV"]),
        // Recording a clip: graded frames and sound from a microphone (ALSA) into Video's writer,
        // on a thread of its own.
        .target(name: "Recording", dependencies: ["System", "Raster", "Video", "CALSA"]),
        // The web gallery and remote: libmicrohttpd behind a small C face (its start function
        // is variadic), the gallery's routes, JPEGs and thumbnails made on demand, the live MJPEG.
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .target(name: "CLoopixHTTP", dependencies: ["CMicroHTTPD"]),
        .target(name: "WebGallery", dependencies: ["System", "StrictJSON", "FilmCore", "Raster", "Canvas", "ImageFiles", "ControlProtocol",
                                                   "Video", "CLoopixHTTP"]),
        // Printing through CUPS (libcups): the booth's prints.
        .systemLibrary(name: "CCups", providers: [.apt(["libcups2-dev"])]),
        .target(name: "Printing", dependencies: ["System", "CCups"]),
        // QR codes (libqrencode): the gallery's address on the booth's review screen.
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .target(name: "QRCode", dependencies: ["CQREncode"]),
        // The one develop path: a look applied to a photo at full resolution, and the watermark;
        // what the camera does to each still and `loopix develop` to each file.
        .target(name: "Darkroom", dependencies: ["System", "FilmCore", "Raster", "Canvas", "ImageFiles"]),
        // The on-screen interface: overlay model, layout and renderer.
        .target(name: "Viewfinder", dependencies: ["Raster", "Canvas", "QRCode"]),
        // libsystemd: sd_notify (READY, STATUS, WATCHDOG) for the service manager.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // The daemon: state and its rules, controller, preview pipeline, camera supervisor,
        // capture, storage, settings, configuration, control server.
        .target(name: "Appliance", dependencies: ["System", "StrictJSON", "FilmCore", "Raster", "Canvas", "ImageFiles", "ControlProtocol",
                                                  "Camera", "Display", "PixelFormats", "Viewfinder", "Controls", "BoardIO", "Video", "Recording", "Darkroom",
                                                  "CSystemd", "WebGallery", "Printing"]),
        // `loopix doctor`: checks the machine against the configuration (reads only).
        .target(name: "Doctor", dependencies: ["Appliance", "BoardIO", "Camera", "Display", "ControlProtocol", "Controls",
                                               "StrictJSON", "System"]),
        .executableTarget(name: "loopixd", dependencies: ["Appliance", "Doctor"]),

        // The `loopix` command's logic (develop, presets, contact sheet, bench, ctl, license), testable as a library.
        // It talks to the daemon through ControlProtocol and links none of the device modules
        // (no libcamera, libdrm, SDL2, ALSA, libgpiod, libevdev: LoopixToolTests checks with ldd);
        // its codecs are ImageFiles' and Video's (timelapse clips, the video benchmark).
        .target(name: "LoopixTool", dependencies: ["System", "StrictJSON", "FilmCore", "Raster", "Canvas", "ImageFiles", "Darkroom", "ControlProtocol", "Video",
                                                   "PixelFormats", "Viewfinder", "Controls"]),
        .executableTarget(name: "loopix", dependencies: ["LoopixTool"]),

        // Test images and temporary directories shared by the display and viewfinder tests.
        .target(name: "TestFixtures", dependencies: ["FilmCore", "Raster"], path: "Tests/TestFixtures"),
        .testTarget(name: "SystemTests", dependencies: ["Raster", "System"]),
        .testTarget(name: "WebGalleryTests", dependencies: ["WebGallery", "ImageFiles", "FilmCore", "Raster", "ControlProtocol", "System", "StrictJSON"]),
        .testTarget(name: "DoctorTests", dependencies: ["Raster", "Doctor", "Appliance", "BoardIO", "Camera", "Display", "StrictJSON", "System"]),
        .testTarget(name: "StrictJSONTests", dependencies: ["Raster", "StrictJSON"]),
        .testTarget(name: "FilmCoreTests", dependencies: ["FilmCore", "Raster", "TestFixtures"]),
        .testTarget(name: "CanvasTests", dependencies: ["Raster", "Canvas"]),
        .testTarget(name: "DarkroomTests", dependencies: ["Darkroom", "FilmCore", "Raster", "TestFixtures"]),
        .testTarget(name: "ImageFilesTests", dependencies: ["Raster", "ImageFiles", "System"]),
        .testTarget(name: "ControlProtocolTests", dependencies: ["Raster", "ControlProtocol", "StrictJSON"]),
        .testTarget(name: "LoopixToolTests", dependencies: ["Raster", "LoopixTool", "ImageFiles", "ControlProtocol", "Appliance", "System"]),
        .testTarget(name: "ControlsTests", dependencies: ["Raster", "Controls"]),
        .testTarget(name: "BoardIOTests", dependencies: ["Raster", "BoardIO", "Controls", "System"]),
        .testTarget(name: "CameraTests", dependencies: ["Raster", "Camera", "PixelFormats"]),
        .testTarget(name: "DisplayTests", dependencies: ["Raster", "Display", "PixelFormats", "ImageFiles", "TestFixtures"]),
        .testTarget(name: "VideoTests", dependencies: ["Video", "Recording", "FilmCore", "Raster", "System", "CFFmpeg", "CLoopixAV"]),
        .testTarget(name: "PrintingTests", dependencies: ["Raster", "Printing", "System", "CCups", "TestFixtures"]),
        .testTarget(name: "ViewfinderTests", dependencies: ["Raster", "Viewfinder", "ImageFiles", "TestFixtures"]),
        .testTarget(name: "ApplianceTests", dependencies: ["Raster", "Appliance", "ControlProtocol", "ImageFiles", "Viewfinder", "System", "StrictJSON", "Video", "Recording", "PixelFormats",
                                                         "TestFixtures"]),
        // Hardware-in-the-loop: the real kernel interfaces (vimc, vkms, gpio-sim, i2c-stub) in a
        // VM booted by scripts/hil/run. Skips, saying why, outside the bench.
        .testTarget(name: "HILTests", dependencies: ["System", "BoardIO", "Controls", "Camera", "Display", "Viewfinder", "Appliance",
                                                     "ControlProtocol", "ImageFiles", "FilmCore", "Raster"]),
        // The project's shell scripts (scripts/hil/run's choice of KVM or emulation) run against fakes.
        .testTarget(name: "ScriptTests"),
    ],
    swiftLanguageModes: [.v6]
)
