/// The canvas a HEIF file's primary item declares when it is derived from other images (a grid
/// or an overlay). libheif 1.15 allocates that canvas before decoding any tile, trusting the
/// descriptor over the item's `ispe`, so a small file whose grid claims 32767×32767 pixels
/// must be caught here, before decoding.
enum HEIFCanvas {
    /// The primary item's grid or overlay output size; nil for a coded image, or for a
    /// structure this cannot follow (libheif then reports it, or decodes what `ispe` said).
    static func primarySize(in file: [UInt8]) -> (width: Int, height: Int)? {
        guard let metaBox = BoxReader.find("meta", in: file[...]) else { return nil }
        let meta = metaBox.dropFirst(4) // FullBox
        guard let pitm = BoxReader.find("pitm", in: meta), let iinf = BoxReader.find("iinf", in: meta),
              let iloc = BoxReader.find("iloc", in: meta) else { return nil }
        guard let primary = number(pitm, at: 4, size: pitm.first == 0 ? 2 : 4),
              let type = itemType(primary, in: iinf), type == "grid" || type == "iovl",
              let data = itemData(primary, iloc: iloc, idat: BoxReader.find("idat", in: meta), file: file) else { return nil }
        // grid: version, flags, rows-1, columns-1, then the size; iovl: version, flags, four
        // 16-bit fill values, then the size. Flags bit 0: 32-bit sizes.
        guard data.count >= 2 else { return nil }
        let field = data[data.startIndex + 1] & 1 == 0 ? 2 : 4
        let at = type == "grid" ? 4 : 10
        guard let width = number(data, at: at, size: field), let height = number(data, at: at + field, size: field) else { return nil }
        return (width, height)
    }

    /// The four-character type of item `id` among iinf's infe boxes (versions 2 and 3).
    private static func itemType(_ id: Int, in iinf: ArraySlice<UInt8>) -> String? {
        var rest = iinf.dropFirst(iinf.first == 0 ? 6 : 8) // FullBox header, entry count
        while let infe = BoxReader.findWhole("infe", in: rest) {
            let body = infe.dropFirst(8)
            let version = body.first ?? 0
            let idSize = version >= 3 ? 4 : 2
            if version >= 2, number(body, at: 4, size: idSize) == id {
                let start = body.startIndex + 4 + idSize + 2 // + protection index
                guard start + 4 <= body.endIndex else { return nil }
                return String(decoding: body[start..<(start + 4)], as: UTF8.self)
            }
            rest = rest[infe.endIndex...]
        }
        return nil
    }

    /// The first extent of item `id` (its descriptor is a few bytes), from idat (construction
    /// method 1) or the file (0).
    private static func itemData(_ id: Int, iloc: ArraySlice<UInt8>, idat: ArraySlice<UInt8>?, file: [UInt8]) -> ArraySlice<UInt8>? {
        guard let version = iloc.first, version <= 2, iloc.count >= 8 else { return nil }
        let sizes = iloc[iloc.startIndex + 4], more = iloc[iloc.startIndex + 5]
        let offsetSize = Int(sizes >> 4), lengthSize = Int(sizes & 15), baseSize = Int(more >> 4)
        let indexSize = version >= 1 ? Int(more & 15) : 0
        let idSize = version == 2 ? 4 : 2
        var p = 6
        guard let count = number(iloc, at: p, size: idSize) else { return nil }
        p += idSize
        for _ in 0..<count {
            guard let item = number(iloc, at: p, size: idSize) else { return nil }
            p += idSize
            var method = 0
            if version >= 1 {
                guard let m = number(iloc, at: p, size: 2) else { return nil }
                method = m & 15
                p += 2
            }
            p += 2 // data reference index
            guard let base = number(iloc, at: p, size: baseSize) else { return nil }
            p += baseSize
            guard let extents = number(iloc, at: p, size: 2) else { return nil }
            p += 2
            let extentSize = indexSize + offsetSize + lengthSize
            if item == id, extents > 0 {
                guard let offset = number(iloc, at: p + indexSize, size: offsetSize),
                      let length = number(iloc, at: p + indexSize + offsetSize, size: lengthSize) else { return nil }
                let source: ArraySlice<UInt8>
                switch method {
                case 0: source = file[...]
                case 1: guard let idat else { return nil }; source = idat
                default: return nil
                }
                let start = source.startIndex + base + offset
                guard start <= source.endIndex else { return nil }
                let end = length == 0 ? source.endIndex : min(source.endIndex, start + length)
                return source[start..<end]
            }
            p += extents * extentSize
        }
        return nil
    }

    /// A big-endian unsigned number of `size` bytes (0 bytes: 0) at `offset` from the slice's
    /// start; nil past the end, or above 2⁴⁸ (no file is that large, and sums cannot overflow).
    private static func number(_ bytes: ArraySlice<UInt8>, at offset: Int, size: Int) -> Int? {
        let start = bytes.startIndex + offset
        guard offset >= 0, size <= 8, start + size <= bytes.endIndex else { return nil }
        let value = bytes[start..<(start + size)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return value <= 1 << 48 ? Int(value) : nil
    }
}
