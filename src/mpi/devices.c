/* One device per rank, and the report of which device each rank took and the transport a
 * grid on them would use. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* The n-th device (round robin) of those of the type, and of the backend when it is given. */
static gp_status pick(gp_device_type type, const char *backend, int n, gp_device **device)
{
    size_t count = 0, matching = 0;
    gp_status st = gp_device_count(&count);
    gp_device *found[64];
    for (size_t i = 0; i < count && st == GP_SUCCESS && matching < 64; i++) {
        gp_device *d;
        gp_device_info info;
        KEEP(st, gp_device_get(i, &d));
        KEEP(st, gp_device_get_info(d, &info));
        if (st == GP_SUCCESS && info.type == type && (!backend || strcmp(info.backend, backend) == 0))
            found[matching++] = d;
    }
    if (st != GP_SUCCESS) return st;
    if (!matching) return GP_ERROR_NOT_FOUND;
    *device = found[(size_t)n % matching];
    return GP_SUCCESS;
}

gp_status gp_mpi_device_select(MPI_Comm comm, gp_device **device)
{
    static const char fn[] = "gp_mpi_device_select";
    if (comm == MPI_COMM_NULL) return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: comm is MPI_COMM_NULL", fn);
    int local = 0, local_size = 1;
    gp_status st = gp__node_rank(comm, fn, &local, &local_size);
    gp_device *chosen = NULL;
    const char *env = getenv("GPUPORT_DEVICE");
    if (st == GP_SUCCESS && !device) st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: device is NULL", fn);
    if (st == GP_SUCCESS && env && *env) {
        st = gp_device_default(&chosen);
    } else if (st == GP_SUCCESS) {
        gp_device *best = NULL;
        gp_device_info info;
        if (gp_device_find("gpu", &best) == GP_SUCCESS && gp_device_get_info(best, &info) == GP_SUCCESS)
            st = pick(GP_DEVICE_GPU, info.backend, local, &chosen);
        else
            st = pick(GP_DEVICE_CPU, NULL, local, &chosen);
        if (st == GP_ERROR_NOT_FOUND)
            st = gp_set_last_error(GP_ERROR_NOT_FOUND, "%s: no GPU and no CPU device here (gpuport-info says why)", fn);
    }
    st = gp__agree(comm, st);
    if (st == GP_SUCCESS) *device = chosen;
    return st;
}

gp_status gp_mpi_device_report(MPI_Comm comm, gp_device *device, FILE *out)
{
    static const char fn[] = "gp_mpi_device_report";
    if (comm == MPI_COMM_NULL) return gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: comm is MPI_COMM_NULL", fn);
    int rank = 0, size = 1, local = 0, local_size = 1, len = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    MPI_Get_processor_name(host, &len);
    gp_status st = gp__node_rank(comm, fn, &local, &local_size);
    gp_device_info info;
    if (st == GP_SUCCESS && !device) st = gp_set_last_error(GP_ERROR_INVALID_HANDLE, "%s: device is NULL", fn);
    KEEP(st, gp_device_get_info(device, &info));
    if (st == GP_SUCCESS && rank == 0 && !out) st = gp_set_last_error(GP_ERROR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    char *all = rank == 0 ? malloc((size_t)size * 512) : NULL;
    if (st == GP_SUCCESS && rank == 0 && !all) st = gp_set_last_error(GP_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    st = gp__agree(comm, st);
    if (st != GP_SUCCESS) {
        free(all);
        return st;
    }
    char line[512];
    snprintf(line, sizeof line, "rank %d on %s (local %d of %d): %s:%zu, %s", rank, host, local, local_size,
             info.backend, info.backend_index, info.name);
    int err = MPI_Gather(line, (int)sizeof line, MPI_CHAR, all, (int)sizeof line, MPI_CHAR, 0, comm);
    if (err != MPI_SUCCESS) st = gp__mpi_fail(fn, "MPI_Gather", err);
    for (int r = 0; r < size && rank == 0 && st == GP_SUCCESS; r++) fprintf(out, "%s\n", all + (size_t)r * 512);
    free(all);
    st = gp__agree(comm, st);
    /* The transport, as a grid on these devices would choose it (an impossible
     * GPUPORT_MPI_TRANSPORT fails here too, on every rank, with its reason). */
    gp_mpi_transport_info t;
    if (st == GP_SUCCESS) st = gp__transport_choose(comm, device, fn, &t);
    if (st == GP_SUCCESS && rank == 0) {
        fprintf(out, "halo transport: %s (%s)\n", t.name, t.reason);
        fflush(out);
    }
    return st;
}
