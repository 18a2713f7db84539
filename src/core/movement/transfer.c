/* Copies between buffers of two devices (move.c has checked the ranges). Core decides how: peer
 * to peer where one plugin connects both devices; one copy from or into the memory itself where
 * the host can address either buffer (a CPU device's, a pinned one); else through memory kept
 * for the pair, in chunks, reading the next chunk from the source while the last is written to
 * the destination: the GPU's own memory where the two devices are one GPU of two plugins, one
 * of which exports memory that the other imports (CUDA and NVIDIA's OpenCL), else pinned host
 * memory. Plugins never learn of each other. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_CHUNK ((size_t)8 << 20)
/* Pieces of the pinned memory: reads run up to SLOTS - 1 chunks ahead of the writes, so neither
 * stream waits on the host's turn between them (two, a read beside a write, kept an H100's
 * copies between CUDA and NVIDIA's OpenCL at 0.75-0.84x the pinned copies). */
#define SLOTS 4
/* Staged in the GPU's memory: the two plugins' contexts take turns on the GPU, on an H200 about
 * 0.3 ms a copy whatever its size, so the chunks are large and copies of fewer than SHARED_MIN
 * bytes go through the host (CUDA and NVIDIA's OpenCL there, 64 MiB: 176-182 GB/s against 45-46
 * through the host; 16 MiB: 50 against 32; docs/interop.md). */
#define SHARED_CHUNK ((size_t)64 << 20)
#define SHARED_SLOTS 2
#define SHARED_MIN ((size_t)16 << 20)

/* What one ordered pair of devices keeps for the life of the process. */
typedef struct pair {
    gp_device *src, *dst;
    pthread_mutex_t lock;  /* one copy at a time through the pair's memory and events */
    gp_event *mark_dst, *mark_src; /* peer: order the other device's default stream around the copy */
    size_t chunk;          /* staged: the bytes of each slot of the pinned memory */
    gp_buffer *pinned;     /* staged: SLOTS * chunk bytes, pinned by one of the devices, mapped for life */
    gp_buffer *registered; /* the same memory registered with the other device, where it can be */
    unsigned char *host;
    gp_buffer *shared[2]; /* staged on the GPU: one memory, as a buffer of src and one of dst */
    int shared_tried;
    gp_event *read_done[SLOTS], *write_done[SLOTS];
    int reading[SLOTS], writing[SLOTS]; /* work on a slot that may still run */
    struct pair *next;
} pair;

static pthread_mutex_t pairs_lock = PTHREAD_MUTEX_INITIALIZER;
static pair *pairs;

static int peer(gp_device *dst, gp_device *src)
{
    const char *path = getenv("GPUPORT_COPY_PATH");
    if (path && strcmp(path, "staged") == 0) return 0;
    return dst->be == src->be && dst->be->can_copy_peer && dst->be->copy_peer &&
           dst->be->can_copy_peer(dst->impl, src->impl);
}

/* GPUPORT_COPY_CHUNK: the bytes of each staged piece, 4 KiB to 1 GiB. */
static gp_status chunk_size(size_t *chunk)
{
    const char *env = getenv("GPUPORT_COPY_CHUNK");
    unsigned long long v;
    const char *s = env;
    *chunk = DEFAULT_CHUNK;
    if (!env || !*env) return GP_SUCCESS;
    if (!gp__parse_number(&s, (unsigned long long)1 << 30, &v) || *s || v < 4096)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "GPUPORT_COPY_CHUNK is '%s'; it must be a number of bytes from 4096 "
                        "to 1073741824", env);
    *chunk = (size_t)v;
    return GP_SUCCESS;
}

/* Whether host memory the device did not allocate runs at pinned speed once registered with it:
 * so on CUDA and HIP (cuMemHostRegister); OpenCL has no such call (CL_MEM_USE_HOST_PTR gives a
 * buffer, not a faster host pointer), so there only memory it allocated itself is fast. */
static int registers_host(const gp_device *dev)
{
    return dev->info.type == GP_DEVICE_GPU && dev->be->buffer_register && strcmp(dev->info.backend, "opencl") != 0;
}

/* The device whose pinned memory stages the copy: a GPU's, so that its side runs at pinned
 * speed (a CPU device copies host memory at memcpy speed anyway); of two GPUs, one that cannot
 * register host memory, since the other then registers this memory and both run at pinned
 * speed (measured on an H100: NVIDIA OpenCL read into CUDA's pinned memory at 10.5 GB/s, into
 * its own at 54.6, and CUDA at 53.7 into OpenCL's once registered); else the destination. */
