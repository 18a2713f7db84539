/* An MPI program built against an installed libgpuport-mpi (tests/install.sh builds it with
 * pkg-config and with find_package(gpuport COMPONENTS mpi), and runs it on two ranks): one
 * stencil step over the ranks must give plain C's sum. */
#include <gpuport_mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    enum { NX = 20, NY = 10 };
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static float ones[NX * NY];
    for (int i = 0; i < NX * NY; i++) ones[i] = 1;
    /* Every cell the sum of itself and its four neighbours, 0 off the grid: 5 per cell less
     * one for each neighbour off the grid, of which there are 2 NX + 2 NY. */
    const gp_stencil s = {GP_STENCIL_5POINT, GP_F32, GP_BOUNDARY_ZERO, NX, NY, 1, {1, 1, 1, 1, 1}, 0};
    gp_device *dev;
    gp_mpi_grid *grid;
    double sum = 0;
    if (gp_mpi_device_select(MPI_COMM_WORLD, &dev) != GP_SUCCESS ||
        gp_mpi_grid_create(MPI_COMM_WORLD, dev, &s, NULL, &grid) != GP_SUCCESS ||
        gp_mpi_grid_scatter(grid, GP_MPI_U, 0, ones) != GP_SUCCESS || gp_mpi_grid_run(grid, 1) != GP_SUCCESS ||
        gp_mpi_grid_reduce(grid, GP_MPI_SUM, &sum) != GP_SUCCESS) {
        fprintf(stderr, "consumer_mpi: %s\n", gp_last_error());
        MPI_Finalize();
        return 1;
    }
    gp_mpi_grid_destroy(grid);
    MPI_Finalize();
    if (sum != 5.0 * NX * NY - 2 * (NX + NY)) {
        fprintf(stderr, "consumer_mpi: the sum is %g, expected %d\n", sum, 5 * NX * NY - 2 * (NX + NY));
        return 1;
    }
    if (rank == 0) printf("consumer_mpi: one step over the ranks, sum %g as expected\n", sum);
    return 0;
}
