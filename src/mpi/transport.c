/* Which transport a grid's halos take (GPUPORT_MPI_TRANSPORT, or the first that every rank can
 * use), and one round of halo messages: through host MPI from pinned or mapped memory, through
 * device-aware MPI, or through NCCL (nccl.c). */
#include "internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"staged", "mapped", "mpi", "nccl"};

/* Whether every rank of comm can (mine); where one cannot, "rank R: " and its reason in why. */
static int everyone(MPI_Comm comm, int mine, const char *reason, char *why, size_t size)
{
    int rank = 0, first = INT_MAX, me;
    MPI_Comm_rank(comm, &rank);
    me = mine ? INT_MAX : rank;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == INT_MAX) return 1;
    char text[200] = "";
    if (rank == first) snprintf(text, sizeof text, "%s", reason);
    MPI_Bcast(text, (int)sizeof text, MPI_CHAR, first, comm);
    snprintf(why, size, "rank %d: %s", first, text);
    return 0;
}

/* Whether MPI takes this device's memory: Open MPI and MPICH answer through MPIX_Query_cuda_support
 * and MPIX_Query_rocm_support, looked up at run time so that any MPI links. */
static int device_aware_mpi(const gp_device_info *info, char *why, size_t size)
{
    const char *query = strcmp(info->backend, "cuda") == 0  ? "MPIX_Query_cuda_support"
                        : strcmp(info->backend, "hip") == 0 ? "MPIX_Query_rocm_support"
                                                             : NULL;
    if (!query) {
        snprintf(why, size, "its device is %s, not CUDA or HIP", info->backend);
        return 0;
    }
    int (*support)(void) = NULL;
    *(void **)&support = dlsym(RTLD_DEFAULT, query);
    if (!support) {
        snprintf(why, size, "this MPI has no %s", query);
        return 0;
    }
    if (!support()) {
        snprintf(why, size, "%s() says this MPI does not take %s memory", query, info->backend);
        return 0;
    }
    snprintf(why, size, "%s() says MPI takes %s memory", query, info->backend);
    return 1;
}

/* NCCL takes one rank a GPU: where this rank's GPU is also a lower rank's, it cannot serve here.
 * Each rank's UUID in turn is broadcast (byte 16: whether it is known). */
static void shared_gpu(MPI_Comm comm, gp_device *dev, gp__nccl_probe *probe)
{
    int rank = 0, size = 1, twin = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    unsigned char mine[17] = {0}, theirs[17];
    mine[16] = (unsigned char)(probe->usable && gp__device_uuid(dev, mine));
    for (int r = 0; r < size; r++) {
        memcpy(theirs, mine, sizeof theirs);
        MPI_Bcast(theirs, (int)sizeof theirs, MPI_BYTE, r, comm);
        if (r < rank && twin < 0 && mine[16] && theirs[16] && memcmp(theirs, mine, 16) == 0) twin = r;
    }
    if (twin >= 0) {
        probe->usable = 0;
        snprintf(probe->what, sizeof probe->what, "its GPU is also rank %d's, and NCCL takes a GPU of its own a rank", twin);
    }
}

gp_status gp__transport_choose(MPI_Comm comm, gp_device *dev, const char *fn, gp_mpi_transport_info *info)
{
    const char *want = getenv("GPUPORT_MPI_TRANSPORT");
    int asked = -1; /* a gp_mpi_transport, or -1 for auto */
    gp_status st = GP_SUCCESS;
    if (want && *want && strcmp(want, "auto")) {
        for (int t = 0; t < 4; t++)
            if (strcmp(want, names[t]) == 0) asked = t;
        if (asked < 0)
            st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT,
                                   "%s: GPUPORT_MPI_TRANSPORT=\"%s\" is not auto, nccl, mpi, mapped or staged", fn, want);
    }
    gp_device_info dinfo;
    KEEP(st, gp_device_get_info(dev, &dinfo));
    st = gp__agree(comm, st);
    if (st != GP_SUCCESS) return st;

    char nccl_why[200], mpi_why[200] = "not asked for";
    gp__nccl_probe probe = {0, "not asked for"};
    if (asked < 0 || asked == GP_MPI_TRANSPORT_NCCL) gp__nccl_probe_device(dev, &probe);
    if (asked < 0 || asked == GP_MPI_TRANSPORT_NCCL) shared_gpu(comm, dev, &probe);
    int mpi_mine = asked < 0 || asked == GP_MPI_TRANSPORT_MPI ? device_aware_mpi(&dinfo, mpi_why, sizeof mpi_why) : 0;
    int nccl_all = everyone(comm, probe.usable, probe.what, nccl_why, sizeof nccl_why);
    int mpi_all = everyone(comm, mpi_mine, mpi_why, mpi_why, sizeof mpi_why);
    gp_mpi_transport t = dinfo.unified_memory ? GP_MPI_TRANSPORT_MAPPED : GP_MPI_TRANSPORT_STAGED;
    const char *local = dinfo.unified_memory ? "this rank's device shares the host's memory"
                                              : "this rank's device does not share the host's memory";
    if (asked == GP_MPI_TRANSPORT_NCCL && !nccl_all)
        st = gp_set_last_error(GP_ERROR_UNSUPPORTED, "%s: GPUPORT_MPI_TRANSPORT=nccl, but %s", fn, nccl_why);
    else if (asked == GP_MPI_TRANSPORT_MPI && !mpi_all)
        st = gp_set_last_error(GP_ERROR_UNSUPPORTED, "%s: GPUPORT_MPI_TRANSPORT=mpi, but %s", fn, mpi_why);
    else if (asked >= 0) {
        t = (gp_mpi_transport)asked;
        snprintf(info->reason, sizeof info->reason, "GPUPORT_MPI_TRANSPORT=%s%s%s", want,
                 t == GP_MPI_TRANSPORT_NCCL ? "; " : "", t == GP_MPI_TRANSPORT_NCCL ? probe.what : "");
    } else if (nccl_all) {
        t = GP_MPI_TRANSPORT_NCCL;
        snprintf(info->reason, sizeof info->reason, "%s, on every rank", probe.what);
    } else if (mpi_all) {
        t = GP_MPI_TRANSPORT_MPI;
        snprintf(info->reason, sizeof info->reason, "NCCL: %s; %s, on every rank", nccl_why, mpi_why);
    } else {
        snprintf(info->reason, sizeof info->reason, "NCCL: %s; device-aware MPI: %s; %s", nccl_why, mpi_why, local);
    }
    info->transport = t;
    info->name = names[t];
    return gp__agree(comm, st);
}

