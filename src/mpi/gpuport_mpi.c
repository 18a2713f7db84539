/* libgpuport-mpi: a stencil grid in blocks over MPI ranks, built on gpuport's public API alone
 * (gp_stencil_apply_region computes boxes of a block, a small kernel packs faces).
 *
 * A step on a rank with neighbours:
 *   comm stream:    pack faces -> [staged: copy to pinned host] ......... [copy in] unpack -> wait interior -> slabs
 *   host:                               wait comm stream -> MPI_Irecv/Isend -> MPI_Waitall -^
 *   compute stream: wait previous slabs -> interior --------------------------------------------^
 * The interior (the block less one cell on each side with a neighbour) needs no halo, so it
 * runs while the faces travel; the slabs (those cells) run once the halos are in. The 3x3 shape
 * needs the corner cells too: it exchanges x faces first, then y faces as whole rows with their
 * x halos, which carries the corners along. A failure on one rank does not stop its exchanges
 * (its peers would wait for them); it is reported to every rank at the end of the call. */
#include "gpuport_mpi.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG 7177

/* A face this rank sends to a neighbour and the halo it receives from it, as boxes of the
 * local array, packed at `at` elements into the exchange buffers. */
typedef struct face {
    int peer, round;
    size_t send[3], recv[3], extent[3], cells, at;
} face;

struct gp_mpi_grid {
    MPI_Comm comm;
    gp_mpi_block block;
    gp_device *dev;
    gp_stencil stencil; /* the global grid's */
    gp_stencil local;   /* the same over the local array */
    MPI_Datatype mpi_type;
    size_t es, cells;   /* element size; elements of the local array */
    int lo[3], hi[3];   /* 1 where a neighbour is below / above along each dimension */
    gp_buffer *u[2], *source;
    int cur;            /* u[cur] is GP_MPI_U */
    size_t last_steps;  /* steps of the last run */
    gp_stream *compute, *comm_stream;
    gp_event *interior_done, *slabs_done;
    size_t interior[2][3];       /* origin, extent */
    size_t slabs[6][2][3], nslabs;
    face faces[6];
    int nfaces, rounds;
    int mapped;                  /* exchange through mapped buffers (no staging copy) */
    gp_buffer *packed;           /* packed faces, to send then received (exchange_cells each),
                                    on the device or mapped */
    gp_buffer *pinned;           /* staged: the same in pinned host memory */
    void *host;                  /* staged: the pinned buffer's host memory, mapped for good;
                                    mapped: packed's while it is mapped */
    size_t exchange_cells;
    gp_program *program;
    gp_kernel *faces_kernel;
    gp_buffer *table;            /* the faces' rows for faces_kernel */
    gp_reduce_kernel *reducers[5];
    gp_mpi_stats stats;
};

/* ---- Agreement --------------------------------------------------------------------------- */

/* Every rank's outcome of a collective call: GP_SUCCESS on every rank when all succeeded, else
 * on every rank the lowest failing rank's status and its message, prefixed "rank R: ". */
static gp_status agree(MPI_Comm comm, gp_status st)
{
    int rank = 0, mine, first = INT_MAX;
    MPI_Comm_rank(comm, &rank);
    mine = st == GP_SUCCESS ? INT_MAX : rank;
    if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return gp_set_last_error(GP_ERROR_BACKEND, "rank %d: MPI_Allreduce failed", rank);
    if (first == INT_MAX) return GP_SUCCESS;
    struct {
        int status;
        char text[1000];
    } m = {0, ""};
    if (rank == first) {
        m.status = st;
        snprintf(m.text, sizeof m.text, "%s", gp_last_error());
    }
    if (MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, comm) != MPI_SUCCESS)
        return gp_set_last_error(GP_ERROR_BACKEND, "rank %d failed, and MPI_Bcast of its message failed", first);
    return gp_set_last_error((gp_status)m.status, "rank %d: %s", first, m.text);
}

static gp_status mpi_fail(const char *fn, const char *call, int err)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(err, text, &len);
    return gp_set_last_error(GP_ERROR_BACKEND, "%s: %s failed: %s", fn, call, text);
}

/* A status kept across a sequence of calls: the first failure wins and later calls are
 * skipped, while the exchanges around them go on. */
#define KEEP(st, call)                                                                         \
    do {                                                                                       \
        if ((st) == GP_SUCCESS) (st) = (call);                                                 \
    } while (0)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- Devices ----------------------------------------------------------------------------- */

/* This rank's number among the ranks of its node, and their count. */
static gp_status node_rank(MPI_Comm comm, const char *fn, int *local, int *local_size)
{
    MPI_Comm node;
    int err = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (err != MPI_SUCCESS) return mpi_fail(fn, "MPI_Comm_split_type", err);
    MPI_Comm_rank(node, local);
    MPI_Comm_size(node, local_size);
    MPI_Comm_free(&node);
    return GP_SUCCESS;
}

/* The n-th device (round robin) of those of the type, and of the backend when it is given. */
static gp_status pick(gp_device_type type, const char *backend, int n, gp_device **device)
{
    size_t count = 0, matching = 0;
    gp_status st = gp_device_count(&count);
    gp_device *found[64];
    for (size_t i = 0; i < count && st == GP_SUCCESS && matching < 64; i++) {
        gp_device *d;
        gp_device_info info;
        KEEP(st, gp_device_get(i, &d));
        KEEP(st, gp_device_get_info(d, &info));
        if (st == GP_SUCCESS && info.type == type && (!backend || strcmp(info.backend, backend) == 0))
            found[matching++] = d;
    }
    if (st != GP_SUCCESS) return st;
    if (!matching) return GP_ERROR_NOT_FOUND;
    *device = found[(size_t)n % matching];
    return GP_SUCCESS;
}

