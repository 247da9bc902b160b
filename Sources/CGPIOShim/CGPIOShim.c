// One C ABI over libgpiod 1.6 and 2.x; see include/CGPIOShim.h.
// Selection: `GPIOD_LINE_BULK_MAX_LINES` is a macro only libgpiod 1.x's gpiod.h defines.
#define _GNU_SOURCE
#include "CGPIOShim.h"
#include <gpiod.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define CGPIOSHIM_V1 1
#else
#define CGPIOSHIM_V1 0
#endif

static int neg_errno(void) { return errno > 0 ? -errno : -EIO; }

static void copy_str(char *dst, size_t len, const char *src) {
    if (!dst || len == 0) return;
    snprintf(dst, len, "%s", src ? src : "");
}

int CGPIOShim_api_version(void) { return CGPIOSHIM_V1 ? 1 : 2; }

// MARK: chip lookup, common to both (libgpiod 2.x opens only paths)

static struct gpiod_chip *open_path(const char *path) {
#if CGPIOSHIM_V1
    return gpiod_chip_open(path);
#else
    return gpiod_chip_open(path);
#endif
}

// The chip's label into buf; 0 or -errno.
static int chip_label(struct gpiod_chip *chip, char *buf, size_t len) {
#if CGPIOSHIM_V1
    copy_str(buf, len, gpiod_chip_label(chip));
    return 0;
#else
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    if (!info) return neg_errno();
    copy_str(buf, len, gpiod_chip_info_get_label(info));
    gpiod_chip_info_free(info);
    return 0;
#endif
}

static unsigned int chip_num_lines(struct gpiod_chip *chip) {
#if CGPIOSHIM_V1
    return gpiod_chip_num_lines(chip);
#else
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    if (!info) return 0;
    unsigned int n = (unsigned int)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
    return n;
#endif
}

static int is_chip_entry(const char *name) { return strncmp(name, "gpiochip", 8) == 0; }

// Opens by path, by /dev name, or by label (scanning /dev/gpiochip*); path_out gets the path.
static struct gpiod_chip *open_chip(const char *descr, char *path_out, size_t path_len) {
    if (!descr || !*descr) { errno = EINVAL; return NULL; }
    char path[256];
    if (strchr(descr, '/')) {
        copy_str(path, sizeof path, descr);
    } else {
        snprintf(path, sizeof path, "/dev/%s", descr);
    }
    if (strchr(descr, '/') || is_chip_entry(descr)) {
        struct gpiod_chip *chip = open_path(path);
        if (chip) { copy_str(path_out, path_len, path); return chip; }
        if (strchr(descr, '/')) return NULL;
    }
    DIR *dir = opendir("/dev");
    if (!dir) return NULL;
    struct dirent *entry;
    int saved = ENOENT;
    while ((entry = readdir(dir))) {
        if (!is_chip_entry(entry->d_name)) continue;
        snprintf(path, sizeof path, "/dev/%s", entry->d_name);
        struct gpiod_chip *chip = open_path(path);
        if (!chip) { if (errno == EACCES) saved = EACCES; continue; }
        char label[128];
        if (chip_label(chip, label, sizeof label) == 0 && strcmp(label, descr) == 0) {
            closedir(dir);
            copy_str(path_out, path_len, path);
            return chip;
        }
        gpiod_chip_close(chip);
    }
    closedir(dir);
    errno = saved;
    return NULL;
}

static void close_chip(struct gpiod_chip *chip) { if (chip) gpiod_chip_close(chip); }

int CGPIOShim_chip_info(const char *descr, char *path, size_t path_len, char *label, size_t label_len,
                        unsigned int *num_lines) {
    struct gpiod_chip *chip = open_chip(descr, path, path_len);
    if (!chip) return neg_errno();
    int r = chip_label(chip, label, label_len);
    if (num_lines) *num_lines = chip_num_lines(chip);
    close_chip(chip);
    return r;
}

