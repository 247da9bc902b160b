// The libcamera shim: everything C++ about libcamera lives here, behind the C ABI in
// include/CLibcameraShim.h. libcamera's requestCompleted signal runs on libcamera's thread and
// only moves the request into `completed`; Swift waits for it on its own thread.
#include "CLibcameraShim.h"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <linux/dma-buf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <libcamera/libcamera.h>
#include <libcamera/version.h>

using namespace libcamera;

#define LOOPIX_LIBCAMERA_AT_LEAST(major, minor) \
    (LIBCAMERA_VERSION_MAJOR > (major) || (LIBCAMERA_VERSION_MAJOR == (major) && LIBCAMERA_VERSION_MINOR >= (minor)))

struct CLibcameraShim_Manager {
    std::unique_ptr<CameraManager> manager;
};

namespace {
struct Mapping {
    uint8_t *address = nullptr;
    size_t length = 0;
    int fd = -1;
    size_t dataOffset = 0;
    size_t dataLength = 0;
};

void syncDmabuf(int fd, bool start) {
    struct dma_buf_sync sync = {};
    sync.flags = (start ? DMA_BUF_SYNC_START : DMA_BUF_SYNC_END) | DMA_BUF_SYNC_READ;
    while (ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync) < 0 && errno == EINTR) {}
}
}  // namespace

struct CLibcameraShim_Camera {
    std::shared_ptr<Camera> camera;
    std::unique_ptr<CameraConfiguration> config;
    std::unique_ptr<FrameBufferAllocator> allocator;
    Stream *viewfinder = nullptr;
    Stream *still = nullptr;
    std::vector<std::unique_ptr<Request>> requests;
    std::map<const FrameBuffer *, Mapping> mappings;
    // The buffer whose CPU read was opened (DMA_BUF_SYNC_START) for each request handed out,
    // so that releasing it closes exactly that read. Touched by the caller's thread only.
    std::map<uint64_t, const FrameBuffer *> reading;
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<Request *> completed;
    bool running = false;
    bool stopping = false;
    bool wantStill = false;
    FrameBuffer *stillBuffer = nullptr;
    CLibcameraShim_Controls controls = {0, 0, 0, 0.5f, 0.5f, 0, 0};
    float lastLensPosition = 0;
    bool haveLensPosition = false;

    void requestComplete(Request *request) {
        std::lock_guard<std::mutex> lock(mutex);
        if (stopping) return;  // cancelled on stop: never handed out or re-queued
        completed.push_back(request);
        ready.notify_one();
    }

    bool offers(const ControlId &id) const {
        const ControlInfoMap &info = camera->controls();
        return info.find(&id) != info.end();
    }