gp_status gp_mpi_device_select(MPI_Comm comm, gp_device **device)
{
    static const char fn[] = "gp_mpi_device_select";
    if (comm == MPI_COMM_NULL) return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: comm is MPI_COMM_NULL", fn);
    int local = 0, local_size = 1;
    gp_status st = node_rank(comm, fn, &local, &local_size);
    gp_device *chosen = NULL;
    const char *env = getenv("GPUPORT_DEVICE");
    if (st == GP_SUCCESS && !device) st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: device is NULL", fn);
    if (st == GP_SUCCESS && env && *env) {
        st = gp_device_default(&chosen);
    } else if (st == GP_SUCCESS) {
        gp_device *best = NULL;
        gp_device_info info;
        if (gp_device_find("gpu", &best) == GP_SUCCESS && gp_device_get_info(best, &info) == GP_SUCCESS)
            st = pick(GP_DEVICE_GPU, info.backend, local, &chosen);
        else
            st = pick(GP_DEVICE_CPU, NULL, local, &chosen);
        if (st == GP_ERROR_NOT_FOUND)
            st = gp_set_last_error(GP_ERROR_NOT_FOUND, "%s: no GPU and no CPU device here (gpuport-info says why)", fn);
    }
    st = agree(comm, st);
    if (st == GP_SUCCESS) *device = chosen;
    return st;
}

gp_status gp_mpi_device_report(MPI_Comm comm, gp_device *device, FILE *out)
{
    static const char fn[] = "gp_mpi_device_report";
    if (comm == MPI_COMM_NULL) return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: comm is MPI_COMM_NULL", fn);
    int rank = 0, size = 1, local = 0, local_size = 1, len = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    MPI_Get_processor_name(host, &len);
    gp_status st = node_rank(comm, fn, &local, &local_size);
    gp_device_info info;
    if (st == GP_SUCCESS && !device) st = gp_set_last_error(GP_ERROR_INVALID_HANDLE, "%s: device is NULL", fn);
    KEEP(st, gp_device_get_info(device, &info));
    if (st == GP_SUCCESS && rank == 0 && !out) st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    char *all = rank == 0 ? malloc((size_t)size * 512) : NULL;
    if (st == GP_SUCCESS && rank == 0 && !all) st = gp_set_last_error(GP_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    st = agree(comm, st);
    if (st != GP_SUCCESS) {
        free(all);
        return st;
    }
    char line[512];
    snprintf(line, sizeof line, "rank %d on %s (local %d of %d): %s:%zu, %s", rank, host, local, local_size,
             info.backend, info.backend_index, info.name);
    int err = MPI_Gather(line, (int)sizeof line, MPI_CHAR, all, (int)sizeof line, MPI_CHAR, 0, comm);
    if (err != MPI_SUCCESS) st = mpi_fail(fn, "MPI_Gather", err);
    for (int r = 0; r < size && rank == 0 && st == GP_SUCCESS; r++) fprintf(out, "%s\n", all + (size_t)r * 512);
    if (rank == 0 && st == GP_SUCCESS) fflush(out);
    free(all);
    return agree(comm, st);
}

/* ---- The grid's geometry ----------------------------------------------------------------- */

/* Block c of p along a side of n cells: the first n % p blocks have one cell more. */
static void split(size_t n, int p, int c, size_t *origin, size_t *extent)
{
    size_t base = n / (size_t)p, extra = n % (size_t)p, uc = (size_t)c;
    *extent = base + (uc < extra);
    *origin = uc * base + (uc < extra ? uc : extra);
}

static size_t index_of(const size_t *sides, const size_t *at)
{
    return at[0] + sides[0] * (at[1] + sides[1] * at[2]);
}

/* The faces, interior and slabs of a block whose neighbours are known (lo, hi). */
static void plan(gp_mpi_grid *g, const int *below, const int *above)
{
    const size_t *L = g->block.local, *E = g->block.extent;
    int box_shape = g->stencil.shape == GP_STENCIL_3X3;
    g->nfaces = 0;
    g->exchange_cells = 0;
    g->rounds = box_shape ? 2 : 1;
    for (int d = 0; d < 3; d++)
        for (int side = 0; side < 2; side++) {
            int peer = side ? above[d] : below[d];
            if (peer == MPI_PROC_NULL) continue;
            face *f = &g->faces[g->nfaces++];
            f->peer = peer;
            f->round = box_shape ? d : 0;
            f->cells = 1;
            for (int e = 0; e < 3; e++) {
                /* Dimensions before d whole (halos included, carrying the corners); after d the
                 * block's cells. */
                size_t from = e < d ? 0 : (size_t)g->lo[e], count = e < d ? L[e] : E[e];
                if (e == d) {
                    from = side ? (size_t)g->lo[d] + E[d] - 1 : (size_t)g->lo[d];
                    count = 1;
                }
                f->send[e] = from;
                f->recv[e] = from;
                f->extent[e] = count;
                f->cells *= count;
            }
            f->recv[d] = side ? f->send[d] + 1 : f->send[d] - 1;
            f->at = g->exchange_cells;
            g->exchange_cells += f->cells;
        }
    /* Interior: one cell off each side with a neighbour; slabs: the rest of the block, dimension
     * by dimension (those before d within the interior, those after within the block). */
    size_t in0[3], in1[3];
    for (int d = 0; d < 3; d++) {
        size_t b0 = (size_t)g->lo[d], b1 = b0 + E[d];
        in0[d] = b0 + (size_t)g->lo[d] < b1 ? b0 + (size_t)g->lo[d] : b1;
        in1[d] = b1 - (size_t)g->hi[d] > in0[d] ? b1 - (size_t)g->hi[d] : in0[d];
        g->interior[0][d] = in0[d];
        g->interior[1][d] = in1[d] - in0[d];
    }
    g->nslabs = 0;
    for (int d = 0; d < 3; d++)
        for (int side = 0; side < 2; side++) {
            size_t b0 = (size_t)g->lo[d], b1 = b0 + E[d];
            size_t from = side ? in1[d] : b0, to = side ? b1 : in0[d];
            if (from == to) continue;
            size_t(*s)[3] = g->slabs[g->nslabs++];
            for (int e = 0; e < 3; e++) {
                s[0][e] = e < d ? in0[e] : (size_t)g->lo[e];
                s[1][e] = e < d ? in1[e] - in0[e] : E[e];
            }
            s[0][d] = from;
            s[1][d] = to - from;
        }
}

/* ---- Creating and destroying --------------------------------------------------------------- */

/* The faces of one round between a local array and packed memory, in one launch (on a CPU device
 * a launch costs more than packing a face), in 32-bit words: one row of work-items per row of a
 * face (its cells along x), LANES wide, walking the row. Face f's row of the table: its box's
 * first word in the local array when sending and when receiving, its first packed word, its
 * first row among all faces' rows, its words along x, its extent along y and its rows. Received
 * faces are packed `base` words after the sent ones. */
#define FACE_ROW 7
#define LANES 32
#define STR_(x) #x
#define STR(x) STR_(x)
static const char faces_source[] =
    "GP_KERNEL void gp_mpi_faces(GP_GLOBAL uint *grid, GP_GLOBAL uint *packed, GP_GLOBAL const ulong *faces,\n"
    "                            uint first, uint last, ulong lx, ulong ly, uint unpack, ulong base)\n"
    "{\n"
    "    ulong r = faces[" STR(FACE_ROW) " * first + 3] + gp_global_id(1);\n"
    "    uint f = first;\n"
    "    while (f < last && r >= faces[" STR(FACE_ROW) " * (f + 1) + 3]) f++;\n"
    "    GP_GLOBAL const ulong *d = faces + " STR(FACE_ROW) " * f;\n"
    "    if (r >= d[3] + d[6]) return;\n"
    "    ulong row = r - d[3], ex = d[4];\n"
    "    GP_GLOBAL uint *g = grid + d[unpack] + lx * (row % d[5] + ly * (row / d[5]));\n"
    "    GP_GLOBAL uint *p = packed + base + d[2] + row * ex;\n"
    "    for (ulong x = gp_global_id(0); x < ex; x += gp_global_size(0)) {\n"
    "        if (unpack) g[x] = p[x];\n"
    "        else p[x] = g[x];\n"
    "    }\n"
    "}\n";

/* Checks what one rank can check alone. */
static gp_status check_stencil(const char *fn, const gp_stencil *s)
{
    if (!s) return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: stencil is NULL", fn);
    if (s->shape < GP_STENCIL_5POINT || s->shape > GP_STENCIL_7POINT)
        return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_stencil_shape", fn, (int)s->shape);
    if (s->type != GP_F32 && s->type != GP_F64)
        return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: type %d; stencils are GP_F32 or GP_F64", fn,
                                 (int)s->type);
    if ((unsigned)s->boundary > GP_BOUNDARY_ZERO)
        return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_boundary", fn, (int)s->boundary);
    if (!s->nx || !s->ny || !s->nz || s->nx > INT_MAX || s->ny > INT_MAX || s->nz > INT_MAX)
        return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT,
                                 "%s: the grid is %zu x %zu x %zu; every side must be 1 to %d", fn, s->nx, s->ny, s->nz,
                                 INT_MAX);
    if (s->shape != GP_STENCIL_7POINT && s->nz != 1)
        return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: nz is %zu; the 2D shapes take nz = 1", fn, s->nz);
    return GP_SUCCESS;
}

