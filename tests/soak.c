/* A long run of mixed work: THREADS threads, each with a stream of its own and one stream all
 * share, pick at random among copies, kernels, every primitive, events, and creating and
 * destroying streams and buffers, checking every result, for a given time. Host memory (RSS) is
 * sampled as it goes; it must stay flat once the first minute (or quarter of the run) is over.
 *
 *   gpuport-soak [--device SPEC] [--seconds S] [--threads T] [--csv FILE]
 * Exit 0 when every result was right and memory stayed within 5% (and 16 MiB) of its level after
 * the warm-up; it prints the samples either way. Device memory is the caller's to watch
 * (nvidia-smi on a GPU; on a CPU device it is the host's). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpuport.h"
#include "rss.h"

enum { N = 65536 };

static gp_device *dev;
static gp_stream *shared;
static gp_kernel *kernel;
static atomic_int stop;
static atomic_long done, errors;
static pthread_mutex_t first_lock = PTHREAD_MUTEX_INITIALIZER;
static char first[512];

static void fail(const char *what)
{
    atomic_fetch_add(&errors, 1);
    pthread_mutex_lock(&first_lock);
    if (!first[0]) snprintf(first, sizeof first, "%s: %s", what, gp_last_error());
    pthread_mutex_unlock(&first_lock);
}
#define TRY(call) do { if ((call) != GP_SUCCESS) { fail(#call); goto out; } } while (0)


static uint32_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)*s;
}

/* One piece of work on stream s with data of its own, its result checked. */
static void work(uint64_t *rng, gp_stream *own, uint32_t *x, uint32_t *y)
{
    gp_stream *s = next(rng) % 4 ? own : shared;
    size_t n = 1 + next(rng) % N;
    gp_buffer *a = NULL, *b = NULL;
    gp_stream *tmp = NULL;
    gp_event *e = NULL;
    for (size_t i = 0; i < n; i++) x[i] = next(rng) % 1000;
    TRY(gp_buffer_create(dev, next(rng) % 3 ? GP_MEMORY_DEVICE : GP_MEMORY_PINNED, n * 4, &a));
    TRY(gp_buffer_create(dev, GP_MEMORY_DEVICE, n * 4, &b));
    TRY(gp_buffer_write(s, a, 0, x, n * 4));
    unsigned what = next(rng) % 7;
    if (what == 6 && n < 2) what = 4; /* the product needs two 1 x 1 matrices */
    switch (what) {
    case 0: { /* a kernel of our own, on a stream made for it */
        uint32_t nn = (uint32_t)n, add = 7;
        size_t global = n;
        gp_arg args[] = {GP_BUFFER(b), GP_BUFFER(a), GP_VALUE(nn), GP_VALUE(add)};
        TRY(gp_stream_create(dev, &tmp));
        TRY(gp_event_create(dev, &e));
        TRY(gp_event_record(e, s));
        TRY(gp_stream_wait_event(tmp, e));
        TRY(gp_kernel_launch(tmp, kernel, 1, &global, NULL, 4, args));
        TRY(gp_buffer_read(tmp, b, 0, y, n * 4));
        for (size_t i = 0; i < n; i++) if (y[i] != x[i] + 7) { fail("kernel result"); goto out; }
        break;
    }
    case 1: {
        uint32_t sum = 0, want = 0;
        for (size_t i = 0; i < n; i++) want += x[i];
        TRY(gp_reduce_to_host(s, GP_REDUCE_SUM, GP_U32, n, GP_VIEW(a), &sum));
        if (sum != want) fail("reduce result");
        break;
    }
    case 2: {
        TRY(gp_scan(s, GP_SCAN_SUM, 1, GP_U32, n, GP_VIEW(a), GP_VIEW(b)));
        TRY(gp_buffer_read(s, b, 0, y, n * 4));
        uint32_t run = 0;
        for (size_t i = 0; i < n; i++) {
            if (y[i] != run) { fail("scan result"); goto out; }
            run += x[i];
        }
        break;
    }
    case 3: {
        TRY(gp_map(s, GP_MAP_AXPY, GP_U32, n, GP_VIEW(b), GP_VIEW(a), GP_VIEW(a), &(gp_scalar){.u = 3}));
        TRY(gp_buffer_read(s, b, 0, y, n * 4));
        for (size_t i = 0; i < n; i++) if (y[i] != 4 * x[i]) { fail("map result"); goto out; }
        break;
    }
    case 4: { /* a copy within the device, then back */
        TRY(gp_buffer_copy_async(s, b, 0, a, 0, n * 4));
        TRY(gp_buffer_read(s, b, 0, y, n * 4));
        if (memcmp(x, y, n * 4)) fail("copy result");
        break;
    }
    case 5: { /* a 2D stencil on the largest square that fits */
        size_t side = 1;
        while ((side + 1) * (side + 1) <= n) side++;
        float *fx = (float *)x, *fy = (float *)y;
        for (size_t i = 0; i < side * side; i++) fx[i] = (float)(x[i] % 100);
        TRY(gp_buffer_write(s, a, 0, fx, side * side * 4));
        gp_stencil st = {GP_STENCIL_5POINT, GP_F32, GP_BOUNDARY_ZERO, side, side, 1, {1, 0, 0, 0, 0}, 0};
        TRY(gp_stencil_apply(s, &st, GP_VIEW(b), GP_VIEW(a), GP_VIEW(NULL)));
        TRY(gp_buffer_read(s, b, 0, fy, side * side * 4));
        if (memcmp(fx, fy, side * side * 4)) fail("stencil result");
        break;
    }
    default: { /* a small product: identity times x */
        size_t m = 1;
        while ((m + 1) * (m + 1) * 2 <= n && m < 64) m++;
        float *fx = (float *)x, *fy = (float *)y;
        for (size_t i = 0; i < m * m; i++) fx[i] = (float)(i % m == i / m), fx[m * m + i] = (float)(i % 50);
        TRY(gp_buffer_write(s, a, 0, fx, 2 * m * m * 4));
        TRY(gp_gemm(s, GP_GEMM_AUTO, GP_F32, GP_ROW_MAJOR, GP_NO_TRANS, GP_NO_TRANS, m, m, m, 1.0, GP_VIEW(a), m,
                    GP_VIEW_AT(a, m * m), m, 0.0, GP_VIEW(b), m));
        TRY(gp_buffer_read(s, b, 0, fy, m * m * 4));
        if (memcmp(fy, fx + m * m, m * m * 4)) fail("gemm result");
        break;
    }
    }
    atomic_fetch_add(&done, 1);
out:
    gp_event_destroy(e);
    gp_stream_destroy(tmp);
    gp_buffer_destroy(a);
    gp_buffer_destroy(b);
}

