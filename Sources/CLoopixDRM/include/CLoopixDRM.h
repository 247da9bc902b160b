#ifndef CLOOPIXDRM_H
#define CLOOPIXDRM_H
// DRM calls Swift cannot make directly (ioctls with structs, mmap of a dumb buffer, reading
// flip events off the fd). Plain ioctl(2)/read(2) on the kernel UAPI; no libdrm needed.
// Every function returns 0 (or a count) on success and a negative errno on failure.
#include <stdint.h>
#include <stddef.h>

/// DRM_IOCTL_MODE_CREATE_DUMB: a width × height buffer of `bpp` bits per pixel.
int CLoopixDRM_create_dumb(int fd, uint32_t width, uint32_t height, uint32_t bpp,
                           uint32_t *handle, uint32_t *pitch, uint64_t *size);
/// DRM_IOCTL_MODE_MAP_DUMB + mmap(PROT_READ|PROT_WRITE, MAP_SHARED).
int CLoopixDRM_map_dumb(int fd, uint32_t handle, uint64_t size, void **pixels);
/// munmap.
int CLoopixDRM_unmap(void *pixels, uint64_t size);
/// DRM_IOCTL_MODE_DESTROY_DUMB.
int CLoopixDRM_destroy_dumb(int fd, uint32_t handle);

/// Waits up to `timeout_ms` for a page-flip event on `fd` (poll + read; other events are
/// skipped). Returns 1 with the event's time (CLOCK_MONOTONIC) and vblank sequence,
/// 0 on timeout, or a negative errno.
int CLoopixDRM_wait_flip(int fd, int timeout_ms, uint64_t *user_data,
                         int64_t *usec, uint32_t *sequence);

/// DRM_IOCTL_MODE_ATOMIC setting one property of one object (a plane's FB_ID for a page
/// flip) with `flags` (DRM_MODE_PAGE_FLIP_EVENT | DRM_MODE_ATOMIC_NONBLOCK), from arrays on the
/// stack: unlike libdrm's drmModeAtomicCommit it allocates nothing, so it may run every frame.
int CLoopixDRM_atomic_set(int fd, uint32_t object_id, uint32_t property_id, uint64_t value, uint32_t flags);

/// The connector's status as the kernel last saw it, without probing it (no EDID read) and
/// without allocating: 1 connected, 2 disconnected, 3 unknown, or a negative errno.
int CLoopixDRM_connector_status(int fd, uint32_t connector_id);
#endif
