/* What only CUDA does: the primary context, NVRTC's targets and code, driver checks. */
#include "../cuhip/cuhip.h"
#include "coarsen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The oldest driver API the plugin accepts. */
#define CH_CUDA_MIN_DRIVER 12000

const char *gp__ch_vendor_driver_libs[] = {"libcuda.so.1", "libcuda.so", NULL};
const char gp__ch_vendor_driver_hint[] =
    "no NVIDIA driver is installed; install the NVIDIA driver (the plugin needs driver API 12.0 or newer)";

const char *const gp__ch_vendor_rtc_libs[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", NULL};
/* The toolkit the environment names, then the one this plugin was built against. */
const char *const gp__ch_vendor_lib_dirs[] = {"$CUDA_PATH/lib64",
#ifdef GP__CUDA_LIB_HINT
                                              GP__CUDA_LIB_HINT,
#endif
                                              "/usr/local/cuda/lib64", NULL};
const char *gp__ch_vendor_rtc_fallback(void) { return NULL; }

/* cuBLAS ships with the toolkit, so it is looked for where NVRTC is. */
const char *const gp__ch_vendor_blas_libs[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
const char gp__ch_vendor_blas_hint[] = "install cuBLAS 12 or 13 (the CUDA toolkit's libcublas, e.g. NVIDIA's "
                                       "libcublas-13-0 package), or set CUDA_PATH to a toolkit that has it";

void gp__ch_vendor_blas_version(char *buf, size_t len)
{
    int v[3] = {0, 0, 0};
    gp__ch.blas_get_property(CH_CUBLAS_MAJOR_VERSION, &v[0]);
    gp__ch.blas_get_property(CH_CUBLAS_MINOR_VERSION, &v[1]);
    gp__ch.blas_get_property(CH_CUBLAS_PATCH_LEVEL, &v[2]);
    snprintf(buf, len, "%d.%d.%d", v[0], v[1], v[2]);
}

ch_blas_status gp__ch_vendor_blas_setup(ch_blas_handle h, const char **call)
{
    /* DEFAULT_MATH, not PEDANTIC_MATH: both keep FP32 products in FP32 (no TF32, which only
     * CUBLAS_TF32_TENSOR_OP_MATH allows), but pedantic mode may also give up cuBLAS's fastest
     * FP32 kernels, and cuBLAS is the performance anchor gpuport is measured against. Set
     * explicitly so that a different default in a later cuBLAS cannot change the results. */
    *call = "cublasSetMathMode";
    return gp__ch.blas_set_math_mode(h, CH_CUBLAS_DEFAULT_MATH);
}

const char *gp__ch_vendor_error_name(ch_result r)
{
    const char *name = NULL;
    if (gp__ch.get_error_name && gp__ch.get_error_name(r, &name) == CUDA_SUCCESS && name)
        return name;
    return "unknown CUDA error";
}

static void cu_version_text(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
}

gp_status gp__ch_vendor_init(char *reason, size_t reason_len)
{
    CUresult r = gp__ch.init(0);
    if (r != CUDA_SUCCESS) {
        const char *why = "the NVIDIA driver did not start; check that its kernel module is loaded (nvidia-smi)";
        if (r == CUDA_ERROR_STUB_LIBRARY)
            why = "the libcuda.so.1 found is the CUDA toolkit's stub, not a driver; install the NVIDIA driver or take "
                  "the stubs folder out of LD_LIBRARY_PATH";
        else if (r == CUDA_ERROR_NO_DEVICE)
            why = "no NVIDIA GPU visible; check CUDA_VISIBLE_DEVICES";
        else if (r == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH || r == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)
            why = "the user-space driver (libcuda) and the kernel module differ in version; reinstall the NVIDIA "
                  "driver or reboot";
        snprintf(reason, reason_len, "cuInit failed: %s (%d): %s", gp__ch_vendor_error_name(r), (int)r, why);
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }
    int v = 0;
    r = gp__ch.driver_get_version(&v);
    if (r != CUDA_SUCCESS) {
        snprintf(reason, reason_len, "cuDriverGetVersion failed: %s (%d)", gp__ch_vendor_error_name(r), (int)r);
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }
    cu_version_text(v, gp__ch_driver_version, sizeof gp__ch_driver_version);
    if (v < CH_CUDA_MIN_DRIVER) {
        char need[16];
        cu_version_text(CH_CUDA_MIN_DRIVER, need, sizeof need);
        snprintf(reason, reason_len,
                 "the NVIDIA driver offers CUDA driver API %s, the plugin needs %s or newer; update the NVIDIA driver",
                 gp__ch_driver_version, need);
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }
    gp__ch_host->debug("load", "CUDA driver %s initialised", gp__ch_driver_version);
    return GP_SUCCESS;
}

gp_status gp__ch_vendor_device_open(gp__ch_device *d, gp_device_info *info)
{
    (void)info; /* the shared code fills every field CUDA reports */
    int major = 0, minor = 0;
    CUresult r = gp__ch.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->device);
    if (r == CUDA_SUCCESS)
        r = gp__ch.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->device);
    if (r == CUDA_SUCCESS)
        r = gp__ch.primary_ctx_retain(&d->v.ctx, d->device);
    if (r != CUDA_SUCCESS)
        return gp__ch_fail(r, "opening the device's primary context");
    d->v.arch = major * 10 + minor;
    return GP_SUCCESS;
}

