/* A fake NVIDIA driver for the tests of machines without a GPU: the CUDA driver API, NVRTC and
 * cuBLAS entry points that the CUDA plugin opens (src/backends/cuda/cuhip_binding.h), in one
 * library that the build names libcuda.so.1, libnvrtc.so.13 and libcublas.so.13. Two devices
 * whose memory is host memory: copies, fills, peer copies, host registration and cuBLAS's GEMM
 * compute for real; NVRTC hands back the source as its code, modules find their kernels in it,
 * and launches are checked and counted but run nothing.
 *
 * tests/fault.c drives it as it drives the OpenCL fault plugin: gp_fault_arm(at, kind) fails the
 * at-th call of any entry point (kind 0: that call's own failure, out of memory for
 * allocations; kind 1: the context is lost, and every driver and cuBLAS call fails from then
 * on until the next arm), GPUPORT_FAULT_AT="at,kind" does the same from the first call, and
 * gp_fault_live counts the objects made and not yet destroyed, so that a test sees a leak.
 * Memory made with cuMemCreate is a memfd, mapped where cuMemMap puts it, so that another
 * process's view of an exported file descriptor (the fault plugin's import) is the same bytes. */
#define _GNU_SOURCE
#include <cuda.h>
#include <nvrtc.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* ---- The fault controls ---- */

enum { FAKE_DEVICES = 2, FAULT_OWN = 0, FAULT_LOST = 1, FAULT_KINDS = 2 };
static atomic_long calls, fail_at, live;
static atomic_int kind, lost;

EXPORT void gp_fault_arm(long at, int k);
EXPORT long gp_fault_calls(void);
EXPORT int gp_fault_kinds(void);
EXPORT int gp_fault_kernels_run(void);
EXPORT long gp_fault_live(void);

void gp_fault_arm(long at, int k)
{
    atomic_store(&kind, k);
    atomic_store(&lost, 0);
    atomic_store(&calls, 0);
    atomic_store(&fail_at, at);
}
long gp_fault_calls(void) { return atomic_load(&calls); }
int gp_fault_kinds(void) { return FAULT_KINDS; }
int gp_fault_kernels_run(void) { return 0; }
long gp_fault_live(void) { return atomic_load(&live); }

__attribute__((constructor)) static void arm_from_environment(void)
{
    long at = 0;
    int k = 0;
    const char *env = getenv("GPUPORT_FAULT_AT");
    if (env && sscanf(env, "%ld,%d", &at, &k) == 2) gp_fault_arm(at, k);
}

/* 1 when this call is to fail: the armed one, or any driver call once the context is lost.
 * GPUPORT_FAKE_CUDA_TRACE=1 prints each call with its number. */
#define failing(driver) failing_call(driver, __func__)
static int failing_call(int driver, const char *name)
{
    static int trace = -1;
    long n = atomic_fetch_add(&calls, 1) + 1, at = atomic_load(&fail_at);
    if (trace < 0) trace = getenv("GPUPORT_FAKE_CUDA_TRACE") != NULL;
    if (trace) fprintf(stderr, "fake CUDA call %ld: %s (live %ld)\n", n, name, atomic_load(&live));
    if (driver && atomic_load(&lost)) return 1;
    if (!at || n != at) return 0;
    if (atomic_load(&kind) == FAULT_LOST) atomic_store(&lost, 1);
    return 1;
}
/* A driver call's failure: its own (r) or the lost context's. */
#define CALL(r)                                                                                                        \
    do {                                                                                                               \
        if (failing(1)) return atomic_load(&lost) ? CUDA_ERROR_ILLEGAL_ADDRESS : (r);                                  \
    } while (0)
#define RTC_CALL(r)                                                                                                    \
    do {                                                                                                               \
        if (failing(0)) return (r);                                                                                    \
    } while (0)
/* A destroy that fails still releases, as a lost context gives everything back: what is
 * counted is that the plugin called it. */
#define RELEASE(r, release)                                                                                            \
    do {                                                                                                               \
        int f_ = failing(1);                                                                                           \
        CUresult d_ = (release);                                                                                       \
        return f_ ? (atomic_load(&lost) ? CUDA_ERROR_ILLEGAL_ADDRESS : (r)) : d_;                                      \
    } while (0)

/* ---- Devices and contexts ---- */

struct CUctx_st {
    int device, retained, peers[FAKE_DEVICES];
};
static struct CUctx_st contexts[FAKE_DEVICES] = {{0, 0, {0}}, {1, 0, {0}}};
static _Thread_local CUcontext current;

