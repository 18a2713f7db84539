/* stream: BabelStream's benchmark (copy, mul, add, triad and dot over three arrays) written with
 * gpuport as a user would: the four element-wise kernels in the dialect (stream.gp), the dot
 * product a reduction of two inputs in one pass (gp_reduce_kernel). Bandwidth as BabelStream
 * counts it (copy and mul 2N, add and triad 3N, dot 2N elements), from device events, best and
 * median of --reps runs after one untimed; the arrays are checked at the end against the same
 * steps on the host, as BabelStream checks its own. Run BabelStream's OpenCL, CUDA or OpenMP
 * model on the same device with the same size to compare (docs/course.md). */
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern const char stream_source[]; /* stream.gp, embedded by the build */

static const char usage[] =
    "usage: stream [--device SPEC | --all] [--n N] [--reps R] [--f64] [--guarded]\n"
    "  --n N     elements per array (default 2^25, BabelStream's default)\n"
    "  --reps R  timed runs of each kernel, after one untimed (default 100, BabelStream's default)\n"
    "  --f64     double precision (default float, BabelStream's --float)\n"
    "  --guarded the kernels as they come from CUDA, `if (i < n)`, instead of GP_FOR\n";

typedef struct options {
    unsigned n, reps;
    int f64, guarded;
} options;

enum { COPY, MUL, ADD, TRIAD, DOT, KERNELS };
static const char *const names[KERNELS] = {"Copy", "Mul", "Add", "Triad", "Dot"};
static const double arrays_moved[KERNELS] = {2, 2, 3, 3, 2};
#define START_A 0.1
#define START_B 0.2
#define START_C 0.0
#define SCALAR 0.4

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The host's replay of the runs (BabelStream's check): every array within a relative 100
 * epsilon of it, as BabelStream asks; the dot within 1e4 epsilon (BabelStream allows 1e7: a
 * float sum of 2^25 products in any order may stray far, but gpuport's tree of partial sums
 * stays well inside this). */
static int check(const options *o, gp_buffer *const bufs[3], double dot, size_t es)
{
    double a = START_A, b = START_B, c = START_C;
    for (unsigned r = 0; r <= o->reps; r++) {
        c = a;
        b = SCALAR * c;
        c = a + b;
        a = b + SCALAR * c;
    }
    double want[3] = {a, b, c}, eps = 100 * (o->f64 ? 2.220446049250313e-16 : 1.1920929e-7), worst = 0;
    void *host = malloc((size_t)o->n * es);
    if (!host) return 1;
    for (int v = 0; v < 3; v++) {
        if (gp_buffer_read(NULL, bufs[v], 0, host, (size_t)o->n * es) != GP_SUCCESS) {
            free(host);
            return 1;
        }
        for (unsigned i = 0; i < o->n; i++) {
            double got = o->f64 ? ((double *)host)[i] : ((float *)host)[i];
            double err = fabs(got - want[v]) / fabs(want[v]);
            worst = err > worst ? err : worst;
        }
    }
    free(host);
    double dot_err = fabs(dot - a * b * o->n) / fabs(a * b * o->n);
    int ok = worst <= eps && dot_err <= eps * 100;
    printf("check: arrays within %.2g of the host's replay (bound %.2g), dot within %.2g (bound %.2g): %s\n", worst,
           eps, dot_err, eps * 100, ok ? "correct" : "WRONG");
    return !ok;
}

