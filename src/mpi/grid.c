/* A grid's blocks, halos and faces over the ranks; creating and destroying it, its getters,
 * and scattering and gathering its fields. */
#include "internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- The grid's geometry ----------------------------------------------------------------- */

/* Block c of p along a side of n cells: the first n % p blocks have one cell more. */
static void split(size_t n, int p, int c, size_t *origin, size_t *extent)
{
    size_t base = n / (size_t)p, extra = n % (size_t)p, uc = (size_t)c;
    *extent = base + (uc < extra);
    *origin = uc * base + (uc < extra ? uc : extra);
}

/* The faces, and each phase's interior and slabs, of a block whose neighbours are known (lo,
 * hi: the halos' depths, 0 without a neighbour). With halos D cells deep the faces are D cells
 * thick and travel before every D-th step: the step after an exchange (phase 0) computes the
 * block and D - 1 halo cells beyond it on each side with a neighbour, phase p D - 1 - p of
 * them, so that the last phase computes the block alone. A phase's slabs are its D cells next to
 * each such side; its interior the rest. Phase 0's slabs read the halos just received, and the
 * last phase's are the faces that travel next. */
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
            size_t depth = (size_t)(side ? g->hi[d] : g->lo[d]);
            face *f = &g->faces[g->nfaces++];
            f->peer = peer;
            f->round = box_shape ? d : 0;
            f->cells = 1;
            for (int e = 0; e < 3; e++) {
                /* Dimensions before d whole (halos included, carrying the corners); after d the
                 * block's cells. */
                size_t from = e < d ? 0 : (size_t)g->lo[e], count = e < d ? L[e] : E[e];
                if (e == d) {
                    from = side ? (size_t)g->lo[d] + E[d] - depth : (size_t)g->lo[d];
                    count = depth;
                }
                f->send[e] = from;
                f->recv[e] = from;
                f->extent[e] = count;
                f->cells *= count;
            }
            f->recv[d] = side ? f->send[d] + depth : f->send[d] - depth;
            f->at = g->exchange_cells;
            g->exchange_cells += f->cells;
        }
    for (int p = 0; p < g->depth; p++) {
        regions *r = &g->phase[p];
        size_t c0[3], c1[3], in0[3], in1[3];
        for (int d = 0; d < 3; d++) {
            size_t lo = (size_t)g->lo[d], hi = (size_t)g->hi[d], beyond = (size_t)(g->depth - 1 - p);
            c0[d] = lo - (lo ? beyond : 0);
            c1[d] = lo + E[d] + (hi ? beyond : 0);
            in0[d] = c0[d] + lo < c1[d] ? c0[d] + lo : c1[d];
            in1[d] = c1[d] - hi > in0[d] ? c1[d] - hi : in0[d];
            r->whole[0][d] = c0[d];
            r->whole[1][d] = c1[d] - c0[d];
            r->interior[0][d] = in0[d];
            r->interior[1][d] = in1[d] - in0[d];
        }
        /* The slabs: the rest of the phase's cells, dimension by dimension (those before d within
         * the interior, those after whole). */
        r->nslabs = 0;
        for (int d = 0; d < 3; d++)
            for (int side = 0; side < 2; side++) {
                size_t from = side ? in1[d] : c0[d], to = side ? c1[d] : in0[d];
                if (from == to) continue;
                size_t(*s)[3] = r->slabs[r->nslabs++];
                for (int e = 0; e < 3; e++) {
                    s[0][e] = e < d ? in0[e] : c0[e];
                    s[1][e] = e < d ? in1[e] - in0[e] : c1[e] - c0[e];
                }
                s[0][d] = from;
                s[1][d] = to - from;
            }
    }
}

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
static uint64_t fingerprint(const gp_stencil *s, const int *dims, int depth)
{
    double values[20] = {(double)s->shape, (double)s->type, (double)s->boundary, (double)s->nx, (double)s->ny,
                         (double)s->nz, s->source_weight, dims[0], dims[1], dims[2], depth};
    memcpy(values + 11, s->weights, sizeof s->weights);
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)values;
    for (size_t i = 0; i < sizeof values; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void release(gp_mpi_grid *g)
{
    if (g->compute) gp_stream_synchronize(g->compute);
    if (g->comm_stream) gp_stream_synchronize(g->comm_stream);
    gp__transport_close(g);
    for (int i = 0; i < 5; i++) gp_reduce_kernel_destroy(g->reducers[i]);
    gp_kernel_destroy(g->faces_kernel);
    gp_program_destroy(g->program);
    if (g->host) gp_buffer_unmap(NULL, g->mapped ? g->packed : g->pinned);
    gp_buffer *buffers[] = {g->u[0], g->u[1], g->source, g->packed, g->pinned, g->table};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++) gp_buffer_destroy(buffers[i]);
    gp_event_destroy(g->interior_done[0]);
    gp_event_destroy(g->interior_done[1]);
    gp_event_destroy(g->slabs_done);
    gp_stream_destroy(g->compute);
    gp_stream_destroy(g->comm_stream);
    if (g->comm != MPI_COMM_NULL) MPI_Comm_free(&g->comm);
    free(g);
}

