/* heat_diffusion: the 2D Jacobi solver of the classic Python GPU workshop (heat.h states the
 * problem), built from gpuport's primitives alone (a stencil for the step, a reduction of two
 * inputs for the norm). The norm costs a reduction and a wait, so it is taken every K steps
 * (--check-every), not every step. A plain C solver takes it at the same steps: the step counts
 * and the fields must agree. heat_diffusion_mpi solves the same over MPI ranks. */
#include "common.h"
#include "heat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: heat_diffusion [--device SPEC | --all] [--n N] [--f32] [--check-every K] [--max-steps S]\n"
    "                      [--out FILE] [--sizes [--steps S] [--max-n N]]\n"
    "  --n N            a grid of N x N cells (default 256)\n"
    "  --f32            single precision (default: double)\n"
    "  --check-every K  take the norm of u' - u every K steps (default 100)\n"
    "  --max-steps S    stop after S steps when not converged (default 100000)\n"
    "  --out FILE       write the final field as a PGM heat map (default heat.pgm)\n"
    "  --sizes          time per step for N = 256, 512, ... up to --max-n (default 8192), --steps\n"
    "                   steps each (default 100)\n";

typedef struct options {
    size_t n, every, max_steps, steps, max_n;
    int f32;
    const char *out;
} options;

/* Two grids to ping-pong between and the source, on one device. */
typedef struct grid {
    gp_type type;
    size_t n;
    gp_buffer *a, *b, *f;
    gp_stencil stencil;
} grid;

static void grid_destroy(grid *g)
{
    gp_buffer_destroy(g->a);
    gp_buffer_destroy(g->b);
    gp_buffer_destroy(g->f);
}

static int grid_create(gp_device *dev, gp_type type, size_t n, grid *g)
{
    size_t es = gp_type_size(type), bytes = n * n * es, centre = n / 2 * n + n / 2;
    float f32 = (float)HEAT_SOURCE;
    double f64 = HEAT_SOURCE, zero = 0;
    *g = (grid){type, n, NULL, NULL, NULL, heat_stencil(type, n)};
    if (gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &g->a) != GP_SUCCESS ||
        gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &g->b) != GP_SUCCESS ||
        gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &g->f) != GP_SUCCESS ||
        gp_buffer_fill(NULL, g->a, 0, bytes, &zero, es) != GP_SUCCESS ||
        gp_buffer_fill(NULL, g->b, 0, bytes, &zero, es) != GP_SUCCESS ||
        gp_buffer_fill(NULL, g->f, 0, bytes, &zero, es) != GP_SUCCESS ||
        gp_buffer_write(NULL, g->f, centre * es, type == GP_F32 ? (void *)&f32 : (void *)&f64, es) != GP_SUCCESS ||
        /* One step, undone, so that the stencil is compiled before anything is timed. */
        gp_stencil_run(NULL, &g->stencil, 1, GP_VIEW(g->a), GP_VIEW(g->b), GP_VIEW(g->f), NULL) != GP_SUCCESS ||
        gp_buffer_fill(NULL, g->b, 0, bytes, &zero, es) != GP_SUCCESS) {
        fprintf(stderr, "setting up a %zu x %zu grid: %s\n", n, n, gp_last_error());
        grid_destroy(g);
        return 1;
    }
    return 0;
}

/* The field in view as doubles; NULL (and a message) when it cannot be read. */
static double *read_field(const grid *g, gp_view view)
{
    size_t cells = g->n * g->n, es = gp_type_size(g->type);
    double *u = malloc(cells * sizeof *u);
    void *raw = malloc(cells * es);
    if (u && raw && gp_buffer_read(NULL, view.buffer, 0, raw, cells * es) == GP_SUCCESS) {
        for (size_t i = 0; i < cells; i++)
            u[i] = g->type == GP_F32 ? ((float *)raw)[i] : ((double *)raw)[i];
        free(raw);
        return u;
    }
    fprintf(stderr, "reading the field: %s\n", u && raw ? gp_last_error() : "out of host memory");
    free(u);
    free(raw);
    return NULL;
}

/* 0, after saying so, when the run wants doubles and the device has none. */
static int fp64_ok(gp_device *dev, int f32)
{
    gp_device_info info;
    if (f32 || gp_device_get_info(dev, &info) != GP_SUCCESS || info.fp64)
        return 1;
    printf("skipped: this device has no fp64; --f32 runs in single precision\n");
    return 0;
}

