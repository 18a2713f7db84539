/* Core's own view of every object: each begins with its backend's table, as in the ICD loader. */
#ifndef GPUPORT_INTERNAL_H
#define GPUPORT_INTERNAL_H

#include "backends/backend.h"

#include <pthread.h>
#include <sys/types.h>
#include <stdatomic.h>

typedef struct gp__builtin gp__builtin;

struct gp_device {
    const gp__backend *be;
    void *impl;
    gp_device_info info;
    char cache_id[512];
    gp_stream *default_stream;
    pthread_mutex_t lock; /* guards the list of streams and the built-in kernels below */
    gp_stream *streams;
    gp__builtin *builtins; /* built-in kernels compiled so far, kept for the process */
    /* Bytes of the device's memory held by buffers: some drivers (pocl) allocate on first use
     * and abort when that fails, so core refuses what would not fit (objects/buffer.c). */
    _Atomic uint64_t mem_used;
};

struct gp_buffer {
    const gp__backend *be;
    gp_device *dev;
    void *impl;
    size_t size;
    gp_memory memory;
    uint64_t counted; /* bytes of dev->mem_used this buffer holds */
    pthread_mutex_t map_lock; /* map and unmap may come from any thread */
    void *_Atomic mapped;     /* the host address while mapped */
    gp_buffer *pinned_for;    /* its memory registered with the other device of a copy (transfer.c) */
    unsigned align;           /* the base address's alignment as kernels see it, in bytes, at most 16 */
    int of_program;           /* a program's __constant__ or __device__ variable: the program frees it */
};

struct gp_stream {
    const gp__backend *be;
    gp_device *dev;
    void *impl;
    gp_stream *next; /* in dev->streams */
    /* The caller's handle, plus one for each gp_device_synchronize waiting on the stream: the
     * last release frees it, so a stream destroyed meanwhile stays valid for that wait. */
    atomic_int refs;
    int owned; /* 0 for a stream wrapped with GP_BORROW: the plugin's stream is the caller's */
    /* The primitives' scratch memory; the lock keeps one primitive's launches together, so
     * that two threads sharing the stream never interleave on the same scratch. */
    pthread_mutex_t lock;
    gp_buffer *scratch;
    /* The tagged words of reduce and scan (gp__sync), and the last call's stamp. */
    gp_buffer *sync;
    uint32_t stamp;
    /* What the layer above keeps with the stream goes through this when the stream does (the
     * primitives' scratch): streams need not know the primitives. */
    void (*cleanup)(gp_stream *stream);
};

struct gp_event {
    const gp__backend *be;
    gp_device *dev;
    void *impl;
    atomic_int recorded; /* events may be shared between threads */
};

struct gp_program {
    const gp__backend *be;
    gp_device *dev;
    void *impl;
    gp_program_info info;
    char *source;  /* the caller's source and options: kernels read their parameters from them */
    char *options;
    atomic_int refs; /* the caller's handle plus one per kernel */
    int cuda_c;      /* CUDA C as written (gp_program_create_cuda on CUDA or HIP) */
    /* CUDA C's file-scope __constant__ and __device__ variables (gp_program_get_global): the
     * module's own on CUDA and HIP; on OpenCL buffers the program keeps, which every kernel
     * takes as its last arguments. */
    struct gp__global {
        char name[64];
        gp_buffer *buf;
    } *globals;
    size_t nglobals;
};

struct gp_kernel {
    const gp__backend *be;
    gp_device *dev;
    void *impl;
    gp_program *program;
    gp__kernel_props props;
    char name[128];
    gp_kernel_param *params; /* as the source declares them; NULL where it cannot be read */
    int shared_tail;         /* the last argument sizes the dynamic shared memory of CUDA C as written */
    size_t nglobals;         /* OpenCL: the program's globals follow the caller's arguments */
};

