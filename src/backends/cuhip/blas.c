/* The vendor BLAS hooks, once for cuBLAS and rocBLAS: the library is opened on first use (loading
 * it costs time and memory, and its absence must not make the backend unavailable), a handle
 * is made per device on first use and kept until device_close. */
#include "cuhip.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t ch_blas_load_lock = PTHREAD_MUTEX_INITIALIZER;
static int ch_blas_tried;         /* the first attempt decides for the whole process */
static void *ch_blas_lib;
static char ch_blas_reason[1024]; /* why there is none */
static char ch_blas_version[128];

static const char *ch_resolve_blas(void *lib)
{
#define CH__LOAD(field, fn, sym)                                                               \
    if (!(gp__ch.field = (__typeof__(fn) *)dlsym(lib, sym)))                                   \
        return sym;
#define CH__LOAD_OPTIONAL(field, fn, sym) gp__ch.field = (__typeof__(fn) *)dlsym(lib, sym);
    CH_BLAS_API(CH__LOAD)
    CH_BLAS_API_OPTIONAL(CH__LOAD_OPTIONAL)
#undef CH__LOAD
#undef CH__LOAD_OPTIONAL
    return NULL;
}

/* GP_SUCCESS once the library is loaded; otherwise GP_ERROR_UNSUPPORTED with the reason. */
static gp_status ch_blas_load(void)
{
    pthread_mutex_lock(&ch_blas_load_lock);
    if (!ch_blas_tried) {
        char tried[2048] = "", first[512] = "";
        ch_blas_lib = gp__ch_find_lib(gp__ch_vendor_blas_libs, ch_resolve_blas, tried, sizeof tried, first,
                                      sizeof first);
        if (ch_blas_lib) {
            gp__ch_vendor_blas_version(ch_blas_version, sizeof ch_blas_version);
            gp__ch_host->debug("load", "%s %s loaded", CH_BLAS_TITLE, ch_blas_version);
        } else {
            snprintf(ch_blas_reason, sizeof ch_blas_reason, "%s not found (%s): %s", gp__ch_vendor_blas_libs[0], first,
                     gp__ch_vendor_blas_hint);
            gp__ch_host->debug("load", "%s not loaded; tried: %s", CH_BLAS_TITLE, tried);
        }
        ch_blas_tried = 1;
    }
    int loaded = ch_blas_lib != NULL;
    pthread_mutex_unlock(&ch_blas_load_lock);
    if (loaded)
        return GP_SUCCESS;
    gp__ch_host->set_error("%s", ch_blas_reason);
    return GP_ERROR_UNSUPPORTED;
}

static const char *ch_blas_status_name(ch_blas_status s)
{
    const char *name = gp__ch.blas_status_name ? gp__ch.blas_status_name(s) : NULL;
    return name ? name : "unknown " CH_BLAS_TITLE " status";
}

/* Loads the library and makes the device's handle if need be; on success returns with the
 * device current and d->blas_lock held. On failure the message is the detail and, when why is
 * given, also goes there. */
static gp_status ch_blas_enter(gp__ch_device *d, char *why, size_t why_len)
{
    gp_status st = ch_blas_load();
    if (st != GP_SUCCESS) {
        snprintf(why, why_len, "%s", ch_blas_reason);
        return st;
    }
    pthread_mutex_lock(&d->blas_lock);
    st = gp__ch_vendor_enter(d); /* a handle belongs to the device current when it is made */
    if (st != GP_SUCCESS)
        snprintf(why, why_len, "making %s current failed", d->name);
    if (st == GP_SUCCESS && !d->blas) {
        const char *call = "creating a handle";
        ch_blas_status s = gp__ch.blas_create(&d->blas);
        if (s == CH_BLAS_SUCCESS && (s = gp__ch_vendor_blas_setup(d->blas, &call)) != CH_BLAS_SUCCESS)
            gp__ch.blas_destroy(d->blas);
        if (s != CH_BLAS_SUCCESS) {
            d->blas = NULL;
            snprintf(why, why_len, "%s %s on %s: %s failed: %s (%d)", CH_BLAS_TITLE, ch_blas_version, d->name, call,
                     ch_blas_status_name(s), (int)s);
            gp__ch_host->set_error("%s", why);
            st = s == CH_BLAS_ALLOC_FAILED ? GP_ERROR_OUT_OF_DEVICE_MEMORY : GP_ERROR_BACKEND;
        }
    }
    if (st != GP_SUCCESS)
        pthread_mutex_unlock(&d->blas_lock);
    return st;
}

