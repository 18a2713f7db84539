/* Proves libgpuport-mpi's collective calls fail on every rank, naming what each rank was asked,
 * when the ranks disagree (run's steps, reduce's op, gather's root, scatter's field, a rank
 * that skips a call), instead of hanging or returning different answers as success; and, with a
 * kill mode, that a rank killed mid-run ends the job (tests/mpi/disagree.sh times it).
 * Usage: mpiexec -n N gpuport-test-mpi-disagree run|reduce|gather|scatter|skip|kill-SIGNAL */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuport_mpi.h"

static int rank, size;

/* status must be GP_ERROR_INVALID_ARGUMENT with every word of says in the message; 1 when so. */
static int refused(const char *what, gp_status st, const char *const says[])
{
    const char *text = gp_last_error();
    int ok = st == GP_ERROR_INVALID_ARGUMENT;
    for (int i = 0; ok && says[i]; i++) ok = strstr(text, says[i]) != NULL;
    if (!ok) fprintf(stderr, "rank %d: %s: %s: %s\n", rank, what, gp_status_name(st), text);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    gp_device *dev = NULL;
    gp_mpi_grid *g = NULL;
    gp_stencil s = {GP_STENCIL_5POINT, GP_F64, GP_BOUNDARY_FIXED, 64, 64, 1, {0, .25, .25, .25, .25}, 0};
    int ok = gp_mpi_device_select(MPI_COMM_WORLD, &dev) == GP_SUCCESS &&
             gp_mpi_grid_create(MPI_COMM_WORLD, dev, &s, NULL, &g) == GP_SUCCESS;
    if (!ok) fprintf(stderr, "rank %d: no grid: %s\n", rank, gp_last_error());
    double *global = calloc(64 * 64, sizeof *global), result = 0;
    ok = ok && gp_mpi_grid_scatter(g, GP_MPI_U, 0, global) == GP_SUCCESS && gp_mpi_grid_run(g, 2) == GP_SUCCESS;
    if (ok && strcmp(mode, "run") == 0) {
        ok = refused("run", gp_mpi_grid_run(g, rank ? 20 : 10),
                     (const char *[]){"not asked the same", "rank 0: gp_mpi_grid_run(steps 10)",
                                      "rank 1: gp_mpi_grid_run(steps 20)", NULL});
    } else if (ok && strcmp(mode, "reduce") == 0) {
        ok = refused("reduce", gp_mpi_grid_reduce(g, rank ? GP_MPI_MAX : GP_MPI_SUM, &result),
                     (const char *[]){"rank 0: gp_mpi_grid_reduce(op 0)", "rank 1: gp_mpi_grid_reduce(op 2)", NULL});
    } else if (ok && strcmp(mode, "gather") == 0) {
        ok = refused("gather", gp_mpi_grid_gather(g, GP_MPI_U, rank == 1, global),
                     (const char *[]){"rank 0: gp_mpi_grid_gather(field 0, root 0)",
                                      "rank 1: gp_mpi_grid_gather(field 0, root 1)", NULL});
    } else if (ok && strcmp(mode, "scatter") == 0) {
        ok = refused("scatter", gp_mpi_grid_scatter(g, rank ? GP_MPI_SOURCE : GP_MPI_U, 0, global),
                     (const char *[]){"rank 0: gp_mpi_grid_scatter(field 0, root 0)",
                                      "rank 1: gp_mpi_grid_scatter(field 1, root 0)", NULL});
    } else if (ok && strcmp(mode, "skip") == 0) { /* rank 1 skips the run and goes on to reduce */
        gp_status st = rank == 1 ? gp_mpi_grid_reduce(g, GP_MPI_SUM, &result) : gp_mpi_grid_run(g, 5);
        ok = refused("skip", st, (const char *[]){"rank 0: gp_mpi_grid_run(steps 5)",
                                                  "rank 1: gp_mpi_grid_reduce(op 0)", NULL});
    } else if (ok && strncmp(mode, "kill-", 5) == 0) {
        /* rank 1 is killed in the middle of the runs; the others would wait for its halos */
        int sig = strcmp(mode + 5, "SIGSEGV") == 0 ? SIGSEGV : strcmp(mode + 5, "SIGKILL") == 0 ? SIGKILL : SIGTERM;
        for (int i = 0; i < 100000 && ok; i++) {
            if (rank == 1 && i == 20) kill(getpid(), sig);
            ok = gp_mpi_grid_run(g, 1) == GP_SUCCESS;
        }
        fprintf(stderr, "rank %d: the runs %s after rank 1 was killed\n", rank, ok ? "all succeeded" : "failed");
        ok = 0;
    } else if (ok) {
        fprintf(stderr, "unknown mode '%s'\n", mode);
        ok = 0;
    }
    /* After a refusal the grid still works on every rank. */
    ok = ok && gp_mpi_grid_run(g, 3) == GP_SUCCESS && gp_mpi_grid_reduce(g, GP_MPI_SUM, &result) == GP_SUCCESS;
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) printf("disagree %s on %d ranks: %s\n", mode, size, all ? "every rank refused, and went on" : "FAILED");
    gp_mpi_grid_destroy(g);
    free(global);
    MPI_Finalize();
    return all ? 0 : 1;
}
