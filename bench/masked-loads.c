/* gpuport-bench-masked: BabelStream's triad (a = b + s c, f32) on the host's cores, written four
 * ways with AVX-512 (8 lanes, as pocl vectorises for such CPUs), to show which part of pocl's vectorised
 * `if (i < n)` loop costs the speed on a CPU (docs/kernel-dialect.md): every lane of every mask
 * is on, as in all of a launch's work-groups but the last, so each way computes the same.
 *   plain              loads and stores without a mask (pocl's code for GP_FOR's whole groups)
 *   masked             loads and stores under the mask (pocl's code for `if (i < n)`)
 *   masked stores      loads without the mask, stores under it
 *   masked + prefetch  as masked, with a software prefetch 2 KiB ahead of each load
 * Usage: gpuport-bench-masked [N] (floats per array; default 2^24). Threads: OMP_NUM_THREADS. */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { PLAIN, MASKED, MASKED_STORES, PREFETCH, WAYS };
static const char *const way_names[WAYS] = {"plain", "masked", "masked stores", "masked + prefetch"};
#define AHEAD 512 /* floats: 2 KiB */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One way over [lo, hi), hi - lo a multiple of 8; on is the mask's lanes (all of them). A
 * prefetch past the arrays' end is harmless: prefetches do not fault. */
__attribute__((target("avx512f,avx512vl,fma"))) static void triad(int way, float *a, const float *b,
                                                                     const float *c, float s, long lo, long hi,
                                                                     unsigned on)
{
    __m256 sv = _mm256_set1_ps(s);
    __mmask8 k = (__mmask8)on;
    for (long i = lo; i < hi; i += 8) {
        __m256 x, y;
        if (way == PREFETCH) {
            _mm_prefetch((const char *)(b + i + AHEAD), _MM_HINT_T0);
            _mm_prefetch((const char *)(c + i + AHEAD), _MM_HINT_T0);
        }
        if (way == PLAIN || way == MASKED_STORES) {
            x = _mm256_loadu_ps(b + i), y = _mm256_loadu_ps(c + i);
        } else {
            x = _mm256_maskz_loadu_ps(k, b + i), y = _mm256_maskz_loadu_ps(k, c + i);
        }
        if (way == PLAIN)
            _mm256_storeu_ps(a + i, _mm256_fmadd_ps(sv, y, x));
        else
            _mm256_mask_storeu_ps(a + i, k, _mm256_fmadd_ps(sv, y, x));
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1L << 24;
    n -= n % 16;
    if (n < 8 * 1024) {
        fprintf(stderr, "usage: %s [N] (floats per array, at least 8192)\n", argv[0]);
        return 2;
    }
    if (!__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("fma")) {
        printf("skipped: this CPU has no AVX-512 (VL) with FMA\n");
        return 77;
    }
    float *a = aligned_alloc(64, (size_t)n * 4), *b = aligned_alloc(64, (size_t)n * 4),
          *c = aligned_alloc(64, (size_t)n * 4);
    if (!a || !b || !c) {
        fprintf(stderr, "no memory for 3 x %ld floats\n", n);
        return 1;
    }
    /* all lanes on, from a value the compiler cannot see */
    volatile unsigned lanes = 0xff;
    unsigned on = lanes;
    const float s = 0.4f;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) a[i] = 0, b[i] = 1, c[i] = 2;
    printf("triad, %ld floats an array, %d threads; GB/s, best of 10 runs, three rounds\n", n,
           omp_get_max_threads());
    int bad = 0;
    for (int way = 0; way < WAYS; way++) printf("%-18s", way_names[way]);
    printf("\n");
    for (int round = 0; round < 3; round++) {
        for (int way = 0; way < WAYS; way++) {
            double best = 1e30;
            for (int run = 0; run < 10; run++) {
                double t = now();
#pragma omp parallel
                {
                    long per = (n / 8 + omp_get_num_threads() - 1) / omp_get_num_threads() * 8;
                    long lo = per * omp_get_thread_num(), hi = lo + per < n ? lo + per : n;
                    if (lo < hi) triad(way, a, b, c, s, lo, hi, on);
                }
                t = now() - t;
                best = t < best ? t : best;
            }
            bad += a[0] != 1 + s * 2 || a[n - 1] != 1 + s * 2;
            printf("%-18.1f", 12.0 * (double)n / best / 1e9);
            fflush(stdout);
        }
        printf("\n");
    }
    free(a), free(b), free(c);
    if (bad) printf("WRONG: a triad gave another value than b + s c\n");
    return bad != 0;
}
