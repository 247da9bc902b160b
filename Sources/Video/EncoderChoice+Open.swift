import CFFmpeg
import Foundation
import System

extension EncoderChoice {
    /// The encoders to try, in order: `auto` is the Pi's hardware encoder when FFmpeg has
    /// `h264_v4l2m2m` and a V4L2 memory-to-memory encoder device is there, then libx264.
    public func candidates(devices: [String] = VideoDevices.encoderNodes()) -> [String] {
        switch self {
        case .libx264: return ["libx264"]
        case .v4l2m2m: return ["h264_v4l2m2m"]
        case .auto:
            var names: [String] = []
            if !devices.isEmpty, avcodec_find_encoder_by_name("h264_v4l2m2m") != nil { names.append("h264_v4l2m2m") }
            names.append("libx264")
            return names
        }
    }
}

/// V4L2 devices that encode (memory-to-memory; on a Pi 4 and older `/dev/video11`).
public enum VideoDevices {
    public static func encoderNodes(sysfs: String = "/sys/class/video4linux") -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: sysfs)) ?? []
        return names.sorted().filter { node in
            // bcm2835-codec-encode is the Pi's; other m2m encoders name themselves likewise.
            let name = (try? String(contentsOfFile: "\(sysfs)/\(node)/name", encoding: .utf8)) ?? ""
            return name.contains("encode")
        }.map { "/dev/\($0)" }
    }
}
