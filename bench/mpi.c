/* gpuport-bench-mpi: what a distributed stencil step costs, for scaling tables. Under mpiexec -n P,
 * one line per run: the time per step (median of --reps runs of --steps steps, host clock, a
 * barrier before each, the slowest rank's), the most a rank waited for messages in it, the halo
 * exchange alone (gp_mpi_grid_exchange: packing, copies, messages, unpacking) and its share of
 * the step, the halo bytes per rank and step, the transport (GPUPORT_MPI_TRANSPORT chooses); with
 * one rank also gp_stencil_run on the same device and grid, timed the same way.
 *   weak:   every rank a block of --n cells per side (N^2 or N^3), the grid growing with P
 *   strong: a grid of --n cells per side, split over the P ranks
 *   --apart (with weak): every rank a grid of --n cells per side of its own, all at once, no
 *           exchange: what the ranks' sharing of the machine (memory, caches) alone costs
 *   --dims X,Y,Z: the ranks along each dimension (default: gp_mpi_grid_create's choice)
 *   --norm-every K: after every K steps the norm of the last step's update (gp_mpi_grid_reduce,
 *           GP_MPI_UPDATE_NORM), as a solver checks convergence; its cost is in the step's time
 * bench/mpi-scaling.sh runs it for 1, 2 and 4 ranks and makes the tables with efficiencies. */
#include <gpuport_mpi.h>

#include <stdlib.h>
#include <string.h>

static int rank, size;

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what)
{
    if (rank == 0) fprintf(stderr, "gpuport-bench-mpi: %s: %s\n", what, gp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The grid every rank starts from: a smooth bump, so that no step meets denormals. */
static void *initial(const gp_stencil *s)
{
    size_t n = s->nx * s->ny * s->nz;
    void *u = malloc(n * gp_type_size(s->type));
    for (size_t i = 0; i < n && u; i++) {
        double v = 1.0 + (double)(i % 97) / 97;
        if (s->type == GP_F32) ((float *)u)[i] = (float)v;
        else ((double *)u)[i] = v;
    }
    return u;
}

/* The one-rank reference: gp_stencil_run on the same device and grid, its buffers made before
 * the grid's and each of its runs timed right after one of the grid's, so that both meet the
 * same memory (on a CPU device, whichever ran later in the process ran up to 2.4x faster). */
typedef struct reference {
    gp_buffer *a, *b;
    gp_stream *stream;
} reference;

static void reference_create(reference *r, gp_device *dev, const gp_stencil *s, const void *u)
{
    size_t bytes = s->nx * s->ny * s->nz * gp_type_size(s->type);
    if (gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &r->a) || gp_buffer_create(dev, GP_MEMORY_DEVICE, bytes, &r->b) ||
        gp_stream_create(dev, &r->stream) || gp_buffer_write(r->stream, r->a, 0, u, bytes) ||
        gp_stencil_run(r->stream, s, 2, GP_VIEW(r->a), GP_VIEW(r->b), GP_VIEW(NULL), NULL) ||
        gp_stream_synchronize(r->stream))
        die("the one-device reference");
}

static double reference_ms(reference *r, const gp_stencil *s, int steps)
{
    double t0 = MPI_Wtime();
    if (gp_stencil_run(r->stream, s, (size_t)steps, GP_VIEW(r->a), GP_VIEW(r->b), GP_VIEW(NULL), NULL) ||
        gp_stream_synchronize(r->stream))
        die("the one-device reference");
    return 1e3 * (MPI_Wtime() - t0) / steps;
}

typedef struct options {
    const char *mode, *shape;
    size_t n;
    int steps, reps, f64, header, apart, three_d, norm_every;
    int dims[3]; /* --dims X,Y,Z; 0 0 0: the layout gp_mpi_grid_create chooses */
} options;

/* 0 when the command line is good. */
static int parse(int argc, char **argv, options *o)
{
    *o = (options){"weak", "5point", 2048, 50, 5, 0, 0, 0, 0, 0, {0, 0, 0}};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--mode") && v) o->mode = argv[++i];
        else if (!strcmp(a, "--shape") && v) o->shape = argv[++i];
        else if (!strcmp(a, "--n") && v) o->n = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--steps") && v) o->steps = atoi(argv[++i]);
        else if (!strcmp(a, "--reps") && v) o->reps = atoi(argv[++i]);
        else if (!strcmp(a, "--norm-every") && v) o->norm_every = atoi(argv[++i]);
        else if (!strcmp(a, "--f64")) o->f64 = 1;
        else if (!strcmp(a, "--header")) o->header = 1;
        else if (!strcmp(a, "--apart")) o->apart = 1;
        else if (!strcmp(a, "--dims") && v && sscanf(argv[++i], "%d,%d,%d", &o->dims[0], &o->dims[1], &o->dims[2]) == 3)
            ;
        else {
            if (rank == 0)
                fprintf(stderr, "usage: mpiexec -n P gpuport-bench-mpi [--mode weak|strong] [--shape 5point|7point]\n"
                                "         [--n N] [--steps S] [--reps R] [--f64] [--apart] [--dims X,Y,Z] [--norm-every K]\n"
                                "         [--header]\n");
            return 1;
        }
    }
    o->three_d = !strcmp(o->shape, "7point");
    if ((strcmp(o->mode, "weak") && strcmp(o->mode, "strong")) || (!o->three_d && strcmp(o->shape, "5point")) ||
        o->n < 3 || o->steps < 1 || o->reps < 1 || o->norm_every < 0 || (o->apart && strcmp(o->mode, "weak")) ||
        (o->dims[0] && (o->apart || o->dims[0] < 1 || o->dims[1] < 1 || o->dims[2] < 1 ||
                        o->dims[0] * o->dims[1] * o->dims[2] != size || (!o->three_d && o->dims[2] != 1)))) {
        if (rank == 0)
            fprintf(stderr, "gpuport-bench-mpi: bad --mode, --shape, --n, --steps, --reps, --norm-every or --dims (--apart is for "
                            "--mode weak; --dims are the ranks along x, y and z, their product the number of ranks, "
                            "1 along z in 2D, and not with --apart)\n");
        return 1;
    }
    return 0;
}