/* error.c */
gp_status gp__fail(gp_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gp__set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gp__set_error_text(const char *text);
int gp__debug_on(const char *topic);
void gp__debug(const char *topic, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
extern const gp__host gp__host_table;

/* objects/registry.c: loads the plugins once; every public entry point that needs them calls this. */
gp_status gp__init(void);

/* objects/stream.c: the stream a call runs on (NULL = the device's default), checked against dev. */
gp_status gp__stream_for(gp_stream *stream, gp_device *dev, const char *what, gp_stream **out);
/* objects/registry.c: fn on the default stream of every device, up to the first failure (what a NULL
 * stream means where a call has no device to take one from). */
gp_status gp__each_default_stream(gp_status (*fn)(gp_stream *stream));
/* objects/buffer.c: 1 when gp_buffer_map gives the buffer's memory itself to the host; an
 * error when the buffer is mapped. */
int gp__host_addressable(const gp_buffer *b);
gp_status gp__check_unmapped(gp_buffer *b, const char *fn);
/* objects/buffer.c: a gpuport buffer over a plugin's (destroyed when no host memory is left);
 * and the freeing of a buffer, which gp_buffer_destroy refuses for a program's variable. */
gp_status gp__buffer_adopt(gp_device *dev, void *impl, size_t bytes, gp_memory memory, unsigned align, gp_buffer **out);
void gp__buffer_free(gp_buffer *buffer);
unsigned gp__align_of(uint64_t address); /* at most 16 (gp_buffer.align) */
/* objects/buffer.c: an error when off + bytes pass the buffer's end (which: "source"). */
gp_status gp__check_range(const gp_buffer *b, size_t off, size_t bytes, const char *fn, const char *which);
/* movement/move.c: a copy within one device, its ranges checked (transfer.c's gp_buffer_copy). */
gp_status gp__copy_within(gp_stream *stream, gp_buffer *dst, size_t doff, gp_buffer *src, size_t soff, size_t bytes,
                          int blocking, const char *fn);
/* movement/interop.c: 1 when two devices are one GPU (their plugins' UUIDs agree); the same new
 * device memory of one GPU as a buffer of a and one of b, devices of two plugins of which one
 * exports memory and the other imports it. */
int gp__same_gpu(gp_device *a, gp_device *b);
gp_status gp__buffer_share(gp_device *a, gp_device *b, size_t bytes, gp_buffer **on_a, gp_buffer **on_b);
/* transfer.c: a copy between buffers of two devices, ranges checked (gpuport.h says how). */
gp_status gp__copy_between(gp_stream *stream, gp_buffer *dst, size_t doff, gp_buffer *src, size_t soff, size_t bytes,
                           int blocking, const char *fn);
/* A gp_stream around the plugin's stream impl, listed with the device. */
gp_status gp__stream_add(gp_device *device, void *impl, int owned, gp_stream **stream);
/* Drops a reference taken with atomic_fetch_add(&s->refs, 1); the last one frees the stream. */
void gp__stream_unref(gp_stream *stream);

/* program.c: splits a copy of build options into -D words (checked; at most 64), and joins the
 * prelude, those words as #define lines and the source into what program_build compiles. */
gp_status gp__parse_options(char *opts, const char **out, size_t *n);
char *gp__compose_source(const char *prelude, const char *const *opts, size_t nopts, const char *source);
/* cuda_c.c: CUDA C as kernel dialect source (*out malloc'ed), or GP_ERROR_BUILD_FAILED naming the
 * line and the construct it does not take; globals: its file-scope __constant__ and __device__
 * variables, in order (the translation's kernel gp__global_sizes writes their sizes in bytes, a
 * ulong each, and every other function takes them as last parameters, gp__g_NAME). */
enum { GP__MAX_GLOBALS = 16 };
typedef struct gp__cuda_globals {
    size_t n;
    char name[GP__MAX_GLOBALS][64];
} gp__cuda_globals;
gp_status gp__cuda_to_dialect(const char *source, char **out, gp__cuda_globals *globals);
/* A copy of CUDA C source with its includes of CUDA's own headers blanked (NULL: no memory). */
char *gp__cuda_without_includes(const char *source);

/* parse.c: readers of user text; each returns 0 on text it refuses and changes no output then.
 * gp__parse_number: decimal digits at *s, at most max (larger is refused, never wrapped), *s
 * moved past them. gp__parse_list: n such numbers separated by sep. gp__parse_gemm_params:
 * GPUPORT_GEMM_PARAMS's "f32:a,b,c,d,e;f64:..." into p[0] and p[1] (set[] says which were
 * given), why filled when refused. gp__parse_device_spec: "gpu", "cpu", "backend" or
 * "backend:N", as GP__SPEC_*. gp__topic_listed: whether GPUPORT_DEBUG's list names topic. */
#define GP__PARSE_MAX 1048576u
int gp__parse_number(const char **s, unsigned long long max, unsigned long long *out);
int gp__parse_list(const char **s, char sep, unsigned *out, size_t n, unsigned max);
int gp__parse_gemm_params(const char *text, gp_gemm_params p[2], int set[2], char *why, size_t len);
enum { GP__SPEC_GPU = 1, GP__SPEC_CPU = 2, GP__SPEC_BACKEND = 3 };
int gp__parse_device_spec(const char *spec, char backend[16], size_t *index);
int gp__topic_listed(const char *list, const char *topic);
/* User code pasted into a generated kernel (map and reduce expressions): 1 when it cannot
 * leave its place there, brackets balanced and comments and literals closed, with no
 * preprocessor line or line splice; statements allows ';' and braces (a map snippet). */
int gp__check_user_code(const char *text, int statements, char *why, size_t len);
/* Whether a user reduction's expression compiles on OpenCL vectors (of float, or of double
 * with doubles) as it does on scalars: only the operands x, y, z, a and b, integer literals,
 * floating ones of the type as written (an f for float: a double would narrow), operators and
 * math built-ins overloaded for vectors. Anything else (the index i, casts, other names,
 * comments) keeps the scalar kernel, and spares CPU compilers a failed build (pocl prints
 * "1 error generated." for one). */
int gp__vector_safe(const char *expression, int doubles);
/* Kernel `name`'s parameters as src declares them ("GP_KERNEL void name(...)"), object-like
 * macros of the -D words (defines) and of src's own #define and typedef lines resolved: the
 * count (the first max written to out), or (size_t)-1 when the declaration is not found.
 * *readable: 1 when every parameter's kind, type and name could be read. */
size_t gp__parse_params(const char *src, const char *const *defines, size_t ndefines, const char *name,
                        gp_kernel_param *out, size_t max, int *readable);

/* objects/builtin_kernels.c: the built-in kernels; primitives/primitive.c: what the primitives
 * share. */
/* The kernel `name` of a built-in source (kernels/<file>.gp text, embedded in libgpuport) built
 * for the device with the given options; compiled once per device and options, then kept.
 * nparams: the kernel's parameter count (its declaration is made by macros, which the source
 * reader cannot follow, and CUDA can count only by a refused query). */
gp_status gp__builtin_kernel(gp_device *dev, const char *source, const char *options, const char *name,
                             size_t nparams, gp_kernel **kernel);
/* Primitives with two kernels, one shaped for GPUs and one for CPUs (pocl runs a work-group as
 * loops on one core, so it wants long contiguous loops per work-item): which runs on a device.
 * The CPU variant on CPU devices, the GPU one elsewhere, unless the environment variable names
 * one for every device (to compare them, and so that tests run both everywhere). */
typedef struct gp__variants {
    const char *env;     /* "GPUPORT_STENCIL_KERNEL" */
    const char *name[2]; /* the GPU variant's name, then the CPU one's: "tiled", "rows" */
} gp__variants;
/* 1 for the CPU variant, 0 for the GPU one. An unknown value counts as unset here; entry points
 * refuse it with gp__variant_check. */
int gp__variant(const gp_device *dev, const gp__variants *v);
gp_status gp__variant_check(const gp__variants *v, const char *fn);
/* gp_kernel_create with the parameter count known (declared), or (size_t)-1 to read it from
 * the program's source. */
gp_status gp__kernel_create(gp_program *program, const char *name, size_t declared, gp_kernel **kernel);
/* A device buffer of at least bytes kept with the stream; call with stream->lock held. */
gp_status gp__scratch(gp_stream *stream, size_t bytes, gp_buffer **buffer);
/* The stream's buffer of tagged words (kernels/types.gp) of at least bytes, and a new stamp for
 * this call's tags. Call with the stream's lock held, as for gp__scratch. */
gp_status gp__sync(gp_stream *stream, size_t bytes, gp_buffer **buffer, uint32_t *stamp);
/* The stream, checked against the device of view's buffer, with its lock taken. */
gp_status gp__primitive_begin(gp_stream **stream, gp_device *dev, const char *fn);
void gp__primitive_end(gp_stream *stream);
/* Checks that n elements of type from view lie inside its buffer (NULL buffer: an error). */
gp_status gp__check_view(gp_view view, gp_type type, size_t n, const char *fn, const char *which);
/* 1 when the view's first element (of type) lies on a multiple of bytes (a power of two up to
 * 16), as vector loads need: wrapped and registered memory may start anywhere. */
int gp__view_aligned(gp_view view, gp_type type, size_t bytes);
/* The dialect's name of a gp_type ("float"), for messages. */
const char *gp__type_name(gp_type type);
/* "-DGP_TYPE=3": the options every built-in source is compiled with for that type; NULL and an
 * error for a type the device cannot run (f64 without fp64). */
const char *gp__type_option(gp_device *dev, gp_type type, const char *fn);

/* Embedded kernel sources: kernels/types.gp joined to kernels/map.gp and so on. */
extern const char gp__src_map[], gp__src_reduce[], gp__src_scan[], gp__src_stencil[], gp__src_gemm[], gp__src_copy[];

/* cache.c: the kernel cache. key is 32 bytes. */
int gp__cache_load(const unsigned char key[32], void **binary, size_t *bytes, int *on_disk);
int gp__cache_store(const unsigned char key[32], const void *binary, size_t bytes);
/* The largest binary an entry holds: a larger one is kept in memory, and a larger file in an
 * entry's place is rebuilt without being read. */
#define GP__CACHE_ENTRY_MAX ((size_t)256 << 20)
/* The payload's size when file (n bytes) is a whole entry written for key with the folder's
 * secret, else 0. */
size_t gp__cache_entry_payload(const unsigned char *file, size_t n, const unsigned char key[32],
                               const unsigned char secret[32]);
/* The cache folder's name (1), or 0 when there is none; not yet checked. */
int gp__cache_folder(char *out, size_t len);
/* primitives/gemm.c, for primitives/gemm_tune.c: gp_gemm with the shape p (the device's when
 * NULL); the checks gp_gemm_tune makes first; the candidate shapes valid on the device, one a
 * call from *next = 0 on, NULL after the last; and the winner kept for the device and type,
 * in the cache folder where it is writable. */
gp_status gp__gemm_with(gp_stream *stream, gp_gemm_impl impl, gp_type type, gp_layout layout, gp_transpose trans_a,
                        gp_transpose trans_b, size_t m, size_t n, size_t k, double alpha, gp_view a, size_t lda,
                        gp_view b, size_t ldb, double beta, gp_view c, size_t ldc, const gp_gemm_params *p);
gp_status gp__gemm_tune_check(gp_device *dev, gp_type type, const char *fn);
const gp_gemm_params *gp__gemm_candidate(const gp_device *dev, gp_type type, size_t *next);
void gp__gemm_keep_tuned(gp_device *dev, gp_type type, const gp_gemm_params *win);

/* A small text file in the cache folder (gp_gemm_tune's choices), written to a temporary file
 * and renamed, so readers never see half of it; 1 when it was written. Read back only when it
 * passes the same checks as an entry; 1 when out holds its text. */
int gp__cache_write_text(const char *name, const char *text);
int gp__cache_read_text(const char *name, char *out, size_t len);

/* trust.c: 1 when st (of what, named in why) belongs to this user, root or, for the cache
 * (cache_owners 1), a uid of GPUPORT_CACHE_TRUST, and no one else can write it; else 0 and why. */
struct stat;
int gp__owner_trusted(uid_t uid, int cache_owners); /* this user, root or (cache) a listed uid */
int gp__trusted(const struct stat *st, const char *what, int cache_owners, char *why, size_t len);
/* Opens path with flags (O_NOFOLLOW and O_CLOEXEC added) after checking every folder from the
 * root down as ssh's StrictModes does: each passes gp__trusted, or is sticky with a trusted owner
 * (as /tmp). A symbolic link on the way, the last name's too when follow_last, is followed only
 * when it belongs to such an owner, and its target is walked and checked the same way; '..' is
 * refused. The descriptor of what the path names, whose own checks are the caller's (fstat), or
 * -1 and why. Only a trusted owner can change a checked folder, so nothing on the way can be
 * swapped between the checks and the use of the descriptor. */
int gp__open_path(const char *path, int flags, int follow_last, int cache_owners, char *why, size_t len);

/* sha256.c */
typedef struct gp__sha256 {
    uint32_t h[8];
    uint64_t len;
    unsigned char buf[64];
    size_t fill;
} gp__sha256;
void gp__sha256_init(gp__sha256 *s);
void gp__sha256_update(gp__sha256 *s, const void *data, size_t n);
void gp__sha256_final(gp__sha256 *s, unsigned char out[32]);

#define GP__CHECK_OUT(p, name)                                                                 \
    do {                                                                                       \
        if (!(p)) return gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: " name " is NULL", __func__); \
    } while (0)
#define GP__CHECK_HANDLE(h, name)                                                              \
    do {                                                                                       \
        if (!(h)) return gp__fail(GP_ERROR_INVALID_HANDLE, "%s: " name " is NULL", __func__);   \
    } while (0)

/* trace.c: GPUPORT_TRACE=FILE.csv. Around each command:
 *     gp__trace_token *t = gp__trace_begin(stream);   (NULL when tracing is off)
 *     st = be->command(...);
 *     gp__trace_end(t, st, "kernel", name, bytes, dims, work);
 * A failed command leaves no row. Off, each costs one branch on a value read once. */
typedef struct gp__trace_rec gp__trace_token;
enum { GP__TRACE_UNREAD = 0, GP__TRACE_OFF = 1, GP__TRACE_ON = 2 };
extern atomic_int gp__trace_state;
/* stream NULL: a row on the host clock (a compile). */
gp__trace_token *gp__trace_start(gp_device *dev, gp_stream *stream);
void gp__trace_finish(gp__trace_token *t, gp_status st, const char *command, const char *name, size_t bytes,
                      unsigned dims, const size_t *work);
void gp__trace_compile(gp__trace_token *t, gp_status st, const char *source, const unsigned char key[32], size_t bytes);
/* After a synchronize: writes the finished rows of the stream, or of every stream of dev (NULL). */
void gp__trace_flush(gp_device *dev, gp_stream *stream);
/* A drained stream about to be freed: writes its rows and forgets it (numbers are never reused). */
void gp__trace_forget(gp_stream *stream);

static inline int gp__trace_off(void)
{
    return atomic_load_explicit(&gp__trace_state, memory_order_relaxed) == GP__TRACE_OFF;
}
/* stream: the one the command runs on, never NULL. */
static inline gp__trace_token *gp__trace_begin(gp_stream *stream)
{
    return gp__trace_off() ? NULL : gp__trace_start(stream->dev, stream);
}
static inline gp__trace_token *gp__trace_begin_host(gp_device *dev)
{
    return gp__trace_off() ? NULL : gp__trace_start(dev, NULL);
}
/* bytes 0 leaves the column empty; dims 0 leaves work empty, else it reads "x*y*z". */
static inline void gp__trace_end(gp__trace_token *t, gp_status st, const char *command, const char *name,
                                 size_t bytes, unsigned dims, const size_t *work)
{
    if (t) gp__trace_finish(t, st, command, name, bytes, dims, work);
}

#endif
