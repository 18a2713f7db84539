/* libgpuport-mpi under mpiexec -n 1, 2, 3, 4: every shape, boundary, type and decomposition
 * (2D and 3D, uneven splits) gives gp_stencil_run's grid on one device bit for bit; the
 * reductions match plain C over the gathered grid; bad input on one rank, or a failing device on
 * one rank, fails every rank with that rank's message (under a ctest timeout: never a hang).
 *
 * Every rank runs the same cmocka tests in the same order. A test decides on every rank
 * alike (each rank's verdict is combined first), so that no rank leaves a collective call that
 * the others are in.
 *
 *   mpiexec -n N gpuport-test-mpi [--faults | --nccl-faults]
 *     --faults: rank 1's device fails during a run; needs the fault plugin as the OpenCL plugin
 *     --nccl-faults: NCCL's calls fail on one rank; needs the fake NCCL (GPUPORT_NCCL_LIBRARY)
 * GPUPORT_TEST_TRANSPORT names the transport the grids must take. Whether MPI takes device
 * memory is asked of the MPI the test runs under, as libgpuport-mpi asks it. */
#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpuport_mpi.h"

static int rank, size;
static gp_device *dev;
static gp_device_info info;
static char why[1024]; /* this rank's first failed check in the current test */

/* Records this rank's first failure; the test ends on every rank at all_ok(). */
static void note(const char *fmt, ...)
{
    if (why[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
}

#define CHECK_OK(call)                                                                          \
    do {                                                                                       \
        gp_status s_ = (call);                                                                 \
        if (s_ != GP_SUCCESS) note("%s -> %s: %s", #call, gp_status_name(s_), gp_last_error()); \
    } while (0)

/* Fails the test on every rank when any rank noted a failure, naming the first such rank. */
static void all_ok(void)
{
    int mine = why[0] ? rank : size, first = size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == size) return;
    char text[sizeof why];
    memcpy(text, why, sizeof why);
    MPI_Bcast(text, (int)sizeof text, MPI_CHAR, first, MPI_COMM_WORLD);
    why[0] = '\0';
    fail_msg("rank %d of %d: %s", first, size, text);
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static double uniform(uint64_t *s) { return (double)(next(s) >> 11) / 9007199254740992.0 * 2 - 1; }

/* n random values of the type in [-1, 1]. */
static void *random_field(gp_type t, size_t n, uint64_t seed)
{
    void *p = malloc(n * gp_type_size(t) + 1);
    for (size_t i = 0; i < n; i++) {
        if (t == GP_F32) ((float *)p)[i] = (float)uniform(&seed);
        else ((double *)p)[i] = uniform(&seed);
    }
    return p;
}

static double value(gp_type t, const void *p, size_t i)
{
    return t == GP_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static const char *const shapes[] = {"?", "5point", "3x3", "7point"}, *const modes[] = {"fixed", "clamp", "zero"};

/* ---- The distributed run against one device ---------------------------------------------- */

/* Rank 0's grid after `steps` of gp_stencil_run on its own device, from u0 (and source). */
static void *one_device(const gp_stencil *s, size_t steps, const void *u0, const void *source)
{
    size_t bytes = s->nx * s->ny * s->nz * gp_type_size(s->type);
    gp_buffer *a = NULL, *b = NULL, *f = NULL;
    void *out = malloc(bytes + 1);
    gp_view result;
    CHECK_OK(gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &a));
    CHECK_OK(gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &b));
    CHECK_OK(gp_buffer_write(NULL, a, 0, u0, bytes));
    if (source) {
        CHECK_OK(gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &f));
        CHECK_OK(gp_buffer_write(NULL, f, 0, source, bytes));
    }
    CHECK_OK(gp_stencil_run(NULL, s, steps, GP_VIEW(a), GP_VIEW(b), GP_VIEW(f), &result));
    CHECK_OK(gp_buffer_read(NULL, result.buffer, 0, out, bytes));
    gp_buffer_destroy(a);
    gp_buffer_destroy(b);
    gp_buffer_destroy(f);
    return out;
}

/* Scatter, run, gather on every rank; rank 0 compares with one_device, bit for bit. */
static void check_grid(const gp_stencil *s, const int *dims, int with_source, size_t steps, uint64_t seed)
{
    size_t n = s->nx * s->ny * s->nz, bytes = n * gp_type_size(s->type);
    void *u0 = rank == 0 ? random_field(s->type, n, seed) : NULL;
    void *src = rank == 0 && with_source ? random_field(s->type, n, seed + 1) : NULL;
    void *got = rank == 0 ? malloc(bytes + 1) : NULL;
    gp_mpi_grid *g = NULL;
    CHECK_OK(gp_mpi_grid_create(MPI_COMM_WORLD, dev, s, dims, &g));
    if (g) {
        CHECK_OK(gp_mpi_grid_scatter(g, GP_MPI_U, 0, u0));
        if (with_source) CHECK_OK(gp_mpi_grid_scatter(g, GP_MPI_SOURCE, 0, src));
        CHECK_OK(gp_mpi_grid_run(g, steps));
        CHECK_OK(gp_mpi_grid_gather(g, GP_MPI_U, 0, got));
        gp_mpi_block b;
        CHECK_OK(gp_mpi_grid_get_block(g, &b));
        /* A layout left to the library puts the most ranks along the slowest dimension. */
        int three_d = s->shape == GP_STENCIL_7POINT;
        if (!dims && (b.dims[0] > b.dims[1] || (three_d ? b.dims[1] > b.dims[2] : b.dims[2] != 1) ||
                      (long)b.dims[0] * b.dims[1] * b.dims[2] != size))
            note("the chosen layout is %dx%dx%d for %d ranks, %s", b.dims[0], b.dims[1], b.dims[2], size,
                 shapes[s->shape]);
        /* Where the grid is split along one dimension only, halos are as deep as half the thinnest
         * block, up to 4, or GPUPORT_MPI_HALO_DEPTH where that is less (ctests mpi_np3 and
         * mpi_np2_nccl ask 1, mpi_np4_nccl 2); else one. */
        const size_t sides[3] = {s->nx, s->ny, s->nz};
        const char *asked = getenv("GPUPORT_MPI_HALO_DEPTH");
        size_t depth = asked && *asked && strcmp(asked, "auto") ? strtoul(asked, NULL, 10) : 4, split = 0;
        for (int d = 0; d < 3; d++)
            if (b.dims[d] > 1) {
                split++;
                size_t half = sides[d] / (size_t)b.dims[d] / 2;
                depth = depth < half ? depth : half;
            }
        depth = split != 1 || depth < 2 ? 1 : depth < 4 ? depth : 4;
        for (int d = 0; d < 3; d++)
            if (b.local[d] != b.extent[d] + depth * ((b.coords[d] > 0) + (b.coords[d] + 1 < b.dims[d])))
                note("%zux%zux%zu over %dx%dx%d ranks: the local array is %zu cells along %c for a block of %zu; halos "
                     "%zu deep expected",
                     s->nx, s->ny, s->nz, b.dims[0], b.dims[1], b.dims[2], b.local[d], "xyz"[d], b.extent[d], depth);
        if (rank == 0 && !why[0]) {
            void *want = one_device(s, steps, u0, src);
            for (size_t i = 0; i < n && !why[0]; i++)
                if (memcmp((char *)got + i * gp_type_size(s->type), (char *)want + i * gp_type_size(s->type),
                           gp_type_size(s->type)))
                    note("%s %s %s %zux%zux%zu over %dx%dx%d ranks%s, %zu steps: cell (%zu, %zu, %zu) = %.17g, one "
                         "device %.17g",
                         s->type == GP_F32 ? "f32" : "f64", shapes[s->shape], modes[s->boundary], s->nx, s->ny, s->nz,
                         b.dims[0], b.dims[1], b.dims[2], with_source ? " with a source" : "", steps, i % s->nx,
                         i / s->nx % s->ny, i / s->nx / s->ny, value(s->type, got, i), value(s->type, want, i));
            free(want);
        }
        CHECK_OK(gp_mpi_grid_destroy(g));
    }
    free(u0);
    free(src);
    free(got);
    all_ok();
}

static void random_weights(gp_stencil *s, uint64_t *seed)
{
    for (int i = 0; i < 9; i++) s->weights[i] = uniform(seed);
    s->source_weight = uniform(seed);
}

/* Decompositions: MPI's choice, and every rank along one dimension. */
static void every_case(int three_d, gp_type t)
{
    if (t == GP_F64 && !info.fp64) skip();
    static const size_t grids2[][3] = {{37, 29, 1}, {4, 5, 1}}, grids3[][3] = {{13, 11, 9}, {4, 5, 4}};
    const int along[4][3] = {{0, 0, 0}, {size, 1, 1}, {1, size, 1}, {1, 1, size}};
    uint64_t seed = 99 + (uint64_t)t;
    int first = three_d ? GP_STENCIL_7POINT : GP_STENCIL_5POINT, last = three_d ? GP_STENCIL_7POINT : GP_STENCIL_3X3;
    for (int g = 0; g < 2; g++)
        for (int shape = first; shape <= last; shape++)
            for (int mode = GP_BOUNDARY_FIXED; mode <= GP_BOUNDARY_ZERO; mode++)
                for (int d = 0; d < (three_d ? 4 : 3); d++) {
                    const size_t *side = three_d ? grids3[g] : grids2[g];
                    gp_stencil s = {(gp_stencil_shape)shape, t, (gp_boundary)mode, side[0], side[1], side[2], {0}, 0};
                    random_weights(&s, &seed);
                    if (d > 0 && side[d - 1] < (size_t)size) continue; /* fewer cells than ranks */
                    check_grid(&s, along[d], (mode + d) % 2, 3 + (size_t)d % 2, next(&seed));
                }
}

static void grid_2d_f32(void **state) { (void)state; every_case(0, GP_F32); }
static void grid_2d_f64(void **state) { (void)state; every_case(0, GP_F64); }
static void grid_3d_f32(void **state) { (void)state; every_case(1, GP_F32); }
static void grid_3d_f64(void **state) { (void)state; every_case(1, GP_F64); }

/* The Jacobi step of the heat example on a grid larger than a work-group, over many steps. */
static void grid_jacobi(void **state)
{
    (void)state;
    const double h = 1.0 / 300;
    gp_stencil s = {GP_STENCIL_5POINT, GP_F32, GP_BOUNDARY_FIXED, 300, 211, 1, {0, .25, .25, .25, .25}, h * h / 4};
    check_grid(&s, NULL, 1, 40, 5);
    gp_stencil cube = {GP_STENCIL_7POINT, GP_F32, GP_BOUNDARY_FIXED, 70, 45, 33, {0, 1. / 6, 1. / 6, 1. / 6, 1. / 6,
                                                                               1. / 6, 1. / 6}, 0};
    check_grid(&cube, NULL, 0, 12, 6);
    /* A cube at 4 ranks: slabs (1x1x4) move twice the halo of 1x2x2, which only faces that
     * travel in place (NCCL on GPUs) are worth. */
    cube.nx = cube.ny = cube.nz = 40;
    check_grid(&cube, NULL, 0, 3, 7);
    gp_mpi_grid *g = NULL;
    CHECK_OK(gp_mpi_grid_create(MPI_COMM_WORLD, dev, &cube, NULL, &g));
    if (g && size == 4) {
        gp_mpi_block b;
        gp_mpi_transport_info t;
        CHECK_OK(gp_mpi_grid_get_block(g, &b));
        CHECK_OK(gp_mpi_grid_get_transport(g, &t));
        int in_place = t.transport == GP_MPI_TRANSPORT_NCCL && info.type == GP_DEVICE_GPU;
        if (b.dims[0] != 1 || b.dims[1] != (in_place ? 1 : 2) || b.dims[2] != (in_place ? 4 : 2))
            note("a 40^3 cube on 4 ranks (transport %s) took %dx%dx%d", t.name, b.dims[0], b.dims[1], b.dims[2]);
    }
    gp_mpi_grid_destroy(g);
    all_ok();
}

/* ---- Reductions ----------------------------------------------------------------------------- */

static void reductions(void **state)
{
    (void)state;
    for (int t = GP_F32; t <= (info.fp64 ? GP_F64 : GP_F32); t++) {
        gp_stencil s = {GP_STENCIL_7POINT, (gp_type)t, GP_BOUNDARY_CLAMP, 23, 17, 11, {0}, 0};
        uint64_t seed = 7;
        random_weights(&s, &seed);
        size_t n = s.nx * s.ny * s.nz, es = gp_type_size(s.type);
        void *u0 = rank == 0 ? random_field(s.type, n, 8) : NULL;
        void *u1 = rank == 0 ? malloc(n * es) : NULL, *u2 = rank == 0 ? malloc(n * es) : NULL;
        gp_mpi_grid *g = NULL;
        double got[6] = {0};
        CHECK_OK(gp_mpi_grid_create(MPI_COMM_WORLD, dev, &s, NULL, &g));
        if (!g) {
            all_ok();
            continue;
        }
        CHECK_OK(gp_mpi_grid_scatter(g, GP_MPI_U, 0, u0));
        gp_status early = gp_mpi_grid_reduce(g, GP_MPI_UPDATE_NORM, &got[5]); /* no step yet */
        if (early != GP_ERROR_INVALID_ARGUMENT) note("GP_MPI_UPDATE_NORM before a step: %s", gp_status_name(early));
        CHECK_OK(gp_mpi_grid_run(g, 2));
        CHECK_OK(gp_mpi_grid_gather(g, GP_MPI_U, 0, u1));
        CHECK_OK(gp_mpi_grid_run(g, 1));
        CHECK_OK(gp_mpi_grid_gather(g, GP_MPI_U, 0, u2));
        for (int op = GP_MPI_SUM; op <= GP_MPI_UPDATE_NORM; op++) CHECK_OK(gp_mpi_grid_reduce(g, op, &got[op]));
        /* Every rank has the same results. */
        double first[5];
        memcpy(first, got, sizeof first);
        MPI_Bcast(first, 5, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (memcmp(first, got, sizeof first)) note("rank %d's reductions differ from rank 0's", rank);
        if (rank == 0 && !why[0]) {
            /* Plain C in double; the device sums n terms in the type, so within n u sum|x|. */
            double sum = 0, abs_sum = 0, lo = INFINITY, hi = -INFINITY, sq = 0, dsq = 0;
            for (size_t i = 0; i < n; i++) {
                double x = value(s.type, u2, i), d = x - value(s.type, u1, i);
                sum += x;
                abs_sum += fabs(x);
                lo = fmin(lo, x);
                hi = fmax(hi, x);
                sq += x * x;
                dsq += d * d;
            }
            double u = (t == GP_F32 ? 0x1p-24 : 0x1p-53) * (double)n * 2;
            double want[5] = {sum, lo, hi, sqrt(sq), sqrt(dsq)}, bound[5] = {u * abs_sum, 0, 0, u * sqrt(sq), u * sqrt(dsq)};
            for (int op = 0; op < 5; op++)
                if (!(fabs(got[op] - want[op]) <= bound[op]))
                    note("%s reduction %d: %.17g, plain C %.17g (bound %.3g)", t == GP_F32 ? "f32" : "f64", op, got[op],
                         want[op], bound[op]);
        }
        CHECK_OK(gp_mpi_grid_destroy(g));
        free(u0);
        free(u1);
        free(u2);
        all_ok();
    }
}

/* ---- Devices ------------------------------------------------------------------------------ */

static void devices(void **state)
{
    (void)state;
    gp_device *d = NULL;
    char *old = getenv("GPUPORT_DEVICE") ? strdup(getenv("GPUPORT_DEVICE")) : NULL;
    unsetenv("GPUPORT_DEVICE");
    CHECK_OK(gp_mpi_device_select(MPI_COMM_WORLD, &d));
    /* With no GPU here: round robin over the CPU devices by the rank on the node (one node). */
    gp_device *best = NULL;
    size_t count = 0, cpus = 0;
    CHECK_OK(gp_device_count(&count));
    gp_device *cpu[16];
    for (size_t i = 0; i < count && cpus < 16; i++) {
        gp_device *e;
        gp_device_info ei;
        CHECK_OK(gp_device_get(i, &e));
        CHECK_OK(gp_device_get_info(e, &ei));
        if (ei.type == GP_DEVICE_CPU) cpu[cpus++] = e;
    }
    if (gp_device_find("gpu", &best) != GP_SUCCESS && cpus && d != cpu[rank % (int)cpus])
        note("rank %d took another device than CPU device %d of %zu", rank, rank % (int)cpus, cpus);
    CHECK_OK(gp_mpi_device_report(MPI_COMM_WORLD, d, stdout));
    /* GPUPORT_DEVICE wins, and a wrong one fails every rank. */
    setenv("GPUPORT_DEVICE", "opencl:0", 1);
    CHECK_OK(gp_mpi_device_select(MPI_COMM_WORLD, &d));
    gp_device *want = NULL;
    CHECK_OK(gp_device_find("opencl:0", &want));
    if (d != want) note("GPUPORT_DEVICE=opencl:0 was not taken");
    if (rank == size - 1) setenv("GPUPORT_DEVICE", "opencl:99", 1);
    gp_status st = gp_mpi_device_select(MPI_COMM_WORLD, &d);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "rank %d: ", size - 1);
    if (st != GP_ERROR_NOT_FOUND || strncmp(gp_last_error(), prefix, strlen(prefix)))
        note("GPUPORT_DEVICE=opencl:99 on the last rank: %s, \"%s\"", gp_status_name(st), gp_last_error());
    if (old) setenv("GPUPORT_DEVICE", old, 1);
    else unsetenv("GPUPORT_DEVICE");
    free(old);
    all_ok();
}

/* ---- Failures --------------------------------------------------------------------------------- */

/* The call failed on every rank with `want`, naming rank `who`. */
static void expect_failure(gp_status got, gp_status want, int who, const char *what)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "rank %d: ", who);
    if (got != want || strncmp(gp_last_error(), prefix, strlen(prefix)))
        note("%s: %s, \"%s\"; expected %s from rank %d", what, gp_status_name(got), gp_last_error(),
             gp_status_name(want), who);
}

