/// Which H.264 encoder records.
public enum EncoderChoice: String, Sendable, Equatable, CaseIterable {
    /// The hardware encoder where there is one that works (Pi 4 and older), else libx264.
    case auto
    /// FFmpeg's `h264_v4l2m2m`: the Pi's hardware encoder (/dev/video11 on a Pi 4).
    case v4l2m2m
    /// x264 in software (a Pi 5 has no hardware encoder).
    case libx264

    /// FFmpeg's name for the encoder.
    public var codecName: String? {
        switch self {
        case .auto: return nil
        case .v4l2m2m: return "h264_v4l2m2m"
        case .libx264: return "libx264"
        }
    }
}

/// A microphone to record with the video (ALSA capture, AAC in the clip).
public struct AudioSettings: Sendable, Equatable {
    /// ALSA device name: "default", "hw:1,0", "plughw:CARD=Device,DEV=0".
    public var device: String
    public var sampleRate = 48_000
    public var channels = 1
    /// AAC bit rate, bits per second.
    public var bitrate = 128_000

    public init(device: String) { self.device = device }
}

/// How clips are recorded.
public struct VideoSettings: Sendable, Equatable {
    public var width = 1920
    public var height = 1080
    public var framesPerSecond = 30
    /// Target bit rate, bits per second.
    public var bitrate = 16_000_000
    public var encoder = EncoderChoice.auto
    /// libx264's speed preset (the High profile is kept at every preset).
    public var x264Preset = "superfast"
    /// Seconds between keyframes; also the length of a fragment of the MP4, so at most this
    /// much is lost to a power cut.
    public var keyframeInterval: Double = 1
    /// Encoder threads (0: as many as cores).
    public var threads = 0
    /// How RGB becomes Y′CbCr 4:2:0: Loopix's own loop or libswscale (the benchmark compares them).
    public var conversion = Conversion.swscale

    public enum Conversion: String, Sendable, Equatable, CaseIterable { case builtIn, swscale }
    public var audio: AudioSettings?

    public init() {}
}

/// What a clip says about itself.
public struct ClipMetadata: Sendable, Equatable {
    /// Seconds since 1970 (UTC) when recording began.
    public var creationTime: Double
    /// The look's name (the `title` tag; `comment` says it was recorded by Loopix).
    public var look: String
    /// The camera model (`model` and `make` tags).
    public var cameraModel: String
    /// How the player must turn the picture, clockwise degrees (0, 90, 180, 270), from the
    /// motion sensor's orientation at the start.
    public var rotation: Int

    public init(creationTime: Double, look: String, cameraModel: String, rotation: Int) {
        self.creationTime = creationTime
        self.look = look
        self.cameraModel = cameraModel
        self.rotation = rotation
    }

    /// The clockwise turn that shows a frame upright, from an EXIF orientation (1, 3, 6, 8).
    public static func rotation(exifOrientation: Int) -> Int {
        switch exifOrientation {
        case 6: return 90
        case 3: return 180
        case 8: return 270
        default: return 0
        }
    }
}
