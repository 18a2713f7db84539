/* Reductions over the whole grid: each rank's block by a gpuport reduction, the ranks'
 * results combined by MPI. */
#include "internal.h"

#include <math.h>
#include <stdio.h>

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
    st = gp__agree_call(g->comm, st, GP__CALL_REDUCE, (long long[GP__CALL_ARGS]){op});
    if (st != GP_SUCCESS) return st;
    MPI_Op mop = op == GP_MPI_MIN ? MPI_MIN : op == GP_MPI_MAX ? MPI_MAX : MPI_SUM;
    int err = MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, mop, g->comm);
    if (err != MPI_SUCCESS) return gp__mpi_fail(fn, "MPI_Allreduce", err);
    *result = op >= GP_MPI_NORM ? sqrt(all) : all;
    return GP_SUCCESS;
}