/* Sets (or with NULL unsets) an environment variable, returning its old value to restore. */
static char *swap_env(const char *name, const char *value)
{
    char *old = getenv(name) ? strdup(getenv(name)) : NULL;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
    return old;
}

static void restore_env(const char *name, char *old)
{
    if (old) setenv(name, old, 1);
    else unsetenv(name);
    free(old);
}

static void bad_input(void **state)
{
    (void)state;
    const gp_stencil good = {GP_STENCIL_5POINT, GP_F32, GP_BOUNDARY_ZERO, 16, 12, 1, {1, 1, 1, 1, 1}, 0};
    gp_stencil s = good;
    gp_mpi_grid *g = NULL;
    int last = size - 1;
    /* One rank with another grid, a bad boundary, a NULL device. */
    if (size > 1) {
        if (rank == last) s.nx = 17;
        expect_failure(gp_mpi_grid_create(MPI_COMM_WORLD, dev, &s, NULL, &g), GP_ERROR_INVALID_ARGUMENT, last,
                       "another nx on the last rank");
        s = good;
    }
    if (rank == last) s.boundary = (gp_boundary)7;
    expect_failure(gp_mpi_grid_create(MPI_COMM_WORLD, dev, &s, NULL, &g), GP_ERROR_INVALID_ARGUMENT, last,
                   "a bad boundary on the last rank");
    expect_failure(gp_mpi_grid_create(MPI_COMM_WORLD, rank == last ? NULL : dev, &good, NULL, &g),
                   GP_ERROR_INVALID_HANDLE, last, "a NULL device on the last rank");
    /* More ranks than cells along x; dims that are not the ranks; z ranks for a 2D shape. */
    s = good;
    s.nx = 1;
    int along_x[3] = {size, 1, 1}, wrong[3] = {size + 1, 1, 1}, along_z[3] = {1, 1, 2};
    if (size > 1)
        expect_failure(gp_mpi_grid_create(MPI_COMM_WORLD, dev, &s, along_x, &g), GP_ERROR_INVALID_ARGUMENT, 0,
                       "fewer cells than ranks");
    expect_failure(gp_mpi_grid_create(MPI_COMM_WORLD, dev, &good, wrong, &g), GP_ERROR_INVALID_ARGUMENT, 0,
                   "dims that are not the ranks");
    expect_failure(gp_mpi_grid_create(MPI_COMM_WORLD, dev, &good, along_z, &g), GP_ERROR_INVALID_ARGUMENT, 0,
                   "ranks along z for a 2D shape");
    /* A halo depth that is not 1 to 4 or auto, and (a layout that takes either) depths that differ. */
    char *depth = swap_env("GPUPORT_MPI_HALO_DEPTH", rank == last ? "5" : NULL);
    expect_failure(gp_mpi_grid_create(MPI_COMM_WORLD, dev, &good, NULL, &g), GP_ERROR_INVALID_ARGUMENT, last,
                   "GPUPORT_MPI_HALO_DEPTH=5 on the last rank");
    if (size > 1) {
        s = good;
        s.ny = 40;
        setenv("GPUPORT_MPI_HALO_DEPTH", rank == last ? "2" : "1", 1);
        expect_failure(gp_mpi_grid_create(MPI_COMM_WORLD, dev, &s, NULL, &g), GP_ERROR_INVALID_ARGUMENT, last,
                       "GPUPORT_MPI_HALO_DEPTH=2 on the last rank only");
    }
    restore_env("GPUPORT_MPI_HALO_DEPTH", depth);
    if (g) note("a failed create set the grid");

    /* On a grid: a bad root, NULL data on the root, an unknown field or operation. */
    CHECK_OK(gp_mpi_grid_create(MPI_COMM_WORLD, dev, &good, NULL, &g));
    if (g) {
        float *global = rank == 0 ? calloc(good.nx * good.ny, sizeof *global) : NULL;
        double r;
        expect_failure(gp_mpi_grid_scatter(g, GP_MPI_U, size, global), GP_ERROR_INVALID_ARGUMENT, 0, "root out of range");
        expect_failure(gp_mpi_grid_scatter(g, GP_MPI_U, 0, NULL), GP_ERROR_INVALID_ARGUMENT, 0, "NULL on the root");
        expect_failure(gp_mpi_grid_gather(g, GP_MPI_SOURCE, 0, global), GP_ERROR_NOT_FOUND, 0, "no source");
        expect_failure(gp_mpi_grid_reduce(g, (gp_mpi_reduce_op)9, &r), GP_ERROR_INVALID_ARGUMENT, 0, "an unknown op");
        expect_failure(gp_mpi_grid_reduce(g, GP_MPI_SUM, rank == last ? NULL : &r), GP_ERROR_INVALID_ARGUMENT, last,
                       "NULL result on the last rank");
        /* The grid still works afterwards. */
        CHECK_OK(gp_mpi_grid_scatter(g, GP_MPI_U, 0, global));
        CHECK_OK(gp_mpi_grid_run(g, 2));
        CHECK_OK(gp_mpi_grid_reduce(g, GP_MPI_MAX, &r));
        if (!why[0] && r != 0) note("a grid of zeros has max %g", r);
        CHECK_OK(gp_mpi_grid_destroy(g));
        free(global);
    }
    all_ok();
}

