/* Every rank's outcome of a collective call and what it was asked, MPI's errors as gpuport's,
 * the clock. */
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* What each call is asked, for the messages: its name and its arguments' (GP__CALL_*). */
static const struct {
    const char *fn, *args[GP__CALL_ARGS];
} calls[] = {
    {"the end of a call", {NULL}},
    {"gp_mpi_grid_run", {"steps"}},
    {"gp_mpi_grid_exchange", {NULL}},
    {"gp_mpi_grid_reduce", {"op"}},
    {"gp_mpi_grid_scatter", {"field", "root"}},
    {"gp_mpi_grid_gather", {"field", "root"}},
};

/* "gp_mpi_grid_run(steps 10)" of a call row (its id, then its arguments). */
static int describe(char *out, size_t len, const long long row[1 + GP__CALL_ARGS])
{
    size_t id = row[0] >= 0 && (size_t)row[0] < sizeof calls / sizeof calls[0] ? (size_t)row[0] : 0;
    int n = snprintf(out, len, "%s(", calls[id].fn);
    for (int a = 0; a < GP__CALL_ARGS && calls[id].args[a] && n >= 0 && (size_t)n < len; a++)
        n += snprintf(out + n, len - (size_t)n, "%s%s %lld", a ? ", " : "", calls[id].args[a], row[1 + a]);
    if (n >= 0 && (size_t)n < len) n += snprintf(out + n, len - (size_t)n, ")");
    return n;
}

/* The ranks were not asked the same: every rank learns what each was asked, and fails. */
static gp_status disagreed(MPI_Comm comm, const long long row[1 + GP__CALL_ARGS])
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    long long *rows = malloc((size_t)size * (1 + GP__CALL_ARGS) * sizeof *rows);
    if (!rows || MPI_Allgather(row, 1 + GP__CALL_ARGS, MPI_LONG_LONG, rows, 1 + GP__CALL_ARGS, MPI_LONG_LONG, comm) !=
                     MPI_SUCCESS) {
        free(rows);
        return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "rank %d: the ranks were not asked the same call", rank);
    }
    char text[1000], mine[200];
    describe(mine, sizeof mine, row);
    int n = snprintf(text, sizeof text, "the ranks were not asked the same (this is rank %d):", rank);
    for (int r = 0; r < size && n >= 0 && (size_t)n < sizeof text - 1; r++) {
        char call[200];
        describe(call, sizeof call, rows + (size_t)r * (1 + GP__CALL_ARGS));
        n += snprintf(text + n, sizeof text - (size_t)n, "%s rank %d: %s", r ? ";" : "", r, call);
    }
    free(rows);
    return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: %s", mine, text);
}

/* Every rank's outcome of a collective call, and that every rank was asked the same call with
 * the same arguments: one MPI_Allreduce of the lowest failing rank and of each number's least
 * and (negated) greatest value. GP_SUCCESS on every rank when all agree and succeeded; when
 * they were asked different things, GP_ERROR_INVALID_ARGUMENT on every rank naming what each
 * was asked; else on every rank the lowest failing rank's status and its message, prefixed
 * "rank R: ". Every agreement has this one shape, so that a rank in another call (one that
 * skipped a call) meets the others' agreement and is told, instead of hanging. */
gp_status gp__agree_call(MPI_Comm comm, gp_status st, int call, const long long args[GP__CALL_ARGS])
{
    enum { ROW = 1 + GP__CALL_ARGS };
    int rank = 0, first = INT_MAX;
    MPI_Comm_rank(comm, &rank);
    long long row[ROW] = {call}, v[1 + 2 * ROW], all[1 + 2 * ROW];
    for (int a = 0; a < GP__CALL_ARGS && args; a++) row[1 + a] = args[a];
    v[0] = st == GP_SUCCESS ? INT_MAX : rank;
    for (int i = 0; i < ROW; i++) v[1 + i] = row[i], v[1 + ROW + i] = -row[i];
    if (MPI_Allreduce(v, all, 1 + 2 * ROW, MPI_LONG_LONG, MPI_MIN, comm) != MPI_SUCCESS)
        return gp_set_last_error(GP_ERROR_BACKEND, "rank %d: MPI_Allreduce failed", rank);
    for (int i = 0; i < ROW; i++)
        if (all[1 + i] != -all[1 + ROW + i]) return disagreed(comm, row);
    first = (int)all[0];
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

gp_status gp__agree(MPI_Comm comm, gp_status st) { return gp__agree_call(comm, st, GP__CALL_END, NULL); }

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
