/* gpuport-bench: the whole built-in kernel set on every device, each figure next to the vendor's
 * own on the same device in the same run (DESIGN.md, "Performance: how it is measured").
 *
 * Per device, kernel and size: R+1 runs on one stream, a gpuport event recorded before and after
 * each. The first run is dropped; it and the second go alone (the second says whether the rest
 * fit the time budget), the others back to back. Of the R runs after the first, the median and
 * the minimum are reported, with GB/s or GFLOP/s from the median. Bytes are counted as DESIGN.md says (copy 2N, axpy 3N, reduce N,
 * scan 2N, stencils 2N, times 4-byte floats), GEMM as 2 N^3 flops. The last run's result is read
 * back and checked on the host; any failed check or call makes the exit status 1.
 *
 * Anchors, measured in the same run: on CUDA devices cudaMemcpyAsync device to device (copy,
 * axpy and the stencils) and CUB (reduce, scan) from libgpuport-anchor-cuda.so, opened at run
 * time so the bench runs where CUDA is missing; for GEMM the vendor BLAS through
 * gp_gemm(GP_GEMM_VENDOR) where gp_gemm_vendor_info finds it; on CPU devices C loops with OpenMP
 * on the host, timed with the host clock. An OpenCL device of NVIDIA gets the CUDA anchor of the
 * CUDA device of the same name, and its ratio to gpuport's CUDA backend when that device was
 * measured in the same run.
 *
 * xcopy is the one figure of two devices: gp_buffer_copy between every ordered pair of devices,
 * timed on the host clock (the copy spans two devices' clocks). Its anchor is the slower side's
 * own best: cudaMemcpyAsync from or to pinned host memory on a CUDA device (also for an NVIDIA
 * OpenCL device), the host's copy loop on a CPU device, cudaMemcpyPeerAsync for two CUDA devices
 * that reach each other.
 */
#include <dlfcn.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "anchor_cpu.h"
#include "anchor_cuda.h"
#include "gpuport.h"

enum kernel { K_COPY, K_AXPY, K_REDUCE, K_SCAN, K_JACOBI, K_ST3X3, K_ST7, K_SGEMM, K_DGEMM, K_XCOPY, K_COUNT };
enum shape { LINE, GRID2, GRID3, GEMM };

static const struct kdesc {
    const char *name, *what;
    enum shape shape;
    unsigned passes;              /* bytes counted = passes * cells * 4; 0 for GEMM (2 N^3 flops) */
    size_t gpu, cpu, quick; /* default sizes: elements, side or N (GEMM: gemm_sizes, one when quick) */
} kd[K_COUNT] = {
    {"copy", "gp_buffer_copy device to device, bytes 2N", LINE, 2, 1u << 28, 1u << 26, 1u << 22},
    {"axpy", "gp_map GP_MAP_AXPY f32 out = a*x + y, bytes 3N", LINE, 3, 1u << 28, 1u << 26, 1u << 22},
    {"reduce", "gp_reduce GP_REDUCE_SUM f32, result left on the device, bytes N", LINE, 1, 1u << 28, 1u << 26,
     1u << 22},
    {"scan", "gp_scan GP_SCAN_SUM inclusive f32, bytes 2N", LINE, 2, 1u << 28, 1u << 26, 1u << 22},
    {"jacobi", "gp_stencil_apply 5-point f32 weights {0, 1/4 x4}, fixed edges, side^2 cells, bytes 2N", GRID2, 2,
     8192, 8192, 2048},
    {"stencil3x3", "gp_stencil_apply 3x3 f32 with 9 distinct weights, fixed edges, side^2 cells, bytes 2N", GRID2,
     2, 8192, 8192, 2048},
    {"stencil7", "gp_stencil_apply 7-point 3D f32, fixed edges, side^3 cells, bytes 2N", GRID3, 2, 512, 512, 128},
    {"sgemm", "gp_gemm gpuport f32 row-major C = A B, N x N x N, 2 N^3 flops", GEMM, 0, 0, 0, 512},
    {"dgemm", "gp_gemm gpuport f64 row-major C = A B, N x N x N, 2 N^3 flops", GEMM, 0, 0, 0, 256},
    {"xcopy", "gp_buffer_copy from one device to another (each ordered pair), host clock around each blocking "
              "copy, bytes N", LINE, 1, 1u << 26, 1u << 24, 1u << 22},
};
static const size_t gemm_sizes[] = {512, 1024, 2048, 4096, 8192}; /* a course's sizes, smallest first */
static const float axpy_a = 2.5f; /* not a power of two, so a*x rounds */
/* Dyadic weights: exact in f32, so a device that converts them from double adds no error. */
static const double w_jacobi[5] = {0, 0.25, 0.25, 0.25, 0.25};
static const double w_3x3[9] = {1 / 64., 2 / 64., 3 / 64., 4 / 64., -20 / 64., 5 / 64., 6 / 64., 7 / 64., 8 / 64.};
static const double w_7[7] = {0.25, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125};
/* A figure whose R+1 runs would take longer than this is skipped: on a CPU device a large GEMM
 * runs for hours, and a number nobody waits for is worth nothing. */
static const double budget_s = 60;

#define MAX_DEVICES 64
#define MAX_SIZES 8

typedef struct figure {
    double median_ms, min_ms, rate; /* rate: GB/s, or GFLOP/s for GEMM */
} figure;

typedef struct result {
    char spec[24], device[128], backend[16];
    int nvidia_gpu;
    enum kernel k;
    size_t size;     /* elements, side or N */
    char shape[40];  /* "268435456", "8192x8192", "512x512x512" */
    int failed;      /* a call failed or a check did not pass (gpuport's or the anchor's) */
    int measured, anchor_measured;
    figure gp, an;
    char anchor[48];
    double vs_cuda; /* OpenCL on NVIDIA / gpuport's CUDA backend; 0 where not measured */
    char note[600];
} result;

static struct {
    int reps; /* reported runs; one more is run and dropped */
    int reps_given, quick;
    size_t sizes[K_COUNT + 1][MAX_SIZES]; /* per kernel, then [K_COUNT] for every kernel */
    int nsizes[K_COUNT + 1];
    unsigned kernels; /* bit per enum kernel */
    int csv, json, list;
    const char *plot;
    const char *specs[MAX_DEVICES];
    int nspecs;
} opt = {.reps = 20};

static result *results;
static size_t nresults, nplanned;
static FILE *banner; /* stdout for the table, stderr beside --csv and --json */
static int progress_tty;

/* Adds a sentence to a result's note, "; " between parts. */
static void note(result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(result *r, const char *fmt, ...)
{
    size_t len = strlen(r->note);
    if (len && len + 2 < sizeof r->note)
        len += (size_t)snprintf(r->note + len, sizeof r->note - len, "; ");
    if (len >= sizeof r->note)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note + len, sizeof r->note - len, fmt, ap);
    va_end(ap);
}

/* What is running now, on stderr: one line rewritten in place on a terminal, else plain lines. */
static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
    char text[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (progress_tty)
        fprintf(stderr, "\r\033[K[%zu/%zu] %s", nresults, nplanned, text);
    else
        fprintf(stderr, "gpuport-bench: [%zu/%zu] %s\n", nresults, nplanned, text);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ms holds reps + 1 runs; the first is dropped. work: bytes, or flops for GEMM, per run. */
static figure summarize(double *ms, int reps, double work)
{
    figure f;
    qsort(ms + 1, (size_t)reps, sizeof *ms, cmp_double);
    f.median_ms = reps % 2 ? ms[1 + reps / 2] : (ms[reps / 2] + ms[1 + reps / 2]) / 2;
    f.min_ms = ms[1];
    f.rate = f.median_ms > 0 ? work / (f.median_ms * 1e6) : 0;
    return f;
}

/* ---- Host data and checks ------------------------------------------------------------- */

/* x and y: floats in [0,1); s: -1, 0 or +1, so that every sum and prefix of them is exact.
 * Each value is a hash of its index, so a longer array starts with the shorter one. */
static float *hx, *hy, *hs, *hout;
static size_t host_n;

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int host_data(size_t n)
{
    if (n <= host_n)
        return 0;
    free(hx), free(hy), free(hs), free(hout);
    hx = malloc(n * sizeof *hx), hy = malloc(n * sizeof *hy), hs = malloc(n * sizeof *hs);
    hout = malloc(n * sizeof *hout);
    if (!hx || !hy || !hs || !hout) {
        free(hx), free(hy), free(hs), free(hout);
        hx = hy = hs = hout = NULL;
        host_n = 0;
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t h = mix(0x6770706f7274u + i); /* fixed seed: "gpport" */
        hx[i] = (float)(h >> 40) * 0x1p-24f;
        hy[i] = (float)(h & 0xffffffu) * 0x1p-24f;
        hs[i] = (float)((h >> 38) % 3) - 1.0f;
    }
    host_n = n;
    return 0;
}

/* The error bound of a sum of m rounded terms: gamma(m) = m u / (1 - m u). */
static double gamma_m(double m, double u)
{
    return m * u / (1 - m * u);
}

static int check_failed(result *r, const char *who, const char *msg)
{
    r->failed = 1;
    note(r, "%s check failed: %s", who, msg);
    return -1;
}

/* Checks a 1D kernel's out (n floats, or out[0] for reduce) against the host. */
static int check_line(enum kernel k, size_t n, const float *out, result *r, const char *who)
{
    char msg[200] = "";
    if (k == K_COPY) {
        for (size_t i = 0; i < n && !msg[0]; i++)
            if (memcmp(&out[i], &hx[i], sizeof *out))
                snprintf(msg, sizeof msg, "out[%zu] = %.9g, want %.9g", i, out[i], hx[i]);
    } else if (k == K_AXPY) {
        /* Exact up to the one rounding a fused multiply-add saves. */
        for (size_t i = 0; i < n && !msg[0]; i++) {
            float p = axpy_a * hx[i], twice = p + hy[i], fused = fmaf(axpy_a, hx[i], hy[i]);
            if (!(out[i] == twice || out[i] == fused))
                snprintf(msg, sizeof msg, "out[%zu] = %.9g, want %.9g (or fused %.9g)", i, out[i], twice, fused);
        }
    } else if (k == K_REDUCE) {
        /* Every partial sum of -1, 0 and +1, in any order, is an exact integer: the sum must be
         * exact, and a lost or doubled partial shows. */
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += hs[i];
        if ((double)out[0] != sum)
            snprintf(msg, sizeof msg, "sum %.9g, want exactly %.9g", out[0], sum);
    } else {
        double p = 0;
        for (size_t i = 0; i < n && !msg[0]; i++) {
            p += hs[i];
            if ((double)out[i] != p)
                snprintf(msg, sizeof msg, "out[%zu] = %.9g, want exactly %.9g", i, out[i], p);
        }
    }
    return msg[0] ? check_failed(r, who, msg) : 0;
}

/* A stencil's neighbours, in the order of its weights in gpuport.h. */
typedef struct tap {
    int dx, dy, dz;
} tap;
static const tap taps5[5] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}};
static const tap taps9[9] = {{-1, -1, 0}, {0, -1, 0}, {1, -1, 0}, {-1, 0, 0}, {0, 0, 0},
                             {1, 0, 0},   {-1, 1, 0}, {0, 1, 0},  {1, 1, 0}};
