#ifndef CGPIOSHIM_H
#define CGPIOSHIM_H
/// One C ABI over libgpiod 1.6 (Debian 12, Raspberry Pi OS bookworm) and libgpiod 2.x
/// (Debian 13, trixie), chosen at compile time in CGPIOShim.c: libgpiod 1.x defines the macro
/// `GPIOD_LINE_BULK_MAX_LINES` (gpiod.h, the size of a `struct gpiod_line_bulk`), 2.x does not
/// (it has no bulk objects; it has `struct gpiod_line_settings` instead).
///
/// Every symbol carries the `CGPIOShim_` prefix. Functions returning int return a negative
/// errno on failure. Swift sees only this header, never gpiod.h.
#include <stddef.h>
#include <stdint.h>

/// Most lines one request may hold.
#define CGPIOShim_MAX_LINES 64

/// An opaque request of input lines with edge events. One owner; free with CGPIOShim_release.
typedef struct CGPIOShim_request CGPIOShim_request;

/// One edge event.
typedef struct {
    /// The line's offset on its chip.
    unsigned int offset;
    /// 1: rising edge (line went high, a pulled-up button released); 0: falling edge.
    int rising;
    /// When it happened, in nanoseconds on CLOCK_MONOTONIC (kernel timestamp).
    uint64_t timestamp_ns;
    /// The kernel's per-line sequence number (libgpiod 2.x; 0 when unknown, as with 1.x).
    uint64_t line_seqno;
} CGPIOShim_event;

/// Request flags returned by CGPIOShim_request_lines (a non-negative int).
#define CGPIOShim_FLAG_KERNEL_DEBOUNCE 1  /* the kernel debounces (libgpiod 2.x) */
#define CGPIOShim_FLAG_NO_BIAS 2          /* pull-up refused (kernel < 5.5): use external pull-ups */
#define CGPIOShim_FLAG_SEQNO 4            /* events carry line_seqno (lost events detectable) */

/// 1 or 2: the libgpiod major version this was built against.
int CGPIOShim_api_version(void);

/// Opens the chip named by `descr` — a path (/dev/gpiochip0), a name (gpiochip4) or a label
/// (pinctrl-rp1, pinctrl-bcm2835) — and reports its path (gpiochipN under /dev), label and
/// line count. Buffers may be NULL. 0 or -errno (ENOENT: no such chip).
int CGPIOShim_chip_info(const char *descr, char *path, size_t path_len, char *label, size_t label_len,
                        unsigned int *num_lines);

/// Finds the line named `name` on any chip: its chip's path (/dev/gpiochipN) and offset.
/// 0 or -errno (ENOENT: no line has that name).
int CGPIOShim_find_line(const char *name, char *path, size_t path_len, unsigned int *offset);

/// What the kernel says about line `offset` of chip `descr`, without requesting it: whether
/// it is in use (by any process, or a kernel driver) and by which consumer ("" when unnamed),
/// and the line's name ("" when none). Buffers may be NULL. 0 or -errno (ERANGE: no such line).
int CGPIOShim_line_info(const char *descr, unsigned int offset, int *used, char *consumer, size_t consumer_len,
                        char *name, size_t name_len);

/// Requests `n` lines (at most CGPIOShim_MAX_LINES) of chip `descr` as inputs with pull-up
/// bias and edge events both ways. `debounce_us` (NULL: none) gives each line a kernel
/// debounce period where libgpiod 2.x can set one. On success stores the request in *out and
/// returns the CGPIOShim_FLAG_ bits; -errno otherwise (ERANGE: an offset beyond the chip's lines).
int CGPIOShim_request_lines(const char *descr, const char *consumer, const unsigned int *offsets, size_t n,
                            const unsigned int *debounce_us, CGPIOShim_request **out);

/// An fd that polls readable (POLLIN) when events are waiting. Owned by the request.
int CGPIOShim_fd(CGPIOShim_request *request);

/// Reads the waiting events, without blocking, into `buffer` (at most `capacity`), in time
/// order. Returns how many (0: none waiting) or -errno (ENODEV: the chip is gone).
int CGPIOShim_read_events(CGPIOShim_request *request, CGPIOShim_event *buffer, size_t capacity);

/// The lines' current levels (0/1), in request order, into `values` (n ints). 0 or -errno.
int CGPIOShim_get_values(CGPIOShim_request *request, int *values);

/// Requests `n` lines of chip `descr` as push-pull outputs driven to `initial` (n ints, 0/1;
/// NULL: all low) — a flash or a ring light's switch. Stores the request in *out; 0 or -errno.
/// Events and CGPIOShim_fd do not apply to it.
int CGPIOShim_request_outputs(const char *descr, const char *consumer, const unsigned int *offsets, size_t n,
                              const int *initial, CGPIOShim_request **out);

/// Drives a request's output lines to `values` (n ints, 0/1, in request order). 0 or -errno.
int CGPIOShim_set_values(CGPIOShim_request *request, const int *values);

/// Releases the lines and closes the chip. NULL is fine.
void CGPIOShim_release(CGPIOShim_request *request);

#endif
