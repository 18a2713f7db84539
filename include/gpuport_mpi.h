/** @file
 * gpuport_mpi: gpuport's stencils over many MPI ranks, one device each (libgpuport-mpi).
 *
 * A grid is split into blocks over a Cartesian communicator; each rank keeps its block, with a
 * halo on every side that has a neighbour, in gpuport buffers on its device. Each step
 * computes the cells next to the halos first, then their faces travel to the neighbours while
 * the block's interior is computed. Where the grid is split along one dimension only, into
 * blocks at least 4 cells thick, the halos are D cells deep, D as large as half the thinnest
 * block allows up to 4, and travel before every D-th step, the steps after them computing the
 * inner halo cells too: a D-th of the messages, for (D - 1) / 2 layers of cells computed twice
 * a step on each side. GPUPORT_MPI_HALO_DEPTH=1 to 4 asks for at most that depth (1: one cell,
 * before every step; auto, the default: as above); every rank must say the same. The faces
 * travel by one of four transports (see gp_mpi_transport): NCCL or RCCL on the devices,
 * device-aware MPI, host MPI from mapped memory, or host MPI through pinned host memory. The result is gp_stencil_run's on
 * one device, cell for cell and bit for bit, whichever transport carries the halos.
 *
 * Every function here is collective over the communicator it was given (every rank calls it,
 * in the same order) and returns the same status on every rank: when one rank fails (bad
 * input, a device error) every rank gets its status, and gp_last_error() on every rank says
 * "rank R: " and that rank's message, so that no rank is left waiting. MPI must be initialised
 * (MPI_THREAD_SINGLE suffices: gpuport calls MPI from the calling thread only).
 */
#ifndef GPUPORT_MPI_H
#define GPUPORT_MPI_H

#include <mpi.h>
#include <stdio.h>

#include "gpuport.h"

