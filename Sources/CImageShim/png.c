// libpng's classic API, used only to fetch the iCCP and eXIf chunks (the simplified API, which
// decodes the pixels, does not expose them). libpng's error handler longjmps to png_jmpbuf, which is
// set here, in C.
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>
#include "CImageShim.h"

struct CImageShim_PngMetadata {
    char message[CIMAGESHIM_MESSAGE_MAX];
    int failed;
    unsigned char *profile;
    unsigned int profileLength;
    unsigned char *exif;
    unsigned int exifLength;
    const unsigned char *data;
    size_t size;
    size_t offset;
};

static void shimPngError(png_structp png, png_const_charp message) {
    CImageShim_PngMetadata *meta = png_get_error_ptr(png);
    snprintf(meta->message, sizeof meta->message, "%s", message ? message : "libpng error");
    meta->failed = 1;
    png_longjmp(png, 1);
}

static void shimPngWarning(png_structp png, png_const_charp message) {
    (void)png; (void)message; // e.g. "iCCP: known incorrect sRGB profile": harmless here
}

static void shimPngRead(png_structp png, png_bytep out, size_t length) {
    CImageShim_PngMetadata *meta = png_get_io_ptr(png);
    if (length > meta->size - meta->offset) png_error(png, "file is truncated");
    memcpy(out, meta->data + meta->offset, length);
    meta->offset += length;
}

CImageShim_PngMetadata *CImageShim_pngMetadataRead(const unsigned char *data, size_t size) {
    CImageShim_PngMetadata *meta = calloc(1, sizeof(*meta));
    if (!meta) return NULL;
    meta->data = data;
    meta->size = size;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, meta, shimPngError, shimPngWarning);
    if (!png) {
        snprintf(meta->message, sizeof meta->message, "cannot create libpng reader");
        meta->failed = 1;
        return meta;
    }
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        snprintf(meta->message, sizeof meta->message, "cannot create libpng info");
        meta->failed = 1;
        return meta;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        return meta;
    }
    png_set_read_fn(png, meta, shimPngRead);
    png_read_info(png, info);
    png_charp name = NULL;
    int compression = 0;
    png_bytep profile = NULL;
    png_uint_32 length = 0;
    if (png_get_iCCP(png, info, &name, &compression, &profile, &length) && profile && length > 0) {
        meta->profile = malloc(length);
        if (meta->profile) {
            memcpy(meta->profile, profile, length);
            meta->profileLength = length;
        }
    }
    png_bytep exif = NULL;
    png_uint_32 exifLength = 0;
    if (png_get_eXIf_1(png, info, &exifLength, &exif) && exif && exifLength > 0) {
        meta->exif = malloc(exifLength);
        if (meta->exif) { // optional metadata: without memory for it, the picture still decodes
            memcpy(meta->exif, exif, exifLength);
            meta->exifLength = exifLength;
        }
    }
    png_destroy_read_struct(&png, &info, NULL);
    return meta;
}

int CImageShim_pngMetadataFailed(const CImageShim_PngMetadata *meta) { return meta->failed; }
const unsigned char *CImageShim_pngMetadataICC(const CImageShim_PngMetadata *meta, unsigned int *length) {
    *length = meta->profileLength;
    return meta->profile;
}
const unsigned char *CImageShim_pngMetadataExif(const CImageShim_PngMetadata *meta, unsigned int *length) {
    *length = meta->exifLength;
    return meta->exif;
}
const char *CImageShim_pngMetadataMessage(const CImageShim_PngMetadata *meta) { return meta->message; }
void CImageShim_pngMetadataDestroy(CImageShim_PngMetadata *meta) {
    if (!meta) return;
    free(meta->profile);
    free(meta->exif);
    free(meta);
}