    // The desired controls written into a request about to be queued.
    void applyControls(ControlList &list) {
        if (offers(controls::ExposureValue)) list.set(controls::ExposureValue, controls.ev);
#if LOOPIX_LIBCAMERA_AT_LEAST(0, 5)
        // From 0.5 AE lock is "manual exposure holding the current values".
        if (offers(controls::ExposureTimeMode))
            list.set(controls::ExposureTimeMode, controls.aeLocked ? controls::ExposureTimeModeManual : controls::ExposureTimeModeAuto);
        if (offers(controls::AnalogueGainMode))
            list.set(controls::AnalogueGainMode, controls.aeLocked ? controls::AnalogueGainModeManual : controls::AnalogueGainModeAuto);
#else
        // Up to 0.4: AeEnable false freezes the algorithm at its current values.
        if (offers(controls::AeEnable)) list.set(controls::AeEnable, !controls.aeLocked);
#endif
        if (!offers(controls::AfMode)) return;
        if (controls.afLocked) {
            list.set(controls::AfMode, controls::AfModeManual);
            if (haveLensPosition && offers(controls::LensPosition)) list.set(controls::LensPosition, lastLensPosition);
            return;
        }
        if (controls.hasFocusPoint && offers(controls::AfWindows)) {
            // The tap in ScalerCrop coordinates: a window a tenth of the crop around the point.
            Rectangle crop(0, 0, 0, 0);
            const ControlInfoMap &info = camera->controls();
            auto it = info.find(&controls::ScalerCrop);
            if (it != info.end()) crop = it->second.max().get<Rectangle>();
            if (crop.width == 0) {
                auto size = camera->properties().get(properties::PixelArraySize);
                if (size) crop = Rectangle(0, 0, size->width, size->height);
            }
            unsigned int w = std::max(16u, crop.width / 10), h = std::max(16u, crop.height / 10);
            int x = crop.x + int(controls.focusX * crop.width) - int(w / 2);
            int y = crop.y + int(controls.focusY * crop.height) - int(h / 2);
            x = std::clamp(x, crop.x, crop.x + int(crop.width - w));
            y = std::clamp(y, crop.y, crop.y + int(crop.height - h));
            Rectangle window(x, y, w, h);
            if (offers(controls::AfMetering)) list.set(controls::AfMetering, controls::AfMeteringWindows);
            list.set(controls::AfWindows, Span<const Rectangle>(&window, 1));
            list.set(controls::AfMode, controls::AfModeAuto);
            if (controls.triggerFocus && offers(controls::AfTrigger)) {
                list.set(controls::AfTrigger, controls::AfTriggerStart);
                controls.triggerFocus = 0;
            }
        } else {
            list.set(controls::AfMode, controls::AfModeContinuous);
        }
    }

    void unmapAll() {
        for (auto &entry : mappings) {
            if (entry.second.address) munmap(entry.second.address, entry.second.length);
        }
        mappings.clear();
        reading.clear();
    }

    void freeBuffers() {
        requests.clear();
        unmapAll();
        if (allocator) {
            if (viewfinder) allocator->free(viewfinder);
            if (still) allocator->free(still);
        }
        allocator.reset();
        stillBuffer = nullptr;
    }
};

namespace {
void fill(CLibcameraShim_StreamInfo *out, const StreamConfiguration &cfg) {
    if (!out) return;
    out->width = int32_t(cfg.size.width);
    out->height = int32_t(cfg.size.height);
    out->fourcc = cfg.pixelFormat.fourcc();
    out->stride = int32_t(cfg.stride);
    out->frameSize = int32_t(cfg.frameSize);
}

// Maps every plane of a buffer once: planes of one dmabuf share a mapping.
int mapBuffer(CLibcameraShim_Camera *c, const FrameBuffer *buffer) {
    const auto &planes = buffer->planes();
    if (planes.empty()) return -EINVAL;
    int fd = planes[0].fd.get();
    size_t end = 0;
    for (const auto &plane : planes) {
        if (plane.fd.get() != fd) return -ENOTSUP;  // multi-dmabuf layouts: not needed for the formats we read
        end = std::max(end, size_t(plane.offset) + plane.length);
    }
    void *address = mmap(nullptr, end, PROT_READ, MAP_SHARED, fd, 0);
    if (address == MAP_FAILED) return -errno;
    Mapping m;
    m.address = static_cast<uint8_t *>(address);
    m.length = end;
    m.fd = fd;
    m.dataOffset = planes[0].offset;
    m.dataLength = end - planes[0].offset;
    c->mappings[buffer] = m;
    return 0;
}

// A vector works for both 0.0.3 (`StreamRoles`, a vector) and 0.4+ (`Span<const StreamRole>`).
int configureRoles(CLibcameraShim_Camera *c, const std::vector<StreamRole> &roles, int width, int height) {
    std::unique_ptr<CameraConfiguration> config = c->camera->generateConfiguration(roles);
    if (!config || config->size() == 0) return -EINVAL;
    if (width > 0 && height > 0) config->at(0).size = Size(unsigned(width), unsigned(height));
    // Keep the pipeline's own default format when we can read it (some, like vimc, list
    // formats they cannot stream); otherwise pick one that converts cheaply to RGB.
    const PixelFormat readable[] = {formats::XRGB8888, formats::RGB888, formats::BGR888, formats::YUV420, formats::NV12};
    for (unsigned i = 0; i < config->size(); i++) {
        StreamConfiguration &cfg = config->at(i);
        if (std::find(std::begin(readable), std::end(readable), cfg.pixelFormat) != std::end(readable)) continue;
        const auto &supported = cfg.formats().pixelformats();
        for (PixelFormat f : readable) {
            if (std::find(supported.begin(), supported.end(), f) != supported.end()) {
                cfg.pixelFormat = f;
                break;
            }
        }
    }
    if (config->validate() == CameraConfiguration::Invalid) return -EINVAL;
    if (c->camera->configure(config.get()) < 0) return -EIO;
    c->config = std::move(config);
    return 0;
}
}  // namespace

