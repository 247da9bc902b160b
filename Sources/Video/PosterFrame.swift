import CFFmpeg
import CLoopixAV
import Raster

/// A clip's first picture as RGB, for the gallery's thumbnail: libavformat opens the file,
/// libavcodec decodes frames until the first one comes out, libswscale converts it (honouring
/// the stream's colour matrix and range) at `width` wide, the height keeping the aspect ratio.
public enum PosterFrame {
    public static func read(path: String, width: Int) throws(VideoError) -> RGBImage {
        var format: UnsafeMutablePointer<AVFormatContext>?
        var rc = avformat_open_input(&format, path, nil, nil)
        guard rc >= 0, let fmt = format else { throw .ffmpeg(action: "opening \(path)", code: rc) }
        defer { avformat_close_input(&format) }
        rc = avformat_find_stream_info(fmt, nil)
        guard rc >= 0 else { throw .ffmpeg(action: "reading the streams of \(path)", code: rc) }
        let index = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard index >= 0, let stream = fmt.pointee.streams[Int(index)] else { throw .ffmpeg(action: "finding a video stream in \(path)", code: index) }
        guard let decoder = avcodec_find_decoder(stream.pointee.codecpar.pointee.codec_id) else {
            throw .ffmpeg(action: "finding a decoder for \(path)", code: CLoopixAV_error(ENOSYS))
        }
        var codec = avcodec_alloc_context3(decoder)
        guard let ctx = codec else { throw .ffmpeg(action: "allocating a decoder", code: CLoopixAV_error(ENOMEM)) }
        defer { avcodec_free_context(&codec) }
        rc = avcodec_parameters_to_context(ctx, stream.pointee.codecpar)
        guard rc >= 0 else { throw .ffmpeg(action: "setting up the decoder", code: rc) }
        rc = avcodec_open2(ctx, decoder, nil)
        guard rc >= 0 else { throw .ffmpeg(action: "opening the decoder", code: rc) }
        var packet = av_packet_alloc()
        var frame = av_frame_alloc()
        defer {
            av_packet_free(&packet)
            av_frame_free(&frame)
        }
        guard let pkt = packet, let frm = frame else { throw .ffmpeg(action: "allocating a frame", code: CLoopixAV_error(ENOMEM)) }
        var flushing = false
        while true {
            if !flushing {
                rc = av_read_frame(fmt, pkt)
                if rc < 0 {
                    flushing = true
                    _ = avcodec_send_packet(ctx, nil)
                } else {
                    defer { av_packet_unref(pkt) }
                    guard pkt.pointee.stream_index == index else { continue }
                    rc = avcodec_send_packet(ctx, pkt)
                    guard rc >= 0 || rc == CLoopixAV_errorAgain() else { throw .ffmpeg(action: "decoding \(path)", code: rc) }
                }
            }
            rc = avcodec_receive_frame(ctx, frm)
            if rc >= 0 { return try convert(frm, width: width) }
            if rc == CLoopixAV_errorEOF() { throw .ffmpeg(action: "\(path) has no picture", code: rc) }
            guard rc == CLoopixAV_errorAgain() else { throw .ffmpeg(action: "decoding \(path)", code: rc) }
        }
    }

    private static func convert(_ frame: UnsafeMutablePointer<AVFrame>, width: Int) throws(VideoError) -> RGBImage {
        let sw = Int(frame.pointee.width), sh = Int(frame.pointee.height)
        guard sw > 0, sh > 0 else { throw .ffmpeg(action: "decoding: a frame of no size", code: CLoopixAV_error(EINVAL)) }
        let w = max(2, min(width, sw)), h = max(2, sh * w / sw)
        guard let sws = sws_getContext(Int32(sw), Int32(sh), AVPixelFormat(frame.pointee.format), Int32(w), Int32(h),
                                       AV_PIX_FMT_RGB24, SWS_AREA, nil, nil, nil) else {
            throw .ffmpeg(action: "setting up the RGB conversion", code: CLoopixAV_error(EINVAL))
        }
        defer { sws_freeContext(sws) }
        let matrix = frame.pointee.colorspace == AVCOL_SPC_BT709 ? SWS_CS_ITU709 : SWS_CS_ITU601
        let coefficients = sws_getCoefficients(matrix)
        sws_setColorspaceDetails(sws, coefficients, frame.pointee.color_range == AVCOL_RANGE_JPEG ? 1 : 0, coefficients, 1, 0, 1 << 16, 1 << 16)
        var image = RGBImage(width: w, height: h)
        image.pixels.withUnsafeMutableBufferPointer { out in
            var destination: [UnsafeMutablePointer<UInt8>?] = [out.baseAddress, nil, nil, nil]
            var strides: [Int32] = [Int32(w * 3), 0, 0, 0]
            withUnsafeMutablePointer(to: &frame.pointee.data) { data in
                withUnsafeMutablePointer(to: &frame.pointee.linesize) { lines in
                    data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { src in
                        lines.withMemoryRebound(to: Int32.self, capacity: 8) { srcStrides in
                            _ = sws_scale(sws, src, srcStrides, 0, Int32(sh), &destination, &strides)
                        }
                    }
                }
            }
        }
        return image
    }
}
