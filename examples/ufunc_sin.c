/* ufunc_sin: the workshop's first table. y = sin(x) over N floats, N = 1e6 ... 1e9: a sinf loop
 * on one host core (what NumPy's np.sin does) against gp_map GP_MAP_SIN on the device, timed
 * with and without the copies there and back. The device's values are checked within the
 * OpenCL 1.2 bound for sin (4 ulp; CUDA's sinf is within 2) of sin computed in double. */
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static const char usage[] =
    "usage: ufunc_sin [--device SPEC | --all] [--min-n N] [--max-n N] [--reps R]\n"
    "  --min-n N, --max-n N  N = min, 10 min, ... up to max (default 1e6 to 1e9), as far as device\n"
    "                        and host memory allow\n"
    "  --reps R              timed device runs per size, after one untimed (default 5)\n";

#define ULP_BOUND 4.0

typedef struct options {
    double min_n, max_n;
    size_t reps;
} options;

/* The largest |y - sin x| over all elements, in units of the float spacing at sin x. */
static double max_ulp(size_t n, const float *x, const float *y)
{
    double worst = 0;
#ifdef _OPENMP
#pragma omp parallel for reduction(max : worst)
#endif
    for (long i = 0; i < (long)n; i++) {
        double exact = sin((double)x[i]);
        int e;
        frexp(exact, &e);
        double ulp = ldexp(1, (e < -125 ? -125 : e) - 24), err = fabs(y[i] - exact) / ulp;
        worst = err > worst ? err : worst;
    }
    return worst;
}

static int table(gp_device *dev, void *ctx)
{
    const options *o = ctx;
    gp_device_info info;
    CHECK(gp_device_get_info(dev, &info));
    double host_bytes = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGE_SIZE);
    int failed = 0;
    printf("%12s %10s %10s %12s %9s %9s %8s  %s\n", "N", "host ms", "device ms", "+copies ms", "speedup", "+copies",
           "max ulp", "check");
    for (double nd = o->min_n; nd <= o->max_n; nd *= 10) {
        size_t n = (size_t)nd, bytes = n * sizeof(float);
        if (2.0 * bytes > info.global_mem_bytes * 0.9 || 3.0 * bytes > host_bytes / 2) {
            printf("%12zu  does not fit in %s memory\n", n, 2.0 * bytes > info.global_mem_bytes * 0.9 ? "device" : "host");
            break;
        }
        float *x = malloc(bytes), *host_y = malloc(bytes), *y = malloc(bytes);
        if (!x || !host_y || !y)
            return 1;
        for (size_t i = 0; i < n; i++)
            x[i] = (float)(-10 + 20 * (double)(i % 1000003) / 1000003);

        double t0 = ex_host_ms();
        for (size_t i = 0; i < n; i++)
            host_y[i] = sinf(x[i]);
        double host_ms = ex_host_ms() - t0, kernel_ms, copies_ms;

        gp_buffer *dx, *dy;
        ex_timer timer;
        CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &dx));
        CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &dy));
        CHECK(gp_buffer_write(NULL, dx, 0, x, bytes));
        /* Untimed: the first run compiles the kernel (or loads it from the cache). */
        CHECK(gp_map(NULL, GP_MAP_SIN, GP_F32, n, GP_VIEW(dy), GP_VIEW(dx), GP_VIEW(NULL), NULL));
        CHECK(ex_timer_start(&timer, dev, NULL));
        for (size_t r = 0; r < o->reps; r++)
            CHECK(gp_map(NULL, GP_MAP_SIN, GP_F32, n, GP_VIEW(dy), GP_VIEW(dx), GP_VIEW(NULL), NULL));
        CHECK(ex_timer_stop(&timer, &kernel_ms));
        kernel_ms /= (double)o->reps;

        CHECK(ex_timer_start(&timer, dev, NULL));
        CHECK(gp_buffer_write(NULL, dx, 0, x, bytes));
        CHECK(gp_map(NULL, GP_MAP_SIN, GP_F32, n, GP_VIEW(dy), GP_VIEW(dx), GP_VIEW(NULL), NULL));
        CHECK(gp_buffer_read(NULL, dy, 0, y, bytes));
        CHECK(ex_timer_stop(&timer, &copies_ms));
        gp_buffer_destroy(dx);
        gp_buffer_destroy(dy);

        double ulps = max_ulp(n, x, y);
        printf("%12zu %10.2f %10.3f %12.3f %8.1fx %8.1fx %8.2f  %s (host sinf: %.2f ulp)\n", n, host_ms, kernel_ms,
               copies_ms, host_ms / kernel_ms, host_ms / copies_ms, ulps, ulps <= ULP_BOUND ? "correct" : "WRONG",
               max_ulp(n, x, host_y));
        fflush(stdout);
        failed |= !(ulps <= ULP_BOUND);
        free(x);
        free(host_y);
        free(y);
    }
    return failed;
}

int main(int argc, char **argv)
{
    ex_parse(argc, argv, usage);
    options o = {ex_number(argc, argv, "--min-n", 1e6), ex_number(argc, argv, "--max-n", 1e9),
                 (size_t)ex_number(argc, argv, "--reps", 5)};
    if (o.min_n < 1 || o.reps < 1) {
        fprintf(stderr, "ufunc_sin: N and R must be at least 1\n%s", usage);
        return 2;
    }
    return ex_run(argc, argv, table, &o);
}
