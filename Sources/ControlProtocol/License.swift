import CSodium
import Foundation
import StrictJSON

/// Why a license or a key was rejected, on one line.
public enum LicenseError: Error, Equatable, CustomStringConvertible {
    /// Not a license file: not JSON, a field missing or of the wrong type, an unknown field.
    case malformed(String)
    /// The file names a license version this Loopix does not read.
    case unknownVersion(Int)
    /// Signed by another key than the one this camera trusts (the `keyId`s differ).
    case wrongKey(licenseKeyID: String, trustedKeyID: String)
    /// The signature does not match the contents: the file was altered, or forged.
    case badSignature
    /// A key of the wrong length or encoding.
    case invalidKey(String)
    /// libsodium could not be initialised or failed.
    case crypto(String)

    public var description: String {
        switch self {
        case .malformed(let why): return "license is malformed: \(why)"
        case .unknownVersion(let v): return "license version \(v) is not supported (this Loopix reads version \(License.currentVersion))"
        case .wrongKey(let theirs, let ours): return "license was signed with key \(theirs), but this camera trusts key \(ours)"
        case .badSignature: return "license signature does not match its contents (altered or forged)"
        case .invalidKey(let why): return "invalid key: \(why)"
        case .crypto(let why): return "crypto failure: \(why)"
        }
    }
}

/// Key encoding helpers: keys are written as base64 (hex is accepted too).
public enum LicenseKeys {
    public static let publicKeyLength = 32
    /// libsodium's Ed25519 secret key: the 32-byte seed followed by the public key.
    public static let secretKeyLength = 64

    /// Decodes base64 or hex text (surrounding whitespace ignored) to exactly `length` bytes.
    public static func decode(_ text: String, length: Int) -> [UInt8]? {
        let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if t.count == length * 2, t.allSatisfy(\.isHexDigit) {
            var bytes: [UInt8] = []
            var i = t.startIndex
            while i < t.endIndex {
                let j = t.index(i, offsetBy: 2)
                guard let b = UInt8(t[i..<j], radix: 16) else { return nil }
                bytes.append(b)
                i = j
            }
            return bytes
        }
        guard let data = Data(base64Encoded: t), data.count == length else { return nil }
        return Array(data)
    }

    public static func encode(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// A short public fingerprint of a public key: the first 8 bytes of its BLAKE2b-256 hash, in hex.
    public static func keyID(publicKey: [UInt8]) throws(LicenseError) -> String {
        guard publicKey.count == publicKeyLength else {
            throw .invalidKey("a public key is \(publicKeyLength) bytes, not \(publicKey.count)")
        }
        try Sodium.ready()
        var hash = [UInt8](repeating: 0, count: 32)
        let rc = crypto_generichash(&hash, 32, publicKey, UInt64(publicKey.count), nil, 0)
        guard rc == 0 else { throw .crypto("crypto_generichash failed") }
        return hash.prefix(8).map { String(format: "%02x", $0) }.joined()
    }
}

/// An Ed25519 key pair (libsodium `crypto_sign_keypair`).
public struct KeyPair: Sendable, Equatable {
    public let publicKey: [UInt8]
    public let secretKey: [UInt8]

    public static func generate() throws(LicenseError) -> KeyPair {
        try Sodium.ready()
        var pk = [UInt8](repeating: 0, count: LicenseKeys.publicKeyLength)
        var sk = [UInt8](repeating: 0, count: LicenseKeys.secretKeyLength)
        guard crypto_sign_keypair(&pk, &sk) == 0 else { throw .crypto("crypto_sign_keypair failed") }
        return KeyPair(publicKey: pk, secretKey: sk)
    }

    /// The public key contained in a 64-byte libsodium secret key.
    public static func publicKey(ofSecretKey sk: [UInt8]) throws(LicenseError) -> [UInt8] {
        guard sk.count == LicenseKeys.secretKeyLength else {
            throw .invalidKey("a secret key is \(LicenseKeys.secretKeyLength) bytes, not \(sk.count)")
        }
        try Sodium.ready()
        var pk = [UInt8](repeating: 0, count: LicenseKeys.publicKeyLength)
        guard crypto_sign_ed25519_sk_to_pk(&pk, sk) == 0 else { throw .crypto("crypto_sign_ed25519_sk_to_pk failed") }
        return pk
    }
}

/// libsodium initialisation, once per process (`sodium_init`, thread-safe; a static let is
/// initialised exactly once).
enum Sodium {
    private static let initialised: Bool = sodium_init() >= 0

    static func ready() throws(LicenseError) {
        guard initialised else { throw .crypto("sodium_init failed") }
    }
}

/// A Loopix Pro license: who it is for and what it unlocks, signed with Ed25519.
///
/// The file is one small JSON object:
/// ```json
/// { "version": 1, "licensee": "Ada Lovelace", "issued": "2026-11-30", "features": ["pro"],
///   "keyId": "1f2e3d4c5b6a7988", "signature": "<base64, 64 bytes>" }
/// ```
/// `keyId` is the first 8 bytes (hex) of BLAKE2b-256 of the signing public key; it lets a
/// camera tell "signed with another key" from "altered". Unknown fields are rejected.
///
/// **Canonical payload** (the bytes that are signed): every field except `signature`, as JSON
/// with keys in byte order and no whitespace, strings escaped minimally (`"` → `\"`,
/// `\` → `\\`, control characters as `\n`, `\r`, `\t` or `\u00xx`, everything else — `/` and
/// non-ASCII included — as raw UTF-8), `features` in the file's order, `version` as an integer:
/// ```
/// {"features":["pro"],"issued":"2026-11-30","keyId":"1f2e3d4c5b6a7988","licensee":"Ada Lovelace","version":1}
/// ```
/// The signature is `crypto_sign_detached` over those bytes.
public struct License: Sendable, Equatable {
    public static let currentVersion = 1

