import CFFmpeg
import CLoopixAV
import Foundation
import System

/// One clip being written: H.264 (High profile, 8-bit 4:2:0, BT.709 limited range) and
/// optionally AAC, in a fragmented MP4 (a fragment per keyframe interval) written through
/// libavformat to a file descriptor this type owns. After every fragment the file is synced,
/// so a power cut or `kill -9` loses at most the fragment being written and the file up to it
/// plays. When the storage fills up, the file is cut back to its last whole fragment. `finish`
/// flushes the encoder and writes the trailer (the `mfra` index), giving a complete, seekable
/// file.
///
/// Every libav* handle has this one owner and is freed in `deinit`. Used from one thread (the
/// recorder's); the per-frame path allocates nothing of its own (libx264 and libavformat keep
/// their own buffers).
public final class ClipWriter {
    public let path: String
    public let width: Int
    public let height: Int
    public let encoderName: String
    private let file: FileDescriptor
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var io: UnsafeMutablePointer<AVIOContext>?
    private var video: UnsafeMutablePointer<AVCodecContext>?
    private let videoStream: UnsafeMutablePointer<AVStream>
    private var audio: UnsafeMutablePointer<AVCodecContext>?
    private var audioStream: UnsafeMutablePointer<AVStream>?
    private var scaler: OpaquePointer?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var audioFrame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    /// The frame-grid slot (time × fps) of the last frame encoded.
    private var lastSlot: Int64 = -1
    /// Keyframes come by time, not by frame count: the first frame at or past this slot is one,
    /// so a fragment covers `keyframeInterval` seconds even when frames were dropped (what a
    /// power cut can cost stays bounded in time).
    private var nextKeySlot: Int64 = 0
    private let keySlots: Int64
    private let framesPerSecond: Int
    private let conversion: VideoSettings.Conversion
    private var headerWritten = false
    private var finished = false
    /// File length at the end of the last whole fragment (synced).
    private(set) var safeLength: Int64 = 0
    /// Bytes in the file now.
    public private(set) var bytesWritten: Int64 = 0
    /// Samples of audio queued for the next AAC frame, per channel, and where they start.
    private var audioFill = 0
    private var audioPTS: Int64 = 0
    /// Video frames written.
    public private(set) var frames = 0
    /// Keyframes written: a fragment is whole in the file once the next keyframe began one.
    private var keyframes = 0
    /// sws_scale's source plane pointers and strides, made once (no array per frame).
    private let sourcePlanes = UnsafeMutablePointer<UnsafePointer<UInt8>?>.allocate(capacity: 4)
    private let sourceStrides = UnsafeMutablePointer<Int32>.allocate(capacity: 4)

    static let timeBase = AVRational(num: 1, den: 90_000)

