/* atomic_max: the largest element of an int array, by one global atomic per element against a
 * reduction in local memory with one atomic per work-group (examples/atomic_max.gp), timed side
 * by side and checked against a loop on the host. */
#include "common.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

extern const char atomic_max_source[]; /* atomic_max.gp, embedded by the build */

static const char usage[] =
    "usage: atomic_max [--device SPEC | --all] [--n N] [--reps R]\n"
    "  --n N     elements (default 1e7, below 2^31)\n"
    "  --reps R  timed runs of each kernel, after one untimed (default 10)\n";

typedef struct options {
    unsigned n;
    size_t reps;
    const int *x;
    int expected;
} options;

/* Runs kernel on global work-items in groups of local, reps + 1 times, and checks *result. */
static int time_kernel(gp_device *dev, gp_kernel *kernel, const options *o, gp_buffer *x, gp_buffer *result,
                       size_t global, size_t local, double *ms)
{
    int lowest = INT_MIN, got;
    unsigned n = o->n;
    gp_arg args[] = {GP_BUFFER(x), GP_BUFFER(result), GP_VALUE(n)};
    ex_timer timer;
    CHECK(gp_buffer_write(NULL, result, 0, &lowest, sizeof lowest));
    CHECK(gp_kernel_launch(NULL, kernel, 1, &global, &local, 3, args)); /* compiles on some backends */
    CHECK(ex_timer_start(&timer, dev, NULL));
    for (size_t r = 0; r < o->reps; r++)
        CHECK(gp_kernel_launch(NULL, kernel, 1, &global, &local, 3, args));
    CHECK(ex_timer_stop(&timer, ms));
    *ms /= (double)o->reps;
    CHECK(gp_buffer_read(NULL, result, 0, &got, sizeof got));
    return got != o->expected;
}

static int run(gp_device *dev, void *ctx)
{
    const options *o = ctx;
    gp_device_info info;
    gp_buffer *x, *result;
    gp_program *prog;
    gp_kernel *per_element, *per_group;
    CHECK(gp_device_get_info(dev, &info));
    CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, o->n * sizeof(int), &x));
    CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, sizeof(int), &result));
    CHECK(gp_buffer_write(NULL, x, 0, o->x, o->n * sizeof(int)));
    CHECK(gp_program_create(dev, atomic_max_source, NULL, &prog));
    CHECK(gp_kernel_create(prog, "max_per_element", &per_element));
    CHECK(gp_kernel_create(prog, "max_per_group", &per_group));

    /* The kernel's local array holds 256; enough groups to fill the device, a few per unit. */
    size_t local = 256, groups = 8 * (size_t)info.compute_units;
    while (local > info.max_work_group_size)
        local /= 2;
    if (groups > (o->n + local - 1) / local)
        groups = (o->n + local - 1) / local;
    double ms_element, ms_group;
    int wrong = time_kernel(dev, per_element, o, x, result, o->n, local, &ms_element);
    wrong |= time_kernel(dev, per_group, o, x, result, groups * local, local, &ms_group) << 1;
    printf("max of %u ints = %d\n", o->n, o->expected);
    printf("  one atomic per element:             %9.3f ms  %s\n", ms_element, wrong & 1 ? "WRONG" : "correct");
    printf("  one per group (%5zu groups of %3zu): %9.3f ms  %s, speedup %.1fx\n", groups, local, ms_group,
           wrong & 2 ? "WRONG" : "correct", ms_element / ms_group);

    gp_kernel_destroy(per_element);
    gp_kernel_destroy(per_group);
    gp_program_destroy(prog);
    gp_buffer_destroy(x);
    gp_buffer_destroy(result);
    return wrong != 0;
}

int main(int argc, char **argv)
{
    ex_parse(argc, argv, usage);
    double n = ex_number(argc, argv, "--n", 1e7);
    options o = {(unsigned)n, (size_t)ex_number(argc, argv, "--reps", 10), NULL, INT_MIN};
    if (n < 1 || n >= 0x1p31 || o.reps < 1) {
        fprintf(stderr, "atomic_max: N must be from 1 to 2^31 - 1 and R at least 1\n%s", usage);
        return 2;
    }
    int *x = malloc(o.n * sizeof *x);
    if (!x)
        return 1;
    uint64_t state = 42;
    for (unsigned i = 0; i < o.n; i++) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        x[i] = (int)(uint32_t)(state >> 32);
        o.expected = x[i] > o.expected ? x[i] : o.expected;
    }
    o.x = x;
    int status = ex_run(argc, argv, run, &o);
    free(x);
    return status;
}