CUresult cuInit(unsigned flags)
{
    CALL(CUDA_ERROR_NOT_INITIALIZED);
    return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
CUresult cuDriverGetVersion(int *v)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    *v = 13000;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int *n)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    *n = FAKE_DEVICES;
    return CUDA_SUCCESS;
}

static int valid_device(CUdevice d) { return d >= 0 && d < FAKE_DEVICES; }

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    CALL(CUDA_ERROR_INVALID_DEVICE);
    if (ordinal < 0 || ordinal >= FAKE_DEVICES) return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    CALL(CUDA_ERROR_INVALID_DEVICE);
    if (!valid_device(d) || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "gpuport fake CUDA device %d", d);
    return CUDA_SUCCESS;
}

/* Each fake device's UUID: its ordinal in every byte. */
CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice d)
{
    CALL(CUDA_ERROR_INVALID_DEVICE);
    if (!valid_device(d) || !uuid) return CUDA_ERROR_INVALID_VALUE;
    memset(uuid->bytes, d + 1, sizeof uuid->bytes);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute attr, CUdevice d)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    if (!valid_device(d)) return CUDA_ERROR_INVALID_DEVICE;
    switch (attr) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
        *v = 1024;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
        *v = 64;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
        *v = 48 << 10;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
        *v = 227 << 10;
        break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *v = 4;
        break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
        *v = 32;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *v = 9;
        break;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
        *v = 1;
        break;
    default:
        *v = 0;
    }
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice d)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    if (!valid_device(d)) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = (size_t)1 << 30;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d)
{
    CALL(CUDA_ERROR_OUT_OF_MEMORY);
    if (!valid_device(d)) return CUDA_ERROR_INVALID_DEVICE;
    if (!contexts[d].retained++) atomic_fetch_add(&live, 1);
    *ctx = &contexts[d];
    return CUDA_SUCCESS;
}

static CUresult release_context(CUdevice d)
{
    if (!valid_device(d) || !contexts[d].retained) return CUDA_ERROR_INVALID_CONTEXT;
    if (!--contexts[d].retained) {
        atomic_fetch_sub(&live, 1);
        memset(contexts[d].peers, 0, sizeof contexts[d].peers);
    }
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice d) { RELEASE(CUDA_ERROR_INVALID_CONTEXT, release_context(d)); }

CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    *ctx = current;
    return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext ctx)
{
    CALL(CUDA_ERROR_INVALID_CONTEXT);
    current = ctx;
    return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize(void)
{
    CALL(CUDA_ERROR_LAUNCH_FAILED);
    return current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuGetErrorName(CUresult r, const char **name)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    switch (r) {
#define NAME(code)                                                                                                     \
    case code:                                                                                                         \
        *name = #code;                                                                                                 \
        return CUDA_SUCCESS;
        NAME(CUDA_SUCCESS)
        NAME(CUDA_ERROR_INVALID_VALUE) NAME(CUDA_ERROR_OUT_OF_MEMORY) NAME(CUDA_ERROR_NOT_INITIALIZED)
            NAME(CUDA_ERROR_INVALID_CONTEXT) NAME(CUDA_ERROR_INVALID_DEVICE) NAME(CUDA_ERROR_INVALID_HANDLE)
                NAME(CUDA_ERROR_NOT_FOUND) NAME(CUDA_ERROR_ILLEGAL_ADDRESS) NAME(CUDA_ERROR_LAUNCH_FAILED)
                    NAME(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) NAME(CUDA_ERROR_INVALID_IMAGE)
                        NAME(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) NAME(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
#undef NAME
                            default : return CUDA_ERROR_INVALID_VALUE;
    }
}

/* ---- Memory: every allocation and registration is kept, so that pointers can be asked about ---- */

typedef struct block {
    char *base;
    size_t bytes;
    CUmemorytype type;
    int owned; /* 0: the caller's memory, registered */
    CUcontext ctx;
    struct block *next;
} block;
static block *blocks;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;

static CUresult add_block(void *base, size_t bytes, CUmemorytype type, int owned)
{
    block *b = malloc(sizeof *b);
    if (!b) return CUDA_ERROR_OUT_OF_MEMORY;
    *b = (block){base, bytes, type, owned, current, NULL};
    pthread_mutex_lock(&blocks_lock);
    b->next = blocks;
    blocks = b;
    pthread_mutex_unlock(&blocks_lock);
    atomic_fetch_add(&live, 1);
    return CUDA_SUCCESS;
}

/* The block holding p, or NULL; with exact, only one starting at p. */
static block *find_block(const void *p, int exact)
{
    pthread_mutex_lock(&blocks_lock);
    block *b = blocks;
    for (; b; b = b->next)
        if (exact ? b->base == (const char *)p
                  : (const char *)p >= b->base && (const char *)p < b->base + (b->bytes ? b->bytes : 1))
            break;
    pthread_mutex_unlock(&blocks_lock);
    return b;
}

static CUresult drop_block(const void *p, CUmemorytype type)
{
    pthread_mutex_lock(&blocks_lock);
    block **at = &blocks;
    while (*at && ((*at)->base != (const char *)p || (*at)->type != type)) at = &(*at)->next;
    block *b = *at;
    if (b) *at = b->next;
    pthread_mutex_unlock(&blocks_lock);
    if (!b) return CUDA_ERROR_INVALID_VALUE;
    if (b->owned) free(b->base);
    free(b);
    atomic_fetch_sub(&live, 1);
    return CUDA_SUCCESS;
}

static CUresult allocate(void **p, size_t bytes, CUmemorytype type)
{
    if (!current) return CUDA_ERROR_INVALID_CONTEXT;
    if (!bytes || bytes > ((size_t)1 << 30)) return CUDA_ERROR_OUT_OF_MEMORY;
    void *mem = aligned_alloc(256, (bytes + 255) & ~(size_t)255);
    if (!mem) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = add_block(mem, bytes, type, 1);
    if (r != CUDA_SUCCESS)
        free(mem);
    else
        *p = mem;
    return r;
}

CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes)
{
    CALL(CUDA_ERROR_OUT_OF_MEMORY);
    void *mem = NULL;
    CUresult r = allocate(&mem, bytes, CU_MEMORYTYPE_DEVICE);
    *p = (CUdeviceptr)(uintptr_t)mem;
    return r;
}
CUresult cuMemFree(CUdeviceptr p)
{
    RELEASE(CUDA_ERROR_INVALID_VALUE, drop_block((void *)(uintptr_t)p, CU_MEMORYTYPE_DEVICE));
}
CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned flags)
{
    (void)flags;
    CALL(CUDA_ERROR_OUT_OF_MEMORY);
    return allocate(p, bytes, CU_MEMORYTYPE_HOST);
}
CUresult cuMemFreeHost(void *p) { RELEASE(CUDA_ERROR_INVALID_VALUE, drop_block(p, CU_MEMORYTYPE_HOST)); }

CUresult cuMemHostGetDevicePointer(CUdeviceptr *d, void *host, unsigned flags)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    block *b = find_block(host, 0);
    if (flags || !b || b->type != CU_MEMORYTYPE_HOST) return CUDA_ERROR_INVALID_VALUE;
    *d = (CUdeviceptr)(uintptr_t)host;
    return CUDA_SUCCESS;
}

CUresult cuMemHostRegister(void *p, size_t bytes, unsigned flags)
{
    (void)flags;
    CALL(CUDA_ERROR_OUT_OF_MEMORY);
    if (!current) return CUDA_ERROR_INVALID_CONTEXT;
    if (find_block(p, 0)) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    return add_block(p, bytes, CU_MEMORYTYPE_HOST, 0);
}
CUresult cuMemHostUnregister(void *p) { RELEASE(CUDA_ERROR_INVALID_VALUE, drop_block(p, CU_MEMORYTYPE_HOST)); }

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    block *b = find_block((void *)(uintptr_t)p, 0);
    if (!b) return CUDA_ERROR_INVALID_VALUE;
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = b->type;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = b->ctx;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (b->type != CU_MEMORYTYPE_HOST) return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = (void *)(uintptr_t)p;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult cuMemGetAddressRange(CUdeviceptr *base, size_t *bytes, CUdeviceptr p)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    block *b = find_block((void *)(uintptr_t)p, 0);
    if (!b) return CUDA_ERROR_NOT_FOUND;
    if (base) *base = (CUdeviceptr)(uintptr_t)b->base;
    if (bytes) *bytes = b->bytes;
    return CUDA_SUCCESS;
}

/* Memory to export: a handle is its memfd plus one; reserved address ranges are inaccessible
 * anonymous mappings until cuMemMap maps the memfd over them. */
