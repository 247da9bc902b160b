import CEvdev
import Controls
import Glibc
import System

/// One opened evdev device: its descriptor (closed when the device goes) and libevdev's
/// handle (freed in deinit).
final class EvdevDevice {
    enum Kind { case touch, keyboard }

    let path: String
    private let file: FileDescriptor
    var fd: Int32 { file.rawValue }
    let handle: OpaquePointer
    let kind: Kind
    let name: String
    let mapping: TouchMapping?
    /// Positions come from ABS_MT_POSITION_X/Y of slot 0 (no ABS_X/ABS_Y).
    let usesMT: Bool
    // Touch state.
    var rawX: Int32 = 0
    var rawY: Int32 = 0
    var slot: Int32 = 0
    var down = false
    var wasDown = false
    var shift: Set<UInt16> = []

    /// Opens `path` and keeps it only when it is a touch screen or a keyboard (nil otherwise).
    init?(path: String, rotation: ScreenRotation) {
        // On every early return the descriptor is closed with `opened`.
        guard let opened = try? FileDescriptor.open(path, O_RDONLY | O_NONBLOCK) else { return nil }
        var dev: OpaquePointer?
        guard libevdev_new_from_fd(opened.rawValue, &dev) == 0, let dev else { return nil }
        let hasMT = libevdev_has_event_code(dev, UInt32(EV_ABS), UInt32(ABS_MT_POSITION_X)) != 0
        let hasABS = libevdev_has_event_code(dev, UInt32(EV_ABS), UInt32(ABS_X)) != 0
        let direct = libevdev_has_property(dev, UInt32(INPUT_PROP_DIRECT)) != 0
        usesMT = !hasABS
        if (direct && (hasABS || hasMT)) || hasMT {
            let xCode = hasABS ? ABS_X : ABS_MT_POSITION_X
            let yCode = hasABS ? ABS_Y : ABS_MT_POSITION_Y
            guard let xi = libevdev_get_abs_info(dev, UInt32(xCode)), let yi = libevdev_get_abs_info(dev, UInt32(yCode)) else {
                libevdev_free(dev)
                return nil
            }
            kind = .touch
            mapping = TouchMapping(minX: xi.pointee.minimum, maxX: xi.pointee.maximum,
                                   minY: yi.pointee.minimum, maxY: yi.pointee.maximum, rotation: rotation)
        } else if libevdev_has_event_code(dev, UInt32(EV_KEY), UInt32(KEY_A)) != 0 && libevdev_has_event_code(dev, UInt32(EV_KEY), UInt32(KEY_SPACE)) != 0 {
            kind = .keyboard
            mapping = nil
        } else {
            libevdev_free(dev)
            return nil
        }
        self.path = path
        self.file = opened
        self.handle = dev
        self.name = libevdev_get_name(dev).map { String(cString: $0) } ?? "?"
    }

    deinit { libevdev_free(handle) }
}

/// Touch screens and USB keyboards through evdev (libevdev), poll-driven: `drain` reads what
/// every device has queued, without blocking.
///
/// - Devices are found by scanning `/dev/input/event*` (at the first `drain` and every 2 s):
///   a touch screen has INPUT_PROP_DIRECT with absolute axes, or ABS_MT_POSITION_X; a keyboard
///   has EV_KEY with KEY_A and KEY_SPACE. Anything else is left closed. A device that vanishes
///   (ENODEV) is dropped with one log line; one plugged in later is found by the next scan.
/// - A touch is a focus tap **on release** (BTN_TOUCH 1 → 0, or slot 0's tracking id going to
///   −1), at the last position reported while touching, so that a finger that slides settles
///   where it is lifted. Coordinates: the device's absinfo ranges, turned back by `rotation`.
/// - Keys become events through `keyboard` (`KeyboardMap`): presses fire, auto-repeats fire
///   only for repeating events (the encoder's ↑/↓), shift is tracked. Keyboards are not grabbed
///   (the console still sees them).
///
/// Not `Sendable`: it has no thread of its own and lives on the controller's thread, which
/// drains it (the `InputSource` contract).
public final class EvdevInput: InputSource {
    public var name: String { "evdev input in \(directory)" }
    public let directory: String
    public let rotation: ScreenRotation
    public let keyboard: KeyboardMap
    private var devices: [String: EvdevDevice] = [:]
    /// Paths that are neither touch screen nor keyboard (or could not be opened).
    private var ignored: Set<String> = []
    /// When `drain` looks for new devices next (every 2 s).
    private var nextScan = Deadline(nanoseconds: 0)

    public init(directory: String = "/dev/input", rotation: ScreenRotation = .none, keyboard: KeyboardMap = .standard) {
        self.directory = directory
        self.rotation = rotation
        self.keyboard = keyboard
    }

    /// The devices in use: (path, name, "touch" or "keyboard").
    public var openDevices: [(path: String, name: String, kind: String)] {
        devices.values.sorted { $0.path < $1.path }.map { ($0.path, $0.name, $0.kind == .touch ? "touch" : "keyboard") }
    }