/* A fingerprint of the arguments that every rank must pass alike (FNV-1a of their values). */
static uint64_t fingerprint(const gp_stencil *s, const int *dims)
{
    double values[19] = {(double)s->shape, (double)s->type, (double)s->boundary, (double)s->nx, (double)s->ny,
                         (double)s->nz, s->source_weight, dims[0], dims[1], dims[2]};
    memcpy(values + 10, s->weights, sizeof s->weights);
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)values;
    for (size_t i = 0; i < sizeof values; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void release(gp_mpi_grid *g)
{
    if (g->compute) gp_stream_synchronize(g->compute);
    if (g->comm_stream) gp_stream_synchronize(g->comm_stream);
    for (int i = 0; i < 5; i++) gp_reduce_kernel_destroy(g->reducers[i]);
    gp_kernel_destroy(g->faces_kernel);
    gp_program_destroy(g->program);
    if (g->host) gp_buffer_unmap(NULL, g->mapped ? g->packed : g->pinned);
    gp_buffer *buffers[] = {g->u[0], g->u[1], g->source, g->packed, g->pinned, g->table};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++) gp_buffer_destroy(buffers[i]);
    gp_event_destroy(g->interior_done);
    gp_event_destroy(g->slabs_done);
    gp_stream_destroy(g->compute);
    gp_stream_destroy(g->comm_stream);
    if (g->comm != MPI_COMM_NULL) MPI_Comm_free(&g->comm);
    free(g);
}

