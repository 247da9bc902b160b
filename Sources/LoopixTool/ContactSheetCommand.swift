import Canvas
import FilmCore
import Foundation
import ImageFiles
import Raster

/// `loopix contact-sheet`: one photo under every look, labelled, in a grid.
public enum ContactSheetCommand {
    public static let help = """
    Usage: loopix contact-sheet IN -o SHEET [--thumb-width W] [--columns N] [--presets-dir DIR] [--force]

    Renders IN under every film look (built-in and user presets), each thumbnail labelled
    with the look's name and tier, in a grid: the picture to look at when choosing a look.
    The sheet's format follows its extension (.png, .jpg, .heic).

      -o, --output SHEET   the sheet to write
          --thumb-width W  width of each thumbnail in pixels, 120–1200 (default: 320)
          --columns N      thumbnails per row (default: 4)
          --force          replace SHEET if it exists
    """

    public static func run(_ words: [String]) throws(ToolError) {
        let args = try Arguments(words, valued: ["-o": "output", "--output": "output", "--thumb-width": "thumb-width",
                                                 "--columns": "columns", "--presets-dir": "presets-dir"],
                                 flags: ["--force": "force", "-f": "force"])
        guard args.operands.count == 1 else { throw .usage("contact-sheet: give exactly one input photo") }
        guard let output = args.value("output") else { throw .usage("contact-sheet: -o SHEET is required") }
        let ext = (output as NSString).pathExtension
        guard let format = ImageFormat(pathExtension: ext) else {
            throw .usage("\(output): unknown output extension \".\(ext)\" (use .png, .jpg or .heic)")
        }
        let thumbWidth = try args.integer("thumb-width") ?? 320
        guard (120...1200).contains(thumbWidth) else { throw .usage("--thumb-width must be from 120 to 1200") }
        let columns = try args.integer("columns") ?? 4
        guard (1...16).contains(columns) else { throw .usage("--columns must be from 1 to 16") }
        let directory = args.value("presets-dir") ?? PresetLibrary.defaultDirectory
        let library = try PresetLibrary.load(directory: directory, required: args.value("presets-dir") != nil)
        for problem in library.problems { FileHandle.standardError.write(Data("loopix: warning: \(problem)\n".utf8)) }
        if !args.flag("force") && FileManager.default.fileExists(atPath: output) {
            throw ToolError("\(output): already exists (use --force to replace it)")
        }
        let photo: RGBImage
        do { photo = try ImageReader.read(path: args.operands[0]) } catch { throw ToolError("\(error)") }
        let sheet = render(photo, presets: library.presets, thumbWidth: thumbWidth, columns: columns)
        do {
            try ImageWriter.write(sheet, to: output, format: format, metadata: nil, replace: args.flag("force"))
        } catch { throw ToolError("\(error)") }
    }

    /// The sheet: thumbnails of `photo` under each preset, with a label band beneath each.
    public static func render(_ photo: RGBImage, presets: [Preset], thumbWidth: Int, columns: Int) -> RGBImage {
        let thumbHeight = max(1, (thumbWidth * photo.height + photo.width / 2) / photo.width)
        var thumb = Canvas(width: thumbWidth, height: thumbHeight)
        thumb.drawScaled(image: photo, into: Rect(x: 0, y: 0, width: thumbWidth, height: thumbHeight))
        let scale = max(1, BitmapFont.scale(forCapHeight: thumbWidth / 28))
        let label = BitmapFont.lineHeight * scale + 8 * scale
        let gap = 4 * scale
        let rows = (presets.count + columns - 1) / columns
        let sheetWidth = columns * thumbWidth + (columns + 1) * gap
        let sheetHeight = rows * (thumbHeight + label) + (rows + 1) * gap
        var sheet = Canvas(width: sheetWidth, height: sheetHeight, background: Color(gray: 24))
        for (i, preset) in presets.enumerated() {
            let x = gap + (i % columns) * (thumbWidth + gap)
            let y = gap + (i / columns) * (thumbHeight + label + gap)
            var developed = thumb.image
            // Grain is drawn at thumbnail scale, as it would look printed that small.
            FilmRenderer(look: FilmLook(preset: preset), width: thumbWidth, height: thumbHeight)
                .render(&developed, grainFrame: 0, threads: ProcessInfo.processInfo.activeProcessorCount)
            sheet.draw(image: developed, at: Point(x: x, y: y))
            let band = Rect(x: x, y: y + thumbHeight, width: thumbWidth, height: label)
            sheet.fill(band, color: Color(gray: 12))
            let tier = preset.tier == .pro ? "PRO" : "FREE"
            let tierWidth = BitmapFont.width(of: tier, scale: scale)
            let name = BitmapFont.truncated(preset.name, toWidth: thumbWidth - tierWidth - 12 * scale, scale: scale)
            let textY = band.y + (label - BitmapFont.capHeight * scale) / 2
            sheet.draw(text: name, at: Point(x: x + 4 * scale, y: textY), scale: scale, color: .white)
            sheet.draw(text: tier, at: Point(x: x + thumbWidth - tierWidth - 3 * scale, y: textY), scale: scale,
                       color: preset.tier == .pro ? .orange : .green)
        }
        return sheet.image
    }
}
