/* gpuport-bench: the built-in primitives' bandwidth on every device, each next to the vendor's
 * own figure on the same device in the same run (DESIGN.md, "Performance: how it is measured").
 *
 * Per device and kernel: R+1 runs queued back to back on one stream, a gpuport event recorded
 * before and after each; the first run is dropped and the median and minimum of the other R are
 * reported, with GB/s from the median and bytes counted as DESIGN.md says (copy 2N, axpy 3N,
 * reduce N, scan 2N, times 4-byte floats). The last run's result is read back and checked
 * against a host computation; any failed check or call makes the exit status 1.
 *
 * Anchors: on CUDA devices cudaMemcpyAsync device to device (for copy and axpy) and CUB (reduce,
 * scan) from libgpuport-anchor-cuda.so, opened at run time so the bench runs where CUDA is
 * missing; on CPU devices a C loop with OpenMP on the host, timed with the host clock. An
 * OpenCL device of NVIDIA gets the CUDA anchor of the CUDA device of the same name, and its
 * ratio to gpuport's CUDA backend figure when that device was measured in the same run.
 */
#include <dlfcn.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "anchor_cpu.h"
#include "anchor_cuda.h"
#include "gpuport.h"

enum kernel { K_COPY, K_AXPY, K_REDUCE, K_SCAN, K_COUNT };
static const char *const kernel_name[K_COUNT] = {"copy", "axpy", "reduce", "scan"};
static const char *const kernel_what[K_COUNT] = {
    "gp_buffer_copy device to device, bytes 2N", "gp_map GP_MAP_AXPY f32 out = a*x + y, bytes 3N",
    "gp_reduce GP_REDUCE_SUM f32, result left on the device, bytes N",
    "gp_scan GP_SCAN_SUM inclusive f32, bytes 2N"};
static const unsigned kernel_passes[K_COUNT] = {2, 3, 1, 2}; /* bytes counted = passes * N * 4 */
static const float axpy_a = 2.5f; /* not a power of two, so a*x rounds */

#define MAX_DEVICES 64

typedef struct figure {
    double median_ms, min_ms, gbs;
} figure;

typedef struct result {
    char spec[24], device[128], backend[16];
    int nvidia_gpu;
    enum kernel k;
    size_t n;
    int failed; /* a call failed or a check did not pass (gpuport's or the anchor's) */
    int measured;
    figure gp;
    char anchor[40];
    int anchor_measured;
    figure an;
    double vs_cuda; /* OpenCL on NVIDIA / gpuport's CUDA backend, GB/s; 0 where not measured */
    char note[400];
} result;

static struct {
    int reps; /* reported runs; one more is run and dropped */
    size_t size;
    unsigned kernels; /* bit per enum kernel */
    int csv, json, list;
    const char *specs[MAX_DEVICES];
    int nspecs;
} opt = {20, 0, 0, 0, 0, 0, {0}, 0};

static result *results;
static size_t nresults;
static FILE *banner; /* stdout for the table, stderr beside --csv and --json */

/* Adds text to a result's note, "; " between parts. */
static void note(result *r, const char *fmt, const char *a, const char *b)
{
    size_t len = strlen(r->note);
    if (len && len + 2 < sizeof r->note)
        len += (size_t)snprintf(r->note + len, sizeof r->note - len, "; ");
    if (len < sizeof r->note)
        snprintf(r->note + len, sizeof r->note - len, fmt, a, b);
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

/* ms holds reps + 1 runs; the first is dropped. */
static figure summarize(double *ms, int reps, enum kernel k, size_t n)
{
    figure f;
    qsort(ms + 1, (size_t)reps, sizeof *ms, cmp_double);
    f.median_ms = reps % 2 ? ms[1 + reps / 2] : (ms[reps / 2] + ms[1 + reps / 2]) / 2;
    f.min_ms = ms[1];
    f.gbs = f.median_ms > 0 ? (double)kernel_passes[k] * (double)n * sizeof(float) / (f.median_ms * 1e6) : 0;
    return f;
}

/* ---- Host data and checks ------------------------------------------------------------- */

/* x and y: floats in [0,1); s: 0 or 1, so that scan prefixes up to 2^24 are exact in f32.
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
        host_n = 0;
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t h = mix(0x6770706f7274u + i); /* fixed seed: "gpport" */
        hx[i] = (float)(h >> 40) * 0x1p-24f;
        hy[i] = (float)(h & 0xffffffu) * 0x1p-24f;
        hs[i] = (float)((h >> 38) % 3) - 1.0f; /* -1, 0, +1: every partial sum is exact */
    }
    host_n = n;
    return 0;
}

