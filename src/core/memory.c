/* Buffers, copies and fills: every range is checked here, so plugins see only valid work. */
#include "internal.h"

#include <stdlib.h>

static gp_status check_range(const gp_buffer *b, size_t off, size_t bytes, const char *fn, const char *which)
{
    if (off > b->size || bytes > b->size - off)
        return gp__fail(GP_ERROR_OUT_OF_RANGE, "%s: %s range of %zu bytes at offset %zu lies outside its %zu-byte buffer",
                        fn, which, bytes, off, b->size);
    return GP_SUCCESS;
}

int gp__host_addressable(const gp_buffer *b)
{
    return b->memory != GP_MEMORY_DEVICE || (b->dev->info.unified_memory && b->be->maps_device_buffers);
}

static gp_status check_unmapped(gp_buffer *b, const char *fn)
{
    if (atomic_load(&b->mapped))
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: the buffer is mapped; call gp_buffer_unmap first", fn);
    return GP_SUCCESS;
}

/* Takes bytes of the device's memory for a buffer; 0 when they would pass what the device
 * reports. Host memory (pinned, mapped) counts only where the device is the host. */
static uint64_t reserve(gp_device *dev, gp_memory memory, size_t bytes)
{
    if (memory != GP_MEMORY_DEVICE && !dev->info.unified_memory) return 0;
    uint64_t total = dev->info.global_mem_bytes, used = atomic_load(&dev->mem_used);
    do {
        if (total && (bytes > total || used > total - bytes)) return UINT64_MAX;
    } while (!atomic_compare_exchange_weak(&dev->mem_used, &used, used + bytes));
    return bytes;
}

gp_status gp_buffer_create(gp_device *device, gp_memory memory, size_t bytes, gp_buffer **buffer)
{
    GP__CHECK_HANDLE(device, "device");
    GP__CHECK_OUT(buffer, "buffer");
    if (memory != GP_MEMORY_DEVICE && memory != GP_MEMORY_PINNED && memory != GP_MEMORY_MAPPED)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "gp_buffer_create: memory kind %d is not a gp_memory value",
                        (int)memory);
    uint64_t counted = reserve(device, memory, bytes);
    if (counted == UINT64_MAX)
        return gp__fail(GP_ERROR_OUT_OF_DEVICE_MEMORY,
                        "gp_buffer_create: %zu bytes do not fit: buffers already hold %llu of the %llu bytes of %s:%zu (%s)",
                        bytes, (unsigned long long)atomic_load(&device->mem_used),
                        (unsigned long long)device->info.global_mem_bytes, device->info.backend,
                        device->info.backend_index, device->info.name);
    gp_buffer *b = calloc(1, sizeof *b);
    gp_status st = b ? device->be->buffer_create(device->impl, memory, bytes, &b->impl)
                     : gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "gp_buffer_create: no host memory for the handle");
    if (st != GP_SUCCESS) {
        atomic_fetch_sub(&device->mem_used, counted);
        free(b);
        return st;
    }
    b->counted = counted;
    b->align = 16;
    b->be = device->be;
    b->dev = device;
    b->size = bytes;
    b->memory = memory;
    pthread_mutex_init(&b->map_lock, NULL);
    *buffer = b;
    return GP_SUCCESS;
}

gp_status gp_buffer_destroy(gp_buffer *buffer)
{
    if (!buffer) return GP_SUCCESS;
    if (atomic_load(&buffer->mapped)) gp_buffer_unmap(NULL, buffer);
    gp_buffer_destroy(buffer->pinned_for); /* unregistered before the memory goes */
    buffer->be->buffer_destroy(buffer->dev->impl, buffer->impl);
    atomic_fetch_sub(&buffer->dev->mem_used, buffer->counted);
    pthread_mutex_destroy(&buffer->map_lock);
    free(buffer);
    return GP_SUCCESS;
}

gp_status gp_buffer_get_size(const gp_buffer *buffer, size_t *bytes)
{
    GP__CHECK_HANDLE(buffer, "buffer");
    GP__CHECK_OUT(bytes, "bytes");
    *bytes = buffer->size;
    return GP_SUCCESS;
}

gp_status gp_buffer_get_device(const gp_buffer *buffer, gp_device **device)
{
    GP__CHECK_HANDLE(buffer, "buffer");
    GP__CHECK_OUT(device, "device");
    *device = buffer->dev;
    return GP_SUCCESS;
}

