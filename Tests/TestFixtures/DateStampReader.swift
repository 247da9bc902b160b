import FilmCore
import Raster

/// Reads a date imprint's digits off a frame the way a person would, against the same frame
/// without it: each character's seven segments, lit (red well above the plain frame's, and at
/// least half as bright as the character's brightest segment — the glow around lit segments
/// reaches the unlit ones' middles) or not, mapped to a digit ("?" for no digit).
public func readDateStamp(_ stamped: RGBImage, over plain: RGBImage, text: String) -> String {
    guard let stamp = DateStamp(text) else { return "" }
    let layout = stamp.layout(frameWidth: stamped.width, frameHeight: stamped.height)
    let middles: [(Character, SIMD2<Double>)] = [("a", [0.5, 0]), ("b", [0.9, 0.25]), ("c", [0.9, 0.75]), ("d", [0.5, 1]),
                                                 ("e", [0.1, 0.75]), ("f", [0.1, 0.25]), ("g", [0.5, 0.5])]
    let digits: [String: Character] = ["abcdef": "0", "bc": "1", "abdeg": "2", "abcdg": "3", "bcfg": "4", "acdfg": "5",
                                       "acdefg": "6", "abc": "7", "abcdefg": "8", "abcdfg": "9"]
    var read = ""
    for (index, (ch, _)) in layout.pens.enumerated() where ch.isNumber {
        let increments = middles.map { (name, p) -> (Character, Int) in
            let q = layout.place(p, index)
            let x = min(max(layout.x + Int(q.x), 0), stamped.width - 1), y = min(max(layout.y + Int(q.y), 0), stamped.height - 1)
            return (name, Int(stamped[x, y].x) - Int(plain[x, y].x))
        }
        let brightest = increments.map(\.1).max() ?? 0
        let lit = String(increments.filter { $0.1 > 40 && 2 * $0.1 >= brightest }.map(\.0))
        read.append(digits[lit] ?? "?")
    }
    return read
}
