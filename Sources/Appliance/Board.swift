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
    /// The flash's or ring light's switch (an output line, `pins.flash`), if the board names one.
    public var flash: Int?
    public var i2cBus: Int
    public var display: String
    public var cameraPorts: [String]
    public var configTxt: [String]

    /// BCM GPIO numbers of the Pi's SoCs.
    public static let bcmLines = 0...53

    /// Every line by its name in `pins`, in `ControlPin` order with the flash last.
    public static func namedLines(_ pins: [ControlPin: Int], flash: Int?) -> [(name: String, line: Int)] {
        var named = pins.sorted(by: { $0.key < $1.key }).map { (name: $0.key.rawValue, line: $0.value) }
        if let flash { named.append((flashName, flash)) }
        return named
    }

    /// The output line's name in `pins` (beside the controls' names).
    public static let flashName = "flash"

    /// The first line used twice: (first use, second use, line) by name, in `ControlPin` order
    /// with the flash last.
    public static func firstDuplicate(_ pins: [ControlPin: Int], flash: Int? = nil) -> (String, String, Int)? {
        var seen: [Int: String] = [:]
        for (name, line) in namedLines(pins, flash: flash) {
            if let other = seen[line] { return (other, name, line) }
            seen[line] = name
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
        var flash: Int?
        try r.section("pins") { r throws(ConfigError) in
            for key in r.object.keys.sorted() {
                if key == flashName {
                    flash = try r.integer(key, in: bcmLines)
                    continue
                }
                guard let pin = ControlPin(rawValue: key) else {
                    throw fail(r.path(key), "unknown control (allowed: \(pinNames))")
                }
                pins[pin] = try r.integer(key, in: bcmLines)
            }
        }
        if let (a, b, line) = firstDuplicate(pins, flash: flash) {
            throw fail("pins.\(b)", "line \(line) is also used by \(a) (pins.\(a))")
        }
        let bus = try r.integer("i2cBus", in: 0...255) ?? 1
        let display = try r.optionalString("display") ?? "hdmi"
        let cameras = try r.strings("cameraPorts") ?? []
        let configTxt = try r.strings("configTxt") ?? []
        _ = r.value("notes")
        try r.rejectUnknown(allowed: "id, name, models, gpioChip, pins, i2cBus, display, cameraPorts, configTxt, notes")
        return Board(id: id, name: name, models: models, gpioChips: chips, pins: pins, flash: flash, i2cBus: bus, display: display,
                     cameraPorts: cameras, configTxt: configTxt)
    }

    /// The names `pins` takes: the controls' and the flash's.
    public static var pinNames: String { (ControlPin.allCases.map(\.rawValue) + [flashName]).joined(separator: ", ") }

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
    /// The flash's output line, when `booth.flash` drives one and the board or `gpio.pins.flash` names it.
    public var flash: Int?
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
    public func findChip() -> Result<GPIOChipInfo, GPIOChipMissing> { Self.findChip(candidates: chips) }

    /// The first of `candidates` (paths, names or labels) that opens.
    public static func findChip(candidates: [String]) -> Result<GPIOChipInfo, GPIOChipMissing> {
        var problems: [String] = []
        for chip in candidates {
            do { return .success(try GPIOChipInfo.find(chip)) } catch { problems.append("\(error)") }
        }
        return .failure(GPIOChipMissing(candidates: candidates, reason: problems.first ?? "no chip named"))
    }
}

extension Config {
    /// The GPIO chip candidates: `gpio.chip`, or the board's.
    public func gpioChips(board: Board) -> [String] { gpio.chip.map { [$0] } ?? board.gpioChips }

    /// Merges `gpio.pins` over the board's (and the flash's line, with `booth.flash` on) and checks the result; `lineCount` (the chip's,
    /// once opened) bounds the offsets. Errors name both uses of a line.
    public func gpioPlan(board: Board, lineCount: Int? = nil) throws(ConfigError) -> GPIOPlan {
        var pins = board.pins
        for (pin, line) in gpio.pins { pins[pin] = line }
        // The flash's line is the booth's only when it drives a light; otherwise it is free.
        let flash = booth.flash != .off ? gpio.flash ?? board.flash : nil
        func overridden(_ name: String) -> Bool {
            name == Board.flashName ? gpio.flash != nil : ControlPin(rawValue: name).map { gpio.pins[$0] != nil } ?? false
        }
        func origin(_ name: String) -> String {
            overridden(name) ? "gpio.pins.\(name)" : "board \(board.id): pins.\(name)"
        }
        if let (a, b, line) = Board.firstDuplicate(pins, flash: flash) {
            let (first, second) = overridden(b) ? (a, b) : (b, a)
            throw ConfigError(source: source, field: overridden(second) ? "gpio.pins.\(second)" : "board",
                              message: "line \(line) is used by both \(second) (\(origin(second))) and \(first) (\(origin(first)))")
        }
        if let count = lineCount, let (name, line) = Board.namedLines(pins, flash: flash).first(where: { $0.line >= count }) {
            throw ConfigError(source: source, field: origin(name), message: "line \(line) for \(name) is out of range (the chip has lines 0…\(count - 1))")
        }
        return GPIOPlan(chips: gpioChips(board: board), pins: pins, flash: flash, debounceMs: gpio.debounceMs,
                        transitionsPerDetent: gpio.transitionsPerDetent, acceleration: gpio.acceleration)
    }
}