void gp__ch_vendor_device_close(gp__ch_device *d)
{
    CUcontext cur = NULL;
    if (gp__ch.ctx_get_current(&cur) == CUDA_SUCCESS && cur == d->v.ctx)
        gp__ch.ctx_set_current(NULL);
    gp__ch.primary_ctx_release(d->device);
}

gp_status gp__ch_vendor_enter(gp__ch_device *d)
{
    CUcontext cur;
    if (gp__ch.ctx_get_current(&cur) == CUDA_SUCCESS && cur == d->v.ctx)
        return GP_SUCCESS;
    CUresult r = gp__ch.ctx_set_current(d->v.ctx);
    return r == CUDA_SUCCESS ? GP_SUCCESS : gp__ch_fail(r, "making the device's context current");
}

void gp__ch_vendor_cache_id(gp__ch_device *d, char *buf, size_t len)
{
    snprintf(buf, len, "%s|sm_%d|driver %s|nvrtc %s", d->name, d->v.arch, gp__ch_driver_version,
             gp__ch_rtc_loaded ? gp__ch_rtc_version : "none");
}

size_t gp__ch_vendor_rtc_options(gp__ch_device *d, const char **opts, size_t max, char *buf, size_t buf_len,
                                 int *kind)
{
    int n = 0, archs[128];
    if (gp__ch.rtc_get_num_supported_archs(&n) != NVRTC_SUCCESS || n <= 0 || n > 128 ||
        gp__ch.rtc_get_supported_archs(archs) != NVRTC_SUCCESS) {
        gp__ch_host->set_error("NVRTC %s did not list the architectures it supports", gp__ch_rtc_version);
        return (size_t)-1;
    }
    /* The newest target NVRTC has that the device can run: a cubin for the device's own
     * architecture, otherwise PTX the driver compiles for it. */
    int best = 0, lo = archs[0], hi = archs[0];
    for (int i = 0; i < n; i++) {
        lo = archs[i] < lo ? archs[i] : lo;
        hi = archs[i] > hi ? archs[i] : hi;
        if (archs[i] <= d->v.arch && archs[i] > best)
            best = archs[i];
    }
    if (!best) {
        gp__ch_host->set_error("NVRTC %s compiles for sm_%d to sm_%d, but %s is sm_%d; use an older CUDA toolkit",
                               gp__ch_rtc_version, lo, hi, d->name, d->v.arch);
        return (size_t)-1;
    }
    *kind = best == d->v.arch ? GP__CH_CODE_CUBIN : GP__CH_CODE_PTX;
    snprintf(buf, buf_len, "--gpu-architecture=%s_%d", *kind == GP__CH_CODE_CUBIN ? "sm" : "compute", best);
    const char *fixed[] = {buf, "-default-device", "-std=c++14"};
    size_t count = sizeof fixed / sizeof fixed[0];
    if (count > max)
        count = max;
    memcpy(opts, fixed, count * sizeof *opts);
    return count;
}

