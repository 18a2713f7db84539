/* Proves gpuport survives its plugin failing, and core running out of host memory, at every
 * point of a scenario that calls everything that reaches a plugin (buffers, copies, maps,
 * streams, events, programs, launches and every primitive): each call returns a status with a
 * message of its own, a result said to be right is right, every object made can be destroyed,
 * nothing leaks (the ASan build's LeakSanitizer), and the device then works as before.
 *
 *   gpuport-test-fault plugin   in this process, warmed up: every plugin call failed in turn,
 *                               with each kind of failure tests/fault_plugin.c injects
 *   gpuport-test-fault malloc   in this process: every allocation of core failed in turn
 *   gpuport-test-fault cold     a fresh process per plugin call and kind, and per allocation,
 *                               so that the first use (device start, first compiles) fails at
 *                               every point too
 *
 * It runs with GPUPORT_PLUGIN_PATH naming the fault plugin's folder and GPUPORT_FAULT_REAL the
 * real OpenCL plugin; core is linked in statically, with malloc, calloc, realloc and strdup
 * wrapped (ld --wrap), so that only core's own allocations are failed, not the driver's.
 *
 * The same phases run the CUDA plugin against tests/fake_cuda.c, a fake driver that fails its
 * Nth driver, NVRTC or cuBLAS call: GPUPORT_FAULT_DEVICE names the device (opencl:0 unless set)
 * and GPUPORT_FAULT_CONTROL the library that is armed (the OpenCL plugin of GPUPORT_PLUGIN_PATH
 * unless set). Where that library says its kernels do not run (the fake's), only results that
 * need no kernel are checked; where it counts its live objects, none may be left over. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuport.h"

/* ---- Core's allocations, failed on request ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

static atomic_long allocs, alloc_fail_at; /* 0: never */

static int alloc_fails(void)
{
    long at = atomic_load(&alloc_fail_at);
    return at && atomic_fetch_add(&allocs, 1) + 1 == at;
}
void *__wrap_malloc(size_t n) { return alloc_fails() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return alloc_fails() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return alloc_fails() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return alloc_fails() ? NULL : __real_strdup(s); }

static void arm_alloc(long at)
{
    atomic_store(&allocs, 0);
    atomic_store(&alloc_fail_at, at);
}

/* ---- The controls of the library that fails ---- */

enum { FAULT_ALLOC = -1 }; /* the cold phase's kind for core's allocations */
static void (*fault_arm)(long at, int kind);
static long (*fault_calls)(void);
static int fault_kinds = 4, kernels_run = 1;
static long (*fault_live)(void); /* optional: the objects the driver holds */

static const char *device_name(void)
{
    const char *name = getenv("GPUPORT_FAULT_DEVICE");
    return name && *name ? name : "opencl:0";
}

static void find_controls(void)
{
    char path[1024];
    const char *control = getenv("GPUPORT_FAULT_CONTROL"), *dir = getenv("GPUPORT_PLUGIN_PATH");
    if (control && *control) snprintf(path, sizeof path, "%s", control);
    else snprintf(path, sizeof path, "%s/libgpuport-opencl.so", dir ? dir : ".");
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (lib) {
        *(void **)&fault_arm = dlsym(lib, "gp_fault_arm");
        *(void **)&fault_calls = dlsym(lib, "gp_fault_calls");
        *(void **)&fault_live = dlsym(lib, "gp_fault_live");
        int (*kinds)(void), (*runs)(void);
        if ((*(void **)&kinds = dlsym(lib, "gp_fault_kinds"))) fault_kinds = kinds();
        if ((*(void **)&runs = dlsym(lib, "gp_fault_kernels_run"))) kernels_run = runs();
    }
    if (!fault_arm || !fault_calls) fail_msg("%s is not loaded, or does not export gp_fault_arm and gp_fault_calls", path);
}

/* ---- The scenario ---- */