/* The layout of a weak run: slabs along the slowest dimension, which gp_mpi_grid_create chooses
 * for dims of 0 on a grid of equal blocks (gpuport_mpi.h): their halos are two faces of a
 * block, never more than twice any other layout's. A strong run leaves the choice to
 * gp_mpi_grid_create (dims of 0) and reports what it chose. */
static void layout(int ranks, int three_d, int dims[3])
{
    dims[0] = 1;
    dims[1] = three_d ? 1 : ranks;
    dims[2] = three_d ? ranks : 1;
}

/* What a run measured: medians over the reps, in ms a step. */
typedef struct measured {
    double ms, wait, alone, one_ms, one_ratio;
    unsigned long long most_halo;
    char transport[32];
} measured;

/* steps steps, with the update's norm after every k of them (k > 0). */
static void run(gp_mpi_grid *g, int steps, int k)
{
    for (int done = 0; done < steps; done += k ? k : steps) {
        double norm;
        int n = k && steps - done > k ? k : steps - done;
        if (gp_mpi_grid_run(g, (size_t)n)) die("a run");
        if (k && gp_mpi_grid_reduce(g, GP_MPI_UPDATE_NORM, &norm)) die("a norm");
    }
}

/* Per rep: the slowest rank's time per step and the most any rank waited for messages, with
 * one rank also the reference right after; then the exchange alone, as many times. */
