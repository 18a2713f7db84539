/* A run's steps and exchanges: the faces packed and unpacked by one kernel launch a round, the
 * boundary and the interior of each step overlapped with the halos' travel.
 *
 * Step s on a rank with neighbours (in = U before the step, out = U after it):
 *   comm stream:    pack faces of in -> messages (the transport) -> unpack halos -> [wait interior s-1] -> boundary s
 *   compute stream: [wait boundary s-1] -> interior s
 * The boundary (the cells next to the halos, in slabs) needs the halos; the interior (the
 * block less one cell on each side with a neighbour) needs none, so it runs while the faces
 * travel. The boundary of step s waits for the interior of step s-1, not of step s: that is
 * the last kernel that read the cells it writes (the buffers alternate) and wrote the cells it
 * reads. So the comm stream runs ahead of the compute stream, and a step costs
 * max(interior, boundary + exchange). The 3x3 shape needs the corner cells too: it exchanges
 * x faces first, then y faces as whole rows with their x halos, which carries the corners
 * along. Halos D cells deep (grid.c) travel before every D-th step. A step of phase 0 (after an
 * exchange) is as above over the block and D - 1 halo cells beyond it on each side with a
 * neighbour. The last phase (D - 1) has no exchange: its slabs are the faces that travel next,
 * and its interior, which reads only cells of the interior before it, waits for nothing on the
 * comm stream. The phases between are one launch each over their cells, the first of them after
 * the comm stream's work. (The last phase as one launch, the exchange after it, was slower at
 * D = 2 on two H200s, 256^3 a GPU: 0.0477-0.0479 ms a step against 0.0459-0.0461, as NCCL's
 * messages and the boundary then run beside one interior of two.)
 * NCCL on the device sends a face that is one block of the local array (rows, planes)
 * from the field itself and receives it into the halo, with no packing for it. A failure on
 * one rank does not stop its exchanges (its peers would wait for them); it is reported to
 * every rank at the end of the call. */
#include "internal.h"

#include <stdint.h>

/* The faces of one round between a local array and packed memory, in one launch (on a CPU device
 * a launch costs more than packing a face), in 32-bit words. A face's rows (its cells along x)
 * are cut into spans of SPAN words, and each span is walked by one group of LANES work-items:
 * a 2D face along y is one long row, which one group alone would walk too slowly, and a face
 * along x is a column, one word a row. Face f's row of the table: its box's first word in the
 * local array when sending and when receiving, its first packed word, its first span among all
 * faces' spans, its words along x, its extent along y, its spans, and its spans a row. Received
 * faces are packed `base` words after the sent ones. */
#define FACE_ROW 8
#define LANES 32
#define SPAN 256
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
    "    ulong q = r - d[3], row = q / d[7], ex = d[4], x0 = q % d[7] * " STR(SPAN) ";\n"
    "    ulong x1 = x0 + " STR(SPAN) " < ex ? x0 + " STR(SPAN) " : ex;\n"
    "    GP_GLOBAL uint *g = grid + d[unpack] + lx * (row % d[5] + ly * (row / d[5]));\n"
    "    GP_GLOBAL uint *p = packed + base + d[2] + row * ex;\n"
    "    for (ulong x = x0 + gp_global_id(0); x < x1; x += " STR(LANES) ") {\n"
    "        if (unpack) g[x] = p[x];\n"
    "        else p[x] = g[x];\n"
    "    }\n"
    "}\n";

