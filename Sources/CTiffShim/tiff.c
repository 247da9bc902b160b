#include "CTiffShim.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tmsize_t buffer_read(thandle_t h, void *data, tmsize_t n) {
    loopix_tiff_buffer *b = (loopix_tiff_buffer *)h;
    if (b->offset >= b->size) return 0;
    size_t left = b->size - b->offset, take = (size_t)n < left ? (size_t)n : left;
    memcpy(data, b->data + b->offset, take);
    b->offset += take;
    return (tmsize_t)take;
}

static tmsize_t buffer_write(thandle_t h, void *data, tmsize_t n) {
    loopix_tiff_buffer *b = (loopix_tiff_buffer *)h;
    size_t end = b->offset + (size_t)n;
    if (end > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 1 << 16;
        while (capacity < end) capacity *= 2;
        uint8_t *grown = realloc(b->data, capacity);
        if (!grown) { b->failed = 1; return -1; }
        b->data = grown;
        b->capacity = capacity;
    }
    if (b->offset > b->size) memset(b->data + b->size, 0, b->offset - b->size);
    memcpy(b->data + b->offset, data, (size_t)n);
    b->offset = end;
    if (end > b->size) b->size = end;
    return n;
}

static toff_t buffer_seek(thandle_t h, toff_t offset, int whence) {
    loopix_tiff_buffer *b = (loopix_tiff_buffer *)h;
    int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (int64_t)b->offset : (int64_t)b->size;
    int64_t to = base + (int64_t)offset;
    if (to < 0) return (toff_t)-1;
    b->offset = (size_t)to;
    return (toff_t)to;
}

static int buffer_close(thandle_t h) { (void)h; return 0; }
static toff_t buffer_size(thandle_t h) { return (toff_t)((loopix_tiff_buffer *)h)->size; }
static int buffer_map(thandle_t h, void **base, toff_t *size) { (void)h; (void)base; (void)size; return 0; }
static void buffer_unmap(thandle_t h, void *base, toff_t size) { (void)h; (void)base; (void)size; }

TIFF *loopix_tiff_open_buffer(loopix_tiff_buffer *buffer, const char *name, size_t expected) {
    if (expected > 0 && !buffer->data) {
        buffer->data = malloc(expected);
        if (buffer->data) buffer->capacity = expected;
    }
    return TIFFClientOpen(name, "w", (thandle_t)buffer, buffer_read, buffer_write, buffer_seek, buffer_close,
                          buffer_size, buffer_map, buffer_unmap);
}

void loopix_tiff_buffer_free(loopix_tiff_buffer *buffer) {
    free(buffer->data);
    buffer->data = NULL;
    buffer->size = buffer->capacity = buffer->offset = 0;
}

static _Thread_local char last_error[512];

static void keep_error(const char *module, const char *format, va_list ap) {
    char message[400];
    vsnprintf(message, sizeof message, format, ap);
    snprintf(last_error, sizeof last_error, "%s%s%s", module ? module : "", module ? ": " : "", message);
}

static void drop_warning(const char *module, const char *format, va_list ap) { (void)module; (void)format; (void)ap; }

void loopix_tiff_keep_messages(void) {
    TIFFSetErrorHandler(keep_error);
    TIFFSetWarningHandler(drop_warning);
}

const char *loopix_tiff_last_error(void) {
    static _Thread_local char copy[512];
    memcpy(copy, last_error, sizeof copy);
    last_error[0] = 0;
    return copy;
}

int loopix_tiff_set_ascii(TIFF *tif, uint32_t tag, const char *value) { return TIFFSetField(tif, tag, value); }
int loopix_tiff_set_short(TIFF *tif, uint32_t tag, uint16_t value) { return TIFFSetField(tif, tag, (int)value); }
int loopix_tiff_set_long(TIFF *tif, uint32_t tag, uint32_t value) { return TIFFSetField(tif, tag, value); }

int loopix_tiff_set_array(TIFF *tif, uint32_t tag, uint32_t count, const void *values) {
    const TIFFField *field = TIFFFieldWithTag(tif, tag);
    if (!field) return 0;
    if (!TIFFFieldPassCount(field)) return TIFFSetField(tif, tag, values);
    if (TIFFFieldWriteCount(field) == TIFF_VARIABLE2) return TIFFSetField(tif, tag, count, values);
    return TIFFSetField(tif, tag, (int)count, values);
}

int loopix_tiff_get_array(TIFF *tif, uint32_t tag, uint32_t *count, const void **values) {
    const TIFFField *field = TIFFFieldWithTag(tif, tag);
    if (!field || !TIFFFieldPassCount(field)) return 0;
    if (TIFFFieldReadCount(field) == TIFF_VARIABLE2) return TIFFGetField(tif, tag, count, values);
    uint16_t short_count = 0;
    int ok = TIFFGetField(tif, tag, &short_count, values);
    *count = short_count;
    return ok;
}

int loopix_tiff_get_long(TIFF *tif, uint32_t tag, uint32_t *value) { return TIFFGetField(tif, tag, value); }

int loopix_tiff_finish_with_exif(TIFF *tif, const loopix_tiff_exif *exif) {
    if (!TIFFSetField(tif, TIFFTAG_EXIFIFD, (uint64_t)0)) return 0;
    if (!TIFFWriteDirectory(tif)) return 0;
    if (TIFFCreateEXIFDirectory(tif) != 0) return 0;
    if (exif->exposure_time > 0 && !TIFFSetField(tif, EXIFTAG_EXPOSURETIME, exif->exposure_time)) return 0;
    if (exif->iso > 0) {
        uint16_t iso = exif->iso;
        if (!TIFFSetField(tif, EXIFTAG_ISOSPEEDRATINGS, 1, &iso)) return 0;
    }
    if (exif->focal_length > 0 && !TIFFSetField(tif, EXIFTAG_FOCALLENGTH, exif->focal_length)) return 0;
    if (exif->focal_length_35mm > 0 && !TIFFSetField(tif, EXIFTAG_FOCALLENGTHIN35MMFILM, (int)exif->focal_length_35mm)) return 0;
    if (exif->date_time_original && !TIFFSetField(tif, EXIFTAG_DATETIMEORIGINAL, exif->date_time_original)) return 0;
    if (exif->lens_model && !TIFFSetField(tif, EXIFTAG_LENSMODEL, exif->lens_model)) return 0;
    uint64_t offset = 0;
    if (!TIFFWriteCustomDirectory(tif, &offset)) return 0;
    if (!TIFFSetDirectory(tif, 0)) return 0;
    if (!TIFFSetField(tif, TIFFTAG_EXIFIFD, offset)) return 0;
    return TIFFRewriteDirectory(tif);
}
