/* cuhip: the host code the CUDA and HIP plugins share.
 *
 * The CUDA driver API and HIP's module API mirror each other call for call, so every
 * gp__backend hook is written once, in cuhip.c, against a vendor binding. Each plugin compiles
 * cuhip.c itself, with its own folder first on the include path, where "cuhip_binding.h" names
 * the vendor's types, constants and entry points; the plugin's own .c supplies the few things
 * that genuinely differ (the gp__ch_vendor_* functions below). Nothing is looked up through
 * function pointers of neutral types: every call is type-checked against the vendor header.
 *
 * What a binding header (cuhip_binding.h) must provide; src/backends/cuda/ is the example:
 *   - CH_BACKEND_NAME ("hip"), CH_DRIVER_TITLE ("HIP runtime"), CH_RTC_TITLE ("hiprtc"),
 *     CH_VENDOR ("AMD"), used in messages and device info;
 *   - typedefs ch_result, ch_device, ch_dptr, ch_stream, ch_event, ch_module, ch_function,
 *     ch_rtc_result, ch_rtc_program (hipError_t, hipDevice_t, hipDeviceptr_t, hipStream_t,
 *     hipEvent_t, hipModule_t, hipFunction_t, hiprtcResult, hiprtcProgram);
 *   - constants CH_SUCCESS, CH_ERROR_NOT_READY, CH_ERROR_OUT_OF_MEMORY, CH_ERROR_NOT_FOUND,
 *     CH_ERROR_INVALID_VALUE, CH_ERROR_LAUNCH_OUT_OF_RESOURCES, CH_RTC_SUCCESS,
 *     CH_RTC_ERROR_COMPILATION, CH_STREAM_NON_BLOCKING, CH_EVENT_DEFAULT,
 *     CH_HOSTALLOC_PORTABLE, CH_HOSTALLOC_DEVICEMAP (hipHostMallocPortable,
 *     hipHostMallocMapped), the device attributes CH_ATTR_MAX_THREADS_PER_BLOCK,
 *     CH_ATTR_MAX_BLOCK_DIM_X/Y/Z, CH_ATTR_SHARED_MEM_PER_BLOCK, CH_ATTR_COMPUTE_UNITS,
 *     CH_ATTR_WARP_SIZE, CH_ATTR_INTEGRATED, CH_FUNC_ATTR_MAX_THREADS_PER_BLOCK and
 *     CH_FUNC_ATTR_SHARED_SIZE_BYTES; optionally CH_ATTR_SHARED_MEM_OPTIN and
 *     CH_FUNC_ATTR_MAX_DYNAMIC_SHARED with the field func_set_attribute, where a kernel must
 *     opt in to its larger shared memory (CUDA);
 *   - CH_DPTR_ADD(p, off) and CH_DPTR_IS_NULL(p) (HIP: char-pointer arithmetic on void *);
 *   - CH_DRIVER_API(X), CH_DRIVER_API_OPTIONAL(X) and CH_RTC_API(X): lists of
 *     X(field, vendor function, "symbol") with at least the fields cuhip.c calls (see the CUDA
 *     binding for the list). The vendor function only gives the prototype (__typeof__), so
 *     each field must name a function whose parameters line up with the CUDA one of the same
 *     field: hipMalloc, hipFree, hipHostMalloc, hipHostFree, hipHostGetDevicePointer,
 *     hipMemcpyHtoDAsync, hipMemcpyDtoHAsync, hipMemcpyDtoDAsync, hipMemsetD8Async,
 *     hipMemsetD16Async, hipMemsetD32Async, hipStreamCreateWithFlags, hipStreamDestroy,
 *     hipStreamSynchronize, hipStreamWaitEvent, hipEventCreateWithFlags, hipEventDestroy,
 *     hipEventRecord, hipEventSynchronize, hipEventQuery, hipEventElapsedTime,
 *     hipModuleLoadData, hipModuleUnload, hipModuleGetFunction, hipFuncGetAttribute,
 *     hipModuleLaunchKernel, hipGetDeviceCount, hipDeviceGet, hipDeviceGetName,
 *     hipDeviceGetAttribute, hipDeviceTotalMem, hipDriverGetVersion and the hiprtc
 *     counterparts of the rtc_* fields cuhip.c uses (hiprtcVersion, hiprtcGetErrorString,
 *     hiprtcCreateProgram, hiprtcDestroyProgram, hiprtcCompileProgram,
 *     hiprtcGetProgramLogSize, hiprtcGetProgramLog). Vendor-only fields (cuInit,
 *     hipSetDevice, hiprtcGetCode...) may be added freely; only the vendor .c uses them.
 *     The symbol string is what dlsym looks up: stringify after macro expansion (HIP maps
 *     some names to versioned symbols, as cuda.h does with _v2);
 *   - CH_INTEROP_API(X): the entry points of native handles and peer copies, resolved when the
 *     driver has them (pointer_get_attribute, mem_get_address_range, host_register,
 *     host_unregister, device_can_access_peer, plus vendor-only ones), with
 *     CH_DPTR_FROM_U64 and CH_DPTR_TO_U64, CH_POINTER_ATTR_MEMORY_TYPE and
 *     CH_POINTER_ATTR_HOST_POINTER, CH_MEMORYTYPE_HOST and CH_HOSTREGISTER_FLAGS;
 *   - the vendor BLAS, declared by the binding itself (its headers are not needed to build):
 *     CH_BLAS_TITLE ("rocBLAS"), typedefs ch_blas_handle, ch_blas_status and ch_blas_op (enums
 *     passed as int), CH_BLAS_SUCCESS, CH_BLAS_ALLOC_FAILED, CH_BLAS_OP_N, CH_BLAS_OP_T, and
 *     CH_BLAS_API(X) / CH_BLAS_API_OPTIONAL(X) with the fields blas_create, blas_destroy,
 *     blas_set_stream, blas_sgemm, blas_dgemm (rocblas_create_handle, rocblas_destroy_handle,
 *     rocblas_set_stream, rocblas_sgemm, rocblas_dgemm: column-major, int sizes, host scalars)
 *     and optionally blas_status_name (rocblas_status_to_string), plus vendor-only fields;
 *   - struct ch_vendor_device: what the vendor part keeps per device (CUDA: the primary
 *     context and compute capability; HIP: the gfx target name).
 *
 * And the vendor .c must define the gp__ch_vendor_* functions and tables declared below; HIP's
 * are: driver libraries libamdhip64.so.5/.so.6/.so, hiprtc libhiprtc.so.6/.so.5/.so or else
 * the driver library itself (ROCm 5 has hiprtc inside it); BLAS librocblas.so.4/.3/.0/.so;
 * init = hipInit plus the version
 * check; enter = hipSetDevice when hipGetDevice differs; device_open = the gfx name from
 * hipGetDeviceProperties; rtc options --offload-arch=gfxNNN; code = hiprtcGetCode as
 * GP__CH_CODE_HIP. The plugin's build also provides gp__ch_prelude, gp__ch_fill_source
 * (kernels/fill.gp) and the prebuilt table (cmake/prebuilt.cmake).
 */
