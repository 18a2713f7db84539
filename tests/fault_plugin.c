/* A test plugin that stands in for a real one (the file GPUPORT_FAULT_REAL names) and fails its
 * Nth call as the vendor runtime could: out of device or host memory, a failed launch, or a lost
 * device (which fails every call from then on). tests/fault.c arms it through the two functions
 * below, or before the plugin is loaded through GPUPORT_FAULT_AT="call,kind"; every other call
 * is passed to the real plugin unchanged. GPUPORT_FAULT_AS="vendor,units" makes its devices say
 * they are GPUs of that vendor with that many compute units (core's choices for such GPUs, on
 * pocl's real device). GPUPORT_FAULT_UUID=n makes them say they are the GPU whose UUID is n in
 * every byte (the fake CUDA driver's device n - 1) and import that driver's exported memory by
 * mapping it and registering the mapping: core's copies staged in one GPU's memory, on pocl. */
#define _DEFAULT_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backends/backend.h"

#define EXPORT __attribute__((visibility("default")))

/* What tests/fault.c asks for: the kinds of failure, and the call that fails. */
enum { FAULT_DEVICE_MEMORY, FAULT_HOST_MEMORY, FAULT_LAUNCH, FAULT_DEVICE_LOST, FAULT_KINDS };
EXPORT void gp_fault_arm(long at, int kind);
EXPORT long gp_fault_calls(void);

static const gp__backend *real;
static const gp__host *host;
static atomic_long calls, fail_at; /* fail_at 0: never */
static atomic_int kind;

void gp_fault_arm(long at, int k)
{
    atomic_store(&kind, k);
    atomic_store(&calls, 0);
    atomic_store(&fail_at, at);
}

long gp_fault_calls(void) { return atomic_load(&calls); }

/* GP_SUCCESS, or the armed failure (with its message) when this call is the one. */
static gp_status fault(const char *hook)
{
    long n = atomic_fetch_add(&calls, 1) + 1, at = atomic_load(&fail_at);
    int k = atomic_load(&kind);
    if (!at || n < at || (n > at && k != FAULT_DEVICE_LOST)) return GP_SUCCESS;
    static const char *const what[] = {"out of device memory", "out of host memory", "the launch failed",
                                       "the device was lost"};
    static const gp_status status[] = {GP_ERROR_OUT_OF_DEVICE_MEMORY, GP_ERROR_OUT_OF_HOST_MEMORY, GP_ERROR_BACKEND,
                                       GP_ERROR_BACKEND};
    host->set_error("injected by the fault plugin at call %ld (%s): %s", n, hook, what[k]);
    return status[k];
}

#define FAULT(hook) do { gp_status f_ = fault(#hook); if (f_ != GP_SUCCESS) return f_; } while (0)

static gp_status w_init(const gp__host *h, char *reason, size_t reason_len, char *version, size_t version_len,
                        size_t *n)
{
    host = h;
    return real->init(h, reason, reason_len, version, version_len, n);
}

static gp_status w_device_open(size_t i, void **dev, gp_device_info *info)
{
    FAULT(device_open);
    gp_status st = real->device_open(i, dev, info);
    const char *as = getenv("GPUPORT_FAULT_AS"), *comma = as ? strrchr(as, ',') : NULL;
    if (st == GP_SUCCESS && comma && (size_t)(comma - as) < sizeof info->vendor) {
        info->type = GP_DEVICE_GPU;
        snprintf(info->vendor, sizeof info->vendor, "%.*s", (int)(comma - as), as);
        info->compute_units = (uint32_t)strtoul(comma + 1, NULL, 10);
    }
    if (st == GP_SUCCESS && getenv("GPUPORT_FAULT_UUID")) info->unified_memory = 0; /* a GPU's own memory */
    return st;
}

/* Each hook that can fail: the fault first, then the real one. Hooks that return nothing (the
 * destroys) are the real plugin's own. */
#define W(hook, params, args) static gp_status w_##hook params { FAULT(hook); return real->hook args; }
W(buffer_create, (void *d, gp_memory m, size_t b, void **o), (d, m, b, o))
W(buffer_map, (void *d, void *s, void *b, size_t n, void **h), (d, s, b, n, h))
W(buffer_unmap, (void *d, void *s, void *b, void *h), (d, s, b, h))
W(stream_create, (void *d, void **s), (d, s))
W(stream_synchronize, (void *d, void *s), (d, s))
W(write, (void *d, void *s, void *b, size_t o, const void *h, size_t n, int k), (d, s, b, o, h, n, k))
W(read, (void *d, void *s, void *b, size_t o, void *h, size_t n, int k), (d, s, b, o, h, n, k))
W(copy, (void *d, void *s, void *x, size_t xo, void *y, size_t yo, size_t n, int k), (d, s, x, xo, y, yo, n, k))
W(fill, (void *d, void *s, void *b, size_t o, size_t n, const void *p, size_t ps, int k), (d, s, b, o, n, p, ps, k))
W(event_create, (void *d, void **e), (d, e))
W(event_record, (void *d, void *e, void *s), (d, e, s))
W(stream_wait_event, (void *d, void *s, void *e), (d, s, e))
W(event_synchronize, (void *d, void *e), (d, e))
W(event_query, (void *d, void *e), (d, e))
W(event_elapsed_ms, (void *d, void *a, void *b, double *ms), (d, a, b, ms))
W(program_build, (void *d, const char *src, void **bin, size_t *n), (d, src, bin, n))
W(program_load, (void *d, const void *bin, size_t n, void **p), (d, bin, n, p))
W(kernel_create, (void *d, void *p, const char *name, void **k, gp__kernel_props *props), (d, p, name, k, props))
W(launch, (void *d, void *s, void *k, unsigned dims, const size_t g[3], const size_t l[3], size_t n, const gp_arg *a),
  (d, s, k, dims, g, l, n, a))
