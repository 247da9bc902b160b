// libtiff's calls that Swift cannot make (TIFFSetField and TIFFGetField are variadic, their
// arguments' shape depending on the tag), a TIFF written into memory (so the file can be put
// in place atomically by the caller), and libtiff's messages kept instead of printed.
#ifndef LOOPIX_TIFF_SHIM_H
#define LOOPIX_TIFF_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <tiffio.h>

// A growable buffer libtiff writes into and seeks in. Owned by the caller: zero it, open with
// loopix_tiff_open_buffer, TIFFClose, take `data[0..<size]`, then loopix_tiff_buffer_free.
typedef struct loopix_tiff_buffer {
    uint8_t *data;
    size_t size, capacity, offset;
    int failed;  // an allocation failed: the TIFF is incomplete
} loopix_tiff_buffer;

// `expected`: the bytes the file will take about (a 12 MP negative's 24 MB), allocated at once so
// the buffer does not grow by copies; 0 for none.
TIFF *loopix_tiff_open_buffer(loopix_tiff_buffer *buffer, const char *name, size_t expected);
void loopix_tiff_buffer_free(loopix_tiff_buffer *buffer);

// Installs handlers that keep libtiff's last error (and drop its warnings) for this thread.
void loopix_tiff_keep_messages(void);
// The last error libtiff reported on this thread ("" when none), and clears it.
const char *loopix_tiff_last_error(void);

int loopix_tiff_set_ascii(TIFF *tif, uint32_t tag, const char *value);
int loopix_tiff_set_short(TIFF *tif, uint32_t tag, uint16_t value);
int loopix_tiff_set_long(TIFF *tif, uint32_t tag, uint32_t value);
// An array tag: `values` point at `count` elements of the tag's in-memory type (uint8_t for
// BYTE, uint16_t for SHORT, uint32_t for LONG, float for RATIONAL/SRATIONAL/FLOAT); the count
// is passed as the tag wants it (none for a fixed count, uint16 or uint32).
int loopix_tiff_set_array(TIFF *tif, uint32_t tag, uint32_t count, const void *values);
// An array tag's elements: 1 and `*count`, `*values` (owned by libtiff) when present.
int loopix_tiff_get_array(TIFF *tif, uint32_t tag, uint32_t *count, const void **values);
int loopix_tiff_get_long(TIFF *tif, uint32_t tag, uint32_t *value);

// How a photo was exposed, for an EXIF IFD; a zero or NULL leaves that tag out.
typedef struct loopix_tiff_exif {
    double exposure_time;        // seconds
    uint16_t iso;
    double focal_length;         // mm
    uint16_t focal_length_35mm;
    const char *date_time_original;  // "YYYY:MM:DD HH:MM:SS"
    const char *lens_model;
} loopix_tiff_exif;

// Finishes the main directory (its image written), writes an EXIF IFD with `exif` and points
// the main directory's ExifIFD tag at it (libtiff's order: main IFD, EXIF IFD, main IFD again).
int loopix_tiff_finish_with_exif(TIFF *tif, const loopix_tiff_exif *exif);

#endif
