import Foundation

/// `capture.dateStamp`'s format: the text the date imprint shows for a moment, in the camera's
/// local time. Tokens: `YYYY` and `YY` (year), `MM` and `M` (month, with and without a leading
/// zero), `DD` and `D` (day), `HH` (hour, 24 h) and `mm` (minute); anything else stands as it
/// is and must be something seven segments can show (digits, space, ' - . : /).
public struct DateStampFormat: Sendable, Equatable {
    public let pattern: String
    /// The classic point-and-shoot imprint: '98 11 30.
    public static let classic = DateStampFormat(validated: "'YY MM DD")

    private enum Piece: Equatable { case literal(Character), year4, year2, month2, month, day2, day, hour2, minute2 }
    private let pieces: [Piece]

    private init(validated pattern: String) {
        self.pattern = pattern
        pieces = Self.parse(pattern)
    }

    /// nil when the pattern holds a character the imprint cannot show, has no token, or is
    /// longer than 24 characters.
    public init?(_ pattern: String) {
        guard (1...24).contains(pattern.count) else { return nil }
        let pieces = Self.parse(pattern)
        guard pieces.contains(where: { if case .literal = $0 { return false } else { return true } }) else { return nil }
        for case .literal(let c) in pieces where !DateStamp.characters.contains(c) { return nil }
        self.pattern = pattern
        self.pieces = pieces
    }

    private static func parse(_ pattern: String) -> [Piece] {
        let tokens: [(String, Piece)] = [("YYYY", .year4), ("YY", .year2), ("MM", .month2), ("M", .month), ("DD", .day2),
                                         ("D", .day), ("HH", .hour2), ("mm", .minute2)]
        var out: [Piece] = []
        var rest = Substring(pattern)
        while let first = rest.first {
            if let (token, piece) = tokens.first(where: { rest.hasPrefix($0.0) }) {
                out.append(piece)
                rest = rest.dropFirst(token.count)
            } else {
                out.append(.literal(first))
                rest = rest.dropFirst()
            }
        }
        return out
    }

    /// The imprint's text for `date` in `timeZone`.
    public func text(for date: Date, timeZone: TimeZone = .current) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ v: Int?) -> String { String(format: "%02d", (v ?? 0) % 100) }
        var out = ""
        for piece in pieces {
            switch piece {
            case .literal(let ch): out.append(ch)
            case .year4: out += String(format: "%04d", c.year ?? 0)
            case .year2: out += two(c.year)
            case .month2: out += two(c.month)
            case .month: out += String(c.month ?? 0)
            case .day2: out += two(c.day)
            case .day: out += String(c.day ?? 0)
            case .hour2: out += two(c.hour)
            case .minute2: out += two(c.minute)
            }
        }
        return out
    }
}
