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
/// Reads the markers up to the first scan: the frame size (SOF), the APP2 ICC profile and the
/// APP1 EXIF, if any. Allocates nothing of the image's size, so the caller can refuse an image
/// that is too large before CImageShim_jpegDecoderStart.
int CImageShim_jpegDecoderReadHeader(CImageShim_JpegDecoder *dec, int *width, int *height);
/// The embedded ICC profile (owned by the decoder) or NULL. Valid after ReadHeader.
const unsigned char *CImageShim_jpegDecoderICC(const CImageShim_JpegDecoder *dec, unsigned int *length);
/// The first APP1 EXIF block from its TIFF header on (owned by the decoder) or NULL. Valid after ReadHeader.
const unsigned char *CImageShim_jpegDecoderExif(const CImageShim_JpegDecoder *dec, unsigned int *length);
/// Prepares RGB output. libjpeg's whole-image buffers (a progressive JPEG's coefficients) may
/// take at most `maxMemory` bytes; a file that needs more is an error.
int CImageShim_jpegDecoderStart(CImageShim_JpegDecoder *dec, size_t maxMemory);
/// Decodes all rows as 8-bit RGB into `out`, turned upright for EXIF orientation 1...8 (any
/// other value counts as 1): `out` holds width×height pixels, or height×width for 5...8, with
/// no padding. Truncated or corrupt entropy-coded data is an error, not a warning.
int CImageShim_jpegDecoderReadRGB(CImageShim_JpegDecoder *dec, unsigned char *out, int orientation);
const char *CImageShim_jpegDecoderMessage(const CImageShim_JpegDecoder *dec);
int CImageShim_jpegDecoderCode(const CImageShim_JpegDecoder *dec);
void CImageShim_jpegDecoderDestroy(CImageShim_JpegDecoder *dec);

// MARK: JPEG encoding

typedef struct CImageShim_JpegEncoder CImageShim_JpegEncoder;

CImageShim_JpegEncoder *CImageShim_jpegEncoderCreate(void);
/// Starts encoding a width × height 8-bit RGB image into memory owned by the encoder.
/// `app1` (may be NULL) is written as an APP1 marker verbatim (for EXIF: "Exif\0\0" + TIFF data),
/// in which case no JFIF APP0 marker is written; `icc` (may be NULL) as APP2 ICC_PROFILE chunks.
int CImageShim_jpegEncodeStart(CImageShim_JpegEncoder *enc, int width, int height, int quality,
                               const unsigned char *app1, unsigned int app1Length,
                               const unsigned char *icc, unsigned int iccLength);
/// Writes the next `rows` rows (`rowStride` bytes apart), so a caller can convert a few rows at a time.
int CImageShim_jpegEncodeRows(CImageShim_JpegEncoder *enc, const unsigned char *rgb, int rows, size_t rowStride);
/// Ends the image (every row must have been given).
int CImageShim_jpegEncodeFinish(CImageShim_JpegEncoder *enc);
/// The encoded bytes (owned by the encoder) after a successful CImageShim_jpegEncode.
const unsigned char *CImageShim_jpegEncoderOutput(const CImageShim_JpegEncoder *enc, size_t *length);
const char *CImageShim_jpegEncoderMessage(const CImageShim_JpegEncoder *enc);
int CImageShim_jpegEncoderCode(const CImageShim_JpegEncoder *enc);
void CImageShim_jpegEncoderDestroy(CImageShim_JpegEncoder *enc);

// MARK: PNG metadata

typedef struct CImageShim_PngMetadata CImageShim_PngMetadata;

/// Reads a PNG's chunks up to the image data and extracts the iCCP profile and the eXIf
/// block, if any. NULL only when out of memory; check CImageShim_pngMetadataFailed.
CImageShim_PngMetadata *CImageShim_pngMetadataRead(const unsigned char *data, size_t size);
int CImageShim_pngMetadataFailed(const CImageShim_PngMetadata *meta);
/// The decompressed profile (owned by the object) or NULL when the file has no iCCP chunk.
const unsigned char *CImageShim_pngMetadataICC(const CImageShim_PngMetadata *meta, unsigned int *length);
/// The eXIf chunk's TIFF data (owned by the object) or NULL when the file has none.
const unsigned char *CImageShim_pngMetadataExif(const CImageShim_PngMetadata *meta, unsigned int *length);
const char *CImageShim_pngMetadataMessage(const CImageShim_PngMetadata *meta);
void CImageShim_pngMetadataDestroy(CImageShim_PngMetadata *meta);

#endif
