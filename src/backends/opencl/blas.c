/* The vendor BLAS: CLBlast, the OpenCL BLAS, called on the stream's queue and ordered like a
 * kernel launch; on CPU devices whose buffers are the host's memory, the host's own BLAS
 * (OpenBLAS) on the mapped buffers instead, where it is installed. Each is opened on first use
 * (both are optional, and loading them at init would cost every program time). */
#define _GNU_SOURCE /* dladdr, realpath */
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* From clblast_c.h of CLBlast 1.6.3 (the same since CLBlast 1.0; Debian 12 has 1.5.3), declared
 * here so that the plugin builds without it; the enums are passed as int. */
enum { GP__CLBLAST_COL_MAJOR = 102, GP__CLBLAST_NO_TRANS = 111, GP__CLBLAST_TRANS = 112 };
typedef int gp__clblast_sgemm_fn(int layout, int a_transpose, int b_transpose, size_t m, size_t n, size_t k,
                                 float alpha, cl_mem a, size_t a_offset, size_t a_ld, cl_mem b, size_t b_offset,
                                 size_t b_ld, float beta, cl_mem c, size_t c_offset, size_t c_ld,
                                 cl_command_queue *queue, cl_event *event);
typedef int gp__clblast_dgemm_fn(int layout, int a_transpose, int b_transpose, size_t m, size_t n, size_t k,
                                 double alpha, cl_mem a, size_t a_offset, size_t a_ld, cl_mem b, size_t b_offset,
                                 size_t b_ld, double beta, cl_mem c, size_t c_offset, size_t c_ld,
                                 cl_command_queue *queue, cl_event *event);

/* CLBlast's own status codes; the ones above -1000 are OpenCL's. */
static const struct {
    int code;
    const char *name;
} gp__clblast_codes[] = {
    {-1024, "CLBlastNotImplemented"},       {-1022, "CLBlastInvalidMatrixA"},
    {-1021, "CLBlastInvalidMatrixB"},       {-1020, "CLBlastInvalidMatrixC"},
    {-1017, "CLBlastInvalidDimension"},     {-1016, "CLBlastInvalidLeadDimA"},
    {-1015, "CLBlastInvalidLeadDimB"},      {-1014, "CLBlastInvalidLeadDimC"},
    {-1011, "CLBlastInsufficientMemoryA"},  {-1010, "CLBlastInsufficientMemoryB"},
    {-1009, "CLBlastInsufficientMemoryC"},  {-2050, "CLBlastInsufficientMemoryTemp"},
    {-2046, "CLBlastInvalidLocalMemUsage"}, {-2044, "CLBlastNoDoublePrecision"},
    {-2041, "CLBlastDatabaseError"},        {-2040, "CLBlastUnknownError"},
    {-2039, "CLBlastUnexpectedError"},
};
#define GP__CLBLAST_NO_DOUBLE -2044

static pthread_mutex_t gp__clblast_lock = PTHREAD_MUTEX_INITIALIZER;
static int gp__clblast_tried; /* the first attempt decides for the whole process */
static gp__clblast_sgemm_fn *gp__clblast_sgemm;
static gp__clblast_dgemm_fn *gp__clblast_dgemm;
static char gp__clblast_text[768]; /* "CLBlast 1.5.3", or why there is none */

/* "CLBlast 1.5.3" from the file the loader found: CLBlast has no version query, but its
 * soname links to a file named with the whole version. */
static void gp__clblast_name_version(void *sym)
{
    Dl_info where;
    char real[PATH_MAX];
    const char *file = NULL, *v = NULL;
    if (dladdr(sym, &where) && where.dli_fname && realpath(where.dli_fname, real)) {
        file = strrchr(real, '/');
        v = strstr(file ? file : real, ".so.");
    }
    snprintf(gp__clblast_text, sizeof gp__clblast_text, "CLBlast%s%s", v ? " " : "", v ? v + 4 : "");
}

