import Appliance
import BoardIO
import Camera
import ControlProtocol
import Display
import Foundation
import System

/// The real machine: libcamera's camera list, the DRM cards, libgpiod's line info, WHO_AM_I
/// over I2C, statvfs, the control socket, systemctl. Reads only: nothing is requested, set or
/// started (a camera is listed, not acquired; a GPIO line is looked at, not requested).
public struct LiveMachine: Machine {
    /// Where config.txt is looked for, newest place first; `LOOPIX_BOOT_CONFIG` names another
    /// (the bench, a card mounted on a PC).
    public var bootConfigPaths = ProcessInfo.processInfo.environment["LOOPIX_BOOT_CONFIG"].map { [$0] }
        ?? ["/boot/firmware/config.txt", "/boot/config.txt"]

    public init() {}

    public func cameras(_ config: Config) -> Result<[Lens], MachineError> {
        do {
            let manager = try LibcameraManager()
            var table = LensTable.builtIn
            if let path = config.camera.lensTable, let loaded = try? LensTable.load(path: path) { table = loaded }
            do {
                return .success(try LibcameraCamera(manager: manager, table: table, focalLengthOverrides: config.camera.focalLengths).lenses)
            } catch CameraError.noCamera {
                return .success([])
            }
        } catch {
            return .failure(MachineError("\(error)"))
        }
    }

    public func bootConfig() -> (path: String, text: String)? {
        for path in bootConfigPaths {
            // /boot/config.txt on trixie is a stub pointing at /boot/firmware; skip it then.
            if let data = FileManager.default.contents(atPath: path) {
                let text = String(decoding: data, as: UTF8.self)
                if path == "/boot/config.txt", text.contains("/boot/firmware/config.txt") { continue }
                return (path, text)
            }
        }
        return nil
    }

    public func displays() -> [DRMCardSurvey] { DRMCardSurvey.survey() }

    public func gpioChip(_ candidates: [String]) -> Result<GPIOChipInfo, MachineError> {
        var first: GPIOError?
        for chip in candidates {
            do { return .success(try GPIOChipInfo.find(chip)) } catch { first = first ?? error }
        }
        return .failure(MachineError(first.map { "\($0)" } ?? "no chip named", errno: first?.errno))
    }

    public func gpioLine(chip: GPIOChipInfo, offset: Int) -> Result<GPIOLineInfo, MachineError> {
        do { return .success(try chip.line(offset)) } catch { return .failure(MachineError("\(error)", errno: error.errno)) }
    }

    public func imu(bus: Int, addresses: [Int]) -> Result<[IMUAnswer], MachineError> {
        var answers: [IMUAnswer] = []
        for address in addresses {
            let device: I2CDevice
            do { device = try I2CDevice(bus: bus, address: address) } catch {
                return .failure(MachineError("\(error)", errno: error.errno))
            }
            // A read that fails means nothing acknowledged at this address.
            let r75 = try? device.readByte(0x75), r0F = try? device.readByte(0x0F)
            let chip = IMUChip.allCases.first { c in c.whoAmI == (0x75, r75 ?? 0) || c.whoAmI == (0x0F, r0F ?? 0) }
            answers.append(IMUAnswer(address: address, chip: (r75 == nil && r0F == nil) ? nil : chip, register75: r75, register0F: r0F))
        }
        return .success(answers)
    }

    public func storage(_ path: String) -> StorageFacts {
        var st = stat()
        guard stat(path, &st) == 0 else {
            // Free space where it will be created: the nearest existing parent.
            var parent = (path as NSString).deletingLastPathComponent
            while !parent.isEmpty, parent != "/", !FileManager.default.fileExists(atPath: parent) {
                parent = (parent as NSString).deletingLastPathComponent
            }
            return StorageFacts(kind: .missing, freeBytes: Self.free(parent.isEmpty ? "/" : parent), owner: nil)
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { return StorageFacts(kind: .notDirectory, freeBytes: nil, owner: nil) }
        var owner: String?
        if let pw = getpwuid(st.st_uid) { owner = String(cString: pw.pointee.pw_name) }
        return StorageFacts(kind: .directory, freeBytes: Self.free(path), owner: owner)
    }

    static func free(_ path: String) -> Int64? {
        var vfs = statvfs()
        return statvfs(path, &vfs) == 0 ? Int64(vfs.f_bavail) * Int64(vfs.f_frsize) : nil
    }

    public func daemonStatus(socketPath: String) -> Result<String, DaemonUnreachable> {
        do {
            return .success(try ControlClient.send(line: #"{"cmd":"status"}"#, socketPath: socketPath, timeout: 3))
        } catch {
            // Look at the socket itself to tell the cases apart.
            var st = stat()
            if stat(socketPath, &st) != 0 { return .failure(errno == EACCES ? .permission : .noSocket) }
            let message = error.message
            if message.contains("Connection refused") { return .failure(.refused) }
            if message.contains("Permission denied") { return .failure(.permission) }
            return .failure(.other(message))
        }
    }

    public func service(_ unit: String) -> ServiceState? {
        // systemd runs when /run/systemd/system exists (sd_booted(3)).
        guard FileManager.default.fileExists(atPath: "/run/systemd/system") else { return nil }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/systemctl")
        p.arguments = ["show", "--property=LoadState", "--property=ActiveState", "--property=UnitFileState", unit]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return nil }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        var properties: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { properties[parts[0]] = parts[1] }
        }
        if properties["LoadState"] == "not-found" { return ServiceState(active: "not-found", enabled: "not-found") }
        return ServiceState(active: properties["ActiveState"] ?? "unknown", enabled: properties["UnitFileState"].flatMap { $0.isEmpty ? nil : $0 } ?? "unknown")
    }

    public func userExists(_ name: String) -> Bool { getpwnam(name) != nil }
}
