import Foundation

/// The settings of a Raspberry Pi `config.txt` that apply to every board: comments and blank
/// lines dropped, lines under a conditional section other than `[all]` (`[pi4]`, `[cm5]`,
/// `[none]`…) set aside, since the firmware applies them only on some boards.
struct BootConfig {
    /// The lines in effect everywhere, trimmed, in file order.
    let lines: [String]

    init(text: String) {
        var inAll = true
        var kept: [String] = []
        for raw in text.split(whereSeparator: \.isNewline) {
            var line = raw.trimmingCharacters(in: .whitespaces)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash].trimmingCharacters(in: .whitespaces) }
            guard !line.isEmpty else { continue }
            if line.hasPrefix("[") {
                inAll = line.lowercased() == "[all]"
                continue
            }
            if inAll { kept.append(line.replacingOccurrences(of: " ", with: "")) }
        }
        lines = kept
    }

    /// The sensors whose overlays stand for a camera line (`dtoverlay=imx708,cam0`).
    static let cameraOverlays = ["imx708", "imx477", "imx219", "ov5647", "imx296", "imx500", "imx290", "imx519", "arducam"]

    /// Whether `expected` (a board file's line) is in effect. `dtoverlay=x` is satisfied by `x`
    /// with parameters; `camera_auto_detect=1` also by a sensor's overlay; for other `key=value`
    /// lines the last setting of the key wins, as the firmware reads it.
    func satisfies(_ expected: String) -> Bool {
        let want = expected.replacingOccurrences(of: " ", with: "")
        if want.hasPrefix("dtoverlay=") {
            let overlay = want.dropFirst("dtoverlay=".count)
            return lines.contains { $0 == want || $0.hasPrefix("dtoverlay=\(overlay),") }
        }
        if want == "camera_auto_detect=1", lines.contains(where: { line in
            Self.cameraOverlays.contains { line == "dtoverlay=\($0)" || line.hasPrefix("dtoverlay=\($0),") || line.hasPrefix("dtoverlay=\($0)_") }
        }) {
            return true
        }
        guard let eq = want.firstIndex(of: "=") else { return lines.contains(want) }
        let key = want[..<eq]
        // dtparam lines may list several parameters (dtparam=i2c_arm=on,spi=on); a bare name means on.
        if key == "dtparam" {
            let param = String(want[want.index(after: eq)...])
            let name = param.split(separator: "=").first.map(String.init) ?? param
            let settings = lines.filter { $0.hasPrefix("dtparam=") }
                .flatMap { $0.dropFirst("dtparam=".count).split(separator: ",").map(String.init) }
            guard let last = settings.last(where: { $0 == name || $0.hasPrefix("\(name)=") }) else { return false }
            return (last == name ? "\(name)=on" : last) == param
        }
        return lines.last { $0.hasPrefix("\(key)=") } == want
    }

    /// Why a board file's line matters, for the finding.
    static func purpose(of line: String) -> String? {
        if line.hasPrefix("dtparam=i2c_arm") { return "the motion sensor's I2C bus" }
        if line.hasPrefix("dtoverlay=vc4-kms") { return "the screen through DRM/KMS" }
        if line.hasPrefix("camera_auto_detect") { return "the camera" }
        return nil
    }
}