/* 1 once CLBlast is loaded; 0 with the reason in gp__clblast_text. */
static int gp__clblast_load(void)
{
    static const char *const names[] = {"libclblast.so.1", "libclblast.so"};
    pthread_mutex_lock(&gp__clblast_lock);
    if (!gp__clblast_tried) {
        gp__clblast_tried = 1;
        char first_error[512] = "";
        void *lib = NULL;
        for (size_t i = 0; i < 2 && !lib; i++) {
            const char *e = (lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)) ? NULL : dlerror();
            if (i == 0 && e) /* the unversioned name exists only with the -dev package */
                snprintf(first_error, sizeof first_error, "%s", e);
        }
        void *s = lib ? dlsym(lib, "CLBlastSgemm") : NULL, *d = lib ? dlsym(lib, "CLBlastDgemm") : NULL;
        if (!lib) {
            snprintf(gp__clblast_text, sizeof gp__clblast_text,
                     "%s not found (%s): install CLBlast (Debian and Ubuntu: libclblast1)", names[0], first_error);
        } else if (!s || !d) {
            snprintf(gp__clblast_text, sizeof gp__clblast_text,
                     "the CLBlast found has no CLBlastSgemm or CLBlastDgemm: install CLBlast 1.0 or newer");
            dlclose(lib);
        } else {
            /* memcpy, not a cast: ISO C has no conversion from object to function pointers. */
            memcpy(&gp__clblast_sgemm, &s, sizeof s);
            memcpy(&gp__clblast_dgemm, &d, sizeof d);
            gp__clblast_name_version(s);
            gp__cl_host->debug("load", "opencl: %s loaded", gp__clblast_text);
        }
    }
    int ok = gp__clblast_sgemm != NULL;
    pthread_mutex_unlock(&gp__clblast_lock);
    return ok;
}

/* OpenBLAS's CBLAS GEMM, as cblas.h declares it: with 32-bit sizes (Debian's libopenblas0), or
 * with 64-bit ones where the build says USE64BITINT (Debian's libopenblas64, NumPy's wheels). */
typedef void gp__cblas_sgemm_fn(int layout, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                                const float *b, int ldb, float beta, float *c, int ldc);
typedef void gp__cblas_dgemm_fn(int layout, int ta, int tb, int m, int n, int k, double alpha, const double *a,
                                int lda, const double *b, int ldb, double beta, double *c, int ldc);
typedef void gp__cblas_sgemm64_fn(int layout, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                                  const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                                  int64_t ldc);
typedef void gp__cblas_dgemm64_fn(int layout, int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                                  const double *a, int64_t lda, const double *b, int64_t ldb, double beta, double *c,
                                  int64_t ldc);
static int gp__openblas_tried;
static gp__cblas_sgemm_fn *gp__cblas_sgemm;
static gp__cblas_dgemm_fn *gp__cblas_dgemm;
static gp__cblas_sgemm64_fn *gp__cblas_sgemm64;
static gp__cblas_dgemm64_fn *gp__cblas_dgemm64;
static char gp__openblas_text[512]; /* "OpenBLAS 0.3.21 (host)", or why there is none */

/* Whether OpenBLAS chose kernels older than the CPU, and if so which OPENBLAS_CORETYPE would fit
 * it (NULL: none older). For a CPU model it does not know, Debian 12's 0.3.21 falls back to
 * SSE3 kernels (Prescott and its kin) on some virtual machines' Xeons, 5-10x below what the cores
 * do, and to its AVX2 ones (Haswell) on AVX-512 EPYCs. There, on 2 cores, they make half of what
 * OPENBLAS_CORETYPE=SkylakeX makes: DGEMM from N = 1024 at 0.6-0.75x gpuport's kernel, but SGEMM
 * at 1.0-1.15x it (docs/performance.md), so *f32_ok is then set. Such a library serves
 * GP_GEMM_VENDOR, and GP_GEMM_AUTO only for f32 where *f32_ok says so (from what size: gemm.c). */