/* The table of faces for the kernel, the program and the kernel. */
gp_status gp__faces_create(gp_mpi_grid *g)
{
    /* The table counts 32-bit words: an element is es / 4 of them. */
    uint64_t rows[6 * FACE_ROW] = {0}, w = g->es / 4, first_span = 0;
    for (int i = 0; i < g->nfaces; i++) {
        const face *f = &g->faces[i];
        uint64_t *r = rows + FACE_ROW * i;
        r[0] = index_of(g->block.local, f->send) * w;
        r[1] = index_of(g->block.local, f->recv) * w;
        r[2] = f->at * w;
        r[3] = first_span;
        r[4] = f->extent[0] * w;
        r[5] = f->extent[1];
        r[7] = (r[4] + SPAN - 1) / SPAN;
        r[6] = f->in_place ? 0 : f->extent[1] * f->extent[2] * r[7];
        g->faces[i].spans = r[6];
        first_span += r[6];
    }
    gp_status st = gp_buffer_create(g->dev, GP_MEMORY_DEVICE, sizeof rows, &g->table);
    KEEP(st, gp_buffer_write(NULL, g->table, 0, rows, sizeof rows));
    KEEP(st, gp_program_create(g->dev, faces_source, NULL, &g->program));
    KEEP(st, gp_kernel_create(g->program, "gp_mpi_faces", &g->faces_kernel));
    return st;
}

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
    size_t spans = 0, global[2], local[2] = {LANES, 1};
    for (uint32_t i = first; i <= last; i++) spans += g->faces[i].spans;
    if (!spans) return GP_SUCCESS; /* every face of the round travels in place */
    global[0] = LANES;
    global[1] = spans;
    gp_arg args[] = {GP_BUFFER(grid), GP_BUFFER(g->packed), GP_BUFFER(g->table), GP_VALUE(first), GP_VALUE(last),
                     GP_VALUE(lx),     GP_VALUE(ly),        GP_VALUE(dir),      GP_VALUE(base)};
    return gp_kernel_launch(g->comm_stream, g->faces_kernel, 2, global, local, sizeof args / sizeof args[0], args);
}

/* Every round of one halo exchange of `in`, queued on the comm stream (the transport may wait
 * on the host for its messages). st is the status so far: after a failure the messages still
 * go, so that no peer waits forever. */
static gp_status exchange_all(gp_mpi_grid *g, const char *fn, gp_buffer *in, int first_packed, gp_status st)
{
    for (int r = 0; r < g->rounds; r++) {
        if (r > 0 || !first_packed) KEEP(st, move_faces(g, r, in, 0));
        st = gp__transport_round(g, fn, r, in, st);
        KEEP(st, move_faces(g, r, in, 1));
    }
    return st;
}

/* One step on a rank with neighbours: see the top of the file. */
static gp_status step(gp_mpi_grid *g, const char *fn, size_t s, gp_view source, gp_status st)
{
    gp_buffer *in = g->u[g->cur], *out = g->u[1 - g->cur];
    int phase = (int)(s % (size_t)g->depth);
    const regions *r = &g->phase[phase];
    if (phase > 0 && phase < g->depth - 1) {
        /* A middle phase: one launch. Phase 1 reads phase 0's slabs and overwrites the faces that
         * phase 0 sent (from the field itself, under NCCL), so it waits for the comm stream. */
        if (phase == 1) KEEP(st, gp_stream_wait_event(g->compute, g->slabs_done));
        KEEP(st, gp_stencil_apply_region(g->compute, &g->local, r->whole[0], r->whole[1], GP_VIEW(out), GP_VIEW(in),
                                         source));
        KEEP(st, gp_event_record(g->interior_done[s % 2], g->compute));
        g->cur = 1 - g->cur;
        return st;
    }
    /* The faces are packed before the interior is enqueued: where a device runs its kernels
     * one after another (pocl), packed after it they would wait for it, and the messages could
     * not travel while it computes. */
    if (phase == 0) KEEP(st, move_faces(g, 0, in, 0));
    /* Phase 0's interior reads cells the last step's slabs wrote; a later phase's interior only
     * cells of the interior before it. */
    if (s > 0 && phase == 0) KEEP(st, gp_stream_wait_event(g->compute, g->slabs_done));
    KEEP(st, gp_stencil_apply_region(g->compute, &g->local, r->interior[0], r->interior[1], GP_VIEW(out), GP_VIEW(in),
                                     source));
    if (phase == 0) st = exchange_all(g, fn, in, 1, st);
    if (s > 0) KEEP(st, gp_stream_wait_event(g->comm_stream, g->interior_done[(s - 1) % 2]));
    KEEP(st, gp_event_record(g->interior_done[s % 2], g->compute));
    for (size_t i = 0; i < r->nslabs; i++)
        KEEP(st, gp_stencil_apply_region(g->comm_stream, &g->local, r->slabs[i][0], r->slabs[i][1], GP_VIEW(out),
                                         GP_VIEW(in), source));
    KEEP(st, gp_event_record(g->slabs_done, g->comm_stream));
    g->cur = 1 - g->cur;
    return st;
}

