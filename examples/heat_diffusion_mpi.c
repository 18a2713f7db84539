/* heat_diffusion_mpi: heat_diffusion's Jacobi solver (heat.h states the problem) over MPI ranks
 * with libgpuport-mpi, one device per rank: the plate split into blocks, halos exchanged every
 * step, the norm of u' - u reduced over every rank. For the same options it takes the same
 * steps and reaches the same centre value as heat_diffusion on one device, for any number of
 * ranks; rank 0 checks the gathered field against the plain C solver as heat_diffusion does.
 *
 *   mpiexec -n 4 heat_diffusion_mpi --n 256 */
#include "common.h"
#include "heat.h"

#include <gpuport_mpi.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: heat_diffusion_mpi [--device SPEC] [--n N] [--f32] [--check-every K] [--max-steps S]\n"
    "                          [--out FILE] [--ranks-x X] [--sizes [--steps S] [--max-n N]]\n"
    "  run under mpiexec, one device per rank (gp_mpi_device_select: GPUPORT_DEVICE or --device,\n"
    "  else round robin over the node's GPUs, else its CPU devices)\n"
    "  --n N            a grid of N x N cells (default 256)\n"
    "  --f32            single precision (default: double)\n"
    "  --check-every K  take the norm of u' - u every K steps (default 100)\n"
    "  --max-steps S    stop after S steps when not converged (default 100000)\n"
    "  --out FILE       write the final field as a PGM heat map (default heat.pgm)\n"
    "  --ranks-x X      ranks along x (default: MPI_Dims_create's choice)\n"
    "  --sizes          time per step for N = 256, 512, ... up to --max-n (default 8192), --steps\n"
    "                   steps each (default 100)\n";

typedef struct options {
    size_t n, every, max_steps, steps, max_n;
    int f32, dims[3];
    const char *out;
} options;

static int rank;

/* Makes the function return 1 on every rank when a collective call fails (every rank gets the
 * same status and the failing rank's message); rank 0 says why. */