    /// Creates `path` (it must not exist), opens the encoder named `encoderName` and writes the
    /// MP4 header. Throws, leaving nothing behind, when any of it fails.
    public init(path: String, settings: VideoSettings, metadata: ClipMetadata, encoderName: String) throws(VideoError) {
        self.path = path
        width = settings.width
        height = settings.height
        framesPerSecond = max(1, settings.framesPerSecond)
        keySlots = Int64(max(1, (Double(framesPerSecond) * settings.keyframeInterval).rounded()))
        self.encoderName = encoderName
        conversion = settings.conversion
        CLoopixAV_quietLogs()
        sourcePlanes.initialize(repeating: nil, count: 4)
        sourceStrides.initialize(repeating: 0, count: 4)
        do { file = try .open(path, O_WRONLY | O_CREAT | O_EXCL, mode: 0o644) } catch {
            throw .file(SystemError(path, "create the clip", error))
        }
        // From here on, a failure removes the file again; deinit frees what was made.
        var completed = false
        defer { if !completed { unlink(path) } }

        var fmt: UnsafeMutablePointer<AVFormatContext>?
        try Self.check(avformat_alloc_output_context2(&fmt, nil, "mp4", nil), "\(path): setting up the MP4 muxer")
        guard let fmt else { throw .ffmpeg(action: "\(path): setting up the MP4 muxer", code: CLoopixAV_error(ENOMEM)) }
        format = fmt
        guard let io = CLoopixAV_fileIO(file.rawValue) else {
            throw .ffmpeg(action: "\(path): setting up the file output", code: CLoopixAV_error(ENOMEM))
        }
        self.io = io
        fmt.pointee.pb = io
        fmt.pointee.flags |= AVFMT_FLAG_CUSTOM_IO

        // Video.
        guard let codec = avcodec_find_encoder_by_name(encoderName) else {
            throw .noEncoder("FFmpeg has no encoder named \(encoderName)")
        }
        guard let v = avcodec_alloc_context3(codec) else {
            throw .ffmpeg(action: "allocating the \(encoderName) encoder", code: CLoopixAV_error(ENOMEM))
        }
        video = v
        v.pointee.width = Int32(settings.width)
        v.pointee.height = Int32(settings.height)
        v.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        v.pointee.time_base = Self.timeBase
        v.pointee.framerate = AVRational(num: Int32(settings.framesPerSecond), den: 1)
        // `encode` asks for keyframes by time; x264's own, by count, are only a backstop, at twice
        // the interval: at the same count, the benchmark's 720p and 1080p clips logged "forced
        // frame type (1) at 30 was changed to frame type (2)" (the IDR asked for made a plain I).
        v.pointee.gop_size = Int32(clamping: keySlots * 2)
        v.pointee.max_b_frames = 0
        v.pointee.bit_rate = Int64(settings.bitrate)
        v.pointee.rc_max_rate = Int64(settings.bitrate) * 3 / 2
        v.pointee.rc_buffer_size = Int32(clamping: settings.bitrate * 2)
        v.pointee.profile = 100  // FF_PROFILE_H264_HIGH (AV_PROFILE_H264_HIGH from FFmpeg 7)
        v.pointee.color_primaries = AVCOL_PRI_BT709
        v.pointee.color_trc = AVCOL_TRC_BT709
        v.pointee.colorspace = AVCOL_SPC_BT709
        v.pointee.color_range = AVCOL_RANGE_MPEG
        v.pointee.thread_count = Int32(settings.threads > 0 ? settings.threads : ProcessInfo.processInfo.activeProcessorCount)
        v.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        if encoderName == "libx264" {
            av_dict_set(&options, "preset", settings.x264Preset, 0)
            av_dict_set(&options, "profile", "high", 0)
            // The fast presets turn CABAC and the 8×8 transform off, which would make the
            // stream Baseline; both back on keeps it High at little cost.
            av_dict_set(&options, "x264-params", "cabac=1:8x8dct=1", 0)
            // A keyframe asked for by time (see `nextKeySlot`) is an IDR frame, where a fragment
            // can begin.
            av_dict_set(&options, "forced-idr", "1", 0)
        }
        try Self.check(avcodec_open2(v, codec, &options), "opening the \(encoderName) encoder at \(settings.width)×\(settings.height)")
        guard let stream = avformat_new_stream(fmt, nil) else {
            throw .ffmpeg(action: "adding the video stream", code: CLoopixAV_error(ENOMEM))
        }
        videoStream = stream
        stream.pointee.time_base = Self.timeBase
        try Self.check(avcodec_parameters_from_context(stream.pointee.codecpar, v), "describing the video stream")
        try Self.check(CLoopixAV_setRotation(stream, Int32(metadata.rotation)), "setting the display rotation")

        // Audio.
        if let a = settings.audio {
            guard let aac = avcodec_find_encoder_by_name("aac") else { throw .noEncoder("FFmpeg has no AAC encoder") }
            guard let ac = avcodec_alloc_context3(aac) else {
                throw .ffmpeg(action: "allocating the AAC encoder", code: CLoopixAV_error(ENOMEM))
            }
            audio = ac
            ac.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
            ac.pointee.sample_rate = Int32(a.sampleRate)
            ac.pointee.bit_rate = Int64(a.bitrate)
            ac.pointee.time_base = AVRational(num: 1, den: Int32(a.sampleRate))
            ac.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
            try Self.check(CLoopixAV_setChannels(ac, Int32(a.channels)), "setting the audio channels")
            try Self.check(avcodec_open2(ac, aac, nil), "opening the AAC encoder")
            guard let s = avformat_new_stream(fmt, nil) else {
                throw .ffmpeg(action: "adding the audio stream", code: CLoopixAV_error(ENOMEM))
            }
            audioStream = s
            s.pointee.time_base = ac.pointee.time_base
            try Self.check(avcodec_parameters_from_context(s.pointee.codecpar, ac), "describing the audio stream")
            guard let af = av_frame_alloc() else { throw .ffmpeg(action: "allocating an audio frame", code: CLoopixAV_error(ENOMEM)) }
            audioFrame = af
            af.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
            af.pointee.sample_rate = Int32(a.sampleRate)
            af.pointee.nb_samples = ac.pointee.frame_size > 0 ? ac.pointee.frame_size : 1024
            try Self.check(av_channel_layout_copy(&af.pointee.ch_layout, &ac.pointee.ch_layout), "setting the audio frame's channels")
            try Self.check(av_frame_get_buffer(af, 0), "allocating the audio frame")
        }

        // Metadata.
        Self.setTag(&fmt.pointee.metadata, "creation_time", Self.iso8601(metadata.creationTime))
        Self.setTag(&fmt.pointee.metadata, "title", metadata.look)
        Self.setTag(&fmt.pointee.metadata, "comment", "Loopix, look \(metadata.look)")
        Self.setTag(&fmt.pointee.metadata, "make", "Loopix")
        Self.setTag(&fmt.pointee.metadata, "model", metadata.cameraModel)
        Self.setTag(&fmt.pointee.metadata, "encoder", "Loopix (\(encoderName))")

        // The picture buffers, made once.
        guard let f = av_frame_alloc() else { throw .ffmpeg(action: "allocating a video frame", code: CLoopixAV_error(ENOMEM)) }
        frame = f
        f.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        f.pointee.width = Int32(settings.width)
        f.pointee.height = Int32(settings.height)
        f.pointee.color_primaries = AVCOL_PRI_BT709
        f.pointee.color_trc = AVCOL_TRC_BT709
        f.pointee.colorspace = AVCOL_SPC_BT709
        f.pointee.color_range = AVCOL_RANGE_MPEG
        try Self.check(av_frame_get_buffer(f, 32), "allocating a \(settings.width)×\(settings.height) video frame")
        guard let p = av_packet_alloc() else { throw .ffmpeg(action: "allocating a packet", code: CLoopixAV_error(ENOMEM)) }
        packet = p
        // RGB (the engine's sRGB-encoded BT.709 primaries, full range) → Y′CbCr BT.709, limited range.
        guard let sws = sws_getContext(Int32(settings.width), Int32(settings.height), AV_PIX_FMT_RGB24,
                                       Int32(settings.width), Int32(settings.height), AV_PIX_FMT_YUV420P,
                                       SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INP, nil, nil, nil) else {
            throw .ffmpeg(action: "setting up the RGB → YUV conversion", code: CLoopixAV_error(EINVAL))
        }
        scaler = sws
        let bt709 = sws_getCoefficients(SWS_CS_ITU709)
        sws_setColorspaceDetails(sws, bt709, 1, bt709, 0, 0, 1 << 16, 1 << 16)

        // The fragmented header: a fragment starts at every keyframe.
        var muxOptions: OpaquePointer?
        defer { av_dict_free(&muxOptions) }
        av_dict_set(&muxOptions, "movflags", "frag_keyframe+empty_moov+default_base_moof+use_metadata_tags", 0)
        try write(avformat_write_header(fmt, &muxOptions), "writing the MP4 header")
        headerWritten = true
        try syncFragment()
        completed = true
    }

