/// A film look: every parameter of the pipeline, as data. Built-in looks live in
/// `BuiltinPresets`; user looks are JSON files validated by `PresetParser`.
///
/// Pipeline order (each stage documented on its parameter type): halation (and a date stamp's
/// light) → exposure → temperature & tint → saturation → tone curves → split toning → fade → film clamp → vignette → grain →
/// intensity blend with the original.
public struct Preset: Sendable, Equatable {
    /// Schema version of the JSON form; bump when a field changes meaning.
    public static let currentVersion = 1

    /// Short identifier used on the command line and in settings, e.g. "portra400".
    public var id: String
    /// The name shown to people, e.g. "Kodak Portra 400".
    public var name: String
    public var tier: Tier
    public var category: Category
    /// One line on the look.
    public var description: String

    public var grade: Grade
    public var curves: Curves
    public var splitTone: SplitTone
    /// Black lift, 0…0.3: output black becomes this level (before the clamp).
    public var fade: Double
    public var clamp: FilmClamp
    public var vignette: Vignette
    public var grain: Grain
    /// Red-orange halos around bright light (see `Halation`); off unless a stock has it.
    public var halation: Halation
    /// A user preset's 3D LUT (from a `.cube` file) replacing grade, curves and split toning.
    public var colorLUT: CubeLUT?

    public enum Tier: String, Sendable, CaseIterable { case free, pro }
    public enum Category: String, Sendable, CaseIterable { case neutral, color, slide, cinema, blackAndWhite = "bw", user }

    public init(id: String, name: String, tier: Tier, category: Category, description: String,
                grade: Grade = Grade(), curves: Curves = Curves(), splitTone: SplitTone = SplitTone(),
                fade: Double = 0, clamp: FilmClamp = FilmClamp(), vignette: Vignette = Vignette(),
                grain: Grain = Grain(), halation: Halation = Halation(), colorLUT: CubeLUT? = nil) {
        self.id = id
        self.name = name
        self.tier = tier
        self.category = category
        self.description = description
        self.grade = grade
        self.curves = curves
        self.splitTone = splitTone
        self.fade = fade
        self.clamp = clamp
        self.vignette = vignette
        self.grain = grain
        self.halation = halation
        self.colorLUT = colorLUT
    }

    /// Exposure, white balance and saturation, in linear light.
    public struct Grade: Sendable, Equatable {
        /// Exposure bias in stops, −2…2, added to the camera's EV.
        public var exposure: Double = 0
        /// −1 (cool, blue) … 1 (warm, amber).
        public var temperature: Double = 0
        /// −1 (green) … 1 (magenta).
        public var tint: Double = 0
        /// 0 (grey) … 2; 1 leaves colour alone.
        public var saturation: Double = 1

        public init(exposure: Double = 0, temperature: Double = 0, tint: Double = 0, saturation: Double = 1) {
            self.exposure = exposure
            self.temperature = temperature
            self.tint = tint
            self.saturation = saturation
        }
    }

    /// Tone curves on display-encoded values: master first, then one per channel.
    public struct Curves: Sendable, Equatable {
        public var master: ToneCurve = .identity
        public var red: ToneCurve = .identity
        public var green: ToneCurve = .identity
        public var blue: ToneCurve = .identity

        public init(master: ToneCurve = .identity, red: ToneCurve = .identity,
                    green: ToneCurve = .identity, blue: ToneCurve = .identity) {
            self.master = master
            self.red = red
            self.green = green
            self.blue = blue
        }
    }

    /// Colour pushed into the shadows and the highlights, keeping luma.
    public struct SplitTone: Sendable, Equatable {
        /// Degrees, 0…360.
        public var shadowHue: Double = 0
        /// 0…1.
        public var shadowSaturation: Double = 0
        public var highlightHue: Double = 0
        public var highlightSaturation: Double = 0
        /// −1 (shadows take more of the range) … 1 (highlights take more).
        public var balance: Double = 0