    /// Looks for new devices now (drain does it every 2 s).
    public func rescan() {
        nextScan = .after(seconds: 2)
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        var present: Set<String> = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            guard name.hasPrefix("event") else { continue }
            let path = "\(directory)/\(name)"
            present.insert(path)
            guard devices[path] == nil, !ignored.contains(path) else { continue }
            if let device = EvdevDevice(path: path, rotation: rotation) {
                devices[path] = device
                Log.info("input: \(device.kind == .touch ? "touch screen" : "keyboard") \(device.name) at \(path)")
            } else {
                ignored.insert(path)
            }
        }
        ignored.formIntersection(present)
    }

    public func drain() -> [InputEvent] {
        if nextScan.hasPassed { rescan() }
        var events: [InputEvent] = []
        var gone: [String] = []
        for (path, device) in devices {
            var ev = input_event()
            var flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
            while true {
                let r = libevdev_next_event(device.handle, flags, &ev)
                if r == Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue) {
                    // Events were dropped: resynchronise (the sync events carry the state).
                    flags = LIBEVDEV_READ_FLAG_SYNC.rawValue
                    handle(ev, device, &events)
                    continue
                }
                if r == Int32(LIBEVDEV_READ_STATUS_SUCCESS.rawValue) {
                    handle(ev, device, &events)
                    continue
                }
                if r == -EAGAIN && flags == LIBEVDEV_READ_FLAG_SYNC.rawValue {
                    flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
                    continue
                }
                if r != -EAGAIN {
                    gone.append(path)
                    Log.info("input: \(device.name) at \(path) went away (\(Errno(-r).message))")
                }
                break
            }
        }
        for path in gone { devices[path] = nil }
        return events
    }

    private func handle(_ ev: input_event, _ device: EvdevDevice, _ events: inout [InputEvent]) {
        let type = Int32(ev.type), code = Int32(ev.code)
        switch device.kind {
        case .keyboard:
            guard type == EV_KEY else { return }
            let key = UInt16(ev.code)
            if EvdevKeyNames.shiftKeys.contains(key) {
                if ev.value == 0 { device.shift.remove(key) } else { device.shift.insert(key) }
                return
            }
            guard ev.value != 0, let name = EvdevKeyNames.name(code: key, shift: !device.shift.isEmpty) else { return }
            if ev.value == 2 && !keyboard.repeats(key: name) { return }
            if let event = keyboard.event(forKey: name) { events.append(event) }
        case .touch:
            if type == EV_ABS {
                switch code {
                case ABS_X: device.rawX = ev.value
                case ABS_Y: device.rawY = ev.value
                case ABS_MT_SLOT: device.slot = ev.value
                case ABS_MT_POSITION_X where device.slot == 0 && device.usesMT:
                    device.rawX = ev.value
                case ABS_MT_POSITION_Y where device.slot == 0 && device.usesMT:
                    device.rawY = ev.value
                case ABS_MT_TRACKING_ID where device.slot == 0:
                    device.down = ev.value >= 0
                default: break
                }
            } else if type == EV_KEY && code == BTN_TOUCH {
                device.down = ev.value != 0
            } else if type == EV_SYN && code == SYN_REPORT {
                if device.wasDown && !device.down, let mapping = device.mapping {
                    let p = mapping.map(rawX: device.rawX, rawY: device.rawY)
                    events.append(.focusTap(x: p.x, y: p.y))
                }
                device.wasDown = device.down
            }
        }
    }
}

/// A virtual absolute touch screen made through uinput (libevdev's uinput API), for tests and
/// demonstrations: `tap(x:y:)` sends a touch down, position and release. Freed in deinit.
public final class UInputTouchscreen {
    private let device: OpaquePointer
    private let uinput: OpaquePointer
    public let maxX: Int32
    public let maxY: Int32
    /// The /dev/input/eventN node the kernel made.
    public let devnode: String?

    public struct Failure: Error, CustomStringConvertible {
        public let errno: Errno
        public var description: String { "uinput: creating a virtual touch screen failed: \(errno)" }
    }

    public init(name: String = "Loopix test touch screen", maxX: Int32 = 4095, maxY: Int32 = 4095) throws(Failure) {
        guard let dev = libevdev_new() else { throw Failure(errno: Errno(ENOMEM)) }
        libevdev_set_name(dev, name)
        libevdev_enable_property(dev, UInt32(INPUT_PROP_DIRECT))
        libevdev_enable_event_type(dev, UInt32(EV_ABS))
        var xi = input_absinfo(value: 0, minimum: 0, maximum: maxX, fuzz: 0, flat: 0, resolution: 0)
        var yi = input_absinfo(value: 0, minimum: 0, maximum: maxY, fuzz: 0, flat: 0, resolution: 0)
        libevdev_enable_event_code(dev, UInt32(EV_ABS), UInt32(ABS_X), &xi)
        libevdev_enable_event_code(dev, UInt32(EV_ABS), UInt32(ABS_Y), &yi)
        libevdev_enable_event_type(dev, UInt32(EV_KEY))
        libevdev_enable_event_code(dev, UInt32(EV_KEY), UInt32(BTN_TOUCH), nil)
        var ui: OpaquePointer?
        let r = libevdev_uinput_create_from_device(dev, Int32(LIBEVDEV_UINPUT_OPEN_MANAGED.rawValue), &ui)
        guard r == 0, let ui else {
            libevdev_free(dev)
            throw Failure(errno: Errno(-r))
        }
        device = dev
        uinput = ui
        self.maxX = maxX
        self.maxY = maxY
        devnode = libevdev_uinput_get_devnode(ui).map { String(cString: $0) }
    }

    deinit {
        libevdev_uinput_destroy(uinput)
        libevdev_free(device)
    }

    /// Touches the raw point (x, y) and lifts.
    public func tap(x: Int32, y: Int32) {
        func send(_ type: Int32, _ code: Int32, _ value: Int32) {
            _ = libevdev_uinput_write_event(uinput, UInt32(type), UInt32(code), value)
        }
        send(EV_ABS, ABS_X, x)
        send(EV_ABS, ABS_Y, y)
        send(EV_KEY, BTN_TOUCH, 1)
        send(EV_SYN, SYN_REPORT, 0)
        send(EV_KEY, BTN_TOUCH, 0)
        send(EV_SYN, SYN_REPORT, 0)
    }
}
