#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <stdarg.h>
#include "CLoopixAV.h"

int CLoopixAV_errorAgain(void) { return AVERROR(EAGAIN); }
int CLoopixAV_errorEOF(void) { return AVERROR_EOF; }
int CLoopixAV_error(int e) { return AVERROR(e); }

void CLoopixAV_errorText(int err, char *buf, size_t size) {
    if (size == 0) return;
    if (av_strerror(err, buf, size) < 0) snprintf(buf, size, "error %d", err);
    buf[size - 1] = 0;
}

int64_t CLoopixAV_noPTS(void) { return AV_NOPTS_VALUE; }

// av_packet_side_data_new on the codec parameters came with libavcodec 60.31 (FFmpeg 6.1);
// av_stream_new_side_data went away in 7.0.
#define LOOPIX_CODECPAR_SIDE_DATA (LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 31, 102))

int CLoopixAV_setRotation(AVStream *stream, int clockwiseDegrees) {
    if (clockwiseDegrees % 360 == 0) return 0;
    int32_t matrix[9];
    // av_display_rotation_set takes clockwise degrees (av_display_rotation_get gives them
    // back counter-clockwise: ffprobe shows a portrait clip as -90).
    av_display_rotation_set(matrix, (double)clockwiseDegrees);
#if LOOPIX_CODECPAR_SIDE_DATA
    AVPacketSideData *sd = av_packet_side_data_new(&stream->codecpar->coded_side_data,
                                                   &stream->codecpar->nb_coded_side_data,
                                                   AV_PKT_DATA_DISPLAYMATRIX, sizeof(matrix), 0);
    if (!sd) return AVERROR(ENOMEM);
    memcpy(sd->data, matrix, sizeof(matrix));
#else
    uint8_t *data = av_stream_new_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, sizeof(matrix));
    if (!data) return AVERROR(ENOMEM);
    memcpy(data, matrix, sizeof(matrix));
#endif
    return 0;
}

int CLoopixAV_rotation(const AVStream *stream) {
    const int32_t *matrix = NULL;
#if LOOPIX_CODECPAR_SIDE_DATA
    const AVPacketSideData *sd = av_packet_side_data_get(stream->codecpar->coded_side_data,
                                                         stream->codecpar->nb_coded_side_data,
                                                         AV_PKT_DATA_DISPLAYMATRIX);
    if (sd && sd->size >= 9 * sizeof(int32_t)) matrix = (const int32_t *)sd->data;
#else
    size_t size = 0;
    const uint8_t *data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (data && size >= 9 * sizeof(int32_t)) matrix = (const int32_t *)data;
#endif
    if (!matrix) return 0;
    double ccw = av_display_rotation_get(matrix);
    int cw = (int)(-ccw + (ccw > 0 ? -0.5 : 0.5));
    return ((cw % 360) + 360) % 360;
}

int CLoopixAV_setChannels(AVCodecContext *context, int channels) {
    av_channel_layout_uninit(&context->ch_layout);
    av_channel_layout_default(&context->ch_layout, channels);
    return 0;
}

int CLoopixAV_channels(const AVCodecContext *context) { return context->ch_layout.nb_channels; }

// FFmpeg 7 made the write callback's buffer const.
#if LIBAVFORMAT_VERSION_MAJOR >= 61
typedef const uint8_t loopix_out_t;
#else
typedef uint8_t loopix_out_t;
#endif

struct loopix_file { int fd; };

static int write_packet(void *opaque, loopix_out_t *buf, int size) {
    int fd = ((struct loopix_file *)opaque)->fd;
    int done = 0;
    while (done < size) {
        ssize_t n = write(fd, buf + done, (size_t)(size - done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return AVERROR(errno);
        }
        if (n == 0) return AVERROR(EIO);
        done += (int)n;
    }
    return size;
}

static int64_t seek(void *opaque, int64_t offset, int whence) {
    int fd = ((struct loopix_file *)opaque)->fd;
    if (whence & AVSEEK_SIZE) {
        struct stat st;
        return fstat(fd, &st) == 0 ? (int64_t)st.st_size : AVERROR(errno);
    }
    off_t r = lseek(fd, (off_t)offset, whence & ~AVSEEK_FORCE);
    return r < 0 ? AVERROR(errno) : (int64_t)r;
}

AVIOContext *CLoopixAV_fileIO(int fd) {
    const int size = 64 * 1024;
    struct loopix_file *file = av_mallocz(sizeof(*file));
    unsigned char *buffer = av_malloc(size);
    if (!file || !buffer) {
        av_free(file);
        av_free(buffer);
        return NULL;
    }
    file->fd = fd;
    AVIOContext *io = avio_alloc_context(buffer, size, 1, file, NULL, write_packet, seek);
    if (!io) {
        av_free(file);
        av_free(buffer);
    }
    return io;
}

void CLoopixAV_freeFileIO(AVIOContext **io) {
    if (!io || !*io) return;
    av_freep(&(*io)->opaque);
    av_freep(&(*io)->buffer);
    avio_context_free(io);
}

static void log_line(void *avcl, int level, const char *fmt, va_list args) {
    if (level > AV_LOG_WARNING) return;
    char text[1024];
    int prefix = 0;
    av_log_format_line2(avcl, level, fmt, args, text, sizeof(text), &prefix);
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r')) text[--n] = 0;
    if (n == 0) return;
    char line[1100];
    int len = snprintf(line, sizeof(line), "<%d>ffmpeg: %s\n", level <= AV_LOG_ERROR ? 3 : 4, text);
    if (len > 0) {
        if ((size_t)len >= sizeof(line)) len = sizeof(line) - 1;
        ssize_t written = write(2, line, (size_t)len);
        (void)written;
    }
}

void CLoopixAV_quietLogs(void) {
    av_log_set_level(AV_LOG_WARNING);
    av_log_set_callback(log_line);
}
