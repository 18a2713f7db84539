/* HIP's NVIDIA platform for the HIP plugin: libgpuport-hip-nvidia.so exports the HIP runtime
 * and hiprtc entry points the plugin opens (their ABI as the ROCm headers the plugin is built
 * with declare them), each carried out by the CUDA driver API and NVRTC, both opened at run
 * time, as HIP's own NVIDIA-platform headers map them. The plugin opens this library where no
 * ROCm runtime is found (or GPUPORT_HIP_PLATFORM=nvidia asks for it), so that its code runs on
 * an NVIDIA GPU unchanged. Device code: hiprtc's programs get kernels/hip_nvidia.h first, which
 * gives the AMD builtins gpuport's HIP prelude uses their CUDA meaning, and --offload-arch=sm_XX
 * becomes NVRTC's -arch. */
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <hip/hiprtc.h>

#include <cuda.h>
#include <nvrtc.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first cuEventElapsedTime (the _v2 cuda.h names arrived in CUDA 12.8), as the CUDA plugin. */
#undef cuEventElapsedTime
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end);

#define S(sym) S_(sym)
#define S_(sym) #sym

/* The driver API entry points used; cuda.h maps several names to their _v2 symbols. */
#define CU_API(X)                                                                                                   \
    X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)         \
    X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuMemAlloc)        \
    X(cuMemFree) X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemHostGetDevicePointer) X(cuMemcpyHtoDAsync)             \
    X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuMemsetD8Async) X(cuMemsetD16Async) X(cuMemsetD32Async)           \
    X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamWaitEvent) X(cuEventCreate)              \
    X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) X(cuEventQuery) X(cuEventElapsedTime)                 \
    X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuModuleGetGlobal) X(cuFuncGetAttribute)        \
    X(cuFuncSetAttribute)                                                                                           \
    X(cuLaunchKernel) X(cuCtxSynchronize) X(cuPointerGetAttribute) X(cuMemGetAddressRange) X(cuMemHostRegister)    \
    X(cuMemHostUnregister) X(cuDeviceCanAccessPeer) X(cuCtxEnablePeerAccess) X(cuMemcpyPeerAsync)
#define RTC_API(X)                                                                                                  \
    X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram)     \
    X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN)
#define FIELD(name) __typeof__(name) *name;
static struct {
    CU_API(FIELD) RTC_API(FIELD)
} nv;

enum { MAX_DEVICES = 64 };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;                   /* 1: loaded, -1: failed */
static CUcontext ctx[MAX_DEVICES];   /* each device's primary context, once retained */
static __thread int current = -1;    /* the calling thread's device */

static char why[512]; /* why the CUDA driver or NVRTC could not be opened: hipGetErrorName says it */

static int open_all(void *lib, const char *file, const char *const *names, void **fields, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!(fields[i] = dlsym(lib, names[i]))) {
            snprintf(why, sizeof why, "%s has no %s", file, names[i]);
            return 0;
        }
    return 1;
}

/* The CUDA driver and NVRTC, opened once; hipErrorNotInitialized without them. */
static hipError_t load(void)
{
    pthread_mutex_lock(&lock);
    if (!loaded) {
#define NAME(name) S(name),
        static const char *const cu_names[] = {CU_API(NAME)}, *const rtc_names[] = {RTC_API(NAME)};
        static const char *const rtc_libs[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", NULL};
        void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), *rtc = NULL;
        if (!cu) snprintf(why, sizeof why, "no CUDA driver: %s", dlerror());
        size_t r = 0;
        for (; cu && rtc_libs[r] && !rtc; r++) rtc = dlopen(rtc_libs[r], RTLD_NOW | RTLD_LOCAL);
        if (cu && !rtc) snprintf(why, sizeof why, "no NVRTC (libnvrtc.so.13, .12 or .so): %s", dlerror());
        size_t ncu = sizeof cu_names / sizeof *cu_names;
        loaded = cu && rtc && open_all(cu, "libcuda.so.1", cu_names, (void **)&nv, ncu) &&
                         open_all(rtc, rtc_libs[r - 1], rtc_names, (void **)&nv + ncu, sizeof rtc_names / sizeof *rtc_names)
                     ? 1
                     : -1;
    }
    int ok = loaded == 1;
    pthread_mutex_unlock(&lock);
    return ok ? hipSuccess : hipErrorNotInitialized;
}