gp_status gp__ch_blas_info(void *dev, char *text, size_t len)
{
    gp__ch_device *d = dev;
    char why[1024];
    gp_status st = ch_blas_enter(d, why, sizeof why);
    if (st != GP_SUCCESS) {
        snprintf(text, len, "%s", why);
        return GP_ERROR_UNSUPPORTED;
    }
    pthread_mutex_unlock(&d->blas_lock);
    snprintf(text, len, "%s %s", CH_BLAS_TITLE, ch_blas_version);
    return GP_SUCCESS;
}

gp_status gp__ch_blas_gemm(void *dev, void *stream, gp_type type, int trans_a, int trans_b, size_t m, size_t n,
                           size_t k, double alpha, void *a, size_t a_off, size_t lda, void *b, size_t b_off,
                           size_t ldb, double beta, void *c, size_t c_off, size_t ldc)
{
    gp__ch_device *d = dev;
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX) {
        gp__ch_host->set_error("%s takes sizes and leading dimensions up to %d; this product has m %zu, n %zu, k %zu, "
                               "lda %zu, ldb %zu, ldc %zu",
                               CH_BLAS_TITLE, INT_MAX, m, n, k, lda, ldb, ldc);
        return GP_ERROR_UNSUPPORTED;
    }
    if (type != GP_F32 && type != GP_F64) {
        gp__ch_host->set_error("%s GEMM takes f32 or f64 here, not type %d", CH_BLAS_TITLE, (int)type);
        return GP_ERROR_UNSUPPORTED;
    }
    ch_buffer *bufs[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        if (CH_DPTR_IS_NULL(bufs[i]->ptr) && bufs[i]->bytes) {
            gp__ch_host->set_error("matrix %c is in pinned memory that has no device address on this device; use "
                                   "GP_MEMORY_MAPPED or device memory",
                                   "ABC"[i]);
            return GP_ERROR_INVALID_ARGUMENT;
        }
    }
    char why[1024];
    gp_status st = ch_blas_enter(d, why, sizeof why);
    if (st != GP_SUCCESS)
        return st;
    size_t es = type == GP_F64 ? sizeof(double) : sizeof(float);
#define CH_BLAS_AT(buf, off) ((void *)(uintptr_t)CH_DPTR_ADD(((ch_buffer *)(buf))->ptr, (off) * es))
    ch_blas_op op_a = trans_a ? CH_BLAS_OP_T : CH_BLAS_OP_N, op_b = trans_b ? CH_BLAS_OP_T : CH_BLAS_OP_N;
    const char *call = "setting the stream";
    ch_blas_status s = gp__ch.blas_set_stream(d->blas, (ch_stream)stream);
    if (s == CH_BLAS_SUCCESS && type == GP_F32) {
        float al = (float)alpha, be = (float)beta;
        call = "sgemm";
        s = gp__ch.blas_sgemm(d->blas, op_a, op_b, (int)m, (int)n, (int)k, &al, CH_BLAS_AT(a, a_off), (int)lda,
                              CH_BLAS_AT(b, b_off), (int)ldb, &be, CH_BLAS_AT(c, c_off), (int)ldc);
    } else if (s == CH_BLAS_SUCCESS) {
        call = "dgemm";
        s = gp__ch.blas_dgemm(d->blas, op_a, op_b, (int)m, (int)n, (int)k, &alpha, CH_BLAS_AT(a, a_off), (int)lda,
                              CH_BLAS_AT(b, b_off), (int)ldb, &beta, CH_BLAS_AT(c, c_off), (int)ldc);
    }
#undef CH_BLAS_AT
    pthread_mutex_unlock(&d->blas_lock);
    if (s == CH_BLAS_SUCCESS)
        return GP_SUCCESS;
    gp__ch_host->set_error("%s %s (%zu x %zu x %zu) failed: %s (%d)", CH_BLAS_TITLE, call, m, n, k,
                           ch_blas_status_name(s), (int)s);
    return s == CH_BLAS_ALLOC_FAILED ? GP_ERROR_OUT_OF_DEVICE_MEMORY : GP_ERROR_BACKEND;
}

void gp__ch_blas_close(gp__ch_device *d)
{
    /* Made in the device's context, so destroyed there; destroyed all the same where that
     * context cannot be entered any more, as the handle also holds host memory. */
    if (d->blas) {
        gp__ch_vendor_enter(d);
        gp__ch.blas_destroy(d->blas);
    }
    d->blas = NULL;
}