/* What one run saw: calls that failed, and anything that breaks the rules. */
typedef struct run {
    int failures;
    int broken;
    char why[512];
} run;

static void broken(run *r, const char *fmt, ...)
{
    if (r->broken++) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
}

static int known(gp_status st)
{
    switch (st) {
#define CASE(name, value, text) case name:
        GP_STATUS_LIST(CASE)
#undef CASE
        return 1;
    }
    return 0;
}

/* 1 when the call succeeded; a failure must be a known error status with a message. */
static int ok_step(run *r, const char *call, gp_status st)
{
    if (st == GP_SUCCESS) return 1;
    r->failures++;
    if (!known(st) || st == GP_NOT_READY) broken(r, "%s returned %d, which is no error status", call, (int)st);
    else if (!gp_last_error()[0]) broken(r, "%s failed (%s) without a message", call, gp_status_name(st));
    return 0;
}
#define STEP(call) ok_step(r, #call, (call))
/* A chain of calls: later ones run only if the earlier did; the result is checked at the end. */
#define CHAIN(call) (ok = ok && STEP(call))
#define DESTROY(call) do { gp_status d_ = (call); if (d_ != GP_SUCCESS) broken(r, "%s -> %s", #call, gp_status_name(d_)); } while (0)
/* gp_stream_destroy frees the stream whatever happens, but reports a wait that failed. */
#define DESTROY_STREAM(s) STEP(gp_stream_destroy(s))

enum { N = 1000, GRID = 24, MAT = 16 };

static float host_x[N], host_y[N], host_out[N];

static void fill_inputs(void)
{
    for (int i = 0; i < N; i++) {
        host_x[i] = (float)(i % 97) * 0.25f - 3.0f;
        host_y[i] = (float)(i % 13) + 0.5f;
    }
}

static void expect(run *r, int ok, int good, const char *what)
{
    if (ok && !good) broken(r, "%s: every call succeeded but the result is wrong", what);
}
/* A result that kernels compute: checked where they run. */
#define EXPECT_KERNEL(r, ok, good, what) expect(r, (ok) && kernels_run, good, what)

/* Buffers of each kind, copies both ways and within, a fill, map and unmap, events. */
static void chain_memory(run *r, gp_device *dev, gp_stream *s)
{
    gp_buffer *a = NULL, *b = NULL, *p = NULL, *m = NULL;
    gp_event *e0 = NULL, *e1 = NULL;
    void *host = NULL;
    float v = 7.0f;
    double ms = 0;
    int ok = 1;
    CHAIN(gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof host_x, &a));
    CHAIN(gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof host_x, &b));
    CHAIN(gp_buffer_create(dev, GP_MEMORY_PINNED, sizeof host_x, &p));
    CHAIN(gp_buffer_create(dev, GP_MEMORY_MAPPED, sizeof host_x, &m));
    CHAIN(gp_event_create(dev, &e0));
    CHAIN(gp_event_create(dev, &e1));
    CHAIN(gp_event_record(e0, s));
    CHAIN(gp_buffer_write_async(s, a, 0, host_x, sizeof host_x));
    CHAIN(gp_buffer_copy_async(s, b, 0, a, 0, sizeof host_x));
    CHAIN(gp_buffer_fill_async(s, b, 0, 16, &v, sizeof v));
    CHAIN(gp_buffer_copy(s, p, 0, b, 0, sizeof host_x));
    CHAIN(gp_event_record(e1, s));
    CHAIN(gp_stream_wait_event(NULL, e1));
    CHAIN(gp_buffer_copy(NULL, m, 0, p, 0, sizeof host_x));
    CHAIN(gp_event_synchronize(e1));
    CHAIN(gp_event_query(e1));
    CHAIN(gp_event_elapsed_ms(e0, e1, &ms));
    CHAIN(gp_buffer_map(NULL, m, &host));
    if (ok) {
        const float *got = host;
        int good = 1;
        for (int i = 0; i < N; i++) good &= got[i] == (i < 4 ? v : host_x[i]);
        expect(r, ok, good, "memory");
        ((float *)host)[5] = 99.0f;
    }
    if (host) STEP(gp_buffer_unmap(NULL, m));
    CHAIN(gp_buffer_read(s, m, 20, host_out, 8));
    expect(r, ok, host_out[0] == 99.0f, "map and unmap");
    DESTROY(gp_event_destroy(e0));
    DESTROY(gp_event_destroy(e1));
    DESTROY(gp_buffer_destroy(a));
    DESTROY(gp_buffer_destroy(b));
    DESTROY(gp_buffer_destroy(p));
    DESTROY(gp_buffer_destroy(m));
}