/* CUDA's codes are HIP's for every error these calls return (HIP took CUDA's numbers). */
static hipError_t from(CUresult r) { return (hipError_t)r; }

/* The device's primary context, current on this thread. */
static hipError_t enter(int device)
{
    if (device < 0 || device >= MAX_DEVICES) return hipErrorInvalidDevice;
    pthread_mutex_lock(&lock);
    CUresult r = ctx[device] ? CUDA_SUCCESS : nv.cuDevicePrimaryCtxRetain(&ctx[device], device);
    pthread_mutex_unlock(&lock);
    if (r == CUDA_SUCCESS) r = nv.cuCtxSetCurrent(ctx[device]);
    if (r == CUDA_SUCCESS) current = device;
    return from(r);
}

/* Calls that act in the current context: device 0's where the thread has chosen none, as HIP. */
#define IN_CONTEXT()                                                                                                \
    do {                                                                                                            \
        if (current < 0) {                                                                                          \
            hipError_t e_ = enter(0);                                                                               \
            if (e_ != hipSuccess) return e_;                                                                        \
        }                                                                                                           \
    } while (0)

hipError_t hipInit(unsigned int flags)
{
    hipError_t e = load();
    return e != hipSuccess ? e : from(nv.cuInit(flags));
}

/* The HIP version whose ABI this library presents. */
hipError_t hipDriverGetVersion(int *version)
{
    if (!version) return hipErrorInvalidValue;
    *version = HIP_VERSION;
    return hipSuccess;
}

const char *hipGetErrorName(hipError_t e)
{
    const char *name = NULL;
    if (load() != hipSuccess) return why;
    if (nv.cuGetErrorName((CUresult)e, &name) != CUDA_SUCCESS) return "unknown error";
    return name; /* CUDA's name: it is CUDA's error */
}

hipError_t hipGetDeviceCount(int *count)
{
    hipError_t e = load();
    return e != hipSuccess ? e : from(nv.cuDeviceGetCount(count));
}

hipError_t hipDeviceGet(hipDevice_t *device, int ordinal) { return from(nv.cuDeviceGet(device, ordinal)); }
hipError_t hipDeviceGetName(char *name, int len, hipDevice_t device) { return from(nv.cuDeviceGetName(name, len, device)); }
hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t device) { return from(nv.cuDeviceTotalMem(bytes, device)); }

hipError_t hipDeviceGetAttribute(int *value, hipDeviceAttribute_t attr, int device)
{
    CUdevice_attribute a;
    switch (attr) {
    case hipDeviceAttributeMaxThreadsPerBlock: a = CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK; break;
    case hipDeviceAttributeMaxBlockDimX: a = CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X; break;
    case hipDeviceAttributeMaxBlockDimY: a = CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y; break;
    case hipDeviceAttributeMaxBlockDimZ: a = CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: a = CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK; break;
    /* What a launch can have: hipModuleLaunchKernel asks for it past the default. */
    case hipDeviceAttributeSharedMemPerBlockOptin: a = CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN; break;
    case hipDeviceAttributeMultiprocessorCount: a = CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT; break;
    case hipDeviceAttributeWarpSize: a = CU_DEVICE_ATTRIBUTE_WARP_SIZE; break;
    case hipDeviceAttributeIntegrated: a = CU_DEVICE_ATTRIBUTE_INTEGRATED; break;
    case hipDeviceAttributeComputeCapabilityMajor: a = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR; break;
    case hipDeviceAttributeComputeCapabilityMinor: a = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR; break;
    default: return hipErrorNotSupported;
    }
    return from(nv.cuDeviceGetAttribute(value, a, device));
}

/* The ROCm 5 layout of the plugin's headers; gcnArchName holds the CUDA target ("sm_90"). */
static hipError_t properties(hipDeviceProp_t *p, int device)
{
    if (!p) return hipErrorInvalidValue;
    memset(p, 0, sizeof *p);
    int major = 0, minor = 0;
    CUresult r = nv.cuDeviceGetName(p->name, sizeof p->name, device);
    if (r == CUDA_SUCCESS) r = nv.cuDeviceTotalMem(&p->totalGlobalMem, device);
    if (r == CUDA_SUCCESS) r = nv.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    if (r == CUDA_SUCCESS) r = nv.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    if (r == CUDA_SUCCESS) r = nv.cuDeviceGetAttribute(&p->warpSize, CU_DEVICE_ATTRIBUTE_WARP_SIZE, device);
    if (r == CUDA_SUCCESS)
        r = nv.cuDeviceGetAttribute(&p->multiProcessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
    p->major = major, p->minor = minor;
    snprintf(p->gcnArchName, sizeof p->gcnArchName, "sm_%d%d", major, minor);
    return from(r);
}

hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int device) { return properties(p, device); }
hipError_t hipGetDevicePropertiesR0000(hipDeviceProp_t *p, int device);
hipError_t hipGetDevicePropertiesR0000(hipDeviceProp_t *p, int device) { return properties(p, device); }

