/* A fake NCCL for the tests of libgpuport-mpi's NCCL transport where there is no GPU: NCCL's
 * entry points with NCCL's signatures, moving host memory with MPI (the ranks are
 * MPI_COMM_WORLD's). It exports gpuport_nccl_host_memory, so gpuport hands it host pointers;
 * built with FAKE_NCCL_DEVICE_MEMORY it does not, and takes the "device" memory of the fake CUDA
 * driver (tests/fake_cuda.c), which is host memory too.
 *
 * Like a nonblocking NCCL communicator, ncclGroupEnd starts the group's messages and returns
 * ncclInProgress; ncclCommGetAsyncError reports ncclInProgress until they are done.
 * FAKE_NCCL_FAIL="CALL:N:RANK" makes the Nth call of CALL on RANK fail (ncclSystemError), CALL
 * being any entry point's name or "async": the Nth group on RANK ends in an asynchronous error
 * (its messages still travel). Counting starts again whenever FAKE_NCCL_FAIL changes. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char internal[128];
} ncclUniqueId;
enum { ok = 0, system_error = 2, invalid_argument = 4, invalid_usage = 5, in_progress = 7 };

typedef struct op {
    int send, peer;
    void *buf;
    size_t bytes;
} op;

typedef struct comm {
    MPI_Comm mpi;
    int rank, size, async_error;
    MPI_Request req[64];
    int sends[64]; /* req[i] is a send */
    int nreq;
} comm;

/* NCCL's entry points, as nccl.h declares them (its comm and stream types opaque). */
int ncclGetVersion(int *version);
const char *ncclGetErrorString(int result);
const char *ncclGetLastError(void *c);
int ncclGetUniqueId(ncclUniqueId *id);
int ncclCommInitRank(comm **out, int nranks, ncclUniqueId id, int rank);
int ncclCommDestroy(comm *c);
int ncclCommAbort(comm *c);
int ncclCommGetAsyncError(comm *c, int *result);
int ncclSend(const void *buf, size_t count, int type, int peer, comm *c, void *stream);
int ncclRecv(void *buf, size_t count, int type, int peer, comm *c, void *stream);
int ncclGroupStart(void);
int ncclGroupEnd(void);
#ifndef FAKE_NCCL_DEVICE_MEMORY
extern int gpuport_nccl_host_memory;

int gpuport_nccl_host_memory = 1;
#endif

static op group[64];
static int nops, depth;
static comm *group_comm;

/* Whether this call is the one FAKE_NCCL_FAIL names. */
static int fails(const char *call)
{
    static char counted[16][32], last[64];
    static long counts[16];
    const char *spec = getenv("FAKE_NCCL_FAIL");
    int slot = 0;
    if (strcmp(last, spec ? spec : "")) { /* counting starts again with each new setting */
        snprintf(last, sizeof last, "%s", spec ? spec : "");
        memset(counted, 0, sizeof counted);
        memset(counts, 0, sizeof counts);
    }
    while (slot < 15 && counted[slot][0] && strcmp(counted[slot], call)) slot++;
    if (!counted[slot][0]) snprintf(counted[slot], sizeof counted[slot], "%s", call);
    long n = ++counts[slot];
    char name[32];
    long at = 0;
    int rank = -1, world = 0;
    if (!spec || sscanf(spec, "%31[^:]:%ld:%d", name, &at, &rank) != 3 || strcmp(name, call)) return 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    return world == rank && n == at;
}

int ncclGetVersion(int *version)
{
    *version = 22803;
    return ok;
}

const char *ncclGetErrorString(int result)
{
    return result == system_error ? "unhandled system error (the fake's injected failure)"
           : result == in_progress ? "operation in progress"
                                   : "an error of the fake NCCL";
}

const char *ncclGetLastError(void *c)
{
    (void)c;
    return "";
}

int ncclGetUniqueId(ncclUniqueId *id)
{
    if (fails("ncclGetUniqueId")) return system_error;
    for (size_t i = 0; i < sizeof id->internal; i++) id->internal[i] = (char)(rand() ^ (int)i);
    return ok;
}

