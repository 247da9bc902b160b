/// The 28 built-in film looks, each defined once, here, as data. They are inspired by the
/// character of the named stocks (palette, contrast, grain); they are not measurements of them.
/// Free tier: `clean`, `mono`, `portra`; all others are Pro.
public enum BuiltinPresets {
    public static let all: [Preset] = [
        clean, mono,
        portra160, portra, portra800, ektar100, gold200, colorplus200, ultramax400, ektachrome100, kodachrome64,
        velvia50, provia100f, superia400, pro400h, astia100f, c200,
        cinestill800t, cinestill50d, vision3500t, vision3250d, eterna,
        hp5, delta3200, panf50, trix400, tmax100, fomapan100,
    ]

    /// The preset with this id (case-insensitive), or nil.
    public static func named(_ id: String) -> Preset? {
        let key = id.lowercased()
        return all.first { $0.id == key }
    }

    /// Ids of the free tier.
    public static let freeTier: Set<String> = ["clean", "mono", "portra"]

    private typealias C = ToneCurve
    private typealias G = Preset.Grain
    private typealias V = Preset.Vignette
    private typealias S = Preset.SplitTone
    private typealias H = Preset.Halation

    // MARK: Neutral

    public static let clean = Preset(
        id: "clean", name: "Clean", tier: .free, category: .neutral,
        description: "No colour change, fine grain only",
        grain: G(amount: 0.12, size: 0.8, roughness: 0.3, monochromatic: 0.6))

    public static let mono = Preset(
        id: "mono", name: "Mono", tier: .free, category: .blackAndWhite,
        description: "Neutral black and white with gentle contrast",
        grade: .init(saturation: 0),
        curves: .init(master: C(0.01, 0.24, 0.5, 0.77, 0.99)),
        grain: G(amount: 0.18, size: 1, roughness: 0.4, monochromatic: 1))

    // MARK: Kodak colour negative

    public static let portra160 = Preset(
        id: "portra160", name: "Kodak Portra 160", tier: .pro, category: .color,
        description: "Soft, low-contrast negative with true skin tones and very fine grain",
        grade: .init(exposure: 0.1, temperature: 0.05, saturation: 0.85),
        curves: .init(master: C(0.03, 0.27, 0.52, 0.76, 0.96), red: C(0, 0.26, 0.51, 0.76, 1)),
        splitTone: S(shadowHue: 195, shadowSaturation: 0.08, highlightHue: 38, highlightSaturation: 0.1, balance: 0.1),
        fade: 0.025, clamp: .init(black: 0.01, white: 0.98),
        vignette: V(amount: 0.12, midpoint: 0.65, roundness: 0.4, feather: 0.6),
        grain: G(amount: 0.14, size: 0.9, roughness: 0.3, clumping: 0.1, monochromatic: 0.3))

    public static let portra = Preset(
        id: "portra", name: "Kodak Portra 400", tier: .free, category: .color,
        description: "Warm, forgiving portrait negative: creamy skin, muted greens, soft highlights",
        grade: .init(exposure: 0.15, temperature: 0.1, tint: 0.02, saturation: 0.88),
        curves: .init(master: C(0.03, 0.27, 0.53, 0.77, 0.96), red: C(0.01, 0.27, 0.52, 0.76, 0.99),
                      blue: C(0.02, 0.25, 0.49, 0.74, 0.97)),
        splitTone: S(shadowHue: 190, shadowSaturation: 0.12, highlightHue: 35, highlightSaturation: 0.14, balance: 0.1),
        fade: 0.03, clamp: .init(black: 0.015, white: 0.98),
        vignette: V(amount: 0.15, midpoint: 0.6, roundness: 0.3, feather: 0.6),
        grain: G(amount: 0.22, size: 1.1, roughness: 0.4, clumping: 0.2, monochromatic: 0.35))