static const char *gp__openblas_older(const char *core, int *f32_ok)
{
    *f32_ok = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    static const char *const before_avx2[] = {"Prescott", "Core2",        "Penryn",    "Dunnington", "Nehalem",
                                              "Atom",     "Katmai",       "Banias",    "Opteron",    "Opteron_SSE3",
                                              "Barcelona", "Nano",        "SandyBridge"};
    static const char *const avx2[] = {"Haswell", "Zen"};
    if (!core || !__builtin_cpu_supports("avx2")) return NULL;
    for (size_t i = 0; i < sizeof before_avx2 / sizeof before_avx2[0]; i++)
        if (strcmp(core, before_avx2[i]) == 0) return "Haswell or SkylakeX";
    int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                 __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
    for (size_t i = 0; avx512 && i < sizeof avx2 / sizeof avx2[0]; i++)
        if (strcmp(core, avx2[i]) == 0) {
            *f32_ok = 1;
            return "SkylakeX";
        }
#else
    (void)core;
#endif
    return NULL;
}

/* OpenBLAS's function `name` in lib, under any of the names its builds give it: plain, with the
 * 64_ suffix of some builds with 64-bit sizes, or with the scipy_ prefix of NumPy's and SciPy's
 * wheels (scipy_cblas_sgemm64_); *suffixed says whether the name found ends in 64_. */
static void *gp__openblas_sym(void *lib, const char *name, int *suffixed)
{
    static const char *const prefix[] = {"", "scipy_"}, *const suffix[] = {"", "64_"};
    for (int i = 0; i < 4; i++) {
        char full[64];
        snprintf(full, sizeof full, "%s%s%s", prefix[i / 2], name, suffix[i % 2]);
        void *f = dlsym(lib, full);
        if (f) {
            *suffixed = i % 2;
            return f;
        }
    }
    return NULL;
}

/* 1 once OpenBLAS is loaded; 0 with the reason in gp__openblas_text. GPUPORT_OPENBLAS names the
 * library where set (the Python package sets it to NumPy's own where NumPy brings one). */