gp_status gp_buffer_map(gp_stream *stream, gp_buffer *buffer, void **host)
{
    GP__CHECK_HANDLE(buffer, "buffer");
    GP__CHECK_OUT(host, "host");
    if (!gp__host_addressable(buffer))
        return gp__fail(GP_ERROR_INVALID_ARGUMENT,
                        "gp_buffer_map: only pinned and mapped buffers, and device buffers of a device that shares "
                        "the host's memory, can be mapped; read device buffers with gp_buffer_read");
    pthread_mutex_lock(&buffer->map_lock);
    gp_status st = check_unmapped(buffer, "gp_buffer_map");
    void *h = NULL;
    if (st == GP_SUCCESS) st = gp__stream_for(stream, buffer->dev, "gp_buffer_map", &stream);
    if (st == GP_SUCCESS) st = buffer->be->buffer_map(buffer->dev->impl, stream->impl, buffer->impl, buffer->size, &h);
    if (st == GP_SUCCESS) {
        atomic_store(&buffer->mapped, h);
        *host = h;
    }
    pthread_mutex_unlock(&buffer->map_lock);
    return st;
}

gp_status gp_buffer_unmap(gp_stream *stream, gp_buffer *buffer)
{
    GP__CHECK_HANDLE(buffer, "buffer");
    pthread_mutex_lock(&buffer->map_lock);
    void *h = atomic_load(&buffer->mapped);
    gp_status st = h ? gp__stream_for(stream, buffer->dev, "gp_buffer_unmap", &stream)
                     : gp__fail(GP_ERROR_INVALID_ARGUMENT, "gp_buffer_unmap: the buffer is not mapped");
    if (st == GP_SUCCESS) st = buffer->be->buffer_unmap(buffer->dev->impl, stream->impl, buffer->impl, h);
    if (st == GP_SUCCESS) atomic_store(&buffer->mapped, NULL);
    pthread_mutex_unlock(&buffer->map_lock);
    return st;
}

static gp_status do_write(gp_stream *stream, gp_buffer *dst, size_t off, const void *src, size_t bytes, int blocking,
                       const char *fn)
{
    GP__CHECK_HANDLE(dst, "dst");
    if (!src && bytes) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: src is NULL", fn);
    gp_status st = check_range(dst, off, bytes, fn, "destination");
    if (st == GP_SUCCESS) st = check_unmapped(dst, fn);
    if (st == GP_SUCCESS) st = gp__stream_for(stream, dst->dev, fn, &stream);
    if (st != GP_SUCCESS || bytes == 0) return st;
    gp__trace_token *t = gp__trace_begin(stream);
    st = dst->be->write(dst->dev->impl, stream->impl, dst->impl, off, src, bytes, blocking);
    gp__trace_end(t, st, "write", "host->device", bytes, 0, NULL);
    return st;
}

static gp_status do_read(gp_stream *stream, gp_buffer *src, size_t off, void *dst, size_t bytes, int blocking,
                      const char *fn)
{
    GP__CHECK_HANDLE(src, "src");
    if (!dst && bytes) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: dst is NULL", fn);
    gp_status st = check_range(src, off, bytes, fn, "source");
    if (st == GP_SUCCESS) st = check_unmapped(src, fn);
    if (st == GP_SUCCESS) st = gp__stream_for(stream, src->dev, fn, &stream);
    if (st != GP_SUCCESS || bytes == 0) return st;
    gp__trace_token *t = gp__trace_begin(stream);
    st = src->be->read(src->dev->impl, stream->impl, src->impl, off, dst, bytes, blocking);
    gp__trace_end(t, st, "read", "device->host", bytes, 0, NULL);
    return st;
}

/* A copy within a CPU device, as a kernel on every core (kernels/copy.gp) rather than the
 * driver's copy on one thread: on pocl 3.1 (2 cores), 16 MiB took 0.45 ms by clEnqueueCopyBuffer;
 * the 16 cores of pocl 5.0 ran its copy at 0.18x a multi-threaded memcpy. Small copies, which
 * would wait for the compile of the kernel on first use, stay with the driver. */
#define CPU_COPY_MIN ((size_t)1 << 20)
/* From here on the copy's stores bypass the caches: copies this large would push their own
 * data out of a CPU's last-level cache anyway. */
#define CPU_COPY_STREAM ((size_t)64 << 20)
static gp_status cpu_copy(gp_stream *stream, gp_buffer *dst, size_t doff, gp_buffer *src, size_t soff, size_t bytes,
                          int blocking)
{
    gp_kernel *k;
    gp_status st = gp__builtin_kernel(dst->dev, gp__src_copy, "", "gp_copy_cpu", 7, &k);
    if (st != GP_SUCCESS) return st;
    uint64_t per = bytes / (4 * (dst->dev->info.compute_units ? dst->dev->info.compute_units : 1));
    per = per < 65536 ? 65536 : (per + 4095) / 4096 * 4096;
    uint64_t d = doff, s = soff, n = bytes;
    uint32_t streaming = bytes >= CPU_COPY_STREAM;
    size_t global = (size_t)((n + per - 1) / per), local = 1;
    gp_arg args[] = {GP_BUFFER(dst), GP_VALUE(d),   GP_BUFFER(src),
                     GP_VALUE(s),    GP_VALUE(n),   GP_VALUE(per), GP_VALUE(streaming)};
    st = gp_kernel_launch(stream, k, 1, &global, &local, 7, args);
    return st == GP_SUCCESS && blocking ? gp_stream_synchronize(stream) : st;
}