static const char *kernel_src =
    "GP_KERNEL void axpb(GP_GLOBAL float *y, GP_GLOBAL const float *x, float a, uint n, GP_LOCAL_ARG(float, t))\n"
    "{\n"
    "    GP_LOCAL_BIND(float, t);\n"
    "    uint i = gp_global_id(0);\n"
    "    t[gp_local_id(0)] = i < n ? x[i] : 0.0f;\n"
    "    gp_barrier();\n"
    "    if (i < n) y[i] = a * t[gp_local_id(0)] + B;\n"
    "}\n";

/* A program of the caller's own, its kernel launched. */
static void chain_kernel(run *r, gp_device *dev, gp_stream *s)
{
    gp_program *prog = NULL;
    gp_kernel *k = NULL;
    gp_buffer *x = NULL, *y = NULL;
    float a = 3.0f;
    unsigned n = N;
    size_t global = N, local = 8;
    int ok = 1;
    CHAIN(gp_program_create(dev, kernel_src, "-DB=2.0f", &prog));
    CHAIN(gp_kernel_create(prog, "axpb", &k));
    DESTROY(gp_program_destroy(prog)); /* the kernel keeps it */
    CHAIN(gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof host_x, &x));
    CHAIN(gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof host_x, &y));
    CHAIN(gp_buffer_write(s, x, 0, host_x, sizeof host_x));
    gp_arg args[] = {GP_BUFFER(y), GP_BUFFER(x), GP_VALUE(a), GP_VALUE(n), GP_LOCAL_BYTES(local * 4)};
    CHAIN(gp_kernel_launch(s, k, 1, &global, &local, 5, args));
    CHAIN(gp_buffer_read(s, y, 0, host_out, sizeof host_out));
    int good = 1;
    for (int i = 0; i < N; i++) good &= host_out[i] == 3.0f * host_x[i] + 2.0f;
    EXPECT_KERNEL(r, ok, good, "kernel");
    DESTROY(gp_kernel_destroy(k));
    DESTROY(gp_buffer_destroy(x));
    DESTROY(gp_buffer_destroy(y));
}

