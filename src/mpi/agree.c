/* Every rank's outcome of a collective call, MPI's errors as gpuport's, the clock. */
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <time.h>

/* Every rank's outcome of a collective call: GP_SUCCESS on every rank when all succeeded, else
 * on every rank the lowest failing rank's status and its message, prefixed "rank R: ". */
gp_status gp__agree(MPI_Comm comm, gp_status st)
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

gp_status gp__mpi_fail(const char *fn, const char *call, int err)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(err, text, &len);
    return gp_set_last_error(GP_ERROR_BACKEND, "%s: %s failed: %s", fn, call, text);
}

double gp__now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* This rank's number among the ranks of its node, and their count. */
gp_status gp__node_rank(MPI_Comm comm, const char *fn, int *local, int *local_size)
{
    MPI_Comm node;
    int err = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (err != MPI_SUCCESS) return gp__mpi_fail(fn, "MPI_Comm_split_type", err);
    MPI_Comm_rank(node, local);
    MPI_Comm_size(node, local_size);
    MPI_Comm_free(&node);
    return GP_SUCCESS;
}