int CGPIOShim_find_line(const char *name, char *path_out, size_t path_len, unsigned int *offset) {
    DIR *dir = opendir("/dev");
    if (!dir) return neg_errno();
    struct dirent *entry;
    int found = -ENOENT;
    while (found != 0 && (entry = readdir(dir))) {
        if (!is_chip_entry(entry->d_name)) continue;
        char path[256];
        snprintf(path, sizeof path, "/dev/%s", entry->d_name);
        struct gpiod_chip *chip = open_path(path);
        if (!chip) continue;
#if CGPIOSHIM_V1
        struct gpiod_line *line = gpiod_chip_find_line(chip, name);
        if (line) {
            if (offset) *offset = gpiod_line_offset(line);
            copy_str(path_out, path_len, path);
            found = 0;
        }
#else
        int o = gpiod_chip_get_line_offset_from_name(chip, name);
        if (o >= 0) {
            if (offset) *offset = (unsigned int)o;
            copy_str(path_out, path_len, path);
            found = 0;
        }
#endif
        gpiod_chip_close(chip);
    }
    closedir(dir);
    return found;
}

int CGPIOShim_line_info(const char *descr, unsigned int offset, int *used, char *consumer, size_t consumer_len,
                        char *name, size_t name_len) {
    struct gpiod_chip *chip = open_chip(descr, NULL, 0);
    if (!chip) return neg_errno();
    if (offset >= chip_num_lines(chip)) {
        close_chip(chip);
        return -ERANGE;
    }
    int r = 0;
#if CGPIOSHIM_V1
    struct gpiod_line *line = gpiod_chip_get_line(chip, offset);  // owned by the chip
    if (!line || gpiod_line_update(line) < 0) {
        r = neg_errno();
    } else {
        if (used) *used = gpiod_line_is_used(line) ? 1 : 0;
        copy_str(consumer, consumer_len, gpiod_line_consumer(line) ? gpiod_line_consumer(line) : "");
        copy_str(name, name_len, gpiod_line_name(line) ? gpiod_line_name(line) : "");
    }
#else
    struct gpiod_line_info *info = gpiod_chip_get_line_info(chip, offset);
    if (!info) {
        r = neg_errno();
    } else {
        if (used) *used = gpiod_line_info_is_used(info) ? 1 : 0;
        const char *c = gpiod_line_info_get_consumer(info), *n = gpiod_line_info_get_name(info);
        copy_str(consumer, consumer_len, c ? c : "");
        copy_str(name, name_len, n ? n : "");
        gpiod_line_info_free(info);
    }
#endif
    close_chip(chip);
    return r;
}

// MARK: requests

#if CGPIOSHIM_V1
struct CGPIOShim_request {
    struct gpiod_chip *chip;
    struct gpiod_line_bulk bulk;
    unsigned int n;
    unsigned int offsets[CGPIOShim_MAX_LINES];
    int epfd;  // every line has its own event fd in the v1 uAPI: one epoll fd gathers them
};

#else
struct CGPIOShim_request {
    struct gpiod_chip *chip;
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *events;
    unsigned int n;
    unsigned int offsets[CGPIOShim_MAX_LINES];
};

#endif

// A new request of `n` lines of chip `descr`: the chip open, the offsets checked against its
// lines. NULL with *err (-errno) otherwise. The caller requests the lines; CGPIOShim_release frees it.
static CGPIOShim_request *start_request(const char *descr, const unsigned int *offsets, size_t n, int *err) {
    if (!offsets || n == 0 || n > CGPIOShim_MAX_LINES) { *err = -EINVAL; return NULL; }
    CGPIOShim_request *r = calloc(1, sizeof *r);
    if (!r) { *err = -ENOMEM; return NULL; }
#if CGPIOSHIM_V1
    r->epfd = -1;
#endif
    r->n = (unsigned int)n;
    memcpy(r->offsets, offsets, n * sizeof *offsets);
    r->chip = open_chip(descr, NULL, 0);
    if (!r->chip) { *err = neg_errno(); CGPIOShim_release(r); return NULL; }
    unsigned int lines = chip_num_lines(r->chip);
    for (size_t i = 0; i < n; i++) {
        if (offsets[i] >= lines) { *err = -ERANGE; CGPIOShim_release(r); return NULL; }
    }
    return r;
}

#if CGPIOSHIM_V1

