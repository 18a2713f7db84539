/* Native handles out of gpuport's objects and gpuport objects around the caller's: core checks
 * handles and backends, the plugin's interop hooks do the vendor's part. Also device memory that
 * two plugins share on one GPU (transfer.c). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static gp_backend_id backend_id(const gp_device *dev)
{
    const char *n = dev->info.backend;
    return strcmp(n, "cuda") == 0 ? GP_BACKEND_CUDA : strcmp(n, "hip") == 0 ? GP_BACKEND_HIP : GP_BACKEND_OPENCL;
}

static const char *backend_name(gp_backend_id id)
{
    return id == GP_BACKEND_CUDA ? "cuda" : id == GP_BACKEND_HIP ? "hip" : id == GP_BACKEND_OPENCL ? "opencl" : NULL;
}

/* The hook, or GP_ERROR_UNSUPPORTED when the plugin has none. */
#define NEED_HOOK(dev, hook, fn)                                                                   \
    do {                                                                                           \
        if (!(dev)->be->hook)                                                                      \
            return gp__fail(GP_ERROR_UNSUPPORTED, "%s: the %s plugin has no native handles", fn,   \
                            (dev)->info.backend);                                                  \
    } while (0)

/* The native handle was made for the device's backend. */
static gp_status check_backend(const gp_device *dev, gp_backend_id id, const char *fn)
{
    if (id == backend_id(dev)) return GP_SUCCESS;
    const char *name = backend_name(id);
    return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: the handle is tagged backend %d (%s) but %s:%zu is a %s device", fn,
                    (int)id, name ? name : "no gp_backend_id", dev->info.backend, dev->info.backend_index,
                    dev->info.backend);
}

gp_status gp_device_get_native(const gp_device *device, gp_native_device *native)
{
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(native, "native");
    NEED_HOOK(device, native_device, __func__);
    gp_native_device n;
    memset(&n, 0, sizeof n);
    n.ordinal = -1;
    gp_status st = device->be->native_device(device->impl, &n);
    if (st == GP_SUCCESS) {
        n.backend = backend_id(device);
        *native = n;
    }
    return st;
}

gp_status gp_stream_get_native(const gp_stream *stream, gp_native_stream *native)
{
    GP__CHECK_HANDLE(stream, "stream");
    GP__CHECK_OUT(native, "native");
    NEED_HOOK(stream->dev, native_stream, __func__);
    gp_native_stream n = {backend_id(stream->dev), NULL};
    gp_status st = stream->be->native_stream(stream->dev->impl, stream->impl, &n);
    if (st == GP_SUCCESS) *native = n;
    return st;
}

gp_status gp_buffer_get_native(const gp_buffer *buffer, gp_native_buffer *native)
{
    GP__CHECK_HANDLE(buffer, "buffer");
    GP__CHECK_OUT(native, "native");
    NEED_HOOK(buffer->dev, native_buffer, __func__);
    gp_native_buffer n;
    memset(&n, 0, sizeof n);
    gp_status st = buffer->be->native_buffer(buffer->dev->impl, buffer->impl, &n);
    if (st == GP_SUCCESS) {
        n.backend = backend_id(buffer->dev);
        n.bytes = buffer->size;
        *native = n;
    }
    return st;
}

gp_status gp_event_get_native(const gp_event *event, gp_native_event *native)
{
    GP__CHECK_HANDLE(event, "event");
    GP__CHECK_OUT(native, "native");
    NEED_HOOK(event->dev, native_event, __func__);
    gp_native_event n = {backend_id(event->dev), NULL};
    gp_status st = event->be->native_event(event->dev->impl, event->impl, &n);
    if (st == GP_SUCCESS) *native = n;
    return st;
}

/* A gp_buffer around a plugin buffer made by a wrap or register hook; frees impl on failure. */
int gp__same_gpu(gp_device *a, gp_device *b)
{
    unsigned char ua[16], ub[16];
    return a->be->device_uuid && b->be->device_uuid && a->be->device_uuid(a->impl, ua) &&
           b->be->device_uuid(b->impl, ub) && memcmp(ua, ub, 16) == 0;
}