static gp_device *owner(gp_device *dst, gp_device *src)
{
    int dg = dst->info.type == GP_DEVICE_GPU, sg = src->info.type == GP_DEVICE_GPU;
    if (dg != sg) return dg ? dst : src;
    return registers_host(dst) && !registers_host(src) ? src : dst;
}

/* Registers a host-addressable buffer's memory with the GPU that copies into or out of it, once
 * per buffer (the first such GPU; later ones copy at pageable speed), for the buffer's life:
 * gp_buffer_destroy drops it first. Where registering fails the copy still runs, from
 * pageable memory, so the failure is not the caller's. */
static void pin_for(gp_buffer *b, unsigned char *host, gp_device *dev)
{
    if (b->dev == dev || b->dev->be == dev->be || !registers_host(dev)) return;
    pthread_mutex_lock(&pairs_lock);
    if (!b->pinned_for) {
        char *saved = strdup(gp_last_error()); /* the copy succeeds, so its caller's error stays */
        if (gp_buffer_register_host(dev, host, b->size, &b->pinned_for) != GP_SUCCESS) {
            b->pinned_for = NULL;
            if (saved) gp__set_error_text(saved);
        }
        free(saved);
    }
    pthread_mutex_unlock(&pairs_lock);
}

static gp_status make_pair(gp_device *dst, gp_device *src, pair **out)
{
    pair *p = calloc(1, sizeof *p);
    if (!p) return gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "no host memory for a copy between devices");
    p->src = src;
    p->dst = dst;
    gp_status st = GP_SUCCESS;
    if (peer(dst, src)) {
        st = gp_event_create(dst, &p->mark_dst);
        if (st == GP_SUCCESS) st = gp_event_create(src, &p->mark_src);
    } else {
        st = chunk_size(&p->chunk);
        if (st == GP_SUCCESS) st = gp_buffer_create(owner(dst, src), GP_MEMORY_PINNED, SLOTS * p->chunk, &p->pinned);
        if (st == GP_SUCCESS) st = gp_buffer_map(NULL, p->pinned, (void **)&p->host);
        gp_device *other = p->pinned && p->pinned->dev == dst ? src : dst;
        if (st == GP_SUCCESS && other->be != p->pinned->dev->be && registers_host(other))
            st = gp_buffer_register_host(other, p->host, SLOTS * p->chunk, &p->registered);
        for (int h = 0; h < SLOTS && st == GP_SUCCESS; h++) {
            st = gp_event_create(src, &p->read_done[h]);
            if (st == GP_SUCCESS) st = gp_event_create(dst, &p->write_done[h]);
        }
    }
    if (st != GP_SUCCESS) {
        gp_event_destroy(p->mark_dst);
        gp_event_destroy(p->mark_src);
        gp_buffer_destroy(p->registered);
        gp_buffer_destroy(p->pinned);
        for (int h = 0; h < SLOTS; h++) {
            gp_event_destroy(p->read_done[h]);
            gp_event_destroy(p->write_done[h]);
        }
        free(p);
        return st;
    }
    pthread_mutex_init(&p->lock, NULL);
    *out = p;
    return GP_SUCCESS;
}

/* The pair's state, made on its first copy. */
static gp_status pair_of(gp_device *dst, gp_device *src, pair **out)
{
    pthread_mutex_lock(&pairs_lock);
    pair *p = pairs;
    while (p && !(p->dst == dst && p->src == src)) p = p->next;
    gp_status st = GP_SUCCESS;
    if (!p && (st = make_pair(dst, src, &p)) == GP_SUCCESS) {
        p->next = pairs;
        pairs = p;
    }
    pthread_mutex_unlock(&pairs_lock);
    *out = p;
    return st;
}

/* A peer copy on stream: it waits for the other device's default stream, and that stream then
 * waits for it (CUDA and HIP streams wait on another device's events on the device). */
static gp_status copy_peer(pair *p, gp_stream *stream, gp_buffer *dst, size_t doff, gp_buffer *src, size_t soff,
                           size_t bytes, int blocking)
{
    int other_is_dst = stream->dev != dst->dev;
    gp_stream *other = (other_is_dst ? dst->dev : src->dev)->default_stream;
    gp_event *on_other = other_is_dst ? p->mark_dst : p->mark_src, *on_stream = other_is_dst ? p->mark_src : p->mark_dst;
    gp_status st = gp_event_record(on_other, other);
    if (st == GP_SUCCESS) st = gp_stream_wait_event(stream, on_other);
    if (st == GP_SUCCESS) {
        gp__trace_token *t = gp__trace_begin(stream);
        st = dst->be->copy_peer(dst->dev->impl, stream->impl, dst->impl, doff, src->dev->impl, src->impl, soff, bytes,
                                blocking);
        gp__trace_end(t, st, "copy", "device->device (peer)", bytes, 0, NULL);
    }
    if (st == GP_SUCCESS) st = gp_event_record(on_stream, stream);
    if (st == GP_SUCCESS) st = gp_stream_wait_event(other, on_stream);
    return st;
}