    public static let portra800 = Preset(
        id: "portra800", name: "Kodak Portra 800", tier: .pro, category: .color,
        description: "Fast portrait negative: warmer, a touch more contrast, visible grain",
        grade: .init(exposure: 0.15, temperature: 0.14, tint: 0.03, saturation: 0.92),
        curves: .init(master: C(0.04, 0.26, 0.52, 0.78, 0.96), red: C(0.01, 0.27, 0.53, 0.77, 0.99),
                      green: C(0, 0.25, 0.5, 0.75, 0.98)),
        splitTone: S(shadowHue: 200, shadowSaturation: 0.15, highlightHue: 32, highlightSaturation: 0.16, balance: 0),
        fade: 0.04, clamp: .init(black: 0.02, white: 0.97),
        vignette: V(amount: 0.18, midpoint: 0.55, roundness: 0.3, feather: 0.6),
        grain: G(amount: 0.34, size: 1.4, roughness: 0.5, clumping: 0.3, monochromatic: 0.35))

    public static let ektar100 = Preset(
        id: "ektar100", name: "Kodak Ektar 100", tier: .pro, category: .color,
        description: "Vivid, punchy landscape negative with saturated reds and blues",
        grade: .init(temperature: 0.04, saturation: 1.3),
        curves: .init(master: C(0.01, 0.22, 0.5, 0.8, 0.99), red: C(0, 0.25, 0.52, 0.78, 1),
                      blue: C(0, 0.26, 0.51, 0.76, 1)),
        splitTone: S(shadowHue: 215, shadowSaturation: 0.1, highlightHue: 30, highlightSaturation: 0.08),
        fade: 0.01, clamp: .init(black: 0.005, white: 0.99),
        vignette: V(amount: 0.2, midpoint: 0.55, roundness: 0.2, feather: 0.55),
        grain: G(amount: 0.1, size: 0.8, roughness: 0.3, monochromatic: 0.3))

    public static let gold200 = Preset(
        id: "gold200", name: "Kodak Gold 200", tier: .pro, category: .color,
        description: "Sunny consumer negative: golden highlights, warm everything",
        grade: .init(exposure: 0.1, temperature: 0.25, tint: 0.02, saturation: 1.1),
        curves: .init(master: C(0.02, 0.25, 0.52, 0.78, 0.97), red: C(0.01, 0.27, 0.54, 0.78, 1),
                      green: C(0, 0.25, 0.51, 0.76, 0.99), blue: C(0.03, 0.24, 0.46, 0.7, 0.92)),
        splitTone: S(shadowHue: 25, shadowSaturation: 0.06, highlightHue: 45, highlightSaturation: 0.2, balance: 0.2),
        fade: 0.03, clamp: .init(black: 0.015, white: 0.98),
        vignette: V(amount: 0.2, midpoint: 0.5, roundness: 0.3, feather: 0.6),
        grain: G(amount: 0.26, size: 1.2, roughness: 0.5, clumping: 0.25, monochromatic: 0.3))

    public static let colorplus200 = Preset(
        id: "colorplus200", name: "Kodak ColorPlus 200", tier: .pro, category: .color,
        description: "Budget negative with a nostalgic yellow-green cast and lifted shadows",
        grade: .init(exposure: 0.1, temperature: 0.18, tint: -0.06, saturation: 1.0),
        curves: .init(master: C(0.04, 0.27, 0.52, 0.77, 0.96), green: C(0.01, 0.26, 0.52, 0.77, 0.99),
                      blue: C(0.04, 0.25, 0.47, 0.71, 0.93)),
        splitTone: S(shadowHue: 160, shadowSaturation: 0.1, highlightHue: 50, highlightSaturation: 0.18, balance: 0.1),
        fade: 0.05, clamp: .init(black: 0.02, white: 0.97),
        vignette: V(amount: 0.25, midpoint: 0.5, roundness: 0.4, feather: 0.6),
        grain: G(amount: 0.3, size: 1.3, roughness: 0.6, clumping: 0.3, monochromatic: 0.3))

    public static let ultramax400 = Preset(
        id: "ultramax400", name: "Kodak UltraMax 400", tier: .pro, category: .color,
        description: "Everyday negative: warm, saturated, contrasty, with honest grain",
        grade: .init(exposure: 0.05, temperature: 0.15, saturation: 1.15),
        curves: .init(master: C(0.02, 0.23, 0.5, 0.79, 0.98), red: C(0, 0.26, 0.53, 0.78, 1),
                      blue: C(0.02, 0.24, 0.48, 0.73, 0.95)),
        splitTone: S(shadowHue: 200, shadowSaturation: 0.08, highlightHue: 40, highlightSaturation: 0.15),
        fade: 0.02, clamp: .init(black: 0.01, white: 0.98),
        vignette: V(amount: 0.2, midpoint: 0.55, roundness: 0.3, feather: 0.6),
        grain: G(amount: 0.32, size: 1.3, roughness: 0.55, clumping: 0.3, monochromatic: 0.3))

