/* Buffers, streams, copies, fills and events. */
#include "cuhip.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Buffers ---- */

gp_status gp__ch_buffer_create(void *dev, gp_memory memory, size_t bytes, void **out)
{
    CH_ENTER(dev);
    ch_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return gp__ch_no_host_memory();
    b->bytes = bytes;
    b->memory = memory;
    b->owned = 1;
    /* A 0-byte buffer keeps NULL pointers: the allocators are never asked for 0 bytes. */
    ch_result r = CH_SUCCESS;
    if (bytes && memory == GP_MEMORY_DEVICE) {
        r = gp__ch.mem_alloc(&b->ptr, bytes);
    } else if (bytes) {
        unsigned flags = CH_HOSTALLOC_PORTABLE | (memory == GP_MEMORY_MAPPED ? CH_HOSTALLOC_DEVICEMAP : 0u);
        r = gp__ch.host_alloc(&b->host, bytes, flags);
        /* Pinned memory has a device address too where addressing is unified; where it has
         * none, kernels cannot take the buffer and launch says so. */
        if (r == CH_SUCCESS && gp__ch.host_get_device_pointer(&b->ptr, b->host, 0) != CH_SUCCESS) {
            b->ptr = 0;
            if (memory == GP_MEMORY_MAPPED) {
                gp__ch.host_free(b->host);
                free(b);
                gp__ch_host->set_error("mapped memory has no device address on this device");
                return GP_ERROR_UNSUPPORTED;
            }
        }
    }
    if (r != CH_SUCCESS) {
        free(b);
        gp_status st = gp__ch_fail(r, memory == GP_MEMORY_DEVICE ? "allocating device memory"
                                                                 : "allocating page-locked host memory");
        return st == GP_ERROR_OUT_OF_DEVICE_MEMORY && memory != GP_MEMORY_DEVICE ? GP_ERROR_OUT_OF_HOST_MEMORY : st;
    }
    *out = b;
    return GP_SUCCESS;
}

void gp__ch_buffer_destroy(void *dev, void *buf)
{
    ch_buffer *b = buf;
    /* Released even where the context cannot be made current (a lost one): the driver frees
     * what it can, and gpuport keeps nothing. Likewise for every destroy below. */
    gp__ch_vendor_enter(dev);
#ifdef CH_EXPORTS_MEMORY
    if (b->exported)
        gp__ch_buffer_unexport(b);
    else
#endif
    if (b->registered && b->host)
        gp__ch.host_unregister(b->host);
    else if (b->owned && b->memory == GP_MEMORY_DEVICE && !CH_DPTR_IS_NULL(b->ptr))
        gp__ch.mem_free(b->ptr);
    else if (b->owned && b->host)
        gp__ch.host_free(b->host);
    free(b);
}

gp_status gp__ch_sync(void *dev, void *stream)
{
    CH_ENTER(dev);
    CH_CALL(gp__ch.stream_synchronize((ch_stream)stream), "synchronizing the stream");
    return GP_SUCCESS;
}

gp_status gp__ch_buffer_map(void *dev, void *stream, void *buf, size_t bytes, void **host)
{
    static char empty[1]; /* a 0-byte buffer still maps to a valid address */
    ch_buffer *b = buf;
    (void)bytes;
    gp_status st = gp__ch_sync(dev, stream);
    if (st == GP_SUCCESS)
        *host = b->host ? b->host : empty;
    return st;
}

gp_status gp__ch_buffer_unmap(void *dev, void *stream, void *buf, void *host)
{
    (void)dev, (void)stream, (void)buf, (void)host;
    return GP_SUCCESS; /* host memory the device reads in place: nothing to write back */
}

/* ---- Streams ---- */

gp_status gp__ch_stream_create(void *dev, void **out)
{
    CH_ENTER(dev);
    ch_stream s;
    CH_CALL(gp__ch.stream_create(&s, CH_STREAM_NON_BLOCKING), "creating a stream");
    *out = (void *)s;
    return GP_SUCCESS;
}

void gp__ch_stream_destroy(void *dev, void *stream)
{
    if (gp__ch_vendor_enter(dev) == GP_SUCCESS)
        gp__ch.stream_synchronize((ch_stream)stream);
    gp__ch.stream_destroy((ch_stream)stream);
}

/* ---- Copies and fills ----
 * Device memory goes through the driver's asynchronous copies. Pinned and mapped buffers are
 * host memory: copies between them and the device use their host address; a copy with host
 * memory on both ends waits for the stream and copies on the host, which also satisfies the
 * _async calls (they may finish early). */

static gp_status ch_finish(void *dev, void *stream, int blocking)
{
    return blocking ? gp__ch_sync(dev, stream) : GP_SUCCESS;
}

