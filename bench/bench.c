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
 *
 * This file: the command line, the data every file shares, and main. */
#include "bench.h"

const struct kdesc kd[K_COUNT] = {
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
const size_t gemm_sizes[] = {512, 1024, 2048, 4096, 8192}; /* a course's sizes, smallest first */
const float axpy_a = 2.5f; /* not a power of two, so a*x rounds */
/* Dyadic weights: exact in f32, so a device that converts them from double adds no error. */
const double w_jacobi[5] = {0, 0.25, 0.25, 0.25, 0.25};
const double w_3x3[9] = {1 / 64., 2 / 64., 3 / 64., 4 / 64., -20 / 64., 5 / 64., 6 / 64., 7 / 64., 8 / 64.};
const double w_7[7] = {0.25, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125};
/* A figure whose R+1 runs would take longer than this is skipped: on a CPU device a large GEMM
 * runs for hours, and a number nobody waits for is worth nothing. */
const double budget_s = 60;

options opt = {.reps = 20};

result *results;
size_t nresults, nplanned;
FILE *banner;
int progress_tty;

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
    int nvidia = info->type == GP_DEVICE_GPU && gpb_contains_nocase(info->vendor, "nvidia");
    if (info->type == GP_DEVICE_CPU) {
        *need_cpu_anchor = 1;
    } else if (!strcmp(info->backend, "cuda") || (nvidia && !strcmp(info->backend, "opencl"))) {
        d->cuda_device = gpb_cuda_anchor_device(info, d->anchor_why, sizeof d->anchor_why);
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

/* The banner, and each device's run made ready: its anchors said, its figures counted. */
static int prepare(gp_device **devs, dev_run *runs, size_t ndevs)
{
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
            nplanned += (opt.kernels & 1u << k) ? (size_t)gpb_sizes_of((enum kernel)k, &d->info, sizes) : 0;
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
    return 0;
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
    if (prepare(devs, runs, ndevs))
        return 1;
    fprintf(banner, "\n");
    fflush(banner); /* before the progress lines on stderr */

    double *ms = malloc((size_t)(opt.reps + 1) * sizeof *ms);
    results = calloc(nplanned ? nplanned : 1, sizeof *results);
    if (!ms || !results) {
        fprintf(stderr, "gpuport-bench: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < ndevs; i++)
        gpb_bench_device(&runs[i], ms);
    gpb_bench_pairs(runs, ndevs, ms);
    if (progress_tty)
        fputs("\r\033[K", stderr);
    gpb_compare_with_cuda();
    if (opt.csv || opt.json)
        gpb_report_machine();
    else
        gpb_report_table();
    int failed = 0;
    for (size_t i = 0; i < nresults; i++)
        failed |= results[i].failed;
    if (opt.plot && gpb_plot(opt.plot)) {
        fprintf(stderr, "gpuport-bench: could not write %s\n", opt.plot);
        failed = 1;
    }
    free(ms);
    free(results);
    free(hx), free(hy), free(hs), free(hout);
    return failed;
}