/* Every rank must bring the same id, as with NCCL: the fake checks it. */
int ncclCommInitRank(comm **out, int nranks, ncclUniqueId id, int rank)
{
    int world = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t h = 1469598103934665603ull, lo = 0, hi = 0;
    for (size_t i = 0; i < sizeof id.internal; i++) h = (h ^ (unsigned char)id.internal[i]) * 1099511628211ull;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (lo != hi || nranks != size || rank != world) return invalid_argument;
    comm *c = calloc(1, sizeof *c);
    MPI_Comm mpi;
    MPI_Comm_dup(MPI_COMM_WORLD, &mpi); /* collective: every rank, before any can fail */
    if (!c || fails("ncclCommInitRank")) {
        MPI_Comm_free(&mpi);
        free(c);
        return system_error;
    }
    c->mpi = mpi;
    c->rank = rank;
    c->size = nranks;
    *out = c;
    return ok;
}

int ncclCommDestroy(comm *c)
{
    if (c->nreq) MPI_Waitall(c->nreq, c->req, MPI_STATUSES_IGNORE);
    MPI_Comm_free(&c->mpi);
    free(c);
    return ok;
}

/* The messages still under way are given up: receives cancelled, sends let go. */
int ncclCommAbort(comm *c)
{
    for (int i = 0; i < c->nreq; i++) {
        int done = 0;
        MPI_Test(&c->req[i], &done, MPI_STATUS_IGNORE);
        if (!done && !c->sends[i]) MPI_Cancel(&c->req[i]);
        if (!done) MPI_Request_free(&c->req[i]);
    }
    MPI_Comm_free(&c->mpi);
    free(c);
    return ok;
}

int ncclCommGetAsyncError(comm *c, int *result)
{
    if (fails("ncclCommGetAsyncError")) return system_error;
    int done = 1;
    if (c->nreq) MPI_Testall(c->nreq, c->req, &done, MPI_STATUSES_IGNORE);
    if (done) c->nreq = 0;
    *result = c->async_error ? c->async_error : done ? ok : in_progress;
    return ok;
}

static int queue(int send, void *buf, size_t bytes, int type, int peer, comm *c, void *stream)
{
#ifdef FAKE_NCCL_DEVICE_MEMORY
    (void)stream; /* the fake CUDA driver runs each command at once: its streams order nothing */
#else
    if (stream) return invalid_argument; /* host memory is handed over with no stream */
#endif
    if (type != 1 || !c || peer < 0 || peer >= c->size) return invalid_argument;
    if (!depth || nops == 64 || (group_comm && group_comm != c)) return invalid_usage;
    group_comm = c;
    group[nops++] = (op){send, peer, buf, bytes};
    return ok;
}

int ncclSend(const void *buf, size_t count, int type, int peer, comm *c, void *stream)
{
    return fails("ncclSend") ? system_error : queue(1, (void *)buf, count, type, peer, c, stream);
}

int ncclRecv(void *buf, size_t count, int type, int peer, comm *c, void *stream)
{
    return fails("ncclRecv") ? system_error : queue(0, buf, count, type, peer, c, stream);
}

int ncclGroupStart(void)
{
    if (fails("ncclGroupStart")) return system_error;
    depth++;
    return ok;
}

int ncclGroupEnd(void)
{
    if (depth == 0) return invalid_usage;
    if (--depth) return ok;
    comm *c = group_comm;
    int r = fails("ncclGroupEnd") ? system_error : ok;
    for (int i = 0; i < nops && r == ok && c->nreq < 64; i++) {
        op *o = &group[i];
        c->sends[c->nreq] = o->send;
        if (o->send) MPI_Isend(o->buf, (int)o->bytes, MPI_BYTE, o->peer, 1, c->mpi, &c->req[c->nreq++]);
        else MPI_Irecv(o->buf, (int)o->bytes, MPI_BYTE, o->peer, 1, c->mpi, &c->req[c->nreq++]);
    }
    if (c && fails("async")) c->async_error = system_error;
    nops = 0;
    group_comm = NULL;
    return r != ok ? r : c ? in_progress : ok;
}