static const tap taps7[7] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};

static void stencil_of(enum kernel k, const tap **taps, const double **w, int *m)
{
    *taps = k == K_JACOBI ? taps5 : k == K_ST3X3 ? taps9 : taps7;
    *w = k == K_JACOBI ? w_jacobi : k == K_ST3X3 ? w_3x3 : w_7;
    *m = k == K_JACOBI ? 5 : k == K_ST3X3 ? 9 : 7;
}

/* Every cell of a stencil's out against a sum in double of the input hx: edge cells exactly
 * (they are copied), inner cells within the bound of an m-term dot product in f32 (whatever
 * the order or fusing) plus that of the reference's own sum in double; each product w x is
 * exact in double (24-bit x, weights of at most 5 bits). */
static int check_stencil(enum kernel k, size_t side, const float *out, result *r, const char *who)
{
    const tap *taps;
    const double *w;
    int m;
    stencil_of(k, &taps, &w, &m);
    size_t nx = side, ny = side, nz = kd[k].shape == GRID3 ? side : 1;
    double g = gamma_m(m, 0x1p-24) + gamma_m(m, 0x1p-53);
    char msg[200];
    for (size_t z = 0; z < nz; z++)
        for (size_t y = 0; y < ny; y++)
            for (size_t x = 0; x < nx; x++) {
                size_t i = x + nx * (y + ny * z);
                int edge = x == 0 || y == 0 || x == nx - 1 || y == ny - 1 || (nz > 1 && (z == 0 || z == nz - 1));
                if (edge) {
                    if (memcmp(&out[i], &hx[i], sizeof *out)) {
                        snprintf(msg, sizeof msg, "edge cell (%zu,%zu,%zu) = %.9g, want it unchanged, %.9g", x, y,
                                 z, out[i], hx[i]);
                        return check_failed(r, who, msg);
                    }
                    continue;
                }
                double ref = 0, mag = 0;
                for (int t = 0; t < m; t++) {
                    double p = w[t] * hx[i + (ptrdiff_t)taps[t].dx + (ptrdiff_t)nx * (taps[t].dy + (ptrdiff_t)ny *
                                                                                                      taps[t].dz)];
                    ref += p;
                    mag += fabs(p);
                }
                if (!(fabs(out[i] - ref) <= g * mag)) {
                    snprintf(msg, sizeof msg, "cell (%zu,%zu,%zu) = %.9g, want %.9g within %.3g", x, y, z, out[i],
                             ref, g * mag);
                    return check_failed(r, who, msg);
                }
            }
    return 0;
}

/* GEMM operands: element idx of A (which 0) or B (1), in [-1, 1) with 24 significant bits, so
 * exact in f32 and f64 alike and regenerated on the host at no cost. */
static double gemm_value(int which, uint64_t idx)
{
    uint64_t h = mix(((uint64_t)which << 56) ^ (0x67656d6du + idx));
    return (double)(int64_t)((h >> 40) - (1u << 23)) * 0x1p-23;
}

/* Samples of C (the corners, then hashed positions) against long double dot products, within
 * the bound of a K-term dot product in the type, gamma(K+2) sum |a b| (two more roundings for
 * alpha and the store), plus the reference's own rounding. A full host GEMM at 8192 takes too
 * long; a wrong index or a lost tile still shows in almost every entry. host_c: C on the host
 * (the host anchor), or NULL to read the samples from buffer c. */
static int check_gemm(enum kernel k, size_t n, gp_stream *stream, gp_buffer *c, const void *host_c, result *r,
                      const char *who)
{
    enum { samples = 128 };
    int f64 = k == K_DGEMM;
    size_t elem = f64 ? sizeof(double) : sizeof(float);
    double u = f64 ? 0x1p-53 : 0x1p-24;
    char msg[240];
    for (int s = 0; s < samples; s++) {
        size_t i = s < 4 ? (s & 1 ? n - 1 : 0) : mix(0x73616d70u + 2 * (uint64_t)s) % n;
        size_t j = s < 4 ? (s & 2 ? n - 1 : 0) : mix(0x73616d70u + 2 * (uint64_t)s + 1) % n;
        union {
            float f;
            double d;
        } got;
        if (host_c)
            memcpy(&got, (const char *)host_c + (i * n + j) * elem, elem);
        else if (gp_buffer_read(stream, c, (i * n + j) * elem, &got, elem)) {
            snprintf(msg, sizeof msg, "reading C: %s", gp_last_error());
            return check_failed(r, who, msg);
        }
        double v = f64 ? got.d : (double)got.f;
        long double ref = 0, mag = 0;
        for (size_t q = 0; q < n; q++) {
            long double p = (long double)gemm_value(0, i * n + q) * gemm_value(1, q * n + j);
            ref += p;
            mag += fabsl(p);
        }
        long double bound = (gamma_m((double)n + 2, u) + gamma_m((double)n, LDBL_EPSILON)) * mag;
        if (!(fabsl((long double)v - ref) <= bound)) {
            snprintf(msg, sizeof msg, "C[%zu][%zu] = %.17g, want %.17Lg within %.3Lg", i, j, v, ref, bound);
            return check_failed(r, who, msg);
        }
    }
    return 0;
}

/* ---- The CUDA anchor library ----------------------------------------------------------- */

static struct {
    int tried, count;
    void *lib;
    char path[512], versions[256], why[512];
    gpa_cuda_run_fn run;
    gpa_cuda_peer_fn peer;
    gpa_cuda_device_name_fn device_name;
} cua;

/* Where the anchor library may be: GPUPORT_BENCH_ANCHOR_CUDA, the build tree's lib/ beside
 * bin/, the install folder, then the loader's search path. */
static void cuda_anchor_load(void)
{
    if (cua.tried)
        return;
    cua.tried = 1;
    char exe[400] = "", beside[512], moved[512];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    /* The build tree's lib/, then the install tree's (where it was moved to), then where it
     * was installed. */
    snprintf(beside, sizeof beside, "%s/../lib/libgpuport-anchor-cuda.so", exe);
    snprintf(moved, sizeof moved, "%s/../%s", exe, GPB_ANCHOR_RELATIVE);
    const char *tries[] = {getenv("GPUPORT_BENCH_ANCHOR_CUDA"), beside, moved, GPB_ANCHOR_INSTALLED,
                           "libgpuport-anchor-cuda.so"};
    char first_error[300] = "";
    for (size_t i = 0; i < sizeof tries / sizeof *tries && !cua.lib; i++) {
        if (!tries[i] || !tries[i][0])
            continue;
        cua.lib = dlopen(tries[i], RTLD_NOW | RTLD_LOCAL);
        if (cua.lib)
            snprintf(cua.path, sizeof cua.path, "%s", tries[i]);
        else if (!first_error[0] || access(tries[i], F_OK) == 0)
            snprintf(first_error, sizeof first_error, "%s", dlerror());
    }
    if (!cua.lib) {
        snprintf(cua.why, sizeof cua.why, "libgpuport-anchor-cuda.so not loaded (it is built only where nvcc is): %s",
                 first_error);
        return;
    }
    gpa_cuda_abi_fn abi = (gpa_cuda_abi_fn)dlsym(cua.lib, "gpa_cuda_abi");
    gpa_cuda_versions_fn versions = (gpa_cuda_versions_fn)dlsym(cua.lib, "gpa_cuda_versions");
    gpa_cuda_device_count_fn count = (gpa_cuda_device_count_fn)dlsym(cua.lib, "gpa_cuda_device_count");
    cua.run = (gpa_cuda_run_fn)dlsym(cua.lib, "gpa_cuda_run");
    cua.device_name = (gpa_cuda_device_name_fn)dlsym(cua.lib, "gpa_cuda_device_name");
    cua.peer = (gpa_cuda_peer_fn)dlsym(cua.lib, "gpa_cuda_peer");
    if (!abi || !versions || !count || !cua.run || !cua.device_name || abi() != GPA_CUDA_ABI) {
        snprintf(cua.why, sizeof cua.why, "%s is of another version than this bench (ABI %d, want %d)", cua.path,
                 abi ? abi() : -1, GPA_CUDA_ABI);
        cua.run = NULL;
        return;
    }
    char msg[300] = "";
    if (count(&cua.count, msg, sizeof msg) || versions(cua.versions, sizeof cua.versions, msg, sizeof msg)) {
        snprintf(cua.why, sizeof cua.why, "%s", msg);
        cua.run = NULL;
    }
}

