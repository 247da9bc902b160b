import CQREncode
import Glibc

/// A QR code's modules (dark or light), made by libqrencode: byte mode, error correction M (a
/// code on a screen photographed by a phone survives some glare), the smallest version that
/// holds the text.
public struct QRCode: Sendable, Equatable {
    /// Modules per side (21 for version 1, 4 more per version), without the quiet zone.
    public let size: Int
    /// Row by row, `size × size`; true is dark.
    public let modules: [Bool]
    /// The text it encodes.
    public let text: String

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case tooLong(Int)
        case encoder(String)
        public var description: String {
            switch self {
            case .tooLong(let n): return "QR code: \(n) bytes do not fit (at most 2331 at level M)"
            case .encoder(let why): return "QR code: libqrencode failed: \(why)"
            }
        }
    }

    public init(_ text: String) throws(Failure) {
        let bytes = Array(text.utf8)
        guard bytes.count <= 2331 else { throw .tooLong(bytes.count) }
        // QRcode_encodeData takes bytes with their length (the text may hold any byte).
        guard let code = bytes.withUnsafeBufferPointer({ QRcode_encodeData(Int32($0.count), $0.baseAddress, 0, QR_ECLEVEL_M) }) else {
            throw .encoder(String(cString: strerror(errno)))
        }
        defer { QRcode_free(code) }
        let n = Int(code.pointee.width)
        var modules = [Bool](repeating: false, count: n * n)
        // Bit 0 of each byte is the module's colour; the others are libqrencode's bookkeeping.
        for i in 0..<(n * n) { modules[i] = code.pointee.data[i] & 1 != 0 }
        size = n
        self.modules = modules
        self.text = text
    }

    public func isDark(x: Int, y: Int) -> Bool {
        x >= 0 && y >= 0 && x < size && y < size && modules[y * size + x]
    }
}