hipError_t hipGetDevice(int *device)
{
    if (!device) return hipErrorInvalidValue;
    *device = current < 0 ? 0 : current;
    return hipSuccess;
}

hipError_t hipSetDevice(int device) { return enter(device); }

hipError_t hipDeviceSynchronize(void)
{
    IN_CONTEXT();
    return from(nv.cuCtxSynchronize());
}

/* ---- Memory ---- */

hipError_t hipMalloc(void **p, size_t bytes)
{
    IN_CONTEXT();
    CUdeviceptr d = 0;
    CUresult r = nv.cuMemAlloc(&d, bytes);
    *p = (void *)(uintptr_t)d;
    return from(r);
}

hipError_t hipFree(void *p)
{
    IN_CONTEXT();
    return from(nv.cuMemFree((CUdeviceptr)(uintptr_t)p));
}

/* hipHostMallocPortable and hipHostMallocMapped are CUDA's flags of the same names. */
hipError_t hipHostMalloc(void **p, size_t bytes, unsigned int flags)
{
    IN_CONTEXT();
    return from(nv.cuMemHostAlloc(p, bytes, flags));
}

hipError_t hipHostFree(void *p)
{
    IN_CONTEXT();
    return from(nv.cuMemFreeHost(p));
}

hipError_t hipHostGetDevicePointer(void **d, void *h, unsigned int flags)
{
    IN_CONTEXT();
    CUdeviceptr p = 0;
    CUresult r = nv.cuMemHostGetDevicePointer(&p, h, flags);
    *d = (void *)(uintptr_t)p;
    return from(r);
}

#define DPTR(p) ((CUdeviceptr)(uintptr_t)(p))
hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void *src, size_t bytes, hipStream_t s)
{
    return from(nv.cuMemcpyHtoDAsync(DPTR(dst), src, bytes, (CUstream)s));
}
hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t bytes, hipStream_t s)
{
    return from(nv.cuMemcpyDtoHAsync(dst, DPTR(src), bytes, (CUstream)s));
}
hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t bytes, hipStream_t s)
{
    return from(nv.cuMemcpyDtoDAsync(DPTR(dst), DPTR(src), bytes, (CUstream)s));
}
hipError_t hipMemsetD8Async(hipDeviceptr_t d, unsigned char v, size_t n, hipStream_t s)
{
    return from(nv.cuMemsetD8Async(DPTR(d), v, n, (CUstream)s));
}
hipError_t hipMemsetD16Async(hipDeviceptr_t d, unsigned short v, size_t n, hipStream_t s)
{
    return from(nv.cuMemsetD16Async(DPTR(d), v, n, (CUstream)s));
}
hipError_t hipMemsetD32Async(hipDeviceptr_t d, int v, size_t n, hipStream_t s)
{
    return from(nv.cuMemsetD32Async(DPTR(d), (unsigned)v, n, (CUstream)s));
}

/* ---- Streams and events (hipStreamNonBlocking, hipEventDisableTiming: CUDA's values) ---- */

hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned int flags)
{
    IN_CONTEXT();
    return from(nv.cuStreamCreate((CUstream *)s, flags));
}
hipError_t hipStreamDestroy(hipStream_t s) { return from(nv.cuStreamDestroy((CUstream)s)); }
hipError_t hipStreamSynchronize(hipStream_t s) { return from(nv.cuStreamSynchronize((CUstream)s)); }
hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned int flags)
{
    return from(nv.cuStreamWaitEvent((CUstream)s, (CUevent)e, flags));
}
hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned flags)
{
    IN_CONTEXT();
    return from(nv.cuEventCreate((CUevent *)e, flags));
}
hipError_t hipEventDestroy(hipEvent_t e) { return from(nv.cuEventDestroy((CUevent)e)); }
hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) { return from(nv.cuEventRecord((CUevent)e, (CUstream)s)); }
hipError_t hipEventSynchronize(hipEvent_t e) { return from(nv.cuEventSynchronize((CUevent)e)); }
hipError_t hipEventQuery(hipEvent_t e) { return from(nv.cuEventQuery((CUevent)e)); }
hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)
{
    return from(nv.cuEventElapsedTime(ms, (CUevent)start, (CUevent)stop));
}