/* The CUDA runtime device for a gpuport device, or -1 with why: cuda:N is runtime device N
 * (both enumerate in the driver's order under the same CUDA_VISIBLE_DEVICES); an OpenCL
 * device of NVIDIA is the first CUDA device of the same name. */
static int cuda_anchor_device(const gp_device_info *info, char *why, size_t why_len)
{
    cuda_anchor_load();
    if (!cua.run) {
        snprintf(why, why_len, "%s", cua.why);
        return -1;
    }
    char name[256], msg[300] = "";
    if (!strcmp(info->backend, "cuda")) {
        if ((int)info->backend_index >= cua.count) {
            snprintf(why, why_len, "the CUDA runtime sees %d devices, not cuda:%zu", cua.count, info->backend_index);
            return -1;
        }
        return (int)info->backend_index;
    }
    for (int d = 0; d < cua.count; d++)
        if (!cua.device_name(d, name, sizeof name, msg, sizeof msg) && !strcmp(name, info->name))
            return d;
    snprintf(why, why_len, "no CUDA runtime device is named \"%s\"", info->name);
    return -1;
}

/* ---- One device, one kernel, one size ------------------------------------------------------ */

typedef struct dev_run {
    gp_device *dev;
    gp_device_info info;
    char spec[24];
    gp_stream *stream;
    gp_event **ev; /* 2 per run */
    int nev;
    int cuda_device; /* the CUDA anchor's device, -1 for none */
    int stream_ok;   /* its stream was made: the device works */
    char anchor_why[512];
    int gemm_vendor; /* gp_gemm_vendor_info found the vendor BLAS */
    char gemm_vendor_text[200];
    /* The last measured size of each kernel, gpuport's (0) and the anchor's (1), to foresee
     * whether the next size fits the budget. */
    struct {
        double work, ms;
    } last[K_COUNT][2];
} dev_run;

typedef struct job {
    dev_run *d;
    enum kernel k;
    size_t size, cells; /* cells: elements, or N^2 for GEMM */
    double work;        /* bytes or flops of one run */
    gp_buffer *buf[3];  /* 1D: x, y, out; stencils: in, out; GEMM: A, B, C */
    gp_stencil stencil;
} job;

static const unsigned nan_bits = 0xffffffffu; /* a NaN, so a kernel that writes nothing fails its check */

static gp_status enqueue(job *j, int vendor)
{
    gp_stream *s = j->d->stream;
    gp_buffer **b = j->buf;
    gp_scalar a = {.f = axpy_a};
    size_t n = j->size;
    switch (j->k) {
    case K_COPY: return gp_buffer_copy_async(s, b[2], 0, b[0], 0, n * sizeof(float));
    case K_AXPY: return gp_map(s, GP_MAP_AXPY, GP_F32, n, GP_VIEW(b[2]), GP_VIEW(b[0]), GP_VIEW(b[1]), &a);
    case K_REDUCE: return gp_reduce(s, GP_REDUCE_SUM, GP_F32, n, GP_VIEW(b[1]), GP_VIEW(b[2]));
    case K_SCAN: return gp_scan(s, GP_SCAN_SUM, 0, GP_F32, n, GP_VIEW(b[1]), GP_VIEW(b[2]));
    case K_SGEMM:
    case K_DGEMM:
        return gp_gemm(s, vendor ? GP_GEMM_VENDOR : GP_GEMM_GPUPORT, j->k == K_SGEMM ? GP_F32 : GP_F64, GP_ROW_MAJOR,
                       GP_NO_TRANS, GP_NO_TRANS, n, n, n, 1.0, GP_VIEW(b[0]), n, GP_VIEW(b[1]), n, 0.0,
                       GP_VIEW(b[2]), n);
    default: return gp_stencil_apply(s, &j->stencil, GP_VIEW(b[1]), GP_VIEW(b[0]), GP_VIEW(NULL));
    }
}

static size_t elem_size(enum kernel k)
{
    return k == K_DGEMM ? sizeof(double) : sizeof(float);
}

/* The result buffer filled with NaN before a timed series. */
static gp_status poison(job *j)
{
    gp_buffer *out = kd[j->k].shape == GRID2 || kd[j->k].shape == GRID3 ? j->buf[1] : j->buf[2];
    size_t bytes = j->k == K_REDUCE ? sizeof(float) : j->cells * elem_size(j->k);
    return gp_buffer_fill(j->d->stream, out, 0, bytes, &nan_bits, sizeof nan_bits);
}

/* A GEMM operand built on the host and written to the device. */
static gp_status upload_operand(job *j, int which)
{
    size_t elem = elem_size(j->k);
    void *h = malloc(j->cells * elem);
    if (!h)
        return GP_ERROR_OUT_OF_HOST_MEMORY;
    for (size_t i = 0; i < j->cells; i++)
        if (j->k == K_DGEMM)
            ((double *)h)[i] = gemm_value(which, i);
        else
            ((float *)h)[i] = (float)gemm_value(which, i);
    gp_status st = gp_buffer_write(j->d->stream, j->buf[which], 0, h, j->cells * elem);
    free(h);
    return st;
}

static gp_status setup(job *j)
{
    dev_run *d = j->d;
    enum shape sh = kd[j->k].shape;
    size_t bytes = j->cells * elem_size(j->k);
    int nbuf = sh == GRID2 || sh == GRID3 ? 2 : 3;
    if (sh != GEMM && host_data(j->cells))
        return GP_ERROR_OUT_OF_HOST_MEMORY;
    gp_status st = GP_SUCCESS;
    for (int i = 0; i < nbuf && !st; i++)
        st = gp_buffer_create(d->dev, GP_MEMORY_DEVICE, bytes, &j->buf[i]);
    if (st)
        return st;
    if (sh == GEMM)
        return (st = upload_operand(j, 0)) ? st : upload_operand(j, 1);
    if (sh != LINE) {
        const tap *taps;
        const double *w;
        int m;
        stencil_of(j->k, &taps, &w, &m);
        j->stencil = (gp_stencil){.shape = j->k == K_JACOBI ? GP_STENCIL_5POINT
                                           : j->k == K_ST3X3 ? GP_STENCIL_3X3
                                                             : GP_STENCIL_7POINT,
                                  .type = GP_F32,
                                  .boundary = GP_BOUNDARY_FIXED,
                                  .nx = j->size,
                                  .ny = j->size,
                                  .nz = sh == GRID3 ? j->size : 1};
        memcpy(j->stencil.weights, w, (size_t)m * sizeof *w);
        return gp_buffer_write(d->stream, j->buf[0], 0, hx, bytes);
    }
    const float *y = j->k == K_AXPY ? hy : hs;
    if ((st = gp_buffer_write(d->stream, j->buf[0], 0, hx, bytes)))
        return st;
    return j->k == K_COPY ? GP_SUCCESS : gp_buffer_write(d->stream, j->buf[1], 0, y, bytes);
}

static void teardown(job *j)
{
    for (int i = 0; i < 3; i++)
        gp_buffer_destroy(j->buf[i]);
}

/* Reads the result back and checks it. */
static int check_device(job *j, result *r, const char *who)
{
    enum shape sh = kd[j->k].shape;
    if (sh == GEMM)
        return check_gemm(j->k, j->size, j->d->stream, j->buf[2], NULL, r, who);
    gp_buffer *out = sh == LINE ? j->buf[2] : j->buf[1];
    size_t bytes = j->k == K_REDUCE ? sizeof(float) : j->cells * sizeof(float);
    if (gp_buffer_read(j->d->stream, out, 0, hout, bytes))
        return check_failed(r, who, gp_last_error());
    return sh == LINE ? check_line(j->k, j->size, hout, r, who) : check_stencil(j->k, j->size, hout, r, who);
}

/* Whether a figure of reps + 1 runs of one_ms each would overrun the budget; says so in r. */
static int over_budget(result *r, const char *who, double one_ms, const char *why)
{
    double total_s = one_ms * (opt.reps + 1) / 1e3;
    if (total_s <= budget_s)
        return 0;
    note(r, "%s skipped: %d runs would take about %.0f s (%s), over the %.0f s budget", who, opt.reps + 1, total_s,
         why, budget_s);
    return 1;
}

/* Whether the previous size's time, scaled by the work, foresees an overrun. */
static int foreseen_over_budget(job *j, result *r, int anchor, const char *who)
{
    double work = j->d->last[j->k][anchor].work, ms = j->d->last[j->k][anchor].ms;
    char why[80];
    snprintf(why, sizeof why, "foreseen from %.3g ms at a smaller size", ms);
    return work > 0 && over_budget(r, who, ms * j->work / work, why);
}

static void remember(job *j, int anchor, const figure *f)
{
    j->d->last[j->k][anchor].work = j->work;
    j->d->last[j->k][anchor].ms = f->median_ms;
}

/* Times gpuport (vendor 0) or the vendor BLAS (1) with device events and checks the result;
 * returns 1 when f holds a checked figure. */