static int gp__openblas_load(void)
{
    pthread_mutex_lock(&gp__clblast_lock);
    if (!gp__openblas_tried) {
        gp__openblas_tried = 1;
        const char *env = getenv("GPUPORT_OPENBLAS"), *file = env && *env ? env : "libopenblas.so.0";
        void *lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
        int ilp64 = 0, other = 0;
        void *s = lib ? gp__openblas_sym(lib, "cblas_sgemm", &ilp64) : NULL;
        void *d = s ? gp__openblas_sym(lib, "cblas_dgemm", &other) : NULL;
        void *config = d ? gp__openblas_sym(lib, "openblas_get_config", &other) : NULL;
        void *corename = d ? gp__openblas_sym(lib, "openblas_get_corename", &other) : NULL;
        if (!lib) {
            snprintf(gp__openblas_text, sizeof gp__openblas_text, "OpenBLAS: %s not found (%s)%s", file, dlerror(),
                     env && *env ? ": GPUPORT_OPENBLAS names it" : ": install it (Debian and Ubuntu: libopenblas0)");
        } else if (!s || !d) {
            snprintf(gp__openblas_text, sizeof gp__openblas_text, "OpenBLAS: %s has no cblas_sgemm and cblas_dgemm", file);
            dlclose(lib);
        } else {
            char *(*get_config)(void) = NULL;
            memcpy(&get_config, &config, sizeof config);
            const char *config_text = get_config ? get_config() : NULL; /* "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." */
            /* 64-bit sizes: the build says so in its configuration (Debian's libopenblas64 keeps
             * the plain names), else the names' suffix does */
            if (config_text) ilp64 = strstr(config_text, "USE64BITINT") != NULL;
            if (ilp64) {
                memcpy(&gp__cblas_sgemm64, &s, sizeof s);
                memcpy(&gp__cblas_dgemm64, &d, sizeof d);
            } else {
                memcpy(&gp__cblas_sgemm, &s, sizeof s);
                memcpy(&gp__cblas_dgemm, &d, sizeof d);
            }
            size_t w = 0;
            if (config_text && config_text[w = strcspn(config_text, " ")])
                w += 1 + strcspn(config_text + w + 1, " ");
            snprintf(gp__openblas_text, sizeof gp__openblas_text, "%.*s (host)", (int)w,
                     config_text ? config_text : "");
            if (!config_text) snprintf(gp__openblas_text, sizeof gp__openblas_text, "OpenBLAS (host)");
            char *(*get_core)(void) = NULL;
            memcpy(&get_core, &corename, sizeof corename);
            int f32_ok;
            const char *core = get_core ? get_core() : NULL, *fit = gp__openblas_older(core, &f32_ok);
            if (fit) /* no " (host)" then: GP_GEMM_AUTO takes gpuport's kernel, or it for f64 only */
                snprintf(gp__openblas_text + strlen(gp__openblas_text) - 1,
                         sizeof gp__openblas_text - strlen(gp__openblas_text) + 1,
                         "%s, %s kernels: this OpenBLAS does not know the CPU; OPENBLAS_CORETYPE=%s chooses its own)",
                         f32_ok ? " for f32" : "", core, fit);
            gp__cl_host->debug("load", "opencl: %s loaded from %s%s", gp__openblas_text, file,
                               ilp64 ? " (64-bit sizes)" : "");
        }
    }
    int ok = gp__cblas_sgemm || gp__cblas_sgemm64;
    pthread_mutex_unlock(&gp__clblast_lock);
    return ok;
}

/* OpenBLAS on the buffers' memory: each mapped, the last map blocking (so after the stream's
 * earlier commands, the other maps among them: the queue is in order; one wait instead of three
 * took about 40 us off a product of N = 64 on pocl 3.1 with 2 EPYC cores, 0.04-0.07 ms against
 * 0.07-0.13 in gpuport-bench), the product computed by the caller, each unmapped (before the
 * stream's later ones). A native kernel (clEnqueueNativeKernel) would make the call a command of
 * the queue; tried on pocl 3.1, a read queued after it did wait for it, but the gemm tests read
 * C back as it was before the product, and its own result was wrong: the memory pocl handed it
 * was not the buffers' (in a plain program with one buffer it was). Not kept. Nor was the product
 * as a command through an event callback (non-blocking maps, a marker whose callback ran OpenBLAS
 * and completed a user event, a barrier on that event, the unmaps; gp_gemm then returned at once):
 * on pocl 3.1 with 2 EPYC cores it brought the path from 0.88-0.95x to 0.97-1.01x OpenBLAS called
 * directly at N = 512 in gpuport-bench, but on pocl 5.0 with 16 Xeon cores it fell to 0.03-0.26x
 * at N = 512 in three of four products (1.12 in the fourth) and 0.25-0.63x at 1024, against
 * 0.58-0.74x and 0.33-0.94x for this path alternating with it in the same call (2026-11-29). */