CUresult cuMemGetAllocationGranularity(size_t *grain, const CUmemAllocationProp *prop,
                                       CUmemAllocationGranularity_flags option)
{
    (void)option;
    CALL(CUDA_ERROR_INVALID_VALUE);
    if (!prop || prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
    *grain = 4096;
    return CUDA_SUCCESS;
}
CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t bytes, const CUmemAllocationProp *prop,
                     unsigned long long flags)
{
    CALL(CUDA_ERROR_OUT_OF_MEMORY);
    if (!current) return CUDA_ERROR_INVALID_CONTEXT;
    if (flags || !prop || !valid_device(prop->location.id) || bytes % 4096) return CUDA_ERROR_INVALID_VALUE;
    int fd = memfd_create("gpuport-fake-cuda", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
        if (fd >= 0) close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *h = (CUmemGenericAllocationHandle)fd + 1;
    atomic_fetch_add(&live, 1);
    return CUDA_SUCCESS;
}
static CUresult close_memory(int fd)
{
    atomic_fetch_sub(&live, 1);
    return close(fd) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemRelease(CUmemGenericAllocationHandle h) { RELEASE(CUDA_ERROR_INVALID_VALUE, close_memory((int)h - 1)); }
CUresult cuMemAddressReserve(CUdeviceptr *p, size_t bytes, size_t align, CUdeviceptr addr, unsigned long long flags)
{
    (void)align, (void)addr, (void)flags;
    CALL(CUDA_ERROR_OUT_OF_MEMORY);
    void *at = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (at == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (CUdeviceptr)(uintptr_t)at;
    atomic_fetch_add(&live, 1);
    return CUDA_SUCCESS;
}
static CUresult free_range(CUdeviceptr p, size_t bytes)
{
    atomic_fetch_sub(&live, 1);
    return munmap((void *)(uintptr_t)p, bytes) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemAddressFree(CUdeviceptr p, size_t bytes) { RELEASE(CUDA_ERROR_INVALID_VALUE, free_range(p, bytes)); }
CUresult cuMemMap(CUdeviceptr p, size_t bytes, size_t offset, CUmemGenericAllocationHandle h, unsigned long long flags)
{
    CALL(CUDA_ERROR_OUT_OF_MEMORY);
    if (flags || !h) return CUDA_ERROR_INVALID_VALUE;
    void *at = mmap((void *)(uintptr_t)p, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, (int)h - 1,
                    (off_t)offset);
    return at == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : add_block(at, bytes, CU_MEMORYTYPE_DEVICE, 0);
}
static CUresult unmap_range(CUdeviceptr p, size_t bytes)
{
    CUresult r = drop_block((void *)(uintptr_t)p, CU_MEMORYTYPE_DEVICE);
    if (r == CUDA_SUCCESS &&
        mmap((void *)(uintptr_t)p, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
        r = CUDA_ERROR_INVALID_VALUE;
    return r;
}
CUresult cuMemUnmap(CUdeviceptr p, size_t bytes) { RELEASE(CUDA_ERROR_INVALID_VALUE, unmap_range(p, bytes)); }
CUresult cuMemSetAccess(CUdeviceptr p, size_t bytes, const CUmemAccessDesc *desc, size_t count)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    block *b = find_block((void *)(uintptr_t)p, 1);
    return b && b->bytes == bytes && desc && count == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle h, CUmemAllocationHandleType type,
                                      unsigned long long flags)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || flags || !h) return CUDA_ERROR_INVALID_VALUE;
    int fd = dup((int)h - 1);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    *(int *)out = fd;
    return CUDA_SUCCESS;
}

/* Memory a copy or fill may touch: inside one block, from p on. */
static int reachable(CUdeviceptr p, size_t bytes)
{
    block *b = find_block((void *)(uintptr_t)p, 0);
    return b && (char *)(uintptr_t)p + bytes <= b->base + b->bytes;
}

/* ---- Streams and events: work is done when it is issued ---- */

struct CUstream_st {
    CUcontext ctx;
};
struct CUevent_st {
    CUcontext ctx;
    double ms;
    int recorded;
};

static int valid_stream(CUstream s) { return !s || s->ctx; }

CUresult cuMemcpyHtoDAsync(CUdeviceptr d, const void *h, size_t bytes, CUstream s)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    if (!valid_stream(s) || !reachable(d, bytes)) return CUDA_ERROR_INVALID_VALUE;
    memcpy((void *)(uintptr_t)d, h, bytes);
    return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoHAsync(void *h, CUdeviceptr d, size_t bytes, CUstream s)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    if (!valid_stream(s) || !reachable(d, bytes)) return CUDA_ERROR_INVALID_VALUE;
    memcpy(h, (void *)(uintptr_t)d, bytes);
    return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoDAsync(CUdeviceptr to, CUdeviceptr from, size_t bytes, CUstream s)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    if (!valid_stream(s) || !reachable(to, bytes) || !reachable(from, bytes)) return CUDA_ERROR_INVALID_VALUE;
    memmove((void *)(uintptr_t)to, (void *)(uintptr_t)from, bytes);
    return CUDA_SUCCESS;
}
CUresult cuMemcpyPeerAsync(CUdeviceptr to, CUcontext tc, CUdeviceptr from, CUcontext fc, size_t bytes, CUstream s)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    if (!tc || !fc || !tc->peers[fc->device] || !fc->peers[tc->device]) return CUDA_ERROR_INVALID_CONTEXT;
    if (!valid_stream(s) || !reachable(to, bytes) || !reachable(from, bytes)) return CUDA_ERROR_INVALID_VALUE;
    memmove((void *)(uintptr_t)to, (void *)(uintptr_t)from, bytes);
    return CUDA_SUCCESS;
}

#define FILL(name, type)                                                                                               \
    CUresult name(CUdeviceptr d, type value, size_t n, CUstream s)                                                     \
    {                                                                                                                  \
        CALL(CUDA_ERROR_INVALID_VALUE);                                                                                \
        if (!valid_stream(s) || !reachable(d, n * sizeof value)) return CUDA_ERROR_INVALID_VALUE;                      \
        for (size_t i = 0; i < n; i++) ((type *)(uintptr_t)d)[i] = value;                                              \
        return CUDA_SUCCESS;                                                                                           \
    }
FILL(cuMemsetD8Async, unsigned char)
FILL(cuMemsetD16Async, unsigned short)
FILL(cuMemsetD32Async, unsigned int)

CUresult cuDeviceCanAccessPeer(int *can, CUdevice a, CUdevice b)
{
    CALL(CUDA_ERROR_INVALID_DEVICE);
    if (!valid_device(a) || !valid_device(b)) return CUDA_ERROR_INVALID_DEVICE;
    *can = a != b;
    return CUDA_SUCCESS;
}

CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    if (!current || !peer || flags || peer == current) return CUDA_ERROR_INVALID_VALUE;
    if (current->peers[peer->device]) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    current->peers[peer->device] = 1;
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *s, unsigned flags)
{
    (void)flags;
    CALL(CUDA_ERROR_OUT_OF_MEMORY);
    if (!current) return CUDA_ERROR_INVALID_CONTEXT;
    if (!(*s = malloc(sizeof **s))) return CUDA_ERROR_OUT_OF_MEMORY;
    (*s)->ctx = current;
    atomic_fetch_add(&live, 1);
    return CUDA_SUCCESS;
}
static CUresult release(void *object)
{
    if (!object) return CUDA_ERROR_INVALID_HANDLE;
    free(object);
    atomic_fetch_sub(&live, 1);
    return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream s) { RELEASE(CUDA_ERROR_INVALID_HANDLE, release(s)); }