W(blas_info, (void *d, char *t, size_t n), (d, t, n))
W(blas_gemm, (void *d, void *s, gp_type t, int ta, int tb, size_t m, size_t n, size_t k, double al, void *a, size_t ao,
              size_t lda, void *b, size_t bo, size_t ldb, double be, void *c, size_t co, size_t ldc),
  (d, s, t, ta, tb, m, n, k, al, a, ao, lda, b, bo, ldb, be, c, co, ldc))
W(native_device, (void *d, gp_native_device *o), (d, o))
W(native_stream, (void *d, void *s, gp_native_stream *o), (d, s, o))
W(native_buffer, (void *d, void *b, gp_native_buffer *o), (d, b, o))
W(native_event, (void *d, void *e, gp_native_event *o), (d, e, o))
W(buffer_wrap, (void *d, const gp_native_buffer *n, int a, void **b, size_t *s, gp_memory *m), (d, n, a, b, s, m))
W(buffer_register, (void *d, void *h, size_t n, void **b), (d, h, n, b))
W(stream_wrap, (void *d, const gp_native_stream *n, void **s), (d, n, s))
W(copy_peer, (void *d, void *s, void *x, size_t xo, void *sd, void *y, size_t yo, size_t n, int k),
  (d, s, x, xo, sd, y, yo, n, k))
#undef W

static int w_device_uuid(void *d, unsigned char uuid[16])
{
    (void)d;
    memset(uuid, atoi(getenv("GPUPORT_FAULT_UUID")), 16);
    return 1;
}

/* Imports live mapped until their buffer goes. */
static struct {
    void *buf, *host;
    size_t bytes;
} mapped[16];
static pthread_mutex_t mapped_lock = PTHREAD_MUTEX_INITIALIZER;

static gp_status w_buffer_import(void *d, int fd, size_t bytes, void **buf)
{
    gp_status st = fault("buffer_import");
    void *mem = st == GP_SUCCESS ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    close(fd);
    if (st == GP_SUCCESS && mem == MAP_FAILED) {
        host->set_error("the fault plugin could not map the memory to import");
        st = GP_ERROR_BACKEND;
    }
    if (st == GP_SUCCESS) st = real->buffer_register(d, mem, bytes, buf);
    pthread_mutex_lock(&mapped_lock);
    int i = 0;
    while (st == GP_SUCCESS && i < 16 && mapped[i].buf) i++;
    if (i < 16 && st == GP_SUCCESS) mapped[i].buf = *buf, mapped[i].host = mem, mapped[i].bytes = bytes;
    pthread_mutex_unlock(&mapped_lock);
    if (st == GP_SUCCESS && i == 16) {
        real->buffer_destroy(d, *buf);
        host->set_error("the fault plugin holds 16 imports, its most");
        st = GP_ERROR_BACKEND;
    }
    if (st != GP_SUCCESS && mem != MAP_FAILED) munmap(mem, bytes);
    return st;
}

static void w_buffer_destroy(void *d, void *buf)
{
    real->buffer_destroy(d, buf);
    pthread_mutex_lock(&mapped_lock);
    for (int i = 0; i < 16; i++)
        if (mapped[i].buf == buf) {
            munmap(mapped[i].host, mapped[i].bytes);
            mapped[i].buf = NULL;
        }
    pthread_mutex_unlock(&mapped_lock);
}

static gp__backend table;

EXPORT const gp__backend *gp_plugin_entry(void);
const gp__backend *gp_plugin_entry(void)
{
    const char *path = getenv("GPUPORT_FAULT_REAL");
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    gp__plugin_entry_fn entry = NULL;
    if (lib) *(void **)&entry = dlsym(lib, GP__PLUGIN_ENTRY);
    if (!entry || !(real = entry())) {
        fprintf(stderr, "fault plugin: GPUPORT_FAULT_REAL must name a gpuport plugin (%s)\n", path ? path : "unset");
        return NULL;
    }
    const char *at = getenv("GPUPORT_FAULT_AT");
    long n = 0;
    int k = 0;
    if (at && sscanf(at, "%ld,%d", &n, &k) == 2 && k >= 0 && k < FAULT_KINDS) gp_fault_arm(n, k);
    table = *real;
    table.init = w_init;
#define SET(hook) table.hook = real->hook ? w_##hook : NULL;
    SET(device_open) SET(buffer_create) SET(buffer_map) SET(buffer_unmap) SET(stream_create) SET(stream_synchronize)
    SET(write) SET(read) SET(copy) SET(fill) SET(event_create) SET(event_record) SET(stream_wait_event)
    SET(event_synchronize) SET(event_query) SET(event_elapsed_ms) SET(program_build) SET(program_load)
    SET(kernel_create) SET(launch) SET(blas_info) SET(blas_gemm) SET(native_device) SET(native_stream)
    SET(native_buffer) SET(native_event) SET(buffer_wrap) SET(buffer_register) SET(stream_wrap) SET(copy_peer)
#undef SET
    if (getenv("GPUPORT_FAULT_UUID")) {
        table.device_uuid = w_device_uuid;
        table.buffer_import = w_buffer_import;
        table.buffer_destroy = w_buffer_destroy;
    }
    return &table;
}
