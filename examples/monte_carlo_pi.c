/* monte_carlo_pi: pi from the share of random points of the unit square that fall inside the
 * quarter circle, with a counter-based random generator written in the kernel dialect
 * (examples/monte_carlo_pi.gp). The count of a small run must equal the host's count of the
 * same points exactly; the large run's pi must lie within 6 standard deviations of pi. */
#include "common.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

extern const char monte_carlo_pi_source[]; /* monte_carlo_pi.gp, embedded by the build */

#define PI 3.14159265358979323846

static const char usage[] =
    "usage: monte_carlo_pi [--device SPEC | --all] [--n N] [--check-n N] [--seed S]\n"
    "  --n N        points of the timed run (default 1e9, below 2^32)\n"
    "  --check-n N  points counted on the host too, exactly (default 1e6)\n"
    "  --seed S     the generator's seed (default 1)\n";

typedef struct options {
    unsigned n, check_n;
    uint64_t seed;
} options;

static uint64_t splitmix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* The kernel's count, in plain C. */
static unsigned host_count(uint64_t seed, unsigned n)
{
    unsigned inside = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = splitmix64(seed + (i + 1) * 0x9E3779B97F4A7C15u), x = r >> 33, y = r & 0x7FFFFFFFu;
        inside += x * x + y * y < (UINT64_C(1) << 62);
    }
    return inside;
}

/* Counts n points on the device: a few groups of (at most) 256 per compute unit, each
 * work-item taking many points. */
static int count(gp_device *dev, gp_kernel *kernel, gp_buffer *counter, uint64_t seed, unsigned n, unsigned *inside,
                 double *ms)
{
    gp_device_info info;
    CHECK(gp_device_get_info(dev, &info));
    size_t local = 256, groups = 16 * (size_t)info.compute_units;
    while (local > info.max_work_group_size)
        local /= 2;
    if (groups > (n + local - 1) / local)
        groups = (n + local - 1) / local;
    size_t global = groups * local;
    gp_arg args[] = {GP_VALUE(seed), GP_VALUE(n), GP_BUFFER(counter)};
    ex_timer timer;
    *inside = 0;
    CHECK(gp_buffer_write(NULL, counter, 0, inside, sizeof *inside));
    CHECK(ex_timer_start(&timer, dev, NULL));
    CHECK(gp_kernel_launch(NULL, kernel, 1, &global, &local, 3, args));
    CHECK(ex_timer_stop(&timer, ms));
    CHECK(gp_buffer_read(NULL, counter, 0, inside, sizeof *inside));
    return 0;
}

static int run(gp_device *dev, void *ctx)
{
    const options *o = ctx;
    gp_buffer *counter;
    gp_program *prog;
    gp_kernel *kernel;
    unsigned small, large;
    double ms;
    CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof(unsigned), &counter));
    CHECK(gp_program_create(dev, monte_carlo_pi_source, NULL, &prog));
    CHECK(gp_kernel_create(prog, "count_inside", &kernel));
    if (count(dev, kernel, counter, o->seed, o->check_n, &small, &ms) || count(dev, kernel, counter, o->seed, o->n, &large, &ms))
        return 1;
    gp_kernel_destroy(kernel);
    gp_program_destroy(prog);
    gp_buffer_destroy(counter);

    unsigned expected = host_count(o->seed, o->check_n);
    double p = (double)large / o->n, pi = 4 * p, sigma = 4 * sqrt(p * (1 - p) / o->n);
    int ok = small == expected && fabs(pi - PI) <= 6 * sigma;
    printf("%u points: %u inside, the host counts %u: %s\n", o->check_n, small, expected,
           small == expected ? "the same" : "DIFFERENT");
    printf("%u points: pi = %.9f, error %+.2e (%.1f standard deviations), %.2f ms, %.3f Gpoints/s: %s\n", o->n, pi,
           pi - PI, fabs(pi - PI) / sigma, ms, o->n / (ms * 1e6), ok ? "correct" : "WRONG");
    return !ok;
}

int main(int argc, char **argv)
{
    ex_parse(argc, argv, usage);
    double n = ex_number(argc, argv, "--n", 1e9), check_n = ex_number(argc, argv, "--check-n", 1e6);
    options o = {(unsigned)n, (unsigned)check_n, (uint64_t)ex_number(argc, argv, "--seed", 1)};
    /* The count is a 32-bit atomic, and OpenCL 1.2 has no other. */
    if (n < 1 || n >= 0x1p32 || check_n < 1 || check_n >= 0x1p32) {
        fprintf(stderr, "monte_carlo_pi: N must be from 1 to 2^32 - 1\n%s", usage);
        return 2;
    }
    return ex_run(argc, argv, run, &o);
}