/* The device objects of a grid whose geometry is planned. */
static gp_status allocate(gp_mpi_grid *g, const char *fn)
{
    gp_status st = GP_SUCCESS;
    size_t bytes = g->cells * g->es, zero = 0;
    for (int i = 0; i < 2; i++) {
        KEEP(st, gp_buffer_create(g->dev, GP_MEMORY_DEVICE, bytes, &g->u[i]));
        KEEP(st, gp_buffer_fill(NULL, g->u[i], 0, bytes, &zero, g->es));
    }
    KEEP(st, gp_stream_create(g->dev, &g->compute));
    KEEP(st, gp_stream_create(g->dev, &g->comm_stream));
    KEEP(st, gp_event_create(g->dev, &g->interior_done));
    KEEP(st, gp_event_create(g->dev, &g->slabs_done));
    if (g->nfaces == 0 || st != GP_SUCCESS) return st;

    /* GPUPORT_MPI_PATH: mapped (kernels pack into host memory that MPI reads), staged (device
     * buffers and copies through pinned memory), or auto: mapped where the device shares the
     * host's memory. */
    gp_device_info info;
    KEEP(st, gp_device_get_info(g->dev, &info));
    const char *path = getenv("GPUPORT_MPI_PATH");
    if (st == GP_SUCCESS && path && *path && strcmp(path, "auto") && strcmp(path, "mapped") && strcmp(path, "staged"))
        return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: GPUPORT_MPI_PATH=\"%s\" is not auto, mapped or staged",
                                 fn, path);
    g->mapped = path && *path && strcmp(path, "auto") ? strcmp(path, "mapped") == 0 : info.unified_memory;
    /* One buffer for the faces sent and those received: one map and one unmap a round. */
    size_t xbytes = 2 * g->exchange_cells * g->es;
    KEEP(st, gp_buffer_create(g->dev, g->mapped ? GP_MEMORY_MAPPED : GP_MEMORY_DEVICE, xbytes, &g->packed));
    if (!g->mapped) {
        KEEP(st, gp_buffer_create(g->dev, GP_MEMORY_PINNED, xbytes, &g->pinned));
        KEEP(st, gp_buffer_map(NULL, g->pinned, &g->host));
    }
    /* The table counts 32-bit words: an element is es / 4 of them. */
    uint64_t rows[6 * FACE_ROW] = {0}, w = g->es / 4, first_row = 0;
    for (int i = 0; i < g->nfaces; i++) {
        const face *f = &g->faces[i];
        uint64_t *r = rows + FACE_ROW * i;
        r[0] = index_of(g->block.local, f->send) * w;
        r[1] = index_of(g->block.local, f->recv) * w;
        r[2] = f->at * w;
        r[3] = first_row;
        r[4] = f->extent[0] * w;
        r[5] = f->extent[1];
        r[6] = f->extent[1] * f->extent[2];
        first_row += r[6];
    }
    KEEP(st, gp_buffer_create(g->dev, GP_MEMORY_DEVICE, sizeof rows, &g->table));
    KEEP(st, gp_buffer_write(NULL, g->table, 0, rows, sizeof rows));
    KEEP(st, gp_program_create(g->dev, faces_source, NULL, &g->program));
    KEEP(st, gp_kernel_create(g->program, "gp_mpi_faces", &g->faces_kernel));
    return st;
}

gp_status gp_mpi_grid_create(MPI_Comm comm, gp_device *device, const gp_stencil *stencil, const int dims_in[3],
                             gp_mpi_grid **grid)
{
    static const char fn[] = "gp_mpi_grid_create";
    if (comm == MPI_COMM_NULL) return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: comm is MPI_COMM_NULL", fn);
    int rank = 0, size = 1, dims[3] = {0, 0, 0};
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    /* What each rank can check alone, then that every rank passed the same. */
    gp_status st = check_stencil(fn, stencil);
    if (st == GP_SUCCESS && !grid) st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: grid is NULL", fn);
    if (st == GP_SUCCESS && !device) st = gp_set_last_error(GP_ERROR_INVALID_HANDLE, "%s: device is NULL", fn);
    if (st == GP_SUCCESS) {
        long fixed = 1;
        for (int d = 0; d < 3; d++) {
            dims[d] = dims_in ? dims_in[d] : 0;
            if (dims[d] < 0) st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: dims[%d] is %d", fn, d, dims[d]);
            fixed *= dims[d] ? dims[d] : 1;
        }
        if (st == GP_SUCCESS && stencil->shape != GP_STENCIL_7POINT) {
            if (dims[2] > 1)
                st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: dims[2] is %d; a 2D shape takes 1 rank along z",
                                       fn, dims[2]);
            dims[2] = 1;
        }
        if (st == GP_SUCCESS && size % fixed)
            st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: dims %d x %d x %d do not divide the %d ranks", fn,
                                   dims_in[0], dims_in[1], dims_in[2], size);
        if (st == GP_SUCCESS) {
            int free_[3] = {!dims[0], !dims[1], !dims[2]};
            int err = MPI_Dims_create(size, 3, dims);
            if (err != MPI_SUCCESS) st = mpi_fail(fn, "MPI_Dims_create", err);
            /* MPI_Dims_create puts the most ranks first (x); the chosen counts go the other way
             * round, the most along the slowest dimension, whose faces are contiguous in memory
             * (whole rows to copy, not one cell a row) and whose slabs are whole rows or planes. */
            for (int a = 0; a < 3; a++)
                for (int b = a + 1; b < 3; b++)
                    if (free_[a] && free_[b] && dims[a] > dims[b]) {
                        int t = dims[a];
                        dims[a] = dims[b];
                        dims[b] = t;
                    }
        }
        if (st == GP_SUCCESS && (long)dims[0] * dims[1] * dims[2] != size)
            st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: dims %d x %d x %d are not the %d ranks", fn,
                                   dims[0], dims[1], dims[2], size);
        const size_t sides[3] = {stencil->nx, stencil->ny, stencil->nz};
        for (int d = 0; d < 3 && st == GP_SUCCESS; d++)
            if (sides[d] < (size_t)dims[d])
                st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT,
                                       "%s: %zu cells along %c for %d ranks; each block needs at least one", fn,
                                       sides[d], "xyz"[d], dims[d]);
    }
    st = agree(comm, st);
    if (st != GP_SUCCESS) return st;
    uint64_t mine = fingerprint(stencil, dims), root = mine;
    MPI_Bcast(&root, 1, MPI_UINT64_T, 0, comm);
    if (root != mine)
        st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: this rank's stencil or dims differ from rank 0's", fn);
    st = agree(comm, st);
    if (st != GP_SUCCESS) return st;

    gp_mpi_grid *g = calloc(1, sizeof *g);
    MPI_Comm cart = MPI_COMM_NULL;
    int periods[3] = {0, 0, 0}, err = MPI_SUCCESS;
    if (!g) st = gp_set_last_error(GP_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    /* Ranks keep their numbers (no reordering), so each keeps the device it picked. */
    err = MPI_Cart_create(comm, 3, dims, periods, 0, &cart);
    if (err != MPI_SUCCESS && st == GP_SUCCESS) st = mpi_fail(fn, "MPI_Cart_create", err);
    if (!g) {
        if (cart != MPI_COMM_NULL) MPI_Comm_free(&cart);
        return agree(comm, st);
    }
    g->comm = cart;
    if (cart != MPI_COMM_NULL) MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    g->dev = device;
    g->stencil = *stencil;
    g->es = gp_type_size(stencil->type);
    g->mpi_type = stencil->type == GP_F32 ? MPI_FLOAT : MPI_DOUBLE;
    gp_mpi_block *b = &g->block;
    b->rank = rank;
    b->size = size;
    b->comm = cart;
    int below[3] = {MPI_PROC_NULL, MPI_PROC_NULL, MPI_PROC_NULL}, above[3] = {MPI_PROC_NULL, MPI_PROC_NULL, MPI_PROC_NULL};
    if (st == GP_SUCCESS) {
        MPI_Cart_coords(cart, rank, 3, b->coords);
        for (int d = 0; d < 3; d++) MPI_Cart_shift(cart, d, 1, &below[d], &above[d]);
    }
    const size_t sides[3] = {stencil->nx, stencil->ny, stencil->nz};
    g->cells = 1;
    for (int d = 0; d < 3; d++) {
        b->dims[d] = dims[d];
        split(sides[d], dims[d], b->coords[d], &b->origin[d], &b->extent[d]);
        g->lo[d] = below[d] != MPI_PROC_NULL;
        g->hi[d] = above[d] != MPI_PROC_NULL;
        b->local[d] = b->extent[d] + (size_t)g->lo[d] + (size_t)g->hi[d];
        g->cells *= b->local[d];
    }
    const size_t first[3] = {(size_t)g->lo[0], (size_t)g->lo[1], (size_t)g->lo[2]};
    b->first = index_of(b->local, first);
    g->local = *stencil;
    g->local.nx = b->local[0];
    g->local.ny = b->local[1];
    g->local.nz = b->local[2];
    plan(g, below, above);
    if (st == GP_SUCCESS) st = allocate(g, fn);
    for (int i = 0; i < g->nfaces; i++) g->stats.halo_bytes += g->faces[i].cells * g->es;
    st = agree(comm, st);
    if (st != GP_SUCCESS) {
        release(g);
        return st;
    }
    *grid = g;
    return GP_SUCCESS;
}