static int run(gp_device *dev, void *ctx)
{
    const options *o = ctx;
    gp_device_info info;
    CHECK(gp_device_get_info(dev, &info));
    if (o->f64 && !info.fp64) {
        printf("skipped: %s has no double precision\n", info.name);
        return 0;
    }
    size_t es = o->f64 ? 8 : 4, bytes = (size_t)o->n * es;
    gp_type t = o->f64 ? GP_F64 : GP_F32;
    gp_buffer *bufs[3];
    const double start[3] = {START_A, START_B, START_C};
    for (int v = 0; v < 3; v++) {
        CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &bufs[v]));
        float f = (float)start[v];
        CHECK(o->f64 ? gp_buffer_fill(NULL, bufs[v], 0, bytes, &start[v], 8) : gp_buffer_fill(NULL, bufs[v], 0, bytes, &f, 4));
    }
    gp_program *prog;
    char build[64];
    snprintf(build, sizeof build, "-DT=%s%s", o->f64 ? "double" : "float", o->guarded ? " -DGUARDED" : "");
    CHECK(gp_program_create(dev, stream_source, build, &prog));
    gp_kernel *k[4];
    static const char *const kernel_names[4] = {"stream_copy", "stream_mul", "stream_add", "stream_triad"};
    for (int i = 0; i < 4; i++) CHECK(gp_kernel_create(prog, kernel_names[i], &k[i]));
    const gp_type in2[2] = {t, t};
    gp_reduce_kernel *dot;
    CHECK(gp_reduce_kernel_create(dev, 2, in2, t, "x * y", "a + b", "0", &dot));

    double scalar64 = SCALAR;
    float scalar32 = (float)SCALAR;
    gp_arg scalar = o->f64 ? GP_VALUE(scalar64) : GP_VALUE(scalar32);
    unsigned n = o->n;
    gp_arg args[4][5] = {{GP_BUFFER(bufs[0]), GP_BUFFER(bufs[2]), GP_VALUE(n)},
                         {GP_BUFFER(bufs[1]), GP_BUFFER(bufs[2]), scalar, GP_VALUE(n)},
                         {GP_BUFFER(bufs[0]), GP_BUFFER(bufs[1]), GP_BUFFER(bufs[2]), GP_VALUE(n)},
                         {GP_BUFFER(bufs[0]), GP_BUFFER(bufs[1]), GP_BUFFER(bufs[2]), scalar, GP_VALUE(n)}};
    const size_t nargs[4] = {3, 4, 4, 5};
    gp_view dot_in[2] = {GP_VIEW(bufs[0]), GP_VIEW(bufs[1])};
    double *ms = malloc((size_t)KERNELS * (o->reps + 1) * sizeof *ms), dot_value = 0;
    if (!ms) return 1;
    size_t global = n;
    /* BabelStream's order: each run does copy, mul, add, triad, dot. */
    for (unsigned r = 0; r <= o->reps; r++) {
        for (int kk = 0; kk < KERNELS; kk++) {
            ex_timer timer;
            CHECK(ex_timer_start(&timer, dev, NULL));
            if (kk < DOT) {
                CHECK(gp_kernel_launch(NULL, k[kk], 1, &global, NULL, nargs[kk], args[kk]));
            } else if (o->f64) {
                CHECK(gp_reduce_kernel_run_to_host(NULL, dot, n, dot_in, &dot_value));
            } else {
                float d;
                CHECK(gp_reduce_kernel_run_to_host(NULL, dot, n, dot_in, &d));
                dot_value = d;
            }
            CHECK(ex_timer_stop(&timer, &ms[kk * (o->reps + 1) + r]));
        }
    }
    printf("%s, %u elements of %s per array (%.1f MB each), %u runs, kernels %s\n", info.name, n,
           o->f64 ? "double" : "float", (double)bytes / 1e6, o->reps, o->guarded ? "guarded (if (i < n))" : "GP_FOR");
    printf("%-8s %12s %12s %12s\n", "Function", "MB/s (best)", "min ms", "median ms");
    for (int kk = 0; kk < KERNELS; kk++) {
        double *m = &ms[kk * (o->reps + 1) + 1]; /* the first run dropped */
        qsort(m, o->reps, sizeof *m, compare);
        printf("%-8s %12.1f %12.5f %12.5f\n", names[kk], arrays_moved[kk] * (double)bytes / (m[0] * 1e3), m[0],
               m[o->reps / 2]);
    }
    free(ms);
    int failed = check(o, bufs, dot_value, es);
    for (int i = 0; i < 4; i++) gp_kernel_destroy(k[i]);
    gp_reduce_kernel_destroy(dot);
    gp_program_destroy(prog);
    for (int v = 0; v < 3; v++) gp_buffer_destroy(bufs[v]);
    return failed;
}

int main(int argc, char **argv)
{
    ex_parse(argc, argv, usage);
    options o = {(unsigned)ex_number(argc, argv, "--n", 1 << 25), (unsigned)ex_number(argc, argv, "--reps", 100),
                 ex_flag(argc, argv, "--f64"), ex_flag(argc, argv, "--guarded")};
    if (o.n < 1 || o.reps < 2) {
        fprintf(stderr, "stream: N must be at least 1 and R at least 2\n%s", usage);
        return 2;
    }
    return ex_run(argc, argv, run, &o);
}
