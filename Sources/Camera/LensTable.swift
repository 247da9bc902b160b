import Foundation
import StrictJSON

/// Focal lengths by sensor model: libcamera reports the sensor, not the lens, so the camera
/// modules' known lenses come from a table (boards/lenses.json), and interchangeable-lens
/// sensors (imx477, imx296…) take the focal length the user configures.
public struct LensTable: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        /// Real focal length in mm; nil for interchangeable-lens sensors.
        public var focalLength: Double?
        public var description: String
    }

    public var entries: [String: Entry]

    /// 35 mm film's diagonal.
    public static let fullFrameDiagonal = 43.267

    public init(entries: [String: Entry]) { self.entries = entries }

    /// The modules this build knows, for when boards/lenses.json cannot be read.
    public static let builtIn = LensTable(entries: [
        "imx708": Entry(focalLength: 4.74, description: "Camera Module 3"),
        "imx708_wide": Entry(focalLength: 2.75, description: "Camera Module 3 Wide"),
        "imx708_noir": Entry(focalLength: 4.74, description: "Camera Module 3 NoIR"),
        "imx708_wide_noir": Entry(focalLength: 2.75, description: "Camera Module 3 Wide NoIR"),
        "imx219": Entry(focalLength: 3.04, description: "Camera Module 2"),
        "ov5647": Entry(focalLength: 3.6, description: "Camera Module 1"),
        "imx477": Entry(focalLength: nil, description: "HQ Camera (interchangeable lens)"),
        "imx296": Entry(focalLength: nil, description: "Global Shutter Camera (interchangeable lens)"),
    ])

    /// Reads `{ "imx708": { "focalLength": 4.74, "description": "…" }, … }`.
    public static func load(path: String) throws(FieldError) -> LensTable {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw FieldError(source: path, field: "", message: "cannot be read (\(error.localizedDescription))")
        }
        let root = try FieldError.parseObject(data, source: path)
        var entries: [String: Entry] = [:]
        for (model, value) in root.members {
            guard case .object(let object) = value else {
                throw FieldError(source: path, field: model, message: "must be an object, not \(value.kind)")
            }
            var fields = JSONFields(object, source: path, prefix: model)
            let focal = try fields.number("focalLength", in: 0.5...300)
            let description = try fields.optionalString("description") ?? model
            try fields.rejectUnknown()
            entries[model] = Entry(focalLength: focal, description: description)
        }
        return LensTable(entries: entries)
    }

    /// Sensor diagonal in mm from its pixel array and pixel pitch (nm), when both are known.
    public static func sensorDiagonal(pixelsWide: Int, pixelsHigh: Int, cellWidthNm: Int, cellHeightNm: Int) -> Double? {
        guard pixelsWide > 0, pixelsHigh > 0, cellWidthNm > 0, cellHeightNm > 0 else { return nil }
        let w = Double(pixelsWide) * Double(cellWidthNm) / 1e6, h = Double(pixelsHigh) * Double(cellHeightNm) / 1e6
        return (w * w + h * h).squareRoot()
    }

    /// Focal length and its 35 mm equivalent for a sensor: the override wins, then the table;
    /// an unknown sensor size is taken as a 1/4" sensor (4.6 mm diagonal, as the small modules).
    public func focalLengths(model: String, sensorDiagonal: Double?, override: Double?) -> (mm: Double, equivalent: Double, known: Bool) {
        let diagonal = sensorDiagonal ?? 4.6
        let crop = Self.fullFrameDiagonal / diagonal
        if let override { return (override, override * crop, true) }
        if let focal = entries[model]?.focalLength { return (focal, focal * crop, true) }
        // Unknown: a "normal" lens for the sensor (focal length ≈ diagonal).
        return (diagonal, diagonal * crop, false)
    }
}