#ifndef GPUPORT_CUHIP_H
#define GPUPORT_CUHIP_H

#include <pthread.h>
#include <stdatomic.h>

#include "../backend.h"
#include "cuhip_binding.h"

#define CH__FIELD(field, fn, sym) __typeof__(fn) *field;
typedef struct gp__ch_api {
    CH_DRIVER_API(CH__FIELD)
    CH_DRIVER_API_OPTIONAL(CH__FIELD)
    CH_INTEROP_API(CH__FIELD)
    CH_RTC_API(CH__FIELD)
    CH_BLAS_API(CH__FIELD)
    CH_BLAS_API_OPTIONAL(CH__FIELD)
} gp__ch_api;
#undef CH__FIELD

extern gp__ch_api gp__ch;          /* the resolved entry points */
extern const gp__host *gp__ch_host; /* core's messages and debug output */
extern int gp__ch_rtc_loaded;       /* 1 when every CH_RTC_API entry was resolved */
extern char gp__ch_rtc_tried[1536]; /* where it was looked for, when it was not (load.c) */
extern char gp__ch_driver_version[32], gp__ch_rtc_version[32]; /* "13.0"; filled by vendor init */
extern const char gp__ch_prelude[]; /* the kernel dialect prelude, embedded at build time */

typedef struct gp__ch_device {
    ch_device device;
    int ordinal;
    char name[256];
    ch_vendor_device v;
    /* kernels/fill.gp, for 8-byte patterns: prebuilt or compiled on first use. */
    pthread_mutex_t fill_lock;
    ch_module fill_module;
    ch_function fill_function;
    /* The vendor BLAS handle, made on first use; the lock also serializes its calls, since
     * the stream a handle works on is state of the handle. */
    pthread_mutex_t blas_lock;
    ch_blas_handle blas;
} gp__ch_device;

