/* gpuport-bench-launch: what one kernel launch costs through gpuport, next to the vendor's own
 * call on the same device in the same run (raw cuLaunchKernel, raw clEnqueueNDRangeKernel).
 *
 * Each run times LAUNCHES back-to-back launches of an empty kernel with one int argument, on
 * the host wall clock from the first launch to the end of a final synchronize. The first run
 * is dropped; the median and minimum of the rest are reported, per launch. gpuport's runs and
 * the raw ones alternate, so drift in clocks or load falls on both alike. The vendor
 * libraries are opened at run time, so a machine without one says "skipped" for it.
 *
 * usage: gpuport-bench-launch [--runs N] [--launches N] [--csv]
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuport.h"

#ifdef GPB_HAVE_CUDA
#include <cuda.h>
#include <nvrtc.h>
#endif
#ifdef GPB_HAVE_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#endif

/* The same source for every path; each path supplies GP_KERNEL as its dialect does. */
static const char kernel_source[] = "GP_KERNEL void empty(int a) { (void)a; }\n";
#define LOCAL_SIZE 32

typedef struct result {
    char backend[16], device[96], path[16], note[160];
    double median_us, min_us;
    int ok; /* 1 measured, 0 skipped, -1 failed */
} result;

static int runs = 21, launches = 10000;
static result results[8];
static int nresults;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One batch: returns microseconds per launch, or a negative value if a call failed. */
typedef double (*batch_fn)(void *ctx);

static result *add(const char *backend, const char *device, const char *path)
{
    result *r = &results[nresults++];
    memset(r, 0, sizeof *r);
    snprintf(r->backend, sizeof r->backend, "%s", backend);
    snprintf(r->device, sizeof r->device, "%s", device);
    snprintf(r->path, sizeof r->path, "%s", path);
    return r;
}

static void skip(result *r, const char *fmt, const char *detail)
{
    r->ok = 0;
    snprintf(r->note, sizeof r->note, fmt, detail);
}

static void summarize(result *r, double *t)
{
    qsort(t + 1, (size_t)runs - 1, sizeof *t, cmp_double); /* t[0], the warm-up, is dropped */
    int n = runs - 1;
    r->median_us = n % 2 ? t[1 + n / 2] : (t[n / 2] + t[1 + n / 2]) / 2;
    r->min_us = t[1];
    r->ok = 1;
}

/* Runs the two paths' batches alternately, so drift in clocks or load falls on both alike.
 * A path whose result is NULL (skipped) is left out. */