#ifdef __cplusplus
extern "C" {
#endif

/** This rank's device: GPUPORT_DEVICE when it is set; else, by the rank's number on its node
 * (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED), round robin over the node's GPUs of the best GPU
 * backend; with no GPU, round robin over its CPU devices. */
GP_API gp_status gp_mpi_device_select(MPI_Comm comm, gp_device **device);
/** Rank 0 of comm writes one line per rank to out: its host, its rank on the node and its
 * device ("rank 1 on node7 (local 1 of 4): cuda:1, NVIDIA H100 80GB HBM3"), then the transport
 * a grid on these devices would take, and why ("halo transport: nccl (...)"). */
GP_API gp_status gp_mpi_device_report(MPI_Comm comm, gp_device *device, FILE *out);

typedef struct gp_mpi_grid gp_mpi_grid; /**< a stencil grid split over the ranks of a communicator */

/** The stencil's grid (stencil->nx x ny x nz cells, as gp_stencil_run takes it) over the ranks
 * of comm, on each rank's device. dims: the ranks along x, y and z (their product is comm's
 * size); NULL, or 0 in an entry, lets gpuport choose. With all free: slabs along the slowest
 * dimension (z; y in 2D), whose faces are whole planes or rows, while each slab has a cell and
 * their halos are no larger than those of the next layout, or at most twice as large under the
 * nccl transport on GPUs, which sends such faces in place. Otherwise x is left whole where y and
 * z (2D: y) can take the ranks, as faces across x are one cell a row and cost the most to move;
 * the counts are MPI_Dims_create's, the most along the slowest dimension. 2D shapes take 1
 * along z; gp_mpi_grid_get_block says what was chosen.
 * Blocks along a dimension differ by at most one cell; each must have at least one. Fields
 * start at 0. Every rank must pass the same stencil and dims. */
/** @{ */
GP_API gp_status gp_mpi_grid_create(MPI_Comm comm, gp_device *device, const gp_stencil *stencil, const int dims[3],
                                    gp_mpi_grid **grid);
GP_API gp_status gp_mpi_grid_destroy(gp_mpi_grid *grid); /**< NULL is a no-op (on every rank) */

typedef enum gp_mpi_field {
    GP_MPI_U = 0,     /**< the field the steps advance (after a run, its result) */
    GP_MPI_SOURCE = 1 /* the source term, added as source_weight * source when it was scattered */
} gp_mpi_field;
/** @} */

/** This rank's part. The local array holds the block and its halos: local[0] x local[1] x
 * local[2] elements, x fastest, the block's first cell at element `first`. */
typedef struct gp_mpi_block {
    int rank;              /**< this rank, in comm */
    int size;              /**< the ranks in comm */
    int dims[3];           /**< the Cartesian layout: ranks along x, y, z */
    int coords[3];         /**< this rank's place in it */
    size_t origin[3];      /**< the block's first cell in the global grid */
    size_t extent[3];      /**< its cells along x, y, z */
    size_t local[3];       /**< the local array's sides: extent plus the halo's depth (1 or 2) per neighbour */
    size_t first;          /**< the element of the local array holding the block's first cell */
    MPI_Comm comm;         /**< the grid's Cartesian communicator (the grid's own: do not free it) */
} gp_mpi_block;
GP_API gp_status gp_mpi_grid_get_block(const gp_mpi_grid *grid, gp_mpi_block *block); /**< not collective */
/** The local array of a field, for kernels of your own (GP_MPI_SOURCE once scattered); not
 * collective. Halo cells hold whatever the last exchange brought (a run brings the source's,
 * where halos are more than one deep, at its start). */
GP_API gp_status gp_mpi_grid_get_view(const gp_mpi_grid *grid, gp_mpi_field field, gp_view *view);

/** The whole grid (nx * ny * nz elements of the stencil's type, x fastest) from host memory on
 * root into the field's blocks, and back. The other ranks' pointers are not used. */
/** @{ */
GP_API gp_status gp_mpi_grid_scatter(gp_mpi_grid *grid, gp_mpi_field field, int root, const void *global);
GP_API gp_status gp_mpi_grid_gather(gp_mpi_grid *grid, gp_mpi_field field, int root, void *global);
/** @} */

/** steps applications of the stencil to GP_MPI_U, a halo exchange before each (before every
 * D-th, the first included, where halos are D deep); returns when they are done on every
 * rank. */
GP_API gp_status gp_mpi_grid_run(gp_mpi_grid *grid, size_t steps);

/** Brings the halo cells of GP_MPI_U up to date with the neighbours' blocks, as a run does
 * before each step: for kernels of your own that read them. */
GP_API gp_status gp_mpi_grid_exchange(gp_mpi_grid *grid);

/** How a grid's halos travel. GPUPORT_MPI_TRANSPORT=auto (the default), nccl, mpi, mapped or
 * staged chooses; auto takes the first that every rank can use, in this order:
 *   nccl:   ncclSend/ncclRecv between device buffers on gpuport's stream, the host never
 *           waiting inside a step: every rank's device is CUDA (NCCL, libnccl.so.2) or HIP
 *           (RCCL, librccl.so.1), opened at run time (GPUPORT_NCCL_LIBRARY names another file);
 *   mpi:    device pointers handed to MPI: every rank's device is CUDA (or HIP) and MPI says it
 *           takes their memory (MPIX_Query_cuda_support, MPIX_Query_rocm_support);
 *   mapped: host MPI reading and writing the device's memory in place, on each rank whose
 *           device shares the host's memory (a CPU device);
 *   staged: host MPI, the faces copied to and from pinned host memory.
 * Asking for a transport that some rank cannot use is an error on every rank naming that
 * rank and why; a grid of mixed devices (a CUDA rank beside an OpenCL rank) takes mapped or
 * staged and says so. */
typedef enum gp_mpi_transport {
    GP_MPI_TRANSPORT_STAGED = 0,
    GP_MPI_TRANSPORT_MAPPED = 1,
    GP_MPI_TRANSPORT_MPI = 2,
    GP_MPI_TRANSPORT_NCCL = 3
} gp_mpi_transport;
/** Which transport a grid's halos take on this rank and why. */
typedef struct gp_mpi_transport_info {
    gp_mpi_transport transport; /**< the transport */
    const char *name;           /**< "nccl", "mpi", "mapped" or "staged" */
    char reason[400];           /**< why: what was asked, what was found ("NCCL 2.28.3 (libnccl.so.2) on every rank") */
} gp_mpi_transport_info;
/** This rank's transport (not collective). */
GP_API gp_status gp_mpi_grid_get_transport(const gp_mpi_grid *grid, gp_mpi_transport_info *info);

/** What this rank's calls on the grid cost, summed since it was created (not collective). */
typedef struct gp_mpi_stats {
    size_t steps;      /**< steps run */
    double run_s;      /**< seconds in gp_mpi_grid_run */
    double mpi_s;      /**< seconds the host waited for messages, faces packed to halos in (runs and
                          exchanges; during runs the interior computes meanwhile); with NCCL
                          on the devices the host does not wait for them, and this stays 0 */
    size_t exchanges;  /**< gp_mpi_grid_exchange calls */
    double exchange_s; /**< seconds in them: packing, copies, messages, unpacking */
    size_t halo_bytes; /**< bytes this rank sends, and receives, per step (halos D deep: a D-th
                          of an exchange's) */
} gp_mpi_stats;
/** This rank's costs so far. */
GP_API gp_status gp_mpi_grid_get_stats(const gp_mpi_grid *grid, gp_mpi_stats *stats);

/** What gp_mpi_grid_reduce computes over the whole grid. */
typedef enum gp_mpi_reduce_op {
    GP_MPI_SUM = 0,
    GP_MPI_MIN = 1,
    GP_MPI_MAX = 2,
    GP_MPI_NORM = 3,       /**< sqrt of the sum of squares */
    GP_MPI_UPDATE_NORM = 4 /* the norm of U's change in the last step of the last run */
} gp_mpi_reduce_op;
/** Over every cell of GP_MPI_U in the global grid: each rank reduces its block with a gpuport
 * reduction (in the stencil's type), then MPI_Allreduce combines the ranks' results in double.
 * The same *result on every rank. */
GP_API gp_status gp_mpi_grid_reduce(gp_mpi_grid *grid, gp_mpi_reduce_op op, double *result);

#ifdef __cplusplus
}
#endif

#endif
