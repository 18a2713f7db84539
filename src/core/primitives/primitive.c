/* What the primitives share: which variant of a kernel runs, the scratch memory and lock kept
 * with each stream (the stream frees it through its cleanup), and the checks of operands. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gp__variant(const gp_device *dev, const gp__variants *v)
{
    const char *env = getenv(v->env);
    for (int i = 0; env && i < 2; i++)
        if (strcmp(env, v->name[i]) == 0) return i;
    return dev->info.type == GP_DEVICE_CPU;
}

gp_status gp__variant_check(const gp__variants *v, const char *fn)
{
    const char *env = getenv(v->env);
    if (!env || !*env || strcmp(env, v->name[0]) == 0 || strcmp(env, v->name[1]) == 0) return GP_SUCCESS;
    return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %s is '%s'; it must be %s or %s", fn, v->env, env, v->name[0],
                    v->name[1]);
}

/* *slot, one of the stream's buffers, made at least bytes long. */
static void release_scratch(gp_stream *stream);

static gp_status grow(gp_stream *stream, gp_buffer **slot, size_t bytes)
{
    if (*slot && (*slot)->size >= bytes) return GP_SUCCESS;
    stream->cleanup = release_scratch;
    /* Work still queued may use the old buffer: wait for it before freeing. */
    gp_status st = stream->be->stream_synchronize(stream->dev->impl, stream->impl);
    if (st != GP_SUCCESS) return st;
    gp_buffer_destroy(*slot);
    *slot = NULL;
    /* Room to grow by half again, so that slowly growing inputs do not reallocate each time. */
    size_t want = bytes + bytes / 2 < bytes ? bytes : bytes + bytes / 2;
    return gp_buffer_create(stream->dev, GP_MEMORY_DEVICE, want < 4096 ? 4096 : want, slot);
}

gp_status gp__scratch(gp_stream *stream, size_t bytes, gp_buffer **buffer)
{
    gp_status st = grow(stream, &stream->scratch, bytes);
    if (st == GP_SUCCESS) *buffer = stream->scratch;
    return st;
}

/* The last stamp before the words are zeroed again: kernels/scan.gp keeps two bits of status
 * below it in a 32-bit tag. */
#define STAMP_LAST ((1u << 30) - 1)

/* Only tagged words and the kernels' counter (which each kernel leaves at zero) are ever
 * written to stream->sync, so a word reads as this call's only when this call wrote it: the
 * buffer is zeroed when it is made, and again before the stamps come round. */
gp_status gp__sync(gp_stream *stream, size_t bytes, gp_buffer **buffer, uint32_t *stamp)
{
    int fresh = !stream->sync || stream->sync->size < bytes;
    gp_status st = grow(stream, &stream->sync, bytes);
    if (st == GP_SUCCESS && (fresh || stream->stamp >= STAMP_LAST)) {
        static const uint32_t zero = 0;
        stream->stamp = 0;
        st = gp_buffer_fill_async(stream, stream->sync, 0, stream->sync->size, &zero, sizeof zero);
        if (st != GP_SUCCESS) { /* not known to be zero: make it again next time */
            gp_buffer_destroy(stream->sync);
            stream->sync = NULL;
        }
    }
    if (st == GP_SUCCESS) {
        *buffer = stream->sync;
        *stamp = ++stream->stamp;
    }
    return st;
}

gp_status gp_stream_trim(gp_stream *stream)
{
    if (!stream) return gp__each_default_stream(gp_stream_trim);
    pthread_mutex_lock(&stream->lock);
    gp_status st = stream->be->stream_synchronize(stream->dev->impl, stream->impl);
    if (st == GP_SUCCESS) {
        gp_buffer_destroy(stream->scratch);
        gp_buffer_destroy(stream->sync);
        stream->scratch = stream->sync = NULL;
    }
    pthread_mutex_unlock(&stream->lock);
    return st;
}

/* The stream's cleanup (see struct gp_stream): its scratch goes with it. */
static void release_scratch(gp_stream *stream)
{
    gp_buffer_destroy(stream->scratch);
    gp_buffer_destroy(stream->sync);
    stream->scratch = stream->sync = NULL;
}

gp_status gp__primitive_begin(gp_stream **stream, gp_device *dev, const char *fn)
{
    gp_status st = gp__stream_for(*stream, dev, fn, stream);
    if (st == GP_SUCCESS) pthread_mutex_lock(&(*stream)->lock);
    return st;
}

void gp__primitive_end(gp_stream *stream) { pthread_mutex_unlock(&stream->lock); }

int gp__view_aligned(gp_view view, gp_type type, size_t bytes)
{
    return view.buffer->align % bytes == 0 && view.offset * gp_type_size(type) % bytes == 0;
}

gp_status gp__check_view(gp_view view, gp_type type, size_t n, const char *fn, const char *which)
{
    if (!view.buffer) return gp__fail(GP_ERROR_INVALID_HANDLE, "%s: the %s view has no buffer", fn, which);
    size_t size = gp_type_size(type), elems = view.buffer->size / size;
    if (view.offset > elems || n > elems - view.offset)
        return gp__fail(GP_ERROR_OUT_OF_RANGE,
                        "%s: %s elements [%zu, %zu + %zu) lie outside its buffer of %zu elements of %zu bytes", fn,
                        which, view.offset, view.offset, n, elems, size);
    if (atomic_load(&view.buffer->mapped))
        return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: the %s buffer is mapped; call gp_buffer_unmap first", fn, which);
    return GP_SUCCESS;
}