gp_status gp_mpi_grid_destroy(gp_mpi_grid *grid)
{
    if (grid) release(grid);
    return GP_SUCCESS;
}

gp_status gp_mpi_grid_get_block(const gp_mpi_grid *grid, gp_mpi_block *block)
{
    if (!grid || !block)
        return gp_set_last_error(grid ? GP_ERROR_INVALID_ARGUMENT : GP_ERROR_INVALID_HANDLE,
                                 "gp_mpi_grid_get_block: %s is NULL", grid ? "block" : "grid");
    *block = grid->block;
    return GP_SUCCESS;
}

gp_status gp_mpi_grid_get_stats(const gp_mpi_grid *grid, gp_mpi_stats *stats)
{
    if (!grid || !stats)
        return gp_set_last_error(grid ? GP_ERROR_INVALID_ARGUMENT : GP_ERROR_INVALID_HANDLE,
                                 "gp_mpi_grid_get_stats: %s is NULL", grid ? "stats" : "grid");
    *stats = grid->stats;
    return GP_SUCCESS;
}

static gp_buffer *field_buffer(const gp_mpi_grid *g, gp_mpi_field field)
{
    return field == GP_MPI_U ? g->u[g->cur] : field == GP_MPI_SOURCE ? g->source : NULL;
}

static gp_status check_field(const char *fn, const gp_mpi_grid *g, gp_mpi_field field)
{
    if (!g) return gp_set_last_error(GP_ERROR_INVALID_HANDLE, "%s: grid is NULL", fn);
    if (field != GP_MPI_U && field != GP_MPI_SOURCE)
        return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_mpi_field", fn, (int)field);
    return GP_SUCCESS;
}

gp_status gp_mpi_grid_get_view(const gp_mpi_grid *grid, gp_mpi_field field, gp_view *view)
{
    static const char fn[] = "gp_mpi_grid_get_view";
    gp_status st = check_field(fn, grid, field);
    if (st != GP_SUCCESS) return st;
    if (!view) return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: view is NULL", fn);
    if (!field_buffer(grid, field))
        return gp_set_last_error(GP_ERROR_NOT_FOUND, "%s: the grid has no source (gp_mpi_grid_scatter makes it)", fn);
    *view = GP_VIEW(field_buffer(grid, field));
    return GP_SUCCESS;
}

/* ---- Scatter and gather --------------------------------------------------------------------- */

/* An MPI datatype for the block of rank r within the global grid (global) or within r's local
 * array (local only for r == this rank). */
static int block_type(const gp_mpi_grid *g, int r, int global, MPI_Datatype *type)
{
    int coords[3], sizes[3], sub[3], starts[3];
    MPI_Cart_coords(g->comm, r, 3, coords);
    const size_t n[3] = {g->stencil.nx, g->stencil.ny, g->stencil.nz};
    for (int d = 0; d < 3; d++) {
        size_t origin, extent;
        split(n[d], g->block.dims[d], coords[d], &origin, &extent);
        /* MPI_ORDER_C: the last dimension varies fastest, so z, y, x. */
        sizes[2 - d] = (int)(global ? n[d] : g->block.local[d]);
        sub[2 - d] = (int)extent;
        starts[2 - d] = (int)(global ? origin : (size_t)g->lo[d]);
    }
    int err = MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, g->mpi_type, type);
    if (err == MPI_SUCCESS) err = MPI_Type_commit(type);
    return err;
}