gp_status gp__ch_write(void *dev, void *stream, void *dst, size_t off, const void *src, size_t bytes, int blocking)
{
    ch_buffer *b = dst;
    if (b->memory != GP_MEMORY_DEVICE) {
        gp_status st = gp__ch_sync(dev, stream);
        if (st == GP_SUCCESS)
            memcpy((char *)b->host + off, src, bytes);
        return st;
    }
    CH_ENTER(dev);
    /* HIP's prototype takes a non-const source. */
    CH_CALL(gp__ch.memcpy_htod_async(CH_DPTR_ADD(b->ptr, off), (void *)src, bytes, (ch_stream)stream),
            "copying host to device");
    return ch_finish(dev, stream, blocking);
}

gp_status gp__ch_read(void *dev, void *stream, void *src, size_t off, void *dst, size_t bytes, int blocking)
{
    ch_buffer *b = src;
    if (b->memory != GP_MEMORY_DEVICE) {
        gp_status st = gp__ch_sync(dev, stream);
        if (st == GP_SUCCESS)
            memcpy(dst, (char *)b->host + off, bytes);
        return st;
    }
    CH_ENTER(dev);
    CH_CALL(gp__ch.memcpy_dtoh_async(dst, CH_DPTR_ADD(b->ptr, off), bytes, (ch_stream)stream),
            "copying device to host");
    return ch_finish(dev, stream, blocking);
}

gp_status gp__ch_copy(void *dev, void *stream, void *dst, size_t dst_off, void *src, size_t src_off, size_t bytes,
                      int blocking)
{
    ch_buffer *d = dst, *s = src;
    int d_host = d->memory != GP_MEMORY_DEVICE, s_host = s->memory != GP_MEMORY_DEVICE;
    if (d_host && s_host) {
        gp_status st = gp__ch_sync(dev, stream);
        if (st == GP_SUCCESS)
            memmove((char *)d->host + dst_off, (char *)s->host + src_off, bytes);
        return st;
    }
    CH_ENTER(dev);
    ch_stream st = (ch_stream)stream;
    if (d_host)
        CH_CALL(gp__ch.memcpy_dtoh_async((char *)d->host + dst_off, CH_DPTR_ADD(s->ptr, src_off), bytes, st),
                "copying device to host");
    else if (s_host)
        CH_CALL(gp__ch.memcpy_htod_async(CH_DPTR_ADD(d->ptr, dst_off), (char *)s->host + src_off, bytes, st),
                "copying host to device");
    else
        CH_CALL(gp__ch.memcpy_dtod_async(CH_DPTR_ADD(d->ptr, dst_off), CH_DPTR_ADD(s->ptr, src_off), bytes, st),
                "copying device to device");
    return ch_finish(dev, stream, blocking);
}

/* The driver has no 64-bit memset: kernels/fill.gp, prebuilt or compiled on first use. */

static gp_status ch_fill8(gp__ch_device *d, ch_stream stream, ch_dptr p, uint64_t count, uint64_t value)
{
    pthread_mutex_lock(&d->fill_lock);
    gp_status st = GP_SUCCESS;
    if (!d->fill_function) {
        static const char line_reset[] = "\n#line 1\n"; /* as core composes a source without options */
        size_t plen = strlen(gp__ch_prelude), flen = strlen(gp__ch_fill_source);
        char *source = malloc(plen + sizeof line_reset + flen);
        void *binary = NULL, *m = NULL;
        size_t binary_bytes = 0;
        st = source ? GP_SUCCESS : gp__ch_no_host_memory();
        if (st == GP_SUCCESS) {
            memcpy(source, gp__ch_prelude, plen);
            memcpy(source + plen, line_reset, sizeof line_reset - 1);
            memcpy(source + plen + sizeof line_reset - 1, gp__ch_fill_source, flen + 1);
            st = gp__ch_program_build(d, source, &binary, &binary_bytes);
        }
        if (st == GP_SUCCESS)
            st = gp__ch_program_load(d, binary, binary_bytes, &m);
        free(source);
        free(binary);
        if (st == GP_SUCCESS) {
            ch_result r = gp__ch.module_get_function(&d->fill_function, (ch_module)m, "gp_fill8");
            if (r != CH_SUCCESS) {
                gp__ch.module_unload((ch_module)m);
                d->fill_function = NULL;
                st = gp__ch_fail(r, "finding the 8-byte fill kernel");
            } else {
                d->fill_module = (ch_module)m;
            }
        }
    }
    ch_function fn = d->fill_function;
    pthread_mutex_unlock(&d->fill_lock);
    if (st != GP_SUCCESS)
        return st;
    uint64_t groups = (count + 255) / 256;
    if (groups > 65535)
        groups = 65535; /* the kernel strides over the rest */
    void *params[] = {&p, &count, &value};
    CH_CALL(gp__ch.launch_kernel(fn, (unsigned)groups, 1, 1, 256, 1, 1, 0, stream, params, NULL),
            "launching the 8-byte fill kernel");
    return GP_SUCCESS;
}

