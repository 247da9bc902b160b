// libjpeg behind setjmp: error_exit records libjpeg's message and code and longjmps back into
// the C function that called libjpeg, never into Swift. Nothing here calls exit().
#include <limits.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>
#include "CImageShim.h"

typedef struct {
    struct jpeg_error_mgr pub; // first: libjpeg casts cinfo->err to this struct
    jmp_buf jump;
    char message[CIMAGESHIM_MESSAGE_MAX];
    int code;
} ShimError;

static void shimErrorExit(j_common_ptr cinfo) {
    ShimError *err = (ShimError *)cinfo->err;
    err->code = err->pub.msg_code;
    (*cinfo->err->format_message)(cinfo, err->message);
    longjmp(err->jump, 1);
}

static void shimEmitMessage(j_common_ptr cinfo, int level) {
    if (level != -1) return; // trace messages
    ShimError *err = (ShimError *)cinfo->err;
    int code = err->pub.msg_code;
    // Damaged image data: libjpeg would fill the rest with grey and carry on. A photo tool
    // must not silently produce a half-grey picture, so these warnings are errors.
    if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER || code == JWRN_MUST_RESYNC ||
        code == JWRN_NOT_SEQUENTIAL) {
        shimErrorExit(cinfo);
    }
    err->pub.num_warnings++;
}

static void shimInitError(ShimError *err) {
    jpeg_std_error(&err->pub);
    err->pub.error_exit = shimErrorExit;
    err->pub.emit_message = shimEmitMessage;
    err->message[0] = 0;
    err->code = 0;
}

struct CImageShim_JpegDecoder {
    struct jpeg_decompress_struct cinfo;
    ShimError err;
    const unsigned char *data;
    size_t size;
    int created;
    unsigned char *icc;
    unsigned int iccLength;
    unsigned char *exif;
    unsigned int exifLength;
};

CImageShim_JpegDecoder *CImageShim_jpegDecoderCreate(const unsigned char *data, size_t size) {
    CImageShim_JpegDecoder *dec = calloc(1, sizeof(*dec));
    if (!dec) return NULL;
    dec->data = data;
    dec->size = size;
    shimInitError(&dec->err);
    dec->cinfo.err = &dec->err.pub;
    if (setjmp(dec->err.jump)) {
        return dec; // created stays 0; ReadHeader reports the message
    }
    jpeg_create_decompress(&dec->cinfo);
    dec->created = 1;
    return dec;
}

/// Copies the first APP1 marker that starts with "Exif\0\0" (minus that prefix) into dec->exif.
static void shimKeepExif(CImageShim_JpegDecoder *dec) {
    static const unsigned char prefix[6] = {'E', 'x', 'i', 'f', 0, 0};
    for (jpeg_saved_marker_ptr m = dec->cinfo.marker_list; m; m = m->next) {
        if (m->marker != JPEG_APP0 + 1 || m->data_length <= sizeof prefix) continue;
        if (memcmp(m->data, prefix, sizeof prefix) != 0) continue;
        unsigned int length = m->data_length - sizeof prefix;
        dec->exif = malloc(length);
        if (!dec->exif) return; // EXIF is optional: without memory for it, the picture still decodes
        memcpy(dec->exif, m->data + sizeof prefix, length);
        dec->exifLength = length;
        return;
    }
}