/* ---- Modules and launches ---- */

/* AMD's code objects (a clang offload bundle, or an ELF for EM_AMDGPU, 224: the plugin's
 * prebuilt kernels) are refused here; CUDA takes its own ELF (EM_CUDA, 190), fatbins and PTX. */
hipError_t hipModuleLoadData(hipModule_t *m, const void *image)
{
    const unsigned char *c = image;
    if (!c || memcmp(c, "__CLANG_OFFLOAD_BUNDLE__", 24) == 0 ||
        (memcmp(c, "\x7f" "ELF", 4) == 0 && (c[18] | c[19] << 8) != 190))
        return hipErrorInvalidImage;
    IN_CONTEXT();
    return from(nv.cuModuleLoadData((CUmodule *)m, image));
}
hipError_t hipModuleUnload(hipModule_t m) { return from(nv.cuModuleUnload((CUmodule)m)); }
hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name)
{
    return from(nv.cuModuleGetFunction((CUfunction *)f, (CUmodule)m, name));
}
hipError_t hipModuleGetGlobal(hipDeviceptr_t *p, size_t *bytes, hipModule_t m, const char *name)
{
    CUdeviceptr d = 0;
    hipError_t e = from(nv.cuModuleGetGlobal(&d, bytes, (CUmodule)m, name));
    *p = (hipDeviceptr_t)(uintptr_t)d;
    return e;
}
/* HIP_FUNC_ATTRIBUTE_* are CUDA's CU_FUNC_ATTRIBUTE_* in order. */
hipError_t hipFuncGetAttribute(int *value, hipFunction_attribute attr, hipFunction_t f)
{
    return from(nv.cuFuncGetAttribute(value, (CUfunction_attribute)attr, (CUfunction)f));
}

/* Past 48 KiB of dynamic shared memory, CUDA wants the kernel to ask first. */
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                 unsigned int by, unsigned int bz, unsigned int shared, hipStream_t s, void **params,
                                 void **extra)
{
    if (shared > 48 * 1024) {
        CUresult r = nv.cuFuncSetAttribute((CUfunction)f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared);
        if (r != CUDA_SUCCESS) return from(r);
    }
    return from(nv.cuLaunchKernel((CUfunction)f, gx, gy, gz, bx, by, bz, shared, (CUstream)s, params, extra));
}

/* ---- Interop ---- */

hipError_t hipPointerGetAttribute(void *data, hipPointer_attribute attr, hipDeviceptr_t p)
{
    CUresult r = nv.cuPointerGetAttribute(data, (CUpointer_attribute)attr, DPTR(p));
    if (r == CUDA_SUCCESS && attr == HIP_POINTER_ATTRIBUTE_MEMORY_TYPE) { /* CUDA counts from 1, HIP from 0 */
        unsigned *type = data;
        *type = *type == CU_MEMORYTYPE_HOST ? hipMemoryTypeHost : *type == CU_MEMORYTYPE_DEVICE ? hipMemoryTypeDevice
                                                                                                 : hipMemoryTypeUnified;
    }
    return from(r);
}

hipError_t hipMemGetAddressRange(hipDeviceptr_t *base, size_t *size, hipDeviceptr_t p)
{
    CUdeviceptr b = 0;
    CUresult r = nv.cuMemGetAddressRange(&b, size, DPTR(p));
    if (base) *base = (void *)(uintptr_t)b;
    return from(r);
}

hipError_t hipHostRegister(void *p, size_t bytes, unsigned int flags)
{
    IN_CONTEXT();
    return from(nv.cuMemHostRegister(p, bytes, flags));
}
hipError_t hipHostUnregister(void *p) { return from(nv.cuMemHostUnregister(p)); }

hipError_t hipDeviceCanAccessPeer(int *can, int device, int peer)
{
    return from(nv.cuDeviceCanAccessPeer(can, device, peer));
}