/* Every primitive once, each checked against the host. */
static void chain_primitives(run *r, gp_device *dev, gp_stream *s)
{
    gp_buffer *x = NULL, *y = NULL, *o = NULL, *g = NULL;
    gp_map_kernel *mk = NULL;
    gp_reduce_kernel *rk = NULL;
    gp_scalar half = {.f = 0.5};
    int ok = 1;
    CHAIN(gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof host_x, &x));
    CHAIN(gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof host_x, &y));
    CHAIN(gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof host_x, &o));
    CHAIN(gp_buffer_write(s, x, 0, host_x, sizeof host_x));
    CHAIN(gp_buffer_write(s, y, 0, host_y, sizeof host_y));
    int base = ok;

    ok = base;
    CHAIN(gp_map(s, GP_MAP_AXPY, GP_F32, N, GP_VIEW(o), GP_VIEW(x), GP_VIEW(y), &half));
    CHAIN(gp_buffer_read(s, o, 0, host_out, sizeof host_out));
    int good = 1;
    for (int i = 0; i < N; i++) good &= host_out[i] == 0.5f * host_x[i] + host_y[i];
    EXPECT_KERNEL(r, ok, good, "gp_map");

    ok = base;
    float sum = 0, want = 0;
    for (int i = 0; i < N; i++) want += host_y[i]; /* exact: small integers and halves */
    CHAIN(gp_reduce_to_host(s, GP_REDUCE_SUM, GP_F32, N, GP_VIEW(y), &sum));
    EXPECT_KERNEL(r, ok, sum == want, "gp_reduce");

    ok = base;
    CHAIN(gp_scan(s, GP_SCAN_SUM, 0, GP_F32, N, GP_VIEW(y), GP_VIEW(o)));
    CHAIN(gp_buffer_read(s, o, 0, host_out, sizeof host_out));
    float run_sum = 0;
    good = 1;
    for (int i = 0; i < N; i++) good &= host_out[i] == (run_sum += host_y[i]);
    EXPECT_KERNEL(r, ok, good, "gp_scan");

    ok = base;
    gp_stencil st = {GP_STENCIL_5POINT, GP_F32, GP_BOUNDARY_ZERO, GRID, GRID, 1, {0, 1, 1, 1, 1}, 0};
    CHAIN(gp_stencil_apply(s, &st, GP_VIEW(o), GP_VIEW(y), GP_VIEW(NULL)));
    CHAIN(gp_buffer_read(s, o, 0, host_out, GRID * GRID * 4));
    good = 1;
    for (int j = 0; j < GRID; j++)
        for (int i = 0; i < GRID; i++) {
            float w = (i ? host_y[j * GRID + i - 1] : 0) + (i < GRID - 1 ? host_y[j * GRID + i + 1] : 0) +
                      (j ? host_y[(j - 1) * GRID + i] : 0) + (j < GRID - 1 ? host_y[(j + 1) * GRID + i] : 0);
            good &= fabsf(host_out[j * GRID + i] - w) <= 1e-4f * fabsf(w);
        }
    EXPECT_KERNEL(r, ok, good, "gp_stencil_apply");

    for (int impl = GP_GEMM_GPUPORT; impl <= GP_GEMM_VENDOR; impl++) {
        char text[256];
        if (impl == GP_GEMM_VENDOR && gp_gemm_vendor_info(dev, text, sizeof text) != GP_SUCCESS) break;
        ok = base;
        CHAIN(gp_gemm(s, (gp_gemm_impl)impl, GP_F32, GP_ROW_MAJOR, GP_NO_TRANS, GP_NO_TRANS, MAT, MAT, MAT, 1.0,
                      GP_VIEW(x), MAT, GP_VIEW(y), MAT, 0.0, GP_VIEW(o), MAT));
        CHAIN(gp_buffer_read(s, o, 0, host_out, MAT * MAT * 4));
        good = 1;
        for (int i = 0; i < MAT; i++)
            for (int j = 0; j < MAT; j++) {
                double c = 0;
                for (int q = 0; q < MAT; q++) c += (double)host_x[i * MAT + q] * host_y[q * MAT + j];
                good &= fabs(host_out[i * MAT + j] - c) <= 1e-3 * (1 + fabs(c));
            }
        if (impl == GP_GEMM_VENDOR) expect(r, ok, good, "gp_gemm (vendor)");
        else EXPECT_KERNEL(r, ok, good, "gp_gemm");
    }

    ok = base;
    gp_type in2[2] = {GP_F32, GP_F32};
    gp_view xy[2] = {GP_VIEW(x), GP_VIEW(y)};
    CHAIN(gp_map_kernel_create(dev, GP_F32, 2, in2, "x * y + a", &mk));
    CHAIN(gp_map_kernel_run(s, mk, N, GP_VIEW(o), xy, &half));
    CHAIN(gp_buffer_read(s, o, 0, host_out, sizeof host_out));
    good = 1;
    for (int i = 0; i < N; i++) good &= host_out[i] == host_x[i] * host_y[i] + 0.5f;
    EXPECT_KERNEL(r, ok, good, "gp_map_kernel");

    ok = base;
    uint64_t count = 0, want_count = 0;
    for (int i = 0; i < N; i++) want_count += host_x[i] > 0;
    gp_type f32 = GP_F32;
    gp_view xv = GP_VIEW(x);
    CHAIN(gp_reduce_kernel_create(dev, 1, &f32, GP_U64, "x > 0 ? 1 : 0", "a + b", "0", &rk));
    CHAIN(gp_buffer_create(dev, GP_MEMORY_DEVICE, 8, &g));
    CHAIN(gp_reduce_kernel_run(s, rk, N, &xv, GP_VIEW(g)));
    CHAIN(gp_buffer_read(s, g, 0, &count, 8));
    EXPECT_KERNEL(r, ok, count == want_count, "gp_reduce_kernel");

    STEP(gp_stream_synchronize(s));
    STEP(gp_stream_trim(s));
    DESTROY(gp_map_kernel_destroy(mk));
    DESTROY(gp_reduce_kernel_destroy(rk));
    DESTROY(gp_buffer_destroy(x));
    DESTROY(gp_buffer_destroy(y));
    DESTROY(gp_buffer_destroy(o));
    DESTROY(gp_buffer_destroy(g));
}