static void measure_pair(result *ra, batch_fn fa, void *ca, result *rb, batch_fn fb, void *cb)
{
    double *ta = malloc((size_t)runs * sizeof *ta), *tb = malloc((size_t)runs * sizeof *tb);
    if (!ta || !tb) {
        free(ta);
        free(tb);
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (int i = 0; i < runs && (ra || rb); i++) {
        if (ra && (ta[i] = fa(ca)) < 0) {
            ra->ok = -1;
            if (!ra->note[0])
                snprintf(ra->note, sizeof ra->note, "a launch failed");
            ra = NULL;
        }
        if (rb && (tb[i] = fb(cb)) < 0) {
            rb->ok = -1;
            if (!rb->note[0])
                snprintf(rb->note, sizeof rb->note, "a launch failed");
            rb = NULL;
        }
    }
    if (ra)
        summarize(ra, ta);
    if (rb)
        summarize(rb, tb);
    free(ta);
    free(tb);
}

/* ---- gpuport ---- */

typedef struct gp_ctx {
    gp_stream *stream;
    gp_program *program;
    gp_kernel *kernel;
    result *r;
} gp_ctx;

static double gp_batch(void *p)
{
    gp_ctx *c = p;
    int a = 1;
    gp_arg args[1] = {GP_VALUE(a)};
    size_t global = LOCAL_SIZE, local = LOCAL_SIZE;
    double t0 = now_s();
    for (int i = 0; i < launches; i++) {
        if (gp_kernel_launch(c->stream, c->kernel, 1, &global, &local, 1, args) != GP_SUCCESS) {
            snprintf(c->r->note, sizeof c->r->note, "%.150s", gp_last_error());
            return -1;
        }
    }
    if (gp_stream_synchronize(c->stream) != GP_SUCCESS) {
        snprintf(c->r->note, sizeof c->r->note, "%.150s", gp_last_error());
        return -1;
    }
    return (now_s() - t0) * 1e6 / launches;
}

/* Readies gpuport on spec (NULL when it cannot) and writes the device's name for the raw path
 * to find. */
static result *gp_setup(const char *backend, const char *spec, gp_ctx *c, char *name, size_t name_len)
{
    gp_device *dev = NULL;
    gp_device_info info;
    name[0] = '\0';
    memset(c, 0, sizeof *c);
    if (gp_device_find(spec, &dev) != GP_SUCCESS || gp_device_get_info(dev, &info) != GP_SUCCESS) {
        skip(add(backend, "-", "gpuport"), "skipped: %.140s", gp_last_error());
        return NULL;
    }
    snprintf(name, name_len, "%s", info.name);
    c->r = add(backend, info.name, "gpuport");
    if (gp_stream_create(dev, &c->stream) != GP_SUCCESS ||
        gp_program_create(dev, kernel_source, NULL, &c->program) != GP_SUCCESS ||
        gp_kernel_create(c->program, "empty", &c->kernel) != GP_SUCCESS) {
        c->r->ok = -1;
        snprintf(c->r->note, sizeof c->r->note, "%.150s", gp_last_error());
        return NULL;
    }
    return c->r;
}

static void gp_teardown(gp_ctx *c)
{
    gp_kernel_destroy(c->kernel);
    gp_program_destroy(c->program);
    gp_stream_destroy(c->stream);
}

/* ---- raw CUDA ---- */
#ifdef GPB_HAVE_CUDA
#define CU_S(sym) CU_S2(sym)
#define CU_S2(sym) #sym
#define CU_API(X)                                                                                              \
    X(cuInit) X(cuDeviceGet) X(cuDeviceGetName) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)           \
    X(cuCtxSetCurrent) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuStreamCreate)              \
    X(cuStreamDestroy) X(cuStreamSynchronize) X(cuLaunchKernel)
#define RTC_API(X)                                                                                             \
    X(nvrtcCreateProgram) X(nvrtcCompileProgram) X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcDestroyProgram)
#define CU_FIELD(fn) __typeof__(fn) *fn##_p;
static struct {
    CU_API(CU_FIELD) RTC_API(CU_FIELD)
} cu;

typedef struct cu_ctx {
    CUfunction fn;
    CUstream stream;
} cu_ctx;

static double cu_batch(void *p)
{
    cu_ctx *c = p;
    int a = 1;
    void *params[] = {&a};
    double t0 = now_s();
    for (int i = 0; i < launches; i++)
        if (cu.cuLaunchKernel_p(c->fn, 1, 1, 1, LOCAL_SIZE, 1, 1, 0, c->stream, params, NULL) != CUDA_SUCCESS)
            return -1;
    if (cu.cuStreamSynchronize_p(c->stream) != CUDA_SUCCESS)
        return -1;
    return (now_s() - t0) * 1e6 / launches;
}

static char *cu_ptx(void)
{
    static const char *rtc_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                                      "/usr/local/cuda/lib64/libnvrtc.so"};
    void *rtc = NULL;
    for (size_t i = 0; i < sizeof rtc_names / sizeof rtc_names[0] && !rtc; i++)
        rtc = dlopen(rtc_names[i], RTLD_NOW | RTLD_LOCAL);
    if (!rtc)
        return NULL;