/* One kind of NVRTC's output, malloc'ed (PTX NUL-terminated). */
static gp_status nv_output(ch_rtc_program prog, int kind, char **code, size_t *bytes)
{
    size_t n = 0;
    nvrtcResult r = kind == GP__CH_CODE_CUBIN ? gp__ch.rtc_get_cubin_size(prog, &n) : gp__ch.rtc_get_ptx_size(prog, &n);
    char *p = r == NVRTC_SUCCESS && n ? malloc(n) : NULL;
    if (r == NVRTC_SUCCESS && n && !p) {
        gp__ch_host->set_error("out of host memory");
        return GP_ERROR_OUT_OF_HOST_MEMORY;
    }
    if (p)
        r = kind == GP__CH_CODE_CUBIN ? gp__ch.rtc_get_cubin(prog, p) : gp__ch.rtc_get_ptx(prog, p);
    if (!p || r != NVRTC_SUCCESS) {
        free(p);
        gp__ch_host->set_error("NVRTC gave no code: %s (%d)", gp__ch.rtc_get_error_string(r), (int)r);
        return GP_ERROR_BACKEND;
    }
    if (kind == GP__CH_CODE_PTX)
        p[n - 1] = '\0'; /* the size counts the terminator; make sure it is one */
    *code = p;
    *bytes = n;
    return GP_SUCCESS;
}

gp_status gp__ch_vendor_rtc_code(gp__ch_device *d, ch_rtc_program prog, int *kind, void **code, size_t *bytes)
{
    (void)d;
    char *ptx, *out;
    size_t n, twins = 0;
    /* Where a kernel gains a twin (coarsen.h), the program is its PTX with the twins, which
     * the driver compiles when it loads it. */
    gp_status st = nv_output(prog, GP__CH_CODE_PTX, &ptx, &n);
    if (st != GP_SUCCESS)
        return st;
    char *twinned = gp__coarsen_ptx(ptx, &twins);
    if (twinned) {
        free(ptx);
        gp__ch_host->debug("compile", "%zu kernel(s) of the program can run several work-groups a block", twins);
        *kind = GP__CH_CODE_PTX;
        *code = twinned;
        *bytes = strlen(twinned) + 1;
        return GP_SUCCESS;
    }
    if (*kind == GP__CH_CODE_PTX) {
        *code = ptx;
        *bytes = n;
        return GP_SUCCESS;
    }
    free(ptx);
    st = nv_output(prog, *kind, &out, bytes);
    if (st == GP_SUCCESS)
        *code = out;
    return st;
}

int gp__ch_vendor_code_ok(int kind, const void *code, size_t bytes)
{
    const unsigned char *c = code;
    if (kind == GP__CH_CODE_CUBIN)
        return bytes >= 64 && c[0] == 0x7f && c[1] == 'E' && c[2] == 'L' && c[3] == 'F';
    if (kind == GP__CH_CODE_PTX)
        return bytes > 1 && c[bytes - 1] == '\0';
    if (kind == GP__CH_CODE_FATBIN) /* nvcc --fatbin: magic 0xba55ed50, little-endian */
        return bytes >= 16 && c[0] == 0x50 && c[1] == 0xed && c[2] == 0x55 && c[3] == 0xba;
    return 0;
}