typedef struct ch_buffer {
    ch_dptr ptr; /* what kernels see; for host memory its device-side address (0 if none) */
    void *host;  /* pinned and mapped buffers: the host address */
    size_t bytes;
    gp_memory memory;
    int owned;      /* freed by buffer_destroy (0: the caller's, wrapped with GP_BORROW) */
    int registered; /* the caller's host memory, registered: unregistered, never freed */
    unsigned long long exported; /* memory made for buffer_export (CUDA: its cuMemCreate handle), or 0 */
} ch_buffer;

/* Kinds of code a binary holds (the program_build header). */
enum { GP__CH_CODE_CUBIN = 1, GP__CH_CODE_PTX = 2, GP__CH_CODE_HIP = 3, GP__CH_CODE_FATBIN = 4 };

/* Binaries the build made with nvcc or hipcc (cmake/prebuilt.cmake), one per kernel source and
 * -D options: program_build hands one out instead of compiling when the source matches exactly. */
typedef struct gp__ch_prebuilt {
    const char *source; /* what core composes after the prelude and its newline: the #define
                           lines of the options, "#line 1", the .gp file's text */
    const unsigned char *code;
    size_t bytes;
    int kind;
} gp__ch_prebuilt;
extern const gp__ch_prebuilt gp__ch_prebuilt_table[];
extern const size_t gp__ch_prebuilt_count;
extern const char gp__ch_fill_source[]; /* kernels/fill.gp */

/* Sets the detail message "<what> failed: NAME (code)" and returns the matching status. */
gp_status gp__ch_fail(ch_result r, const char *what);

/* Opens the first of the NULL-terminated names, looked for by the loader and then in each of
 * gp__ch_vendor_lib_dirs, for which resolve (returning the first symbol missing, or NULL)
 * succeeds. Every failure is appended to tried ("; " apart); the first also goes to first
 * (either may be NULL). NULL when none opened. */
void *gp__ch_find_lib(const char *const *names, const char *(*resolve)(void *lib), char *tried, size_t tried_len,
                      char *first, size_t first_len);

typedef struct ch_event_obj {
    ch_event ev;
    atomic_int recorded; /* elapsed time on a never-recorded event is the caller's error */
} ch_event_obj;

/* Returns the detail of a failed driver call as its status. */
#define CH_CALL(call, what)                                                                    \
    do {                                                                                       \
        ch_result ch__r = (call);                                                              \
        if (ch__r != CH_SUCCESS)                                                               \
            return gp__ch_fail(ch__r, what);                                                   \
    } while (0)

/* Makes the device's context current, or returns why it cannot. */
#define CH_ENTER(d)                                                                            \
    do {                                                                                       \
        gp_status ch__s = gp__ch_vendor_enter(d);                                              \
        if (ch__s != GP_SUCCESS)                                                               \
            return ch__s;                                                                      \
    } while (0)

/* The hooks of the plugin's table, by file; the layers go base.c (the state, failures, library
 * search), the vendor's file (cuda.c, hip.c), load.c, program.c, memory.c (its fills launch a
 * kernel), interop.c, blas.c, and cuhip.c (devices and the table) on top. */
/* base.c */
gp_status gp__ch_no_host_memory(void);
void *gp__ch_try_lib(const char *path, const char *(*resolve)(void *lib), char *tried, size_t tried_len,
                     char *first, size_t first_len);

/* load.c: the plugin's init */
gp_status gp__ch_init(const gp__host *host, char *reason, size_t reason_len, char *version, size_t version_len,
                      size_t *ndevices);