/* Moves every block between root's global array and the ranks' local images (to_root: the
 * gather's direction). */
static gp_status move_blocks(gp_mpi_grid *g, const char *fn, int root, void *global, void *image, int to_root)
{
    int size = g->block.size, rank = g->block.rank, err = MPI_SUCCESS;
    MPI_Request *req = calloc((size_t)size + 1, sizeof *req);
    MPI_Datatype *types = calloc((size_t)size + 1, sizeof *types);
    if (!req || !types) {
        free(req);
        free(types);
        return gp_set_last_error(GP_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    }
    int n = 0;
    if (rank == root)
        for (int r = 0; r < size && err == MPI_SUCCESS; r++) {
            err = block_type(g, r, 1, &types[n]);
            if (err != MPI_SUCCESS) break;
            err = to_root ? MPI_Irecv(global, 1, types[n], r, TAG, g->comm, &req[n])
                          : MPI_Isend(global, 1, types[n], r, TAG, g->comm, &req[n]);
            n++;
        }
    if (err == MPI_SUCCESS) err = block_type(g, rank, 0, &types[n]);
    if (err == MPI_SUCCESS) {
        err = to_root ? MPI_Isend(image, 1, types[n], root, TAG, g->comm, &req[n])
                      : MPI_Irecv(image, 1, types[n], root, TAG, g->comm, &req[n]);
        n++;
    }
    if (err == MPI_SUCCESS) err = MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < n; i++) MPI_Type_free(&types[i]);
    free(req);
    free(types);
    return err == MPI_SUCCESS ? GP_SUCCESS : mpi_fail(fn, to_root ? "gathering a block" : "scattering a block", err);
}

gp_status gp_mpi_grid_scatter(gp_mpi_grid *grid, gp_mpi_field field, int root, const void *global)
{
    static const char fn[] = "gp_mpi_grid_scatter";
    gp_status st = check_field(fn, grid, field);
    if (st != GP_SUCCESS) return st; /* no grid: no communicator to tell the others on */
    if (root < 0 || root >= grid->block.size)
        st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: root %d is no rank of the grid's %d", fn, root,
                               grid->block.size);
    if (st == GP_SUCCESS && grid->block.rank == root && !global)
        st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: global is NULL on the root", fn);
    size_t bytes = grid->cells * grid->es;
    void *image = st == GP_SUCCESS ? calloc(1, bytes ? bytes : 1) : NULL;
    if (st == GP_SUCCESS && !image) st = gp_set_last_error(GP_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    gp_buffer *target = NULL;
    if (st == GP_SUCCESS && field == GP_MPI_SOURCE) {
        if (!grid->source) st = gp_buffer_create(grid->dev, GP_MEMORY_DEVICE, bytes, &grid->source);
        target = grid->source;
    } else if (st == GP_SUCCESS) {
        target = grid->u[grid->cur];
    }
    st = agree(grid->comm, st);
    if (st == GP_SUCCESS) st = move_blocks(grid, fn, root, (void *)global, image, 0);
    if (st == GP_SUCCESS) st = gp_buffer_write(grid->comm_stream, target, 0, image, bytes);
    if (st == GP_SUCCESS && field == GP_MPI_U) grid->last_steps = 0;
    free(image);
    return agree(grid->comm, st);
}

gp_status gp_mpi_grid_gather(gp_mpi_grid *grid, gp_mpi_field field, int root, void *global)
{
    static const char fn[] = "gp_mpi_grid_gather";
    gp_status st = check_field(fn, grid, field);
    if (st != GP_SUCCESS) return st;
    if (root < 0 || root >= grid->block.size)
        st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: root %d is no rank of the grid's %d", fn, root,
                               grid->block.size);
    if (st == GP_SUCCESS && grid->block.rank == root && !global)
        st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: global is NULL on the root", fn);
    if (st == GP_SUCCESS && !field_buffer(grid, field))
        st = gp_set_last_error(GP_ERROR_NOT_FOUND, "%s: the grid has no source (gp_mpi_grid_scatter makes it)", fn);
    size_t bytes = grid->cells * grid->es;
    void *image = st == GP_SUCCESS ? malloc(bytes ? bytes : 1) : NULL;
    if (st == GP_SUCCESS && !image) st = gp_set_last_error(GP_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    KEEP(st, gp_stream_synchronize(grid->compute));
    KEEP(st, gp_buffer_read(grid->comm_stream, field_buffer(grid, field), 0, image, bytes));
    st = agree(grid->comm, st);
    if (st == GP_SUCCESS) st = move_blocks(grid, fn, root, global, image, 1);
    free(image);
    return agree(grid->comm, st);
}

/* ---- Steps ------------------------------------------------------------------------------- */

/* The faces of one round (faces first..last, packed one after another) between the local
 * array `grid` and g->packed, the sent ones or (unpack) the received ones, queued on the comm
 * stream. */
static gp_status move_faces(gp_mpi_grid *g, int round, gp_buffer *grid, int unpack)
{
    uint32_t first = UINT32_MAX, last = 0, dir = (uint32_t)unpack;
    for (int i = 0; i < g->nfaces; i++)
        if (g->faces[i].round == round) {
            first = first == UINT32_MAX ? (uint32_t)i : first;
            last = (uint32_t)i;
        }
    if (first == UINT32_MAX) return GP_SUCCESS;
    uint64_t w = g->es / 4, lx = g->block.local[0] * w, ly = g->block.local[1];
    uint64_t base = unpack ? g->exchange_cells * w : 0;
    size_t rows = 0, global[2], local[2] = {LANES, 1};
    for (uint32_t i = first; i <= last; i++) rows += g->faces[i].extent[1] * g->faces[i].extent[2];
    global[0] = LANES;
    global[1] = rows;
    gp_arg args[] = {GP_BUFFER(grid), GP_BUFFER(g->packed), GP_BUFFER(g->table), GP_VALUE(first), GP_VALUE(last),
                     GP_VALUE(lx),     GP_VALUE(ly),        GP_VALUE(dir),      GP_VALUE(base)};
    return gp_kernel_launch(g->comm_stream, g->faces_kernel, 2, global, local, sizeof args / sizeof args[0], args);
}