/* NCCL on the device takes any device address: a face that is one block of the local array (a
 * row of a 2D grid split along y, a plane of a 3D one split along z) travels from and into the
 * field itself, with no packing launch before it and no unpacking after. */
static void place_faces(gp_mpi_grid *g)
{
    const size_t *L = g->block.local;
    for (int i = 0; i < g->nfaces; i++) {
        const size_t *e = g->faces[i].extent;
        g->faces[i].in_place = (e[1] == 1 && e[2] == 1) || (e[0] == L[0] && (e[2] == 1 || e[1] == L[1]));
    }
}

/* The device objects of a grid whose geometry and transport are chosen. */
static gp_status allocate(gp_mpi_grid *g)
{
    gp_status st = GP_SUCCESS;
    size_t bytes = g->cells * g->es, zero = 0;
    for (int i = 0; i < 2; i++) {
        KEEP(st, gp_buffer_create(g->dev, GP_MEMORY_DEVICE, bytes, &g->u[i]));
        KEEP(st, gp_buffer_fill(NULL, g->u[i], 0, bytes, &zero, g->es));
        KEEP(st, gp_event_create(g->dev, &g->interior_done[i]));
    }
    KEEP(st, gp_stream_create(g->dev, &g->compute));
    KEEP(st, gp__priority_stream(g->dev, &g->comm_stream));
    KEEP(st, gp_event_create(g->dev, &g->slabs_done));
    if (g->nfaces == 0 || st != GP_SUCCESS) return st;

    /* One buffer for the faces sent and those received: one map and one unmap a round where
     * the host reads them in place (mapped, and an NCCL that takes host memory). */
    gp_mpi_transport t = g->transport.transport;
    g->mapped = t == GP_MPI_TRANSPORT_MAPPED || (t == GP_MPI_TRANSPORT_NCCL && gp__nccl_host_memory());
    size_t xbytes = 2 * g->exchange_cells * g->es;
    KEEP(st, gp_buffer_create(g->dev, g->mapped ? GP_MEMORY_MAPPED : GP_MEMORY_DEVICE, xbytes, &g->packed));
    if (t == GP_MPI_TRANSPORT_STAGED) {
        KEEP(st, gp_buffer_create(g->dev, GP_MEMORY_PINNED, xbytes, &g->pinned));
        KEEP(st, gp_buffer_map(NULL, g->pinned, &g->host));
    } else if (!g->mapped) {
        gp_native_buffer native;
        KEEP(st, gp_buffer_get_native(g->packed, &native));
        if (st == GP_SUCCESS) g->device_base = (char *)(uintptr_t)native.device_ptr;
    }
    if (t == GP_MPI_TRANSPORT_NCCL && !g->mapped) place_faces(g);
    KEEP(st, gp__faces_create(g));
    return st;
}

/* Ranks along the free dimensions (0 in dims) of the ones taken: MPI_Dims_create's counts,
 * the most along the slowest dimension, whose faces are contiguous in memory (whole rows to
 * copy, not one cell a row) and whose slabs are whole rows or planes. */
