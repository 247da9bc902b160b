import CHeif
import Dispatch
import FilmCore
import System
import Raster

/// Photos are stored as HEVC pictures of at most 512×512 (as iPhones do): each is converted
/// (sRGB → Display P3 → YCbCr 4:2:0, two rows at a time) and encoded by libheif/x265 on its own,
/// so neither a full-size YCbCr copy nor x265's full-frame state (≈150 MB at 12 MP) ever exists.
/// libheif 1.15 has no API for writing grids, so the container (ftyp, meta, mdat) is assembled
/// here from each picture's hvcC and bitstream, laid out as MIAF (ISO/IEC 23000-22) wants it:
/// tiles and the Exif item hidden, every image item with ispe, colr and pixi.
enum HEICGrid {
    static let tileSize = 512

    struct Tile {
        var hvcC: [UInt8]
        var data: [UInt8]
    }

    /// How an image is cut into coded pictures.
    struct Layout: Equatable {
        var tileWidth: Int
        var tileHeight: Int
        var columns: Int
        var rows: Int
        /// One coded picture of exactly the image's size, which is itself the primary item (no grid).
        var isSingleImage: Bool
    }

    /// `icc` nil: colour described by nclx alone.
    static func encode(_ image: RGBImage, exif: [UInt8]?, orientation: Int?, options: HEICOptions,
                       transform: DisplayP3Conversion, icc: [UInt8]?, path: String) throws -> [UInt8] {
        let w = image.width, h = image.height
        let layout = Layout(width: w, height: h)
        let tw = layout.tileWidth, th = layout.tileHeight
        guard layout.columns <= 256, layout.rows <= 256 else {
            throw ImageFileError.invalidArgument(path: path, message: "image \(w)×\(h) needs more than 256×256 tiles")
        }
        let count = layout.rows * layout.columns
        // Tiles are independent: `workers` threads each take the next tile, convert and encode
        // it with an encoder of their own, so at most `workers` x265 encoders are alive at once.
        // The file is assembled in tile order whatever order they finish in.
        let workers = max(1, min(options.encoders, count))
        let progress = Locked((next: 0, tiles: [Tile?](repeating: nil, count: count), failure: nil as Error?))
        image.pixels.withUnsafeBytes { src in
            // The image as an address (pointers are not Sendable): it outlives `perform`, and the
            // encoders only read it.
            let base = UInt(bitPattern: src.baseAddress!)
            options.parallel.perform(iterations: workers) { _ in
                let rowBuffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 2 * tw * 3)
                defer { rowBuffer.deallocate() }
                while let i = progress.withLock({ p -> Int? in
                    guard p.failure == nil, p.next < count else { return nil }
                    defer { p.next += 1 }
                    return p.next
                }) {
                    do {
                        // The nclx profile is the worker's own: no C object is shared but the
                        // read-only colour transform.
                        let nclx = try HeifNCLX(primaries: 12, transfer: 13, matrix: 6, fullRange: true, path: path)
                        let ycc = try makeTile(UnsafeRawPointer(bitPattern: base)!, width: w, height: h,
                                               x0: i % layout.columns * tw, y0: i / layout.columns * th,
                                               tileWidth: tw, tileHeight: th, transform: transform, buffer: rowBuffer, path: path)
                        try ycc.setNCLX(nclx, path: path)
                        let tile = try encodeTile(ycc, width: tw, height: th, nclx: nclx, options: options, path: path)
                        progress.withLock { $0.tiles[i] = tile }
                    } catch {
                        progress.withLock { if $0.failure == nil { $0.failure = error } }
                    }
                }
            }
        }
        let (tiles, failure) = progress.withLock { ($0.tiles, $0.failure) }
        if let failure { throw failure }
        return buildFile(width: w, height: h, layout: layout, tiles: tiles.map { $0! }, icc: icc, exif: exif, orientation: orientation)
    }

    /// x265 fills its process-wide table of primitives (function pointers) when the first
    /// encoder opens, and an encoder opened meanwhile on another thread sees the table already
    /// begun and uses it half-filled: `loopix bench` crashed on a null function pointer inside
    /// libx265 that way. So until one encode has finished, encodes take turns.
    static let firstEncode = FirstUseGate()

    /// How many x265 encoders are alive now and at most so far (tests check the bound).
    static let liveEncoders = Locked((now: 0, peak: 0))

    /// One tile: rows two at a time through the sRGB → Display P3 table, then BT.601 full-range YCbCr 4:2:0. Pixels
    /// past the image's right and bottom edges repeat the edge.
    static func makeTile(_ base: UnsafeRawPointer, width w: Int, height h: Int, x0: Int, y0: Int, tileWidth t: Int, tileHeight th: Int,
                         transform: DisplayP3Conversion, buffer: UnsafeMutablePointer<UInt8>, path: String) throws -> HeifImage {
        let half = t / 2
        let ycc = try HeifImage(width: t, height: th, colorspace: heif_colorspace_YCbCr, chroma: heif_chroma_420, path: path)
        try ycc.addPlane(heif_channel_Y, width: t, height: th, path: path)
        try ycc.addPlane(heif_channel_Cb, width: half, height: th / 2, path: path)
        try ycc.addPlane(heif_channel_Cr, width: half, height: th / 2, path: path)
        var yStride: Int32 = 0, cbStride: Int32 = 0, crStride: Int32 = 0
        guard let yPlane = heif_image_get_plane(ycc.pointer, heif_channel_Y, &yStride),
              let cbPlane = heif_image_get_plane(ycc.pointer, heif_channel_Cb, &cbStride),
              let crPlane = heif_image_get_plane(ycc.pointer, heif_channel_Cr, &crStride) else {
            throw ImageFileError.encode(path: path, format: .heic, code: 0, message: "libheif returned no plane")
        }
        let n = min(t, w - x0) // real pixels per row
        for r in stride(from: 0, to: th, by: 2) {
            for k in 0..<2 {
                let sy = min(y0 + r + k, h - 1)
                let row = buffer + k * t * 3
                transform.apply(base + (sy * w + x0) * 3, row, pixelCount: n)
                for x in n..<t { // repeat the edge pixel
                    row[3 * x] = row[3 * (n - 1)]
                    row[3 * x + 1] = row[3 * (n - 1) + 1]
                    row[3 * x + 2] = row[3 * (n - 1) + 2]
                }
                // Wrapping arithmetic: no sum here can overflow, and the checks cost more than the sums.
                let out = yPlane + (r + k) * Int(yStride)
                for x in 0..<t {
                    let R = Int32(row[3 &* x]), G = Int32(row[3 &* x &+ 1]), B = Int32(row[3 &* x &+ 2])
                    out[x] = UInt8(truncatingIfNeeded: (19595 &* R &+ 38470 &* G &+ 7471 &* B &+ 32768) &>> 16)
                }
            }
            let top = buffer, bottom = buffer + t * 3
            let cbOut = cbPlane + (r / 2) * Int(cbStride), crOut = crPlane + (r / 2) * Int(crStride)
            for cx in 0..<half {
                let a = 6 &* cx, b = a &+ 3
                let sR = Int32(top[a]) &+ Int32(top[b]) &+ Int32(bottom[a]) &+ Int32(bottom[b])
                let sG = Int32(top[a &+ 1]) &+ Int32(top[b &+ 1]) &+ Int32(bottom[a &+ 1]) &+ Int32(bottom[b &+ 1])
                let sB = Int32(top[a &+ 2]) &+ Int32(top[b &+ 2]) &+ Int32(bottom[a &+ 2]) &+ Int32(bottom[b &+ 2])
                cbOut[cx] = UInt8(clamping: (-11058 &* sR &- 21710 &* sG &+ 32768 &* sB &+ (128 << 18) &+ (1 << 17)) &>> 18)
                crOut[cx] = UInt8(clamping: (32768 &* sR &- 27439 &* sG &- 5329 &* sB &+ (128 << 18) &+ (1 << 17)) &>> 18)
            }
        }
        return ycc
    }

    /// Encodes one tile as a single-image HEIF in memory and takes its hvcC and bitstream.
    static func encodeTile(_ ycc: HeifImage, width: Int, height: Int, nclx: HeifNCLX, options: HEICOptions, path: String) throws -> Tile {
        let context = try HeifContext(path: path, format: .heic)
        let encoder = try HeifEncoder(context: context, path: path)
        liveEncoders.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
        defer { liveEncoders.withLock { $0.now -= 1 } }
        try HEICCodec.check(heif_encoder_set_lossy_quality(encoder.pointer, Int32((options.quality * 100).rounded())),
                            path: path, encoding: true, doing: "setting quality")
        try HEICCodec.check(heif_encoder_set_parameter_string(encoder.pointer, "preset", options.x265Preset),
                            path: path, encoding: true, doing: "setting x265 preset")
        // The preset's own CTU and intra TU depth, where libheif sets its own (x265's ctu must
        // not exceed the picture; tiles are at least 64 pixels, which any CTU fits).
        if let depths = HEICOptions.x265PresetDepths(options.x265Preset) {
            try HEICCodec.check(heif_encoder_set_parameter_integer(encoder.pointer, "tu-intra-depth", Int32(depths.intraTUDepth)),
                                path: path, encoding: true, doing: "setting x265's intra TU depth")
            try HEICCodec.check(heif_encoder_set_parameter_string(encoder.pointer, "x265:ctu", String(depths.ctu)),
                                path: path, encoding: true, doing: "setting x265's CTU size")
        }
        // No thread pool inside x265: the tiles are the parallelism (one encoder per thread),
        // and a pool per 512×512 tile would only add threads fighting for the same cores.
        try HEICCodec.check(heif_encoder_set_parameter_string(encoder.pointer, "x265:pools", "none"),
                            path: path, encoding: true, doing: "turning off x265's thread pool")
        let encodingOptions = try HeifEncodingOptions(path: path)
        encodingOptions.pointer.pointee.output_nclx_profile = nclx.pointer
        encodingOptions.pointer.pointee.macOS_compatibility_workaround = 0 // no grid wrapper around the tile
        try withExtendedLifetime(nclx) {
            try firstEncode.once {
                try HEICCodec.check(heif_context_encode_image(context.pointer, ycc.pointer, encoder.pointer, encodingOptions.pointer, nil),
                                    path: path, encoding: true, doing: "encoding a tile")
            }
        }
        let file = try context.writeToMemory(path: path)
        guard let mdat = BoxReader.find("mdat", in: file[...]),
              let meta = BoxReader.find("meta", in: file[...]),
              let iprp = BoxReader.find("iprp", in: meta.dropFirst(4)), // meta is a FullBox
              let ipco = BoxReader.find("ipco", in: iprp),
              let hvcC = BoxReader.findWhole("hvcC", in: ipco) else {
            throw ImageFileError.encode(path: path, format: .heic, code: 0, message: "unexpected libheif output for a tile (no hvcC or mdat)")
        }
        // The coded size must be the tile size: a padded/cropped tile would not fit the grid.
        if let ispe = BoxReader.find("ispe", in: ipco), ispe.count >= 12 {
            let bytes = Array(ispe)
            let codedW = bytes[4..<8].reduce(0) { $0 << 8 | Int($1) }, codedH = bytes[8..<12].reduce(0) { $0 << 8 | Int($1) }
            guard codedW == width, codedH == height,
                  BoxReader.find("clap", in: ipco) == nil, BoxReader.find("iref", in: meta.dropFirst(4)) == nil else {
                throw ImageFileError.encode(path: path, format: .heic, code: 0,
                                            message: "libheif coded a \(width)×\(height) tile as \(codedW)×\(codedH) (or cropped it)")
            }
        }
        return Tile(hvcC: Array(hvcC), data: Array(mdat))
    }

    /// The complete HEIF file: ftyp, meta, mdat. Items: the primary image 1 (the grid, or the
    /// single coded picture), tiles 2… (hidden), Exif last (hidden: not part of the presentation,
    /// as libheif writes it; MIAF checkers count every item without the hidden flag as an image
    /// that must carry `pixi`).
    static func buildFile(width: Int, height: Int, layout: Layout, tiles: [Tile], icc: [UInt8]?,
                          exif: [UInt8]?, orientation: Int?) -> [UInt8] {
        let ftyp = box("ftyp", Array("heic".utf8) + be32(0) + Array("mif1heicmiaf".utf8))
        let primaryID = 1
        let tileIDs = layout.isSingleImage ? [primaryID] : (0..<tiles.count).map { $0 + 2 }
        let exifID = tileIDs.last! + 1
        // Exif item payload: 4-byte offset to the TIFF header (0), then TIFF data.
        let exifPayload: [UInt8]? = exif.map { be32(0) + Array($0.dropFirst(6)) }

        // Properties (1-based indices): distinct hvcC boxes first, then the rest.
        var properties: [[UInt8]] = []
        var hvcCIndex: [[UInt8]: Int] = [:]
        var tileHvcC: [Int] = []
        for tile in tiles {
            if let i = hvcCIndex[tile.hvcC] { tileHvcC.append(i); continue }
            properties.append(tile.hvcC)
            hvcCIndex[tile.hvcC] = properties.count
            tileHvcC.append(properties.count)
        }
        func add(_ p: [UInt8]) -> Int { properties.append(p); return properties.count }
        let ispeTile = add(fullBox("ispe", 0, 0, be32(layout.tileWidth) + be32(layout.tileHeight)))
        let ispeFull = layout.isSingleImage ? ispeTile : add(fullBox("ispe", 0, 0, be32(width) + be32(height)))
        var colour = [add(box("colr", Array("nclx".utf8) + be16(12) + be16(13) + be16(6) + [0x80]))]
        if let icc { colour.append(add(box("colr", Array("prof".utf8) + icc))) }
        let pixi = add(fullBox("pixi", 0, 0, [3, 8, 8, 8]))
        // Transformations are essential (a reader that cannot apply them must not show the image).
        let transforms = transformBoxes(orientation: orientation).map { (add($0), true) }
        // Descriptive properties (ispe first, as HEIF requires) before transformative ones.
        let described = { (ispe: Int) in [(ispe, false)] + colour.map { ($0, false) } + [(pixi, false)] }

        // ipma: (item, [(index, essential)])
        var associations: [(Int, [(Int, Bool)])] = []
        if layout.isSingleImage {
            associations.append((primaryID, [(tileHvcC[0], true)] + described(ispeFull) + transforms))
        } else {
            associations.append((primaryID, described(ispeFull) + transforms))
            for (i, id) in tileIDs.enumerated() {
                associations.append((id, [(tileHvcC[i], true)] + described(ispeTile)))
            }
        }
        // 7-bit property indices unless there are more than 127 properties.
        let wide = properties.count > 127
        var ipma = be32(associations.count)
        for (item, list) in associations {
            ipma += be16(item) + [UInt8(list.count)]
            for (index, essential) in list {
                ipma += wide ? be16(index | (essential ? 0x8000 : 0)) : [UInt8(index) | (essential ? 0x80 : 0)]
            }
        }
        let iprp = box("iprp", box("ipco", properties.flatMap { $0 }) + fullBox("ipma", 0, wide ? 1 : 0, ipma))

        let hdlr = fullBox("hdlr", 0, 0, be32(0) + Array("pict".utf8) + [UInt8](repeating: 0, count: 12) + [0])
        let pitm = fullBox("pitm", 0, 0, be16(primaryID))
        let hidden = 1 // infe flag: not part of the presentation
        var infos: [[UInt8]] = []
        if !layout.isSingleImage { infos.append(fullBox("infe", 2, 0, be16(primaryID) + be16(0) + Array("grid".utf8) + [0])) }
        for id in tileIDs {
            infos.append(fullBox("infe", 2, layout.isSingleImage ? 0 : hidden, be16(id) + be16(0) + Array("hvc1".utf8) + [0]))
        }
        if exifPayload != nil { infos.append(fullBox("infe", 2, hidden, be16(exifID) + be16(0) + Array("Exif".utf8) + [0])) }
        let iinf = fullBox("iinf", 0, 0, be16(infos.count) + infos.flatMap { $0 })
        var irefBody: [UInt8] = []
        if !layout.isSingleImage { irefBody += box("dimg", be16(primaryID) + be16(tileIDs.count) + tileIDs.flatMap { be16($0) }) }
        if exifPayload != nil { irefBody += box("cdsc", be16(exifID) + be16(1) + be16(primaryID)) }
        let iref = irefBody.isEmpty ? [] : fullBox("iref", 0, 0, irefBody)
        // Grid descriptor: version 0, flags 0 (16-bit sizes) unless the size needs 32 bits.
        let large = width > 65535 || height > 65535
        let gridData: [UInt8] = layout.isSingleImage ? [] : [0, large ? 1 : 0, UInt8(layout.rows - 1), UInt8(layout.columns - 1)]
            + (large ? be32(width) + be32(height) : be16(width) + be16(height))
        let idat = gridData.isEmpty ? [] : box("idat", gridData)

        func meta(mdatStart: Int) -> [UInt8] {
            // iloc v1: offset and length 4 bytes, no base offset, no index; construction method
            // 1 (idat) for the grid descriptor, 0 (file offset) for the rest.
            var entries: [[UInt8]] = []
            if !gridData.isEmpty { entries.append(be16(primaryID) + be16(1) + be16(0) + be16(1) + be32(0) + be32(gridData.count)) }
            var offset = mdatStart
            for (i, id) in tileIDs.enumerated() {
                entries.append(be16(id) + be16(0) + be16(0) + be16(1) + be32(offset) + be32(tiles[i].data.count))
                offset += tiles[i].data.count
            }
            if let exifPayload {
                entries.append(be16(exifID) + be16(0) + be16(0) + be16(1) + be32(offset) + be32(exifPayload.count))
            }
            let iloc = fullBox("iloc", 1, 0, [0x44, 0x00] + be16(entries.count) + entries.flatMap { $0 })
            return fullBox("meta", 0, 0, hdlr + pitm + iinf + iref + iprp + idat + iloc)
        }
        let metaSize = meta(mdatStart: 0).count
        let mdatPayloadSize = tiles.reduce(0) { $0 + $1.data.count } + (exifPayload?.count ?? 0)
        var file = ftyp + meta(mdatStart: ftyp.count + metaSize + 8)
        file.reserveCapacity(file.count + 8 + mdatPayloadSize)
        file += be32(8 + mdatPayloadSize) + Array("mdat".utf8)
        for tile in tiles { file += tile.data }
        if let exifPayload { file += exifPayload }
        return file
    }

    /// irot/imir boxes (in application order) that display the stored image the way EXIF
    /// orientation 1...8 says. irot angles are anticlockwise quarter turns. imir follows
    /// HEIF amendment 2's `mode` reading, as iPhones and libheif do: 0 flips top↔bottom,
    /// 1 flips left↔right. The transforms are applied in ipma order.
    static func transformBoxes(orientation: Int?) -> [[UInt8]] {
        let irot = { (quarterTurnsCCW: UInt8) in box("irot", [quarterTurnsCCW]) }
        let imir = { (mode: UInt8) in box("imir", [mode]) }
        switch orientation ?? 1 {
        case 2: return [imir(1)]
        case 3: return [irot(2)]
        case 4: return [imir(0)]
        case 5: return [irot(1), imir(0)]
        case 6: return [irot(3)]
        case 7: return [irot(3), imir(0)]
        case 8: return [irot(1)]
        default: return []
        }
    }

    static func be16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
    static func be32(_ v: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
    }
    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] { be32(8 + body.count) + Array(type.utf8) + body }
    static func fullBox(_ type: String, _ version: UInt8, _ flags: Int, _ body: [UInt8]) -> [UInt8] {
        box(type, [version, UInt8(truncatingIfNeeded: flags >> 16), UInt8(truncatingIfNeeded: flags >> 8), UInt8(truncatingIfNeeded: flags)] + body)
    }
}