/* memory.c: buffers, streams, copies, fills, events */
gp_status gp__ch_buffer_create(void *dev, gp_memory memory, size_t bytes, void **out);
void gp__ch_buffer_destroy(void *dev, void *buf);
gp_status gp__ch_sync(void *dev, void *stream);
gp_status gp__ch_buffer_map(void *dev, void *stream, void *buf, size_t bytes, void **host);
gp_status gp__ch_buffer_unmap(void *dev, void *stream, void *buf, void *host);
gp_status gp__ch_stream_create(void *dev, void **out);
void gp__ch_stream_destroy(void *dev, void *stream);
gp_status gp__ch_write(void *dev, void *stream, void *dst, size_t off, const void *src, size_t bytes, int blocking);
gp_status gp__ch_read(void *dev, void *stream, void *src, size_t off, void *dst, size_t bytes, int blocking);
gp_status gp__ch_copy(void *dev, void *stream, void *dst, size_t dst_off, void *src, size_t src_off, size_t bytes,
                      int blocking);
gp_status gp__ch_fill(void *dev, void *stream, void *dst, size_t off, size_t bytes, const void *pattern,
                      size_t pattern_size, int blocking);
gp_status gp__ch_event_create(void *dev, void **out);
void gp__ch_event_destroy(void *dev, void *event);
gp_status gp__ch_event_record(void *dev, void *event, void *stream);
gp_status gp__ch_stream_wait_event(void *dev, void *stream, void *event);
gp_status gp__ch_event_synchronize(void *dev, void *event);
gp_status gp__ch_event_query(void *dev, void *event);
gp_status gp__ch_event_elapsed_ms(void *dev, void *start, void *end, double *ms);

/* program.c: programs, kernels, launches */
gp_status gp__ch_program_build(void *dev, const char *source, void **binary, size_t *binary_bytes);
gp_status gp__ch_program_load(void *dev, const void *binary, size_t binary_bytes, void **out);
void gp__ch_program_destroy(void *dev, void *program);
gp_status gp__ch_program_global(void *dev, void *program, const char *name, void **out, size_t *bytes);
gp_status gp__ch_kernel_create(void *dev, void *program, const char *name, void **out, gp__kernel_props *props);
void gp__ch_kernel_destroy(void *dev, void *kernel);
gp_status gp__ch_launch(void *dev, void *stream, void *kernel, unsigned dims, const size_t groups[3],
                        const size_t local[3], size_t nargs, const gp_arg *args);

/* interop.c: native handles, registration, copies between devices */
gp_status gp__ch_native_device(void *dev, gp_native_device *out);
gp_status gp__ch_native_stream(void *dev, void *stream, gp_native_stream *out);
gp_status gp__ch_native_buffer(void *dev, void *buf, gp_native_buffer *out);
gp_status gp__ch_native_event(void *dev, void *event, gp_native_event *out);
gp_status gp__ch_buffer_wrap(void *dev, const gp_native_buffer *native, int adopt, void **out, size_t *bytes,
                             gp_memory *memory);
gp_status gp__ch_buffer_register(void *dev, void *host, size_t bytes, void **out);
gp_status gp__ch_stream_wrap(void *dev, const gp_native_stream *native, void **out);
int gp__ch_can_copy_peer(void *dst, void *src);
gp_status gp__ch_copy_peer(void *dst_dev, void *stream, void *dst, size_t dst_off, void *src_dev, void *src,
                           size_t src_off, size_t bytes, int blocking);

/* The vendor BLAS hooks (blas.c); gp__ch_blas_close frees the device's handle. */
gp_status gp__ch_blas_info(void *dev, char *text, size_t len);
gp_status gp__ch_blas_gemm(void *dev, void *stream, gp_type type, int trans_a, int trans_b, size_t m, size_t n,
                           size_t k, double alpha, void *a, size_t a_off, size_t lda, void *b, size_t b_off,
                           size_t ldb, double beta, void *c, size_t c_off, size_t ldc);
void gp__ch_blas_close(gp__ch_device *d);

/* ---- What each vendor supplies ---- */

/* NULL-terminated names dlopen tries for the driver; the first is the one messages name. */
extern const char *gp__ch_vendor_driver_libs[];
/* What to tell a user whose driver library is missing. */
extern const char gp__ch_vendor_driver_hint[];
/* Where the runtime compiler and the BLAS are looked for: NULL-terminated file names, tried in
 * the loader's search and then in each of the NULL-terminated folders ("$VAR/sub" where the
 * variable is set); the runtime compiler last in a library the vendor names (NULL for none). */