    public static let ektachrome100 = Preset(
        id: "ektachrome100", name: "Kodak Ektachrome E100", tier: .pro, category: .slide,
        description: "Clean, cool slide film: crisp blues, neutral greys, deep blacks",
        grade: .init(temperature: -0.08, saturation: 1.2),
        curves: .init(master: C(0, 0.21, 0.5, 0.81, 1), blue: C(0, 0.26, 0.52, 0.77, 1)),
        splitTone: S(shadowHue: 220, shadowSaturation: 0.12, highlightHue: 200, highlightSaturation: 0.05),
        clamp: .init(black: 0, white: 0.99),
        vignette: V(amount: 0.25, midpoint: 0.5, roundness: 0.2, feather: 0.5),
        grain: G(amount: 0.1, size: 0.8, roughness: 0.3, monochromatic: 0.4))

    public static let kodachrome64 = Preset(
        id: "kodachrome64", name: "Kodak Kodachrome 64", tier: .pro, category: .slide,
        description: "Classic slide look: rich reds, dense shadows, warm and timeless",
        grade: .init(exposure: -0.1, temperature: 0.1, tint: 0.03, saturation: 1.2),
        curves: .init(master: C(0, 0.2, 0.49, 0.8, 0.98), red: C(0, 0.27, 0.55, 0.79, 1),
                      green: C(0, 0.24, 0.49, 0.75, 0.98), blue: C(0.01, 0.23, 0.47, 0.73, 0.96)),
        splitTone: S(shadowHue: 20, shadowSaturation: 0.1, highlightHue: 45, highlightSaturation: 0.1, balance: -0.1),
        clamp: .init(black: 0.01, white: 0.97),
        vignette: V(amount: 0.3, midpoint: 0.5, roundness: 0.3, feather: 0.55),
        grain: G(amount: 0.16, size: 1.0, roughness: 0.4, clumping: 0.2, monochromatic: 0.4))

    // MARK: Fujifilm

    public static let velvia50 = Preset(
        id: "velvia50", name: "Fujifilm Velvia 50", tier: .pro, category: .slide,
        description: "Hyper-saturated slide film: electric greens, deep blues, hard contrast",
        grade: .init(exposure: -0.1, temperature: 0.02, tint: 0.05, saturation: 1.5),
        curves: .init(master: C(0, 0.18, 0.48, 0.82, 1), green: C(0, 0.26, 0.52, 0.77, 1),
                      blue: C(0, 0.25, 0.5, 0.76, 1)),
        splitTone: S(shadowHue: 240, shadowSaturation: 0.12, highlightHue: 50, highlightSaturation: 0.06),
        vignette: V(amount: 0.3, midpoint: 0.5, roundness: 0.2, feather: 0.5),
        grain: G(amount: 0.11, size: 0.8, roughness: 0.3, monochromatic: 0.4))

    public static let provia100f = Preset(
        id: "provia100f", name: "Fujifilm Provia 100F", tier: .pro, category: .slide,
        description: "Neutral, faithful slide film with clean colour and moderate contrast",
        grade: .init(saturation: 1.15),
        curves: .init(master: C(0, 0.22, 0.5, 0.79, 1)),
        splitTone: S(shadowHue: 210, shadowSaturation: 0.05),
        vignette: V(amount: 0.18, midpoint: 0.55, roundness: 0.2, feather: 0.55),
        grain: G(amount: 0.08, size: 0.7, roughness: 0.3, monochromatic: 0.4))

