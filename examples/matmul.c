/* matmul: the workshop's timing table for C = A B, f32, N x N: plain C on the host, gpuport's
 * tiled kernel and the vendor's library (cuBLAS, CLBlast, rocBLAS) on each device. Every result
 * is checked against double-precision dot products (a sample of elements for large N). */
#include "common.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static const char usage[] =
    "usage: matmul [--device SPEC | --all] [--min-n N] [--max-n N] [--reps R] [--no-host]\n"
    "  --min-n N, --max-n N  N = min, 2 min, 4 min, ... up to max (default 512 to 8192)\n"
    "  --reps R              timed runs per size, after one untimed (default 3)\n"
    "  --no-host             no plain C rows\n"
    "A row stops growing once one multiply takes over a second (the next would take ~8 s), so\n"
    "plain C on the host stops at N = 1024 to 4096, depending on its cores.\n";

#define SLOW_MS 1000.0

typedef struct options {
    size_t min_n, max_n, reps;
} options;

/* Values in [-1, 1) from a linear congruential generator: the same matrices on every run. */
static float *random_matrix(size_t n, uint64_t seed)
{
    float *m = malloc(n * n * sizeof *m);
    for (size_t i = 0; m && i < n * n; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        m[i] = (float)((int32_t)(seed >> 32) * 0x1p-31);
    }
    return m;
}

/* C = A B in the i-k-j order, whose inner loop runs along rows of B and C. */
static void host_gemm(size_t n, const float *a, const float *b, float *c)
{
#ifdef _OPENMP
#pragma omp parallel for
#endif
    for (long i = 0; i < (long)n; i++) {
        float *ci = c + i * n;
        memset(ci, 0, n * sizeof *ci);
        for (size_t k = 0; k < n; k++)
            for (size_t j = 0; j < n; j++)
                ci[j] += a[i * n + k] * b[k * n + j];
    }
}

/* Up to 4096 elements, spread over C, each within what rounding allows of the dot product in
 * double: a float sum of n products, in any order and fused or not, is within gamma_n times the
 * sum of |a_ik b_kj| (gamma_n = n u / (1 - n u), u = 2^-24). */
static int correct(size_t n, const float *a, const float *b, const float *c)
{
    double gamma = n * 0x1p-24 / (1 - n * 0x1p-24);
    size_t samples = n * n < 4096 ? n * n : 4096;
    for (size_t s = 0; s < samples; s++) {
        size_t e = samples == n * n ? s : s * 1000003 % (n * n), i = e / n, j = e % n;
        double dot = 0, abs = 0;
        for (size_t k = 0; k < n; k++) {
            dot += (double)a[i * n + k] * b[k * n + j];
            abs += fabs((double)a[i * n + k] * b[k * n + j]);
        }
        if (fabs(c[e] - dot) > gamma * abs)
            return 0;
    }
    return 1;
}

static void row(const char *impl, size_t n, double ms, int ok)
{
    printf("%-28s %6zu %12.2f %10.4f  %s\n", impl, n, ms, 2.0 * n * n * n / (ms * 1e9), ok ? "correct" : "WRONG");
    fflush(stdout);
}

static void header(void)
{
    printf("%-28s %6s %12s %10s  %s\n", "implementation", "N", "ms", "TFLOP/s", "check");
}

static int host_table(const options *o)
{
    char impl[64];
#ifdef _OPENMP
    snprintf(impl, sizeof impl, "host C, OpenMP, %d threads", omp_get_max_threads());
#else
    snprintf(impl, sizeof impl, "host C, 1 thread");
#endif
    printf("== host\n");
    header();
    int failed = 0;
    for (size_t n = o->min_n; n <= o->max_n; n *= 2) {
        float *a = random_matrix(n, 1), *b = random_matrix(n, 2), *c = malloc(n * n * sizeof *c);
        if (!a || !b || !c) {
            printf("%-28s %6zu  not enough host memory\n", impl, n);
            free(a), free(b), free(c);
            break;
        }
        double t0 = ex_host_ms();
        host_gemm(n, a, b, c);
        double ms = ex_host_ms() - t0;
        int ok = correct(n, a, b, c);
        row(impl, n, ms, ok);
        failed |= !ok;
        free(a), free(b), free(c);
        if (ms > SLOW_MS)
            break;
    }
    return failed;
}

static int device_table(gp_device *dev, void *ctx)
{
    const options *o = ctx;
    gp_device_info info;
    char vendor[256];
    CHECK(gp_device_get_info(dev, &info));
    int have_vendor = gp_gemm_vendor_info(dev, vendor, sizeof vendor) == GP_SUCCESS;
    if (!have_vendor)
        printf("vendor library unavailable: %s\n", vendor);
    header();
    int failed = 0, growing[2] = {1, have_vendor};
    for (size_t n = o->min_n; n <= o->max_n && (growing[0] || growing[1]); n *= 2) {
        size_t bytes = n * n * sizeof(float);
        if (3 * bytes > info.global_mem_bytes / 10 * 9) {
            printf("%-28s %6zu  does not fit in the device's memory\n", "", n);
            break;
        }
        float *a = random_matrix(n, 1), *b = random_matrix(n, 2), *c = malloc(bytes);
        gp_buffer *da, *db, *dc;
        if (!a || !b || !c)
            return 1;
        CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &da));
        CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &db));
        CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &dc));
        CHECK(gp_buffer_write(NULL, da, 0, a, bytes));
        CHECK(gp_buffer_write(NULL, db, 0, b, bytes));
        for (int v = 0; v < 2; v++) {
            if (!growing[v])
                continue;
            gp_gemm_impl impl = v ? GP_GEMM_VENDOR : GP_GEMM_GPUPORT;
            double ms;
            ex_timer timer = {0};
            /* The first run compiles (or loads) the kernel; only the later ones are timed. */
            for (size_t r = 0; r <= o->reps; r++) {
                if (r == 1)
                    CHECK(ex_timer_start(&timer, dev, NULL));
                CHECK(gp_gemm(NULL, impl, GP_F32, GP_ROW_MAJOR, GP_NO_TRANS, GP_NO_TRANS, n, n, n, 1.0, GP_VIEW(da), n,
                              GP_VIEW(db), n, 0.0, GP_VIEW(dc), n));
            }
            CHECK(ex_timer_stop(&timer, &ms));
            CHECK(gp_buffer_read(NULL, dc, 0, c, bytes));
            int ok = correct(n, a, b, c);
            row(v ? vendor : "gpuport", n, ms / (double)o->reps, ok);
            failed |= !ok;
            growing[v] = ms / (double)o->reps <= SLOW_MS;
        }
        gp_buffer_destroy(da), gp_buffer_destroy(db), gp_buffer_destroy(dc);
        free(a), free(b), free(c);
    }
    return failed;
}

int main(int argc, char **argv)
{
    ex_parse(argc, argv, usage);
    options o = {(size_t)ex_number(argc, argv, "--min-n", 512), (size_t)ex_number(argc, argv, "--max-n", 8192),
                 (size_t)ex_number(argc, argv, "--reps", 3)};
    if (o.min_n < 1 || o.reps < 1) {
        fprintf(stderr, "matmul: N and R must be at least 1\n%s", usage);
        return 2;
    }
    int host_failed = ex_flag(argc, argv, "--no-host") ? 0 : host_table(&o);
    int status = ex_run(argc, argv, device_table, &o);
    return host_failed ? 1 : status;
}