gp_status gp__buffer_share(gp_device *a, gp_device *b, size_t bytes, gp_buffer **on_a, gp_buffer **on_b)
{
    *on_a = *on_b = NULL;
    int from_a = a->be->buffer_export && b->be->buffer_import;
    gp_device *from = from_a ? a : b, *to = from_a ? b : a;
    if (!from->be->buffer_export || !to->be->buffer_import)
        return gp__fail(GP_ERROR_UNSUPPORTED, "neither %s nor %s exports memory that the other imports",
                        a->info.backend, b->info.backend);
    void *made = NULL, *taken = NULL;
    int fd = -1;
    gp_buffer *first = NULL, *second = NULL;
    gp_status st = from->be->buffer_export(from->impl, bytes, &made, &fd);
    if (st == GP_SUCCESS && (st = gp__buffer_adopt(from, made, bytes, GP_MEMORY_DEVICE, 16, &first)) != GP_SUCCESS)
        close(fd); /* not handed on */
    if (st == GP_SUCCESS) st = to->be->buffer_import(to->impl, fd, bytes, &taken); /* takes fd */
    if (st == GP_SUCCESS) st = gp__buffer_adopt(to, taken, bytes, GP_MEMORY_DEVICE, 16, &second);
    if (st != GP_SUCCESS) {
        gp_buffer_destroy(first);
        return st;
    }
    *on_a = from_a ? first : second;
    *on_b = from_a ? second : first;
    return GP_SUCCESS;
}

gp_status gp_buffer_wrap(gp_device *device, const gp_native_buffer *native, gp_ownership ownership,
                         gp_buffer **buffer)
{
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(native, "native");
    GP__CHECK_OUT(buffer, "buffer");
    if (ownership != GP_BORROW && ownership != GP_ADOPT)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: ownership %d is neither GP_BORROW nor GP_ADOPT", __func__,
                        (int)ownership);
    gp_status st = check_backend(device, native->backend, __func__);
    if (st != GP_SUCCESS) return st;
    NEED_HOOK(device, buffer_wrap, __func__);
    void *impl = NULL;
    size_t bytes = 0;
    gp_memory memory = GP_MEMORY_DEVICE;
    st = device->be->buffer_wrap(device->impl, native, ownership == GP_ADOPT, &impl, &bytes, &memory);
    /* An OpenCL buffer's base is aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN (at least 128 bytes). */
    unsigned align = native->backend == GP_BACKEND_OPENCL ? 16 : gp__align_of(native->device_ptr);
    return st == GP_SUCCESS ? gp__buffer_adopt(device, impl, bytes, memory, align, buffer) : st;
}

gp_status gp_buffer_register_host(gp_device *device, void *host, size_t bytes, gp_buffer **buffer)
{
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(buffer, "buffer");
    if (!host && bytes) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: host is NULL", __func__);
    NEED_HOOK(device, buffer_register, __func__);
    void *impl = NULL;
    gp_status st = device->be->buffer_register(device->impl, host, bytes, &impl);
    return st == GP_SUCCESS ? gp__buffer_adopt(device, impl, bytes, GP_MEMORY_PINNED, gp__align_of((uintptr_t)host), buffer)
                            : st;
}

gp_status gp_stream_wrap(gp_device *device, const gp_native_stream *native, gp_ownership ownership,
                         gp_stream **stream)
{
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(native, "native");
    GP__CHECK_OUT(stream, "stream");
    if (ownership != GP_BORROW && ownership != GP_ADOPT)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: ownership %d is neither GP_BORROW nor GP_ADOPT", __func__,
                        (int)ownership);
    gp_status st = check_backend(device, native->backend, __func__);
    if (st != GP_SUCCESS) return st;
    NEED_HOOK(device, stream_wrap, __func__);
    void *impl = NULL;
    st = device->be->stream_wrap(device->impl, native, &impl);
    if (st != GP_SUCCESS) return st;
    st = gp__stream_add(device, impl, ownership == GP_ADOPT, stream);
    if (st != GP_SUCCESS && ownership == GP_ADOPT) device->be->stream_destroy(device->impl, impl);
    return st;
}