/* Whether the MPI this test runs under takes the memory of this rank's device: what
 * GPUPORT_MPI_TRANSPORT=mpi needs, and what auto takes where NCCL cannot serve. */
static int mpi_takes_device_memory(void)
{
    const char *query = strcmp(info.backend, "cuda") == 0  ? "MPIX_Query_cuda_support"
                        : strcmp(info.backend, "hip") == 0 ? "MPIX_Query_rocm_support"
                                                             : NULL;
    int (*support)(void) = NULL;
    if (query) *(void **)&support = dlsym(RTLD_DEFAULT, query);
    return support && support();
}

/* A grid is created under GPUPORT_MPI_TRANSPORT=want (NULL: as the environment has it) and
 * GPUPORT_NCCL_LIBRARY=library where given: it fails on every rank with a message holding `says` (want_st), or succeeds with the
 * transport named `says`, its reason holding `reason`. */
static void try_transport(const char *want, const char *library, gp_status want_st, const char *says,
                          const char *reason)
{
    const gp_stencil s = {GP_STENCIL_5POINT, GP_F32, GP_BOUNDARY_ZERO, 16, 12, 1, {1, 1, 1, 1, 1}, 0};
    char *old = want ? swap_env("GPUPORT_MPI_TRANSPORT", want) : NULL;
    char *old_lib = library ? swap_env("GPUPORT_NCCL_LIBRARY", library) : NULL;
    gp_mpi_grid *g = NULL;
    gp_status st = gp_mpi_grid_create(MPI_COMM_WORLD, dev, &s, NULL, &g);
    if (want_st != GP_SUCCESS) {
        expect_failure(st, want_st, 0, want);
        if (st != GP_SUCCESS && !strstr(gp_last_error(), says))
            note("GPUPORT_MPI_TRANSPORT=%s: \"%s\" does not say \"%s\"", want, gp_last_error(), says);
    } else {
        gp_mpi_transport_info t = {0};
        CHECK_OK(st);
        CHECK_OK(gp_mpi_grid_get_transport(g, &t));
        if (st == GP_SUCCESS && (!t.name || strcmp(t.name, says) || !strstr(t.reason, reason)))
            note("GPUPORT_MPI_TRANSPORT=%s: transport %s (%s); expected %s, saying \"%s\"", want, t.name, t.reason, says,
                 reason);
    }
    gp_mpi_grid_destroy(g);
    if (library) restore_env("GPUPORT_NCCL_LIBRARY", old_lib);
    if (want) restore_env("GPUPORT_MPI_TRANSPORT", old);
}