static gp_status gp__openblas_gemm(cl_command_queue q, gp_type type, int trans_a, int trans_b, size_t m, size_t n,
                                   size_t k, double alpha, cl_mem a, size_t a_off, size_t lda, cl_mem b,
                                   size_t b_off, size_t ldb, double beta, cl_mem c, size_t c_off, size_t ldc)
{
    if (!gp__cblas_sgemm64 &&
        (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX)) {
        gp__cl_host->set_error("OpenBLAS GEMM (%zu x %zu x %zu): its sizes are 32-bit ints", m, n, k);
        return GP_ERROR_UNSUPPORTED;
    }
    cl_mem mems[3] = {c, a, b};
    void *host[3] = {NULL, NULL, NULL};
    cl_int err = CL_SUCCESS;
    int last = mems[2] != mems[0] && mems[2] != mems[1] ? 2 : mems[1] != mems[0] ? 1 : 0;
    for (int i = 0; i < 3 && err == CL_SUCCESS; i++) {
        size_t bytes = 0;
        for (int j = 0; j < i; j++) /* one map of a buffer that holds two operands */
            if (mems[j] == mems[i]) host[i] = host[j];
        if (!host[i] && (err = gp__cl.clGetMemObjectInfo(mems[i], CL_MEM_SIZE, sizeof bytes, &bytes, NULL)) == CL_SUCCESS)
            host[i] = gp__cl.clEnqueueMapBuffer(q, mems[i], i == last ? CL_TRUE : CL_FALSE,
                                                i == 0 ? CL_MAP_READ | CL_MAP_WRITE : CL_MAP_READ, 0, bytes, 0, NULL,
                                                NULL, &err);
    }
    if (err == CL_SUCCESS) {
        int ta = trans_a ? GP__CLBLAST_TRANS : GP__CLBLAST_NO_TRANS, tb = trans_b ? GP__CLBLAST_TRANS : GP__CLBLAST_NO_TRANS;
        if (gp__cblas_sgemm64 && type == GP_F32)
            gp__cblas_sgemm64(GP__CLBLAST_COL_MAJOR, ta, tb, (int64_t)m, (int64_t)n, (int64_t)k, (float)alpha,
                              (float *)host[1] + a_off, (int64_t)lda, (float *)host[2] + b_off, (int64_t)ldb,
                              (float)beta, (float *)host[0] + c_off, (int64_t)ldc);
        else if (gp__cblas_dgemm64)
            gp__cblas_dgemm64(GP__CLBLAST_COL_MAJOR, ta, tb, (int64_t)m, (int64_t)n, (int64_t)k, alpha,
                              (double *)host[1] + a_off, (int64_t)lda, (double *)host[2] + b_off, (int64_t)ldb, beta,
                              (double *)host[0] + c_off, (int64_t)ldc);
        else if (type == GP_F32)
            gp__cblas_sgemm(GP__CLBLAST_COL_MAJOR, ta, tb, (int)m, (int)n, (int)k, (float)alpha, (float *)host[1] + a_off,
                            (int)lda, (float *)host[2] + b_off, (int)ldb, (float)beta, (float *)host[0] + c_off, (int)ldc);
        else
            gp__cblas_dgemm(GP__CLBLAST_COL_MAJOR, ta, tb, (int)m, (int)n, (int)k, alpha, (double *)host[1] + a_off,
                            (int)lda, (double *)host[2] + b_off, (int)ldb, beta, (double *)host[0] + c_off, (int)ldc);
    }
    cl_int unmap = CL_SUCCESS;
    for (int i = 0; i < 3; i++) {
        int again = 0;
        for (int j = 0; j < i; j++) again |= mems[j] == mems[i];
        cl_int e = host[i] && !again ? gp__cl.clEnqueueUnmapMemObject(q, mems[i], host[i], 0, NULL, NULL) : CL_SUCCESS;
        if (unmap == CL_SUCCESS) unmap = e;
    }
    if (err != CL_SUCCESS) return gp__cl_fail("clEnqueueMapBuffer", err);
    return unmap == CL_SUCCESS ? GP_SUCCESS : gp__cl_fail("clEnqueueUnmapMemObject", unmap);
}

/* Whether OpenBLAS serves d: GPUPORT_OPENCL_BLAS=openblas|clblast where set, else OpenBLAS on
 * CPU devices whose buffers are the host's memory where it is installed, CLBlast elsewhere. A
 * request that cannot be met is an error, its reason in why. */
