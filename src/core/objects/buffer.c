/* Buffers: made, freed, asked about, mapped. Ranges are checked here and in move.c, so plugins
 * see only valid work. */
#include "internal.h"

#include <stdlib.h>

gp_status gp__check_range(const gp_buffer *b, size_t off, size_t bytes, const char *fn, const char *which)
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

gp_status gp__check_unmapped(gp_buffer *b, const char *fn)
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

/* The alignment of an address, at most 16 (gp_buffer.align). */
unsigned gp__align_of(uint64_t address)
{
    unsigned a = 1;
    while (a < 16 && address % (2 * a) == 0) a *= 2;
    return a;
}

/* A gp_buffer around a plugin buffer (a wrap, register or program_global hook's); frees impl on failure. */
gp_status gp__buffer_adopt(gp_device *dev, void *impl, size_t bytes, gp_memory memory, unsigned align, gp_buffer **out)
{
    gp_buffer *b = calloc(1, sizeof *b);
    if (!b) {
        dev->be->buffer_destroy(dev->impl, impl);
        return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "no host memory for the buffer's handle");
    }
    b->be = dev->be;
    b->dev = dev;
    b->impl = impl;
    b->size = bytes;
    b->memory = memory;
    b->align = align;
    pthread_mutex_init(&b->map_lock, NULL);
    *out = b;
    return GP_SUCCESS;
}

gp_status gp_buffer_destroy(gp_buffer *buffer)
{
    if (!buffer) return GP_SUCCESS;
    if (buffer->of_program)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "gp_buffer_destroy: the buffer is a program's __constant__ or "
                        "__device__ variable (gp_program_get_global); it goes with the program");
    gp__buffer_free(buffer);
    return GP_SUCCESS;
}

void gp__buffer_free(gp_buffer *buffer)
{
    if (atomic_load(&buffer->mapped)) gp_buffer_unmap(NULL, buffer);
    gp_buffer_destroy(buffer->pinned_for); /* unregistered before the memory goes */
    buffer->be->buffer_destroy(buffer->dev->impl, buffer->impl);
    atomic_fetch_sub(&buffer->dev->mem_used, buffer->counted);
    pthread_mutex_destroy(&buffer->map_lock);
    free(buffer);
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
    gp_status st = gp__check_unmapped(buffer, "gp_buffer_map");
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

