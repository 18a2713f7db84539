/* The few driver calls that gpuport's API leaves to the vendor, for CUDA and HIP devices: making
 * a device current on the calling thread (NCCL and RCCL take the current device), the GPU's
 * UUID (NCCL takes one rank a GPU), and a stream of the highest priority, so that a step's boundary and packing are not queued behind the
 * interior's blocks. Each is looked up in the driver library that gpuport's plugin has already
 * loaded; without it nothing is done. */
#include "internal.h"

#include <dlfcn.h>
#include <string.h>

static void *loaded(gp_backend_id backend, const char *symbol)
{
    static const char *const cuda[] = {"libcuda.so.1", NULL};
    static const char *const hip[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", NULL};
    const char *const *names = backend == GP_BACKEND_CUDA ? cuda : backend == GP_BACKEND_HIP ? hip : NULL;
    for (int i = 0; names && names[i]; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);
        void *fn = lib ? dlsym(lib, symbol) : NULL;
        if (lib) dlclose(lib); /* RTLD_NOLOAD took a reference of its own */
        if (fn) return fn;
    }
    return NULL;
}

gp_status gp__make_current(gp_device *dev)
{
    gp_native_device native;
    gp_status st = gp_device_get_native(dev, &native);
    if (st != GP_SUCCESS) return st;
    if (native.backend == GP_BACKEND_CUDA) {
        int (*set)(void *) = NULL;
        *(void **)&set = loaded(GP_BACKEND_CUDA, "cuCtxSetCurrent");
        if (set && set(native.context) != 0)
            return gp_set_last_error(GP_ERROR_BACKEND, "cuCtxSetCurrent failed for CUDA device %d", native.ordinal);
    } else if (native.backend == GP_BACKEND_HIP) {
        int (*set)(int) = NULL;
        *(void **)&set = loaded(GP_BACKEND_HIP, "hipSetDevice");
        if (set && set(native.ordinal) != 0)
            return gp_set_last_error(GP_ERROR_BACKEND, "hipSetDevice(%d) failed", native.ordinal);
    }
    return GP_SUCCESS;
}

int gp__device_uuid(gp_device *dev, unsigned char uuid[16])
{
    gp_native_device native;
    if (gp_device_get_native(dev, &native) != GP_SUCCESS) return 0;
    int (*get)(unsigned char *, int) = NULL;
    if (native.backend == GP_BACKEND_CUDA) {
        *(void **)&get = loaded(GP_BACKEND_CUDA, "cuDeviceGetUuid_v2");
        if (!get) *(void **)&get = loaded(GP_BACKEND_CUDA, "cuDeviceGetUuid");
    } else if (native.backend == GP_BACKEND_HIP) {
        *(void **)&get = loaded(GP_BACKEND_HIP, "hipDeviceGetUuid");
    }
    return get && get(uuid, native.ordinal) == 0;
}

gp_status gp__priority_stream(gp_device *dev, gp_stream **stream)
{
    gp_native_device native;
    gp_status st = gp_device_get_native(dev, &native);
    const char *range = native.backend == GP_BACKEND_CUDA ? "cuCtxGetStreamPriorityRange" : "hipDeviceGetStreamPriorityRange";
    const char *create = native.backend == GP_BACKEND_CUDA ? "cuStreamCreateWithPriority" : "hipStreamCreateWithPriority";
    int (*get_range)(int *, int *) = NULL, (*make)(void **, unsigned, int) = NULL;
    if (st == GP_SUCCESS && (native.backend == GP_BACKEND_CUDA || native.backend == GP_BACKEND_HIP)) {
        *(void **)&get_range = loaded(native.backend, range);
        *(void **)&make = loaded(native.backend, create);
    }
    int least = 0, greatest = 0;
    gp_native_stream s = {native.backend, NULL};
    /* Flag 1: CU_STREAM_NON_BLOCKING, hipStreamNonBlocking, as gpuport's own streams. */
    if (get_range && make && gp__make_current(dev) == GP_SUCCESS && get_range(&least, &greatest) == 0 &&
        make(&s.stream, 1, greatest) == 0) {
        st = gp_stream_wrap(dev, &s, GP_ADOPT, stream);
        int (*destroy)(void *) = NULL;
        *(void **)&destroy = loaded(native.backend, native.backend == GP_BACKEND_CUDA ? "cuStreamDestroy_v2" : "hipStreamDestroy");
        if (st != GP_SUCCESS && destroy) destroy(s.stream);
        return st;
    }
    return st == GP_SUCCESS ? gp_stream_create(dev, stream) : st;
}
