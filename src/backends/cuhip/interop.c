/* Native handles out and in, host memory registered, and copies between devices. */
#include "cuhip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Interop ---- */

static gp_status ch_interop_missing(void)
{
    gp__ch_host->set_error("the %s here lacks the entry points of native handles; update it", CH_DRIVER_TITLE);
    return GP_ERROR_UNSUPPORTED;
}
#define CH_INTEROP(field)                                                                      \
    do {                                                                                       \
        if (!gp__ch.field)                                                                     \
            return ch_interop_missing();                                                       \
    } while (0)

gp_status gp__ch_native_device(void *dev, gp_native_device *out)
{
    gp__ch_device *d = dev;
    out->ordinal = d->ordinal;
    out->context = gp__ch_vendor_context(d);
    return GP_SUCCESS;
}

gp_status gp__ch_native_stream(void *dev, void *stream, gp_native_stream *out)
{
    (void)dev;
    out->stream = stream; /* the plugin's stream is the vendor's */
    return GP_SUCCESS;
}

gp_status gp__ch_native_buffer(void *dev, void *buf, gp_native_buffer *out)
{
    (void)dev;
    const ch_buffer *b = buf;
    out->device_ptr = CH_DPTR_TO_U64(b->ptr);
    out->host = b->host;
    return GP_SUCCESS;
}

gp_status gp__ch_native_event(void *dev, void *event, gp_native_event *out)
{
    (void)dev;
    out->event = (void *)((ch_event_obj *)event)->ev;
    return GP_SUCCESS;
}

/* Memory the caller allocated on the device, from ptr to the end of its allocation or bytes of it. */
gp_status gp__ch_buffer_wrap(void *dev, const gp_native_buffer *native, int adopt, void **out, size_t *bytes,
                             gp_memory *memory)
{
    gp__ch_device *d = dev;
    CH_INTEROP(pointer_get_attribute);
    CH_INTEROP(mem_get_address_range);
    ch_dptr ptr = CH_DPTR_FROM_U64(native->device_ptr);
    if (CH_DPTR_IS_NULL(ptr)) {
        gp__ch_host->set_error("the native buffer's device_ptr is 0; wrap memory the device allocated");
        return GP_ERROR_INVALID_ARGUMENT;
    }
    CH_ENTER(d);
    gp_status st = gp__ch_vendor_owns(d, ptr);
    if (st != GP_SUCCESS)
        return st;
    ch_dptr base;
    size_t size = 0;
    CH_CALL(gp__ch.mem_get_address_range(&base, &size, ptr), "finding the allocation of the pointer");
    size_t rest = (size_t)(CH_DPTR_TO_U64(base) + size - CH_DPTR_TO_U64(ptr));
    if (native->bytes > rest) {
        gp__ch_host->set_error("the native buffer claims %zu bytes, but its allocation has %zu from that pointer",
                               native->bytes, rest);
        return GP_ERROR_INVALID_ARGUMENT;
    }
    unsigned int type = 0;
    void *host = NULL;
    CH_CALL(gp__ch.pointer_get_attribute(&type, CH_POINTER_ATTR_MEMORY_TYPE, ptr), "asking what the pointer is");
    if (type == CH_MEMORYTYPE_HOST)
        CH_CALL(gp__ch.pointer_get_attribute(&host, CH_POINTER_ATTR_HOST_POINTER, ptr), "finding its host address");
    ch_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return gp__ch_no_host_memory();
    b->ptr = ptr;
    b->host = host;
    b->bytes = native->bytes ? native->bytes : rest;
    b->memory = host ? GP_MEMORY_PINNED : GP_MEMORY_DEVICE;
    b->owned = adopt;
    *out = b;
    *bytes = b->bytes;
    *memory = b->memory;
    return GP_SUCCESS;
}

gp_status gp__ch_buffer_register(void *dev, void *host, size_t bytes, void **out)
{
    gp__ch_device *d = dev;
    CH_INTEROP(host_register);
    ch_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return gp__ch_no_host_memory();
    b->bytes = bytes;
    b->memory = GP_MEMORY_PINNED;
    b->registered = 1;
    if (bytes) {
        gp_status st = gp__ch_vendor_enter(d);
        ch_result r = st == GP_SUCCESS ? gp__ch.host_register(host, bytes, CH_HOSTREGISTER_FLAGS) : CH_SUCCESS;
        /* Host memory the driver has pinned already (another library's, or another gpuport
         * backend's over the same driver: hip:0 and cuda:0 on HIP's NVIDIA platform) is used as
         * it is, and left to its owner. */
        unsigned type = 0;
        if (st == GP_SUCCESS && r != CH_SUCCESS && gp__ch.pointer_get_attribute &&
            gp__ch.pointer_get_attribute(&type, CH_POINTER_ATTR_MEMORY_TYPE, CH_DPTR_FROM_U64((uintptr_t)host)) ==
                CH_SUCCESS &&
            type == CH_MEMORYTYPE_HOST)
            r = CH_SUCCESS, b->registered = 0;
        if (st == GP_SUCCESS && r != CH_SUCCESS)
            st = gp__ch_fail(r, "registering the host memory");
        if (st != GP_SUCCESS) {
            free(b);
            return st;
        }
        b->host = host;
        if (gp__ch.host_get_device_pointer(&b->ptr, host, 0) != CH_SUCCESS)
            b->ptr = CH_DPTR_FROM_U64(0); /* kernels cannot take it; launch says so */
    }
    *out = b;
    return GP_SUCCESS;
}

gp_status gp__ch_stream_wrap(void *dev, const gp_native_stream *native, void **out)
{
    CH_ENTER(dev);
    gp_status st = gp__ch_vendor_stream_check(dev, (ch_stream)native->stream);
    if (st == GP_SUCCESS)
        *out = native->stream;
    return st;
}

int gp__ch_can_copy_peer(void *dst, void *src)
{
    return gp__ch.device_can_access_peer && dst != src && gp__ch_vendor_can_peer(dst, src);
}

gp_status gp__ch_copy_peer(void *dst_dev, void *stream, void *dst, size_t dst_off, void *src_dev, void *src,
                           size_t src_off, size_t bytes, int blocking)
{
    ch_buffer *d = dst, *s = src;
    if (CH_DPTR_IS_NULL(d->ptr) || CH_DPTR_IS_NULL(s->ptr)) {
        gp__ch_host->set_error("a peer copy needs buffers with device addresses");
        return GP_ERROR_UNSUPPORTED;
    }
    gp_status st = gp__ch_vendor_copy_peer(dst_dev, CH_DPTR_ADD(d->ptr, dst_off), src_dev, CH_DPTR_ADD(s->ptr, src_off),
                                           bytes, (ch_stream)stream);
    if (st == GP_SUCCESS && blocking) {
        ch_result r = gp__ch.stream_synchronize((ch_stream)stream);
        if (r != CH_SUCCESS)
            st = gp__ch_fail(r, "waiting for a peer copy");
    }
    return st;
}