gp_status gp__transport_open(gp_mpi_grid *g, const char *fn)
{
    if (g->transport.transport != GP_MPI_TRANSPORT_NCCL) return GP_SUCCESS;
    return gp__nccl_open(g, fn);
}

void gp__transport_close(gp_mpi_grid *g)
{
    gp__nccl_close(g);
}

/* One round's messages through MPI, from and into memory at base (the packed faces, received
 * ones `back` bytes after the sent ones); they go whatever st says, carrying nothing without
 * memory, so that no peer waits forever. */
static gp_status mpi_messages(gp_mpi_grid *g, const char *fn, int round, char *base, gp_status st)
{
    static char dummy[1];
    size_t back = g->exchange_cells * g->es;
    MPI_Request req[12];
    int n = 0, err = MPI_SUCCESS;
    double t0 = gp__now();
    for (int i = 0; i < g->nfaces && err == MPI_SUCCESS; i++) {
        const face *f = &g->faces[i];
        if (f->round != round) continue;
        char *s = base ? base + f->at * g->es : dummy, *r = base ? base + back + f->at * g->es : dummy;
        int count = base ? (int)(f->cells * g->es) : 0;
        err = MPI_Irecv(r, count, MPI_BYTE, f->peer, TAG + round, g->comm, &req[n++]);
        if (err == MPI_SUCCESS) err = MPI_Isend(s, count, MPI_BYTE, f->peer, TAG + round, g->comm, &req[n++]);
    }
    if (err == MPI_SUCCESS) err = MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    g->stats.mpi_s += gp__now() - t0;
    if (err != MPI_SUCCESS && st == GP_SUCCESS) st = gp__mpi_fail(fn, "exchanging halos", err);
    return st;
}

/* Mapped memory: unmaps the exchange buffer where it is mapped (also after a failed unmap,
 * which would otherwise fail every later run). */
static gp_status unmap_exchange(gp_mpi_grid *g)
{
    gp_status st = g->host ? gp_buffer_unmap(g->comm_stream, g->packed) : GP_SUCCESS;
    if (st == GP_SUCCESS) g->host = NULL;
    return st;
}

/* The bytes of one round's faces in the packed buffer: from *off, *bytes of them; 0 when the
 * round has none. */
static size_t round_span(const gp_mpi_grid *g, int round, size_t *off)
{
    size_t first = SIZE_MAX, end = 0;
    for (int i = 0; i < g->nfaces; i++) {
        const face *f = &g->faces[i];
        if (f->round != round) continue;
        first = f->at < first ? f->at : first;
        end = f->at + f->cells > end ? f->at + f->cells : end;
    }
    *off = first == SIZE_MAX ? 0 : first * g->es;
    return first == SIZE_MAX ? 0 : (end - first) * g->es;
}

gp_status gp__transport_round(gp_mpi_grid *g, const char *fn, int round, gp_buffer *field, gp_status st)
{
    size_t off, bytes = round_span(g, round, &off), back = g->exchange_cells * g->es;
    if (!bytes) return st;
    switch (g->transport.transport) {
    case GP_MPI_TRANSPORT_STAGED:
        KEEP(st, gp_buffer_read_async(g->comm_stream, g->packed, off, (char *)g->host + off, bytes));
        KEEP(st, gp_stream_synchronize(g->comm_stream));
        st = mpi_messages(g, fn, round, g->host, st);
        KEEP(st, gp_buffer_write_async(g->comm_stream, g->packed, back + off, (char *)g->host + back + off, bytes));
        return st;
    case GP_MPI_TRANSPORT_MPI:
        KEEP(st, gp_stream_synchronize(g->comm_stream));
        return mpi_messages(g, fn, round, g->device_base, st);
    default: break;
    }
    if (!g->mapped) return gp__nccl_round(g, fn, round, g->device_base, field, st);
    /* Mapped memory (the mapped transport, or an NCCL of host memory): the host reads and
     * writes the packed faces in place between a map and an unmap. */
    KEEP(st, gp_buffer_map(g->comm_stream, g->packed, &g->host));
    if (g->transport.transport == GP_MPI_TRANSPORT_NCCL)
        st = gp__nccl_round(g, fn, round, g->host, field, st);
    else
        st = mpi_messages(g, fn, round, g->host, st);
    gp_status u = unmap_exchange(g); /* whatever happened before */
    KEEP(st, u);
    return st;
}

gp_status gp__transport_finish(gp_mpi_grid *g, const char *fn, gp_status st)
{
    if (g->transport.transport == GP_MPI_TRANSPORT_NCCL && g->nfaces)
        return gp__nccl_settle(g, gp__nccl_wait(g, fn, st, 0));
    KEEP(st, gp_stream_synchronize(g->compute));
    KEEP(st, gp_stream_synchronize(g->comm_stream));
    return gp__agree(g->comm, st);
}