extension HEICGrid.Layout {
    /// Even sizes from 64 to 512 are coded as they are. Anything else is a grid of tiles that
    /// are multiples of 64 (MIAF's advice for grid tiles; also x265's smallest picture), up to
    /// 512; the grid crops the last row and column of tiles. An odd size cannot be a single
    /// picture: x265 would round it up to even and the crop would need a `clap` with odd
    /// values, which MIAF forbids for 4:2:0, so a small odd image is a 1×1 grid (as libheif
    /// itself does for macOS).
    init(width: Int, height: Int) {
        let fits = { (s: Int) in s.isMultiple(of: 2) && (64...HEICGrid.tileSize).contains(s) }
        if fits(width) && fits(height) {
            self.init(tileWidth: width, tileHeight: height, columns: 1, rows: 1, isSingleImage: true)
        } else {
            let tile = { (s: Int) in min(HEICGrid.tileSize, (s + 63) / 64 * 64) }
            let tw = tile(width), th = tile(height)
            self.init(tileWidth: tw, tileHeight: th, columns: (width + tw - 1) / tw, rows: (height + th - 1) / th,
                      isSingleImage: false)
        }
    }
}

/// Just enough ISOBMFF box walking to take libheif's single-tile output apart.
enum BoxReader {
    /// The payload (after the 8- or 16-byte header) of the first box of `type` among the boxes in `bytes`.
    static func find(_ type: String, in bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        findBox(type, in: bytes).map { $0.payload }
    }