int gp__ch_vendor_param_sizes(ch_function fn, size_t declared, size_t *sizes, size_t max, size_t *n)
{
    if (!gp__ch.func_get_param_info)
        return 0;
    /* The driver gives no count: the end is the first index it refuses. A count the source
     * declares is taken when the driver knows every index below it, so that the usual kernel
     * costs no refused call (which compute-sanitizer reports as an error). */
    size_t i = 0, offset, size;
    for (; declared <= 32768 && i < declared; i++) {
        if (gp__ch.func_get_param_info(fn, i, &offset, &size) != CUDA_SUCCESS)
            break;
        if (sizes && i < max)
            sizes[i] = size;
    }
    if (declared <= 32768 && i == declared) {
        *n = i;
        return 1;
    }
    /* Kernel parameters fit in 32 KiB, so a count past that means the driver is not saying. */
    for (; i < 32768; i++) {
        if (gp__ch.func_get_param_info(fn, i, &offset, &size) != CUDA_SUCCESS)
            break;
        if (sizes && i < max)
            sizes[i] = size;
    }
    *n = i;
    return i < 32768;
}

/* ---- Interop ---- */

void *gp__ch_vendor_context(gp__ch_device *d)
{
    return d->v.ctx;
}

gp_status gp__ch_vendor_owns(gp__ch_device *d, ch_dptr ptr)
{
    CUcontext ctx = NULL;
    CUresult r = gp__ch.pointer_get_attribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, ptr);
    if (r != CUDA_SUCCESS) {
        gp__ch_host->set_error("0x%llx is no memory CUDA knows (cuPointerGetAttribute: %s (%d))", (unsigned long long)ptr,
                               gp__ch_vendor_error_name(r), (int)r);
        return GP_ERROR_INVALID_ARGUMENT;
    }
    if (ctx != d->v.ctx) {
        gp__ch_host->set_error("0x%llx belongs to another CUDA context than the primary context of %s, which gpuport "
                               "uses (memory of another device, or of a context of its own; cudaMalloc allocates in "
                               "the primary context)",
                               (unsigned long long)ptr, d->name);
        return GP_ERROR_DEVICE_MISMATCH;
    }
    return GP_SUCCESS;
}

gp_status gp__ch_vendor_stream_check(gp__ch_device *d, ch_stream stream)
{
    CUcontext ctx = NULL;
    if (!gp__ch.stream_get_ctx) {
        gp__ch_host->set_error("the CUDA driver here lacks cuStreamGetCtx; update it");
        return GP_ERROR_UNSUPPORTED;
    }
    CUresult r = gp__ch.stream_get_ctx(stream, &ctx);
    if (r != CUDA_SUCCESS) {
        gp__ch_host->set_error("the native stream is no CUDA stream (cuStreamGetCtx: %s (%d))",
                               gp__ch_vendor_error_name(r), (int)r);
        return GP_ERROR_INVALID_ARGUMENT;
    }
    if (ctx != d->v.ctx) {
        gp__ch_host->set_error("the native stream belongs to another CUDA context than the primary context of %s",
                               d->name);
        return GP_ERROR_DEVICE_MISMATCH;
    }
    return GP_SUCCESS;
}

int gp__ch_vendor_can_peer(gp__ch_device *dst, gp__ch_device *src)
{
    int can = 0;
    return gp__ch.device_can_access_peer(&can, dst->device, src->device) == CUDA_SUCCESS && can;
}

gp_status gp__ch_vendor_copy_peer(gp__ch_device *dst, ch_dptr to, gp__ch_device *src, ch_dptr from, size_t bytes,
                                  ch_stream stream)
{
    if (!gp__ch.ctx_enable_peer_access || !gp__ch.memcpy_peer_async) {
        gp__ch_host->set_error("the CUDA driver here lacks peer copies; update it");
        return GP_ERROR_UNSUPPORTED;
    }
    /* Each context reaches the other's memory directly from the first copy on (enabling twice
     * is refused as already done, which is fine). */
    gp__ch_device *pair[2][2] = {{dst, src}, {src, dst}};
    for (int i = 0; i < 2; i++) {
        gp_status st = gp__ch_vendor_enter(pair[i][0]);
        if (st != GP_SUCCESS)
            return st;
        CUresult r = gp__ch.ctx_enable_peer_access(pair[i][1]->v.ctx, 0);
        if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
            return gp__ch_fail(r, "enabling peer access");
    }
    CUresult r = gp__ch.memcpy_peer_async(to, dst->v.ctx, from, src->v.ctx, bytes, stream);
    return r == CUDA_SUCCESS ? GP_SUCCESS : gp__ch_fail(r, "copying between devices (cuMemcpyPeerAsync)");
}

