import CGPIOShim
import Controls
import Foundation
import System

/// Why a GPIO operation failed: the errno and what was being done, on one line.
public struct GPIOError: Error, Equatable, CustomStringConvertible {
    public let errno: Errno
    public let what: String
    public init(errno: Errno, what: String) {
        self.errno = errno
        self.what = what
    }
    public var description: String {
        errno == Errno(ERANGE) ? "\(what): a line offset is beyond the chip's lines" : "\(what): \(errno)"
    }
}

/// A GPIO chip, as libgpiod sees it.
public struct GPIOChipInfo: Sendable, Equatable {
    public var path: String
    public var label: String
    public var lineCount: Int

    public init(path: String, label: String, lineCount: Int) {
        self.path = path
        self.label = label
        self.lineCount = lineCount
    }

    /// Looks up a chip by path (/dev/gpiochip0), name (gpiochip4) or label (pinctrl-rp1).
    /// Wraps `CGPIOShim_chip_info` (libgpiod `gpiod_chip_open` + label scan).
    public static func find(_ descriptor: String) throws(GPIOError) -> GPIOChipInfo {
        var path = [CChar](repeating: 0, count: 256), label = [CChar](repeating: 0, count: 128)
        var lines: UInt32 = 0
        let r = CGPIOShim_chip_info(descriptor, &path, path.count, &label, label.count, &lines)
        guard r == 0 else { throw GPIOError(errno: Errno(-r), what: "opening GPIO chip \(descriptor)") }
        return GPIOChipInfo(path: text(path), label: text(label), lineCount: Int(lines))
    }

    /// The chip and offset of the line named `name` (gpio-sim names its lines).
    public static func findLine(named name: String) throws(GPIOError) -> (chip: String, offset: Int) {
        var path = [CChar](repeating: 0, count: 256)
        var offset: UInt32 = 0
        let r = CGPIOShim_find_line(name, &path, path.count, &offset)
        guard r == 0 else { throw GPIOError(errno: Errno(-r), what: "finding the GPIO line named \(name)") }
        return (text(path), Int(offset))
    }

    /// Who holds line `offset` of this chip, as the kernel says, without requesting it.
    /// Wraps `CGPIOShim_line_info`.
    public func line(_ offset: Int) throws(GPIOError) -> GPIOLineInfo {
        guard offset >= 0, offset < lineCount else { throw GPIOError(errno: Errno(ERANGE), what: "reading line \(offset) of \(path)") }
        var used: Int32 = 0
        var consumer = [CChar](repeating: 0, count: 64), name = [CChar](repeating: 0, count: 64)
        let r = CGPIOShim_line_info(path, UInt32(offset), &used, &consumer, consumer.count, &name, name.count)
        guard r == 0 else { throw GPIOError(errno: Errno(-r), what: "reading line \(offset) of \(path)") }
        return GPIOLineInfo(offset: offset, name: text(name), used: used != 0, consumer: text(consumer))
    }

    /// 1 or 2: the libgpiod major version this build uses.
    public static var libgpiodVersion: Int { Int(CGPIOShim_api_version()) }
}

/// One line of a chip as the kernel sees it.
public struct GPIOLineInfo: Sendable, Equatable {
    public var offset: Int
    /// The line's name ("" when unnamed): GPIO17 on a Pi, what gpio-sim was told.
    public var name: String
    /// Requested by a process or claimed by a kernel driver.
    public var used: Bool
    /// Who holds it ("" when unnamed or free): a program's consumer string, a driver's name.
    public var consumer: String
    public init(offset: Int, name: String, used: Bool, consumer: String) {
        self.offset = offset
        self.name = name
        self.used = used
        self.consumer = consumer
    }
}

/// One edge on a requested line.
public struct GPIOEdge: Sendable, Equatable {
    public var offset: Int
    public var rising: Bool
    /// CLOCK_MONOTONIC, ns (the kernel's timestamp).
    public var time: UInt64
    /// The kernel's per-line sequence number (libgpiod 2.x), 0 when unknown.
    public var seqno: UInt64
    public init(offset: Int, rising: Bool, time: UInt64, seqno: UInt64 = 0) {
        self.offset = offset
        self.rising = rising
        self.time = time
        self.seqno = seqno
    }
}

/// The owner of one libgpiod line request: input lines with pull-up bias and edge events
/// both ways. `deinit` releases the lines and closes the chip. Use from one thread at a time.
public final class GPIOLines {
    public let chip: String
    public let offsets: [Int]
    /// The kernel debounces the lines (libgpiod 2.x with a period given).
    public let kernelDebounce: Bool
    /// The kernel refused the pull-up (older than 5.5): external pull-ups are needed.
    public let noBias: Bool
    /// Events carry sequence numbers, so lost events are detected exactly.
    public let hasSequenceNumbers: Bool
    private let request: OpaquePointer
    private var buffer = [CGPIOShim_event](repeating: CGPIOShim_event(), count: 64)

