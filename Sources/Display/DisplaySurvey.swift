import CDRM
import Foundation

/// What the DRM cards of this machine offer, for `loopix doctor`: each card's driver and its
/// connectors with their modes. Opens each card briefly, read-only use, no master needed.
public struct DRMCardSurvey: Sendable, Equatable {
    public struct Connector: Sendable, Equatable {
        public var name: String
        public var connected: Bool
        public var isWriteback: Bool
        /// "1920x1080@60", preferred first, as the kernel lists them otherwise.
        public var modes: [String]
        public init(name: String, connected: Bool, isWriteback: Bool, modes: [String]) {
            self.name = name
            self.connected = connected
            self.isWriteback = isWriteback
            self.modes = modes
        }
    }

    public var path: String
    /// The kernel driver (vc4, vkms, virtio_gpu…); "" when unknown.
    public var driver: String
    public var connectors: [Connector]
    /// Why the card could not be read (permission, not a modesetting device); nil when read.
    public var problem: String?

    public init(path: String, driver: String, connectors: [Connector], problem: String? = nil) {
        self.path = path
        self.driver = driver
        self.connectors = connectors
        self.problem = problem
    }

    /// Every card under `directory` (card0, card1, … in number order).
    public static func survey(directory: String = "/dev/dri") -> [DRMCardSurvey] {
        KMSDisplay.cardPaths(directory: directory).map(survey(card:))
    }

    static func survey(card path: String) -> DRMCardSurvey {
        let card: DRMCard
        do { card = try DRMCard(path: path) } catch {
            return DRMCardSurvey(path: path, driver: "", connectors: [], problem: "\(error)")
        }
        var driver = ""
        if let version = drmGetVersion(card.fd) {
            if let name = version.pointee.name { driver = String(cString: name) }
            drmFreeVersion(version)
        }
        guard let all = ConnectorSnapshot.all(fd: card.fd) else {
            return DRMCardSurvey(path: path, driver: driver, connectors: [], problem: "no display outputs (not a modesetting device)")
        }
        let connectors = all.connectors.map { c in
            let preferredFirst = c.modes.filter { $0.candidate.preferred } + c.modes.filter { !$0.candidate.preferred }
            var labels: [String] = []
            for mode in preferredFirst where !labels.contains(mode.label) { labels.append(mode.label) }
            return Connector(name: c.name, connected: c.connected, isWriteback: c.isWriteback, modes: labels)
        }
        return DRMCardSurvey(path: path, driver: driver, connectors: connectors)
    }
}