static gp_status gp__cl_blas_pick(const gp__cl_dev *d, int *openblas, char *why, size_t len)
{
    const char *want = getenv("GPUPORT_OPENCL_BLAS"), *named = getenv("GPUPORT_OPENBLAS");
    gp_status st = GP_SUCCESS;
    *openblas = 0;
    if (want && *want && strcmp(want, "clblast") && strcmp(want, "openblas")) {
        snprintf(why, len, "GPUPORT_OPENCL_BLAS is '%s'; it must be openblas or clblast", want);
        st = GP_ERROR_INVALID_ARGUMENT;
    } else if (want && strcmp(want, "openblas") == 0 && !d->host_memory) {
        snprintf(why, len, "GPUPORT_OPENCL_BLAS=openblas, but %s is no CPU device whose buffers are the host's memory",
                 d->name);
        st = GP_ERROR_UNSUPPORTED;
    } else if (want && strcmp(want, "openblas") == 0 && !gp__openblas_load()) {
        snprintf(why, len, "GPUPORT_OPENCL_BLAS=openblas, but %s", gp__openblas_text);
        st = GP_ERROR_UNSUPPORTED;
    } else if (d->host_memory && named && *named && !(want && strcmp(want, "clblast") == 0) &&
               !gp__openblas_load()) {
        snprintf(why, len, "%s", gp__openblas_text); /* a library named and not there is no silent fallback */
        st = GP_ERROR_UNSUPPORTED;
    } else {
        *openblas = want && *want ? strcmp(want, "openblas") == 0 : d->host_memory && gp__openblas_load();
    }
    if (st != GP_SUCCESS) gp__cl_host->set_error("%s", why);
    return st;
}

gp_status gp__cl_blas_info(void *dev, char *text, size_t len)
{
    int openblas;
    gp_status st = gp__cl_blas_pick(dev, &openblas, text, len);
    if (st != GP_SUCCESS || openblas) {
        if (openblas) snprintf(text, len, "%s", gp__openblas_text);
        return st;
    }
    /* CLBlast serves every OpenCL 1.1 device; f64 needs the device's cl_khr_fp64 */
    int ok = gp__clblast_load();
    snprintf(text, len, "%s", gp__clblast_text);
    if (ok)
        return GP_SUCCESS;
    gp__cl_host->set_error("%s", gp__clblast_text);
    return GP_ERROR_UNSUPPORTED;
}

static gp_status gp__clblast_fail(const char *call, int s, size_t m, size_t n, size_t k)
{
    if (s > -1000) /* an OpenCL error code */
        return gp__cl_fail(call, s);
    const char *name = "unknown CLBlast status";
    for (size_t i = 0; i < sizeof gp__clblast_codes / sizeof gp__clblast_codes[0]; i++)
        if (gp__clblast_codes[i].code == s)
            name = gp__clblast_codes[i].name;
    gp__cl_host->set_error("%s (%zu x %zu x %zu) failed: %s (%d)%s", call, m, n, k, name, s,
                           s == GP__CLBLAST_NO_DOUBLE ? ": the device has no double precision" : "");
    if (s == GP__CLBLAST_NO_DOUBLE || s == -1024)
        return GP_ERROR_UNSUPPORTED;
    if (s >= -1024 && s <= -1007) /* a size, leading dimension or buffer core should have refused */
        return GP_ERROR_INVALID_ARGUMENT;
    return GP_ERROR_BACKEND;
}