hipError_t hipDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    IN_CONTEXT();
    int me = current;
    hipError_t e = enter(peer); /* the peer's context, retained */
    if (e == hipSuccess) e = enter(me);
    return e != hipSuccess ? e : from(nv.cuCtxEnablePeerAccess(ctx[peer], flags));
}

hipError_t hipMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device, size_t bytes, hipStream_t s)
{
    if (dst_device < 0 || dst_device >= MAX_DEVICES || src_device < 0 || src_device >= MAX_DEVICES ||
        !ctx[dst_device] || !ctx[src_device])
        return hipErrorInvalidDevice;
    return from(nv.cuMemcpyPeerAsync(DPTR(dst), ctx[dst_device], DPTR(src), ctx[src_device], bytes, (CUstream)s));
}

/* ---- hiprtc on NVRTC (HIPRTC_* codes are NVRTC's) ---- */

/* What gpuport's HIP prelude takes from AMD's compiler, in CUDA's terms: kernels/hip_nvidia.h,
 * which nvcc also includes first for this platform's prebuilt kernels. */
extern const char gp__hip_nvidia_compat[];

hiprtcResult hiprtcVersion(int *major, int *minor)
{
    return load() != hipSuccess ? HIPRTC_ERROR_INTERNAL_ERROR : (hiprtcResult)nv.nvrtcVersion(major, minor);
}

const char *hiprtcGetErrorString(hiprtcResult r)
{
    return load() != hipSuccess ? "NVRTC not loaded" : nv.nvrtcGetErrorString((nvrtcResult)r);
}

hiprtcResult hiprtcCreateProgram(hiprtcProgram *prog, const char *src, const char *name, int nheaders,
                                 const char **headers, const char **include_names)
{
    if (load() != hipSuccess) return HIPRTC_ERROR_INTERNAL_ERROR;
    static const char line[] = "#line 1\n";
    size_t n = strlen(src), c = strlen(gp__hip_nvidia_compat);
    char *all = malloc(c + sizeof line + n);
    if (!all) return HIPRTC_ERROR_OUT_OF_MEMORY;
    memcpy(all, gp__hip_nvidia_compat, c);
    memcpy(all + c, line, sizeof line - 1);
    memcpy(all + c + sizeof line - 1, src, n + 1);
    nvrtcResult r = nv.nvrtcCreateProgram((nvrtcProgram *)prog, all, name, nheaders, headers, include_names);
    free(all);
    return (hiprtcResult)r;
}

hiprtcResult hiprtcDestroyProgram(hiprtcProgram *prog)
{
    return (hiprtcResult)nv.nvrtcDestroyProgram((nvrtcProgram *)prog);
}

/* --offload-arch=sm_90 is NVRTC's -arch=sm_90; the other options pass as they are. */
hiprtcResult hiprtcCompileProgram(hiprtcProgram prog, int n, const char **options)
{
    enum { MAX_OPTIONS = 64 };
    const char *opts[MAX_OPTIONS];
    char arch[64];
    if (n < 0 || n > MAX_OPTIONS) return HIPRTC_ERROR_INVALID_OPTION;
    for (int i = 0; i < n; i++) {
        opts[i] = options[i];
        if (strncmp(options[i], "--offload-arch=", 15) == 0) {
            snprintf(arch, sizeof arch, "-arch=%s", options[i] + 15);
            opts[i] = arch;
        }
    }
    return (hiprtcResult)nv.nvrtcCompileProgram((nvrtcProgram)prog, n, opts);
}

hiprtcResult hiprtcGetProgramLogSize(hiprtcProgram prog, size_t *size)
{
    return (hiprtcResult)nv.nvrtcGetProgramLogSize((nvrtcProgram)prog, size);
}
hiprtcResult hiprtcGetProgramLog(hiprtcProgram prog, char *log)
{
    return (hiprtcResult)nv.nvrtcGetProgramLog((nvrtcProgram)prog, log);
}
hiprtcResult hiprtcGetCodeSize(hiprtcProgram prog, size_t *size)
{
    return (hiprtcResult)nv.nvrtcGetCUBINSize((nvrtcProgram)prog, size);
}
hiprtcResult hiprtcGetCode(hiprtcProgram prog, char *code)
{
    return (hiprtcResult)nv.nvrtcGetCUBIN((nvrtcProgram)prog, code);
}

/* For the plugin: the platform this library is. */
const char gpuport_hip_platform[] = "nvidia";