    /// Requests `offsets` on `chip` (path, name or label). `debounceMicroseconds`, one per line,
    /// asks the kernel to debounce where libgpiod 2.x can. Wraps `CGPIOShim_request_lines`.
    public init(chip: String, offsets: [Int], debounceMicroseconds: [UInt32]? = nil, consumer: String = "loopixd") throws(GPIOError) {
        self.chip = chip
        self.offsets = offsets
        guard !offsets.isEmpty, offsets.count <= Int(CGPIOShim_MAX_LINES), offsets.allSatisfy({ $0 >= 0 && $0 <= Int(UInt32.max) }) else {
            throw GPIOError(errno: Errno(EINVAL), what: "requesting \(offsets.count) lines of \(chip)")
        }
        let lines = offsets.map { UInt32($0) }
        var out: OpaquePointer?
        let r: Int32
        if let debounce = debounceMicroseconds, debounce.count == lines.count {
            r = CGPIOShim_request_lines(chip, consumer, lines, lines.count, debounce, &out)
        } else {
            r = CGPIOShim_request_lines(chip, consumer, lines, lines.count, nil, &out)
        }
        guard r >= 0, let request = out else {
            throw GPIOError(errno: Errno(-r), what: "requesting lines \(offsets.map(String.init).joined(separator: ",")) of \(chip) as inputs with pull-up and edge events")
        }
        self.request = request
        kernelDebounce = r & Int32(CGPIOShim_FLAG_KERNEL_DEBOUNCE) != 0
        noBias = r & Int32(CGPIOShim_FLAG_NO_BIAS) != 0
        hasSequenceNumbers = r & Int32(CGPIOShim_FLAG_SEQNO) != 0
    }

    deinit { CGPIOShim_release(request) }

    /// The fd to poll for POLLIN (owned by the request).
    public var fd: Int32 { CGPIOShim_fd(request) }

    /// The waiting edges, in time order, without blocking (empty: none). Wraps `CGPIOShim_read_events`.
    public func readEvents() throws(GPIOError) -> [GPIOEdge] {
        var edges: [GPIOEdge] = []
        while true {
            let n = buffer.withUnsafeMutableBufferPointer { CGPIOShim_read_events(request, $0.baseAddress, $0.count) }
            guard n >= 0 else { throw GPIOError(errno: Errno(-n), what: "reading edge events from \(chip)") }
            for e in buffer.prefix(Int(n)) {
                edges.append(GPIOEdge(offset: Int(e.offset), rising: e.rising != 0, time: e.timestamp_ns, seqno: e.line_seqno))
            }
            if Int(n) < buffer.count { return edges }
        }
    }

    /// The lines' levels now (true: high), in `offsets` order. Wraps `CGPIOShim_get_values`.
    public func values() throws(GPIOError) -> [Bool] {
        var v = [Int32](repeating: 0, count: offsets.count)
        let r = CGPIOShim_get_values(request, &v)
        guard r == 0 else { throw GPIOError(errno: Errno(-r), what: "reading the levels of \(chip)") }
        return v.map { $0 != 0 }
    }
}

/// The owner of one output line (a flash's or a ring light's switch): requested low, driven by
/// `set`, driven low again and released on `deinit`. Use from one thread at a time.
public final class GPIOOutput {
    public let chip: String
    public let offset: Int
    public private(set) var isHigh = false
    private let request: OpaquePointer

    /// Requests line `offset` of `chip` (path, name or label) as an output, low.
    /// Wraps `CGPIOShim_request_outputs`.
    public init(chip: String, offset: Int, consumer: String = "loopixd") throws(GPIOError) {
        self.chip = chip
        self.offset = offset
        guard offset >= 0, offset <= Int(UInt32.max) else { throw GPIOError(errno: Errno(EINVAL), what: "requesting line \(offset) of \(chip) as an output") }
        var line = UInt32(offset), low: Int32 = 0
        var out: OpaquePointer?
        let r = CGPIOShim_request_outputs(chip, consumer, &line, 1, &low, &out)
        guard r >= 0, let request = out else { throw GPIOError(errno: Errno(-r), what: "requesting line \(offset) of \(chip) as an output") }
        self.request = request
    }

    deinit {
        var low: Int32 = 0
        _ = CGPIOShim_set_values(request, &low)
        CGPIOShim_release(request)
    }

    /// Drives the line high (true) or low. Wraps `CGPIOShim_set_values`.
    public func set(_ high: Bool) throws(GPIOError) {
        var value: Int32 = high ? 1 : 0
        let r = CGPIOShim_set_values(request, &value)
        guard r == 0 else { throw GPIOError(errno: Errno(-r), what: "driving line \(offset) of \(chip) \(high ? "high" : "low")") }
        isHigh = high
    }
}

/// A NUL-terminated C buffer as a String.
func text(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