/* The transport: the one GPUPORT_TEST_TRANSPORT expects, in the grid and in the report; bad
 * and impossible requests refused on every rank with their reason; auto falling back past a
 * library that is not there. */
static void transport(void **state)
{
    (void)state;
    const char *expected = getenv("GPUPORT_TEST_TRANSPORT");
    if (expected) try_transport(NULL, NULL, GP_SUCCESS, expected, "");
    FILE *out = tmpfile();
    char text[4096] = "";
    CHECK_OK(gp_mpi_device_report(MPI_COMM_WORLD, dev, out));
    if (out && rank == 0) {
        rewind(out);
        text[fread(text, 1, sizeof text - 1, out)] = '\0';
        char line[64];
        snprintf(line, sizeof line, "halo transport: %s%s", expected ? expected : "", expected ? " (" : "");
        if (!strstr(text, line)) note("the report says \"%s\", without \"%s\"", text, line);
    }
    if (out) fclose(out);
    try_transport("bogus", NULL, GP_ERROR_INVALID_ARGUMENT, "GPUPORT_MPI_TRANSPORT=\"bogus\" is not auto", "");
    /* Neither device-aware MPI nor NCCL serves an OpenCL device; on CUDA and HIP, mpi is taken
     * where MPI says it takes their memory (Open MPI built with CUDA), and refused elsewhere
     * (Open MPI as Debian builds it). */
    int aware = mpi_takes_device_memory();
    if (strcmp(info.backend, "opencl") == 0) {
        try_transport("mpi", NULL, GP_ERROR_UNSUPPORTED, "GPUPORT_MPI_TRANSPORT=mpi, but rank 0: its device is opencl", "");
        try_transport("nccl", "", GP_ERROR_UNSUPPORTED, "NCCL serves CUDA devices and RCCL HIP devices", "");
    } else if (aware) {
        try_transport("mpi", NULL, GP_SUCCESS, "mpi", "GPUPORT_MPI_TRANSPORT=mpi");
    } else {
        try_transport("mpi", NULL, GP_ERROR_UNSUPPORTED, "GPUPORT_MPI_TRANSPORT=mpi, but rank 0: ", "");
    }
    try_transport("nccl", "/nonexistent/libnccl.so.2", GP_ERROR_UNSUPPORTED, "/nonexistent/libnccl.so.2", "");
    try_transport("staged", NULL, GP_SUCCESS, "staged", "GPUPORT_MPI_TRANSPORT=staged");
    try_transport("auto", "/nonexistent/libnccl.so.2", GP_SUCCESS,
                  aware                 ? "mpi"
                  : info.unified_memory ? "mapped"
                                        : "staged",
                  "NCCL: rank 0: /nonexistent/libnccl.so.2");
    all_ok();
}

