import Foundation
import XCTest
@testable import ControlProtocol
import StrictJSON

final class LicenseTests: XCTestCase {
    func testValidLicenseVerifies() throws {
        let keys = try KeyPair.generate()
        let bytes = try License.issue(licensee: "Ada Lovelace", features: ["pro", "video", "pro"], issued: "2026-11-30", secretKey: keys.secretKey)
        let license = try License.verify(bytes, publicKey: keys.publicKey)
        XCTAssertEqual(license.licensee, "Ada Lovelace")
        XCTAssertEqual(license.issued, "2026-11-30")
        XCTAssertEqual(license.features, ["pro", "video"])
        XCTAssertTrue(license.has("pro"))
        XCTAssertFalse(license.has("enterprise"))
        XCTAssertEqual(license.keyID, try LicenseKeys.keyID(publicKey: keys.publicKey))
        // Non-ASCII and characters needing escapes survive.
        let odd = try License.issue(licensee: "Zoë \"Z\" / Ł\\", features: ["pro"], secretKey: keys.secretKey)
        XCTAssertEqual(try License.verify(odd, publicKey: keys.publicKey).licensee, "Zoë \"Z\" / Ł\\")
    }

    func testCanonicalPayload() {
        let l = License(version: 1, licensee: "A \"B\"/é", issued: "2026-11-30", features: ["pro"], keyID: "00ff")
        XCTAssertEqual(String(decoding: l.canonicalPayload, as: UTF8.self),
                       "{\"features\":[\"pro\"],\"issued\":\"2026-11-30\",\"keyId\":\"00ff\",\"licensee\":\"A \\\"B\\\"/é\",\"version\":1}")
    }

    func testTamperedLicenseeFails() throws {
        let keys = try KeyPair.generate()
        let bytes = try License.issue(licensee: "Ada", features: ["pro"], secretKey: keys.secretKey)
        let tampered = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\"Ada\"", with: "\"Eve\"")
        XCTAssertThrowsError(try License.verify(Array(tampered.utf8), publicKey: keys.publicKey)) { error in
            XCTAssertEqual(error as? LicenseError, .badSignature)
            XCTAssertEqual("\(error)", "license signature does not match its contents (altered or forged)")
        }
        let moreFeatures = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "[\"pro\"]", with: "[\"pro\", \"x\"]")
        XCTAssertThrowsError(try License.verify(Array(moreFeatures.utf8), publicKey: keys.publicKey)) { error in
            XCTAssertEqual(error as? LicenseError, .badSignature)
        }
    }

    func testOtherKeyFails() throws {
        let keys = try KeyPair.generate()
        let other = try KeyPair.generate()
        let bytes = try License.issue(licensee: "Ada", features: ["pro"], secretKey: keys.secretKey)
        XCTAssertThrowsError(try License.verify(bytes, publicKey: other.publicKey)) { error in
            guard case .wrongKey = error as? LicenseError else { return XCTFail("\(error)") }
            XCTAssertTrue("\(error)".hasPrefix("license was signed with key "))
        }
        // A forger who puts the trusted key id in but signs with their own key: bad signature.
        let forged = try License.issue(licensee: "Eve", features: ["pro"], secretKey: other.secretKey)
        let text = String(decoding: forged, as: UTF8.self)
            .replacingOccurrences(of: try LicenseKeys.keyID(publicKey: other.publicKey), with: try LicenseKeys.keyID(publicKey: keys.publicKey))
        XCTAssertThrowsError(try License.verify(Array(text.utf8), publicKey: keys.publicKey)) { error in
            XCTAssertEqual(error as? LicenseError, .badSignature)
        }
    }

    func testGarbageFails() throws {
        let keys = try KeyPair.generate()
        let cases: [(String, String)] = [
            ("hello", "license is malformed: not valid JSON: line 1, column 1: expected a value, found 'h'"),
            ("[]", "license is malformed: not valid JSON: line 1, column 1: expected a JSON object ({…}), found an array"),
            ("{\"licensee\":\"A\"}", "license is malformed: version is missing"),
            ("{\"version\":2}", "license version 2 is not supported (this Loopix reads version 1)"),
            ("{\"version\":1,\"licensee\":\"A\",\"issued\":\"2026-11-30\",\"features\":[\"pro\"],\"keyId\":\"x\",\"signature\":\"abc\"}",
             "license is malformed: signature is not 64 bytes of base64"),
            ("{\"version\":1,\"licensee\":\"A\",\"issued\":\"soon\",\"features\":[],\"keyId\":\"x\",\"signature\":\"\"}",
             "license is malformed: issued \"soon\" is not a date (YYYY-MM-DD)"),
            ("{\"version\":1,\"licensee\":\"A\",\"issued\":\"2026-11-30\",\"features\":[1],\"keyId\":\"x\",\"signature\":\"\"}",
             "license is malformed: features must be a list of strings"),
            ("{\"version\":1,\"licensee\":\"A\",\"issued\":\"2026-11-30\",\"features\":[],\"keyId\":\"x\",\"signature\":\"\",\"extra\":1}",
             "license is malformed: extra unknown field (allowed: features, issued, keyId, licensee, signature, version)"),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try License.verify(Array(text.utf8), publicKey: keys.publicKey), text) { error in
                XCTAssertEqual("\(error)", message)
            }
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            XCTAssertThrowsError(try License.verify(bytes, publicKey: keys.publicKey))
        }
        XCTAssertThrowsError(try License.verify([], publicKey: [1, 2, 3])) { error in
            XCTAssertEqual("\(error)", "invalid key: a public key is 32 bytes, not 3")
        }
    }

    func testKeyEncoding() throws {
        let keys = try KeyPair.generate()
        let b64 = LicenseKeys.encode(keys.publicKey)
        XCTAssertEqual(LicenseKeys.decode(b64 + "\n", length: 32), keys.publicKey)
        XCTAssertEqual(LicenseKeys.decode(keys.publicKey.map { String(format: "%02X", $0) }.joined(), length: 32), keys.publicKey)
        XCTAssertNil(LicenseKeys.decode("AAAA", length: 32))
        XCTAssertEqual(try KeyPair.publicKey(ofSecretKey: keys.secretKey), keys.publicKey)
    }
}