/* Checks out (n floats, or out[0] for reduce) against the host; writes why to r on failure. */
static int check(enum kernel k, size_t n, const float *out, result *r, const char *who)
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
        /* The data are -1, 0 and +1, so every partial sum, in any order, is an exact integer:
         * the sum must be exact, and a lost or doubled partial shows. */
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += hs[i];
        if ((double)out[0] != sum)
            snprintf(msg, sizeof msg, "sum %.9g, want exactly %.9g", out[0], sum);
    } else {
        /* Prefixes of -1, 0 and +1 are exact: every position must match. */
        double p = 0;
        for (size_t i = 0; i < n && !msg[0]; i++) {
            p += hs[i];
            if ((double)out[i] != p)
                snprintf(msg, sizeof msg, "out[%zu] = %.9g, want exactly %.9g", i, out[i], p);
        }
    }
    if (!msg[0])
        return 0;
    r->failed = 1;
    note(r, "%s check failed: %s", who, msg);
    return -1;
}

/* ---- Anchors --------------------------------------------------------------------------- */

static struct {
    int tried, count;
    void *lib;
    char path[512], versions[256], why[512];
    gpa_cuda_run_fn run;
    gpa_cuda_device_name_fn device_name;
} cua;

/* Where the anchor library may be: GPUPORT_BENCH_ANCHOR_CUDA, the build tree's lib/ beside
 * bin/, the install folder, then the loader's search path. */
