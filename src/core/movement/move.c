/* Data movement within a device and from and to the host: writes, reads, copies within a device
 * (transfer.c takes gp_buffer_copy's calls and copies between devices) and fills, each range
 * checked first. */
#include "internal.h"

#include <stdlib.h>


static gp_status do_write(gp_stream *stream, gp_buffer *dst, size_t off, const void *src, size_t bytes, int blocking,
                       const char *fn)
{
    GP__CHECK_HANDLE(dst, "dst");
    if (!src && bytes) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: src is NULL", fn);
    gp_status st = gp__check_range(dst, off, bytes, fn, "destination");
    if (st == GP_SUCCESS) st = gp__check_unmapped(dst, fn);
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
    gp_status st = gp__check_range(src, off, bytes, fn, "source");
    if (st == GP_SUCCESS) st = gp__check_unmapped(src, fn);
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

gp_status gp__copy_within(gp_stream *stream, gp_buffer *dst, size_t doff, gp_buffer *src, size_t soff, size_t bytes,
                          int blocking, const char *fn)
{
    gp_status st = gp__stream_for(stream, dst->dev, fn, &stream);
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
    gp_status st = gp__check_range(dst, off, bytes, fn, "destination");
    if (st == GP_SUCCESS) st = gp__check_unmapped(dst, fn);
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
gp_status gp_buffer_fill(gp_stream *s, gp_buffer *dst, size_t off, size_t bytes, const void *pattern, size_t psize)
{
    return do_fill(s, dst, off, bytes, pattern, psize, 1, __func__);
}
gp_status gp_buffer_fill_async(gp_stream *s, gp_buffer *dst, size_t off, size_t bytes, const void *pattern,
                               size_t psize)
{
    return do_fill(s, dst, off, bytes, pattern, psize, 0, __func__);
}