/* Runs to convergence, then checks the steps and the field against host_solve. */
static int solve(gp_device *dev, void *ctx)
{
    const options *o = ctx;
    if (!fp64_ok(dev, o->f32))
        return 0;
    size_t n = o->n, cells = n * n;
    grid g;
    gp_reduce_kernel *sum_sq; /* the squared norm of u' - u, in one pass over both */
    if (grid_create(dev, o->f32 ? GP_F32 : GP_F64, n, &g))
        return 1;
    gp_type two[2] = {g.type, g.type};
    CHECK(gp_reduce_kernel_create(dev, 2, two, g.type, "(x - y) * (x - y)", "a + b", "0", &sum_sq));

    /* After k >= 1 steps the result is in one grid and the step before it in the other, so
     * u' - u needs no copy. */
    gp_view u = GP_VIEW(g.a), prev = GP_VIEW(g.b);
    size_t steps = 0;
    double norm = INFINITY, ms;
    union {
        float f32;
        double f64;
    } sum;
    gp_view both[2] = {u, prev};
    /* Compiled before the timing starts. */
    CHECK(gp_reduce_kernel_run_to_host(NULL, sum_sq, cells, both, &sum));
    ex_timer timer;
    CHECK(ex_timer_start(&timer, dev, NULL));
    while (steps < o->max_steps && !(norm < HEAT_TOLERANCE)) {
        size_t k = o->max_steps - steps < o->every ? o->max_steps - steps : o->every;
        gp_view result;
        CHECK(gp_stencil_run(NULL, &g.stencil, k, u, prev, GP_VIEW(g.f), &result));
        if (result.buffer != u.buffer) {
            prev = u;
            u = result;
        }
        steps += k;
        both[0] = u;
        both[1] = prev;
        CHECK(gp_reduce_kernel_run_to_host(NULL, sum_sq, cells, both, &sum));
        norm = sqrt(o->f32 ? sum.f32 : sum.f64);
    }
    CHECK(ex_timer_stop(&timer, &ms));
    double *field = read_field(&g, u);
    gp_reduce_kernel_destroy(sum_sq);
    grid_destroy(&g);
    if (!field)
        return 1;
    int failed = heat_report(n, o->f32, o->every, steps, norm, field, o->out);
    printf("device: %.1f ms, %.4f ms per step (norms included)\n", ms, ms / (double)steps);
    free(field);
    return failed;
}

/* Time per step on growing grids, with no norm: the stencil's own speed. */
static int sizes(gp_device *dev, void *ctx)
{
    const options *o = ctx;
    gp_device_info info;
    CHECK(gp_device_get_info(dev, &info));
    if (!fp64_ok(dev, o->f32))
        return 0;
    gp_type type = o->f32 ? GP_F32 : GP_F64;
    size_t es = gp_type_size(type);
    int failed = 0;
    printf("%6s %12s %10s  %s (%zu steps of %s each)\n", "N", "ms per step", "GB/s", "check", o->steps,
           o->f32 ? "f32" : "f64");
    for (size_t n = 256; n <= o->max_n; n *= 2) {
        if (3 * n * n * es > info.global_mem_bytes / 10 * 9) {
            printf("%6zu  does not fit in the device's memory\n", n);
            break;
        }
        grid g;
        gp_view result;
        double ms, bound;
        ex_timer timer;
        if (grid_create(dev, type, n, &g))
            return 1;
        CHECK(ex_timer_start(&timer, dev, NULL));
        CHECK(gp_stencil_run(NULL, &g.stencil, o->steps, GP_VIEW(g.a), GP_VIEW(g.b), GP_VIEW(g.f), &result));
        CHECK(ex_timer_stop(&timer, &ms));
        double *field = read_field(&g, result), norms[2];
        grid_destroy(&g);
        double *host = field ? heat_host_solve(n, o->f32, o->steps, o->steps, norms) : NULL;
        if (!host) {
            free(field);
            return 1;
        }
        double err = heat_field_error(n, field, host, o->f32, o->steps, &bound);
        double per_step = ms / (double)o->steps;
        /* A 2D stencil moves 2 grids per step: one read, one written. */
        printf("%6zu %12.4f %10.1f  %s\n", n, per_step, 2.0 * n * n * es / (per_step * 1e6),
               err <= bound ? "correct" : "WRONG");
        failed |= err > bound;
        free(field);
        free(host);
    }
    return failed;
}

int main(int argc, char **argv)
{
    ex_parse(argc, argv, usage);
    options o = {(size_t)ex_number(argc, argv, "--n", 256), (size_t)ex_number(argc, argv, "--check-every", 100),
                 (size_t)ex_number(argc, argv, "--max-steps", 100000), (size_t)ex_number(argc, argv, "--steps", 100),
                 (size_t)ex_number(argc, argv, "--max-n", 8192), ex_flag(argc, argv, "--f32"),
                 ex_string(argc, argv, "--out", "heat.pgm")};
    if (o.n < 3 || o.every < 1 || o.steps < 1) {
        fprintf(stderr, "heat_diffusion: N must be at least 3, K and S at least 1\n%s", usage);
        return 2;
    }
    return ex_run(argc, argv, ex_flag(argc, argv, "--sizes") ? sizes : solve, &o);
}