static int spread(int size, int dims[3])
{
    int free_[3] = {!dims[0], !dims[1], !dims[2]};
    int err = MPI_Dims_create(size, 3, dims);
    for (int a = 0; a < 3; a++)
        for (int b = a + 1; b < 3; b++)
            if (free_[a] && free_[b] && dims[a] > dims[b]) {
                int t = dims[a];
                dims[a] = dims[b];
                dims[b] = t;
            }
    return err;
}

/* Halo cells a middle rank of a layout sends a step: a face each way across each dimension it
 * splits (one where it splits in two). */
static double halo_cells(const size_t sides[3], const int dims[3])
{
    double block[3], h = 0;
    for (int d = 0; d < 3; d++) block[d] = (double)sides[d] / dims[d];
    for (int d = 0; d < 3; d++)
        if (dims[d] > 1) h += (dims[d] > 2 ? 2 : 1) * block[(d + 1) % 3] * block[(d + 2) % 3];
    return h;
}

/* The layout: dims_in where given. Where all are free, slabs along the slowest dimension (z; y
 * in 2D) while each has a cell and their halos are no larger than those of the layout below,
 * or at most twice as large where the faces travel in place (NCCL on the devices sends whole
 * planes from the field itself, with no packing): on four H100s, 512^3 strong, 1x1x4 ran 0.112
 * ms a step against 1x2x2's 0.119 with twice the bytes, where four pocl ranks (16 Xeon cores,
 * 256^3, mapped) ran 1.445 against 1.252. Otherwise x is left whole while y and z (2D: y) can
 * take the ranks with a cell each, since faces across x are one cell a row and cost the most
 * to move; and otherwise the ranks spread over every free dimension. */
static gp_status choose_dims(const char *fn, const gp_stencil *stencil, const int dims_in[3], int size, int in_place,
                             int dims[3])
{
    long fixed = 1;
    for (int d = 0; d < 3; d++) {
        dims[d] = dims_in ? dims_in[d] : 0;
        if (dims[d] < 0) return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: dims[%d] is %d", fn, d, dims[d]);
        fixed *= dims[d] ? dims[d] : 1;
    }
    if (stencil->shape != GP_STENCIL_7POINT) {
        if (dims[2] > 1)
            return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: dims[2] is %d; a 2D shape takes 1 rank along z",
                                     fn, dims[2]);
        dims[2] = 1;
    }
    if (size % fixed)
        return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: dims %d x %d x %d do not divide the %d ranks", fn,
                                 dims_in[0], dims_in[1], dims_in[2], size);
    const size_t sides[3] = {stencil->nx, stencil->ny, stencil->nz};
    int err = MPI_SUCCESS, three_d = stencil->shape == GP_STENCIL_7POINT;
    if (!dims[0] && (!dims[1] || !dims[2])) {
        int whole_x[3] = {1, dims[1], dims[2]}, slabs[3] = {1, three_d ? 1 : size, three_d ? size : 1};
        int all_free = !dims[1] && (!three_d || !dims[2]);
        err = spread(size, whole_x);
        if (err == MPI_SUCCESS && sides[1] >= (size_t)whole_x[1] && sides[2] >= (size_t)whole_x[2])
            memcpy(dims, whole_x, sizeof whole_x);
        if (err == MPI_SUCCESS && all_free && sides[three_d ? 2 : 1] >= (size_t)size &&
            (dims[0] != 1 || halo_cells(sides, slabs) <= (in_place ? 2 : 1) * halo_cells(sides, whole_x)))
            memcpy(dims, slabs, sizeof slabs);
    }
    if (err == MPI_SUCCESS && (!dims[0] || !dims[1] || !dims[2])) err = spread(size, dims);
    if (err != MPI_SUCCESS) return gp__mpi_fail(fn, "MPI_Dims_create", err);
    if ((long)dims[0] * dims[1] * dims[2] != size)
        return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: dims %d x %d x %d are not the %d ranks", fn, dims[0],
                                 dims[1], dims[2], size);
    for (int d = 0; d < 3; d++)
        if (sides[d] < (size_t)dims[d])
            return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT,
                                     "%s: %zu cells along %c for %d ranks; each block needs at least one", fn, sides[d],
                                     "xyz"[d], dims[d]);
    return GP_SUCCESS;
}