extern "C" {

int CLibcameraShim_version(void) {
    return LIBCAMERA_VERSION_MAJOR * 10000 + LIBCAMERA_VERSION_MINOR * 100 + LIBCAMERA_VERSION_PATCH;
}

int CLibcameraShim_managerCreate(CLibcameraShim_Manager **out) {
    if (!out) return -EINVAL;
    auto m = new (std::nothrow) CLibcameraShim_Manager();
    if (!m) return -ENOMEM;
    m->manager = std::make_unique<CameraManager>();
    int ret = m->manager->start();
    if (ret < 0) {
        delete m;
        return ret;
    }
    *out = m;
    return 0;
}

void CLibcameraShim_managerDestroy(CLibcameraShim_Manager *m) {
    if (!m) return;
    m->manager->stop();
    delete m;
}

int CLibcameraShim_cameraCount(CLibcameraShim_Manager *m) {
    return m ? int(m->manager->cameras().size()) : -EINVAL;
}

int CLibcameraShim_cameraInfo(CLibcameraShim_Manager *m, int index, CLibcameraShim_CameraInfo *out) {
    if (!m || !out) return -EINVAL;
    auto cameras = m->manager->cameras();
    if (index < 0 || size_t(index) >= cameras.size()) return -ENOENT;
    const auto &camera = cameras[size_t(index)];
    std::memset(out, 0, sizeof(*out));
    std::strncpy(out->id, camera->id().c_str(), sizeof(out->id) - 1);
    const ControlList &props = camera->properties();
    if (auto model = props.get(properties::Model)) std::strncpy(out->model, model->c_str(), sizeof(out->model) - 1);
    if (auto size = props.get(properties::PixelArraySize)) {
        out->pixelArrayWidth = int32_t(size->width);
        out->pixelArrayHeight = int32_t(size->height);
    }
    if (auto cell = props.get(properties::UnitCellSize)) {
        out->unitCellWidthNm = int32_t(cell->width);
        out->unitCellHeightNm = int32_t(cell->height);
    }
    out->location = -1;
    if (auto location = props.get(properties::Location)) out->location = *location;
    return 0;
}

int CLibcameraShim_cameraOpen(CLibcameraShim_Manager *m, const char *id, CLibcameraShim_Camera **out) {
    if (!m || !id || !out) return -EINVAL;
    std::shared_ptr<Camera> camera = m->manager->get(id);
    if (!camera) return -ENODEV;
    int ret = camera->acquire();
    if (ret < 0) return ret;  // -EBUSY: in use by another process
    auto c = new (std::nothrow) CLibcameraShim_Camera();
    if (!c) {
        camera->release();
        return -ENOMEM;
    }
    c->camera = camera;
    camera->requestCompleted.connect(c, &CLibcameraShim_Camera::requestComplete);
    *out = c;
    return 0;
}

void CLibcameraShim_cameraClose(CLibcameraShim_Camera *c) {
    if (!c) return;
    CLibcameraShim_stop(c);
    c->freeBuffers();
    c->camera->requestCompleted.disconnect(c);
    c->config.reset();
    c->camera->release();
    c->camera.reset();
    delete c;
}

int CLibcameraShim_configure(CLibcameraShim_Camera *c, int width, int height, int withStill,
                             CLibcameraShim_StreamInfo *vf, CLibcameraShim_StreamInfo *still, int *stillConfigured) {
    if (!c || c->running) return -EBUSY;
    c->freeBuffers();
    c->viewfinder = c->still = nullptr;
    if (stillConfigured) *stillConfigured = 0;
    int ret = -EINVAL;
    if (withStill) {
        ret = configureRoles(c, {StreamRole::Viewfinder, StreamRole::StillCapture}, width, height);
        if (ret == 0 && c->config->size() >= 2) {
            c->viewfinder = c->config->at(0).stream();
            c->still = c->config->at(1).stream();
            fill(vf, c->config->at(0));
            fill(still, c->config->at(1));
            if (stillConfigured) *stillConfigured = 1;
            return 0;
        }
    }
    ret = configureRoles(c, {StreamRole::Viewfinder}, width, height);
    if (ret < 0) return ret;
    c->viewfinder = c->config->at(0).stream();
    fill(vf, c->config->at(0));
    return 0;
}

int CLibcameraShim_configureStillOnly(CLibcameraShim_Camera *c, CLibcameraShim_StreamInfo *still) {
    if (!c || c->running) return -EBUSY;
    c->freeBuffers();
    c->viewfinder = c->still = nullptr;
    int width = 0, height = 0;
    if (auto size = c->camera->properties().get(properties::PixelArraySize)) {
        width = int(size->width);
        height = int(size->height);
    }
    int ret = configureRoles(c, {StreamRole::StillCapture}, width, height);
    if (ret < 0) return ret;
    c->viewfinder = c->config->at(0).stream();
    fill(still, c->config->at(0));
    return 0;
}

int CLibcameraShim_start(CLibcameraShim_Camera *c) {
    if (!c || !c->viewfinder) return -EINVAL;
    if (c->running) return 0;
    c->freeBuffers();
    c->allocator = std::make_unique<FrameBufferAllocator>(c->camera);
    for (Stream *stream : {c->viewfinder, c->still}) {
        if (!stream) continue;
        if (c->allocator->allocate(stream) < 0) {
            c->freeBuffers();
            return -ENOMEM;
        }
        for (const auto &buffer : c->allocator->buffers(stream)) {
            int ret = mapBuffer(c, buffer.get());
            if (ret < 0) {
                c->freeBuffers();
                return ret;
            }
        }
    }
    uint64_t cookie = 0;
    for (const auto &buffer : c->allocator->buffers(c->viewfinder)) {
        std::unique_ptr<Request> request = c->camera->createRequest(cookie++);
        if (!request || request->addBuffer(c->viewfinder, buffer.get()) < 0) {
            c->freeBuffers();
            return -ENOMEM;
        }
        c->requests.push_back(std::move(request));
    }
    if (c->still && !c->allocator->buffers(c->still).empty()) c->stillBuffer = c->allocator->buffers(c->still)[0].get();
    {
        std::lock_guard<std::mutex> lock(c->mutex);
        c->completed.clear();
        c->stopping = false;
    }
    ControlList startControls(c->camera->controls());
    c->applyControls(startControls);
    int ret = c->camera->start(&startControls);
    if (ret < 0) {
        c->freeBuffers();
        return ret;
    }
    c->running = true;
    for (auto &request : c->requests) {
        c->applyControls(request->controls());
        ret = c->camera->queueRequest(request.get());
        if (ret < 0) {
            CLibcameraShim_stop(c);
            return ret;
        }
    }
    return 0;
}

int CLibcameraShim_stop(CLibcameraShim_Camera *c) {
    if (!c) return -EINVAL;
    if (!c->running) return 0;
    {
        std::lock_guard<std::mutex> lock(c->mutex);
        c->stopping = true;
        c->completed.clear();
    }
    int ret = c->camera->stop();
    c->running = false;
    return ret;
}

int CLibcameraShim_waitFrame(CLibcameraShim_Camera *c, int timeoutMs, CLibcameraShim_Frame *out) {
    if (!c || !out) return -EINVAL;
    Request *request = nullptr;
    {
        std::unique_lock<std::mutex> lock(c->mutex);
        if (!c->ready.wait_for(lock, std::chrono::milliseconds(timeoutMs), [c] { return !c->completed.empty() || c->stopping; }))
            return -ETIMEDOUT;
        if (c->completed.empty()) return -ETIMEDOUT;
        request = c->completed.front();
        c->completed.pop_front();
    }
    std::memset(out, 0, sizeof(*out));
    out->cookie = request->cookie();
    if (request->status() != Request::RequestComplete) {
        CLibcameraShim_releaseFrame(c, out->cookie);
        return -EIO;
    }
    // The still buffer, when this request carried it, wins over the viewfinder's.
    const FrameBuffer *buffer = nullptr;
    if (c->still) buffer = request->findBuffer(c->still);
    out->stream = buffer ? 1 : 0;
    if (!buffer) buffer = request->findBuffer(c->viewfinder);
    if (!buffer) {
        CLibcameraShim_releaseFrame(c, out->cookie);
        return -EIO;
    }
    auto it = c->mappings.find(buffer);
    if (it == c->mappings.end()) {
        CLibcameraShim_releaseFrame(c, out->cookie);
        return -EIO;
    }
    syncDmabuf(it->second.fd, true);
    c->reading[out->cookie] = buffer;
    out->data = it->second.address + it->second.dataOffset;
    out->length = it->second.dataLength;
    out->sequence = buffer->metadata().sequence;
    out->timestampNs = buffer->metadata().timestamp;
    const ControlList &md = request->metadata();
    if (auto v = md.get(controls::ExposureTime)) out->exposureTimeUs = *v;
    if (auto v = md.get(controls::AnalogueGain)) out->analogueGain = *v;
    if (auto v = md.get(controls::LensPosition)) {
        out->lensPosition = *v;
        out->hasLensPosition = 1;
        c->lastLensPosition = *v;
        c->haveLensPosition = true;
    }
    if (auto v = md.get(controls::AfState)) {
        out->afState = *v;
        out->hasAfState = 1;
    }
    if (auto v = md.get(controls::AeLocked)) out->aeLocked = *v ? 1 : 0;
    return 0;
}

int CLibcameraShim_releaseFrame(CLibcameraShim_Camera *c, uint64_t cookie) {
    if (!c || cookie >= c->requests.size()) return -EINVAL;
    Request *request = c->requests[size_t(cookie)].get();
    auto open = c->reading.find(cookie);
    if (open != c->reading.end()) {
        auto it = c->mappings.find(open->second);
        if (it != c->mappings.end()) syncDmabuf(it->second.fd, false);
        c->reading.erase(open);
    }
    {
        std::lock_guard<std::mutex> lock(c->mutex);
        if (c->stopping || !c->running) return 0;  // never re-queued after stop
    }
    // Back to viewfinder-only, plus the still buffer if one was asked for.
    request->reuse();
    request->addBuffer(c->viewfinder, c->allocator->buffers(c->viewfinder)[size_t(cookie)].get());
    if (c->wantStill && c->stillBuffer) {
        request->addBuffer(c->still, c->stillBuffer);
        c->wantStill = false;
    }
    c->applyControls(request->controls());
    return c->camera->queueRequest(request);
}

int CLibcameraShim_requestStill(CLibcameraShim_Camera *c) {
    if (!c || !c->still || !c->stillBuffer) return -ENOTSUP;
    c->wantStill = true;
    return 0;
}

int CLibcameraShim_setControls(CLibcameraShim_Camera *c, const CLibcameraShim_Controls *controls) {
    if (!c || !controls) return -EINVAL;
    c->controls = *controls;
    return 0;
}

}  // extern "C"
