/* What only HIP does: the current device, gfx targets (sm_ on HIP's NVIDIA platform), hiprtc's
 * code objects, runtime checks, and which runtime: ROCm's, or HIP's NVIDIA platform (nvidia.c). */
#define _GNU_SOURCE /* dladdr */
#include "../cuhip/cuhip.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The oldest HIP runtime the plugin accepts (HIP_VERSION encoding: major * 10^7 + minor * 10^5). */
#define CH_HIP_MIN_VERSION 50000000

/* The runtime matching the headers the plugin was built with first: its hipDeviceProp_t is the
 * one they describe. Last, HIP's NVIDIA platform (nvidia.c) from the plugin's own folder:
 * ROCm wins where both are installed, unless GPUPORT_HIP_PLATFORM=nvidia (or amd) says. */
static char nvidia_lib[1024];
const char *gp__ch_vendor_driver_libs[] = {
#if HIP_VERSION_MAJOR < 6
    "libamdhip64.so.5", "libamdhip64.so.6",
#else
    "libamdhip64.so.6", "libamdhip64.so.5",
#endif
    "libamdhip64.so", NULL, NULL};
enum { ROCM_LIBS = 3 };
const char gp__ch_vendor_driver_hint[] =
    "the ROCm runtime is not installed; install libamdhip64-5 (Debian) or ROCm (the plugin needs HIP 5.0 or newer); "
    "for HIP's NVIDIA platform, libgpuport-hip-nvidia.so belongs beside the plugin (gpuport builds it where the "
    "CUDA toolkit's headers are)";

__attribute__((constructor)) static void hip_platform_libs(void)
{
    Dl_info here;
    const char *want = getenv("GPUPORT_HIP_PLATFORM");
    char real[PATH_MAX];
    if (dladdr((void *)hip_platform_libs, &here) && here.dli_fname) {
        /* core loads a GPUPORT_PLUGIN_PATH plugin through /proc/self/fd/N, still open now: the
         * folder is that of the file it names */
        const char *name = realpath(here.dli_fname, real) ? real : here.dli_fname;
        const char *slash = strrchr(name, '/');
        snprintf(nvidia_lib, sizeof nvidia_lib, "%.*s/libgpuport-hip-nvidia.so", slash ? (int)(slash - name) : 1,
                 slash ? name : ".");
    }
    if (want && strcmp(want, "nvidia") == 0) {
        gp__ch_vendor_driver_libs[0] = nvidia_lib;
        gp__ch_vendor_driver_libs[1] = NULL;
    } else if (!want || strcmp(want, "amd") != 0) {
        gp__ch_vendor_driver_libs[ROCM_LIBS] = nvidia_lib;
    }
}

/* 1 where the runtime loaded is HIP's NVIDIA platform (it says so in gpuport_hip_platform). */
static int nvidia_platform;

/* The driver library that was loaded, found in init: ROCm 5 keeps hiprtc inside it. */
static char hip_driver_path[1024];

const char *const gp__ch_vendor_rtc_libs[] = {"libhiprtc.so.6", "libhiprtc.so.5", "libhiprtc.so", NULL};
const char *const gp__ch_vendor_lib_dirs[] = {"$ROCM_PATH/lib", "/opt/rocm/lib", NULL};
/* ROCm 5 has no separate hiprtc: the runtime itself exports it (opening it again only takes
 * another reference). */
const char *gp__ch_vendor_rtc_fallback(void) { return hip_driver_path[0] ? hip_driver_path : NULL; }

const char *const gp__ch_vendor_blas_libs[] = {"librocblas.so.4", "librocblas.so.3", "librocblas.so.0", "librocblas.so",
                                               NULL};
const char gp__ch_vendor_blas_hint[] = "install rocBLAS (rocm-libs, or the rocblas package of AMD's ROCm "
                                       "repository; Debian 12 has none), and set ROCM_PATH if ROCm is not in /opt/rocm";

void gp__ch_vendor_blas_version(char *buf, size_t len)
{
    char v[128]; /* "4.0.0.<commit>"; rocBLAS refuses a buffer shorter than the whole text */
    if (gp__ch.blas_get_version_string(v, sizeof v) != CH_BLAS_SUCCESS)
        snprintf(v, sizeof v, "(version unknown)");
    snprintf(buf, len, "%s", v);
}

ch_blas_status gp__ch_vendor_blas_setup(ch_blas_handle h, const char **call)
{
    (void)h, (void)call; /* a new handle computes FP32 in FP32: rocBLAS's xf32 is opt-in */
    return CH_BLAS_SUCCESS;
}

const char *gp__ch_vendor_error_name(ch_result r)
{
    const char *name = gp__ch.get_error_name ? gp__ch.get_error_name(r) : NULL;
    return name ? name : "unknown HIP error";
}

