#ifndef CIMAGESHIM_H
#define CIMAGESHIM_H
/// setjmp-guarded wrappers around libjpeg and libpng's classic API, so that their error
/// handlers never exit() and never longjmp through Swift frames. Every symbol carries the
/// `CImageShim_` prefix. Functions returning int return 0 on success and -1 on error; the
/// error text (at most CIMAGESHIM_MESSAGE_MAX bytes) and the library's message code are then
/// available from the object.

#include <stddef.h>

#define CIMAGESHIM_MESSAGE_MAX 200

// MARK: JPEG decoding

typedef struct CImageShim_JpegDecoder CImageShim_JpegDecoder;

/// Allocates a decoder over `size` bytes at `data`, which must stay valid until it is destroyed.
/// NULL only when out of memory.
CImageShim_JpegDecoder *CImageShim_jpegDecoderCreate(const unsigned char *data, size_t size);
/// Reads the headers (and the APP2 ICC profile, if any) and prepares RGB output.
int CImageShim_jpegDecoderReadHeader(CImageShim_JpegDecoder *dec, int *width, int *height);
/// The embedded ICC profile (owned by the decoder) or NULL. Valid after ReadHeader.
const unsigned char *CImageShim_jpegDecoderICC(const CImageShim_JpegDecoder *dec, unsigned int *length);
/// Decodes all rows as 8-bit RGB into `out` (rows `rowStride` bytes apart).
/// Truncated or corrupt entropy-coded data is an error, not a warning.
int CImageShim_jpegDecoderReadRGB(CImageShim_JpegDecoder *dec, unsigned char *out, size_t rowStride);
const char *CImageShim_jpegDecoderMessage(const CImageShim_JpegDecoder *dec);
int CImageShim_jpegDecoderCode(const CImageShim_JpegDecoder *dec);
void CImageShim_jpegDecoderDestroy(CImageShim_JpegDecoder *dec);

// MARK: JPEG encoding

typedef struct CImageShim_JpegEncoder CImageShim_JpegEncoder;

CImageShim_JpegEncoder *CImageShim_jpegEncoderCreate(void);
/// Encodes 8-bit RGB rows (`rowStride` bytes apart) into memory owned by the encoder.
/// `app1` (may be NULL) is written as an APP1 marker verbatim (for EXIF: "Exif\0\0" + TIFF data),
/// in which case no JFIF APP0 marker is written.
int CImageShim_jpegEncode(CImageShim_JpegEncoder *enc, const unsigned char *rgb, int width, int height,
                          size_t rowStride, int quality, const unsigned char *app1, unsigned int app1Length);
/// The encoded bytes (owned by the encoder) after a successful CImageShim_jpegEncode.
const unsigned char *CImageShim_jpegEncoderOutput(const CImageShim_JpegEncoder *enc, size_t *length);
const char *CImageShim_jpegEncoderMessage(const CImageShim_JpegEncoder *enc);
int CImageShim_jpegEncoderCode(const CImageShim_JpegEncoder *enc);
void CImageShim_jpegEncoderDestroy(CImageShim_JpegEncoder *enc);

// MARK: PNG iCCP

typedef struct CImageShim_PngICC CImageShim_PngICC;

/// Reads a PNG's chunks up to the image data and extracts the iCCP profile, if any.
/// NULL only when out of memory; check CImageShim_pngICCFailed.
CImageShim_PngICC *CImageShim_pngICCRead(const unsigned char *data, size_t size);
int CImageShim_pngICCFailed(const CImageShim_PngICC *icc);
/// The decompressed profile (owned by the object) or NULL when the file has no iCCP chunk.
const unsigned char *CImageShim_pngICCProfile(const CImageShim_PngICC *icc, unsigned int *length);
const char *CImageShim_pngICCMessage(const CImageShim_PngICC *icc);
void CImageShim_pngICCDestroy(CImageShim_PngICC *icc);

#endif