/* Whether the pair's copies can stage in the GPU's memory: made on the first copy that would,
 * where the devices are one GPU. Where they cannot, the host stages, and the caller's error
 * stays (GPUPORT_DEBUG=copy says why). */
static int shared_ready(pair *p)
{
    if (!p->shared_tried) {
        p->shared_tried = 1;
        if (gp__same_gpu(p->src, p->dst)) {
            char *saved = strdup(gp_last_error());
            int ok = gp__buffer_share(p->src, p->dst, SHARED_SLOTS * SHARED_CHUNK, &p->shared[0], &p->shared[1]) ==
                     GP_SUCCESS;
            gp__debug("copy", "%s:%zu to %s:%zu, one GPU: copies from %zu MiB stage %s%s", p->src->info.backend,
                      p->src->info.backend_index, p->dst->info.backend, p->dst->info.backend_index, SHARED_MIN >> 20,
                      ok ? "in its memory" : "through the host: ", ok ? "" : gp_last_error());
            if (saved) gp__set_error_text(saved);
            free(saved);
        }
    }
    return p->shared[0] != NULL;
}

/* Staged: chunk i is read into slot i % slots on the source's stream while earlier chunks are
 * written from theirs on the destination's; the host waits for each read before its write. The
 * slots are the pair's pinned memory, or with shared its memory on the GPU. */
static gp_status copy_staged(pair *p, int shared, gp_stream *ss, gp_stream *ds, gp_buffer *dst, size_t doff,
                             gp_buffer *src, size_t soff, size_t bytes, int blocking, const char *fn)
{
    size_t chunk = shared ? SHARED_CHUNK : p->chunk, slots = shared ? SHARED_SLOTS : SLOTS;
    size_t pieces = bytes / chunk + (bytes % chunk != 0);
    gp_status st = GP_SUCCESS;
    /* A slot may be written to only once what last used it is done. */
#define FREE_SLOT(h)                                                                               \
    do {                                                                                           \
        if (st == GP_SUCCESS && p->writing[h]) st = gp_event_synchronize(p->write_done[h]);        \
        if (st == GP_SUCCESS) p->writing[h] = 0;                                                   \
        if (st == GP_SUCCESS && p->reading[h]) st = gp_event_synchronize(p->read_done[h]);         \
        if (st == GP_SUCCESS) p->reading[h] = 0;                                                   \
    } while (0)
#define READ(i)                                                                                    \
    do {                                                                                           \
        size_t h_ = (i) % slots, at_ = (i) * chunk, n_ = bytes - at_ < chunk ? bytes - at_ : chunk; \
        FREE_SLOT(h_);                                                                             \
        if (st == GP_SUCCESS)                                                                      \
            st = shared ? gp__copy_within(ss, p->shared[0], h_ * chunk, src, soff + at_, n_, 0, fn)  \
                        : gp_buffer_read_async(ss, src, soff + at_, p->host + h_ * chunk, n_);     \
        if (st == GP_SUCCESS) st = gp_event_record(p->read_done[h_], ss);                          \
        if (st == GP_SUCCESS) p->reading[h_] = 1;                                                  \
    } while (0)
    for (size_t i = 0; i < pieces && i < slots - 1; i++) READ(i);
    for (size_t i = 0; i < pieces && st == GP_SUCCESS; i++) {
        size_t h = i % slots, at = i * chunk, n = bytes - at < chunk ? bytes - at : chunk;
        if (st == GP_SUCCESS) st = gp_event_synchronize(p->read_done[h]);
        if (st == GP_SUCCESS) p->reading[h] = 0;
        if (st == GP_SUCCESS)
            st = shared ? gp__copy_within(ds, dst, doff + at, p->shared[1], h * chunk, n, 0, fn)
                        : gp_buffer_write_async(ds, dst, doff + at, p->host + h * chunk, n);
        if (st == GP_SUCCESS) st = gp_event_record(p->write_done[h], ds);
        if (st == GP_SUCCESS) p->writing[h] = 1;
        if (i + slots - 1 < pieces) READ(i + slots - 1);
    }
    for (size_t h = 0; h < SLOTS && st == GP_SUCCESS && blocking; h++) FREE_SLOT(h);
#undef READ
#undef FREE_SLOT
    return st;
}