static void hip_version_text(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d.%d", v / 10000000, v / 100000 % 100, v % 100000);
}

/* Why the runtime sees no GPU, in terms of what the user can check. */
static const char *hip_no_gpu_hint(void)
{
    if (access("/dev/kfd", F_OK) != 0)
        return "/dev/kfd does not exist, so the amdgpu kernel driver is not loaded or there is no AMD GPU; "
               "otherwise check ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES";
    if (access("/dev/kfd", R_OK | W_OK) != 0)
        return "/dev/kfd is not readable and writable by this user; add the user to the render (and video) "
               "group, or check the container's device permissions";
    return "check /dev/kfd and /dev/dri permissions and ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES";
}

/* On an NVIDIA GPU, HIP runs through HIP's NVIDIA platform where the plugin has it. */
static const char *hip_nvidia_hint(void)
{
    return access(nvidia_lib, F_OK) == 0 ? "; GPUPORT_HIP_PLATFORM=nvidia runs HIP on an NVIDIA GPU through CUDA" : "";
}

gp_status gp__ch_vendor_init(char *reason, size_t reason_len)
{
    Dl_info where;
    if (!hip_driver_path[0] && dladdr((void *)gp__ch.init, &where) && where.dli_fname)
        snprintf(hip_driver_path, sizeof hip_driver_path, "%s", where.dli_fname);

    void *lib = hip_driver_path[0] ? dlopen(hip_driver_path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    const char *platform = lib ? dlsym(lib, "gpuport_hip_platform") : NULL;
    nvidia_platform = platform && strcmp(platform, "nvidia") == 0;
    if (lib) dlclose(lib); /* RTLD_NOLOAD took a reference of its own */
    const char *want = getenv("GPUPORT_HIP_PLATFORM");
    if (want && *want && strcmp(want, "nvidia") && strcmp(want, "amd")) {
        snprintf(reason, reason_len, "GPUPORT_HIP_PLATFORM is '%s'; it must be amd or nvidia", want);
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }

    int v = 0;
    hipError_t r = gp__ch.driver_get_version(&v);
    if (r != hipSuccess) {
        snprintf(reason, reason_len, "hipDriverGetVersion failed: %s (%d)", gp__ch_vendor_error_name(r), (int)r);
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }
    hip_version_text(v, gp__ch_driver_version, sizeof gp__ch_driver_version);
    if (v < CH_HIP_MIN_VERSION) {
        char need[32];
        hip_version_text(CH_HIP_MIN_VERSION, need, sizeof need);
        snprintf(reason, reason_len, "the ROCm runtime is HIP %s, the plugin needs %s or newer; update ROCm",
                 gp__ch_driver_version, need);
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }
    /* Without a GPU, ROCm 5 fails hipInit with hipErrorInvalidDevice and counting with
     * hipErrorNoDevice; both mean the same to the user. */
    int count = 0;
    const char *what = "hipInit";
    r = gp__ch.init(0);
    if (r == hipSuccess) {
        what = "hipGetDeviceCount";
        r = gp__ch.device_get_count(&count);
    }
    if (nvidia_platform && (r != hipSuccess || count == 0)) {
        snprintf(reason, reason_len, "HIP's NVIDIA platform (%s) %s (%s: %s (%d))", hip_driver_path,
                 r == hipErrorNotInitialized ? "cannot start" : "found no NVIDIA GPU", what,
                 r == hipSuccess ? "0 devices" : gp__ch_vendor_error_name(r), (int)r);
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }
    if (nvidia_platform) /* "5.2.21153, nvidia platform": in the backend's version and the cache keys */
        snprintf(gp__ch_driver_version + strlen(gp__ch_driver_version),
                 sizeof gp__ch_driver_version - strlen(gp__ch_driver_version), ", nvidia platform");
    if (r == hipErrorNoDevice || r == hipErrorInvalidDevice || (r == hipSuccess && count == 0)) {
        snprintf(reason, reason_len, "the ROCm runtime found no AMD GPU (%s: %s (%d)): %s%s", what,
                 r == hipSuccess ? "0 devices" : gp__ch_vendor_error_name(r), (int)r, hip_no_gpu_hint(),
                 hip_nvidia_hint());
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }
    if (r != hipSuccess) {
        snprintf(reason, reason_len, "%s failed: %s (%d): the ROCm runtime did not start; check that the amdgpu "
                 "driver is loaded (rocminfo)", what, gp__ch_vendor_error_name(r), (int)r);
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }
    gp__ch_host->debug("load", "HIP runtime %s (%s) initialised", gp__ch_driver_version, hip_driver_path);
    return GP_SUCCESS;
}

/* The properties struct has grown between releases: room for a newer runtime writing more. */
typedef union hip_props {
    hipDeviceProp_t p;
    char room[sizeof(hipDeviceProp_t) + 4096];
} hip_props;

gp_status gp__ch_vendor_device_open(gp__ch_device *d, gp_device_info *info)
{
    /* The shared code fills every field HIP reports, the wavefront width included, but the vendor. */
    if (nvidia_platform)
        snprintf(info->vendor, sizeof info->vendor, "NVIDIA");
    __typeof__(hipGetDeviceProperties) *get = gp__ch.get_device_properties;
#if HIP_VERSION_MAJOR < 6
    if (gp__ch.get_device_properties_r0000)
        get = gp__ch.get_device_properties_r0000;
    else if (strncmp(gp__ch_driver_version, "5.", 2) != 0)
        get = NULL; /* a newer runtime's plain name takes a layout these headers do not know */
#endif
    if (!get) {
        gp__ch_host->set_error("HIP runtime %s has no hipGetDeviceProperties these headers match; rebuild the "
                               "plugin against this ROCm",
                               gp__ch_driver_version);
        return GP_ERROR_BACKEND;
    }
    hip_props props;
    memset(&props, 0, sizeof props);
    hipError_t r = get(&props.p, d->ordinal);
    if (r != hipSuccess)
        return gp__ch_fail(r, "reading the device's properties");
    const char *arch = props.p.gcnArchName; /* "sm_90" on the NVIDIA platform */
    if (strncmp(arch, nvidia_platform ? "sm_" : "gfx", 3) != 0 || !memchr(arch, '\0', sizeof props.p.gcnArchName)) {
        gp__ch_host->set_error("%s reports no gfx target (gcnArchName '%.32s'); the ROCm runtime is too old or "
                               "does not match the plugin's headers",
                               d->name, memchr(arch, '\0', 32) ? arch : "?");
        return GP_ERROR_BACKEND;
    }
    snprintf(d->v.target_id, sizeof d->v.target_id, "%s", arch);
    size_t len = strcspn(arch, ":"); /* "gfx90a:sramecc+:xnack-" -> "gfx90a" */
    snprintf(d->v.target, sizeof d->v.target, "%.*s", (int)len, arch);
    gp__ch_host->debug("load", "%s is %s", d->name, d->v.target_id);
    return GP_SUCCESS;
}

void gp__ch_vendor_device_close(gp__ch_device *d)
{
    (void)d; /* HIP keeps no per-device state for the plugin to release */
}

gp_status gp__ch_vendor_enter(gp__ch_device *d)
{
    int cur = -1;
    if (gp__ch.get_device(&cur) == hipSuccess && cur == d->device)
        return GP_SUCCESS;
    hipError_t r = gp__ch.set_device(d->device);
    return r == hipSuccess ? GP_SUCCESS : gp__ch_fail(r, "making the device current");
}

void gp__ch_vendor_cache_id(gp__ch_device *d, char *buf, size_t len)
{
    /* ROCm 5's hiprtc always says 9.0: the runtime's version names the compiler too. */
    snprintf(buf, len, "%s|%s|hip %s|hiprtc %s", d->name, d->v.target_id, gp__ch_driver_version,
             gp__ch_rtc_loaded ? gp__ch_rtc_version : "none");
}

size_t gp__ch_vendor_rtc_options(gp__ch_device *d, const char **opts, size_t max, char *buf, size_t buf_len,
                                 int *kind)
{
    /* The bare gfx name: code for it runs whatever the device's sramecc/xnack settings. */
    snprintf(buf, buf_len, "--offload-arch=%s", d->v.target);
    const char *fixed[] = {buf, "-std=c++14"};
    size_t count = sizeof fixed / sizeof fixed[0];
    if (count > max)
        count = max;
    memcpy(opts, fixed, count * sizeof *opts);
    *kind = GP__CH_CODE_HIP;
    return count;
}

gp_status gp__ch_vendor_rtc_code(gp__ch_device *d, ch_rtc_program prog, int *kind, void **code, size_t *bytes)
{
    (void)d, (void)kind;
    size_t n = 0;
    hiprtcResult r = gp__ch.rtc_get_code_size(prog, &n);
    if (r != HIPRTC_SUCCESS || n == 0) {
        gp__ch_host->set_error("hiprtc gave no code: %s (%d)", gp__ch.rtc_get_error_string(r), (int)r);
        return GP_ERROR_BACKEND;
    }
    char *p = malloc(n);
    if (!p) {
        gp__ch_host->set_error("out of host memory");
        return GP_ERROR_OUT_OF_HOST_MEMORY;
    }
    r = gp__ch.rtc_get_code(prog, p);
    if (r != HIPRTC_SUCCESS) {
        free(p);
        gp__ch_host->set_error("hiprtc gave no code: %s (%d)", gp__ch.rtc_get_error_string(r), (int)r);
        return GP_ERROR_BACKEND;
    }
    *code = p;
    *bytes = n;
    return GP_SUCCESS;
}

int gp__ch_vendor_code_ok(int kind, const void *code, size_t bytes)
{
    /* An ELF code object from hiprtc, or a clang offload bundle from hipcc --genco; on HIP's
     * NVIDIA platform also nvcc's fatbin (magic 0xBA55ED50) of the prebuilt kernels. */
    static const char bundle[] = "__CLANG_OFFLOAD_BUNDLE__";
    const unsigned char *c = code;
    if (nvidia_platform && kind == GP__CH_CODE_FATBIN && bytes >= 16)
        return c[0] == 0x50 && c[1] == 0xED && c[2] == 0x55 && c[3] == 0xBA;
    if (kind != GP__CH_CODE_HIP || bytes < 64)
        return 0;
    return (c[0] == 0x7f && c[1] == 'E' && c[2] == 'L' && c[3] == 'F') || memcmp(c, bundle, sizeof bundle - 1) == 0;
}

int gp__ch_vendor_param_sizes(ch_function fn, size_t declared, size_t *sizes, size_t max, size_t *n)
{
    (void)fn, (void)declared, (void)sizes, (void)max, (void)n;
    return 0; /* HIP has no query for a kernel's parameters */
}


/* ---- Interop ---- */

void *gp__ch_vendor_context(gp__ch_device *d)
{
    (void)d; /* HIP has no contexts to hand out */
    return NULL;
}

gp_status gp__ch_vendor_owns(gp__ch_device *d, ch_dptr ptr)
{
    int ordinal = -1;
    hipError_t r = gp__ch.pointer_get_attribute(&ordinal, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr);
    if (r != hipSuccess) {
        gp__ch_host->set_error("%p is no memory HIP knows (hipPointerGetAttribute: %s (%d))", ptr,
                               gp__ch_vendor_error_name(r), (int)r);
        return GP_ERROR_INVALID_ARGUMENT;
    }
    if (ordinal != d->ordinal) {
        gp__ch_host->set_error("%p is memory of HIP device %d, not of %s (device %d)", ptr, ordinal, d->name, d->ordinal);
        return GP_ERROR_DEVICE_MISMATCH;
    }
    return GP_SUCCESS;
}

gp_status gp__ch_vendor_stream_check(gp__ch_device *d, ch_stream stream)
{
    (void)d; /* ROCm 5 cannot say which device a stream is of: only that it is a stream */
    unsigned int flags = 0;
    hipError_t r = gp__ch.stream_get_flags ? gp__ch.stream_get_flags(stream, &flags) : hipSuccess;
    if (r != hipSuccess) {
        gp__ch_host->set_error("the native stream is no HIP stream (hipStreamGetFlags: %s (%d))",
                               gp__ch_vendor_error_name(r), (int)r);
        return GP_ERROR_INVALID_ARGUMENT;
    }
    return GP_SUCCESS;
}

int gp__ch_vendor_can_peer(gp__ch_device *dst, gp__ch_device *src)
{
    int can = 0;
    return gp__ch.device_can_access_peer(&can, dst->ordinal, src->ordinal) == hipSuccess && can;
}

gp_status gp__ch_vendor_copy_peer(gp__ch_device *dst, ch_dptr to, gp__ch_device *src, ch_dptr from, size_t bytes,
                                  ch_stream stream)
{
    if (!gp__ch.device_enable_peer_access || !gp__ch.memcpy_peer_async) {
        gp__ch_host->set_error("the HIP runtime here lacks peer copies; update it");
        return GP_ERROR_UNSUPPORTED;
    }
    gp__ch_device *pair[2][2] = {{dst, src}, {src, dst}};
    for (int i = 0; i < 2; i++) {
        gp_status st = gp__ch_vendor_enter(pair[i][0]);
        if (st != GP_SUCCESS)
            return st;
        hipError_t r = gp__ch.device_enable_peer_access(pair[i][1]->ordinal, 0);
        if (r != hipSuccess && r != hipErrorPeerAccessAlreadyEnabled)
            return gp__ch_fail(r, "enabling peer access");
    }
    hipError_t r = gp__ch.memcpy_peer_async(to, dst->ordinal, from, src->ordinal, bytes, stream);
    return r == hipSuccess ? GP_SUCCESS : gp__ch_fail(r, "copying between devices (hipMemcpyPeerAsync)");
}