static int time_device(job *j, int vendor, double *ms, result *r, figure *f)
{
    dev_run *d = j->d;
    const char *who = vendor ? "anchor" : "gpuport";
    gp_status st;
    if ((st = poison(j)))
        goto failed;
    for (int i = 0; i <= opt.reps; i++) {
        if ((st = gp_event_record(d->ev[2 * i], d->stream)) || (st = enqueue(j, vendor)) ||
            (st = gp_event_record(d->ev[2 * i + 1], d->stream)))
            goto failed;
        /* The first two go alone: the first may include compiling, the second says how long
         * the rest would take. */
        if (i <= 1) {
            char why[40];
            if ((st = gp_stream_synchronize(d->stream)) ||
                (st = gp_event_elapsed_ms(d->ev[2 * i], d->ev[2 * i + 1], &ms[i])))
                goto failed;
            snprintf(why, sizeof why, "one took %.3g ms", ms[i]);
            if (i == 1 && over_budget(r, who, ms[1], why))
                return 0;
        }
    }
    if ((st = gp_stream_synchronize(d->stream)))
        goto failed;
    for (int i = 2; i <= opt.reps; i++)
        if ((st = gp_event_elapsed_ms(d->ev[2 * i], d->ev[2 * i + 1], &ms[i])))
            goto failed;
    if (check_device(j, r, who))
        return 0;
    *f = summarize(ms, opt.reps, j->work);
    remember(j, vendor, f);
    return 1;
failed:
    r->failed = 1;
    note(r, "%s: %s: %s", who, gp_status_name(st), gp_last_error()[0] ? gp_last_error() : gp_status_string(st));
    gp_stream_synchronize(d->stream); /* drain what was queued before the failure */
    return 0;
}

/* ---- Anchors --------------------------------------------------------------------------- */

/* CUDA anchor figures already measured, so kernels of one size share one memcpy measurement. */
static struct cached {
    int device, kind;
    size_t n;
    figure f;
} cache[4 * MAX_DEVICES];
static int ncache;

/* cudaMemcpy of the kernel's cells (counted 2N, as a stencil's or copy's bytes), or CUB. */
static void anchor_cuda(result *r, int device, size_t n, double *ms)
{
    int kind = r->k == K_REDUCE ? GPA_CUDA_REDUCE : r->k == K_SCAN ? GPA_CUDA_SCAN : GPA_CUDA_MEMCPY;
    static const char *const names[] = {"cudaMemcpy D2D", "CUB DeviceReduce::Sum", "CUB InclusiveSum"};
    enum kernel counted = kind == GPA_CUDA_MEMCPY ? K_COPY : r->k;
    snprintf(r->anchor, sizeof r->anchor, "%s", names[kind]);
    for (int i = 0; i < ncache; i++)
        if (cache[i].device == device && cache[i].kind == kind && cache[i].n == n) {
            r->an = cache[i].f;
            r->anchor_measured = 1;
            return;
        }
    char msg[300] = "";
    if (host_data(n)) {
        note(r, "anchor: out of host memory");
        r->failed = 1;
        return;
    }
    if (cua.run(device, kind, n, kind == GPA_CUDA_MEMCPY ? hx : hs, hout, opt.reps + 1, ms, msg, sizeof msg)) {
        r->failed = 1;
        note(r, "anchor failed: %s", msg);
        return;
    }
    if (check_line(counted, n, hout, r, "anchor"))
        return;
    r->an = summarize(ms, opt.reps, (double)kd[counted].passes * (double)n * sizeof(float));
    r->anchor_measured = 1;
    if (ncache < (int)(sizeof cache / sizeof *cache))
        cache[ncache++] = (struct cached){device, kind, n, r->an};
}

/* A GEMM job's operands in host memory, as setup writes them to the device, and room for C. */
static void gemm_host(const job *j, void **a, void **b, void **c)
{
    size_t elem = elem_size(j->k);
    *a = malloc(j->cells * elem), *b = malloc(j->cells * elem), *c = malloc(j->cells * elem);
    for (size_t i = 0; *a && *b && *c && i < j->cells; i++)
        if (j->k == K_DGEMM)
            ((double *)*a)[i] = gemm_value(0, i), ((double *)*b)[i] = gemm_value(1, i);
        else
            ((float *)*a)[i] = (float)gemm_value(0, i), ((float *)*b)[i] = (float)gemm_value(1, i);
}

/* OpenBLAS beside a CPU device's GEMM (Debian's libopenblas0, loaded at run time, so that the
 * bench needs it only to report it): timed on the host like the host anchor, its result checked,
 * its rate and gpuport's ratio to it in a note. */