gp_status gp_mpi_grid_run(gp_mpi_grid *grid, size_t steps)
{
    static const char fn[] = "gp_mpi_grid_run";
    if (!grid) return gp_set_last_error(GP_ERROR_INVALID_HANDLE, "%s: grid is NULL", fn);
    gp_mpi_grid *g = grid;
    gp_view source = g->source ? GP_VIEW(g->source) : GP_VIEW(NULL);
    /* every rank the same step count, before any message: else some would wait for ever */
    gp_status st = gp__agree_call(g->comm, GP_SUCCESS, GP__CALL_RUN, (long long[GP__CALL_ARGS]){(long long)steps});
    if (st != GP_SUCCESS) return st;
    double t0 = gp__now();
    if (g->nfaces == 0) {
        /* No neighbour: the block is the grid, and one call runs every step. */
        gp_view result;
        KEEP(st, gp_stencil_run(g->compute, &g->local, steps, GP_VIEW(g->u[g->cur]), GP_VIEW(g->u[1 - g->cur]),
                                source, &result));
        if (st == GP_SUCCESS && steps % 2) g->cur = 1 - g->cur;
    } else {
        /* Deeper halos: the step after an exchange computes the source's term in halo cells too,
         * which hold the neighbours' source only after an exchange of their own (the program may
         * have written the source through its view since the last run). */
        if (g->depth > 1 && g->source && steps) st = exchange_all(g, fn, g->source, 0, st);
        for (size_t s = 0; s < steps; s++) st = step(g, fn, s, source, st);
    }
    st = gp__transport_finish(g, fn, st);
    g->stats.steps += steps;
    g->stats.run_s += gp__now() - t0;
    g->last_steps = st == GP_SUCCESS ? steps : 0;
    return st;
}

/* One exchange of U's faces, agreed by every rank; st is the status so far. gp_mpi_grid_create
 * calls it on every grid on NCCL, whose fields are zeros then: NCCL connects two ranks at their
 * first message to each other, not in ncclCommInitRank, which took 1.2 s on two H200s (NCCL
 * 2.28.3, NCCL_RUNTIME_CONNECT=0 no different) and landed in a program's first run:
 * heat_diffusion_mpi (N = 256, f64, 2 GPUs) reported 0.089 ms a step on NCCL against 0.019 on the
 * mpi transport, and 0.011-0.015 once the creation made the connection. */
gp_status gp__grid_exchange(gp_mpi_grid *g, const char *fn, gp_status st)
{
    if (g->nfaces) st = exchange_all(g, fn, g->u[g->cur], 0, st);
    return gp__transport_finish(g, fn, st);
}

gp_status gp_mpi_grid_exchange(gp_mpi_grid *grid)
{
    static const char fn[] = "gp_mpi_grid_exchange";
    if (!grid) return gp_set_last_error(GP_ERROR_INVALID_HANDLE, "%s: grid is NULL", fn);
    gp_status st = gp__agree_call(grid->comm, GP_SUCCESS, GP__CALL_EXCHANGE, NULL);
    if (st != GP_SUCCESS) return st;
    double t0 = gp__now();
    /* The faces are the last run's results, written on both streams. */
    KEEP(st, gp_stream_synchronize(grid->compute));
    st = gp__grid_exchange(grid, fn, st);
    grid->stats.exchange_s += gp__now() - t0;
    grid->stats.exchanges++;
    return st;
}