/* ---- Device memory other APIs import (NVIDIA's OpenCL on the same GPU: core's transfer.c) ---- */

int gp__ch_device_uuid(void *dev, unsigned char uuid[16])
{
    gp__ch_device *d = dev;
    CUuuid u;
    if (!gp__ch.device_get_uuid || gp__ch.device_get_uuid(&u, d->device) != CUDA_SUCCESS) return 0;
    memcpy(uuid, u.bytes, 16);
    return 1;
}

/* cuMemCreate's memory, mapped into the primary context's address space, with an opaque file
 * descriptor for it (cuMemAlloc's memory cannot be exported). */
gp_status gp__ch_buffer_export(void *dev, size_t bytes, void **out, int *fd)
{
    gp__ch_device *d = dev;
    if (!gp__ch.mem_get_granularity || !gp__ch.mem_create || !gp__ch.mem_release || !gp__ch.mem_address_reserve ||
        !gp__ch.mem_address_free || !gp__ch.mem_map || !gp__ch.mem_unmap || !gp__ch.mem_set_access || !gp__ch.mem_export) {
        gp__ch_host->set_error("the CUDA driver here lacks cuMemCreate or cuMemExportToShareableHandle");
        return GP_ERROR_UNSUPPORTED;
    }
    int can = 0;
    if (gp__ch.device_get_attribute(&can, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                                    d->device) != CUDA_SUCCESS || !can) {
        gp__ch_host->set_error("%s cannot export memory as a file descriptor", d->name);
        return GP_ERROR_UNSUPPORTED;
    }
    CH_ENTER(d);
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {CU_MEM_LOCATION_TYPE_DEVICE, d->device},
                                .requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR};
    size_t grain = 0;
    CUresult r = gp__ch.mem_get_granularity(&grain, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    if (r != CUDA_SUCCESS) return gp__ch_fail(r, "cuMemGetAllocationGranularity");
    size_t whole = (bytes + grain - 1) / grain * grain;
    ch_buffer *b = calloc(1, sizeof *b);
    if (!b) return gp__ch_no_host_memory();
    CUmemGenericAllocationHandle h = 0;
    CUdeviceptr p = 0;
    CUmemAccessDesc access = {{CU_MEM_LOCATION_TYPE_DEVICE, d->device}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    const char *what = "cuMemCreate";
    r = gp__ch.mem_create(&h, whole, &prop, 0);
    if (r == CUDA_SUCCESS && (r = gp__ch.mem_address_reserve(&p, whole, 0, 0, 0)) != CUDA_SUCCESS)
        what = "cuMemAddressReserve", p = 0;
    if (r == CUDA_SUCCESS && (r = gp__ch.mem_map(p, whole, 0, h, 0)) != CUDA_SUCCESS) what = "cuMemMap";
    if (r == CUDA_SUCCESS && (r = gp__ch.mem_set_access(p, whole, &access, 1)) != CUDA_SUCCESS) what = "cuMemSetAccess";
    if (r == CUDA_SUCCESS && (r = gp__ch.mem_export(fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) != CUDA_SUCCESS)
        what = "cuMemExportToShareableHandle";
    b->ptr = p, b->bytes = whole, b->memory = GP_MEMORY_DEVICE, b->owned = 1, b->exported = h;
    if (r != CUDA_SUCCESS) {
        gp_status st = gp__ch_fail(r, what);
        if (h) gp__ch_buffer_unexport(b);
        free(b);
        return st;
    }
    *out = b;
    return GP_SUCCESS;
}

void gp__ch_buffer_unexport(ch_buffer *b)
{
    if (b->ptr) {
        gp__ch.mem_unmap(b->ptr, b->bytes);
        gp__ch.mem_address_free(b->ptr, b->bytes);
    }
    gp__ch.mem_release(b->exported);
}
