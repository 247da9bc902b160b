import Canvas
import FilmCore
import ImageFiles
import Raster

/// Developing a photo with a look, at full resolution: what the camera does to each still and
/// `loopix develop` to each file, one function for both, so that `develop --same` with a
/// negative's recipe gives the camera's own photo. The look is compiled once and kept while
/// photos of the same look and size follow each other (a batch).
public struct Darkroom {
    private var look: FilmLook?
    private var renderer: FilmRenderer?

    public init() {}

    /// Applies `preset` as `recipe` says (its intensity, grain seed and frame, date stamp), with
    /// `ev` beyond it, then the watermark when asked. `threads` render threads, on `parallel`.
    public mutating func develop(_ image: inout RGBImage, preset: Preset, recipe: DevelopRecipe, ev: Double = 0, watermark: Bool = false,
                                 threads: Int, parallel: any ParallelWork = DispatchParallelWork()) {
        let settings = RenderSettings(ev: ev, intensity: recipe.intensity, grainSeed: recipe.grainSeed, dateStamp: recipe.dateStamp)
        if look?.preset != preset || look?.settings != settings {
            look = FilmLook(preset: preset, settings: settings)
            renderer = nil
        }
        if renderer?.width != image.width || renderer?.height != image.height {
            renderer = FilmRenderer(look: look!, width: image.width, height: image.height)
        }
        renderer!.render(&image, grainFrame: recipe.grainFrame, threads: threads, parallel: parallel)
        if watermark { Watermark.draw(on: &image) }
    }
}

/// The mark on previews and photos of Pro looks while no license is installed.
public enum Watermark {
    public static let text = "LOOPIX PRO - UNLICENSED"

    public static func draw(on image: inout RGBImage) {
        var canvas = Canvas(image: image)
        image = RGBImage(width: 1, height: 1)   // drop our reference so the canvas edits in place
        let scale = max(1, BitmapFont.scale(forCapHeight: canvas.height / 18))
        let width = BitmapFont.width(of: text, scale: scale)
        let band = Rect(x: 0, y: canvas.height / 2 - scale * 8, width: canvas.width, height: scale * 16)
        canvas.fill(band, color: .black, opacity: 0.35)
        canvas.draw(text: text, at: Point(x: (canvas.width - width) / 2, y: band.y + scale * 4), scale: scale,
                    color: .white, style: .outline(.black))
        image = canvas.image
    }
}
