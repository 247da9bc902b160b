import BoardIO
import Controls
import Foundation
import StrictJSON

/// A supported board, from `boards/<id>.json`: its GPIO chip, the header pins of each control
/// (BCM line offsets), its I2C bus and default display and camera ports.
///
/// ```json
/// { "id": "pi4b", "name": "Raspberry Pi 4 Model B",
///   "models": ["Raspberry Pi 4 Model B", "Raspberry Pi 400"],
///   "gpioChip": ["pinctrl-bcm2711", "gpiochip0"],
///   "pins": { "shutter-left": 5, "shutter-right": 6, "encoder-a": 17, … },
///   "i2cBus": 1, "display": "dsi", "cameraPorts": ["cam0"],
///   "configTxt": ["dtparam=i2c_arm=on", "dtoverlay=vc4-kms-v3d", "camera_auto_detect=1"] }
/// ```
/// `gpioChip` lists candidates (label first, then name), tried in order. `models` are the
/// beginnings of the device-tree model strings (`/proc/device-tree/model`) that mean this
/// board, for `"board": "auto"`. `configTxt` are the lines `/boot/firmware/config.txt` needs
/// for the camera, the screen and I2C (what `loopix doctor` checks).
public struct Board: Sendable, Equatable {
    public var id: String
    public var name: String
    public var models: [String]
    public var gpioChips: [String]
    public var pins: [ControlPin: Int]
    public var i2cBus: Int
    public var display: String
    public var cameraPorts: [String]
    public var configTxt: [String]

    /// BCM GPIO numbers of the Pi's SoCs.
    public static let bcmLines = 0...53

    /// The first line used by two controls: (first use, second use, line), in `ControlPin` order.
    public static func firstDuplicate(_ pins: [ControlPin: Int]) -> (ControlPin, ControlPin, Int)? {
        var seen: [Int: ControlPin] = [:]
        for (pin, line) in pins.sorted(by: { $0.key < $1.key }) {
            if let other = seen[line] { return (other, pin, line) }
            seen[line] = pin
        }
        return nil
    }

    /// The camera lens table that lives beside the board files (not a board).
    public static let lensTableFile = "lenses.json"

