/* The plugin interface: what core asks of libgpuport-<name>.so.
 *
 * A plugin exports one symbol, gp_plugin_entry, returning its table. Core checks every argument
 * before calling a hook (handles non-NULL and of one device, ranges inside buffers, sizes
 * non-zero where zero would be a no-op), so hooks only translate to the vendor runtime.
 * Handles passed to hooks are the plugin's own (the impl pointers it returned).
 * A hook that fails returns a gp_status and sets the detail message with host->set_error (the
 * gp__host table given to init), naming the vendor's error name and code.
 */
#ifndef GPUPORT_BACKEND_H
#define GPUPORT_BACKEND_H

#include "gpuport.h"

/* Bump on any change to the structs below; core refuses a plugin of another version. */
#define GP__PLUGIN_ABI 5

/* What core offers plugins: messages and debug output go through here. */
typedef struct gp__host {
    /* printf-style detail for the calling thread's gp_last_error(). */
    void (*set_error)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
    /* Replaces the detail with fixed text of any length (a build log). */
    void (*set_error_text)(const char *text);
    /* Prints to stderr when GPUPORT_DEBUG names the topic ("load", "compile", "launch"). */
    void (*debug)(const char *topic, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    int (*debug_on)(const char *topic);
} gp__host;

/* An argument kind core passes only to CUDA and HIP, last: bytes of dynamic shared memory for a
 * kernel of CUDA C as written (its extern __shared__ array), not a parameter. */
#define GP__ARG_SHARED ((gp_arg_kind)16)

typedef struct gp__kernel_props {
    size_t nargs;            /* in: the count the source declares, or (size_t)-1; out: the
                                backend's count, or (size_t)-1 when it cannot tell */
    size_t max_group_size;   /* the most work-items per group for this kernel on this device */
    size_t local_bytes;      /* local memory the kernel declares itself (GP_LOCAL arrays) */
} gp__kernel_props;

typedef struct gp__backend {
    uint32_t abi;            /* GP__PLUGIN_ABI of the plugin's build */
    const char *name;        /* "cuda", "hip", "opencl" */
    const char *prelude;     /* the kernel dialect prelude, put before every source */

    /* Loads the vendor runtime. On failure: GP_ERROR_BACKEND_UNAVAILABLE with reason filled.
     * On failure or with no device it releases what it loaded: core then unloads the plugin. */
    gp_status (*init)(const gp__host *host, char *reason, size_t reason_len, char *version, size_t version_len,
                      size_t *ndevices);
    /* Opens device index (0..ndevices-1) and fills its properties (not backend/backend_index). */
    gp_status (*device_open)(size_t index, void **dev, gp_device_info *info);
    void (*device_close)(void *dev);
    /* Text that changes whenever compiled code for this device could: device, driver, compiler. */
    void (*device_cache_id)(void *dev, char *buf, size_t len);

    gp_status (*buffer_create)(void *dev, gp_memory memory, size_t bytes, void **buf);
    void (*buffer_destroy)(void *dev, void *buf);
    gp_status (*buffer_map)(void *dev, void *stream, void *buf, size_t bytes, void **host);
    gp_status (*buffer_unmap)(void *dev, void *stream, void *buf, void *host);

    gp_status (*stream_create)(void *dev, void **stream);
    void (*stream_destroy)(void *dev, void *stream);
    gp_status (*stream_synchronize)(void *dev, void *stream);

    /* Copies and fills; blocking says whether to return only once the work is done. */
    gp_status (*write)(void *dev, void *stream, void *dst, size_t off, const void *src, size_t bytes, int blocking);
    gp_status (*read)(void *dev, void *stream, void *src, size_t off, void *dst, size_t bytes, int blocking);
    gp_status (*copy)(void *dev, void *stream, void *dst, size_t dst_off, void *src, size_t src_off, size_t bytes,
                      int blocking);
    gp_status (*fill)(void *dev, void *stream, void *dst, size_t off, size_t bytes, const void *pattern,
                      size_t pattern_size, int blocking);

    gp_status (*event_create)(void *dev, void **event);
    void (*event_destroy)(void *dev, void *event);
    gp_status (*event_record)(void *dev, void *event, void *stream);
    gp_status (*stream_wait_event)(void *dev, void *stream, void *event);
    gp_status (*event_synchronize)(void *dev, void *event);
    gp_status (*event_query)(void *dev, void *event); /* GP_SUCCESS or GP_NOT_READY */
    gp_status (*event_elapsed_ms)(void *dev, void *start, void *end, double *ms);

    /* Compiles source (the prelude, the caller's -D options as #define lines, then the caller's
     * source: see gp__compose_source) into a binary the plugin can load later, possibly in
     * another process. On a compile error: GP_ERROR_BUILD_FAILED with the whole log as the
     * detail. *binary is malloc'ed; core frees it. */
    gp_status (*program_build)(void *dev, const char *source, void **binary, size_t *binary_bytes);
    /* Loads a binary from program_build. A binary it cannot use is an error, never a crash. */
    gp_status (*program_load)(void *dev, const void *binary, size_t binary_bytes, void **program);
    void (*program_destroy)(void *dev, void *program);

    gp_status (*kernel_create)(void *dev, void *program, const char *name, void **kernel, gp__kernel_props *props);
    /* CUDA C's file-scope __constant__ or __device__ variable of that name in the program, as a
     * buffer of its bytes that buffer_destroy leaves to the module (GP_ERROR_NOT_FOUND: none).
     * NULL where programs keep no variables (OpenCL: core passes them as buffers). */
    gp_status (*program_global)(void *dev, void *program, const char *name, void **buf, size_t *bytes);
    void (*kernel_destroy)(void *dev, void *kernel);
    /* groups[d] work-groups of local[d] work-items each. Buffer args carry the plugin's
     * buffer handle in gp_arg.buffer (cast), already checked against the device. */
    gp_status (*launch)(void *dev, void *stream, void *kernel, unsigned dims, const size_t groups[3],
                        const size_t local[3], size_t nargs, const gp_arg *args);

    /* The vendor's BLAS, loaded by the plugin at run time; both hooks may be NULL (none).
     * blas_info: GP_SUCCESS with the library's name and version in text, or
     * GP_ERROR_UNSUPPORTED with the reason in text (and as the detail message). */
    gp_status (*blas_info)(void *dev, char *text, size_t len);
    /* C = alpha * op(A) * op(B) + beta * C, all column-major (core turns row-major calls around),
     * type GP_F32 or GP_F64, offsets and leading dimensions in elements, queued on stream. */
    gp_status (*blas_gemm)(void *dev, void *stream, gp_type type, int trans_a, int trans_b, size_t m, size_t n,
                           size_t k, double alpha, void *a, size_t a_off, size_t lda, void *b, size_t b_off,
                           size_t ldb, double beta, void *c, size_t c_off, size_t ldc);

    /* ---- Interop: the vendor's handles out and in (gpuport.h's gp_native_*) ---- */
    gp_status (*native_device)(void *dev, gp_native_device *out);
    gp_status (*native_stream)(void *dev, void *stream, gp_native_stream *out);
    gp_status (*native_buffer)(void *dev, void *buf, gp_native_buffer *out);
    gp_status (*native_event)(void *dev, void *event, gp_native_event *out);
    /* Existing memory of this device as a buffer, checked as far as the vendor can tell (its
     * context, the allocation's size; bytes 0 takes the rest of the allocation). adopt: freed
     * by buffer_destroy; else left to its owner. Fills *bytes and *memory (what it is). */
    gp_status (*buffer_wrap)(void *dev, const gp_native_buffer *native, int adopt, void **buf, size_t *bytes,
                             gp_memory *memory);
    /* Host memory the caller keeps, made a pinned buffer of the device without copying;
     * buffer_destroy unregisters it and frees nothing of the caller's. */
    gp_status (*buffer_register)(void *dev, void *host, size_t bytes, void **buf);
    /* An existing stream of this device (checked), for core's gp_stream; core calls
     * stream_destroy on it only when it was adopted. */
    gp_status (*stream_wrap)(void *dev, const gp_native_stream *native, void **stream);
    /* Two devices of this plugin: 1 when a copy between them can go device to device, which
     * copy_peer then queues on stream (a stream of either). NULL where the backend has none. */
    int (*can_copy_peer)(void *dst_dev, void *src_dev);
    gp_status (*copy_peer)(void *dst_dev, void *stream, void *dst, size_t dst_off, void *src_dev, void *src,
                           size_t src_off, size_t bytes, int blocking);
    /* Device memory that two plugins' devices of one GPU share (transfer.c's copies between
     * them); each hook may be NULL. device_uuid: 1 with the GPU's UUID, 0 where the vendor does
     * not tell. buffer_export: a device buffer whose memory another API can import, and *fd, a
     * file descriptor for it that the caller closes or hands to buffer_import. buffer_import: the
     * memory of such an fd (bytes long) as a buffer of this device; the fd is the plugin's from
     * then on, closed on failure too. */
    int (*device_uuid)(void *dev, unsigned char uuid[16]);
    gp_status (*buffer_export)(void *dev, size_t bytes, void **buf, int *fd);
    gp_status (*buffer_import)(void *dev, int fd, size_t bytes, void **buf);
    /* 1 when stream_wait_event takes an event of another device of this plugin. */
    int events_across_devices;
    /* 1 when buffer_map also maps device buffers: without a copy where the device shares the
     * host's memory (core offers it only there). */
    int maps_device_buffers;
} gp__backend;

/* The one symbol each plugin exports. */
typedef const gp__backend *(*gp__plugin_entry_fn)(void);
#define GP__PLUGIN_ENTRY "gp_plugin_entry"

#endif /* GPUPORT_BACKEND_H */