static void openblas_note(job *j, result *r, double *ms)
{
    typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                             float *, int);
    typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int, const double *, int,
                             double, double *, int);
    static void *lib;
    static char why[200];
    if (!lib && !why[0] && !(lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL)))
        snprintf(why, sizeof why, "%s (Debian's libopenblas0 has it)", dlerror());
    void *fn = lib ? dlsym(lib, j->k == K_DGEMM ? "cblas_dgemm" : "cblas_sgemm") : NULL;
    if (!fn) {
        note(r, "OpenBLAS: %s", lib ? "no cblas_sgemm or cblas_dgemm in it" : why);
        return;
    }
    void *a, *b, *c;
    gemm_host(j, &a, &b, &c);
    int n = (int)j->size, ok = a && b && c;
    enum { ROW_MAJOR = 101, NO_TRANS = 111 }; /* CBLAS's */
    progress("%s %s %s: OpenBLAS", r->spec, kd[j->k].name, r->shape);
    for (int i = 0; ok && i <= opt.reps; i++) {
        double t0 = now_ms();
        if (j->k == K_DGEMM)
            ((dgemm_fn)fn)(ROW_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
        else
            ((sgemm_fn)fn)(ROW_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        ms[i] = now_ms() - t0;
    }
    if (!ok) {
        note(r, "OpenBLAS: out of host memory");
    } else if (!check_gemm(j->k, j->size, NULL, NULL, c, r, "OpenBLAS")) {
        figure f = summarize(ms, opt.reps, j->work);
        if (r->measured)
            note(r, "OpenBLAS: %.1f GFLOP/s, gpuport %.2fx of it", f.rate, r->gp.rate / f.rate);
        else
            note(r, "OpenBLAS: %.1f GFLOP/s", f.rate);
    }
    free(a), free(b), free(c);
}

/* One run of the host anchor into hout (or c for GEMM, with a and b its operands). */
static void host_once(job *j, float *wf, void *a, void *b, void *c)
{
    size_t n = j->size;
    switch (j->k) {
    case K_COPY: gpa_cpu_copy(hout, hx, n); break;
    case K_AXPY: gpa_cpu_axpy(hout, axpy_a, hx, hy, n); break;
    case K_REDUCE: hout[0] = gpa_cpu_sum(hs, n); break;
    case K_SCAN: gpa_cpu_scan(hout, hs, n); break;
    case K_JACOBI: gpa_cpu_stencil5(hout, hx, n, n, wf); break;
    case K_ST3X3: gpa_cpu_stencil9(hout, hx, n, n, wf); break;
    case K_ST7: gpa_cpu_stencil7(hout, hx, n, wf); break;
    case K_SGEMM: gpa_cpu_sgemm(c, a, b, n); break;
    default: gpa_cpu_dgemm(c, a, b, n); break;
    }
}

/* The C loop on the host, timed with the host clock, for CPU devices. */
static void anchor_cpu(job *j, result *r, double *ms)
{
    static const char *const names[K_COUNT] = {"host memcpy",  "host axpy",    "host sum",
                                               "host scan",    "host 5-point", "host 3x3",
                                               "host 7-point", "host blocked sgemm", "host blocked dgemm"};
    snprintf(r->anchor, sizeof r->anchor, "%s", names[j->k]);
    if (foreseen_over_budget(j, r, 1, "anchor"))
        return;
    progress("%s %s %s: host anchor", r->spec, kd[j->k].name, r->shape);
    const tap *taps;
    const double *w;
    float wf[9] = {0};
    int m;
    void *a = NULL, *b = NULL, *c = NULL;
    if (kd[j->k].shape == GRID2 || kd[j->k].shape == GRID3) {
        stencil_of(j->k, &taps, &w, &m);
        for (int i = 0; i < m; i++)
            wf[i] = (float)w[i];
    }
    if (kd[j->k].shape == GEMM) {
        gemm_host(j, &a, &b, &c);
    } else if (host_data(j->cells)) {
        a = NULL; /* falls into the message below */
    } else {
        a = b = c = hout; /* nothing to allocate */
    }
    if (!a || !b || !c) {
        r->failed = 1;
        note(r, "anchor: out of host memory");
        goto done;
    }
    for (int i = 0; i <= opt.reps; i++) {
        double t0 = now_ms();
        host_once(j, wf, a, b, c);
        ms[i] = now_ms() - t0;
        char why[40];
        snprintf(why, sizeof why, "the first took %.3g ms", ms[0]);
        if (i == 0 && over_budget(r, "anchor", ms[0], why))
            goto done;
    }
    enum shape sh = kd[j->k].shape;
    if (sh == GEMM ? check_gemm(j->k, j->size, NULL, NULL, c, r, "anchor")
        : sh == LINE ? check_line(j->k, j->size, hout, r, "anchor")
                     : check_stencil(j->k, j->size, hout, r, "anchor"))
        goto done;
    r->an = summarize(ms, opt.reps, j->work);
    r->anchor_measured = 1;
    remember(j, 1, &r->an);
done:
    if (kd[j->k].shape == GEMM)
        free(a), free(b), free(c);
}

/* ---- Sizes and the loop over devices --------------------------------------------------- */

static int contains_nocase(const char *s, const char *word)
{
    for (; *s; s++) {
        size_t i = 0;
        while (word[i] && s[i] && (s[i] | 32) == (word[i] | 32))
            i++;
        if (!word[i])
            return 1;
    }
    return 0;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* The sizes kernel k runs at, smallest first (each foresees the next one's time): those asked
 * for this kernel, else those asked for every kernel, else its defaults for a CPU or a GPU. */
static int sizes_for(enum kernel k, int cpu, size_t *sizes)
{
    int from = opt.nsizes[k] ? (int)k : K_COUNT;
    if (opt.nsizes[from]) {
        memcpy(sizes, opt.sizes[from], (size_t)opt.nsizes[from] * sizeof *sizes);
        qsort(sizes, (size_t)opt.nsizes[from], sizeof *sizes, cmp_size);
        return opt.nsizes[from];
    }
    if (opt.quick)
        return sizes[0] = kd[k].quick, 1;
    if (kd[k].shape == GEMM) {
        memcpy(sizes, gemm_sizes, sizeof gemm_sizes);
        return (int)(sizeof gemm_sizes / sizeof *gemm_sizes);
    }
    return sizes[0] = cpu ? kd[k].cpu : kd[k].gpu, 1;
}

/* The sizes of kernel k on one device; none for xcopy, a figure of two devices (bench_pairs). */
static int sizes_of(enum kernel k, const gp_device_info *info, size_t *sizes)
{
    if (k == K_XCOPY && info)
        return 0;
    return sizes_for(k, !info || info->type == GP_DEVICE_CPU, sizes);
}

/* Fills a result's size fields; 0 when the job's buffers fit the device, else the reason in r. */
static int plan(job *j, result *r, const gp_device_info *info)
{
    enum shape sh = kd[j->k].shape;
    double side = (double)j->size;
    double cells = sh == LINE ? side : sh == GRID3 ? side * side * side : side * side; /* GEMM: N^2 */
    size_t s = j->size;
    if (sh == LINE) {
        /* 1D kernels keep their long-standing rule: cap the size so x, y and out fit in a
         * quarter of the device's memory. */
        uint64_t cap = info->global_mem_bytes / 4 / (3 * sizeof(float));
        if (cap && j->size > cap) {
            note(r, "%zu elements do not fit in a quarter of the device's memory: %zu instead", j->size,
                 (size_t)cap);
            j->size = s = (size_t)cap, cells = side = (double)cap;
        }
        snprintf(r->shape, sizeof r->shape, "%zu", s);
    } else if (sh == GRID2) {
        snprintf(r->shape, sizeof r->shape, "%zux%zu", s, s);
    } else if (sh == GRID3) {
        snprintf(r->shape, sizeof r->shape, "%zux%zux%zu", s, s, s);
    } else {
        snprintf(r->shape, sizeof r->shape, "N=%zu", s);
    }
    r->size = j->size;
    double need = (sh == GRID2 || sh == GRID3 ? 2 : 3) * cells * (double)elem_size(j->k);
    if (sh != LINE && need > (double)info->global_mem_bytes / 2) {
        note(r, "skipped: its buffers need %.2f GiB, over half of the device's %.2f GiB", need / (1u << 30),
             (double)info->global_mem_bytes / (1u << 30));
        return -1;
    }
    if (j->k == K_DGEMM && !info->fp64) {
        note(r, "skipped: the device has no f64");
        return -1;
    }
    j->cells = (size_t)cells;
    j->work = sh == GEMM ? 2 * side * side * side : kd[j->k].passes * cells * sizeof(float);
    return 0;
}

static void bench_job(dev_run *d, enum kernel k, size_t size, double *ms)
{
    result *r = &results[nresults++];
    memset(r, 0, sizeof *r);
    snprintf(r->spec, sizeof r->spec, "%s", d->spec);
    snprintf(r->device, sizeof r->device, "%s", d->info.name);
    snprintf(r->backend, sizeof r->backend, "%s", d->info.backend);
    r->nvidia_gpu = d->info.type == GP_DEVICE_GPU && contains_nocase(d->info.vendor, "nvidia");
    r->k = k;
    job j = {.d = d, .k = k, .size = size};
    if (plan(&j, r, &d->info))
        return;
    int cpu = d->info.type == GP_DEVICE_CPU, gemm = kd[k].shape == GEMM;
    int vendor = gemm && d->gemm_vendor;
    if (vendor)
        snprintf(r->anchor, sizeof r->anchor, "%s", d->gemm_vendor_text);
    int run_gp = !foreseen_over_budget(&j, r, 0, "gpuport");
    int run_vendor = vendor && !foreseen_over_budget(&j, r, 1, "anchor");
    gp_status st = run_gp || run_vendor ? setup(&j) : GP_SUCCESS;
    if (st) {
        r->failed = 1;
        note(r, "setup failed: %s", st == GP_ERROR_OUT_OF_HOST_MEMORY ? "out of host memory" : gp_last_error());
    } else {
        if (run_gp) {
            progress("%s %s %s: gpuport, %d runs", d->spec, kd[k].name, r->shape, opt.reps + 1);
            r->measured = time_device(&j, 0, ms, r, &r->gp);
        }
        if (run_vendor) {
            progress("%s %s %s: %s", d->spec, kd[k].name, r->shape, r->anchor);
            r->anchor_measured = time_device(&j, 1, ms, r, &r->an);
        }
    }
    teardown(&j);
    if (cpu && gemm && r->measured) openblas_note(&j, r, ms);
    if (vendor) {
        /* measured above, on the same buffers */
    } else if (cpu) {
        anchor_cpu(&j, r, ms);
    } else if (!gemm && d->cuda_device >= 0) {
        progress("%s %s %s: CUDA anchor on CUDA device %d", d->spec, kd[k].name, r->shape, d->cuda_device);
        anchor_cuda(r, d->cuda_device, j.cells, ms);
    } else {
        note(r, "no anchor: %s", gemm ? d->gemm_vendor_text : d->anchor_why);
    }
}

static void bench_device(dev_run *d, double *ms)
{
    const char *setup_error = NULL;
    d->ev = calloc(2 * (size_t)(opt.reps + 1), sizeof *d->ev);
    if (!d->ev)
        setup_error = "out of host memory";
    else if (gp_stream_create(d->dev, &d->stream))
        setup_error = gp_last_error();
    d->stream_ok = !setup_error;
    for (; !setup_error && d->nev < 2 * (opt.reps + 1); d->nev++)
        if (gp_event_create(d->dev, &d->ev[d->nev]))
            setup_error = gp_last_error();
    for (int k = 0; k < K_COUNT; k++) {
        size_t sizes[MAX_SIZES];
        int ns = (opt.kernels & 1u << k) ? sizes_of((enum kernel)k, &d->info, sizes) : 0;
        for (int s = 0; s < ns; s++) {
            if (!setup_error) {
                bench_job(d, (enum kernel)k, sizes[s], ms);
                continue;
            }
            result *r = &results[nresults++];
            memset(r, 0, sizeof *r);
            snprintf(r->spec, sizeof r->spec, "%s", d->spec);
            snprintf(r->device, sizeof r->device, "%s", d->info.name);
            snprintf(r->backend, sizeof r->backend, "%s", d->info.backend);
            r->k = (enum kernel)k;
            r->size = sizes[s];
            snprintf(r->shape, sizeof r->shape, "%zu", sizes[s]);
            r->failed = 1;
            note(r, "setup failed: %s", setup_error);
        }
    }
    for (int i = 0; i < d->nev; i++)
        gp_event_destroy(d->ev[i]);
    free(d->ev);
    gp_stream_destroy(d->stream);
}

/* ---- Two devices: xcopy ---------------------------------------------------------------- */

/* One side's own best at moving n floats to or from host memory, timed as the bench times:
 * pinned cudaMemcpyAsync on a CUDA device (to_host: device to host), the host's copy loop on a
 * CPU device. 0 with why when the side has none. */
static double side_rate(dev_run *d, size_t n, int to_host, double *ms, char *what, size_t what_len)
{
    if (d->cuda_device >= 0) {
        char msg[300];
        if (cua.run(d->cuda_device, to_host ? GPA_CUDA_D2H : GPA_CUDA_H2D, n, hx, hout, opt.reps + 1, ms, msg,
                    sizeof msg)) {
            snprintf(what, what_len, "%s", msg);
            return 0;
        }
        snprintf(what, what_len, "pinned %s", to_host ? "D2H" : "H2D");
        return summarize(ms, opt.reps, (double)n * 4).rate;
    }
    if (d->info.type == GP_DEVICE_CPU) {
        for (int i = 0; i <= opt.reps; i++) {
            double t0 = now_ms();
            gpa_cpu_copy(hout, hx, n);
            ms[i] = now_ms() - t0;
        }
        snprintf(what, what_len, "host copy");
        return summarize(ms, opt.reps, (double)n * 4).rate;
    }
    snprintf(what, what_len, "%s: %s", d->spec, d->anchor_why);
    return 0;
}

static void bench_pair(dev_run *a, dev_run *b, double *ms)
{
    result *r = &results[nresults++];
    memset(r, 0, sizeof *r);
    snprintf(r->spec, sizeof r->spec, "%s>%s", a->spec, b->spec);
    snprintf(r->device, sizeof r->device, "%s -> %s", a->info.name, b->info.name);
    snprintf(r->backend, sizeof r->backend, "%s>%s", a->info.backend, b->info.backend);
    r->k = K_XCOPY;
    size_t sizes[MAX_SIZES];
    sizes_for(K_XCOPY, a->info.type == GP_DEVICE_CPU || b->info.type == GP_DEVICE_CPU, sizes);
    size_t n = sizes[0], bytes = n * 4;
    r->size = n;
    snprintf(r->shape, sizeof r->shape, "%zu", n);
    if (host_data(n) || (uint64_t)bytes * 2 > a->info.global_mem_bytes || (uint64_t)bytes * 2 > b->info.global_mem_bytes) {
        note(r, "%zu bytes do not fit", bytes);
        return;
    }
    gp_buffer *src = NULL, *dst = NULL;
    gp_status st = gp_buffer_create(a->dev, GP_MEMORY_DEVICE, bytes, &src);
    if (!st) st = gp_buffer_create(b->dev, GP_MEMORY_DEVICE, bytes, &dst);
    if (!st) st = gp_buffer_write(NULL, src, 0, hx, bytes);
    if (!st) st = gp_buffer_fill(NULL, dst, 0, bytes, &nan_bits, 4);
    progress("%s xcopy %zu: gpuport, %d runs", r->spec, n, opt.reps + 1);
    for (int i = 0; !st && i <= opt.reps; i++) {
        double t0 = now_ms();
        st = gp_buffer_copy(NULL, dst, 0, src, 0, bytes);
        ms[i] = now_ms() - t0;
    }
    if (!st) st = gp_buffer_read(NULL, dst, 0, hout, bytes);
    if (st) {
        r->failed = 1;
        note(r, "%s", gp_last_error());
    } else if (memcmp(hout, hx, bytes)) {
        check_failed(r, "gpuport", "the copy differs from the source");
    } else {
        r->gp = summarize(ms, opt.reps, (double)bytes);
        r->measured = 1;
    }
    gp_buffer_destroy(src);
    gp_buffer_destroy(dst);

    /* The anchor: peer between two CUDA devices, else the slower side's pinned (or host) copy. */
    char wa[200], wb[200];
    double rate = 0;
    if (a->cuda_device >= 0 && b->cuda_device >= 0 && a->cuda_device != b->cuda_device && cua.peer &&
        !strcmp(a->info.backend, "cuda") && !strcmp(b->info.backend, "cuda")) {
        progress("%s xcopy %zu: cudaMemcpyPeerAsync", r->spec, n);
        if (!cua.peer(b->cuda_device, a->cuda_device, n, hx, hout, opt.reps + 1, ms, wa, sizeof wa)) {
            rate = summarize(ms, opt.reps, (double)bytes).rate;
            snprintf(r->anchor, sizeof r->anchor, "cudaMemcpyPeerAsync");
        }
    } else {
        /* Each side's own copy to or from host memory; the anchor is the slower, but a CPU
         * device beside a GPU is host memory itself, so there the GPU's pinned copy is it. */
        progress("%s xcopy %zu: each side's own copy", r->spec, n);
        double ra = side_rate(a, n, 1, ms, wa, sizeof wa), rb = side_rate(b, n, 0, ms, wb, sizeof wb);
        int acpu = a->info.type == GP_DEVICE_CPU, bcpu = b->info.type == GP_DEVICE_CPU;
        int use_a = acpu != bcpu ? !acpu : ra < rb;
        rate = ra > 0 && rb > 0 ? (use_a ? ra : rb) : 0;
        if (rate > 0) snprintf(r->anchor, sizeof r->anchor, "%s", use_a ? wa : wb);
        else note(r, "no anchor: %s", ra > 0 ? wb : wa);
        if (rate > 0)
            note(r, "%s %.1f GB/s, %s %.1f GB/s; the anchor is %s", wa, ra, wb, rb,
                 acpu != bcpu ? "the GPU's" : "the slower");
    }
    if (rate > 0) {
        r->an.rate = rate;
        r->an.median_ms = (double)bytes / (rate * 1e6);
        r->an.min_ms = r->an.median_ms;
        r->anchor_measured = 1;
    }
}

static void bench_pairs(dev_run *runs, size_t ndevs, double *ms)
{
    if (!(opt.kernels & 1u << K_XCOPY))
        return;
    for (size_t i = 0; i < ndevs; i++)
        for (size_t j = 0; j < ndevs; j++)
            if (i != j && runs[i].stream_ok && runs[j].stream_ok)
                bench_pair(&runs[i], &runs[j], ms);
}

/* OpenCL on an NVIDIA GPU against gpuport's CUDA backend on the device of the same name. */
static void compare_with_cuda(void)
{
    for (size_t i = 0; i < nresults; i++) {
        result *r = &results[i];
        if (!r->nvidia_gpu || strcmp(r->backend, "opencl") || !r->measured)
            continue;
        for (size_t j = 0; j < nresults; j++) {
            const result *c = &results[j];
            if (!strcmp(c->backend, "cuda") && c->k == r->k && !strcmp(c->shape, r->shape) && c->measured &&
                c->gp.rate > 0 && !strcmp(c->device, r->device)) {
                r->vs_cuda = r->gp.rate / c->gp.rate;
                break;
            }
        }
    }
}

/* ---- Output ---------------------------------------------------------------------------- */

static double ratio_of(const result *r)
{
    return r->measured && r->anchor_measured && r->an.rate > 0 ? r->gp.rate / r->an.rate : 0;
}

static const char *status_of(const result *r)
{
    return r->failed ? "FAIL" : r->measured ? "ok" : "skip";
}

/* "1234.5 GB/s", "850.2 GFLOP/s", "45.31 TFLOP/s". */
static void rate_text(char *text, size_t len, int have, double rate, enum kernel k)
{
    if (!have)
        snprintf(text, len, "-");
    else if (kd[k].shape != GEMM)
        snprintf(text, len, "%.1f GB/s", rate);
    else if (rate >= 1000)
        snprintf(text, len, "%.2f TFLOP/s", rate / 1000);
    else
        snprintf(text, len, "%.1f GFLOP/s", rate);
}

static void put_escaped(FILE *f, const char *s, int json)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (json && (c == '"' || c == '\\'))
            fprintf(f, "\\%c", c);
        else if (json && c < 0x20)
            fprintf(f, "\\u%04x", c);
        else if (!json && c == '"')
            fputs("\"\"", f);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* CSV and JSON: one field each, numbers at full precision, empty or null where there is none. */
static void put_field(int first, const char *key, const char *string, int have, double number)
{
    if (opt.json)
        printf("%s\"%s\": ", first ? "" : ", ", key);
    else if (!first)
        putchar(',');
    if (string)
        put_escaped(stdout, string, opt.json);
    else if (have)
        printf("%.6g", number);
    else if (opt.json)
        printf("null");
}

static void report_machine(void)
{
    static const char *const keys[] = {"device", "device_name", "backend", "kernel", "size", "shape", "median_ms",
                                       "min_ms", "rate", "unit", "anchor", "anchor_median_ms", "anchor_min_ms",
                                       "anchor_rate", "ratio", "vs_cuda", "check", "note"};
    if (opt.csv)
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
            printf("%s%s", i ? "," : "", keys[i]);
    printf(opt.json ? "[" : "\n");
    for (size_t i = 0; i < nresults; i++) {
        const result *r = &results[i];
        double ratio = ratio_of(r);
        if (opt.json)
            printf("%s\n  {", i ? "," : "");
        put_field(1, keys[0], r->spec, 0, 0);
        put_field(0, keys[1], r->device, 0, 0);
        put_field(0, keys[2], r->backend, 0, 0);
        put_field(0, keys[3], kd[r->k].name, 0, 0);
        put_field(0, keys[4], NULL, 1, (double)r->size);
        put_field(0, keys[5], r->shape, 0, 0);
        put_field(0, keys[6], NULL, r->measured, r->gp.median_ms);
        put_field(0, keys[7], NULL, r->measured, r->gp.min_ms);
        put_field(0, keys[8], NULL, r->measured, r->gp.rate);
        put_field(0, keys[9], kd[r->k].shape == GEMM ? "GFLOP/s" : "GB/s", 0, 0);
        put_field(0, keys[10], r->anchor, 0, 0);
        put_field(0, keys[11], NULL, r->anchor_measured, r->an.median_ms);
        put_field(0, keys[12], NULL, r->anchor_measured, r->an.min_ms);
        put_field(0, keys[13], NULL, r->anchor_measured, r->an.rate);
        put_field(0, keys[14], NULL, ratio > 0, ratio);
        put_field(0, keys[15], NULL, r->vs_cuda > 0, r->vs_cuda);
        put_field(0, keys[16], status_of(r), 0, 0);
        put_field(0, keys[17], r->note, 0, 0);
        printf(opt.json ? "}" : "\n");
    }
    if (opt.json)
        printf("\n]\n");
}

static void report_table(void)
{
    printf("%-9s %-7s %-10s %11s %10s %10s %14s  %-22s %14s %6s %7s  %s\n", "device", "backend", "kernel", "size",
           "median ms", "min ms", "rate", "anchor", "anchor rate", "ratio", "vs cuda", "check");
    for (size_t i = 0; i < nresults; i++) {
        const result *r = &results[i];
        char med[24] = "-", min[24] = "-", rate[24], arate[24], ratio[16] = "-", vs[16] = "-";
        if (r->measured) {
            snprintf(med, sizeof med, "%.4f", r->gp.median_ms);
            snprintf(min, sizeof min, "%.4f", r->gp.min_ms);
        }
        rate_text(rate, sizeof rate, r->measured, r->gp.rate, r->k);
        rate_text(arate, sizeof arate, r->anchor_measured, r->an.rate, r->k);
        if (ratio_of(r) > 0)
            snprintf(ratio, sizeof ratio, "%.3f", ratio_of(r));
        if (r->vs_cuda > 0)
            snprintf(vs, sizeof vs, "%.3f", r->vs_cuda);
        printf("%-9s %-7s %-10s %11s %10s %10s %14s  %-22.22s %14s %6s %7s  %s\n", r->spec, r->backend, kd[r->k].name,
               r->shape, med, min, rate, r->anchor_measured ? r->anchor : "-", arate, ratio, vs, status_of(r));
    }
    int any = 0;
    for (size_t i = 0; i < nresults; i++)
        if (results[i].note[0])
            printf("%s%s %s %s: %s\n", any++ ? "" : "\nnotes:\n", results[i].spec, kd[results[i].k].name,
                   results[i].shape, results[i].note);
}

/* ---- The chart ------------------------------------------------------------------------- */

static void svg_text(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
}

/* Grouped bars: one group per kernel and size, one bar per device (backend and device, in the
 * order measured), each gpuport's figure over its anchor's on the same device. The y axis is that
 * ratio, not GB/s or GFLOP/s: it is the one scale on which a bandwidth kernel and a GEMM, a GPU
 * and a CPU, sit side by side (absolute figures span five orders of magnitude and would need an
 * axis per kernel), and it answers the project's question, how close gpuport comes to the vendor
 * on the same device. The scale is logarithmic and bars grow from 1 (the anchor), up where
 * gpuport is faster and down where slower: 2x faster and 2x slower sit equally far from the
 * anchor, and a GPU at 0.9 stays readable beside a CPU device at 8. Absolute figures are in each
 * bar's tooltip and in the table. */
static int plot(const char *path)
{
    enum { bar = 18, gap = 28, left = 64, top = 70, height = 340, legend_row = 18 };
    static const char *const colours[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                          "#56B4E9", "#D55E00", "#F0E442", "#000000"};
    const char *series[MAX_DEVICES];
    int nseries = 0;
    for (size_t i = 0; i < nresults; i++) {
        int s = 0;
        while (s < nseries && strcmp(series[s], results[i].spec))
            s++;
        if (s == nseries && nseries < MAX_DEVICES)
            series[nseries++] = results[i].spec;
    }
    /* Groups in kernel order, each kernel's sizes in the order first met (ascending). */
    struct group {
        enum kernel k;
        const char *shape;
    } *groups = calloc(nresults ? nresults : 1, sizeof *groups);
    int ngroups = 0, lo = -1, hi = 1; /* the axis: 2^lo to 2^hi, at least 1/2 to 2 */
    if (!groups)
        return -1;
    for (int k = 0; k < K_COUNT; k++)
        for (size_t i = 0; i < nresults; i++) {
            const result *r = &results[i];
            int g = 0;
            while (g < ngroups && !(groups[g].k == r->k && !strcmp(groups[g].shape, r->shape)))
                g++;
            if (r->k == (enum kernel)k && g == ngroups)
                groups[ngroups++] = (struct group){r->k, r->shape};
        }
    for (size_t i = 0; i < nresults; i++)
        if (ratio_of(&results[i]) > 0) {
            double e = log2(ratio_of(&results[i]));
            lo = e < lo ? (int)floor(e) : lo;
            hi = e > hi ? (int)ceil(e) : hi;
        }
#define GPB_Y(v) (top + (hi - log2(v)) / (hi - lo) * height)
    int group_w = nseries * bar + gap < 84 ? 84 : nseries * bar + gap; /* room for "128x128x128" */
    int width = left + ngroups * group_w + 20;
    if (width < 980) /* the subtitle's width */
        width = 980;
    int legend_top = top + height + 56;
    FILE *f = fopen(path, "w");
    if (!f) {
        free(groups);
        return -1;
    }
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
               "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            width, legend_top + nseries * legend_row + 16);
    fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">gpuport-bench, gpuport %s: gpuport / "
               "anchor on the same device</text>\n",
            left, gp_version_string());
    fprintf(f, "<text x=\"%d\" y=\"44\" fill=\"#444\">median of %d runs; 1 = the anchor (cudaMemcpy D2D, CUB, the "
               "vendor BLAS, or a C loop on the host for CPU devices); above it gpuport is faster</text>\n",
            left, opt.reps);
    for (int e = lo; e <= hi; e++) {
        double py = GPB_Y(ldexp(1, e));
        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", left, width - 20, py, py,
                e ? "#ddd" : "#c00");
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s%g</text>\n", left - 6, py + 4,
                e < 0 ? "1/" : "", ldexp(1, e < 0 ? -e : e));
    }
    fprintf(f, "<text transform=\"translate(16,%d) rotate(-90)\" text-anchor=\"middle\">gpuport / anchor (log "
               "scale)</text>\n",
            top + height / 2);
    for (int g = 0; g < ngroups; g++) {
        int x0 = left + g * group_w + (group_w - nseries * bar) / 2;
        for (int s = 0; s < nseries; s++) {
            const result *r = NULL;
            for (size_t i = 0; i < nresults && !r; i++)
                if (results[i].k == groups[g].k && !strcmp(results[i].shape, groups[g].shape) &&
                    !strcmp(results[i].spec, series[s]))
                    r = &results[i];
            if (!r)
                continue;
            int x = x0 + s * bar;
            double v = ratio_of(r), y1 = GPB_Y(1.0);
            if (v > 0 && !r->failed) {
                double y2 = GPB_Y(v);
                char gp_rate[24], an_rate[24];
                rate_text(gp_rate, sizeof gp_rate, 1, r->gp.rate, r->k);
                rate_text(an_rate, sizeof an_rate, 1, r->an.rate, r->k);
                fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"><title>", x + 1,
                        y2 < y1 ? y2 : y1, bar - 2, fabs(y2 - y1) > 1 ? fabs(y2 - y1) : 1, colours[s % 8]);
                svg_text(f, r->spec);
                fprintf(f, " %s %s: %s, anchor ", kd[r->k].name, r->shape, gp_rate);
                svg_text(f, r->anchor);
                fprintf(f, " %s, ratio %.3f</title></rect>\n", an_rate, v);
                fprintf(f, "<text transform=\"translate(%d,%.1f) rotate(-90)\" font-size=\"10\"%s>%.2f</text>\n",
                        x + bar / 2 + 4, v >= 1 ? y2 - 3 : y2 + 3, v >= 1 ? "" : " text-anchor=\"end\"", v);
            } else {
                fprintf(f, "<text transform=\"translate(%d,%.1f) rotate(-90)\" font-size=\"10\" fill=\"%s\">%s</text>\n",
                        x + bar / 2 + 4, y1 - 3, r->failed ? "#c00" : "#888",
                        r->failed ? "FAIL" : r->measured ? "no anchor" : "skipped");
            }
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x0 + nseries * bar / 2,
                top + height + 18, kd[groups[g].k].name);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\" fill=\"#444\">%s</text>\n",
                x0 + nseries * bar / 2, top + height + 32, groups[g].shape);
    }