    /// Reads `directory/<id>.json`.
    public static func load(id: String, directory: String) throws(ConfigError) -> Board {
        guard !id.isEmpty, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw ConfigError(source: directory, field: "board", message: "\"\(id)\" is not a board id (letters, digits, - and _)")
        }
        let path = (directory as NSString).appendingPathComponent("\(id).json")
        guard let data = FileManager.default.contents(atPath: path) else {
            let known = (try? FileManager.default.contentsOfDirectory(atPath: directory))?
                .filter { $0.hasSuffix(".json") && $0 != Board.lensTableFile }.map { String($0.dropLast(5)) }.sorted() ?? []
            throw ConfigError(source: path, field: "", message: "no such board file (boards in \(directory): \(known.isEmpty ? "none" : known.joined(separator: ", ")))")
        }
        return try parse(data, source: path)
    }

    /// Every `*.json` in `directory`, by id.
    public static func loadAll(directory: String) throws(ConfigError) -> [Board] {
        let files: [String]
        do { files = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw ConfigError(source: directory, field: "", message: "cannot list the board files")
        }
        var boards: [Board] = []
        for f in files.sorted() where f.hasSuffix(".json") && f != Board.lensTableFile {
            boards.append(try load(id: String(f.dropLast(5)), directory: directory))
        }
        return boards
    }

    public static func parse(_ data: Data, source: String) throws(ConfigError) -> Board {
        func fail(_ field: String, _ message: String) -> ConfigError { ConfigError(source: source, field: field, message: message) }
        let root = try FieldError.parseObject(data, source: source)
        var r = JSONFields(root, fail: fail)
        let id = try r.string("id")
        let name = try r.string("name")
        let models = try r.strings("models") ?? []
        var chips: [String] = []
        switch r.value("gpioChip") {
        case .string(let name)?: chips = [name]
        case .array(let items)? where !items.isEmpty:
            for item in items {
                guard case .string(let name) = item else { throw fail("gpioChip", "must be a chip name or label, or a list of them") }
                chips.append(name)
            }
        case nil: throw fail("gpioChip", "is missing")
        default: throw fail("gpioChip", "must be a chip name or label, or a list of them")
        }
        var pins: [ControlPin: Int] = [:]
        try r.section("pins") { r throws(ConfigError) in
            for key in r.object.keys.sorted() {
                guard let pin = ControlPin(rawValue: key) else {
                    throw fail(r.path(key), "unknown control (allowed: \(ControlPin.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                pins[pin] = try r.integer(key, in: bcmLines)
            }
        }
        if let (a, b, line) = firstDuplicate(pins) {
            throw fail("pins.\(b.rawValue)", "line \(line) is also used by \(a.rawValue) (pins.\(a.rawValue))")
        }
        let bus = try r.integer("i2cBus", in: 0...255) ?? 1
        let display = try r.optionalString("display") ?? "hdmi"
        let cameras = try r.strings("cameraPorts") ?? []
        let configTxt = try r.strings("configTxt") ?? []
        _ = r.value("notes")
        try r.rejectUnknown(allowed: "id, name, models, gpioChip, pins, i2cBus, display, cameraPorts, configTxt, notes")
        return Board(id: id, name: name, models: models, gpioChips: chips, pins: pins, i2cBus: bus, display: display,
                     cameraPorts: cameras, configTxt: configTxt)
    }

    /// The board whose `models` begin `model` (the longest such beginning wins), if any.
    public static func matching(model: String, in boards: [Board]) -> Board? {
        var best: (board: Board, length: Int)?
        for board in boards {
            for prefix in board.models where model.hasPrefix(prefix) && prefix.count > (best?.length ?? 0) {
                best = (board, prefix.count)
            }
        }
        return best?.board
    }
}

/// The GPIO set-up a configuration asks for: the board's pins with the configuration's
/// overrides, checked (no line used twice; lines within the chip's when known).
public struct GPIOPlan: Sendable, Equatable {
    public var chips: [String]
    public var pins: [ControlPin: Int]
    public var debounceMs: Int
    public var transitionsPerDetent: Int
    public var acceleration: Bool
}

/// None of a plan's GPIO chips could be opened.
public struct GPIOChipMissing: Error, Sendable, Equatable, CustomStringConvertible {
    public var candidates: [String]
    /// Why the first candidate failed.
    public var reason: String
    public var description: String { "no chip \(candidates.joined(separator: " or ")) (\(reason))" }
}

extension GPIOPlan {
    /// The first of `chips` that opens.
    public func findChip() -> Result<GPIOChipInfo, GPIOChipMissing> {
        var problems: [String] = []
        for chip in chips {
            do { return .success(try GPIOChipInfo.find(chip)) } catch { problems.append("\(error)") }
        }
        return .failure(GPIOChipMissing(candidates: chips, reason: problems.first ?? "no chip named"))
    }
}

extension Config {
    /// Merges `gpio.pins` over the board's and checks the result; `lineCount` (the chip's,
    /// once opened) bounds the offsets. Errors name both uses of a line.
    public func gpioPlan(board: Board, lineCount: Int? = nil) throws(ConfigError) -> GPIOPlan {
        var pins = board.pins
        for (pin, line) in gpio.pins { pins[pin] = line }
        func origin(_ p: ControlPin) -> String {
            gpio.pins[p] != nil ? "gpio.pins.\(p.rawValue)" : "board \(board.id): pins.\(p.rawValue)"
        }
        if let (a, b, line) = Board.firstDuplicate(pins) {
            let (first, second) = gpio.pins[b] != nil ? (a, b) : (b, a)
            throw ConfigError(source: source, field: gpio.pins[second] != nil ? "gpio.pins.\(second.rawValue)" : "board",
                              message: "line \(line) is used by both \(second.rawValue) (\(origin(second))) and \(first.rawValue) (\(origin(first)))")
        }
        if let count = lineCount, let (pin, line) = pins.sorted(by: { $0.key < $1.key }).first(where: { $0.value >= count }) {
            throw ConfigError(source: source, field: origin(pin), message: "line \(line) for \(pin.rawValue) is out of range (the chip has lines 0…\(count - 1))")
        }
        return GPIOPlan(chips: gpio.chip.map { [$0] } ?? board.gpioChips, pins: pins, debounceMs: gpio.debounceMs,
                        transitionsPerDetent: gpio.transitionsPerDetent, acceleration: gpio.acceleration)
    }
}
