/* gpuport-bench: the anchors, measured in the same run: the CUDA anchor library (cudaMemcpy,
 * CUB), and the C loops on the host for CPU devices. */
#include "bench.h"

/* ---- The CUDA anchor library ----------------------------------------------------------- */

cuda_anchor cua;

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
int gpb_cuda_anchor_device(const gp_device_info *info, char *why, size_t why_len)
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

/* ---- Anchors --------------------------------------------------------------------------- */

/* CUDA anchor figures already measured, so kernels of one size share one memcpy measurement. */
static struct cached {
    int device, kind;
    size_t n;
    figure f;
} cache[4 * MAX_DEVICES];
static int ncache;

/* cudaMemcpy of the kernel's cells (counted 2N, as a stencil's or copy's bytes), or CUB. */
void gpb_anchor_cuda(result *r, int device, size_t n, double *ms)
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
    if (gpb_host_data(n)) {
        gpb_note(r, "anchor: out of host memory");
        r->failed = 1;
        return;
    }
    if (cua.run(device, kind, n, kind == GPA_CUDA_MEMCPY ? hx : hs, hout, opt.reps + 1, ms, msg, sizeof msg)) {
        r->failed = 1;
        gpb_note(r, "anchor failed: %s", msg);
        return;
    }
    if (gpb_check_line(counted, n, hout, r, "anchor"))
        return;
    r->an = gpb_summarize(ms, opt.reps, (double)kd[counted].passes * (double)n * sizeof(float));
    r->anchor_measured = 1;
    if (ncache < (int)(sizeof cache / sizeof *cache))
        cache[ncache++] = (struct cached){device, kind, n, r->an};
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
void gpb_anchor_cpu(job *j, result *r, double *ms)
{
    static const char *const names[K_COUNT] = {"host memcpy",  "host axpy",    "host sum",
                                               "host scan",    "host 5-point", "host 3x3",
                                               "host 7-point", "host blocked sgemm", "host blocked dgemm"};
    snprintf(r->anchor, sizeof r->anchor, "%s", names[j->k]);
    if (gpb_foreseen_over_budget(j, r, 1, "anchor"))
        return;
    gpb_progress("%s %s %s: host anchor", r->spec, kd[j->k].name, r->shape);
    const tap *taps;
    const double *w;
    float wf[9] = {0};
    int m;
    void *a = NULL, *b = NULL, *c = NULL;
    if (kd[j->k].shape == GRID2 || kd[j->k].shape == GRID3) {
        gpb_stencil_of(j->k, &taps, &w, &m);
        for (int i = 0; i < m; i++)
            wf[i] = (float)w[i];
    }
    if (kd[j->k].shape == GEMM) {
        gpb_gemm_host(j, &a, &b, &c);
    } else if (gpb_host_data(j->cells)) {
        a = NULL; /* falls into the message below */
    } else {
        a = b = c = hout; /* nothing to allocate */
    }
    if (!a || !b || !c) {
        r->failed = 1;
        gpb_note(r, "anchor: out of host memory");
        goto done;
    }
    for (int i = 0; i <= opt.reps; i++) {
        double t0 = gpb_now_ms();
        host_once(j, wf, a, b, c);
        ms[i] = gpb_now_ms() - t0;
        char why[40];
        snprintf(why, sizeof why, "the first took %.3g ms", ms[0]);
        if (i == 0 && gpb_over_budget(r, "anchor", ms[0], why))
            goto done;
    }
    enum shape sh = kd[j->k].shape;
    if (sh == GEMM ? gpb_check_gemm(j->k, j->size, NULL, NULL, c, r, "anchor")
        : sh == LINE ? gpb_check_line(j->k, j->size, hout, r, "anchor")
                     : gpb_check_stencil(j->k, j->size, hout, r, "anchor"))
        goto done;
    r->an = gpb_summarize(ms, opt.reps, j->work);
    r->anchor_measured = 1;
    gpb_remember(j, 1, &r->an);
done:
    if (kd[j->k].shape == GEMM)
        free(a), free(b), free(c);
}