/* Native handles out and back in, host memory registered, and (where there is a second
 * device: CI runs this with POCL_DEVICES="pthread pthread", and the fake CUDA driver has two) a
 * copy between devices. */
static uint32_t registered[N];
static void chain_interop(run *r, gp_device *dev, gp_stream *s)
{
    gp_buffer *a = NULL, *w = NULL, *reg = NULL, *far = NULL;
    gp_stream *ws = NULL;
    gp_device *other = NULL;
    gp_native_buffer nb;
    gp_native_stream ns;
    gp_native_device nd;
    uint32_t back[N];
    int ok = 1;
    for (int i = 0; i < N; i++) registered[i] = (uint32_t)i * 3u;
    CHAIN(gp_device_get_native(dev, &nd));
    CHAIN(gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof registered, &a));
    CHAIN(gp_buffer_get_native(a, &nb));
    CHAIN(gp_buffer_wrap(dev, &nb, GP_BORROW, &w));
    CHAIN(gp_stream_get_native(s, &ns));
    CHAIN(gp_stream_wrap(dev, &ns, GP_BORROW, &ws));
    CHAIN(gp_buffer_register_host(dev, registered, sizeof registered, &reg));
    CHAIN(gp_buffer_copy(ws, w, 0, reg, 0, sizeof registered));
    char second[32];
    snprintf(second, sizeof second, "%.*s:1", (int)strcspn(device_name(), ":"), device_name());
    if (gp_device_find(second, &other) == GP_SUCCESS) {
        CHAIN(gp_buffer_create(other, GP_MEMORY_DEVICE, sizeof registered, &far));
        CHAIN(gp_buffer_copy(ws, far, 0, a, 0, sizeof registered));
        CHAIN(gp_buffer_copy(NULL, a, 0, far, 0, sizeof registered));
    }
    CHAIN(gp_buffer_read(s, a, 0, back, sizeof back));
    expect(r, ok, memcmp(back, registered, sizeof back) == 0, "interop");
    DESTROY_STREAM(ws);
    DESTROY(gp_buffer_destroy(w));
    DESTROY(gp_buffer_destroy(reg));
    DESTROY(gp_buffer_destroy(far));
    DESTROY(gp_buffer_destroy(a));
}