#define MPI_CHECK(call)                                                                            \
    do {                                                                                           \
        gp_status st_ = (call);                                                                    \
        if (st_ != GP_SUCCESS) {                                                                   \
            if (rank == 0) fprintf(stderr, "%s failed: %s: %s\n", #call, gp_status_name(st_), gp_last_error()); \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* The grid of n x n cells with the heat source scattered from rank 0 (u starts at 0). */
static int grid_create(gp_device *dev, const options *o, size_t n, gp_mpi_grid **grid)
{
    gp_type type = o->f32 ? GP_F32 : GP_F64;
    gp_stencil s = heat_stencil(type, n);
    size_t es = gp_type_size(type), centre = n / 2 * n + n / 2;
    void *source = rank == 0 ? calloc(n * n, es) : NULL;
    if (rank == 0 && source) {
        if (o->f32) ((float *)source)[centre] = (float)HEAT_SOURCE;
        else ((double *)source)[centre] = HEAT_SOURCE;
    }
    gp_status st = gp_mpi_grid_create(MPI_COMM_WORLD, dev, &s, o->dims, grid);
    if (st == GP_SUCCESS) st = gp_mpi_grid_scatter(*grid, GP_MPI_SOURCE, 0, source); /* NULL on rank 0: fails all */
    free(source);
    if (st != GP_SUCCESS) {
        if (rank == 0) fprintf(stderr, "setting up a %zu x %zu grid: %s\n", n, n, gp_last_error());
        gp_mpi_grid_destroy(*grid);
        return 1;
    }
    return 0;
}

/* U gathered on rank 0, as doubles (NULL elsewhere, and on failure after saying why). */
static double *gather(gp_mpi_grid *g, const options *o, size_t n, int *failed)
{
    size_t es = o->f32 ? 4 : 8;
    void *raw = rank == 0 ? malloc(n * n * es) : NULL;
    double *u = rank == 0 ? malloc(n * n * sizeof *u) : NULL;
    gp_status st = gp_mpi_grid_gather(g, GP_MPI_U, 0, raw);
    *failed = st != GP_SUCCESS;
    if (*failed && rank == 0) fprintf(stderr, "gathering the field: %s\n", gp_last_error());
    if (!*failed && rank == 0)
        for (size_t i = 0; i < n * n; i++) u[i] = o->f32 ? ((float *)raw)[i] : ((double *)raw)[i];
    free(raw);
    if (*failed) {
        free(u);
        u = NULL;
    }
    return u;
}

/* To convergence, then rank 0 checks the steps and the field against the plain C solver. */
static int solve(gp_device *dev, const options *o)
{
    gp_mpi_grid *g;
    if (grid_create(dev, o, o->n, &g)) return 1;
    size_t steps = 0;
    double norm = INFINITY;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    while (steps < o->max_steps && !(norm < HEAT_TOLERANCE)) {
        size_t k = o->max_steps - steps < o->every ? o->max_steps - steps : o->every;
        MPI_CHECK(gp_mpi_grid_run(g, k));
        steps += k;
        MPI_CHECK(gp_mpi_grid_reduce(g, GP_MPI_UPDATE_NORM, &norm));
    }
    double ms = 1e3 * (MPI_Wtime() - t0);
    gp_mpi_stats stats;
    MPI_CHECK(gp_mpi_grid_get_stats(g, &stats));
    int failed;
    double *field = gather(g, o, o->n, &failed);
    gp_mpi_grid_destroy(g);
    if (failed) return 1;
    if (rank == 0) {
        failed = heat_report(o->n, o->f32, o->every, steps, norm, field, o->out);
        printf("ranks: %.1f ms, %.4f ms per step (norms included); rank 0 waited %.1f%% of it for messages\n", ms,
               ms / (double)steps, 100 * stats.mpi_s / (ms / 1e3));
    }
    free(field);
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return failed;
}

/* Time per step on growing grids, with no norm, each checked against the plain C solver. */
static int sizes(gp_device *dev, const options *o)
{
    gp_device_info info;
    MPI_CHECK(gp_device_get_info(dev, &info));
    int failed = 0, size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t es = o->f32 ? 4 : 8;
    if (rank == 0)
        printf("%6s %12s %10s %8s  %s (%zu steps of %s each, %d ranks)\n", "N", "ms per step", "GB/s", "MPI wait",
               "check", o->steps, o->f32 ? "f32" : "f64", size);
    for (size_t n = 256; n <= o->max_n && !failed; n *= 2) {
        /* Each rank's block and the two grids of rank 0's gather must fit. */
        int fits = 3 * n * n * es / (size_t)size < info.global_mem_bytes / 10 * 9, all;
        MPI_Allreduce(&fits, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all) {
            if (rank == 0) printf("%6zu  does not fit in the devices' memory\n", n);
            break;
        }
        gp_mpi_grid *g;
        if (grid_create(dev, o, n, &g)) return 1;
        gp_mpi_stats before, after;
        MPI_CHECK(gp_mpi_grid_run(g, 1)); /* compiles the kernels before the timing */
        MPI_CHECK(gp_mpi_grid_get_stats(g, &before));
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_CHECK(gp_mpi_grid_run(g, o->steps));
        double per_step = 1e3 * (MPI_Wtime() - t0) / (double)o->steps;
        MPI_CHECK(gp_mpi_grid_get_stats(g, &after));
        double *field = gather(g, o, n, &failed);
        gp_mpi_grid_destroy(g);
        if (failed) return 1;
        if (rank == 0) {
            double norms[2], bound;
            double *host = heat_host_solve(n, o->f32, o->steps + 1, o->steps + 1, norms);
            double err = host ? heat_field_error(n, field, host, o->f32, o->steps + 1, &bound) : INFINITY;
            failed = !(err <= bound);
            printf("%6zu %12.4f %10.1f %7.1f%%  %s\n", n, per_step, 2.0 * (double)(n * n * es) / (per_step * 1e6),
                   100 * (after.mpi_s - before.mpi_s) / (after.run_s - before.run_s),
                   failed ? "WRONG" : "correct");
            free(host);
        }
        free(field);
        MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    return failed;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    ex_parse(argc, argv, usage);
    options o = {(size_t)ex_number(argc, argv, "--n", 256), (size_t)ex_number(argc, argv, "--check-every", 100),
                 (size_t)ex_number(argc, argv, "--max-steps", 100000), (size_t)ex_number(argc, argv, "--steps", 100),
                 (size_t)ex_number(argc, argv, "--max-n", 8192), ex_flag(argc, argv, "--f32"),
                 {(int)ex_number(argc, argv, "--ranks-x", 0), 0, 1}, ex_string(argc, argv, "--out", "heat.pgm")};
    if (o.n < 3 || o.every < 1 || o.steps < 1) {
        if (rank == 0) fprintf(stderr, "heat_diffusion_mpi: N must be at least 3, K and S at least 1\n%s", usage);
        MPI_Finalize();
        return 2;
    }
    const char *spec = ex_string(argc, argv, "--device", NULL);
    if (spec) setenv("GPUPORT_DEVICE", spec, 1);
    gp_device *dev;
    gp_device_info info;
    int status = 77;
    if (gp_mpi_device_select(MPI_COMM_WORLD, &dev) != GP_SUCCESS) {
        if (rank == 0) fprintf(stderr, "heat_diffusion_mpi: %s\n", gp_last_error());
    } else if (gp_mpi_device_report(MPI_COMM_WORLD, dev, stdout) == GP_SUCCESS &&
               gp_device_get_info(dev, &info) == GP_SUCCESS) {
        int fp64 = o.f32 || info.fp64, all;
        MPI_Allreduce(&fp64, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all) {
            if (rank == 0) printf("skipped: a device has no fp64; --f32 runs in single precision\n");
            status = 0;
        } else {
            status = ex_flag(argc, argv, "--sizes") ? sizes(dev, &o) : solve(dev, &o);
        }
    } else {
        if (rank == 0) fprintf(stderr, "heat_diffusion_mpi: %s\n", gp_last_error());
        status = 1;
    }
    MPI_Finalize();
    return status;
}
