#ifndef CLOOPIXAV_H
#define CLOOPIXAV_H
// What Swift cannot take from FFmpeg's headers directly: function-like macros (AVERROR) and
// the API that differs between FFmpeg 5.1 (Debian 12) and 7.1 (Debian 13), chosen here at
// compile time. Every symbol carries the CLoopixAV_ prefix.
#include <stddef.h>
#include <stdint.h>

struct AVStream;
struct AVCodecContext;

/// AVERROR(EAGAIN) and AVERROR_EOF.
int CLoopixAV_errorAgain(void);
int CLoopixAV_errorEOF(void);
/// AVERROR(e) for a positive errno e.
int CLoopixAV_error(int e);
/// av_strerror into buf (always NUL-terminated).
void CLoopixAV_errorText(int err, char *buf, size_t size);

/// AV_NOPTS_VALUE.
int64_t CLoopixAV_noPTS(void);

/// Gives the stream a display matrix that turns the picture by `clockwiseDegrees` (0, 90, 180,
/// 270) when played, so portrait clips play upright. Side data of the stream's codec
/// parameters from FFmpeg 6.1 on, stream side data before. 0 or a negative AVERROR.
int CLoopixAV_setRotation(struct AVStream *stream, int clockwiseDegrees);

/// The stream's display rotation in clockwise degrees as players read it (0 when none), for
/// tests reading a clip back.
int CLoopixAV_rotation(const struct AVStream *stream);

/// Sets the AAC encoder's channel layout to mono or stereo (the AVChannelLayout API, present
/// in 5.1 and the only one in 7.1). 0 or a negative AVERROR.
int CLoopixAV_setChannels(struct AVCodecContext *context, int channels);

/// The number of channels of a decoder or encoder context.
int CLoopixAV_channels(const struct AVCodecContext *context);

/// Routes FFmpeg's own messages into the daemon's log: warnings and errors only, one line each
/// on standard error with the journald priority prefix (<3> error, <4> warning), "ffmpeg: "
/// and the component. Once per process is enough; safe to call again.
void CLoopixAV_quietLogs(void);

struct AVIOContext;

/// An AVIOContext that writes to, and seeks in, the open file descriptor `fd`, which stays
/// the caller's (it is not closed). Writes retry EINTR and report errno as AVERROR. NULL when
/// out of memory. Free with CLoopixAV_freeFileIO.
struct AVIOContext *CLoopixAV_fileIO(int fd);
void CLoopixAV_freeFileIO(struct AVIOContext **io);

#endif