#undef GPB_Y
    for (int s = 0; s < nseries; s++) {
        const char *name = "";
        for (size_t i = 0; i < nresults; i++)
            if (!strcmp(results[i].spec, series[s]))
                name = results[i].device;
        int y = legend_top + s * legend_row;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n<text x=\"%d\" y=\"%d\">",
                left, y - 10, colours[s % 8], left + 18, y);
        svg_text(f, series[s]);
        fputs("  ", f);
        svg_text(f, name);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    free(groups);
    return fclose(f) ? -1 : 0;
}

/* ---- Main ------------------------------------------------------------------------------ */

static const char usage[] =
    "usage: gpuport-bench [--device SPEC]... [--kernel NAME]... [--size [KERNEL=]N]... [--reps R] [--quick]\n"
    "                     [--csv | --json] [--plot FILE.svg] [--list]\n"
    "  --device SPEC  a device as gp_device_find takes it (cuda:0, opencl:1, gpu, cpu) or its index in\n"
    "                 --list; repeatable; default: every device\n"
    "  --kernel NAME  copy, axpy, reduce, scan, jacobi, stencil3x3, stencil7, sgemm, dgemm, xcopy (between\n"
    "                 every ordered pair of devices); repeatable; default: all\n"
    "  --size N       elements for the 1D kernels, the side for the stencils (N x N, or N^3 for stencil7),\n"
    "                 N for GEMM (N x N x N); KERNEL=N for one kernel (over a plain N); repeatable.\n"
    "                 Default: 2^28 elements on GPUs and 2^26 on CPU devices (capped so the three buffers\n"
    "                 fit in a quarter of the device's memory), 8192^2 and 512^3 cells, GEMM at N = 512,\n"
    "                 1024, 2048, 4096, 8192; sizes over half the device's memory are skipped, and so are\n"
    "                 those whose runs would take over a minute (a note says so)\n"
    "  --reps R       runs reported (one more is run first and dropped); default 20, the least for\n"
    "                 figures worth quoting\n"
    "  --quick        every kernel at one small size and 5 runs: the whole set in a minute or two on a\n"
    "                 CPU; figures for a first look, not for quoting\n"
    "  --csv, --json  results in CSV (with a header row) or as a JSON array; the banner goes to stderr\n"
    "  --plot FILE    also draw the ratios to the anchors as an SVG chart\n"
    "  --list         list the devices and kernels, then exit\n"
    "Exit status: 0 when every check passed, 1 when a check or call failed, 2 on bad usage, 77 with no\n"
    "device. GPUPORT_BENCH_ANCHOR_CUDA names the CUDA anchor library where it is not found by itself.\n";