int CGPIOShim_request_lines(const char *descr, const char *consumer, const unsigned int *offsets, size_t n,
                            const unsigned int *debounce_us, CGPIOShim_request **out) {
    (void)debounce_us;  // libgpiod 1.x cannot set a kernel debounce period: debounced in Swift
    if (!out) return -EINVAL;
    *out = NULL;
    int flags = 0, err;
    CGPIOShim_request *r = start_request(descr, offsets, n, &err);
    if (!r) return err;
    if (gpiod_chip_get_lines(r->chip, r->offsets, r->n, &r->bulk) < 0) { err = neg_errno(); goto fail; }
    struct gpiod_line_request_config config = {
        .consumer = consumer ? consumer : "loopix",
        .request_type = GPIOD_LINE_REQUEST_EVENT_BOTH_EDGES,
        .flags = GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP,  // needs libgpiod >= 1.5 and kernel >= 5.5
    };
    if (gpiod_line_request_bulk(&r->bulk, &config, NULL) < 0) {
        if (errno != EINVAL && errno != ENOTSUP && errno != EOPNOTSUPP) { err = neg_errno(); goto fail; }
        config.flags = 0;  // an older kernel refuses bias flags: request without, say so
        flags |= CGPIOShim_FLAG_NO_BIAS;
        if (gpiod_line_request_bulk(&r->bulk, &config, NULL) < 0) { err = neg_errno(); goto fail; }
    }
    r->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (r->epfd < 0) { err = neg_errno(); goto fail; }
    for (unsigned int i = 0; i < r->n; i++) {
        int fd = gpiod_line_event_get_fd(gpiod_line_bulk_get_line(&r->bulk, i));
        struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };
        if (fd < 0 || epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) { err = neg_errno(); goto fail; }
    }
    *out = r;
    return flags;
fail:
    CGPIOShim_release(r);
    return err;
}

int CGPIOShim_fd(CGPIOShim_request *r) { return r ? r->epfd : -EINVAL; }

int CGPIOShim_read_events(CGPIOShim_request *r, CGPIOShim_event *buffer, size_t capacity) {
    if (!r || !buffer) return -EINVAL;
    struct epoll_event ready[CGPIOShim_MAX_LINES];
    int k = epoll_wait(r->epfd, ready, CGPIOShim_MAX_LINES, 0);
    if (k < 0) return errno == EINTR ? 0 : neg_errno();
    size_t count = 0;
    for (int j = 0; j < k && count < capacity; j++) {
        unsigned int i = ready[j].data.u32;
        if (ready[j].events & (EPOLLERR | EPOLLHUP)) return -ENODEV;
        struct gpiod_line *line = gpiod_line_bulk_get_line(&r->bulk, i);
        struct gpiod_line_event events[16];
        unsigned int want = (unsigned int)(capacity - count < 16 ? capacity - count : 16);
        int got = gpiod_line_event_read_multiple(line, events, want);
        if (got < 0) return errno == EAGAIN ? (int)count : neg_errno();
        for (int e = 0; e < got; e++) {
            CGPIOShim_event *out = &buffer[count++];
            out->offset = r->offsets[i];
            out->rising = events[e].event_type == GPIOD_LINE_EVENT_RISING_EDGE;
            out->timestamp_ns = (uint64_t)events[e].ts.tv_sec * 1000000000ull + (uint64_t)events[e].ts.tv_nsec;
            out->line_seqno = 0;  // the v1 uAPI's gpioevent_data has no sequence number
        }
    }
    // Each line has its own kernel FIFO: merge them into time order (insertion sort, small n).
    for (size_t a = 1; a < count; a++) {
        CGPIOShim_event e = buffer[a];
        size_t b = a;
        while (b > 0 && buffer[b - 1].timestamp_ns > e.timestamp_ns) { buffer[b] = buffer[b - 1]; b--; }
        buffer[b] = e;
    }
    return (int)count;
}

int CGPIOShim_get_values(CGPIOShim_request *r, int *values) {
    if (!r || !values) return -EINVAL;
    return gpiod_line_get_value_bulk(&r->bulk, values) < 0 ? neg_errno() : 0;
}