gp_status gp__copy_between(gp_stream *stream, gp_buffer *dst, size_t doff, gp_buffer *src, size_t soff, size_t bytes,
                           int blocking, const char *fn)
{
    if (!stream) stream = dst->dev->default_stream;
    if (stream->dev != dst->dev && stream->dev != src->dev)
        return gp__fail(GP_ERROR_DEVICE_MISMATCH, "%s: the stream is on %s:%zu, neither the source's %s:%zu nor the "
                        "destination's %s:%zu", fn, stream->dev->info.backend, stream->dev->info.backend_index,
                        src->dev->info.backend, src->dev->info.backend_index, dst->dev->info.backend,
                        dst->dev->info.backend_index);
    if (bytes == 0) return GP_SUCCESS;
    /* GPUPORT_COPY_PATH=staged takes the staged path wherever it could go: to compare, and to test. */
    const char *path = getenv("GPUPORT_COPY_PATH");
    int staged_only = path && strcmp(path, "staged") == 0;
    if (path && *path && !staged_only && strcmp(path, "auto") != 0)
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: GPUPORT_COPY_PATH is '%s'; it must be auto or staged", fn, path);
    gp_status st;
    /* Where the host can address a side, one copy straight into or out of it (the host waits). */
    gp_stream *ss = stream->dev == src->dev ? stream : src->dev->default_stream;
    gp_stream *ds = stream->dev == dst->dev ? stream : dst->dev->default_stream;
    if (!staged_only && !peer(dst->dev, src->dev) && (gp__host_addressable(src) || gp__host_addressable(dst))) {
        int from_src = gp__host_addressable(src);
        gp_buffer *mapped = from_src ? src : dst;
        unsigned char *host = NULL;
        st = gp_buffer_map(from_src ? ss : ds, mapped, (void **)&host);
        if (st == GP_SUCCESS) pin_for(mapped, host, from_src ? dst->dev : src->dev);
        if (st == GP_SUCCESS) {
            st = from_src ? gp_buffer_write(ds, dst, doff, host + soff, bytes) : gp_buffer_read(ss, src, soff, host + doff, bytes);
            gp_status un = gp_buffer_unmap(from_src ? ss : ds, mapped);
            if (st == GP_SUCCESS) st = un;
        }
        return st;
    }
    pair *p = NULL;
    if ((st = pair_of(dst->dev, src->dev, &p)) != GP_SUCCESS) return st;
    pthread_mutex_lock(&p->lock);
    if (p->pinned) {
        int shared = !staged_only && bytes >= SHARED_MIN && shared_ready(p);
        st = copy_staged(p, shared, ss, ds, dst, doff, src, soff, bytes, blocking, fn);
    } else {
        st = copy_peer(p, stream, dst, doff, src, soff, bytes, blocking);
    }
    pthread_mutex_unlock(&p->lock);
    return st;
}

/* gp_buffer_copy's checks, then the copy within a device (move.c) or between two. */
static gp_status do_copy(gp_stream *stream, gp_buffer *dst, size_t doff, gp_buffer *src, size_t soff, size_t bytes,
                         int blocking, const char *fn)
{
    GP__CHECK_HANDLE(dst, "dst");
    GP__CHECK_HANDLE(src, "src");
    gp_status st = gp__check_range(dst, doff, bytes, fn, "destination");
    if (st == GP_SUCCESS) st = gp__check_range(src, soff, bytes, fn, "source");
    if (st == GP_SUCCESS && dst == src && bytes && doff < soff + bytes && soff < doff + bytes)
        st = gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: source and destination ranges overlap", fn);
    if (st == GP_SUCCESS) st = gp__check_unmapped(dst, fn);
    if (st == GP_SUCCESS) st = gp__check_unmapped(src, fn);
    if (st != GP_SUCCESS) return st;
    if (dst->dev != src->dev) return gp__copy_between(stream, dst, doff, src, soff, bytes, blocking, fn);
    return gp__copy_within(stream, dst, doff, src, soff, bytes, blocking, fn);
}

gp_status gp_buffer_copy(gp_stream *s, gp_buffer *dst, size_t doff, gp_buffer *src, size_t soff, size_t bytes)
{
    return do_copy(s, dst, doff, src, soff, bytes, 1, __func__);
}
gp_status gp_buffer_copy_async(gp_stream *s, gp_buffer *dst, size_t doff, gp_buffer *src, size_t soff, size_t bytes)
{
    return do_copy(s, dst, doff, src, soff, bytes, 0, __func__);
}