static int kernel_by_name(const char *name, size_t len)
{
    for (int k = 0; k < K_COUNT; k++)
        if (strlen(kd[k].name) == len && !strncmp(name, kd[k].name, len))
            return k;
    return -1;
}

/* --size N or --size KERNEL=N. */
static int parse_size(const char *v)
{
    const char *eq = strchr(v, '='), *num = eq ? eq + 1 : v;
    int k = eq ? kernel_by_name(v, (size_t)(eq - v)) : -1;
    char *end = NULL;
    unsigned long long n = strtoull(num, &end, 0);
    if ((eq && k < 0) || !*num || *end || n == 0 || n > (1ull << 40) || *num == '-') {
        fprintf(stderr, "gpuport-bench: --size %s: want N or KERNEL=N with N > 0\n", v);
        return -1;
    }
    k = eq ? k : K_COUNT;
    if (opt.nsizes[k] == MAX_SIZES) {
        fprintf(stderr, "gpuport-bench: at most %d sizes per kernel\n", MAX_SIZES);
        return -1;
    }
    opt.sizes[k][opt.nsizes[k]++] = (size_t)n;
    return 0;
}

static int parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--csv"))
            opt.csv = 1;
        else if (!strcmp(a, "--json"))
            opt.json = 1;
        else if (!strcmp(a, "--list"))
            opt.list = 1;
        else if (!strcmp(a, "--quick"))
            opt.quick = 1;
        else if (!strcmp(a, "--plot") && v)
            opt.plot = argv[++i];
        else if (!strcmp(a, "--device") && v && opt.nspecs < MAX_DEVICES)
            opt.specs[opt.nspecs++] = argv[++i];
        else if (!strcmp(a, "--kernel") && v) {
            int k = kernel_by_name(v, strlen(v));
            if (k < 0) {
                fprintf(stderr, "gpuport-bench: no kernel \"%s\" (--list names them)\n", v);
                return -1;
            }
            opt.kernels |= 1u << k;
            i++;
        } else if (!strcmp(a, "--size") && v) {
            if (parse_size(argv[++i]))
                return -1;
        } else if (!strcmp(a, "--reps") && v && (opt.reps = (int)strtol(v, &end, 10)) >= 1 && opt.reps <= 100000 &&
                   !*end) {
            opt.reps_given = 1;
            i++;
        } else {
            fputs(usage, stderr);
            return -1;
        }
    }
    if (opt.csv && opt.json) {
        fprintf(stderr, "gpuport-bench: --csv or --json, not both\n");
        return -1;
    }
    if (opt.quick && !opt.reps_given)
        opt.reps = 5;
    if (!opt.kernels)
        opt.kernels = (1u << K_COUNT) - 1;
    return 0;
}

