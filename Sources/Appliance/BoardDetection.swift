import Foundation
import System

/// What `"board": "auto"` found: the device-tree model this machine reports and the board
/// file whose `models` it matches. An unknown board (or no device tree: a PC) means no GPIO
/// buttons and no board I2C bus — a warning, never a failure.
public struct DetectedBoard: Sendable, Equatable {
    /// `/proc/device-tree/model`, without its trailing NUL; nil when there is none.
    public var model: String?
    /// The matching board id; nil when none matched.
    public var id: String?
    /// The model is there but no board file knows it: worth a warning.
    public var isUnknownBoard: Bool
    /// One line for the log and `loopix doctor`.
    public var message: String

    /// The file the model is read from: the device tree in sysfs (`/proc/device-tree` is a
    /// link to it, and the service's `ProcSubset=pid` hides /proc's other entries).
    /// `LOOPIX_DEVICE_TREE_MODEL` points elsewhere (tests; a device tree mounted elsewhere).
    public static var modelPath: String {
        ProcessInfo.processInfo.environment["LOOPIX_DEVICE_TREE_MODEL"] ?? "/sys/firmware/devicetree/base/model"
    }

    /// The model string in `path` (NUL-terminated in the device tree); nil when unreadable.
    public static func readModel(path: String = modelPath) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data.prefix { $0 != 0 }, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// Matches `model` against the board files in `directory`.
    public static func detect(model: String?, boardsDirectory directory: String) -> DetectedBoard {
        guard let model else {
            return DetectedBoard(model: nil, id: nil, isUnknownBoard: false,
                                 message: "board: auto: no device-tree model at \(modelPath) (not a Raspberry Pi?); no GPIO buttons")
        }
        let boards: [Board]
        do { boards = try Board.loadAll(directory: directory) } catch {
            return DetectedBoard(model: model, id: nil, isUnknownBoard: true,
                                 message: "board: auto: \(error); no GPIO buttons")
        }
        guard let board = Board.matching(model: model, in: boards) else {
            return DetectedBoard(model: model, id: nil, isUnknownBoard: true,
                                 message: "board: auto: \"\(model)\" is not a board Loopix knows (\(boards.map(\.id).joined(separator: ", "))); " +
                                          "no GPIO buttons — set \"board\" in the configuration if its header matches one")
        }
        return DetectedBoard(model: model, id: board.id, isUnknownBoard: false,
                             message: "board: auto: \(model) → \(board.id)")
    }
}