gp_status gp__cl_blas_gemm(void *dev, void *stream, gp_type type, int trans_a, int trans_b, size_t m, size_t n,
                           size_t k, double alpha, void *a, size_t a_off, size_t lda, void *b, size_t b_off,
                           size_t ldb, double beta, void *c, size_t c_off, size_t ldc)
{
    gp__cl_dev *d = dev;
    int openblas;
    char why[600];
    gp_status st = gp__cl_blas_pick(d, &openblas, why, sizeof why);
    if (st != GP_SUCCESS) return st;
    if (openblas && (type == GP_F32 || type == GP_F64))
        return gp__openblas_gemm(stream, type, trans_a, trans_b, m, n, k, alpha, a, a_off, lda, b, b_off, ldb, beta, c,
                                 c_off, ldc);
    if (!gp__clblast_load()) {
        gp__cl_host->set_error("%s", gp__clblast_text);
        return GP_ERROR_UNSUPPORTED;
    }
    if (type != GP_F32 && type != GP_F64) {
        gp__cl_host->set_error("CLBlast GEMM takes f32 or f64 here, not type %d", (int)type);
        return GP_ERROR_UNSUPPORTED;
    }
    /* Where C = beta C (k == 0, which CLBlast refuses, or alpha == 0, where it would still read
     * A and B, NaN included), a product with zeros and k = 1 gives exactly that. OpenCL frees the
     * buffer only once the commands using it are done. */
    cl_mem zeros = NULL;
    size_t k_given = k;
    if (k == 0 || alpha == 0) {
        size_t count = m > n ? m : n, es = type == GP_F64 ? sizeof(double) : sizeof(float);
        void *host = calloc(count, es);
        cl_int e = CL_OUT_OF_HOST_MEMORY;
        if (host)
            zeros = gp__cl.clCreateBuffer(d->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, count * es, host, &e);
        free(host);
        if (!zeros)
            return gp__cl_fail("clCreateBuffer", e);
        a = b = zeros;
        a_off = b_off = 0;
        trans_a = trans_b = 0;
        k = 1, lda = m, ldb = 1, alpha = 0;
    }
    cl_command_queue q = stream;
    int ta = trans_a ? GP__CLBLAST_TRANS : GP__CLBLAST_NO_TRANS, tb = trans_b ? GP__CLBLAST_TRANS : GP__CLBLAST_NO_TRANS;
    /* CLBlast takes no wait list, so on pocl (see gp__cl_dev) a barrier on the device's last
     * kernel goes first, and CLBlast's event, that of its last kernel on this in-order queue,
     * becomes the one the next kernel waits for. */
    cl_event done = NULL;
    cl_int err = CL_SUCCESS;
    int s = 0;
    if (d->serialize_kernels) {
        pthread_mutex_lock(&d->kernel_lock);
        if (d->last_kernel)
            err = gp__cl.clEnqueueBarrierWithWaitList(q, 1, &d->last_kernel, NULL);
    }
    if (err == CL_SUCCESS && type == GP_F32)
        s = gp__clblast_sgemm(GP__CLBLAST_COL_MAJOR, ta, tb, m, n, k, (float)alpha, a, a_off, lda, b, b_off, ldb,
                              (float)beta, c, c_off, ldc, &q, d->serialize_kernels ? &done : NULL);
    else if (err == CL_SUCCESS)
        s = gp__clblast_dgemm(GP__CLBLAST_COL_MAJOR, ta, tb, m, n, k, alpha, a, a_off, lda, b, b_off, ldb, beta, c,
                              c_off, ldc, &q, d->serialize_kernels ? &done : NULL);
    if (d->serialize_kernels) {
        if (err == CL_SUCCESS && s == 0 && done) {
            if (d->last_kernel)
                gp__cl.clReleaseEvent(d->last_kernel);
            d->last_kernel = done;
        } else if (done) {
            gp__cl.clReleaseEvent(done);
        }
        pthread_mutex_unlock(&d->kernel_lock);
    }
    if (zeros)
        gp__cl.clReleaseMemObject(zeros);
    if (err != CL_SUCCESS)
        return gp__cl_fail("clEnqueueBarrierWithWaitList", err);
    return s == 0 ? GP_SUCCESS : gp__clblast_fail(type == GP_F32 ? "CLBlastSgemm" : "CLBlastDgemm", s, m, n, k_given);
}
