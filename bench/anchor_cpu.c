/* The host anchor for CPU devices: what a plain C loop with OpenMP gets from the same cores and
 * memory that pocl uses. Every loop splits the range into one contiguous chunk per thread, so
 * each thread streams through memory as a device's work-groups do. */
#include "anchor_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#define GPA_OMP(x) _Pragma(#x)
/* Below this many elements a loop runs in one thread: waking the others costs more than the
 * work, and on a loaded machine a barrier can wait a whole scheduler time slice. */
static const size_t parallel_min = 1u << 16;
static int thread_id(void) { return omp_get_thread_num(); }
static int thread_count(void) { return omp_get_num_threads(); }
static int max_threads(void) { return omp_get_max_threads(); }
#else
/* Without OpenMP the pragmas vanish (-Wunknown-pragmas would fail the build) and one thread runs. */
#define GPA_OMP(x)
static int thread_id(void) { return 0; }
static int thread_count(void) { return 1; }
static int max_threads(void) { return 1; }
#endif

/* The chunk [*begin, *end) of n that the calling thread owns. */
static void chunk(size_t n, size_t *begin, size_t *end)
{
    size_t t = (size_t)thread_id(), nt = (size_t)thread_count();
    *begin = n / nt * t + (t < n % nt ? t : n % nt);
    *end = *begin + n / nt + (t < n % nt);
}

void gpa_cpu_describe(char *text, size_t len)
{
#ifdef _OPENMP
    snprintf(text, len, "C loop, OpenMP %d, %d threads (1 below %zu elements)", _OPENMP, omp_get_max_threads(),
             parallel_min);
#else
    snprintf(text, len, "C loop, 1 thread (built without OpenMP)");
#endif
}

void gpa_cpu_copy(float *out, const float *x, size_t n)
{
    GPA_OMP(omp parallel if (n >= parallel_min))
    {
        size_t b, e;
        chunk(n, &b, &e);
        memcpy(out + b, x + b, (e - b) * sizeof *x);
    }
}

void gpa_cpu_axpy(float *out, float a, const float *x, const float *y, size_t n)
{
    GPA_OMP(omp parallel for simd schedule(static) if (n >= parallel_min))
    for (size_t i = 0; i < n; i++)
        out[i] = a * x[i] + y[i];
}

float gpa_cpu_sum(const float *x, size_t n)
{
    float s = 0;
    /* simd lets the compiler keep several partial sums (reassociation), as a device does. */
    GPA_OMP(omp parallel for simd schedule(static) reduction(+ : s) if (n >= parallel_min))
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return s;
}

void gpa_cpu_scan(float *out, const float *x, size_t n)
{
    /* per thread: its chunk's sum, then the sum of the chunks before it */
    float *partial = malloc((size_t)max_threads() * sizeof *partial);
    if (!partial) { /* too little memory for a few floats: scan in one thread */
        float s = 0;
        for (size_t i = 0; i < n; i++)
            out[i] = s += x[i];
        return;
    }
    GPA_OMP(omp parallel if (n >= parallel_min))
    {
        size_t b, e;
        int t = thread_id(), nt = thread_count();
        chunk(n, &b, &e);
        float s = 0;
        for (size_t i = b; i < e; i++)
            s += x[i];
        partial[t] = s;
        GPA_OMP(omp barrier)
        GPA_OMP(omp single)
        {
            float run = 0;
            for (int i = 0; i < nt; i++) {
                float own = partial[i];
                partial[i] = run;
                run += own;
            }
        }
        s = partial[t];
        for (size_t i = b; i < e; i++)
            out[i] = s += x[i];
    }
    free(partial);
}

/* A row of a 2D grid: the ends copied, the inside from the rows below, at and above. */
void gpa_cpu_stencil5(float *out, const float *in, size_t nx, size_t ny, const float w[5])
{
    GPA_OMP(omp parallel for schedule(static) if (nx * ny >= parallel_min))
    for (size_t y = 0; y < ny; y++) {
        const float *c = in + y * nx;
        float *o = out + y * nx;
        if (y == 0 || y == ny - 1 || nx < 3) {
            memcpy(o, c, nx * sizeof *o);
            continue;
        }
        o[0] = c[0], o[nx - 1] = c[nx - 1];
        for (size_t x = 1; x < nx - 1; x++)
            o[x] = w[0] * c[x] + w[1] * c[x - 1] + w[2] * c[x + 1] + w[3] * c[x - nx] + w[4] * c[x + nx];
    }
}