static void cuda_anchor_load(void)
{
    if (cua.tried)
        return;
    cua.tried = 1;
    char exe[400] = "", beside[512];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    snprintf(beside, sizeof beside, "%s/../lib/libgpuport-anchor-cuda.so", exe);
    const char *tries[] = {getenv("GPUPORT_BENCH_ANCHOR_CUDA"), beside, GPB_ANCHOR_INSTALLED,
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

/* Anchor figures already measured, so copy and axpy on one GPU share one memcpy measurement. */
static struct cached {
    int device, kind;
    size_t n;
    figure f;
} cache[3 * MAX_DEVICES];
static int ncache;

static void anchor_cuda(result *r, int device, double *ms)
{
    int kind = r->k == K_REDUCE ? GPA_CUDA_REDUCE : r->k == K_SCAN ? GPA_CUDA_SCAN : GPA_CUDA_MEMCPY;
    static const char *const names[] = {"cudaMemcpy D2D", "CUB DeviceReduce::Sum", "CUB InclusiveSum"};
    snprintf(r->anchor, sizeof r->anchor, "%s", names[kind]);
    enum kernel counted = kind == GPA_CUDA_MEMCPY ? K_COPY : r->k; /* memcpy moves 2N bytes */
    for (int i = 0; i < ncache; i++)
        if (cache[i].device == device && cache[i].kind == kind && cache[i].n == r->n) {
            r->an = cache[i].f;
            r->anchor_measured = 1;
            return;
        }
    char msg[300] = "";
    if (cua.run(device, kind, r->n, kind == GPA_CUDA_MEMCPY ? hx : hs, hout, opt.reps + 1, ms, msg, sizeof msg)) {
        r->failed = 1;
        note(r, "anchor failed: %s", msg, "");
        return;
    }
    if (check(counted, r->n, hout, r, "anchor"))
        return;
    r->an = summarize(ms, opt.reps, counted, r->n);
    r->anchor_measured = 1;
    if (ncache < (int)(sizeof cache / sizeof *cache))
        cache[ncache++] = (struct cached){device, kind, r->n, r->an};
}

static void anchor_cpu(result *r, double *ms)
{
    static const char *const names[K_COUNT] = {"host memcpy", "host axpy", "host sum", "host scan"};
    snprintf(r->anchor, sizeof r->anchor, "%s", names[r->k]);
    for (int i = 0; i <= opt.reps; i++) {
        double t0 = now_ms();
        switch (r->k) {
        case K_COPY: gpa_cpu_copy(hout, hx, r->n); break;
        case K_AXPY: gpa_cpu_axpy(hout, axpy_a, hx, hy, r->n); break;
        case K_REDUCE: hout[0] = gpa_cpu_sum(hs, r->n); break;
        default: gpa_cpu_scan(hout, hs, r->n); break;
        }
        ms[i] = now_ms() - t0;
    }
    if (check(r->k, r->n, hout, r, "anchor"))
        return;
    r->an = summarize(ms, opt.reps, r->k, r->n);
    r->anchor_measured = 1;
}

/* ---- gpuport --------------------------------------------------------------------------- */

typedef struct dev_run {
    gp_device *dev;
    gp_device_info info;
    char spec[24];
    size_t n;
    gp_stream *stream;
    gp_buffer *x, *y, *out;
    gp_event **ev; /* 2 per run */
    int nev;
    int cuda_device; /* the anchor's device, -1 for none */
    char anchor_why[512];
} dev_run;

static gp_status enqueue(dev_run *d, enum kernel k)
{
    gp_scalar a = {.f = axpy_a};
    switch (k) {
    case K_COPY: return gp_buffer_copy_async(d->stream, d->out, 0, d->x, 0, d->n * sizeof(float));
    case K_AXPY: return gp_map(d->stream, GP_MAP_AXPY, GP_F32, d->n, GP_VIEW(d->out), GP_VIEW(d->x), GP_VIEW(d->y), a);
    case K_REDUCE: return gp_reduce(d->stream, GP_REDUCE_SUM, GP_F32, d->n, GP_VIEW(d->y), GP_VIEW(d->out));
    default: return gp_scan(d->stream, GP_SCAN_SUM, 0, GP_F32, d->n, GP_VIEW(d->y), GP_VIEW(d->out));
    }
}

/* Times one kernel on one device; r->measured when every run went through. */
static void time_gpuport(dev_run *d, result *r, double *ms)
{
    const unsigned nan_bits = 0xffffffffu; /* a NaN in out, so a kernel that writes nothing fails its check */
    size_t bytes = d->n * sizeof(float);
    const float *y = r->k == K_AXPY ? hy : r->k == K_COPY ? NULL : hs;
    gp_status st = GP_SUCCESS;
    if ((y && (st = gp_buffer_write(d->stream, d->y, 0, y, bytes))) ||
        (st = gp_buffer_fill(d->stream, d->out, 0, bytes, &nan_bits, sizeof nan_bits)))
        goto failed;
    for (int i = 0; i <= opt.reps; i++)
        if ((st = gp_event_record(d->ev[2 * i], d->stream)) || (st = enqueue(d, r->k)) ||
            (st = gp_event_record(d->ev[2 * i + 1], d->stream)))
            goto failed;
    if ((st = gp_stream_synchronize(d->stream)))
        goto failed;
    for (int i = 0; i <= opt.reps; i++)
        if ((st = gp_event_elapsed_ms(d->ev[2 * i], d->ev[2 * i + 1], &ms[i])))
            goto failed;
    if ((st = gp_buffer_read(d->stream, d->out, 0, hout, r->k == K_REDUCE ? sizeof(float) : bytes)))
        goto failed;
    if (check(r->k, d->n, hout, r, "gpuport"))
        return;
    r->gp = summarize(ms, opt.reps, r->k, d->n);
    r->measured = 1;
    return;
failed:
    r->failed = 1;
    note(r, "gpuport: %s: %s", gp_status_name(st), gp_last_error()[0] ? gp_last_error() : gp_status_string(st));
    gp_stream_synchronize(d->stream); /* drain what was queued before the failure */
}

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

/* The default size, capped so x, y and out fit in a quarter of the device's memory. */
static size_t device_size(const gp_device_info *info)
{
    size_t n = opt.size ? opt.size : info->type == GP_DEVICE_CPU ? (size_t)1 << 26 : (size_t)1 << 28;
    uint64_t cap = info->global_mem_bytes / 4 / (3 * sizeof(float));
    if (cap && n > cap) {
        fprintf(stderr, "gpuport-bench: %s: %zu elements do not fit in a quarter of its memory; %zu instead\n",
                info->name, n, (size_t)cap);
        n = (size_t)cap;
    }
    return n;
}

static void release(dev_run *d)
{
    for (int i = 0; i < d->nev; i++)
        gp_event_destroy(d->ev[i]);
    free(d->ev);
    gp_buffer_destroy(d->x);
    gp_buffer_destroy(d->y);
    gp_buffer_destroy(d->out);
    gp_stream_destroy(d->stream);
}

static void bench_device(dev_run *d, double *ms)
{
    size_t bytes = d->n * sizeof(float);
    const char *setup_error = NULL;
    d->ev = calloc(2 * (size_t)(opt.reps + 1), sizeof *d->ev);
    if (!d->ev || host_data(d->n))
        setup_error = "out of host memory";
    else if (gp_stream_create(d->dev, &d->stream) || gp_buffer_create(d->dev, GP_MEMORY_DEVICE, bytes, &d->x) ||
             gp_buffer_create(d->dev, GP_MEMORY_DEVICE, bytes, &d->y) ||
             gp_buffer_create(d->dev, GP_MEMORY_DEVICE, bytes, &d->out) ||
             gp_buffer_write(d->stream, d->x, 0, hx, bytes))
        setup_error = gp_last_error();
    for (; !setup_error && d->nev < 2 * (opt.reps + 1); d->nev++)
        if (gp_event_create(d->dev, &d->ev[d->nev]))
            setup_error = gp_last_error();
    for (int k = 0; k < K_COUNT; k++) {
        if (!(opt.kernels & 1u << k))
            continue;
        result *r = &results[nresults++];
        memset(r, 0, sizeof *r);
        snprintf(r->spec, sizeof r->spec, "%s", d->spec);
        snprintf(r->device, sizeof r->device, "%s", d->info.name);
        snprintf(r->backend, sizeof r->backend, "%s", d->info.backend);
        r->nvidia_gpu = d->info.type == GP_DEVICE_GPU && contains_nocase(d->info.vendor, "nvidia");
        r->k = (enum kernel)k;
        r->n = d->n;
        if (setup_error) {
            r->failed = 1;
            note(r, "setup failed: %s", setup_error, "");
            continue;
        }
        fprintf(stderr, "gpuport-bench: %s %s, %zu elements, %d runs: gpuport\n", d->spec, kernel_name[k], d->n,
                opt.reps + 1);
        time_gpuport(d, r, ms);
        if (d->info.type == GP_DEVICE_CPU) {
            fprintf(stderr, "gpuport-bench: %s %s: host anchor\n", d->spec, kernel_name[k]);
            anchor_cpu(r, ms);
        } else if (d->cuda_device >= 0) {
            fprintf(stderr, "gpuport-bench: %s %s: CUDA anchor on CUDA device %d\n", d->spec, kernel_name[k],
                    d->cuda_device);
            anchor_cuda(r, d->cuda_device, ms);
        } else {
            note(r, "anchor unavailable: %s", d->anchor_why, "");
        }
    }
    release(d);
}

/* ---- Output ---------------------------------------------------------------------------- */

static void put_csv_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

static void put_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* A number, or what the format has for none: "-" in the table, empty in CSV, null in JSON. */
static void put_number(int have, double v, const char *fmt, int width)
{
    if (have && (opt.csv || opt.json))
        printf("%.6g", v); /* full precision for machines, whatever the table's format */
    else if (have)
        printf(fmt, width, v);
    else if (opt.json)
        printf("null");
    else if (!opt.csv)
        printf("%*s", width, "-");
}

static void report(void)
{
    if (opt.csv)
        printf("device,device_name,backend,kernel,size,median_ms,min_ms,gbs,anchor,anchor_median_ms,anchor_min_ms,"
               "anchor_gbs,ratio,vs_cuda,check,note\n");
    else if (opt.json)
        printf("[");
    else
        printf("%-9s %-7s %-6s %10s %10s %10s %9s  %-21s %11s %6s %7s  %s\n", "device", "backend", "kernel", "size",
               "median ms", "min ms", "GB/s", "anchor", "anchor GB/s", "ratio", "vs cuda", "check");
    for (size_t i = 0; i < nresults; i++) {
        const result *r = &results[i];
        int ratio = r->measured && r->anchor_measured && r->an.gbs > 0;
        const char *status = r->failed ? "FAIL" : "ok";
        if (opt.json) {
            printf("%s\n  {\"device\": ", i ? "," : "");
            put_json_string(r->spec);
            printf(", \"device_name\": ");
            put_json_string(r->device);
            printf(", \"backend\": \"%s\", \"kernel\": \"%s\", \"size\": %zu, \"median_ms\": ", r->backend,
                   kernel_name[r->k], r->n);
        } else if (opt.csv) {
            printf("%s,", r->spec);
            put_csv_string(r->device);
            printf(",%s,%s,%zu,", r->backend, kernel_name[r->k], r->n);
        } else {
            printf("%-9s %-7s %-6s %10zu ", r->spec, r->backend, kernel_name[r->k], r->n);
        }
        const char *sep = opt.json ? ", \"min_ms\": " : opt.csv ? "," : " ";
        put_number(r->measured, r->gp.median_ms, "%*.4f", 10);
        fputs(sep, stdout);
        put_number(r->measured, r->gp.min_ms, "%*.4f", 10);
        fputs(opt.json ? ", \"gbs\": " : sep, stdout);
        put_number(r->measured, r->gp.gbs, "%*.1f", 9);
        if (opt.json) {
            printf(", \"anchor\": ");
            if (r->anchor[0])
                put_json_string(r->anchor);
            else
                printf("null");
            printf(", ");
        } else if (opt.csv) {
            printf(",%s,", r->anchor);
        } else {
            printf("  %-21s ", r->anchor_measured ? r->anchor : "-");
        }
        if (opt.csv || opt.json) { /* the anchor's own times only where there is room */
            fputs(opt.json ? "\"anchor_median_ms\": " : "", stdout);
            put_number(r->anchor_measured, r->an.median_ms, NULL, 0);
            fputs(opt.json ? ", \"anchor_min_ms\": " : ",", stdout);
            put_number(r->anchor_measured, r->an.min_ms, NULL, 0);
            fputs(opt.json ? ", \"anchor_gbs\": " : ",", stdout);
        }
        put_number(r->anchor_measured, r->an.gbs, "%*.1f", 11);
        fputs(opt.json ? ", \"ratio\": " : sep, stdout);
        put_number(ratio, ratio ? r->gp.gbs / r->an.gbs : 0, "%*.3f", 6);
        fputs(opt.json ? ", \"vs_cuda\": " : sep, stdout);
        put_number(r->vs_cuda > 0, r->vs_cuda, "%*.3f", 7);
        if (opt.json) {
            printf(", \"check\": \"%s\", \"note\": ", status);
            put_json_string(r->note);
            printf("}");
        } else if (opt.csv) {
            printf(",%s,", status);
            put_csv_string(r->note);
            printf("\n");
        } else {
            printf("  %s\n", status);
        }
    }
    if (opt.json) {
        printf("\n]\n");
        return;
    }
    if (opt.csv)
        return;
    int any = 0;
    for (size_t i = 0; i < nresults; i++)
        if (results[i].note[0])
            printf("%s%s %s: %s\n", any++ ? "" : "\nnotes:\n", results[i].spec, kernel_name[results[i].k],
                   results[i].note);
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
            if (!strcmp(c->backend, "cuda") && c->k == r->k && c->n == r->n && c->measured && c->gp.gbs > 0 &&
                !strcmp(c->device, r->device)) {
                r->vs_cuda = r->gp.gbs / c->gp.gbs;
                break;
            }
        }
    }
}