CUresult cuStreamSynchronize(CUstream s)
{
    CALL(CUDA_ERROR_LAUNCH_FAILED);
    return valid_stream(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags)
{
    CALL(CUDA_ERROR_INVALID_HANDLE);
    return valid_stream(s) && e && !flags ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult cuStreamGetCtx(CUstream s, CUcontext *ctx)
{
    CALL(CUDA_ERROR_INVALID_HANDLE);
    if (!s) return CUDA_ERROR_INVALID_HANDLE;
    *ctx = s->ctx;
    return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent *e, unsigned flags)
{
    (void)flags;
    CALL(CUDA_ERROR_OUT_OF_MEMORY);
    if (!current) return CUDA_ERROR_INVALID_CONTEXT;
    if (!(*e = calloc(1, sizeof **e))) return CUDA_ERROR_OUT_OF_MEMORY;
    (*e)->ctx = current;
    atomic_fetch_add(&live, 1);
    return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent e) { RELEASE(CUDA_ERROR_INVALID_HANDLE, release(e)); }
CUresult cuEventRecord(CUevent e, CUstream s)
{
    CALL(CUDA_ERROR_INVALID_HANDLE);
    if (!e || !valid_stream(s) || (s && s->ctx != e->ctx)) return CUDA_ERROR_INVALID_HANDLE;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    e->ms = (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
    e->recorded = 1;
    return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent e)
{
    CALL(CUDA_ERROR_LAUNCH_FAILED);
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult cuEventQuery(CUevent e)
{
    CALL(CUDA_ERROR_LAUNCH_FAILED);
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
#undef cuEventElapsedTime /* the plugin opens the first version, which has the same prototype */
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end);
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
    CALL(CUDA_ERROR_INVALID_HANDLE);
    if (!start || !end || !start->recorded || !end->recorded) return CUDA_ERROR_INVALID_HANDLE;
    *ms = (float)(end->ms - start->ms);
    return CUDA_SUCCESS;
}

/* ---- Code: NVRTC's "code" is the source after a header; a module keeps it ---- */

static const char ptx_header[] = "// gpuport fake PTX\n";
enum { CUBIN_HEADER = 64 };

struct CUmod_st {
    char *text;
    struct CUfunc_st *functions;
};
struct CUfunc_st {
    char name[128];
    struct CUfunc_st *next;
};

CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    CALL(CUDA_ERROR_INVALID_IMAGE);
    const unsigned char *c = image;
    const char *text = NULL;
    if (!current) return CUDA_ERROR_INVALID_CONTEXT;
    if (c[0] == 0x7f && c[1] == 'E' && c[2] == 'L' && c[3] == 'F')
        text = (const char *)c + CUBIN_HEADER;
    else if (strncmp(image, ptx_header, sizeof ptx_header - 1) == 0)
        text = image;
    else if (!(c[0] == 0x50 && c[1] == 0xed && c[2] == 0x55 && c[3] == 0xba))
        return CUDA_ERROR_INVALID_IMAGE;
    /* nvcc's fat binaries (the prebuilt kernels) may be compressed: any kernel name is found */
    if (!(*m = calloc(1, sizeof **m))) return CUDA_ERROR_OUT_OF_MEMORY;
    if (text && !((*m)->text = strdup(text))) {
        free(*m);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    atomic_fetch_add(&live, 1);
    return CUDA_SUCCESS;
}

static CUresult unload(CUmodule m)
{
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    while (m->functions) {
        struct CUfunc_st *f = m->functions;
        m->functions = f->next;
        free(f);
    }
    free(m->text);
    return release(m);
}
CUresult cuModuleUnload(CUmodule m) { RELEASE(CUDA_ERROR_INVALID_HANDLE, unload(m)); }

static int word(char c) { return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z'); }

CUresult cuModuleGetFunction(CUfunction *fn, CUmodule m, const char *name)
{
    CALL(CUDA_ERROR_NOT_FOUND);
    if (!m || strlen(name) >= sizeof m->functions->name) return CUDA_ERROR_INVALID_VALUE;
    if (m->text) {
        /* the kernel's name must be in the source, as a whole word */
        const char *at = m->text;
        size_t len = strlen(name);
        while ((at = strstr(at, name)) && ((at > m->text && word(at[-1])) || word(at[len]))) at += len;
        if (!at) return CUDA_ERROR_NOT_FOUND;
    }
    struct CUfunc_st *f = calloc(1, sizeof *f);
    if (!f) return CUDA_ERROR_OUT_OF_MEMORY;
    snprintf(f->name, sizeof f->name, "%s", name);
    f->next = m->functions;
    m->functions = f;
    *fn = f;
    return CUDA_SUCCESS;
}

/* The fake's modules hold no variables (it runs no kernels to read them). */
CUresult cuModuleGetGlobal(CUdeviceptr *p, size_t *bytes, CUmodule m, const char *name)
{
    CALL(CUDA_ERROR_NOT_FOUND);
    (void)p, (void)bytes, (void)name;
    return m ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuFuncGetAttribute(int *v, CUfunction_attribute attr, CUfunction fn)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    if (!fn) return CUDA_ERROR_INVALID_HANDLE;
    *v = attr == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
    return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction fn, CUfunction_attribute attr, int v)
{
    CALL(CUDA_ERROR_INVALID_VALUE);
    return fn && attr == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && v >= 0 && v <= (227 << 10)
               ? CUDA_SUCCESS
               : CUDA_ERROR_INVALID_VALUE;
}

static atomic_long launches;
EXPORT long gp_fault_launches(void);
long gp_fault_launches(void) { return atomic_load(&launches); }

CUresult cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream s, void **params, void **extra)
{
    CALL(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    if (!fn || !valid_stream(s) || extra || !gx || !gy || !gz || !bx || !by || !bz) return CUDA_ERROR_INVALID_VALUE;
    if ((unsigned long)bx * by * bz > 1024 || bz > 64 || shared > (227u << 10)) return CUDA_ERROR_INVALID_VALUE;
    (void)params;
    atomic_fetch_add(&launches, 1);
    return CUDA_SUCCESS;
}

/* ---- NVRTC ---- */

struct _nvrtcProgram {
    char *source;
};

const char *nvrtcGetErrorString(nvrtcResult r) { return r == NVRTC_SUCCESS ? "NVRTC_SUCCESS" : "a fake NVRTC failure"; }
nvrtcResult nvrtcVersion(int *major, int *minor)
{
    RTC_CALL(NVRTC_ERROR_INTERNAL_ERROR);
    *major = 13;
    *minor = 0;
    return NVRTC_SUCCESS;
}
nvrtcResult nvrtcGetNumSupportedArchs(int *n)
{
    RTC_CALL(NVRTC_ERROR_INTERNAL_ERROR);
    *n = 3;
    return NVRTC_SUCCESS;
}
nvrtcResult nvrtcGetSupportedArchs(int *archs)
{
    RTC_CALL(NVRTC_ERROR_INTERNAL_ERROR);
    archs[0] = 75, archs[1] = 80, archs[2] = 90;
    return NVRTC_SUCCESS;
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram *p, const char *src, const char *name, int nheaders,
                               const char *const *headers, const char *const *include_names)
{
    (void)name, (void)headers, (void)include_names;
    RTC_CALL(NVRTC_ERROR_OUT_OF_MEMORY);
    if (!p || !src || nheaders) return NVRTC_ERROR_INVALID_INPUT;
    if (!(*p = malloc(sizeof **p))) return NVRTC_ERROR_OUT_OF_MEMORY;
    if (!((*p)->source = strdup(src))) {
        free(*p);
        return NVRTC_ERROR_OUT_OF_MEMORY;
    }
    atomic_fetch_add(&live, 1);
    return NVRTC_SUCCESS;
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram *p)
{
    int f = failing(0);
    if (!p || !*p) return NVRTC_ERROR_INVALID_PROGRAM;
    free((*p)->source);
    release(*p);
    *p = NULL;
    return f ? NVRTC_ERROR_INVALID_PROGRAM : NVRTC_SUCCESS;
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram p, int n, const char *const *opts)
{
    RTC_CALL(NVRTC_ERROR_COMPILATION);
    return p && (n == 0 || opts) ? NVRTC_SUCCESS : NVRTC_ERROR_INVALID_INPUT;
}
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram p, size_t *n)
{
    RTC_CALL(NVRTC_ERROR_INVALID_PROGRAM);
    (void)p;
    *n = 1;
    return NVRTC_SUCCESS;
}
nvrtcResult nvrtcGetProgramLog(nvrtcProgram p, char *log)
{
    RTC_CALL(NVRTC_ERROR_INVALID_PROGRAM);
    (void)p;
    log[0] = '\0';
    return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetPTXSize(nvrtcProgram p, size_t *n)
{
    RTC_CALL(NVRTC_ERROR_INVALID_PROGRAM);
    *n = sizeof ptx_header + strlen(p->source);
    return NVRTC_SUCCESS;
}
nvrtcResult nvrtcGetPTX(nvrtcProgram p, char *out)
{
    RTC_CALL(NVRTC_ERROR_INVALID_PROGRAM);
    strcpy(out, ptx_header);
    strcat(out, p->source);
    return NVRTC_SUCCESS;
}
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram p, size_t *n)
{
    RTC_CALL(NVRTC_ERROR_INVALID_PROGRAM);
    *n = CUBIN_HEADER + strlen(p->source) + 1;
    return NVRTC_SUCCESS;
}
nvrtcResult nvrtcGetCUBIN(nvrtcProgram p, char *out)
{
    RTC_CALL(NVRTC_ERROR_INVALID_PROGRAM);
    memset(out, 0, CUBIN_HEADER);
    memcpy(out,
           "\x7f"
           "ELF",
           4);
    out[18] = (char)190; /* e_machine: EM_CUDA, as a real cubin */
    strcpy(out + CUBIN_HEADER, p->source);
    return NVRTC_SUCCESS;
}

/* ---- cuBLAS: the handle, the stream, and GEMM computed on the host ---- */

struct fake_blas {
    CUstream stream;
};
typedef int blas_status;
enum { BLAS_OK = 0, BLAS_ALLOC_FAILED = 3, BLAS_INVALID_VALUE = 7, BLAS_EXECUTION_FAILED = 13 };
#define BLAS_CALL(r)                                                                                                   \
    do {                                                                                                               \
        if (failing(1)) return atomic_load(&lost) ? BLAS_EXECUTION_FAILED : (r);                                       \
    } while (0)

EXPORT blas_status cublasCreate_v2(struct fake_blas **h);
EXPORT blas_status cublasDestroy_v2(struct fake_blas *h);
EXPORT blas_status cublasSetStream_v2(struct fake_blas *h, CUstream s);
EXPORT blas_status cublasSetMathMode(struct fake_blas *h, int mode);
EXPORT blas_status cublasGetProperty(int type, int *value);
EXPORT const char *cublasGetStatusName(blas_status s);
EXPORT blas_status cublasSgemm_v2(struct fake_blas *h, int ta, int tb, int m, int n, int k, const float *alpha,
                                  const float *a, int lda, const float *b, int ldb, const float *beta, float *c,
                                  int ldc);
EXPORT blas_status cublasDgemm_v2(struct fake_blas *h, int ta, int tb, int m, int n, int k, const double *alpha,
                                  const double *a, int lda, const double *b, int ldb, const double *beta, double *c,
                                  int ldc);

blas_status cublasCreate_v2(struct fake_blas **h)
{
    BLAS_CALL(BLAS_ALLOC_FAILED);
    if (!(*h = calloc(1, sizeof **h))) return BLAS_ALLOC_FAILED;
    atomic_fetch_add(&live, 1);
    return BLAS_OK;
}
blas_status cublasDestroy_v2(struct fake_blas *h)
{
    int f = failing(1);
    release(h);
    return f ? (atomic_load(&lost) ? BLAS_EXECUTION_FAILED : BLAS_INVALID_VALUE) : BLAS_OK;
}
blas_status cublasSetStream_v2(struct fake_blas *h, CUstream s)
{
    BLAS_CALL(BLAS_INVALID_VALUE);
    h->stream = s;
    return BLAS_OK;
}
blas_status cublasSetMathMode(struct fake_blas *h, int mode)
{
    BLAS_CALL(BLAS_INVALID_VALUE);
    (void)h;
    return mode ? BLAS_INVALID_VALUE : BLAS_OK;
}
blas_status cublasGetProperty(int type, int *value)
{
    BLAS_CALL(BLAS_INVALID_VALUE);
    *value = type == 0 ? 13 : 0;
    return BLAS_OK;
}
const char *cublasGetStatusName(blas_status s)
{
    return s == BLAS_OK ? "CUBLAS_STATUS_SUCCESS" : "a fake cuBLAS failure";
}

/* Column-major C = alpha op(A) op(B) + beta C, as cuBLAS defines it. */
#define GEMM(name, type)                                                                                               \
    blas_status name(struct fake_blas *h, int ta, int tb, int m, int n, int k, const type *alpha, const type *a,       \
                     int lda, const type *b, int ldb, const type *beta, type *c, int ldc)                              \
    {                                                                                                                  \
        BLAS_CALL(BLAS_EXECUTION_FAILED);                                                                              \
        if (!h || m < 0 || n < 0 || k < 0 || ldc < (m > 1 ? m : 1)) return BLAS_INVALID_VALUE;                         \
        for (int j = 0; j < n; j++)                                                                                    \
            for (int i = 0; i < m; i++) {                                                                              \
                double sum = 0;                                                                                        \
                for (int q = 0; q < k; q++)                                                                            \
                    sum += (double)(ta ? a[q + (size_t)i * lda] : a[i + (size_t)q * lda]) *                            \
                           (double)(tb ? b[j + (size_t)q * ldb] : b[q + (size_t)j * ldb]);                             \
                type *out = &c[i + (size_t)j * ldc];                                                                   \
                *out = (type)(*alpha * sum + (*beta != 0 ? *beta * *out : 0));                                         \
            }                                                                                                          \
        return BLAS_OK;                                                                                                \
    }
GEMM(cublasSgemm_v2, float)
GEMM(cublasDgemm_v2, double)
