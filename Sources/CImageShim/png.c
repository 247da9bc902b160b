// libpng's classic API, used only to fetch the iCCP chunk (the simplified API, which decodes
// the pixels, does not expose it). libpng's error handler longjmps to png_jmpbuf, which is
// set here, in C.
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>
#include "CImageShim.h"

struct CImageShim_PngICC {
    char message[CIMAGESHIM_MESSAGE_MAX];
    int failed;
    unsigned char *profile;
    unsigned int length;
    const unsigned char *data;
    size_t size;
    size_t offset;
};

static void shimPngError(png_structp png, png_const_charp message) {
    CImageShim_PngICC *icc = png_get_error_ptr(png);
    snprintf(icc->message, sizeof icc->message, "%s", message ? message : "libpng error");
    icc->failed = 1;
    png_longjmp(png, 1);
}

static void shimPngWarning(png_structp png, png_const_charp message) {
    (void)png; (void)message; // e.g. "iCCP: known incorrect sRGB profile": harmless here
}

static void shimPngRead(png_structp png, png_bytep out, size_t length) {
    CImageShim_PngICC *icc = png_get_io_ptr(png);
    if (length > icc->size - icc->offset) png_error(png, "file is truncated");
    memcpy(out, icc->data + icc->offset, length);
    icc->offset += length;
}

CImageShim_PngICC *CImageShim_pngICCRead(const unsigned char *data, size_t size) {
    CImageShim_PngICC *icc = calloc(1, sizeof(*icc));
    if (!icc) return NULL;
    icc->data = data;
    icc->size = size;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, icc, shimPngError, shimPngWarning);
    if (!png) {
        snprintf(icc->message, sizeof icc->message, "cannot create libpng reader");
        icc->failed = 1;
        return icc;
    }
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        snprintf(icc->message, sizeof icc->message, "cannot create libpng info");
        icc->failed = 1;
        return icc;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        return icc;
    }
    png_set_read_fn(png, icc, shimPngRead);
    png_read_info(png, info);
    png_charp name = NULL;
    int compression = 0;
    png_bytep profile = NULL;
    png_uint_32 length = 0;
    if (png_get_iCCP(png, info, &name, &compression, &profile, &length) && profile && length > 0) {
        icc->profile = malloc(length);
        if (icc->profile) {
            memcpy(icc->profile, profile, length);
            icc->length = length;
        }
    }
    png_destroy_read_struct(&png, &info, NULL);
    return icc;
}

int CImageShim_pngICCFailed(const CImageShim_PngICC *icc) { return icc->failed; }
const unsigned char *CImageShim_pngICCProfile(const CImageShim_PngICC *icc, unsigned int *length) {
    *length = icc->length;
    return icc->profile;
}
const char *CImageShim_pngICCMessage(const CImageShim_PngICC *icc) { return icc->message; }
void CImageShim_pngICCDestroy(CImageShim_PngICC *icc) {
    if (!icc) return;
    free(icc->profile);
    free(icc);
}
