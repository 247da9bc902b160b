#define _GNU_SOURCE
#include "CLoopixDRM.h"
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <libdrm/drm.h>
#include <libdrm/drm_mode.h>

static int xioctl(int fd, unsigned long request, void *arg) {
    int r;
    do { r = ioctl(fd, request, arg); } while (r == -1 && (errno == EINTR || errno == EAGAIN));
    return r == -1 ? -errno : 0;
}

int CLoopixDRM_create_dumb(int fd, uint32_t width, uint32_t height, uint32_t bpp,
                           uint32_t *handle, uint32_t *pitch, uint64_t *size) {
    struct drm_mode_create_dumb req;
    memset(&req, 0, sizeof req);
    req.width = width; req.height = height; req.bpp = bpp;
    int r = xioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &req);
    if (r < 0) return r;
    *handle = req.handle; *pitch = req.pitch; *size = req.size;
    return 0;
}

int CLoopixDRM_map_dumb(int fd, uint32_t handle, uint64_t size, void **pixels) {
    struct drm_mode_map_dumb req;
    memset(&req, 0, sizeof req);
    req.handle = handle;
    int r = xioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &req);
    if (r < 0) return r;
    void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)req.offset);
    if (p == MAP_FAILED) return -errno;
    *pixels = p;
    return 0;
}

int CLoopixDRM_unmap(void *pixels, uint64_t size) {
    return munmap(pixels, (size_t)size) == 0 ? 0 : -errno;
}

int CLoopixDRM_destroy_dumb(int fd, uint32_t handle) {
    struct drm_mode_destroy_dumb req;
    memset(&req, 0, sizeof req);
    req.handle = handle;
    return xioctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &req);
}

int CLoopixDRM_atomic_set(int fd, uint32_t object_id, uint32_t property_id, uint64_t value, uint32_t flags) {
    uint32_t objects[1] = { object_id };
    uint32_t counts[1] = { 1 };
    uint32_t properties[1] = { property_id };
    uint64_t values[1] = { value };
    struct drm_mode_atomic req;
    memset(&req, 0, sizeof req);
    req.flags = flags;
    req.count_objs = 1;
    req.objs_ptr = (uint64_t)(uintptr_t)objects;
    req.count_props_ptr = (uint64_t)(uintptr_t)counts;
    req.props_ptr = (uint64_t)(uintptr_t)properties;
    req.prop_values_ptr = (uint64_t)(uintptr_t)values;
    // Not xioctl: EAGAIN/EBUSY here mean "a commit is still pending", not "call again now".
    return ioctl(fd, DRM_IOCTL_MODE_ATOMIC, &req) == -1 ? -errno : 0;
}

int CLoopixDRM_connector_status(int fd, uint32_t connector_id) {
    // count_modes = 1 with room for one mode: the kernel then reports what it knows instead of
    // probing the connector (which count_modes = 0 would ask for).
    struct drm_mode_modeinfo mode;
    struct drm_mode_get_connector req;
    memset(&req, 0, sizeof req);
    memset(&mode, 0, sizeof mode);
    req.connector_id = connector_id;
    req.count_modes = 1;
    req.modes_ptr = (uint64_t)(uintptr_t)&mode;
    int r = xioctl(fd, DRM_IOCTL_MODE_GETCONNECTOR, &req);
    return r < 0 ? r : (int)req.connection;
}

// clock_gettime(CLOCK_MONOTONIC) in microseconds, for the flip wait below.
static int64_t monotonic_usec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int CLoopixDRM_wait_flip(int fd, int timeout_ms, uint64_t *user_data,
                         int64_t *usec, uint32_t *sequence) {
    int64_t deadline = monotonic_usec() + (int64_t)timeout_ms * 1000;
    for (;;) {
        int64_t left = (deadline - monotonic_usec()) / 1000;
        if (left < 0) left = 0;
        struct pollfd p = { .fd = fd, .events = POLLIN, .revents = 0 };
        int n = poll(&p, 1, (int)left);
        if (n < 0) { if (errno == EINTR) continue; return -errno; }
        if (n == 0) return 0;
        if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) return -ENODEV;
        char buffer[1024];
        ssize_t len = read(fd, buffer, sizeof buffer);
        if (len < 0) { if (errno == EINTR || errno == EAGAIN) continue; return -errno; }
        if (len == 0) return -ENODEV;
        int found = 0;
        for (ssize_t i = 0; i + (ssize_t)sizeof(struct drm_event) <= len;) {
            struct drm_event e;
            memcpy(&e, buffer + i, sizeof e);
            if (e.length < sizeof e || i + (ssize_t)e.length > len) break;
            if (e.type == DRM_EVENT_FLIP_COMPLETE && e.length >= sizeof(struct drm_event_vblank)) {
                struct drm_event_vblank v;
                memcpy(&v, buffer + i, sizeof v);
                *user_data = v.user_data;
                *usec = (int64_t)v.tv_sec * 1000000 + v.tv_usec;
                *sequence = v.sequence;
                found = 1;
            }
            i += e.length;
        }
        if (found) return 1;
    }
}