    public let version: Int
    public let licensee: String
    /// The issue date, `YYYY-MM-DD`.
    public let issued: String
    public let features: [String]
    public let keyID: String

    public func has(_ feature: String) -> Bool { features.contains(feature) }

    /// The bytes that are signed (see the type's documentation).
    public var canonicalPayload: [UInt8] {
        let features = self.features.map(JSONValue.quote).joined(separator: ",")
        let text = "{\"features\":[\(features)],\"issued\":\(JSONValue.quote(issued)),\"keyId\":\(JSONValue.quote(keyID)),\"licensee\":\(JSONValue.quote(licensee)),\"version\":\(version)}"
        return Array(text.utf8)
    }

    /// Checks a license file against the trusted public key and returns what it grants.
    public static func verify(_ fileBytes: [UInt8], publicKey: [UInt8]) throws(LicenseError) -> License {
        guard publicKey.count == LicenseKeys.publicKeyLength else {
            throw .invalidKey("a public key is \(LicenseKeys.publicKeyLength) bytes, not \(publicKey.count)")
        }
        let object: JSONObject
        do { object = try JSONParser.parseObject(fileBytes) } catch { throw .malformed("not valid JSON: \(error)") }
        var r = JSONFields(object) { field, message in LicenseError.malformed("\(field) \(message)") }
        guard let version = try r.integer("version", in: Int.min...Int.max) else { throw .malformed("version is missing") }
        guard version == currentVersion else { throw .unknownVersion(version) }
        let licensee = try r.string("licensee")
        let issued = try r.string("issued")
        guard isDate(issued) else { throw .malformed("issued \"\(issued)\" is not a date (YYYY-MM-DD)") }
        guard case .array(let items) = try r.required("features"),
              case let features = items.compactMap({ v -> String? in if case .string(let s) = v { return s } else { return nil } }),
              features.count == items.count else {
            throw .malformed("features must be a list of strings")
        }
        let keyID = try r.string("keyId")
        let signatureText = try r.string("signature")
        try r.rejectUnknown()
        guard let sigData = Data(base64Encoded: signatureText), sigData.count == 64 else {
            throw .malformed("signature is not 64 bytes of base64")
        }
        let license = License(version: version, licensee: licensee, issued: issued, features: features, keyID: keyID)
        let trustedID = try LicenseKeys.keyID(publicKey: publicKey)
        guard keyID == trustedID else { throw .wrongKey(licenseKeyID: keyID, trustedKeyID: trustedID) }
        let payload = license.canonicalPayload
        let signature = Array(sigData)
        try Sodium.ready()
        guard crypto_sign_verify_detached(signature, payload, UInt64(payload.count), publicKey) == 0 else {
            throw .badSignature
        }
        return license
    }

    /// Issues (signs) a license and returns the file's bytes (pretty JSON, ending in a newline).
    /// `features` are sorted and de-duplicated; `issued` defaults to today (UTC).
    public static func issue(licensee: String, features: [String], issued: String? = nil,
                             secretKey: [UInt8]) throws(LicenseError) -> [UInt8] {
        guard !licensee.isEmpty else { throw .malformed("licensee must not be empty") }
        let date = issued ?? today()
        guard isDate(date) else { throw .malformed("issued \"\(date)\" is not a date (YYYY-MM-DD)") }
        let publicKey = try KeyPair.publicKey(ofSecretKey: secretKey)
        let license = License(version: currentVersion, licensee: licensee, issued: date,
                              features: Array(Set(features)).sorted(),
                              keyID: try LicenseKeys.keyID(publicKey: publicKey))
        let payload = license.canonicalPayload
        var signature = [UInt8](repeating: 0, count: 64)
        try Sodium.ready()
        guard crypto_sign_detached(&signature, nil, payload, UInt64(payload.count), secretKey) == 0 else {
            throw .crypto("crypto_sign_detached failed")
        }
        let features = license.features.map(JSONValue.quote).joined(separator: ", ")
        let text = """
        {
          "version": \(license.version),
          "licensee": \(JSONValue.quote(licensee)),
          "issued": \(JSONValue.quote(date)),
          "features": [\(features)],
          "keyId": \(JSONValue.quote(license.keyID)),
          "signature": \(JSONValue.quote(LicenseKeys.encode(signature)))
        }

        """
        return Array(text.utf8)
    }

    static func isDate(_ s: String) -> Bool {
        let parts = s.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let m = Int(parts[1]), let d = Int(parts[2]) else { return false }
        return (1...12).contains(m) && (1...31).contains(d)
    }

    static func today() -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd"
        return f.string(from: Date())
    }
}