    deinit {
        sourcePlanes.deallocate()
        sourceStrides.deallocate()
        if let scaler { sws_freeContext(scaler) }
        av_frame_free(&frame)
        av_frame_free(&audioFrame)
        av_packet_free(&packet)
        avcodec_free_context(&video)
        avcodec_free_context(&audio)
        if let format {
            format.pointee.pb = nil
            avformat_free_context(format)
        }
        CLoopixAV_freeFileIO(&io)
        // `file` closes itself.
    }

    /// Converts one RGB frame (width × height, rows `stride` bytes apart) and encodes it at
    /// `time` (seconds since the clip began; frames must come in order). Frames sit on the
    /// clip's frame grid (1/fps): a frame whose grid slot is already taken — frames that
    /// bunched up behind a stall — is left out and false returned, so no two frames are ever
    /// closer than a frame period and every player and tool sees a steady frame rate with,
    /// at worst, a gap.
    @discardableResult
    public func encode(rgb: UnsafePointer<UInt8>, stride: Int, time: Double) throws(VideoError) -> Bool {
        guard let frame, let scaler, let video else { return false }
        let slot = Int64((max(0, time) * Double(framesPerSecond)).rounded())
        guard slot > lastSlot else { return false }
        if av_frame_make_writable(frame) < 0 {
            throw .ffmpeg(action: "reusing the video frame", code: CLoopixAV_error(ENOMEM))
        }
        sourcePlanes[0] = rgb
        sourceStrides[0] = Int32(stride)
        let sources = sourcePlanes, strides = sourceStrides, rows = Int32(height), columns = width
        let builtIn = conversion == .builtIn
        withUnsafeMutablePointer(to: &frame.pointee.data) { data in
            withUnsafeMutablePointer(to: &frame.pointee.linesize) { lines in
                data.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { planes in
                    lines.withMemoryRebound(to: Int32.self, capacity: 8) { pitches in
                        if builtIn {
                            YUVConversion.convert(rgb: rgb, rgbStride: stride, width: columns, height: Int(rows),
                                                  y: planes[0]!, yStride: Int(pitches[0]), u: planes[1]!, uStride: Int(pitches[1]),
                                                  v: planes[2]!, vStride: Int(pitches[2]))
                        } else {
                            _ = sws_scale(scaler, sources, strides, 0, rows, planes, pitches)
                        }
                    }
                }
            }
        }
        lastSlot = slot
        if slot >= nextKeySlot {
            frame.pointee.pict_type = AV_PICTURE_TYPE_I
            nextKeySlot = slot + keySlots
        } else {
            frame.pointee.pict_type = AV_PICTURE_TYPE_NONE
        }
        frame.pointee.pts = slot * Int64(Self.timeBase.den) / Int64(framesPerSecond)
        try Self.check(avcodec_send_frame(video, frame), "encoding a frame")
        try drain(video, videoStream)
        frames += 1
        return true
    }

