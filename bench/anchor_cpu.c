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