#define CU_LOAD(fn)                                                                                            \
    if (!(cu.fn##_p = (__typeof__(fn) *)dlsym(rtc, CU_S(fn))))                                                 \
        return NULL;
    RTC_API(CU_LOAD)
    char src[256];
    snprintf(src, sizeof src, "#define GP_KERNEL extern \"C\" __global__\n%s", kernel_source);
    nvrtcProgram prog;
    const char *opts[] = {"-default-device"};
    size_t n = 0;
    char *ptx = NULL;
    if (cu.nvrtcCreateProgram_p(&prog, src, "empty.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
        return NULL;
    if (cu.nvrtcCompileProgram_p(prog, 1, opts) == NVRTC_SUCCESS && cu.nvrtcGetPTXSize_p(prog, &n) == NVRTC_SUCCESS &&
        (ptx = malloc(n)) && cu.nvrtcGetPTX_p(prog, ptx) != NVRTC_SUCCESS) {
        free(ptx);
        ptx = NULL;
    }
    cu.nvrtcDestroyProgram_p(&prog);
    return ptx; /* the library stays open: the process is short */
}

typedef struct cu_state {
    cu_ctx c;
    CUdevice dev;
    CUmodule mod;
    int retained;
} cu_state;

static result *cu_setup(const char *want_name, cu_state *st)
{
    memset(st, 0, sizeof *st);
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        skip(add("cuda", "-", "raw"), "skipped: %s", "libcuda.so.1 not found");
        return NULL;
    }
#define CU_LOAD_DRIVER(fn)                                                                                     \
    if (!(cu.fn##_p = (__typeof__(fn) *)dlsym(lib, CU_S(fn)))) {                                               \
        skip(add("cuda", "-", "raw"), "skipped: libcuda.so.1 lacks %s", CU_S(fn));                             \
        return NULL;                                                                                           \
    }
    CU_API(CU_LOAD_DRIVER)
#undef CU_LOAD_DRIVER
    CUcontext ctx;
    char name[96] = "";
    if (cu.cuInit_p(0) != CUDA_SUCCESS || cu.cuDeviceGet_p(&st->dev, 0) != CUDA_SUCCESS) {
        skip(add("cuda", "-", "raw"), "skipped: %s", "no CUDA device");
        return NULL;
    }
    cu.cuDeviceGetName_p(name, (int)sizeof name, st->dev);
    result *r = add("cuda", name, "raw");
    if (want_name[0] && strcmp(want_name, name))
        snprintf(r->note, sizeof r->note, "gpuport's cuda device is %.100s", want_name);
    char *ptx = cu_ptx();
    if (!ptx || cu.cuDevicePrimaryCtxRetain_p(&ctx, st->dev) != CUDA_SUCCESS) {
        free(ptx);
        skip(r, "skipped: %s", "NVRTC not found or the context failed");
        return NULL;
    }
    st->retained = 1;
    int ok = cu.cuCtxSetCurrent_p(ctx) == CUDA_SUCCESS && cu.cuModuleLoadData_p(&st->mod, ptx) == CUDA_SUCCESS &&
             cu.cuModuleGetFunction_p(&st->c.fn, st->mod, "empty") == CUDA_SUCCESS &&
             cu.cuStreamCreate_p(&st->c.stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS;
    free(ptx);
    if (!ok) {
        r->ok = -1;
        snprintf(r->note, sizeof r->note, "CUDA setup failed");
        return NULL;
    }
    return r;
}

static void cu_teardown(cu_state *st)
{
    if (st->c.stream)
        cu.cuStreamDestroy_p(st->c.stream);
    if (st->mod)
        cu.cuModuleUnload_p(st->mod);
    if (st->retained)
        cu.cuDevicePrimaryCtxRelease_p(st->dev);
}
#undef CU_LOAD
#endif

/* ---- raw OpenCL ---- */
#ifdef GPB_HAVE_OPENCL
#define CL_API(X)                                                                                              \
    X(clGetPlatformIDs) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext) X(clCreateCommandQueue)            \
    X(clCreateProgramWithSource) X(clBuildProgram) X(clCreateKernel) X(clSetKernelArg) X(clEnqueueNDRangeKernel)   \
    X(clFinish) X(clReleaseKernel) X(clReleaseProgram) X(clReleaseCommandQueue) X(clReleaseContext)
#define CL_FIELD(fn) __typeof__(fn) *fn##_p;
static struct {
    CL_API(CL_FIELD)
} cl;

typedef struct cl_ctx {
    cl_command_queue queue;
    cl_kernel kernel;
} cl_ctx;

/* Sets the argument on every launch, as gpuport must. */
static double cl_batch(void *p)
{
    cl_ctx *c = p;
    cl_int a = 1;
    size_t global = LOCAL_SIZE, local = LOCAL_SIZE;
    double t0 = now_s();
    for (int i = 0; i < launches; i++) {
        if (cl.clSetKernelArg_p(c->kernel, 0, sizeof a, &a) != CL_SUCCESS ||
            cl.clEnqueueNDRangeKernel_p(c->queue, c->kernel, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
            return -1;
    }
    if (cl.clFinish_p(c->queue) != CL_SUCCESS)
        return -1;
    return (now_s() - t0) * 1e6 / launches;
}

/* The OpenCL device named want_name (gpuport's), else the first GPU, else the first device. */
static cl_device_id cl_pick(const char *want_name, char *name, size_t name_len)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    cl_device_id pick = NULL, gpu = NULL, any = NULL;
    if (cl.clGetPlatformIDs_p(16, plats, &np) != CL_SUCCESS)
        return NULL;
    for (cl_uint i = 0; i < np && i < 16; i++) {
        cl_device_id devs[16];
        cl_uint nd = 0;
        if (cl.clGetDeviceIDs_p(plats[i], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
            continue;
        for (cl_uint j = 0; j < nd && j < 16; j++) {
            char n[96] = "";
            cl_device_type t = 0;
            cl.clGetDeviceInfo_p(devs[j], CL_DEVICE_NAME, sizeof n - 1, n, NULL);
            cl.clGetDeviceInfo_p(devs[j], CL_DEVICE_TYPE, sizeof t, &t, NULL);
            if (!pick && want_name[0] && !strcmp(n, want_name))
                pick = devs[j];
            if (!gpu && (t & CL_DEVICE_TYPE_GPU))
                gpu = devs[j];
            if (!any)
                any = devs[j];
        }
    }
    pick = pick ? pick : gpu ? gpu : any;
    if (pick)
        cl.clGetDeviceInfo_p(pick, CL_DEVICE_NAME, name_len - 1, name, NULL);
    return pick;
}

typedef struct cl_state {
    cl_ctx c;
    cl_context ctx;
    cl_program prog;
} cl_state;

static result *cl_setup(const char *want_name, cl_state *st)
{
    memset(st, 0, sizeof *st);
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        skip(add("opencl", "-", "raw"), "skipped: %s", "libOpenCL.so.1 not found");
        return NULL;
    }
#define CL_LOAD(fn)                                                                                            \
    if (!(cl.fn##_p = (__typeof__(fn) *)dlsym(lib, #fn))) {                                                     \
        skip(add("opencl", "-", "raw"), "skipped: the OpenCL loader lacks %s", #fn);                           \
        return NULL;                                                                                           \
    }
    CL_API(CL_LOAD)
#undef CL_LOAD
    char name[96] = "";
    cl_device_id dev = cl_pick(want_name, name, sizeof name);
    if (!dev) {
        skip(add("opencl", "-", "raw"), "skipped: %s", "no OpenCL device");
        return NULL;
    }
    result *r = add("opencl", name, "raw");
    cl_int err = CL_SUCCESS;
    char src[256];
    snprintf(src, sizeof src, "#define GP_KERNEL __kernel\n%s", kernel_source);
    const char *srcs[] = {src};
    st->ctx = cl.clCreateContext_p(NULL, 1, &dev, NULL, NULL, &err);
    if (st->ctx)
        st->c.queue = cl.clCreateCommandQueue_p(st->ctx, dev, 0, &err);
    if (st->c.queue)
        st->prog = cl.clCreateProgramWithSource_p(st->ctx, 1, srcs, NULL, &err);
    if (st->prog && cl.clBuildProgram_p(st->prog, 1, &dev, "", NULL, NULL) == CL_SUCCESS)
        st->c.kernel = cl.clCreateKernel_p(st->prog, "empty", &err);
    if (!st->c.kernel) {
        r->ok = -1;
        snprintf(r->note, sizeof r->note, "OpenCL setup failed (%d)", (int)err);
        return NULL;
    }
    return r;
}

static void cl_teardown(cl_state *st)
{
    if (st->c.kernel)
        cl.clReleaseKernel_p(st->c.kernel);
    if (st->prog)
        cl.clReleaseProgram_p(st->prog);
    if (st->c.queue)
        cl.clReleaseCommandQueue_p(st->c.queue);
    if (st->ctx)
        cl.clReleaseContext_p(st->ctx);
}
#endif

/* ---- report ---- */

static const result *find(const char *backend, const char *path)
{
    for (int i = 0; i < nresults; i++)
        if (!strcmp(results[i].backend, backend) && !strcmp(results[i].path, path))
            return &results[i];
    return NULL;
}

static void report(int csv)
{
    if (csv)
        printf("backend,device,path,median_us,min_us,ratio_median,ratio_min,note\n");
    else
        printf("%-7s %-32s %-8s %10s %10s %8s %8s  %s\n", "backend", "device", "path", "median us", "min us",
               "ratio", "ratio min", "");
    for (int i = 0; i < nresults; i++) {
        const result *r = &results[i];
        const result *raw = find(r->backend, "raw");
        double ratio = 0, ratio_min = 0;
        if (r->ok == 1 && raw && raw->ok == 1 && !strcmp(r->path, "gpuport")) {
            ratio = r->median_us / raw->median_us;
            ratio_min = r->min_us / raw->min_us;
        }
        const char *note = r->ok == -1 && !r->note[0] ? "failed" : r->note;
        if (csv) {
            printf("%s,\"%s\",%s,", r->backend, r->device, r->path);
            if (r->ok == 1)
                printf("%.3f,%.3f,", r->median_us, r->min_us);
            else
                printf(",,");
            if (ratio > 0)
                printf("%.3f,%.3f,", ratio, ratio_min);
            else
                printf(",,");
            printf("\"%s\"\n", note);
            continue;
        }
        printf("%-7s %-32.32s %-8s ", r->backend, r->device, r->path);
        if (r->ok == 1)
            printf("%10.3f %10.3f ", r->median_us, r->min_us);
        else
            printf("%10s %10s ", "-", "-");
        if (ratio > 0)
            printf("%8.3f %8.3f", ratio, ratio_min);
        else
            printf("%8s %8s", "", "");
        printf("  %s\n", note);
    }
}

int main(int argc, char **argv)
{
    int csv = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv"))
            csv = 1;
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]) + 1;
        else if (!strcmp(argv[i], "--launches") && i + 1 < argc)
            launches = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--runs N (20)] [--launches N (10000)] [--csv]\n", argv[0]);
            return 2;
        }
    }
    if (runs < 2 || launches < 1) {
        fprintf(stderr, "--runs and --launches must be at least 1\n");
        return 2;
    }
    if (!csv)
        printf("gpuport-bench-launch (gpuport %s): %d back-to-back launches of an empty kernel with one int "
               "argument,\n%d runs after 1 dropped, host wall clock from the first launch to the end of a final "
               "synchronize; ratio = gpuport / raw\n\n",
               gp_version_string(), launches, runs - 1);

    char name[256];
    gp_ctx gc;
    result *rg = gp_setup("cuda", "cuda:0", &gc, name, sizeof name);
#ifdef GPB_HAVE_CUDA
    cu_state cs;
    result *rr = cu_setup(name, &cs);
    measure_pair(rg, gp_batch, &gc, rr, cu_batch, &cs.c);
    cu_teardown(&cs);
#else
    skip(add("cuda", "-", "raw"), "skipped: %s", "built without cuda.h");
    measure_pair(rg, gp_batch, &gc, NULL, NULL, NULL);
#endif
    gp_teardown(&gc);

    /* OpenCL: gpuport's first OpenCL GPU, else its first OpenCL device. */
    gp_device *d = NULL;
    const char *ocl_spec = "opencl:0";
    static char spec[32];
    size_t n = 0;
    if (gp_device_count(&n) == GP_SUCCESS) {
        for (size_t i = 0; i < n; i++) {
            gp_device_info info;
            if (gp_device_get(i, &d) == GP_SUCCESS && gp_device_get_info(d, &info) == GP_SUCCESS &&
                !strcmp(info.backend, "opencl") && info.type == GP_DEVICE_GPU) {
                snprintf(spec, sizeof spec, "opencl:%zu", info.backend_index);
                ocl_spec = spec;
                break;
            }
        }
    }
    rg = gp_setup("opencl", ocl_spec, &gc, name, sizeof name);
#ifdef GPB_HAVE_OPENCL
    cl_state ls;
    result *rl = cl_setup(name, &ls);
    measure_pair(rg, gp_batch, &gc, rl, cl_batch, &ls.c);
    cl_teardown(&ls);
#else
    skip(add("opencl", "-", "raw"), "skipped: %s", "built without CL/cl.h");
    measure_pair(rg, gp_batch, &gc, NULL, NULL, NULL);
#endif
    gp_teardown(&gc);
    report(csv);
    for (int i = 0; i < nresults; i++)
        if (results[i].ok == -1)
            return 1;
    return 0;
}
