import ControlProtocol
import Foundation

/// What the configured license allows: the daemon's watermark decision and `loopix doctor`'s
/// license line come from here.
public enum LicenseState: Sendable, Equatable, CustomStringConvertible {
    /// No public key configured: the free looks only.
    case noKey
    /// A key but no license file at `path`.
    case missing(path: String)
    /// The file is there but does not verify.
    case invalid(path: String, reason: String)
    case licensed(licensee: String, pro: Bool)

    public static func check(_ config: Config) -> LicenseState {
        guard let key = config.license.publicKey else { return .noKey }
        let path = config.license.file
        guard let bytes = FileManager.default.contents(atPath: path) else { return .missing(path: path) }
        do {
            let license = try License.verify([UInt8](bytes), publicKey: key)
            return .licensed(licensee: license.licensee, pro: license.has("pro"))
        } catch {
            return .invalid(path: path, reason: "\(error)")
        }
    }

    /// Pro looks without a watermark.
    public var allowsPro: Bool {
        if case .licensed(_, true) = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .noKey: return "no license key configured: the free looks, Pro looks carry a watermark"
        case .missing(let path): return "no license at \(path): Pro looks carry a watermark"
        case .invalid(let path, let reason): return "\(path): \(reason); Pro looks carry a watermark"
        case .licensed(let licensee, let pro): return pro ? "licensed to \(licensee)" : "licensed to \(licensee), without Pro looks"
        }
    }
}