/* One pass over everything, on a stream of its own and on the default stream. */
static void scenario(run *r, gp_device *dev)
{
    gp_stream *s = NULL;
    STEP(gp_stream_create(dev, &s));
    chain_memory(r, dev, s);
    chain_kernel(r, dev, NULL);
    chain_primitives(r, dev, s);
    if (s) chain_interop(r, dev, s);
    STEP(gp_device_synchronize(dev));
    STEP(gp_stream_synchronize(NULL));
    DESTROY_STREAM(s);
}

/* With nothing failing, the device must do everything right. */
static void healthy(gp_device *dev, const char *after)
{
    run r = {0};
    scenario(&r, dev);
    if (r.failures || r.broken) fail_msg("after %s: %d calls failed with no fault armed; %s", after, r.failures, r.why);
}

static gp_device *device(void)
{
    gp_device *dev = NULL;
    if (gp_device_find(device_name(), &dev) != GP_SUCCESS) fail_msg("no %s: %s", device_name(), gp_last_error());
    return dev;
}

/* ---- The three phases ---- */

/* What the driver holds once the default stream has given back its scratch; 0 where it does not
 * say. */
static long held(void)
{
    if (!fault_live) return 0;
    if (gp_stream_trim(NULL) != GP_SUCCESS) fail_msg("trimming the default stream: %s", gp_last_error());
    return fault_live();
}

static void plugin_faults(void **state)
{
    (void)state;
    gp_device *dev = device();
    find_controls();
    healthy(dev, "the warm-up"); /* compiles and caches everything once */
    fault_arm(0, 0);
    healthy(dev, "the counting run");
    long total = fault_calls(), live = held();
    print_message("%ld calls in a run; each fails in turn, %d ways\n", total, fault_kinds);
    long recovered = 0;
    for (long at = 1; at <= total; at++)
        for (int kind = 0; kind < fault_kinds; kind++) {
            run r = {0};
            fault_arm(at, kind);
            scenario(&r, dev);
            fault_arm(0, 0);
            if (r.broken) fail_msg("call %ld failing (kind %d): %s", at, kind, r.why);
            recovered += !r.failures; /* a refused cache entry is rebuilt, say: right results checked */
            char after[64];
            snprintf(after, sizeof after, "call %ld failing (kind %d)", at, kind);
            healthy(dev, after);
            /* whatever the failing run made and lost would still be held now */
            if (held() != live)
                fail_msg("after call %ld failing (kind %d), the driver holds %ld objects, %ld before", at, kind,
                         held(), live);
        }
    print_message("%ld of %ld failures were recovered from inside gpuport, with right results\n", recovered,
                  total * fault_kinds);
}

static void alloc_faults(void **state)
{
    (void)state;
    gp_device *dev = device();
    healthy(dev, "the warm-up");
    arm_alloc(LONG_MAX); /* counts without failing */
    healthy(dev, "the counting run");
    long total = atomic_load(&allocs);
    print_message("%ld allocations of core in a run; each fails in turn\n", total);
    for (long at = 1; at <= total; at++) {
        run r = {0};
        arm_alloc(at);
        scenario(&r, dev);
        arm_alloc(0);
        if (r.broken) fail_msg("allocation %ld failing: %s", at, r.why);
        char after[64];
        snprintf(after, sizeof after, "allocation %ld failing", at);
        healthy(dev, after);
    }
}

/* The child of the cold phase: from the very first call, fail call `at` as kind (kind
 * FAULT_ALLOC: fail core's allocation `at` instead); at 0, print how many calls and allocations a
 * first run makes, and how many kinds of failure there are. */