    /// Queues `count` interleaved 16-bit sample frames (`channels` samples each) that begin at
    /// `time` seconds since the clip began; encodes every whole AAC frame. Samples from before
    /// the clip began are skipped.
    public func encodeAudio(_ samples: UnsafePointer<Int16>, count: Int, channels: Int, time: Double) throws(VideoError) {
        guard let audio, let audioFrame, let audioStream else { return }
        let frameSize = Int(audioFrame.pointee.nb_samples)
        let rate = Double(audio.pointee.sample_rate)
        let outChannels = Int(CLoopixAV_channels(audio))
        var used = 0
        if audioFill == 0 {
            let start = Int64((time * rate).rounded())
            if start < 0 { used = min(count, Int(-start)) }  // before the clip: dropped
            audioPTS = max(audioPTS, max(start, 0))
        }
        while used < count {
            if av_frame_make_writable(audioFrame) < 0 {
                throw .ffmpeg(action: "reusing the audio frame", code: CLoopixAV_error(ENOMEM))
            }
            let take = min(frameSize - audioFill, count - used)
            for c in 0..<outChannels {
                let plane = UnsafeMutableRawPointer(audioFrame.pointee.extended_data[c]!).assumingMemoryBound(to: Float.self)
                let from = min(c, channels - 1)
                for i in 0..<take {
                    plane[audioFill + i] = Float(samples[(used + i) * channels + from]) / 32768
                }
            }
            audioFill += take
            used += take
            if audioFill == frameSize {
                audioFrame.pointee.pts = audioPTS
                try Self.check(avcodec_send_frame(audio, audioFrame), "encoding audio")
                try drain(audio, audioStream)
                audioPTS += Int64(frameSize)
                audioFill = 0
            }
        }
    }