        public init(shadowHue: Double = 0, shadowSaturation: Double = 0, highlightHue: Double = 0,
                    highlightSaturation: Double = 0, balance: Double = 0) {
            self.shadowHue = shadowHue
            self.shadowSaturation = shadowSaturation
            self.highlightHue = highlightHue
            self.highlightSaturation = highlightSaturation
            self.balance = balance
        }
    }

    /// Output black and white points, like the base density and maximum density of a print.
    public struct FilmClamp: Sendable, Equatable {
        /// 0…0.5.
        public var black: Double = 0
        /// 0.5…1, above `black`.
        public var white: Double = 1

        public init(black: Double = 0, white: Double = 1) {
            self.black = black
            self.white = white
        }
    }

    /// Darkening (or lightening) towards the frame's edges, on display-encoded values.
    public struct Vignette: Sendable, Equatable {
        /// −1 (lighten) … 1 (darken the edge fully); 0 is off.
        public var amount: Double = 0
        /// 0…1.5: radius where the falloff starts (1 = the middle of the frame's edge).
        public var midpoint: Double = 0.5
        /// 0 (ellipse following the frame) … 1 (circle).
        public var roundness: Double = 0
        /// 0…1: width of the falloff.
        public var feather: Double = 0.5

        public init(amount: Double = 0, midpoint: Double = 0.5, roundness: Double = 0, feather: Double = 0.5) {
            self.amount = amount
            self.midpoint = midpoint
            self.roundness = roundness
            self.feather = feather
        }
    }

    /// Film grain in the optical-density domain (see `GrainSynthesis`).
    public struct Grain: Sendable, Equatable {
        /// 0 (off) … 1: RMS granularity σ_D at density 1.0, seen through a pixel of the 12 MP
        /// reference frame, is `0.15 × amount` (see `GrainModel`).
        public var amount: Double = 0
        /// 0.5…4: crystal radius in film pixels (pixels of the 12 MP reference frame, 4056
        /// across the long side); any other output sees the same grain on the film.
        public var size: Double = 1
        /// 0…1: spread of crystal sizes (a rougher, more irregular texture).
        public var roughness: Double = 0.5
        /// 0…1: crystal clustering — more of the grain in clumps 2.5× the crystal size.
        public var clumping: Double = 0
        /// 0 (independent grain per channel) … 1 (the same grain in every channel).
        public var monochromatic: Double = 0
        /// Population mix (names kept from the layers they once were): `gaussian` single
        /// crystals, `simplex` a soft mottle of 7× larger clusters, `worley` clumps.
        public var gaussian: Double = 1
        public var simplex: Double = 0.15
        public var worley: Double = 0.3

        public init(amount: Double = 0, size: Double = 1, roughness: Double = 0.5, clumping: Double = 0,
                    monochromatic: Double = 0, gaussian: Double = 1, simplex: Double = 0.15, worley: Double = 0.3) {
            self.amount = amount
            self.size = size
            self.roughness = roughness
            self.clumping = clumping
            self.monochromatic = monochromatic
            self.gaussian = gaussian
            self.simplex = simplex
            self.worley = worley
        }

        public var isOff: Bool { amount <= 0 }
    }
}

/// What changes from frame to frame or shot to shot, outside the preset.
public struct RenderSettings: Sendable, Equatable {
    /// Exposure compensation in stops, −3…3 (the camera's EV dial).
    public var ev: Double
    /// 0 (the original, bit for bit) … 1 (the full look).
    public var intensity: Double
    /// Seeds the grain pattern; the same seed and frame give the same grain.
    public var grainSeed: UInt64
    /// Turns grain off without touching the preset (tests, comparisons).
    public var grainEnabled: Bool
    /// The date imprinted in the lower right (see `DateStamp`), e.g. "'98 11 30"; nil for none.
    public var dateStamp: String?

    public init(ev: Double = 0, intensity: Double = 1, grainSeed: UInt64 = 0x10_0B_1C, grainEnabled: Bool = true,
                dateStamp: String? = nil) {
        self.ev = ev
        self.intensity = intensity
        self.grainSeed = grainSeed
        self.grainEnabled = grainEnabled
        self.dateStamp = dateStamp
    }
}
