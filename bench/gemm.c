/* gpuport-bench: GEMM's operands, its result checked on the host, and OpenBLAS beside it on CPU
 * devices. */
#include "bench.h"

/* GEMM operands: element idx of A (which 0) or B (1), in [-1, 1) with 24 significant bits, so
 * exact in f32 and f64 alike and regenerated on the host at no cost. */
double gpb_gemm_value(int which, uint64_t idx)
{
    uint64_t h = gpb_mix(((uint64_t)which << 56) ^ (0x67656d6du + idx));
    return (double)(int64_t)((h >> 40) - (1u << 23)) * 0x1p-23;
}

/* Samples of C (the corners, then hashed positions) against long double dot products, within
 * the bound of a K-term dot product in the type, gamma(K+2) sum |a b| (two more roundings for
 * alpha and the store), plus the reference's own rounding. A full host GEMM at 8192 takes too
 * long; a wrong index or a lost tile still shows in almost every entry. host_c: C on the host
 * (the host anchor), or NULL to read the samples from buffer c. */
int gpb_check_gemm(enum kernel k, size_t n, gp_stream *stream, gp_buffer *c, const void *host_c, result *r,
                   const char *who)
{
    enum { samples = 128 };
    int f64 = k == K_DGEMM;
    size_t elem = f64 ? sizeof(double) : sizeof(float);
    double u = f64 ? 0x1p-53 : 0x1p-24;
    char msg[240];
    for (int s = 0; s < samples; s++) {
        size_t i = s < 4 ? (s & 1 ? n - 1 : 0) : gpb_mix(0x73616d70u + 2 * (uint64_t)s) % n;
        size_t j = s < 4 ? (s & 2 ? n - 1 : 0) : gpb_mix(0x73616d70u + 2 * (uint64_t)s + 1) % n;
        union {
            float f;
            double d;
        } got;
        if (host_c)
            memcpy(&got, (const char *)host_c + (i * n + j) * elem, elem);
        else if (gp_buffer_read(stream, c, (i * n + j) * elem, &got, elem)) {
            snprintf(msg, sizeof msg, "reading C: %s", gp_last_error());
            return gpb_check_failed(r, who, msg);
        }
        double v = f64 ? got.d : (double)got.f;
        long double ref = 0, mag = 0;
        for (size_t q = 0; q < n; q++) {
            long double p = (long double)gpb_gemm_value(0, i * n + q) * gpb_gemm_value(1, q * n + j);
            ref += p;
            mag += fabsl(p);
        }
        long double bound = (gpb_gamma_m((double)n + 2, u) + gpb_gamma_m((double)n, LDBL_EPSILON)) * mag;
        if (!(fabsl((long double)v - ref) <= bound)) {
            snprintf(msg, sizeof msg, "C[%zu][%zu] = %.17g, want %.17Lg within %.3Lg", i, j, v, ref, bound);
            return gpb_check_failed(r, who, msg);
        }
    }
    return 0;
}

/* A GEMM job's operands in host memory, as setup writes them to the device, and room for C. */
void gpb_gemm_host(const job *j, void **a, void **b, void **c)
{
    size_t elem = gpb_elem_size(j->k);
    *a = malloc(j->cells * elem), *b = malloc(j->cells * elem), *c = malloc(j->cells * elem);
    for (size_t i = 0; *a && *b && *c && i < j->cells; i++)
        if (j->k == K_DGEMM)
            ((double *)*a)[i] = gpb_gemm_value(0, i), ((double *)*b)[i] = gpb_gemm_value(1, i);
        else
            ((float *)*a)[i] = (float)gpb_gemm_value(0, i), ((float *)*b)[i] = (float)gpb_gemm_value(1, i);
}