void gpa_cpu_stencil9(float *out, const float *in, size_t nx, size_t ny, const float w[9])
{
    GPA_OMP(omp parallel for schedule(static) if (nx * ny >= parallel_min))
    for (size_t y = 0; y < ny; y++) {
        const float *c = in + y * nx, *s = c - nx, *n = c + nx;
        float *o = out + y * nx;
        if (y == 0 || y == ny - 1 || nx < 3) {
            memcpy(o, c, nx * sizeof *o);
            continue;
        }
        o[0] = c[0], o[nx - 1] = c[nx - 1];
        for (size_t x = 1; x < nx - 1; x++)
            o[x] = w[0] * s[x - 1] + w[1] * s[x] + w[2] * s[x + 1] + w[3] * c[x - 1] + w[4] * c[x] +
                   w[5] * c[x + 1] + w[6] * n[x - 1] + w[7] * n[x] + w[8] * n[x + 1];
    }
}

void gpa_cpu_stencil7(float *out, const float *in, size_t n, const float w[7])
{
    size_t plane = n * n;
    GPA_OMP(omp parallel for collapse(2) schedule(static) if (plane * n >= parallel_min))
    for (size_t z = 0; z < n; z++)
        for (size_t y = 0; y < n; y++) {
            const float *c = in + z * plane + y * n;
            float *o = out + z * plane + y * n;
            if (z == 0 || z == n - 1 || y == 0 || y == n - 1 || n < 3) {
                memcpy(o, c, n * sizeof *o);
                continue;
            }
            o[0] = c[0], o[n - 1] = c[n - 1];
            for (size_t x = 1; x < n - 1; x++)
                o[x] = w[0] * c[x] + w[1] * c[x - 1] + w[2] * c[x + 1] + w[3] * c[x - n] + w[4] * c[x + n] +
                       w[5] * c[x - plane] + w[6] * c[x + plane];
        }
}

/* GEMM in blocks that keep a panel of b in cache while rows of a stream past it; each thread
 * owns whole rows of c. The inner block is compiled once per vector width and the widest the
 * host has is picked at load time, as a vendor library would, without tying the binary to the
 * build machine's CPU. */
enum { gemm_bi = 32, gemm_bk = 128, gemm_bj = 512 };
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define GPA_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GPA_CLONES
#endif

#define GPA_GEMM(name, T)                                                                       \
    GPA_CLONES static void name##_block(T *c, const T *a, const T *b, size_t n, size_t i0, size_t i1, \
                                        size_t k0, size_t k1, size_t j0, size_t j1)             \
    {                                                                                           \
        for (size_t i = i0; i < i1; i++)                                                        \
            for (size_t k = k0; k < k1; k++) {                                                  \
                T aik = a[i * n + k];                                                           \
                T *ci = c + i * n;                                                              \
                const T *bk = b + k * n;                                                        \
                for (size_t j = j0; j < j1; j++)                                                \
                    ci[j] += aik * bk[j];                                                       \
            }                                                                                   \
    }                                                                                           \
    void name(T *c, const T *a, const T *b, size_t n)                                           \
    {                                                                                           \
        GPA_OMP(omp parallel for schedule(static) if (n >= 64))                                \
        for (size_t i0 = 0; i0 < n; i0 += gemm_bi) {                                            \
            size_t i1 = i0 + gemm_bi < n ? i0 + gemm_bi : n;                                    \
            memset(c + i0 * n, 0, (i1 - i0) * n * sizeof *c);                                   \
            for (size_t k0 = 0; k0 < n; k0 += gemm_bk)                                          \
                for (size_t j0 = 0; j0 < n; j0 += gemm_bj)                                      \
                    name##_block(c, a, b, n, i0, i1, k0, k0 + gemm_bk < n ? k0 + gemm_bk : n, j0, \
                                 j0 + gemm_bj < n ? j0 + gemm_bj : n);                          \
        }                                                                                       \
    }

GPA_GEMM(gpa_cpu_sgemm, float)
GPA_GEMM(gpa_cpu_dgemm, double)