    public static let superia400 = Preset(
        id: "superia400", name: "Fujifilm Superia 400", tier: .pro, category: .color,
        description: "Consumer negative with cool greens, magenta-leaning skin and punchy grain",
        grade: .init(exposure: 0.05, temperature: -0.05, tint: -0.05, saturation: 1.1),
        curves: .init(master: C(0.02, 0.24, 0.5, 0.78, 0.98), green: C(0.01, 0.26, 0.52, 0.77, 1),
                      blue: C(0.02, 0.26, 0.51, 0.76, 0.99)),
        splitTone: S(shadowHue: 170, shadowSaturation: 0.14, highlightHue: 330, highlightSaturation: 0.06),
        fade: 0.02, clamp: .init(black: 0.01, white: 0.98),
        vignette: V(amount: 0.2, midpoint: 0.55, roundness: 0.3, feather: 0.6),
        grain: G(amount: 0.3, size: 1.2, roughness: 0.55, clumping: 0.3, monochromatic: 0.3))

    public static let pro400h = Preset(
        id: "pro400h", name: "Fujifilm Pro 400H", tier: .pro, category: .color,
        description: "Airy pastel negative: minty greens, cool shadows, bright and soft",
        grade: .init(exposure: 0.25, temperature: -0.04, tint: -0.03, saturation: 0.85),
        curves: .init(master: C(0.05, 0.29, 0.55, 0.79, 0.97), green: C(0.01, 0.27, 0.53, 0.77, 1),
                      blue: C(0.03, 0.27, 0.52, 0.76, 0.99)),
        splitTone: S(shadowHue: 175, shadowSaturation: 0.15, highlightHue: 60, highlightSaturation: 0.06, balance: 0.2),
        fade: 0.05, clamp: .init(black: 0.02, white: 0.98),
        vignette: V(amount: 0.1, midpoint: 0.65, roundness: 0.4, feather: 0.6),
        grain: G(amount: 0.2, size: 1.1, roughness: 0.4, clumping: 0.2, monochromatic: 0.35))

    public static let astia100f = Preset(
        id: "astia100f", name: "Fujifilm Astia 100F", tier: .pro, category: .slide,
        description: "Soft slide film for portraits: gentle contrast, natural skin, calm colour",
        grade: .init(exposure: 0.05, temperature: 0.03, saturation: 1.05),
        curves: .init(master: C(0.01, 0.25, 0.51, 0.77, 0.98), red: C(0, 0.26, 0.51, 0.76, 1)),
        splitTone: S(shadowHue: 210, shadowSaturation: 0.05, highlightHue: 30, highlightSaturation: 0.06),
        fade: 0.01,
        vignette: V(amount: 0.12, midpoint: 0.6, roundness: 0.3, feather: 0.6),
        grain: G(amount: 0.08, size: 0.7, roughness: 0.3, monochromatic: 0.4))

    public static let c200 = Preset(
        id: "c200", name: "Fujifilm C200", tier: .pro, category: .color,
        description: "Cheap and cheerful negative: cool cast, green shadows, lifted blacks",
        grade: .init(exposure: 0.1, temperature: -0.08, tint: -0.06, saturation: 1.0),
        curves: .init(master: C(0.04, 0.26, 0.51, 0.77, 0.97), green: C(0.02, 0.27, 0.52, 0.77, 0.99)),
        splitTone: S(shadowHue: 150, shadowSaturation: 0.14, highlightHue: 55, highlightSaturation: 0.08),
        fade: 0.04, clamp: .init(black: 0.02, white: 0.97),
        vignette: V(amount: 0.22, midpoint: 0.5, roundness: 0.4, feather: 0.6),
        grain: G(amount: 0.28, size: 1.2, roughness: 0.6, clumping: 0.3, monochromatic: 0.3))

    // MARK: Cinema

    public static let cinestill800t = Preset(
        id: "cinestill800t", name: "CineStill 800T", tier: .pro, category: .cinema,
        description: "Tungsten-balanced night film: teal shadows, warm practicals, glowing highlights",
        grade: .init(exposure: 0.1, temperature: -0.3, tint: 0.05, saturation: 1.05),
        curves: .init(master: C(0.03, 0.24, 0.5, 0.78, 0.98), red: C(0, 0.25, 0.52, 0.79, 1),
                      blue: C(0.04, 0.28, 0.52, 0.75, 0.96)),
        splitTone: S(shadowHue: 185, shadowSaturation: 0.25, highlightHue: 25, highlightSaturation: 0.22, balance: 0.15),
        fade: 0.035, clamp: .init(black: 0.02, white: 0.98),
        vignette: V(amount: 0.22, midpoint: 0.5, roundness: 0.4, feather: 0.6),
        grain: G(amount: 0.36, size: 1.5, roughness: 0.5, clumping: 0.35, monochromatic: 0.3),
        // No rem-jet anti-halation backing: the strongest, widest red halos.
        halation: H(amount: 0.7, radius: 0.012, threshold: 0.55, green: 0.2, blue: 0.02))