int CImageShim_jpegDecoderReadHeader(CImageShim_JpegDecoder *dec, int *width, int *height) {
    if (!dec->created) {
        if (!dec->err.message[0]) snprintf(dec->err.message, sizeof dec->err.message, "cannot create decoder");
        return -1;
    }
    if (setjmp(dec->err.jump)) return -1;
    if (dec->size == 0) {
        snprintf(dec->err.message, sizeof dec->err.message, "empty file");
        return -1;
    }
    jpeg_mem_src(&dec->cinfo, dec->data, (unsigned long)dec->size);
    jpeg_save_markers(&dec->cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_save_markers(&dec->cinfo, JPEG_APP0 + 2, 0xFFFF);
    jpeg_read_header(&dec->cinfo, TRUE);
    JOCTET *icc = NULL;
    unsigned int length = 0;
    if (jpeg_read_icc_profile(&dec->cinfo, &icc, &length)) {
        dec->icc = icc;
        dec->iccLength = length;
    }
    shimKeepExif(dec);
    *width = (int)dec->cinfo.image_width;
    *height = (int)dec->cinfo.image_height;
    return 0;
}

const unsigned char *CImageShim_jpegDecoderICC(const CImageShim_JpegDecoder *dec, unsigned int *length) {
    *length = dec->iccLength;
    return dec->icc;
}

const unsigned char *CImageShim_jpegDecoderExif(const CImageShim_JpegDecoder *dec, unsigned int *length) {
    *length = dec->exifLength;
    return dec->exif;
}

int CImageShim_jpegDecoderStart(CImageShim_JpegDecoder *dec, size_t maxMemory) {
    if (setjmp(dec->err.jump)) return -1;
    // Without backing store (libjpeg-turbo has none), whole-image arrays beyond this fail
    // with "Backing store not supported" instead of being allocated.
    dec->cinfo.mem->max_memory_to_use = (long)(maxMemory > LONG_MAX ? LONG_MAX : maxMemory);
    dec->cinfo.out_color_space = JCS_RGB; // greyscale and YCbCr expand to RGB; CMYK is rejected by libjpeg
    jpeg_start_decompress(&dec->cinfo);
    if (dec->cinfo.output_components != 3) {
        snprintf(dec->err.message, sizeof dec->err.message, "unsupported colour space with %d components",
                 dec->cinfo.output_components);
        return -1;
    }
    return 0;
}

int CImageShim_jpegDecoderReadRGB(CImageShim_JpegDecoder *dec, unsigned char *out, int orientation) {
    if (setjmp(dec->err.jump)) return -1;
    const ptrdiff_t W = dec->cinfo.output_width, H = dec->cinfo.output_height;
    if (orientation < 1 || orientation > 8) orientation = 1;
    const ptrdiff_t outWidth = orientation >= 5 ? H : W; // EXIF 5...8 swap the axes
    // Other orientations decode each row into `row` (freed with the image pool) and scatter it:
    // stored pixel (sx, sy) goes to out + base + sx * step.
    JSAMPARRAY row = orientation == 1 ? NULL
        : (*dec->cinfo.mem->alloc_sarray)((j_common_ptr)&dec->cinfo, JPOOL_IMAGE, (JDIMENSION)(W * 3), 1);
    while (dec->cinfo.output_scanline < dec->cinfo.output_height) {
        const ptrdiff_t sy = dec->cinfo.output_scanline;
        if (!row) {
            JSAMPROW target = out + sy * W * 3;
            jpeg_read_scanlines(&dec->cinfo, &target, 1);
            continue;
        }
        jpeg_read_scanlines(&dec->cinfo, row, 1);
        ptrdiff_t base = 0, step = 0; // in pixels
        switch (orientation) {
        case 2: base = sy * outWidth + W - 1; step = -1; break;                // mirrored left↔right
        case 3: base = (H - 1 - sy) * outWidth + W - 1; step = -1; break;      // turned 180°
        case 4: base = (H - 1 - sy) * outWidth; step = 1; break;               // mirrored top↔bottom
        case 5: base = sy; step = outWidth; break;                             // transposed
        case 6: base = H - 1 - sy; step = outWidth; break;                     // turn 90° clockwise
        case 7: base = (W - 1) * outWidth + H - 1 - sy; step = -outWidth; break; // transverse
        default: base = (W - 1) * outWidth + sy; step = -outWidth; break;      // 8: turn 90° anticlockwise
        }
        const unsigned char *src = row[0];
        for (ptrdiff_t sx = 0; sx < W; sx++) {
            unsigned char *dst = out + (base + sx * step) * 3;
            dst[0] = src[3 * sx];
            dst[1] = src[3 * sx + 1];
            dst[2] = src[3 * sx + 2];
        }
    }
    jpeg_finish_decompress(&dec->cinfo);
    return 0;
}

const char *CImageShim_jpegDecoderMessage(const CImageShim_JpegDecoder *dec) { return dec->err.message; }
int CImageShim_jpegDecoderCode(const CImageShim_JpegDecoder *dec) { return dec->err.code; }

void CImageShim_jpegDecoderDestroy(CImageShim_JpegDecoder *dec) {
    if (!dec) return;
    if (dec->created) jpeg_destroy_decompress(&dec->cinfo);
    free(dec->icc);
    free(dec->exif);
    free(dec);
}

struct CImageShim_JpegEncoder {
    struct jpeg_compress_struct cinfo;
    ShimError err;
    int created;
    unsigned char *output;
    unsigned long outputLength;
};

CImageShim_JpegEncoder *CImageShim_jpegEncoderCreate(void) {
    CImageShim_JpegEncoder *enc = calloc(1, sizeof(*enc));
    if (!enc) return NULL;
    shimInitError(&enc->err);
    enc->cinfo.err = &enc->err.pub;
    if (setjmp(enc->err.jump)) return enc;
    jpeg_create_compress(&enc->cinfo);
    enc->created = 1;
    return enc;
}

int CImageShim_jpegEncodeStart(CImageShim_JpegEncoder *enc, int width, int height, int quality,
                               const unsigned char *app1, unsigned int app1Length,
                               const unsigned char *icc, unsigned int iccLength) {
    if (!enc->created) {
        if (!enc->err.message[0]) snprintf(enc->err.message, sizeof enc->err.message, "cannot create encoder");
        return -1;
    }
    if (setjmp(enc->err.jump)) return -1;
    // The destination manager reallocates enc->output as it grows; we free it in Destroy.
    jpeg_mem_dest(&enc->cinfo, &enc->output, &enc->outputLength);
    enc->cinfo.image_width = (JDIMENSION)width;
    enc->cinfo.image_height = (JDIMENSION)height;
    enc->cinfo.input_components = 3;
    enc->cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&enc->cinfo);
    jpeg_set_quality(&enc->cinfo, quality, TRUE);
    if (app1) enc->cinfo.write_JFIF_header = FALSE; // EXIF's APP1 should follow SOI directly
    jpeg_start_compress(&enc->cinfo, TRUE);
    if (app1) jpeg_write_marker(&enc->cinfo, JPEG_APP0 + 1, app1, app1Length);
    if (icc) jpeg_write_icc_profile(&enc->cinfo, icc, iccLength);  // APP2 ICC_PROFILE chunks
    return 0;
}