    /// Flushes the encoders, writes the trailer and syncs: a complete, seekable file.
    public func finish() throws(VideoError) {
        guard !finished else { return }
        finished = true
        if let video {
            try Self.check(avcodec_send_frame(video, nil), "flushing the video encoder")
            try drain(video, videoStream)
        }
        if let audio, let audioStream {
            try Self.check(avcodec_send_frame(audio, nil), "flushing the audio encoder")
            try drain(audio, audioStream)
        }
        if let format { try write(av_write_trailer(format), "writing the MP4 trailer") }
        try syncFragment()
    }

    /// After a write failed: the file cut back to its last whole fragment (what plays), synced.
    /// A clip without one whole fragment has nothing to play and is removed. Returns whether
    /// the file is kept.
    @discardableResult
    public func cutToLastFragment() -> Bool {
        finished = true
        guard keyframes > 1 else {
            unlink(path)
            bytesWritten = 0
            return false
        }
        if ftruncate(file.rawValue, off_t(safeLength)) == 0 { bytesWritten = safeLength }
        _ = fsync(file.rawValue)
        return true
    }

    /// Receives every packet the encoder has ready and hands it to the muxer; after a
    /// keyframe (a new fragment began, so the one before is whole in the file) the file is
    /// synced and its length noted.
    private func drain(_ codec: UnsafeMutablePointer<AVCodecContext>, _ stream: UnsafeMutablePointer<AVStream>) throws(VideoError) {
        guard let packet, let format else { return }
        while true {
            let rc = avcodec_receive_packet(codec, packet)
            if rc == CLoopixAV_errorAgain() || rc == CLoopixAV_errorEOF() { return }
            try Self.check(rc, "encoding")
            let key = (packet.pointee.flags & AV_PKT_FLAG_KEY) != 0 && stream == videoStream
            if stream == videoStream, packet.pointee.duration <= 0, codec.pointee.framerate.num > 0 {
                // The nominal frame period (the muxer needs a duration for a fragment's last frame).
                packet.pointee.duration = Int64(codec.pointee.time_base.den) * Int64(codec.pointee.framerate.den)
                    / (Int64(codec.pointee.time_base.num) * Int64(codec.pointee.framerate.num))
            }
            av_packet_rescale_ts(packet, codec.pointee.time_base, stream.pointee.time_base)
            packet.pointee.stream_index = stream.pointee.index
            try write(av_interleaved_write_frame(format, packet), "writing the clip")
            if key {
                keyframes += 1
                try syncFragment()
            }
        }
    }

    /// Pushes what the muxer has written to the file and syncs it; notes the whole length.
    private func syncFragment() throws(VideoError) {
        guard let io else { return }
        avio_flush(io)
        if io.pointee.error < 0 { try write(io.pointee.error, "writing the clip") }
        var st = stat()
        if fstat(file.rawValue, &st) == 0 { bytesWritten = Int64(st.st_size) }
        guard fdatasync(file.rawValue) == 0 else {
            throw .file(SystemError(path, "sync the clip to storage", Errno.current))
        }
        safeLength = bytesWritten
    }

    /// A muxer write's result: ENOSPC becomes `storageFull` (the caller cuts the file back).
    private func write(_ rc: Int32, _ action: String) throws(VideoError) {
        guard rc < 0 else { return }
        if VideoError.errno(of: rc) == .noSpace { throw .storageFull("\(path): no space left while \(action)") }
        throw .ffmpeg(action: "\(path): \(action)", code: rc)
    }

    private static func check(_ rc: Int32, _ action: String) throws(VideoError) {
        if rc < 0 { throw .ffmpeg(action: action, code: rc) }
    }

    private static func setTag(_ dict: inout OpaquePointer?, _ key: String, _ value: String) {
        av_dict_set(&dict, key, value, 0)
    }

    static func iso8601(_ seconds: Double) -> String {
        var t = time_t(seconds)
        var tm = tm()
        gmtime_r(&t, &tm)
        let micro = Int((seconds - Double(Int(seconds))) * 1_000_000)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1, Int(tm.tm_mday),
                      Int(tm.tm_hour), Int(tm.tm_min), Int(tm.tm_sec), micro)
    }
}