    public static let cinestill50d = Preset(
        id: "cinestill50d", name: "CineStill 50D", tier: .pro, category: .cinema,
        description: "Daylight cinema stock: clean, fine-grained, cool-blue skies and soft warmth",
        grade: .init(exposure: 0.05, temperature: -0.05, saturation: 1.1),
        curves: .init(master: C(0.02, 0.24, 0.5, 0.78, 0.98), blue: C(0.01, 0.26, 0.52, 0.77, 1)),
        splitTone: S(shadowHue: 200, shadowSaturation: 0.12, highlightHue: 35, highlightSaturation: 0.1),
        fade: 0.02, clamp: .init(black: 0.01, white: 0.98),
        vignette: V(amount: 0.15, midpoint: 0.55, roundness: 0.4, feather: 0.6),
        grain: G(amount: 0.1, size: 0.8, roughness: 0.3, monochromatic: 0.35),
        halation: H(amount: 0.5, radius: 0.009, threshold: 0.6, green: 0.2, blue: 0.02))

    public static let vision3500t = Preset(
        id: "vision3-500t", name: "Kodak Vision3 500T", tier: .pro, category: .cinema,
        description: "Motion-picture tungsten stock: wide latitude, teal-orange, gentle rolloff",
        grade: .init(exposure: 0.1, temperature: -0.15, saturation: 0.95),
        curves: .init(master: C(0.03, 0.26, 0.51, 0.76, 0.95), red: C(0, 0.26, 0.52, 0.77, 1),
                      blue: C(0.03, 0.26, 0.5, 0.74, 0.96)),
        splitTone: S(shadowHue: 190, shadowSaturation: 0.22, highlightHue: 30, highlightSaturation: 0.18, balance: 0.1),
        fade: 0.03, clamp: .init(black: 0.02, white: 0.97),
        vignette: V(amount: 0.2, midpoint: 0.5, roundness: 0.5, feather: 0.6),
        grain: G(amount: 0.3, size: 1.4, roughness: 0.45, clumping: 0.3, monochromatic: 0.35),
        // Rem-jet backed: a faint halo only around the brightest light.
        halation: H(amount: 0.1, radius: 0.007, threshold: 0.75, green: 0.25, blue: 0.03))

    public static let vision3250d = Preset(
        id: "vision3-250d", name: "Kodak Vision3 250D", tier: .pro, category: .cinema,
        description: "Daylight motion-picture stock: natural, warm midtones, soft shoulder",
        grade: .init(exposure: 0.05, temperature: 0.06, saturation: 1.0),
        curves: .init(master: C(0.02, 0.25, 0.51, 0.77, 0.96), red: C(0, 0.26, 0.52, 0.77, 1)),
        splitTone: S(shadowHue: 195, shadowSaturation: 0.12, highlightHue: 35, highlightSaturation: 0.12),
        fade: 0.02, clamp: .init(black: 0.015, white: 0.97),
        vignette: V(amount: 0.15, midpoint: 0.55, roundness: 0.5, feather: 0.6),
        grain: G(amount: 0.2, size: 1.1, roughness: 0.4, clumping: 0.2, monochromatic: 0.35),
        halation: H(amount: 0.08, radius: 0.006, threshold: 0.8, green: 0.25, blue: 0.03))

    public static let eterna = Preset(
        id: "eterna", name: "Fujifilm Eterna", tier: .pro, category: .cinema,
        description: "Muted cinema stock: low saturation, flat contrast, cyan shadows",
        grade: .init(exposure: 0.05, temperature: -0.04, saturation: 0.7),
        curves: .init(master: C(0.05, 0.28, 0.52, 0.75, 0.93), green: C(0.01, 0.26, 0.51, 0.76, 0.99)),
        splitTone: S(shadowHue: 180, shadowSaturation: 0.18, highlightHue: 45, highlightSaturation: 0.06),
        fade: 0.05, clamp: .init(black: 0.025, white: 0.96),
        vignette: V(amount: 0.15, midpoint: 0.55, roundness: 0.5, feather: 0.6),
        grain: G(amount: 0.18, size: 1.0, roughness: 0.4, clumping: 0.2, monochromatic: 0.4))