/* Mapped path: unmaps the exchange buffer where it is mapped (also after a failed unmap, which
 * would otherwise fail every later run). */
static gp_status unmap_exchange(gp_mpi_grid *g)
{
    gp_status st = g->host ? gp_buffer_unmap(g->comm_stream, g->packed) : GP_SUCCESS;
    if (st == GP_SUCCESS) g->host = NULL;
    return st;
}

/* Enqueues the packing of one round's faces of `in` into g->packed, on the comm stream. */
static gp_status pack(gp_mpi_grid *g, gp_buffer *in, int round, gp_status st)
{
    if (g->mapped) KEEP(st, unmap_exchange(g));
    KEEP(st, move_faces(g, round, in, 0));
    return st;
}

/* The rest of one round of the halo exchange, once pack() has been called; st is the status so
 * far: after a failure the messages still go (with whatever the buffers hold) so that no peer
 * waits forever. */
static gp_status exchange(gp_mpi_grid *g, const char *fn, gp_buffer *in, int round, gp_status st)
{
    size_t first = SIZE_MAX, end = 0;
    for (int i = 0; i < g->nfaces; i++) {
        const face *f = &g->faces[i];
        if (f->round != round) continue;
        first = f->at < first ? f->at : first;
        end = f->at + f->cells > end ? f->at + f->cells : end;
    }
    if (first == SIZE_MAX) return st;
    /* The received faces lie `back` bytes after the sent ones. */
    size_t off = first * g->es, bytes = (end - first) * g->es, back = g->exchange_cells * g->es;
    if (g->mapped) {
        KEEP(st, gp_buffer_map(g->comm_stream, g->packed, &g->host));
    } else {
        KEEP(st, gp_buffer_read_async(g->comm_stream, g->packed, off, (char *)g->host + off, bytes));
        KEEP(st, gp_stream_synchronize(g->comm_stream));
    }
    double t0 = now();
    /* Messages go whatever st says; without host memory they carry nothing. */
    static char dummy[1];
    char *host = g->host;
    MPI_Request req[12];
    int n = 0, err = MPI_SUCCESS;
    for (int i = 0; i < g->nfaces && err == MPI_SUCCESS; i++) {
        const face *f = &g->faces[i];
        if (f->round != round) continue;
        char *s = host ? host + f->at * g->es : dummy, *r = host ? host + back + f->at * g->es : dummy;
        int count = host ? (int)(f->cells * g->es) : 0;
        err = MPI_Irecv(r, count, MPI_BYTE, f->peer, TAG + round, g->comm, &req[n++]);
        if (err == MPI_SUCCESS) err = MPI_Isend(s, count, MPI_BYTE, f->peer, TAG + round, g->comm, &req[n++]);
    }
    if (err == MPI_SUCCESS) err = MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    g->stats.mpi_s += now() - t0;
    if (err != MPI_SUCCESS && st == GP_SUCCESS) st = mpi_fail(fn, "exchanging halos", err);
    if (g->mapped) {
        gp_status u = unmap_exchange(g); /* whatever happened before */
        KEEP(st, u);
    } else {
        KEEP(st, gp_buffer_write_async(g->comm_stream, g->packed, back + off, host + back + off, bytes));
    }
    KEEP(st, move_faces(g, round, in, 1));
    return st;
}

gp_status gp_mpi_grid_run(gp_mpi_grid *grid, size_t steps)
{
    static const char fn[] = "gp_mpi_grid_run";
    if (!grid) return gp_set_last_error(GP_ERROR_INVALID_HANDLE, "%s: grid is NULL", fn);
    gp_mpi_grid *g = grid;
    gp_view source = g->source ? GP_VIEW(g->source) : GP_VIEW(NULL);
    gp_status st = GP_SUCCESS;
    double t0 = now();
    if (g->nfaces == 0) {
        /* No neighbour: the block is the grid, and one call runs every step. */
        gp_view result;
        KEEP(st, gp_stencil_run(g->compute, &g->local, steps, GP_VIEW(g->u[g->cur]), GP_VIEW(g->u[1 - g->cur]),
                                source, &result));
        if (st == GP_SUCCESS && steps % 2) g->cur = 1 - g->cur;
    } else {
        for (size_t s = 0; s < steps; s++) {
            gp_buffer *in = g->u[g->cur], *out = g->u[1 - g->cur];
            /* The faces are packed before the interior is enqueued: where a device runs its
             * kernels one after another (pocl), packed after it they would wait for it, and
             * the messages could not travel while it computes. */
            st = pack(g, in, 0, st);
            /* The interior reads the cells the last slabs wrote. */
            if (s > 0) KEEP(st, gp_stream_wait_event(g->compute, g->slabs_done));
            KEEP(st, gp_stencil_apply_region(g->compute, &g->local, g->interior[0], g->interior[1], GP_VIEW(out),
                                             GP_VIEW(in), source));
            KEEP(st, gp_event_record(g->interior_done, g->compute));
            for (int r = 0; r < g->rounds; r++) st = exchange(g, fn, in, r, r == 0 ? st : pack(g, in, r, st));
            /* The slabs write cells that the last interior read. */
            KEEP(st, gp_stream_wait_event(g->comm_stream, g->interior_done));
            for (size_t i = 0; i < g->nslabs; i++)
                KEEP(st, gp_stencil_apply_region(g->comm_stream, &g->local, g->slabs[i][0], g->slabs[i][1],
                                                 GP_VIEW(out), GP_VIEW(in), source));
            KEEP(st, gp_event_record(g->slabs_done, g->comm_stream));
            g->cur = 1 - g->cur;
        }
    }
    KEEP(st, gp_stream_synchronize(g->compute));
    KEEP(st, gp_stream_synchronize(g->comm_stream));
    g->stats.steps += steps;
    g->stats.run_s += now() - t0;
    st = agree(g->comm, st);
    g->last_steps = st == GP_SUCCESS ? steps : 0;
    return st;
}

