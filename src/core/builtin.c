/* What the primitives share: built-in kernels compiled once per device, the scratch memory and
 * lock kept with each stream, and the checks of their operands. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gp__builtin {
    const char *source; /* embedded text: compared by address */
    const char *options, *name; /* in text[] */
    gp_program *program;
    gp_kernel *kernel;
    gp__builtin *next;
    char text[];
};

size_t gp_type_size(gp_type type)
{
    switch (type) {
    case GP_F32: case GP_I32: case GP_U32: return 4;
    case GP_F64: case GP_I64: case GP_U64: return 8;
    case GP_TYPE_NONE: break;
    }
    return 0;
}

const char *gp__type_name(gp_type type)
{
    static const char *const names[] = {"value of no gp_type", "float", "double", "int", "uint", "long", "ulong"};
    return gp_type_size(type) ? names[type] : names[0];
}

const char *gp__type_option(gp_device *dev, gp_type type, const char *fn)
{
    static const char *const options[] = {NULL, "-DGP_TYPE=1", "-DGP_TYPE=2", "-DGP_TYPE=3",
                                          "-DGP_TYPE=4", "-DGP_TYPE=5", "-DGP_TYPE=6"};
    if (gp_type_size(type) == 0) {
        gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_type", fn, (int)type);
        return NULL;
    }
    if (type == GP_F64 && !dev->info.fp64) {
        gp__fail(GP_ERROR_UNSUPPORTED, "%s: %s:%zu (%s) has no double precision", fn, dev->info.backend,
                 dev->info.backend_index, dev->info.name);
        return NULL;
    }
    return options[type];
}

gp_status gp__builtin_kernel(gp_device *dev, const char *source, const char *options, const char *name,
                             size_t nparams, gp_kernel **kernel)
{
    /* Compiling under the lock keeps two threads from building the same kernel twice; it
     * happens once per kernel and device. */
    pthread_mutex_lock(&dev->lock);
    gp_status st = GP_SUCCESS;
    gp__builtin *b = dev->builtins;
    while (b && !(b->source == source && strcmp(b->options, options) == 0 && strcmp(b->name, name) == 0))
        b = b->next;
    gp_program *program = NULL;
    if (!b) {
        /* Another kernel of the same source and options shares the program. */
        for (gp__builtin *o = dev->builtins; o && !program; o = o->next)
            if (o->source == source && strcmp(o->options, options) == 0) program = o->program;
        size_t olen = strlen(options) + 1, nlen = strlen(name) + 1;
        b = calloc(1, sizeof *b + olen + nlen);
        if (!b) st = gp__fail(GP_ERROR_OUT_OF_HOST_MEMORY, "no host memory for a built-in kernel");
        if (st == GP_SUCCESS && !program) st = gp_program_create(dev, source, options, &program);
        else if (st == GP_SUCCESS) atomic_fetch_add(&program->refs, 1);
        if (st == GP_SUCCESS) {
            st = gp__kernel_create(program, name, nparams, &b->kernel);
            gp_program_destroy(program); /* the kernel holds it */
        }
        if (st == GP_SUCCESS) {
            b->source = source;
            b->options = memcpy(b->text, options, olen);
            b->name = memcpy(b->text + olen, name, nlen);
            b->program = program;
            b->next = dev->builtins;
            dev->builtins = b;
        } else {
            free(b);
            b = NULL;
        }
    }
    pthread_mutex_unlock(&dev->lock);
    if (b) *kernel = b->kernel;
    return st;
}

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
static gp_status grow(gp_stream *stream, gp_buffer **slot, size_t bytes)
{
    if (*slot && (*slot)->size >= bytes) return GP_SUCCESS;
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

void gp__stream_release(gp_stream *stream)
{
    gp_buffer_destroy(stream->scratch);
    gp_buffer_destroy(stream->sync);
    stream->scratch = stream->sync = NULL;
    pthread_mutex_destroy(&stream->lock);
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