/* OpenBLAS beside a CPU device's GEMM (the library the OpenCL plugin calls: GPUPORT_OPENBLAS
 * where set, else Debian's libopenblas0; loaded at run time, so that the bench needs it only to
 * report it): timed on the host like the host anchor, its result checked, its rate and gpuport's
 * ratio to it in a note. NumPy's wheels name its CBLAS scipy_cblas_sgemm64_; sizes are 64-bit
 * there and wherever the build's configuration says USE64BITINT (Debian's libopenblas64). */
void gpb_openblas_note(job *j, result *r, double *ms)
{
    typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                             float *, int);
    typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int, const double *, int,
                             double, double *, int);
    typedef void (*sgemm64_fn)(int, int, int, int64_t, int64_t, int64_t, float, const float *, int64_t,
                               const float *, int64_t, float, float *, int64_t);
    typedef void (*dgemm64_fn)(int, int, int, int64_t, int64_t, int64_t, double, const double *, int64_t,
                               const double *, int64_t, double, double *, int64_t);
    static void *lib;
    static char why[300];
    const char *env = getenv("GPUPORT_OPENBLAS"), *file = env && *env ? env : "libopenblas.so.0";
    if (!lib && !why[0] && !(lib = dlopen(file, RTLD_NOW | RTLD_LOCAL)))
        snprintf(why, sizeof why, "%s (%s)", dlerror(), env && *env ? "GPUPORT_OPENBLAS names it" :
                 "Debian's libopenblas0 has it");
    /* the names the plugin looks for (blas.c): plain, with the 64_ suffix, and with the scipy_
     * prefix; 64-bit sizes where the configuration says so, else where the names have the suffix */
    void *fn = NULL, *sym = NULL;
    int form = 0;
    char name[64];
    for (; lib && !fn && form < 4; form++) {
        snprintf(name, sizeof name, "%scblas_%cgemm%s", form / 2 ? "scipy_" : "", j->k == K_DGEMM ? 'd' : 's',
                 form % 2 ? "64_" : "");
        fn = dlsym(lib, name);
    }
    if (!fn) {
        gpb_note(r, "OpenBLAS: %s", lib ? "no cblas_sgemm or cblas_dgemm in it" : why);
        return;
    }
    form--;
    snprintf(name, sizeof name, "%sopenblas_get_config%s", form / 2 ? "scipy_" : "", form % 2 ? "64_" : "");
    sym = dlsym(lib, name);
    char *(*config)(void) = NULL;
    memcpy(&config, &sym, sizeof sym);
    int wide = config ? strstr(config(), "USE64BITINT") != NULL : form % 2;
    void *a, *b, *c;
    gpb_gemm_host(j, &a, &b, &c);
    int n = (int)j->size, ok = a && b && c;
    enum { ROW_MAJOR = 101, NO_TRANS = 111 }; /* CBLAS's */
    gpb_progress("%s %s %s: OpenBLAS", r->spec, kd[j->k].name, r->shape);
    for (int i = 0; ok && i <= opt.reps; i++) {
        double t0 = gpb_now_ms();
        if (wide && j->k == K_DGEMM)
            ((dgemm64_fn)fn)(ROW_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
        else if (wide)
            ((sgemm64_fn)fn)(ROW_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        else if (j->k == K_DGEMM)
            ((dgemm_fn)fn)(ROW_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
        else
            ((sgemm_fn)fn)(ROW_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        ms[i] = gpb_now_ms() - t0;
    }
    if (!ok) {
        gpb_note(r, "OpenBLAS: out of host memory");
    } else if (!gpb_check_gemm(j->k, j->size, NULL, NULL, c, r, "OpenBLAS")) {
        figure f = gpb_summarize(ms, opt.reps, j->work);
        if (r->measured)
            gpb_note(r, "OpenBLAS: %.1f GFLOP/s, gpuport %.2fx of it", f.rate, r->gp.rate / f.rate);
        else
            gpb_note(r, "OpenBLAS: %.1f GFLOP/s", f.rate);
    }
    free(a), free(b), free(c);
}