/* The halos' depth D: where the grid is split along one dimension only, as deep as the blocks
 * allow (half the thinnest) up to 4, or GPUPORT_MPI_HALO_DEPTH (1 to 4) where that is less;
 * otherwise 1. Faces D cells thick travel before every D-th step, the step after an exchange
 * computing D - 1 halo cells more on each side (steps.c). A D-th of the messages for (D - 1) / 2
 * planes more computed a step on each side. On four H200s under NCCL (docs/scaling.md), 3D weak
 * 256^3 a GPU: 0.0461 ms a step at D = 4 against 0.0530-0.0547 at D = 2; 3D strong 512^3:
 * 0.0815-0.0818 against 0.0841-0.0844. On pocl no difference showed through the noise. */
static gp_status halo_depth(const char *fn, const gp_stencil *stencil, const int dims[3], int *depth)
{
    const char *env = getenv("GPUPORT_MPI_HALO_DEPTH");
    int want = 0; /* auto */
    if (env && *env && strcmp(env, "auto") != 0) {
        if (env[0] < '1' || env[0] > '0' + GP__MAX_HALO_DEPTH || env[1])
            return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT,
                                     "%s: GPUPORT_MPI_HALO_DEPTH is \"%s\"; use 1 to %d or auto", fn, env,
                                     GP__MAX_HALO_DEPTH);
        want = env[0] - '0';
    }
    const size_t sides[3] = {stencil->nx, stencil->ny, stencil->nz};
    int split = 0, deepest = 1;
    for (int d = 0; d < 3; d++)
        if (dims[d] > 1) {
            split++;
            size_t thick = sides[d] / (size_t)dims[d] / 2;
            deepest = thick < GP__MAX_HALO_DEPTH ? (int)thick : GP__MAX_HALO_DEPTH;
        }
    *depth = split != 1 || deepest < 2 ? 1 : want && want < deepest ? want : deepest;
    return GP_SUCCESS;
}

/* This rank's block of the Cartesian layout: its place, its neighbours, its faces. */
static gp_status place_block(gp_mpi_grid *g, MPI_Comm comm, int rank, int size, int dims[3], const char *fn)
{
    const gp_stencil *stencil = &g->stencil;
    MPI_Comm cart = MPI_COMM_NULL;
    int periods[3] = {0, 0, 0};
    gp_status st = GP_SUCCESS;
    /* Ranks keep their numbers (no reordering), so each keeps the device it picked. */
    int err = MPI_Cart_create(comm, 3, dims, periods, 0, &cart);
    if (err != MPI_SUCCESS) st = gp__mpi_fail(fn, "MPI_Cart_create", err);
    g->comm = cart;
    if (cart != MPI_COMM_NULL) MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
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
        g->lo[d] = below[d] != MPI_PROC_NULL ? g->depth : 0;
        g->hi[d] = above[d] != MPI_PROC_NULL ? g->depth : 0;
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
    for (int i = 0; i < g->nfaces; i++) g->stats.halo_bytes += g->faces[i].cells * g->es / (size_t)g->depth;
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
    st = gp__agree(comm, st);
    /* The transport first: the layout depends on whether faces travel in place. */
    gp_mpi_transport_info transport;
    if (st == GP_SUCCESS) st = gp__transport_choose(comm, device, fn, &transport);
    int in_place = st == GP_SUCCESS && transport.transport == GP_MPI_TRANSPORT_NCCL && !gp__nccl_host_memory();
    if (st == GP_SUCCESS) st = gp__agree(comm, choose_dims(fn, stencil, dims_in, size, in_place, dims));
    int depth = 1;
    if (st == GP_SUCCESS) st = gp__agree(comm, halo_depth(fn, stencil, dims, &depth));
    if (st != GP_SUCCESS) return st;
    uint64_t mine = fingerprint(stencil, dims, depth), root = mine;
    MPI_Bcast(&root, 1, MPI_UINT64_T, 0, comm);
    if (root != mine)
        st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT,
                               "%s: this rank's stencil, dims or GPUPORT_MPI_HALO_DEPTH differ from rank 0's", fn);
    st = gp__agree(comm, st);
    if (st != GP_SUCCESS) return st;

    gp_mpi_grid *g = calloc(1, sizeof *g);
    st = gp__agree(comm, g ? GP_SUCCESS : gp_set_last_error(GP_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn));
    if (st != GP_SUCCESS) {
        free(g);
        return st;
    }
    g->dev = device;
    g->stencil = *stencil;
    g->es = gp_type_size(stencil->type);
    g->mpi_type = stencil->type == GP_F32 ? MPI_FLOAT : MPI_DOUBLE;
    g->depth = depth;
    st = place_block(g, comm, rank, size, dims, fn);
    /* Each step below is collective and ends agreed, so every rank takes the next or none. */
    st = gp__agree(comm, st);
    g->transport = transport;
    if (st == GP_SUCCESS) st = gp__agree(comm, allocate(g));
    if (st == GP_SUCCESS) st = gp__transport_open(g, fn);
    /* NCCL connects the ranks at their first message: here, not in the first run (steps.c). */
    if (st == GP_SUCCESS && transport.transport == GP_MPI_TRANSPORT_NCCL) st = gp__grid_exchange(g, fn, st);
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