static gp_status do_copy(gp_stream *stream, gp_buffer *dst, size_t doff, gp_buffer *src, size_t soff, size_t bytes,
                      int blocking, const char *fn)
{
    GP__CHECK_HANDLE(dst, "dst");
    GP__CHECK_HANDLE(src, "src");
    gp_status st = check_range(dst, doff, bytes, fn, "destination");
    if (st == GP_SUCCESS) st = check_range(src, soff, bytes, fn, "source");
    if (st == GP_SUCCESS && dst == src && bytes && doff < soff + bytes && soff < doff + bytes)
        st = gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: source and destination ranges overlap", fn);
    if (st == GP_SUCCESS) st = check_unmapped(dst, fn);
    if (st == GP_SUCCESS) st = check_unmapped(src, fn);
    if (st == GP_SUCCESS && dst->dev != src->dev) return gp__copy_between(stream, dst, doff, src, soff, bytes, blocking, fn);
    if (st == GP_SUCCESS) st = gp__stream_for(stream, dst->dev, fn, &stream);
    if (st != GP_SUCCESS || bytes == 0) return st;
    if (dst->dev->info.type == GP_DEVICE_CPU && bytes >= CPU_COPY_MIN)
        return cpu_copy(stream, dst, doff, src, soff, bytes, blocking);
    gp__trace_token *t = gp__trace_begin(stream);
    st = dst->be->copy(dst->dev->impl, stream->impl, dst->impl, doff, src->impl, soff, bytes, blocking);
    gp__trace_end(t, st, "copy", "device->device", bytes, 0, NULL);
    return st;
}

static gp_status do_fill(gp_stream *stream, gp_buffer *dst, size_t off, size_t bytes, const void *pattern, size_t psize,
                      int blocking, const char *fn)
{
    GP__CHECK_HANDLE(dst, "dst");
    if (!pattern) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: pattern is NULL", fn);
    if (psize != 1 && psize != 2 && psize != 4 && psize != 8)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: pattern size %zu is not 1, 2, 4 or 8", fn, psize);
    if (off % psize || bytes % psize)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: offset %zu and size %zu must be multiples of the %zu-byte pattern",
                        fn, off, bytes, psize);
    gp_status st = check_range(dst, off, bytes, fn, "destination");
    if (st == GP_SUCCESS) st = check_unmapped(dst, fn);
    if (st == GP_SUCCESS) st = gp__stream_for(stream, dst->dev, fn, &stream);
    if (st != GP_SUCCESS || bytes == 0) return st;
    gp__trace_token *t = gp__trace_begin(stream);
    st = dst->be->fill(dst->dev->impl, stream->impl, dst->impl, off, bytes, pattern, psize, blocking);
    gp__trace_end(t, st, "fill", "", bytes, 0, NULL);
    return st;
}

gp_status gp_buffer_write(gp_stream *s, gp_buffer *dst, size_t off, const void *src, size_t bytes)
{
    return do_write(s, dst, off, src, bytes, 1, __func__);
}
gp_status gp_buffer_write_async(gp_stream *s, gp_buffer *dst, size_t off, const void *src, size_t bytes)
{
    return do_write(s, dst, off, src, bytes, 0, __func__);
}
gp_status gp_buffer_read(gp_stream *s, gp_buffer *src, size_t off, void *dst, size_t bytes)
{
    return do_read(s, src, off, dst, bytes, 1, __func__);
}
gp_status gp_buffer_read_async(gp_stream *s, gp_buffer *src, size_t off, void *dst, size_t bytes)
{
    return do_read(s, src, off, dst, bytes, 0, __func__);
}
gp_status gp_buffer_copy(gp_stream *s, gp_buffer *dst, size_t doff, gp_buffer *src, size_t soff, size_t bytes)
{
    return do_copy(s, dst, doff, src, soff, bytes, 1, __func__);
}
gp_status gp_buffer_copy_async(gp_stream *s, gp_buffer *dst, size_t doff, gp_buffer *src, size_t soff, size_t bytes)
{
    return do_copy(s, dst, doff, src, soff, bytes, 0, __func__);
}
gp_status gp_buffer_fill(gp_stream *s, gp_buffer *dst, size_t off, size_t bytes, const void *pattern, size_t psize)
{
    return do_fill(s, dst, off, bytes, pattern, psize, 1, __func__);
}
gp_status gp_buffer_fill_async(gp_stream *s, gp_buffer *dst, size_t off, size_t bytes, const void *pattern,
                               size_t psize)
{
    return do_fill(s, dst, off, bytes, pattern, psize, 0, __func__);
}
