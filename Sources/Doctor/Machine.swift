import Appliance
import BoardIO
import Camera
import Display
import System

/// What `loopix doctor` asks of the machine. `LiveMachine` asks the real one (libcamera,
/// DRM, libgpiod, I2C, statvfs, the control socket, systemctl); the tests give fakes.
public protocol Machine {
    /// The cameras libcamera lists, as lenses; the error text when libcamera could not be asked.
    func cameras(_ config: Config) -> Result<[Lens], MachineError>
    /// `/boot/firmware/config.txt` (or the older `/boot/config.txt`): path and text; nil when absent.
    func bootConfig() -> (path: String, text: String)?
    /// The DRM cards and their connectors.
    func displays() -> [DRMCardSurvey]
    /// The first of `candidates` that opens.
    func gpioChip(_ candidates: [String]) -> Result<GPIOChipInfo, MachineError>
    /// Who holds a line, without requesting it.
    func gpioLine(chip: GPIOChipInfo, offset: Int) -> Result<GPIOLineInfo, MachineError>
    /// What answers WHO_AM_I at each address on the bus.
    func imu(bus: Int, addresses: [Int]) -> Result<[IMUAnswer], MachineError>
    /// What is at the storage directory.
    func storage(_ path: String) -> StorageFacts
    /// The running daemon's `status` reply (JSON text), or why there is none.
    func daemonStatus(socketPath: String) -> Result<String, DaemonUnreachable>
    /// `systemctl is-active`/`is-enabled` of the unit; nil when systemd is not running here.
    func service(_ unit: String) -> ServiceState?
    /// Whether a user account of that name exists.
    func userExists(_ name: String) -> Bool
}

/// A device or library that could not be asked, said in one line.
public struct MachineError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// The errno behind it, when there is one (EACCES means: not in the right group).
    public var errno: Errno?
    public init(_ message: String, errno: Errno? = nil) {
        self.message = message
        self.errno = errno
    }
    public var description: String { message }
}

/// One I2C address's answer.
public struct IMUAnswer: Sendable, Equatable {
    public var address: Int
    /// nil: nothing acknowledged at this address.
    public var chip: IMUChip?
    /// The raw WHO_AM_I bytes (registers 0x75 and 0x0F) when something answered; nil when not.
    public var register75: UInt8?
    public var register0F: UInt8?
    public init(address: Int, chip: IMUChip?, register75: UInt8?, register0F: UInt8?) {
        self.address = address
        self.chip = chip
        self.register75 = register75
        self.register0F = register0F
    }
    public var answered: Bool { register75 != nil || register0F != nil }
}

public struct StorageFacts: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case directory, notDirectory, missing }
    public var kind: Kind
    /// Free bytes for unprivileged users on its filesystem (or its nearest existing parent's).
    public var freeBytes: Int64?
    /// The owning user's name, when it exists.
    public var owner: String?
    public init(kind: Kind, freeBytes: Int64?, owner: String?) {
        self.kind = kind
        self.freeBytes = freeBytes
        self.owner = owner
    }
}

public enum DaemonUnreachable: Error, Sendable, Equatable {
    /// No socket there: the daemon is not running (or uses another socket).
    case noSocket
    /// A socket nobody listens on: a daemon that died without cleaning up.
    case refused
    /// Not allowed to connect: not in the socket's group.
    case permission
    case other(String)
}

public struct ServiceState: Sendable, Equatable {
    /// `active`, `inactive`, `failed`, `activating`… or `not-found`.
    public var active: String
    /// `enabled`, `disabled`… or `not-found`.
    public var enabled: String
    public init(active: String, enabled: String) {
        self.active = active
        self.enabled = enabled
    }
}