/* Ranks on the fake CUDA driver (tests/fake_cuda.c) beside a fake NCCL that takes its device
 * memory, or on real GPUs: where every rank has cuda:0 (GPUPORT_DEVICE), NCCL cannot serve them
 * (one rank a GPU), so auto says why and takes device-aware MPI where MPI takes CUDA memory, else
 * staged, and nccl is refused on every rank; where each rank has a GPU of its own, auto takes
 * NCCL. */
static void shared_gpu(void **state)
{
    (void)state;
    if (getenv("GPUPORT_DEVICE") && size > 1) {
        try_transport("auto", NULL, GP_SUCCESS, mpi_takes_device_memory() ? "mpi" : "staged",
                      "NCCL: rank 1: its GPU is also rank 0's");
        try_transport("nccl", NULL, GP_ERROR_UNSUPPORTED, "GPUPORT_MPI_TRANSPORT=nccl, but rank 1: its GPU is also rank 0's",
                      "");
    } else {
        try_transport("auto", NULL, GP_SUCCESS, "nccl", "");
    }
    all_ok();
}

/* Rank 1's device fails in the middle of a run (the fault plugin): every rank returns its error. */
static void device_failure(void **state)
{
    (void)state;
    const char *folder = getenv("GPUPORT_PLUGIN_PATH");
    char path[1024];
    snprintf(path, sizeof path, "%s/libgpuport-opencl.so", folder ? folder : ".");
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    void (*arm)(long, int) = NULL;
    if (lib) *(void **)&arm = dlsym(lib, "gp_fault_arm");
    if (!arm) note("the fault plugin is not loaded from %s", path);
    const gp_stencil s = {GP_STENCIL_3X3, GP_F32, GP_BOUNDARY_CLAMP, 40, 30, 1, {1, 1, 1, 1, 1, 1, 1, 1, 1}, 0};
    gp_mpi_grid *g = NULL;
    CHECK_OK(gp_mpi_grid_create(MPI_COMM_WORLD, dev, &s, NULL, &g));
    all_ok();
    /* The plugin calls of a run on the failing rank, counted in a clean run once the kernels are
     * compiled; then a failure at the first, the middle and the last of them. */
    int who = size > 1 ? 1 : 0;
    long (*calls)(void) = NULL;
    if (lib) *(void **)&calls = dlsym(lib, "gp_fault_calls");
    CHECK_OK(gp_mpi_grid_run(g, 5)); /* compiles the kernels */
    if (rank == who && arm) arm(0, 0);
    CHECK_OK(gp_mpi_grid_run(g, 5));
    long total = calls ? calls() : 3;
    for (int kind = 0; kind < 4; kind++) { /* device memory, host memory, launch, lost (the last) */
        const long ats[3] = {1, (total + 1) / 2, total};
        for (int a = 0; a < 3; a++) {
            if (rank == who && arm) arm(ats[a], kind);
            gp_status st = gp_mpi_grid_run(g, 5);
            if (rank == who && calls && calls() < ats[a])
                note("the run made %ld plugin calls, not the %ld of the first", calls(), total);
            if (rank == who && arm) arm(0, 0);
            expect_failure(st, kind == 1 ? GP_ERROR_OUT_OF_HOST_MEMORY : kind == 0 ? GP_ERROR_OUT_OF_DEVICE_MEMORY
                                                                                   : GP_ERROR_BACKEND,
                           who, "a fault on one rank");
            if (kind == 3) break; /* the device stays lost */
        }
    }
    if (lib) dlclose(lib);
    gp_mpi_grid_destroy(g);
    all_ok();
}

