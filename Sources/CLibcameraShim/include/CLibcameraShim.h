#ifndef CLIBCAMERASHIM_H
#define CLIBCAMERASHIM_H
/// A C ABI over libcamera (C++), for Swift. Opaque handles with one destroy function each;
/// functions return 0 or a negative errno. libcamera's completion callback only moves the
/// finished request into a locked queue; Swift waits for it with a timeout on its own thread
/// (`CLibcameraShim_waitFrame`) and hands it back (`CLibcameraShim_releaseFrame`), which
/// re-queues it unless the camera is stopping. Every symbol has the `CLibcameraShim_` prefix.
///
/// libcamera versions: built against 0.0.3 (Debian 12) and 0.4–0.5 (Debian 13, Raspberry Pi
/// OS); the differences are handled in shim.cpp behind LIBCAMERA_VERSION_* checks.
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CLibcameraShim_Manager CLibcameraShim_Manager;
typedef struct CLibcameraShim_Camera CLibcameraShim_Camera;

/// Starts a camera manager (one per process).
int CLibcameraShim_managerCreate(CLibcameraShim_Manager **out);
void CLibcameraShim_managerDestroy(CLibcameraShim_Manager *manager);
int CLibcameraShim_cameraCount(CLibcameraShim_Manager *manager);

typedef struct {
    char id[256];
    /// Sensor model from the camera's properties ("imx708_wide", "Sensor B"), or "".
    char model[64];
    /// Full pixel array, 0 when unknown.
    int32_t pixelArrayWidth;
    int32_t pixelArrayHeight;
    /// Pixel pitch in nanometres, 0 when unknown.
    int32_t unitCellWidthNm;
    int32_t unitCellHeightNm;
    /// Front, back or external (libcamera's Location), -1 when unknown.
    int32_t location;
} CLibcameraShim_CameraInfo;

int CLibcameraShim_cameraInfo(CLibcameraShim_Manager *manager, int index, CLibcameraShim_CameraInfo *out);

/// Acquires a camera for exclusive use: -EBUSY when another process has it.
int CLibcameraShim_cameraOpen(CLibcameraShim_Manager *manager, const char *id, CLibcameraShim_Camera **out);
/// Stops (if running), frees buffers and releases the camera.
void CLibcameraShim_cameraClose(CLibcameraShim_Camera *camera);

typedef struct {
    int32_t width;
    int32_t height;
    /// DRM fourcc of the pixel format (libcamera's formats), e.g. 'XR24', 'RG24', 'BG24', 'YU12', 'NV12'.
    uint32_t fourcc;
    int32_t stride;
    int32_t frameSize;
} CLibcameraShim_StreamInfo;

/// Configures a viewfinder stream of about width × height (the ISP scales) and, with
/// `withStill`, a still stream at full resolution. `*stillConfigured` says whether the
/// pipeline took both at once (else stills need a reconfiguration). Only while stopped.
int CLibcameraShim_configure(CLibcameraShim_Camera *camera, int width, int height, int withStill,
                             CLibcameraShim_StreamInfo *viewfinder, CLibcameraShim_StreamInfo *still,
                             int *stillConfigured);
/// Configures one still-capture stream at the sensor's full resolution (for pipelines that
/// cannot stream both): its frames come back as the viewfinder stream.
int CLibcameraShim_configureStillOnly(CLibcameraShim_Camera *camera, CLibcameraShim_StreamInfo *still);

/// Allocates and maps the buffers, starts streaming and queues every request.
int CLibcameraShim_start(CLibcameraShim_Camera *camera);
/// Stops streaming; queued requests are cancelled and never re-queued. Safe when stopped.
int CLibcameraShim_stop(CLibcameraShim_Camera *camera);

typedef struct {
    uint64_t sequence;
    uint64_t timestampNs;
    /// 0: viewfinder, 1: still.
    int32_t stream;
    const uint8_t *data;
    size_t length;
    /// Identifies the request for `releaseFrame`.
    uint64_t cookie;
    int32_t exposureTimeUs;
    float analogueGain;
    float lensPosition;
    int32_t hasLensPosition;
    int32_t afState;
    int32_t hasAfState;
    int32_t aeLocked;
} CLibcameraShim_Frame;

/// Waits up to `timeoutMs` for a completed request: 0 and `*out` filled (its data stays
/// valid until released), -ETIMEDOUT, or -EIO if the request failed (it is released).
int CLibcameraShim_waitFrame(CLibcameraShim_Camera *camera, int timeoutMs, CLibcameraShim_Frame *out);
/// Gives a frame's request back; it is re-queued with the current controls unless stopping.
int CLibcameraShim_releaseFrame(CLibcameraShim_Camera *camera, uint64_t cookie);
/// Adds the still buffer to the next request (when a still stream is configured).
int CLibcameraShim_requestStill(CLibcameraShim_Camera *camera);

typedef struct {
    float ev;
    int32_t aeLocked;
    int32_t afLocked;
    /// Normalised focus point (0…1), used when hasFocusPoint.
    float focusX;
    float focusY;
    int32_t hasFocusPoint;
    /// Set once to start a focus scan at the point.
    int32_t triggerFocus;
} CLibcameraShim_Controls;

/// Controls for the next requests. Controls the camera does not offer are skipped.
int CLibcameraShim_setControls(CLibcameraShim_Camera *camera, const CLibcameraShim_Controls *controls);

/// libcamera's version as MAJOR*10000 + MINOR*100 + PATCH, as compiled against.
int CLibcameraShim_version(void);

#ifdef __cplusplus
}
#endif
#endif