int CGPIOShim_request_outputs(const char *descr, const char *consumer, const unsigned int *offsets, size_t n,
                              const int *initial, CGPIOShim_request **out) {
    if (!out) return -EINVAL;
    *out = NULL;
    int err, values[CGPIOShim_MAX_LINES] = {0};
    CGPIOShim_request *r = start_request(descr, offsets, n, &err);
    if (!r) return err;
    for (size_t i = 0; initial && i < n; i++) values[i] = initial[i] ? 1 : 0;
    if (gpiod_chip_get_lines(r->chip, r->offsets, r->n, &r->bulk) < 0) { err = neg_errno(); goto fail; }
    struct gpiod_line_request_config config = {
        .consumer = consumer ? consumer : "loopix",
        .request_type = GPIOD_LINE_REQUEST_DIRECTION_OUTPUT,
    };
    if (gpiod_line_request_bulk(&r->bulk, &config, values) < 0) { err = neg_errno(); goto fail; }
    *out = r;
    return 0;
fail:
    CGPIOShim_release(r);
    return err;
}

int CGPIOShim_set_values(CGPIOShim_request *r, const int *values) {
    if (!r || !values) return -EINVAL;
    int v[CGPIOShim_MAX_LINES];
    for (unsigned int i = 0; i < r->n; i++) v[i] = values[i] ? 1 : 0;
    return gpiod_line_set_value_bulk(&r->bulk, v) < 0 ? neg_errno() : 0;
}

void CGPIOShim_release(CGPIOShim_request *r) {
    if (!r) return;
    if (r->epfd >= 0) close(r->epfd);
    if (r->chip) {
        if (r->bulk.num_lines > 0 && gpiod_line_is_requested(gpiod_line_bulk_get_line(&r->bulk, 0)))
            gpiod_line_release_bulk(&r->bulk);
        gpiod_chip_close(r->chip);
    }
    free(r);
}

#else  // libgpiod 2.x

int CGPIOShim_request_lines(const char *descr, const char *consumer, const unsigned int *offsets, size_t n,
                            const unsigned int *debounce_us, CGPIOShim_request **out) {
    if (!out) return -EINVAL;
    *out = NULL;
    int err = 0;
    CGPIOShim_request *r = start_request(descr, offsets, n, &err);
    if (!r) return err;
    struct gpiod_line_config *lines = NULL;
    struct gpiod_request_config *rc = NULL;
    lines = gpiod_line_config_new();
    rc = gpiod_request_config_new();
    r->events = gpiod_edge_event_buffer_new(256);
    if (!lines || !rc || !r->events) { err = -ENOMEM; goto done; }
    for (size_t i = 0; i < n; i++) {
        struct gpiod_line_settings *s = gpiod_line_settings_new();
        if (!s) { err = -ENOMEM; goto done; }
        int bad = gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_INPUT) < 0
               || gpiod_line_settings_set_edge_detection(s, GPIOD_LINE_EDGE_BOTH) < 0
               || gpiod_line_settings_set_bias(s, GPIOD_LINE_BIAS_PULL_UP) < 0
               || gpiod_line_settings_set_event_clock(s, GPIOD_LINE_CLOCK_MONOTONIC) < 0;
        if (!bad && debounce_us) gpiod_line_settings_set_debounce_period_us(s, debounce_us[i]);
        if (!bad) bad = gpiod_line_config_add_line_settings(lines, &r->offsets[i], 1, s) < 0;
        gpiod_line_settings_free(s);
        if (bad) { err = neg_errno(); goto done; }
    }
    gpiod_request_config_set_consumer(rc, consumer ? consumer : "loopix");
    /* The kernel's largest queue (16 per line x 64 lines): at 12 edges a detent with bounce, a
     * reader the system stalls for a while still gets every edge (the default is 16 per line). */
    gpiod_request_config_set_event_buffer_size(rc, 1024);
    r->request = gpiod_chip_request_lines(r->chip, rc, lines);
    if (!r->request) err = neg_errno();
done:
    if (lines) gpiod_line_config_free(lines);
    if (rc) gpiod_request_config_free(rc);
    if (err) { CGPIOShim_release(r); return err; }
    *out = r;
    return (debounce_us ? CGPIOShim_FLAG_KERNEL_DEBOUNCE : 0) | CGPIOShim_FLAG_SEQNO;
}

