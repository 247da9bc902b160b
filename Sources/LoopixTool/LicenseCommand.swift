#if canImport(Glibc)
import Glibc
#endif
import ControlProtocol
import Foundation
import ImageFiles
import StrictJSON
import System

/// `loopix license`: make Ed25519 keys, issue licenses, check them.
public enum LicenseCommand {
    public static let help = """
    Usage: loopix license verify FILE (--public-key KEY | --config PATH)
           loopix license issue --licensee NAME --secret-key-file FILE -o OUT [--features pro,...] [--issued YYYY-MM-DD]
           loopix license keygen -o PREFIX

    verify   checks a license file against a public key (base64 or hex), or the key in the
             daemon's configuration (license.publicKey), and prints what it grants.
    issue    signs a license (features default to "pro"; issued defaults to today, UTC).
    keygen   writes a new key pair: PREFIX.public (base64) and PREFIX.secret (base64, mode 0600).
             Keep the secret key off the cameras.
    Nothing is overwritten.
    """

    public static func run(_ words: [String], output: (String) -> Void = { print($0) }) throws(ToolError) {
        guard let sub = words.first else { throw .usage("license needs verify, issue or keygen (try loopix license --help)") }
        let args = try Arguments(Array(words.dropFirst()),
                                 valued: ["--public-key": "public-key", "--config": "config", "--licensee": "licensee",
                                          "--secret-key-file": "secret-key-file", "-o": "output", "--output": "output",
                                          "--features": "features", "--issued": "issued"],
                                 flags: [:])
        switch sub {
        case "verify":
            guard args.operands.count == 1 else { throw .usage("license verify needs one FILE") }
            let file = args.operands[0]
            let key: [UInt8]
            if let text = args.value("public-key") {
                guard let k = LicenseKeys.decode(text, length: LicenseKeys.publicKeyLength) else {
                    throw .usage("--public-key must be a 32-byte Ed25519 public key in base64 or hex")
                }
                key = k
            } else if let configPath = args.value("config") {
                key = try trustedKey(configurationFile: configPath)
            } else {
                throw .usage("license verify needs --public-key KEY or --config PATH")
            }
            let bytes = try read(file)
            do {
                let license = try License.verify(bytes, publicKey: key)
                output("\(file): valid license for \(license.licensee), issued \(license.issued), features: \(license.features.joined(separator: ", "))")
            } catch {
                throw ToolError("\(file): \(error.description)")
            }
        case "issue":
            guard args.operands.isEmpty else { throw .usage("license issue: unexpected argument \"\(args.operands[0])\"") }
            guard let licensee = args.value("licensee"), !licensee.isEmpty else { throw .usage("license issue needs --licensee NAME") }
            guard let keyFile = args.value("secret-key-file") else { throw .usage("license issue needs --secret-key-file FILE") }
            guard let out = args.value("output") else { throw .usage("license issue needs -o OUT") }
            let keyText = String(decoding: try read(keyFile), as: UTF8.self)
            guard let secret = LicenseKeys.decode(keyText, length: LicenseKeys.secretKeyLength) else {
                throw ToolError("\(keyFile): not an Ed25519 secret key (64 bytes, base64 or hex; made by loopix license keygen)")
            }
            let features = (args.value("features") ?? "pro").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let bytes: [UInt8]
            do {
                bytes = try License.issue(licensee: licensee, features: features, issued: args.value("issued"), secretKey: secret)
            } catch {
                throw ToolError(error.description)
            }
            do { try AtomicFile.write(bytes, to: out, replace: false) } catch { throw ToolError("\(out): cannot write (\(error))") }
            output("\(out): license for \(licensee) (\(features.joined(separator: ", ")))")
        case "keygen":
            guard args.operands.isEmpty else { throw .usage("license keygen: unexpected argument \"\(args.operands[0])\"") }
            guard let prefix = args.value("output") else { throw .usage("license keygen needs -o PREFIX") }
            let pair: KeyPair
            do { pair = try KeyPair.generate() } catch { throw ToolError(error.description) }
            let publicPath = prefix + ".public", secretPath = prefix + ".secret"
            for p in [publicPath, secretPath] where FileManager.default.fileExists(atPath: p) {
                throw ToolError("\(p): already exists (nothing is overwritten)")
            }
            try writeSecret(Array((LicenseKeys.encode(pair.secretKey) + "\n").utf8), to: secretPath)
            do {
                try AtomicFile.write(Array((LicenseKeys.encode(pair.publicKey) + "\n").utf8), to: publicPath, replace: false)
            } catch {
                throw ToolError("\(publicPath): cannot write (\(error))")
            }
            output("\(publicPath): public key (put it in the camera's license.publicKey)")
            output("\(secretPath): secret key, mode 0600 (keep it safe and off the cameras)")
        default:
            throw .usage("license: unknown subcommand \"\(sub)\" (verify, issue or keygen)")
        }
    }

    private static func read(_ path: String) throws(ToolError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ToolError("\(path): cannot be read (missing or not permitted)")
        }
        return Array(data)
    }

    /// Creates `path` exclusively with mode 0600 from the start (never readable by others).
    private static func writeSecret(_ bytes: [UInt8], to path: String) throws(ToolError) {
        var opened = false
        let created: Result<Void, Errno> = Result { () throws(Errno) in
            let file = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
            opened = true
            if fchmod(file.rawValue, 0o600) != 0 { throw Errno.current }
            let written: Result<Void, Errno> = bytes.withUnsafeBytes { buffer in Result { () throws(Errno) in try file.writeAll(buffer) } }
            try written.get()
            try file.sync()
            try file.close()
        }
        if case .failure(let error) = created {
            guard opened else { throw ToolError("\(path): cannot create (\(error.message))") }
            unlink(path)  // never a half-written secret
            throw ToolError("\(path): cannot write (\(error.message))")
        }
    }

    /// The key a camera trusts: `license.publicKey` in its configuration file (the rest of the
    /// file is the daemon's business; `loopixd --check-config` checks it).
    static func trustedKey(configurationFile path: String) throws(ToolError) -> [UInt8] {
        let root: JSONObject
        let bytes = try read(path)
        do { root = try FieldError.parseObject(bytes, source: path) } catch { throw ToolError(error.description) }
        guard case .object(let license)? = root["license"], case .string(let text)? = license["publicKey"] else {
            throw ToolError("\(path): license.publicKey is not set")
        }
        guard let key = LicenseKeys.decode(text, length: LicenseKeys.publicKeyLength) else {
            throw ToolError("\(path): license.publicKey: must be a 32-byte Ed25519 public key in base64 or hex")
        }
        return key
    }
}