static int cold_child(long at, int kind)
{
    /* The plugin is loaded at first use, so it is armed through the environment. */
    char v[64];
    snprintf(v, sizeof v, "%ld,%d", at, kind);
    if (kind != FAULT_ALLOC) setenv("GPUPORT_FAULT_AT", v, 1);
    arm_alloc(kind == FAULT_ALLOC ? at : LONG_MAX);
    run r = {0};
    gp_device *dev = NULL;
    gp_status st = gp_device_find(device_name(), &dev);
    if (st == GP_SUCCESS) find_controls();
    if (st == GP_SUCCESS) scenario(&r, dev);
    else ok_step(&r, "gp_device_find", st);
    if (at == 0 && (r.failures || r.broken)) {
        fprintf(stderr, "cold: the first run fails with no fault armed: %s %s\n", r.why, gp_last_error());
        return 1;
    }
    if (at == 0) {
        long a = atomic_load(&allocs);
        printf("%ld %ld %d\n", fault_calls(), a, fault_kinds);
        return 0;
    }
    if (r.broken) {
        fprintf(stderr, "cold, %s %ld failing (kind %d): %s\n", kind != FAULT_ALLOC ? "call" : "allocation", at, kind,
                r.why);
        return 1;
    }
    return 0;
}

static int spawn(long at, int kind, int out_fd)
{
    char a[32], k[8];
    snprintf(a, sizeof a, "%ld", at);
    snprintf(k, sizeof k, "%d", kind);
    pid_t pid = fork();
    if (pid == 0) {
        /* LeakSanitizer's tracer now and then crashes on pocl's threads as these short processes
         * exit (a fault of the tracer, not a leak): the children run without the leak check,
         * which the warm phases make in one process over every failure point. */
        const char *asan = getenv("ASAN_OPTIONS");
        char opts[512];
        snprintf(opts, sizeof opts, "%s%sdetect_leaks=0", asan ? asan : "", asan && *asan ? ":" : "");
        setenv("ASAN_OPTIONS", opts, 1);
        if (out_fd >= 0) dup2(out_fd, 1);
        execl("/proc/self/exe", "gpuport-test-fault", "cold-child", a, k, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return status;
}

static void cold_faults(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    int status = spawn(0, 0, fds[1]);
    close(fds[1]);
    char text[64] = "";
    ssize_t got = read(fds[0], text, sizeof text - 1);
    close(fds[0]);
    long calls = 0, allocations = 0;
    int kinds = 0;
    if (status != 0 || got <= 0 || sscanf(text, "%ld %ld %d", &calls, &allocations, &kinds) != 3 || calls <= 0)
        fail_msg("the counting child failed (status 0x%x, '%s')", status, text);
    print_message("a first run makes %ld calls and %ld allocations; each fails in turn in a fresh process\n", calls,
                  allocations);
    int failed = 0;
    for (int kind = FAULT_ALLOC; kind < kinds; kind++)
        for (long at = 1; at <= (kind != FAULT_ALLOC ? calls : allocations); at++)
            if ((status = spawn(at, kind, -1)) != 0) {
                fprintf(stderr, "cold: %ld failing (kind %d) ended the child with status 0x%x\n", at, kind, status);
                failed++;
            }
    if (failed) fail_msg("%d cold runs broke", failed);
}

int main(int argc, char **argv)
{
    fill_inputs();
    const char *phase = argc > 1 ? argv[1] : "";
    if (strcmp(phase, "cold-child") == 0 && argc == 4) return cold_child(atol(argv[2]), atoi(argv[3]));
    const struct CMUnitTest plugin[] = {cmocka_unit_test(plugin_faults)};
    const struct CMUnitTest alloc[] = {cmocka_unit_test(alloc_faults)};
    const struct CMUnitTest cold[] = {cmocka_unit_test(cold_faults)};
    if (strcmp(phase, "plugin") == 0) return cmocka_run_group_tests_name("fault: plugin", plugin, NULL, NULL) ? 1 : 0;
    if (strcmp(phase, "malloc") == 0) return cmocka_run_group_tests_name("fault: malloc", alloc, NULL, NULL) ? 1 : 0;
    if (strcmp(phase, "cold") == 0) return cmocka_run_group_tests_name("fault: cold", cold, NULL, NULL) ? 1 : 0;
    fprintf(stderr, "usage: %s plugin|malloc|cold\n", argv[0]);
    return 2;
}