/* The devices asked for, each once, in the order asked; every device when none was named. */
static int pick_devices(gp_device **devs, size_t *ndevs)
{
    size_t count = 0;
    *ndevs = 0;
    if (gp_device_count(&count) || !count)
        return 0; /* no device at all: the caller says so */
    if (!opt.nspecs) {
        for (size_t i = 0; i < count && *ndevs < MAX_DEVICES; i++)
            if (!gp_device_get(i, &devs[*ndevs]))
                ++*ndevs;
        return 0;
    }
    for (int s = 0; s < opt.nspecs; s++) {
        gp_device *d = NULL;
        char *end = NULL;
        unsigned long index = strtoul(opt.specs[s], &end, 10);
        gp_status st = *opt.specs[s] && !*end ? gp_device_get(index, &d) : gp_device_find(opt.specs[s], &d);
        if (st) {
            fprintf(stderr, "gpuport-bench: device \"%s\": %s\n", opt.specs[s], gp_last_error());
            return -1;
        }
        size_t j = 0;
        while (j < *ndevs && devs[j] != d)
            j++;
        if (j == *ndevs)
            devs[(*ndevs)++] = d;
    }
    return 0;
}

static void list(gp_device **devs, size_t ndevs)
{
    static const char *const types[] = {"?", "gpu", "cpu", "other"};
    printf("devices:\n");
    for (size_t i = 0; i < ndevs; i++) {
        gp_device_info info;
        if (gp_device_get_info(devs[i], &info))
            continue;
        printf("  %zu  %s:%zu  %-5s %s (%s)\n", i, info.backend, info.backend_index,
               types[info.type >= 1 && info.type <= 3 ? info.type : 0], info.name, info.vendor);
    }
    printf("kernels:\n");
    for (int k = 0; k < K_COUNT; k++)
        printf("  %-10s  %s\n", kd[k].name, kd[k].what);
}

/* The banner lines of one device, and what its anchors will be. */
static void describe_device(dev_run *d, int *need_cpu_anchor)
{
    const gp_device_info *info = &d->info;
    fprintf(banner, "%-9s %s (%s), backend %s, driver %s, runtime %s, %.1f GiB, %u compute units\n", d->spec,
            info->name, info->vendor, info->backend, info->driver_version, info->runtime_version,
            (double)info->global_mem_bytes / (1u << 30), info->compute_units);
    int nvidia = info->type == GP_DEVICE_GPU && contains_nocase(info->vendor, "nvidia");
    if (info->type == GP_DEVICE_CPU) {
        *need_cpu_anchor = 1;
    } else if (!strcmp(info->backend, "cuda") || (nvidia && !strcmp(info->backend, "opencl"))) {
        d->cuda_device = cuda_anchor_device(info, d->anchor_why, sizeof d->anchor_why);
        char name[256] = "", msg[300] = "";
        if (d->cuda_device >= 0 && cua.device_name(d->cuda_device, name, sizeof name, msg, sizeof msg))
            snprintf(name, sizeof name, "(name unknown: %s)", msg);
        if (d->cuda_device >= 0)
            fprintf(banner, "          anchor: CUDA runtime device %d, %s%s\n", d->cuda_device, name,
                    strcmp(name, info->name) ? "  WARNING: not the name gpuport reports" : "");
        else
            fprintf(banner, "          anchor unavailable: %s\n", d->anchor_why);
    } else {
        snprintf(d->anchor_why, sizeof d->anchor_why, "no vendor anchor for %s devices of %s yet", info->backend,
                 info->vendor);
    }
    if (!(opt.kernels & (1u << K_SGEMM | 1u << K_DGEMM)))
        return;
    char text[200] = "";
    d->gemm_vendor = gp_gemm_vendor_info(d->dev, text, sizeof text) == GP_SUCCESS;
    if (d->gemm_vendor)
        snprintf(d->gemm_vendor_text, sizeof d->gemm_vendor_text, "%s", text);
    else
        snprintf(d->gemm_vendor_text, sizeof d->gemm_vendor_text, "no vendor BLAS: %s",
                 text[0] ? text : gp_last_error());
    fprintf(banner, "          GEMM anchor: %s%s\n", d->gemm_vendor_text,
            !d->gemm_vendor && info->type == GP_DEVICE_CPU ? "; a blocked C loop on the host instead" : "");
}

int main(int argc, char **argv)
{
    static gp_device *devs[MAX_DEVICES];
    static dev_run runs[MAX_DEVICES];
    size_t ndevs = 0;
    if (parse(argc, argv))
        return 2;
    banner = opt.csv || opt.json ? stderr : stdout;
    progress_tty = isatty(STDERR_FILENO);
    if (pick_devices(devs, &ndevs))
        return 1;
    if (opt.list) {
        list(devs, ndevs);
        return 0;
    }
    if (!ndevs) {
        fprintf(stderr, "gpuport-bench: no device found (gpuport-info says why)\n");
        return 77;
    }
    fprintf(banner, "gpuport-bench, gpuport %s: %d runs per figure after 1 dropped, median and min, device events; "
                    "rate from the median,\nbytes counted as copy 2N, axpy 3N, reduce N, scan 2N, stencils 2N (f32), "
                    "GEMM 2N^3 flops; ratio = gpuport / anchor; vs cuda = OpenCL / CUDA backend\n",
            gp_version_string(), opt.reps);
    if (opt.quick)
        fprintf(banner, "--quick: one small size per kernel and %d runs: a first look, not figures to quote\n",
                opt.reps);
    else if (opt.reps < 20)
        fprintf(banner, "WARNING: --reps %d is below 20; the figures are a smoke test, not for quoting\n",
                opt.reps);
    int need_cpu_anchor = 0;
    for (size_t i = 0; i < ndevs; i++) {
        dev_run *d = &runs[i];
        d->dev = devs[i];
        d->cuda_device = -1;
        gp_device_info info; /* a copy: gcc's -Wrestrict takes fields of one struct for overlap */
        if (gp_device_get_info(d->dev, &info)) {
            fprintf(stderr, "gpuport-bench: %s\n", gp_last_error());
            return 1;
        }
        d->info = info;
        snprintf(d->spec, sizeof d->spec, "%s:%zu", info.backend, info.backend_index);
        describe_device(d, &need_cpu_anchor);
        for (int k = 0; k < K_COUNT; k++) {
            size_t sizes[MAX_SIZES];
            nplanned += (opt.kernels & 1u << k) ? (size_t)sizes_of((enum kernel)k, &d->info, sizes) : 0;
        }
    }
    if (opt.kernels & 1u << K_XCOPY)
        nplanned += ndevs * (ndevs - 1); /* every ordered pair */
    if (cua.run)
        fprintf(banner, "CUDA anchor: %s, %s\n", cua.path, cua.versions);
    if (need_cpu_anchor) {
        char text[128];
        gpa_cpu_describe(text, sizeof text);
        fprintf(banner, "CPU anchor: %s on the host, host clock\n", text);
    }
    fprintf(banner, "\n");
    fflush(banner); /* before the progress lines on stderr */

    double *ms = malloc((size_t)(opt.reps + 1) * sizeof *ms);
    results = calloc(nplanned ? nplanned : 1, sizeof *results);
    if (!ms || !results) {
        fprintf(stderr, "gpuport-bench: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < ndevs; i++)
        bench_device(&runs[i], ms);
    bench_pairs(runs, ndevs, ms);
    if (progress_tty)
        fputs("\r\033[K", stderr);
    compare_with_cuda();
    if (opt.csv || opt.json)
        report_machine();
    else
        report_table();
    int failed = 0;
    for (size_t i = 0; i < nresults; i++)
        failed |= results[i].failed;
    if (opt.plot && plot(opt.plot)) {
        fprintf(stderr, "gpuport-bench: could not write %s\n", opt.plot);
        failed = 1;
    }
    free(ms);
    free(results);
    free(hx), free(hy), free(hs), free(hout);
    return failed;
}