gp_status gp_mpi_grid_exchange(gp_mpi_grid *grid)
{
    static const char fn[] = "gp_mpi_grid_exchange";
    if (!grid) return gp_set_last_error(GP_ERROR_INVALID_HANDLE, "%s: grid is NULL", fn);
    gp_status st = GP_SUCCESS;
    double t0 = now();
    /* The faces are the last run's results, written on both streams. */
    KEEP(st, gp_stream_synchronize(grid->compute));
    for (int r = 0; r < grid->rounds; r++) st = exchange(grid, fn, grid->u[grid->cur], r, pack(grid, grid->u[grid->cur], r, st));
    KEEP(st, gp_stream_synchronize(grid->comm_stream));
    grid->stats.exchange_s += now() - t0;
    grid->stats.exchanges++;
    return agree(grid->comm, st);
}

/* ---- Reductions ---------------------------------------------------------------------------- */

/* The rank's reduction over its block: a gpuport reduction over the elements from the block's
 * first cell to its last, the halo cells among them masked out by their index. */
static gp_status block_reducer(gp_mpi_grid *g, gp_mpi_reduce_op op, gp_reduce_kernel **k, size_t *count)
{
    const size_t *L = g->block.local, *E = g->block.extent;
    const size_t last[3] = {(size_t)g->lo[0] + E[0] - 1, (size_t)g->lo[1] + E[1] - 1, (size_t)g->lo[2] + E[2] - 1};
    *count = index_of(L, last) - g->block.first + 1;
    if (g->reducers[op]) {
        *k = g->reducers[op];
        return GP_SUCCESS;
    }
    /* Element first + i is at x = (first + i) % L0, y = (first + i) / L0 % L1; the span holds
     * whole rows in 2D and whole planes' rows in 3D, so only x (and in 3D y) need a test. */
    char mask[256] = "1", map[400];
    int n = 0;
    if (L[0] != E[0])
        n += snprintf(mask, sizeof mask, "((i + %zuUL) %% %zuUL - %dUL < %zuUL)", g->block.first, L[0], g->lo[0], E[0]);
    if (L[1] != E[1] && L[2] > 1)
        snprintf(mask + n, sizeof mask - (size_t)n, "%s((i + %zuUL) / %zuUL %% %zuUL - %dUL < %zuUL)", n ? " && " : "",
                 g->block.first, L[0], L[1], g->lo[1], E[1]);
    const char *inf = g->stencil.type == GP_F32 ? "GP_INFINITY_F" : "GP_INFINITY_D";
    char identity[32] = "0";
    const char *combine = "a + b";
    switch (op) {
    case GP_MPI_SUM: snprintf(map, sizeof map, "%s ? x : 0", mask); break;
    case GP_MPI_MIN:
        snprintf(map, sizeof map, "%s ? x : %s", mask, inf);
        snprintf(identity, sizeof identity, "%s", inf);
        combine = "a < b ? a : b";
        break;
    case GP_MPI_MAX:
        snprintf(map, sizeof map, "%s ? x : -%s", mask, inf);
        snprintf(identity, sizeof identity, "-%s", inf);
        combine = "a > b ? a : b";
        break;
    case GP_MPI_NORM: snprintf(map, sizeof map, "%s ? x * x : 0", mask); break;
    default: snprintf(map, sizeof map, "%s ? (x - y) * (x - y) : 0", mask); break;
    }
    gp_type types[2] = {g->stencil.type, g->stencil.type};
    gp_status st = gp_reduce_kernel_create(g->dev, op == GP_MPI_UPDATE_NORM ? 2 : 1, types, g->stencil.type, map,
                                           combine, identity, &g->reducers[op]);
    *k = g->reducers[op];
    return st;
}

gp_status gp_mpi_grid_reduce(gp_mpi_grid *grid, gp_mpi_reduce_op op, double *result)
{
    static const char fn[] = "gp_mpi_grid_reduce";
    if (!grid) return gp_set_last_error(GP_ERROR_INVALID_HANDLE, "%s: grid is NULL", fn);
    gp_mpi_grid *g = grid;
    gp_status st = GP_SUCCESS;
    if ((unsigned)op > GP_MPI_UPDATE_NORM)
        st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_mpi_reduce_op", fn, (int)op);
    else if (!result)
        st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: result is NULL", fn);
    else if (op == GP_MPI_UPDATE_NORM && g->last_steps == 0)
        st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT,
                               "%s: GP_MPI_UPDATE_NORM needs a run of at least one step since U was last set", fn);
    gp_reduce_kernel *k = NULL;
    size_t count = 0;
    union {
        float f;
        double d;
    } part;
    KEEP(st, block_reducer(g, op, &k, &count));
    gp_view in[2] = {GP_VIEW_AT(g->u[g->cur], g->block.first), GP_VIEW_AT(g->u[1 - g->cur], g->block.first)};
    KEEP(st, gp_reduce_kernel_run_to_host(g->compute, k, count, in, &part));
    double mine = st != GP_SUCCESS ? 0 : g->stencil.type == GP_F32 ? (double)part.f : part.d, all = 0;
    st = agree(g->comm, st);
    if (st != GP_SUCCESS) return st;
    MPI_Op mop = op == GP_MPI_MIN ? MPI_MIN : op == GP_MPI_MAX ? MPI_MAX : MPI_SUM;
    int err = MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, mop, g->comm);
    if (err != MPI_SUCCESS) return mpi_fail(fn, "MPI_Allreduce", err);
    *result = op >= GP_MPI_NORM ? sqrt(all) : all;
    return GP_SUCCESS;
}