int CGPIOShim_fd(CGPIOShim_request *r) { return r && r->request ? gpiod_line_request_get_fd(r->request) : -EINVAL; }

int CGPIOShim_read_events(CGPIOShim_request *r, CGPIOShim_event *buffer, size_t capacity) {
    if (!r || !buffer) return -EINVAL;
    int waiting = gpiod_line_request_wait_edge_events(r->request, 0);
    if (waiting < 0) return errno == EINTR ? 0 : neg_errno();
    if (waiting == 0 || capacity == 0) return 0;
    size_t want = capacity < 256 ? capacity : 256;
    int got = gpiod_line_request_read_edge_events(r->request, r->events, want);
    if (got < 0) return errno == EAGAIN ? 0 : neg_errno();
    for (int i = 0; i < got; i++) {
        struct gpiod_edge_event *e = gpiod_edge_event_buffer_get_event(r->events, (unsigned long)i);
        buffer[i].offset = gpiod_edge_event_get_line_offset(e);
        buffer[i].rising = gpiod_edge_event_get_event_type(e) == GPIOD_EDGE_EVENT_RISING_EDGE;
        buffer[i].timestamp_ns = gpiod_edge_event_get_timestamp_ns(e);
        buffer[i].line_seqno = gpiod_edge_event_get_line_seqno(e);
    }
    return got;
}

int CGPIOShim_get_values(CGPIOShim_request *r, int *values) {
    if (!r || !values) return -EINVAL;
    enum gpiod_line_value v[CGPIOShim_MAX_LINES];
    if (gpiod_line_request_get_values(r->request, v) < 0) return neg_errno();
    for (unsigned int i = 0; i < r->n; i++) values[i] = v[i] == GPIOD_LINE_VALUE_ACTIVE;
    return 0;
}

int CGPIOShim_request_outputs(const char *descr, const char *consumer, const unsigned int *offsets, size_t n,
                              const int *initial, CGPIOShim_request **out) {
    if (!out) return -EINVAL;
    *out = NULL;
    int err = 0;
    CGPIOShim_request *r = start_request(descr, offsets, n, &err);
    if (!r) return err;
    struct gpiod_line_config *lines = NULL;
    struct gpiod_request_config *rc = NULL;
    lines = gpiod_line_config_new();
    rc = gpiod_request_config_new();
    if (!lines || !rc) { err = -ENOMEM; goto done; }
    for (size_t i = 0; i < n; i++) {
        struct gpiod_line_settings *s = gpiod_line_settings_new();
        if (!s) { err = -ENOMEM; goto done; }
        int high = initial && initial[i];
        int bad = gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_OUTPUT) < 0
               || gpiod_line_settings_set_output_value(s, high ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE) < 0
               || gpiod_line_config_add_line_settings(lines, &r->offsets[i], 1, s) < 0;
        gpiod_line_settings_free(s);
        if (bad) { err = neg_errno(); goto done; }
    }
    gpiod_request_config_set_consumer(rc, consumer ? consumer : "loopix");
    r->request = gpiod_chip_request_lines(r->chip, rc, lines);
    if (!r->request) err = neg_errno();
done:
    if (lines) gpiod_line_config_free(lines);
    if (rc) gpiod_request_config_free(rc);
    if (err) { CGPIOShim_release(r); return err; }
    *out = r;
    return 0;
}

int CGPIOShim_set_values(CGPIOShim_request *r, const int *values) {
    if (!r || !r->request || !values) return -EINVAL;
    enum gpiod_line_value v[CGPIOShim_MAX_LINES];
    for (unsigned int i = 0; i < r->n; i++) v[i] = values[i] ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE;
    return gpiod_line_request_set_values(r->request, v) < 0 ? neg_errno() : 0;
}

void CGPIOShim_release(CGPIOShim_request *r) {
    if (!r) return;
    if (r->request) gpiod_line_request_release(r->request);
    if (r->events) gpiod_edge_event_buffer_free(r->events);
    close_chip(r->chip);
    free(r);
}

#endif