static void *worker(void *arg)
{
    uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(uintptr_t)arg + 1;
    uint32_t *x = malloc(2 * N * 4), *y = malloc(2 * N * 4);
    gp_stream *own = NULL;
    if (!x || !y || gp_stream_create(dev, &own) != GP_SUCCESS) {
        fail("worker setup");
        free(x);
        free(y);
        return NULL;
    }
    while (!atomic_load(&stop)) {
        work(&rng, own, x, y);
        if (next(&rng) % 64 == 0 && gp_stream_trim(own) != GP_SUCCESS) fail("gp_stream_trim");
    }
    gp_stream_destroy(own);
    free(x);
    free(y);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *spec = NULL, *csv = NULL;
    double seconds = 60;
    int threads = 4;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) spec = argv[++i];
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) csv = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--device SPEC] [--seconds S] [--threads T] [--csv FILE]\n", argv[0]);
            return 2;
        }
    }
    if (threads < 1 || threads > 64 || seconds <= 0) {
        fprintf(stderr, "soak: --threads 1..64 and --seconds > 0\n");
        return 2;
    }
    gp_program *p = NULL;
    static const char *src = "GP_KERNEL void add(GP_GLOBAL uint *y, GP_GLOBAL const uint *x, uint n, uint k)\n"
                             "{ uint i = gp_global_id(0); if (i < n) y[i] = x[i] + k; }\n";
    if ((spec ? gp_device_find(spec, &dev) : gp_device_default(&dev)) != GP_SUCCESS ||
        gp_program_create(dev, src, NULL, &p) != GP_SUCCESS || gp_kernel_create(p, "add", &kernel) != GP_SUCCESS ||
        gp_stream_create(dev, &shared) != GP_SUCCESS) {
        fprintf(stderr, "soak: %s\n", gp_last_error());
        return 1;
    }
    gp_program_destroy(p);
    gp_device_info info;
    gp_device_get_info(dev, &info);
    FILE *out = csv ? fopen(csv, "w") : NULL;
    if (out) fprintf(out, "seconds,operations,rss_mib\n");
    printf("soak: %d threads on %s:%zu (%s) for %.0f s\n", threads, info.backend, info.backend_index, info.name, seconds);
    pthread_t t[64];
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* A leak lifts the floor of the process's memory; allocator churn (ASan's quarantine, a
     * driver's pools) lifts single samples. So growth is the lowest sample of the second half
     * over the first sample after the warm-up; the peak is shown too. The warm-up is a quarter
     * of a short run: CI's 20 s under ASan on 2 busy cores were still filling the quarantine
     * at 3 s (367 MiB at 2 s, then 415-440 to the end), and a tenth failed as GROWING. */
    double warm = seconds / 4 < 60 ? seconds / 4 : 60, base = 0, peak = 0, low = 0, elapsed = 0, step = seconds / 20;
    for (double next_sample = step; elapsed < seconds;) {
        usleep(100000);
        clock_gettime(CLOCK_MONOTONIC, &now);
        elapsed = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
        if (elapsed < next_sample && elapsed < seconds) continue;
        next_sample += step;
        double rss = tst_rss_mib();
        if (elapsed >= warm && base == 0) base = rss;
        if (base && rss > peak) peak = rss;
        if (elapsed >= seconds / 2 && (low == 0 || rss < low)) low = rss;
        printf("soak: %6.0f s  %8ld operations  RSS %7.1f MiB  errors %ld\n", elapsed, atomic_load(&done), rss,
               atomic_load(&errors));
        if (out) fprintf(out, "%.1f,%ld,%.1f\n", elapsed, atomic_load(&done), rss);
        fflush(stdout);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    gp_stream_destroy(shared);
    gp_kernel_destroy(kernel);
    if (out) fclose(out);
    double growth = low - base;
    int flat = base > 0 && low > 0 && (growth <= 16 || growth <= 0.05 * base);
    printf("soak: %ld operations, %ld errors; RSS after warm-up %.1f MiB, lowest in the second half %.1f (%+.1f), "
           "peak %.1f: %s\n",
           atomic_load(&done), atomic_load(&errors), base, low, growth, peak, flat ? "flat" : "GROWING");
    if (first[0]) printf("soak: first error: %s\n", first);
    return atomic_load(&errors) == 0 && flat && atomic_load(&done) > 0 ? 0 : 1;
}