int CImageShim_jpegEncodeRows(CImageShim_JpegEncoder *enc, const unsigned char *rgb, int rows, size_t rowStride) {
    if (setjmp(enc->err.jump)) return -1;
    for (int r = 0; r < rows && enc->cinfo.next_scanline < enc->cinfo.image_height; r++) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)r * rowStride);
        jpeg_write_scanlines(&enc->cinfo, &row, 1);
    }
    return 0;
}

int CImageShim_jpegEncodeFinish(CImageShim_JpegEncoder *enc) {
    if (setjmp(enc->err.jump)) return -1;
    if (enc->cinfo.next_scanline < enc->cinfo.image_height) {
        snprintf(enc->err.message, sizeof enc->err.message, "only %u of %u rows were given",
                 (unsigned)enc->cinfo.next_scanline, (unsigned)enc->cinfo.image_height);
        return -1;
    }
    jpeg_finish_compress(&enc->cinfo);
    return 0;
}

const unsigned char *CImageShim_jpegEncoderOutput(const CImageShim_JpegEncoder *enc, size_t *length) {
    *length = (size_t)enc->outputLength;
    return enc->output;
}
const char *CImageShim_jpegEncoderMessage(const CImageShim_JpegEncoder *enc) { return enc->err.message; }
int CImageShim_jpegEncoderCode(const CImageShim_JpegEncoder *enc) { return enc->err.code; }

void CImageShim_jpegEncoderDestroy(CImageShim_JpegEncoder *enc) {
    if (!enc) return;
    if (enc->created) jpeg_destroy_compress(&enc->cinfo);
    free(enc->output);
    free(enc);
}