static void measure(gp_mpi_grid *g, reference *ref, const gp_stencil *s, const options *o, measured *m)
{
    int reps = o->reps, steps = o->steps;
    double *t = malloc((size_t)reps * sizeof *t), *w = malloc((size_t)reps * sizeof *w);
    double *x = malloc((size_t)reps * sizeof *x), *one = malloc((size_t)reps * sizeof *one);
    if (!t || !w || !x || !one) die("out of host memory");
    for (int r = 0; r < reps; r++) {
        gp_mpi_stats before, after;
        gp_mpi_grid_get_stats(g, &before);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        run(g, steps, o->norm_every);
        double mine[2] = {1e3 * (MPI_Wtime() - t0) / steps, 0}, most[2];
        gp_mpi_grid_get_stats(g, &after);
        mine[1] = 1e3 * (after.mpi_s - before.mpi_s) / steps;
        MPI_Allreduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[r] = most[0];
        w[r] = most[1];
        if (size == 1) one[r] = reference_ms(ref, s, steps);
    }
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < steps; i++)
            if (gp_mpi_grid_exchange(g)) die("an exchange");
        double mine = 1e3 * (MPI_Wtime() - t0) / steps;
        MPI_Allreduce(&mine, &x[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    gp_mpi_stats stats;
    gp_mpi_transport_info transport;
    gp_mpi_grid_get_stats(g, &stats);
    gp_mpi_grid_get_transport(g, &transport);
    snprintf(m->transport, sizeof m->transport, "%s", transport.name);
    unsigned long long halo = stats.halo_bytes;
    MPI_Reduce(&halo, &m->most_halo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    /* With one rank, also the median of each run's time over the reference run right after it:
     * pairs run back to back, so a drift of the machine's speed (on a shared CPU, by half or more
     * between runs) cancels. The ratios go in w once its median is taken. */
    m->wait = median(w, reps);
    m->one_ratio = 0;
    if (size == 1) {
        for (int r = 0; r < reps; r++) w[r] = t[r] / one[r];
        m->one_ratio = median(w, reps);
    }
    m->ms = median(t, reps);
    m->alone = median(x, reps);
    m->one_ms = size == 1 ? median(one, reps) : 0;
    free(t);
    free(w);
    free(x);
    free(one);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    options o;
    if (parse(argc, argv, &o)) {
        MPI_Finalize();
        return 2;
    }
    /* The grid's ranks: all, or with --apart this one alone. */
    MPI_Comm comm = MPI_COMM_WORLD;
    if (o.apart) MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &comm);
    int dims[3] = {o.dims[0], o.dims[1], o.dims[2]};
    if (!dims[0] && !strcmp(o.mode, "weak")) layout(o.apart ? 1 : size, o.three_d, dims);
    gp_stencil s = {o.three_d ? GP_STENCIL_7POINT : GP_STENCIL_5POINT, o.f64 ? GP_F64 : GP_F32, GP_BOUNDARY_FIXED, o.n,
                    o.n, o.three_d ? o.n : 1, {0}, 0};
    for (int i = 1; i < (o.three_d ? 7 : 5); i++) s.weights[i] = o.three_d ? 1.0 / 6 : 0.25;
    if (!strcmp(o.mode, "weak")) {
        s.nx *= (size_t)dims[0];
        s.ny *= (size_t)dims[1];
        s.nz *= (size_t)dims[2];
    }
    gp_device *dev;
    gp_device_info info;
    gp_mpi_grid *g;
    reference ref = {0};
    void *u = rank == 0 || o.apart ? initial(&s) : NULL;
    if (gp_mpi_device_select(MPI_COMM_WORLD, &dev) || gp_device_get_info(dev, &info)) die("setting up");
    if (size == 1) reference_create(&ref, dev, &s, u);
    gp_mpi_block block;
    if (gp_mpi_grid_create(comm, dev, &s, dims, &g) || gp_mpi_grid_get_block(g, &block)) die("setting up");
    memcpy(dims, block.dims, sizeof dims);
    double norm;
    if (gp_mpi_grid_scatter(g, GP_MPI_U, 0, u) || gp_mpi_grid_run(g, 2)) die("the first steps");
    /* The reduction's kernel is compiled at its first call: before the timing. */
    if (o.norm_every && gp_mpi_grid_reduce(g, GP_MPI_UPDATE_NORM, &norm)) die("the first norm");
    measured m;
    measure(g, &ref, &s, &o, &m);
    gp_mpi_grid_destroy(g);
    gp_buffer_destroy(ref.a);
    gp_buffer_destroy(ref.b);
    gp_stream_destroy(ref.stream);
    if (rank == 0) {
        if (o.header)
            printf("mode,shape,type,ranks,dims,grid,device,ms_per_step,mpi_wait_ms,exchange_ms,exchange_share,"
                   "halo_bytes_per_rank,one_device_ms,one_rank_ratio,transport,norm_every\n");
        char grid[64];
        snprintf(grid, sizeof grid, o.three_d ? "%zux%zux%zu" : "%zux%zu", s.nx, s.ny, s.nz);
        printf("%s,%s,%s,%d,%dx%dx%d,%s,%s:%zu %s,%.4f,%.4f,%.4f,%.3f,%llu,%.4f,%.3f,%s,%d\n", o.apart ? "apart" : o.mode,
               o.shape, o.f64 ? "f64" : "f32", size, dims[0], dims[1], dims[2], grid, info.backend, info.backend_index,
               info.name, m.ms, m.wait, m.alone, m.alone / m.ms, m.most_halo, m.one_ms, m.one_ratio, m.transport,
               o.norm_every);
    }
    free(u);
    if (o.apart) MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