/* The NCCL transport's failures, against the fake NCCL (tests/mpi/fake_nccl.c): a call failing
 * on one rank at creation or in the middle of a run, or an asynchronous error, ends the call on
 * every rank with that rank's message (never a hang: the ctest timeout would catch one); the
 * grid's communicator is then gone on every rank, and later runs say so. */
static void nccl_failures(void **state)
{
    (void)state;
    const gp_stencil s = {GP_STENCIL_3X3, GP_F32, GP_BOUNDARY_CLAMP, 40, 30, 1, {1, 1, 1, 1, 1, 1, 1, 1, 1}, 0};
    int who = size > 1 ? size - 1 : 0;
    char spec[64];
    gp_mpi_grid *g = NULL;
    snprintf(spec, sizeof spec, "ncclCommInitRank:1:%d", who);
    setenv("FAKE_NCCL_FAIL", spec, 1);
    expect_failure(gp_mpi_grid_create(MPI_COMM_WORLD, dev, &s, NULL, &g), GP_ERROR_BACKEND, who, spec);
    if (!strstr(gp_last_error(), "ncclCommInitRank failed")) note("\"%s\" does not name the call", gp_last_error());
    all_ok();
    if (size == 1) {
        unsetenv("FAKE_NCCL_FAIL");
        skip(); /* one rank exchanges nothing */
    }
    /* A grid on NCCL exchanges once at creation (steps.c: NCCL connects ranks at their first
     * message), so a send failing there fails the creation on every rank. */
    snprintf(spec, sizeof spec, "ncclSend:1:%d", who);
    setenv("FAKE_NCCL_FAIL", spec, 1);
    expect_failure(gp_mpi_grid_create(MPI_COMM_WORLD, dev, &s, NULL, &g), GP_ERROR_BACKEND, who, spec);
    if (!strstr(gp_last_error(), "ncclSend failed")) note("\"%s\" does not name the call", gp_last_error());
    all_ok();
    /* The third send, receive or group end of a run of 12 steps (an exchange before every D-th
     * step, halos D <= 4 deep, one round each, as only y is split), and an asynchronous error
     * after the third group. */
    const char *calls[] = {"ncclSend", "ncclRecv", "ncclGroupEnd", "async"};
    for (int c = 0; c < 4; c++) {
        unsetenv("FAKE_NCCL_FAIL");
        g = NULL;
        CHECK_OK(gp_mpi_grid_create(MPI_COMM_WORLD, dev, &s, NULL, &g));
        all_ok();
        CHECK_OK(gp_mpi_grid_run(g, 2));
        snprintf(spec, sizeof spec, "%s:3:%d", calls[c], who);
        setenv("FAKE_NCCL_FAIL", spec, 1);
        expect_failure(gp_mpi_grid_run(g, 12), GP_ERROR_BACKEND, who, spec);
        const char *says = c == 3 ? "asynchronous error" : calls[c];
        if (!strstr(gp_last_error(), says)) note("%s: \"%s\" does not say \"%s\"", spec, gp_last_error(), says);
        unsetenv("FAKE_NCCL_FAIL");
        gp_status st = gp_mpi_grid_run(g, 1);
        if (st != GP_ERROR_BACKEND || !strstr(gp_last_error(), "aborted"))
            note("%s: the run after it: %s, \"%s\"", spec, gp_status_name(st), gp_last_error());
        gp_mpi_grid_destroy(g);
        all_ok();
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int faults = argc > 1 && strcmp(argv[1], "--faults") == 0;
    int nccl_faults = argc > 1 && strcmp(argv[1], "--nccl-faults") == 0;
    int shared = argc > 1 && strcmp(argv[1], "--shared-gpu") == 0;
    gp_status st = gp_mpi_device_select(MPI_COMM_WORLD, &dev);
    if (st == GP_SUCCESS) st = gp_device_get_info(dev, &info);
    if (st != GP_SUCCESS) {
        if (rank == 0) fprintf(stderr, "gpuport-test-mpi: no device: %s\n", gp_last_error());
        MPI_Finalize();
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(devices),     cmocka_unit_test(grid_2d_f32), cmocka_unit_test(grid_2d_f64),
        cmocka_unit_test(grid_3d_f32), cmocka_unit_test(grid_3d_f64), cmocka_unit_test(grid_jacobi),
        cmocka_unit_test(reductions),  cmocka_unit_test(bad_input),   cmocka_unit_test(transport),
    };
    const struct CMUnitTest fault_tests[] = {cmocka_unit_test(device_failure)};
    const struct CMUnitTest nccl_tests[] = {cmocka_unit_test(nccl_failures)};
    const struct CMUnitTest shared_tests[] = {cmocka_unit_test(shared_gpu)};
    char name[64];
    snprintf(name, sizeof name, "mpi rank %d of %d on %s:%zu", rank, size, info.backend, info.backend_index);
    int failed = faults        ? _cmocka_run_group_tests(name, fault_tests, 1, NULL, NULL)
                 : nccl_faults ? _cmocka_run_group_tests(name, nccl_tests, 1, NULL, NULL)
                 : shared      ? _cmocka_run_group_tests(name, shared_tests, 1, NULL, NULL)
                               : _cmocka_run_group_tests(name, tests, sizeof tests / sizeof tests[0], NULL, NULL);
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any ? 1 : 0;
}