    // MARK: Black and white

    public static let hp5 = Preset(
        id: "hp5", name: "Ilford HP5 Plus", tier: .pro, category: .blackAndWhite,
        description: "Versatile 400 B&W: mid contrast, open shadows, classic visible grain",
        grade: .init(exposure: 0.05, saturation: 0),
        curves: .init(master: C(0.02, 0.24, 0.51, 0.78, 0.98)),
        fade: 0.02, clamp: .init(black: 0.01, white: 0.98),
        vignette: V(amount: 0.2, midpoint: 0.55, roundness: 0.3, feather: 0.6),
        grain: G(amount: 0.38, size: 1.4, roughness: 0.55, clumping: 0.35, monochromatic: 1))

    public static let delta3200 = Preset(
        id: "delta3200", name: "Ilford Delta 3200", tier: .pro, category: .blackAndWhite,
        description: "Low-light B&W: heavy clumped grain, deep blacks, gritty mood",
        grade: .init(exposure: 0.1, saturation: 0),
        curves: .init(master: C(0.03, 0.22, 0.5, 0.8, 0.97)),
        fade: 0.03, clamp: .init(black: 0.02, white: 0.97),
        vignette: V(amount: 0.3, midpoint: 0.5, roundness: 0.4, feather: 0.6),
        grain: G(amount: 0.65, size: 2.4, roughness: 0.7, clumping: 0.7, monochromatic: 1, gaussian: 1, simplex: 0.2, worley: 0.5))

    public static let panf50 = Preset(
        id: "panf50", name: "Ilford Pan F Plus 50", tier: .pro, category: .blackAndWhite,
        description: "Slow, razor-fine B&W with rich tonality and bright whites",
        grade: .init(saturation: 0),
        curves: .init(master: C(0, 0.21, 0.5, 0.8, 1)),
        vignette: V(amount: 0.15, midpoint: 0.6, roundness: 0.3, feather: 0.6),
        grain: G(amount: 0.08, size: 0.6, roughness: 0.3, monochromatic: 1))

    public static let trix400 = Preset(
        id: "trix400", name: "Kodak Tri-X 400", tier: .pro, category: .blackAndWhite,
        description: "The reportage classic: punchy contrast, inky blacks, gritty grain",
        grade: .init(saturation: 0),
        curves: .init(master: C(0.01, 0.19, 0.49, 0.82, 0.99)),
        fade: 0.01, clamp: .init(black: 0.005, white: 0.99),
        vignette: V(amount: 0.25, midpoint: 0.5, roundness: 0.3, feather: 0.55),
        grain: G(amount: 0.42, size: 1.5, roughness: 0.65, clumping: 0.45, monochromatic: 1))

    public static let tmax100 = Preset(
        id: "tmax100", name: "Kodak T-Max 100", tier: .pro, category: .blackAndWhite,
        description: "Tabular-grain B&W: very fine grain, crisp detail, smooth greys",
        grade: .init(saturation: 0),
        curves: .init(master: C(0.005, 0.23, 0.5, 0.79, 0.995)),
        vignette: V(amount: 0.12, midpoint: 0.6, roundness: 0.3, feather: 0.6),
        grain: G(amount: 0.1, size: 0.7, roughness: 0.25, monochromatic: 1, gaussian: 1, simplex: 0.1, worley: 0.1))

    public static let fomapan100 = Preset(
        id: "fomapan100", name: "Fomapan 100", tier: .pro, category: .blackAndWhite,
        description: "Old-world B&W: soft highlights, lifted shadows, a slightly vintage glow",
        grade: .init(exposure: 0.05, saturation: 0),
        curves: .init(master: C(0.04, 0.26, 0.52, 0.76, 0.95)),
        fade: 0.04, clamp: .init(black: 0.02, white: 0.96),
        vignette: V(amount: 0.28, midpoint: 0.45, roundness: 0.4, feather: 0.65),
        grain: G(amount: 0.26, size: 1.2, roughness: 0.5, clumping: 0.3, monochromatic: 1))
}
