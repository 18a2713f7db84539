/* libgpuport-mpi's shared parts: the grid object and the helpers its files use.
 *
 * The files, each on one concern:
 *   agree.c      every rank's outcome of a collective call, MPI errors, the clock
 *   devices.c    one device per rank, and the report of which each took
 *   grid.c       the blocks, halos and faces of a grid; create, destroy, scatter and gather
 *   steps.c      a run's steps and exchanges: packing, overlap of interior and boundary
 *   transport.c  which transport a grid uses, and the halo messages through host MPI
 *                (staged, mapped) or device-aware MPI
 *   nccl.c       the NCCL/RCCL transport: the library opened at run time, the messages on
 *                the device, failures ended with ncclCommAbort
 *   native.c     the driver calls gpuport's API leaves out: a current device, a priority stream
 *   reduce.c     reductions over the whole grid */
#ifndef GPUPORT_MPI_INTERNAL_H
#define GPUPORT_MPI_INTERNAL_H

#include "gpuport_mpi.h"

#include <stddef.h>
#include <stdint.h>

#define TAG 7177
#define TAG_FAILED 7190 /* a rank's notice to the others that its NCCL exchange failed */

/* A face this rank sends to a neighbour and the halo it receives from it, as boxes of the
 * local array, packed at `at` elements into the exchange buffers. */
typedef struct face {
    int peer, round;
    size_t send[3], recv[3], extent[3], cells, at;
    size_t spans; /* of the packing kernel (steps.c); 0 for a face that travels in place */
    int in_place; /* nccl on the device, and the face contiguous in the local array: sent from
                     and received into the field itself, neither packed nor unpacked */
} face;

typedef struct gp__nccl gp__nccl; /* nccl.c's communicator and library */

#define GP__MAX_HALO_DEPTH 4 /* grid.c's halo_depth */

/* The cells one step computes, in boxes of the local array (origin, extent): all of them
 * (whole), the interior, which needs no halo cell received for it, and the slabs around it. */
typedef struct regions {
    size_t whole[2][3], interior[2][3];
    size_t slabs[6][2][3], nslabs;
} regions;

struct gp_mpi_grid {
    MPI_Comm comm;
    gp_mpi_block block;
    gp_device *dev;
    gp_stencil stencil; /* the global grid's */
    gp_stencil local;   /* the same over the local array */
    MPI_Datatype mpi_type;
    size_t es, cells;   /* element size; elements of the local array */
    int depth;          /* of the halos: faces travel before every depth-th step (grid.c) */
    int lo[3], hi[3];   /* the halos' depths below / above along each dimension: depth where
                           there is a neighbour, 0 where not */
    gp_buffer *u[2], *source;
    int cur;            /* u[cur] is GP_MPI_U */
    size_t last_steps;  /* steps of the last run */
    gp_stream *compute, *comm_stream;
    gp_event *interior_done[2], *slabs_done; /* interiors of even and odd steps */
    regions phase[GP__MAX_HALO_DEPTH]; /* the steps of each phase (grid.c) */
    face faces[6];
    int nfaces, rounds;
    gp_mpi_transport_info transport;
    int mapped;                  /* packed is mapped memory, mapped for each round's messages */
    gp_buffer *packed;           /* packed faces, to send then received (exchange_cells each),
                                    on the device, or mapped where the host reads them */
    gp_buffer *pinned;           /* staged: the same in pinned host memory */
    void *host;                  /* staged: the pinned buffer's host memory, mapped for good;
                                    mapped: packed's while it is mapped */
    char *device_base;           /* mpi, and nccl on the device: packed's device address */
    size_t exchange_cells;
    gp__nccl *nccl;              /* nccl: the communicator */
    gp_program *program;
    gp_kernel *faces_kernel;
    gp_buffer *table;            /* the faces' rows for faces_kernel */
    gp_reduce_kernel *reducers[5];
    gp_mpi_stats stats;
};

static inline size_t index_of(const size_t *sides, const size_t *at)
{
    return at[0] + sides[0] * (at[1] + sides[1] * at[2]);
}

/* steps.c: the kernel and table that pack the faces; one exchange of U's faces, agreed by every
 * rank (collective). */
gp_status gp__faces_create(gp_mpi_grid *g);
gp_status gp__grid_exchange(gp_mpi_grid *g, const char *fn, gp_status st);

/* agree.c: every rank's outcome of a collective call (gp__agree), and with gp__agree_call that
 * every rank was asked the same call (GP__CALL_*) with the same arguments, in one allreduce. */
enum { GP__CALL_END, GP__CALL_RUN, GP__CALL_EXCHANGE, GP__CALL_REDUCE, GP__CALL_SCATTER, GP__CALL_GATHER };
#define GP__CALL_ARGS 2
gp_status gp__agree(MPI_Comm comm, gp_status st);
gp_status gp__agree_call(MPI_Comm comm, gp_status st, int call, const long long args[GP__CALL_ARGS]);
gp_status gp__mpi_fail(const char *fn, const char *call, int err);
double gp__now(void);
gp_status gp__node_rank(MPI_Comm comm, const char *fn, int *local, int *local_size);

/* A status kept across a sequence of calls: the first failure wins and later calls are
 * skipped, while the exchanges around them go on. */
#define KEEP(st, call)                                                                         \
    do {                                                                                       \
        if ((st) == GP_SUCCESS) (st) = (call);                                                 \
    } while (0)

/* transport.c: the transport for a grid on these ranks' devices (collective; an impossible
 * GPUPORT_MPI_TRANSPORT is an error on every rank), and one round of messages. */
gp_status gp__transport_choose(MPI_Comm comm, gp_device *dev, const char *fn, gp_mpi_transport_info *info);
gp_status gp__transport_open(gp_mpi_grid *g, const char *fn);
gp_status gp__transport_round(gp_mpi_grid *g, const char *fn, int round, gp_buffer *field, gp_status st);
gp_status gp__transport_finish(gp_mpi_grid *g, const char *fn, gp_status st);
void gp__transport_close(gp_mpi_grid *g);

/* native.c */
gp_status gp__make_current(gp_device *dev);
int gp__device_uuid(gp_device *dev, unsigned char uuid[16]); /* 1 with the GPU's UUID, 0 without */
gp_status gp__priority_stream(gp_device *dev, gp_stream **stream);

/* nccl.c */
typedef struct gp__nccl_probe {
    int usable;         /* the library opened and serves this rank's device */
    char what[160];     /* "NCCL 2.28.3 (libnccl.so.2)", or why it cannot be used */
} gp__nccl_probe;
void gp__nccl_probe_device(gp_device *dev, gp__nccl_probe *probe);
gp_status gp__nccl_open(gp_mpi_grid *g, const char *fn);
gp_status gp__nccl_round(gp_mpi_grid *g, const char *fn, int round, char *base, gp_buffer *field, gp_status st);
gp_status gp__nccl_wait(gp_mpi_grid *g, const char *fn, gp_status st, int host_mode);
gp_status gp__nccl_settle(gp_mpi_grid *g, gp_status st);
void gp__nccl_close(gp_mpi_grid *g);
int gp__nccl_host_memory(void);

#endif