extern const char *const gp__ch_vendor_rtc_libs[];
extern const char *const gp__ch_vendor_lib_dirs[];
const char *gp__ch_vendor_rtc_fallback(void);
extern const char *const gp__ch_vendor_blas_libs[];
extern const char gp__ch_vendor_blas_hint[]; /* what to install when none is found */
/* The loaded BLAS's version ("13.1.0"), into buf. */
void gp__ch_vendor_blas_version(char *buf, size_t len);
/* Settings a new handle needs (CUDA: the math mode); called with the device current. On
 * failure sets *call to the BLAS call that failed. */
ch_blas_status gp__ch_vendor_blas_setup(ch_blas_handle h, const char **call);
/* After the driver table is resolved: initialises the driver and checks its version, filling
 * gp__ch_driver_version. On failure fills reason and returns GP_ERROR_BACKEND_UNAVAILABLE. */
gp_status gp__ch_vendor_init(char *reason, size_t reason_len);
const char *gp__ch_vendor_error_name(ch_result r);
/* Fills d->v and the info fields the shared code does not (vendor-specific ones). */
gp_status gp__ch_vendor_device_open(gp__ch_device *d, gp_device_info *info);
void gp__ch_vendor_device_close(gp__ch_device *d);
/* Makes the device current on the calling thread when it is not already. */
gp_status gp__ch_vendor_enter(gp__ch_device *d);
void gp__ch_vendor_cache_id(gp__ch_device *d, char *buf, size_t len);
/* Options naming the target: up to max entries into opts (strings in buf); returns how many,
 * or (size_t)-1 with the error set when the compiler cannot target the device. Sets *kind
 * to the code kind gp__ch_vendor_rtc_code will produce. */
size_t gp__ch_vendor_rtc_options(gp__ch_device *d, const char **opts, size_t max, char *buf, size_t buf_len,
                                 int *kind);
/* The compiled code of prog, malloc'ed; *kind may change to PTX where CUDA's kernels gain
 * twins (coarsen.h). */
gp_status gp__ch_vendor_rtc_code(gp__ch_device *d, ch_rtc_program prog, int *kind, void **code, size_t *bytes);
/* Whether code of this kind can be handed to the loader (shape checks only). */
int gp__ch_vendor_code_ok(int kind, const void *code, size_t bytes);
/* Parameter sizes of a kernel: the first max into sizes, the count of all into *n; returns 0
 * when the driver cannot tell. declared is the count the source declares, or (size_t)-1. */
int gp__ch_vendor_param_sizes(ch_function fn, size_t declared, size_t *sizes, size_t max, size_t *n);

/* Interop. The context gp_native_device names (CUDA: the primary one; HIP: NULL). owns:
 * GP_SUCCESS when ptr is memory of device d (CUDA: of its context; HIP: of its ordinal), else an
 * error with the message set. stream_check: likewise for a stream (what the driver can tell).
 * can_peer and copy_peer: device-to-device copies between two devices of the plugin. */
void *gp__ch_vendor_context(gp__ch_device *d);
gp_status gp__ch_vendor_owns(gp__ch_device *d, ch_dptr ptr);
gp_status gp__ch_vendor_stream_check(gp__ch_device *d, ch_stream stream);
int gp__ch_vendor_can_peer(gp__ch_device *dst, gp__ch_device *src);
#ifdef CH_EXPORTS_MEMORY
/* The backend's device_uuid and buffer_export hooks, and what buffer_destroy does for the latter's. */
int gp__ch_device_uuid(void *dev, unsigned char uuid[16]);
gp_status gp__ch_buffer_export(void *dev, size_t bytes, void **buf, int *fd);
void gp__ch_buffer_unexport(ch_buffer *b);
#endif
gp_status gp__ch_vendor_copy_peer(gp__ch_device *dst, ch_dptr to, gp__ch_device *src, ch_dptr from, size_t bytes,
                                  ch_stream stream);

#endif /* GPUPORT_CUHIP_H */