/* ---- Main ------------------------------------------------------------------------------ */

static const char usage[] =
    "usage: gpuport-bench [--device SPEC]... [--kernel NAME]... [--size N] [--reps R] [--csv | --json] [--list]\n"
    "  --device SPEC  a device as gp_device_find takes it (cuda:0, opencl:1, gpu, cpu) or its index in\n"
    "                 --list; repeatable; default: every device\n"
    "  --kernel NAME  copy, axpy, reduce or scan; repeatable; default: all four\n"
    "  --size N       elements (f32); default 2^28 on GPUs, 2^26 on CPU devices, capped so the three\n"
    "                 buffers fit in a quarter of the device's memory\n"
    "  --reps R       runs reported (one more is run first and dropped); default 20, the least for\n"
    "                 figures worth quoting\n"
    "  --csv, --json  results in CSV (with a header row) or as a JSON array; the banner goes to stderr\n"
    "  --list         list the devices and kernels, then exit\n"
    "Exit status: 0 when every check passed, 1 when a check or call failed, 2 on bad usage, 77 with no\n"
    "device. GPUPORT_BENCH_ANCHOR_CUDA names the CUDA anchor library where it is not found by itself.\n";

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
        else if (!strcmp(a, "--device") && v && opt.nspecs < MAX_DEVICES)
            opt.specs[opt.nspecs++] = argv[++i];
        else if (!strcmp(a, "--kernel") && v) {
            int k = 0;
            while (k < K_COUNT && strcmp(v, kernel_name[k]))
                k++;
            if (k == K_COUNT) {
                fprintf(stderr, "gpuport-bench: no kernel \"%s\" (copy, axpy, reduce, scan)\n", v);
                return -1;
            }
            opt.kernels |= 1u << k;
            i++;
        } else if (!strcmp(a, "--size") && v && (opt.size = strtoull(v, &end, 0)) > 0 && !*end)
            i++;
        else if (!strcmp(a, "--reps") && v && (opt.reps = (int)strtol(v, &end, 10)) >= 1 && opt.reps <= 100000 &&
                 !*end)
            i++;
        else {
            fputs(usage, stderr);
            return -1;
        }
    }
    if (opt.csv && opt.json) {
        fprintf(stderr, "gpuport-bench: --csv or --json, not both\n");
        return -1;
    }
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
        printf("  %-6s  %s\n", kernel_name[k], kernel_what[k]);
}