gp_status gp__ch_fill(void *dev, void *stream, void *dst, size_t off, size_t bytes, const void *pattern,
                      size_t pattern_size, int blocking)
{
    ch_buffer *b = dst;
    if (b->memory != GP_MEMORY_DEVICE) {
        gp_status st = gp__ch_sync(dev, stream);
        if (st != GP_SUCCESS)
            return st;
        for (size_t i = 0; i < bytes; i += pattern_size)
            memcpy((char *)b->host + off + i, pattern, pattern_size);
        return GP_SUCCESS;
    }
    CH_ENTER(dev);
    ch_dptr p = CH_DPTR_ADD(b->ptr, off);
    ch_stream s = (ch_stream)stream;
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;
    switch (pattern_size) {
    case 1:
        memcpy(&v8, pattern, 1);
        CH_CALL(gp__ch.memset_d8_async(p, v8, bytes, s), "filling with a 1-byte pattern");
        break;
    case 2:
        memcpy(&v16, pattern, 2);
        CH_CALL(gp__ch.memset_d16_async(p, v16, bytes / 2, s), "filling with a 2-byte pattern");
        break;
    case 4:
        memcpy(&v32, pattern, 4);
        CH_CALL(gp__ch.memset_d32_async(p, v32, bytes / 4, s), "filling with a 4-byte pattern");
        break;
    case 8: {
        memcpy(&v64, pattern, 8);
        gp_status st = ch_fill8(dev, s, p, bytes / 8, v64);
        if (st != GP_SUCCESS)
            return st;
        break;
    }
    default:
        gp__ch_host->set_error("fill patterns are 1, 2, 4 or 8 bytes, not %zu", pattern_size);
        return GP_ERROR_INVALID_ARGUMENT;
    }
    return ch_finish(dev, stream, blocking);
}

/* ---- Events ---- */

gp_status gp__ch_event_create(void *dev, void **out)
{
    CH_ENTER(dev);
    ch_event_obj *e = calloc(1, sizeof *e);
    if (!e)
        return gp__ch_no_host_memory();
    ch_result r = gp__ch.event_create(&e->ev, CH_EVENT_DEFAULT);
    if (r != CH_SUCCESS) {
        free(e);
        return gp__ch_fail(r, "creating an event");
    }
    atomic_init(&e->recorded, 0);
    *out = e;
    return GP_SUCCESS;
}

void gp__ch_event_destroy(void *dev, void *event)
{
    ch_event_obj *e = event;
    gp__ch_vendor_enter(dev);
    gp__ch.event_destroy(e->ev);
    free(e);
}

gp_status gp__ch_event_record(void *dev, void *event, void *stream)
{
    ch_event_obj *e = event;
    CH_ENTER(dev);
    CH_CALL(gp__ch.event_record(e->ev, (ch_stream)stream), "recording an event");
    atomic_store(&e->recorded, 1);
    return GP_SUCCESS;
}

gp_status gp__ch_stream_wait_event(void *dev, void *stream, void *event)
{
    ch_event_obj *e = event;
    CH_ENTER(dev);
    CH_CALL(gp__ch.stream_wait_event((ch_stream)stream, e->ev, 0), "making a stream wait for an event");
    return GP_SUCCESS;
}

gp_status gp__ch_event_synchronize(void *dev, void *event)
{
    ch_event_obj *e = event;
    CH_ENTER(dev);
    CH_CALL(gp__ch.event_synchronize(e->ev), "waiting for an event");
    return GP_SUCCESS;
}

gp_status gp__ch_event_query(void *dev, void *event)
{
    ch_event_obj *e = event;
    CH_ENTER(dev);
    ch_result r = gp__ch.event_query(e->ev);
    if (r == CH_ERROR_NOT_READY)
        return GP_NOT_READY;
    return r == CH_SUCCESS ? GP_SUCCESS : gp__ch_fail(r, "querying an event");
}

gp_status gp__ch_event_elapsed_ms(void *dev, void *start, void *end, double *ms)
{
    ch_event_obj *a = start, *b = end;
    if (!atomic_load(&a->recorded) || !atomic_load(&b->recorded)) {
        gp__ch_host->set_error("elapsed time needs two recorded events; the %s event was never recorded",
                               atomic_load(&a->recorded) ? "end" : "start");
        return GP_ERROR_INVALID_ARGUMENT;
    }
    CH_ENTER(dev);
    float f = 0;
    ch_result r = gp__ch.event_elapsed_time(&f, a->ev, b->ev);
    if (r == CH_ERROR_NOT_READY) {
        gp__ch_host->set_error("the events have not been reached yet");
        return GP_NOT_READY;
    }
    if (r != CH_SUCCESS)
        return gp__ch_fail(r, "measuring the time between events");
    *ms = f;
    return GP_SUCCESS;
}