gp_status gp_mpi_grid_get_transport(const gp_mpi_grid *grid, gp_mpi_transport_info *info)
{
    if (!grid || !info)
        return gp_set_last_error(grid ? GP_ERROR_INVALID_ARGUMENT : GP_ERROR_INVALID_HANDLE,
                                 "gp_mpi_grid_get_transport: %s is NULL", grid ? "info" : "grid");
    *info = grid->transport;
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
    return err == MPI_SUCCESS ? GP_SUCCESS : gp__mpi_fail(fn, to_root ? "gathering a block" : "scattering a block", err);
}

gp_status gp_mpi_grid_scatter(gp_mpi_grid *grid, gp_mpi_field field, int root, const void *global)
{
    static const char fn[] = "gp_mpi_grid_scatter";
    if (!grid) return check_field(fn, grid, field); /* no grid: no communicator to tell the others on */
    gp_status st = check_field(fn, grid, field);
    if (root < 0 || root >= grid->block.size)
        st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: root %d is no rank of the grid's %d", fn, root,
                               grid->block.size);
    if (st == GP_SUCCESS && grid->block.rank == root && !global)
        st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: global is NULL on the root", fn);
    size_t bytes = grid->cells * grid->es;
    void *image = st == GP_SUCCESS ? calloc(1, bytes ? bytes : 1) : NULL;
    if (st == GP_SUCCESS && !image) st = gp_set_last_error(GP_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    gp_buffer *target = NULL;
    int made = 0; /* the source, made by this call: gone again if the call is refused */
    if (st == GP_SUCCESS && field == GP_MPI_SOURCE) {
        if (!grid->source) {
            st = gp_buffer_create(grid->dev, GP_MEMORY_DEVICE, bytes, &grid->source);
            made = st == GP_SUCCESS;
        }
        target = grid->source;
    } else if (st == GP_SUCCESS) {
        target = grid->u[grid->cur];
    }
    st = gp__agree_call(grid->comm, st, GP__CALL_SCATTER, (long long[GP__CALL_ARGS]){field, root});
    if (st != GP_SUCCESS && made) {
        gp_buffer_destroy(grid->source);
        grid->source = NULL;
    }
    if (st == GP_SUCCESS) st = move_blocks(grid, fn, root, (void *)global, image, 0);
    if (st == GP_SUCCESS) st = gp_buffer_write(grid->comm_stream, target, 0, image, bytes);
    if (st == GP_SUCCESS && field == GP_MPI_U) grid->last_steps = 0;
    free(image);
    return gp__agree(grid->comm, st);
}

gp_status gp_mpi_grid_gather(gp_mpi_grid *grid, gp_mpi_field field, int root, void *global)
{
    static const char fn[] = "gp_mpi_grid_gather";
    if (!grid) return check_field(fn, grid, field);
    gp_status st = check_field(fn, grid, field);
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
    st = gp__agree_call(grid->comm, st, GP__CALL_GATHER, (long long[GP__CALL_ARGS]){field, root});
    if (st == GP_SUCCESS) st = move_blocks(grid, fn, root, global, image, 1);
    free(image);
    return gp__agree(grid->comm, st);
}