int main(int argc, char **argv)
{
    static gp_device *devs[MAX_DEVICES];
    static dev_run runs[MAX_DEVICES];
    size_t ndevs = 0;
    if (parse(argc, argv))
        return 2;
    banner = opt.csv || opt.json ? stderr : stdout;
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
    if (opt.reps < 20)
        fprintf(stderr, "gpuport-bench: warning: --reps %d is below 20; the figures are a smoke test, not for "
                        "quoting\n",
                opt.reps);

    fprintf(banner, "gpuport-bench, gpuport %s: %d runs per figure after 1 dropped, median and min, device events; "
                    "GB/s from the median,\nbytes counted as copy 2N, axpy 3N, reduce N, scan 2N (f32); ratio = "
                    "gpuport GB/s / anchor GB/s; vs cuda = OpenCL / CUDA backend\n",
            gp_version_string(), opt.reps);
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
        d->n = device_size(&d->info);
        fprintf(banner, "%-9s %s (%s), backend %s, driver %s, runtime %s, %.1f GiB, %u compute units, %zu elements\n",
                d->spec, d->info.name, d->info.vendor, d->info.backend, d->info.driver_version,
                d->info.runtime_version, (double)d->info.global_mem_bytes / (1u << 30), d->info.compute_units,
                d->n);
        int nvidia = d->info.type == GP_DEVICE_GPU && contains_nocase(d->info.vendor, "nvidia");
        if (d->info.type == GP_DEVICE_CPU) {
            need_cpu_anchor = 1;
        } else if (!strcmp(d->info.backend, "cuda") || (nvidia && !strcmp(d->info.backend, "opencl"))) {
            d->cuda_device = cuda_anchor_device(&d->info, d->anchor_why, sizeof d->anchor_why);
            char name[256] = "", msg[300] = "";
            if (d->cuda_device >= 0 && cua.device_name(d->cuda_device, name, sizeof name, msg, sizeof msg))
                snprintf(name, sizeof name, "(name unknown: %s)", msg);
            if (d->cuda_device >= 0)
                fprintf(banner, "          anchor: CUDA runtime device %d, %s%s\n", d->cuda_device, name,
                        strcmp(name, d->info.name) ? "  WARNING: not the name gpuport reports" : "");
            else
                fprintf(banner, "          anchor unavailable: %s\n", d->anchor_why);
        } else {
            snprintf(d->anchor_why, sizeof d->anchor_why, "no vendor anchor for %s devices of %s yet", info.backend,
                     info.vendor);
        }
    }
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
    results = calloc(ndevs * K_COUNT, sizeof *results);
    if (!ms || !results) {
        fprintf(stderr, "gpuport-bench: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < ndevs; i++)
        bench_device(&runs[i], ms);
    compare_with_cuda();
    report();
    int failed = 0;
    for (size_t i = 0; i < nresults; i++)
        failed |= results[i].failed;
    free(ms);
    free(results);
    free(hx), free(hy), free(hs), free(hout);
    return failed;
}