    /// The whole box, header included.
    static func findWhole(_ type: String, in bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        findBox(type, in: bytes).map { $0.whole }
    }

    private static func findBox(_ type: String, in bytes: ArraySlice<UInt8>) -> (whole: ArraySlice<UInt8>, payload: ArraySlice<UInt8>)? {
        let wanted = Array(type.utf8)
        var i = bytes.startIndex
        while i + 8 <= bytes.endIndex {
            var size = Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            var header = 8
            if size == 1 {
                guard i + 16 <= bytes.endIndex else { return nil }
                size = bytes[(i + 8)..<(i + 16)].reduce(0) { $0 << 8 | Int($1) }
                header = 16
            } else if size == 0 {
                size = bytes.endIndex - i
            }
            guard size >= header, i + size <= bytes.endIndex else { return nil }
            if Array(bytes[(i + 4)..<(i + 8)]) == wanted {
                return (bytes[i..<(i + size)], bytes[(i + header)..<(i + size)])
            }
            i += size
        }
        return nil
    }
}

/// Runs bodies one at a time until one of them has succeeded, then lets all run at once.
final class FirstUseGate: Sendable {
    private let lock = Lock()
    private let done = Locked(false)

    func once<R>(_ body: () throws -> R) rethrows -> R {
        if done.withLock({ $0 }) { return try body() }
        lock.lock()
        defer { lock.unlock() }
        let result = try body()
        done.withLock { $0 = true }
        return result
    }
}
