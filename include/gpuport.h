/** @file
 * gpuport: one C API for compute on CUDA, HIP and OpenCL devices.
 *
 * The only header an application includes. Every function returns a gp_status; on failure
 * gp_last_error() holds, for the calling thread, a sentence saying what was wrong (with the
 * backend's own error name and code, or the whole build log after a failed compile).
 *
 * Threads: every function may be called from any thread. Devices, buffers, programs, kernels
 * and events may be shared between threads. A stream is an in-order queue: several threads may
 * enqueue on one stream, but then the order between them is whatever order the calls happen in;
 * the usual pattern is one stream per thread. Destroying an object while another thread still
 * uses it is the caller's bug, as with free().
 *
 * Lifetimes: an object may be destroyed while work queued earlier still uses it (a garbage
 * collector may free objects at any time): a buffer's memory, a program's or kernel's code and a
 * stream last until that work is done, then go (gp_stream_destroy and, on some backends,
 * gp_buffer_destroy and gp_program_destroy wait for it; others release it later). Only the
 * handle is gone at once: using it again is the caller's bug.
 *
 * CUDA and HIP: gpuport works in each device's primary context, and leaves it current on the
 * calling thread (as the CUDA runtime does). A program that also drives its own contexts makes
 * its own current again after calling gpuport.
 *
 * Bad input (a NULL handle or pointer, a range outside a buffer, objects of two devices mixed,
 * a wrong kernel argument) returns an error status and changes nothing.
 *
 * Streams: every call that takes a gp_stream takes NULL for a default stream, the one the
 * library keeps for each device: that of the device of the call's buffers, kernel or event,
 * or, in gp_stream_synchronize and gp_stream_trim, which have no other handle, that of every
 * device. gp_stream_destroy(NULL) is a no-op, like every destroy.
 */
#ifndef GPUPORT_H
#define GPUPORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GP_VERSION_MAJOR 0 /**< the version of this header: changes that break callers */
#define GP_VERSION_MINOR 1 /**< additions */
#define GP_VERSION_PATCH 0 /**< fixes */
/** One number that grows with every release: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define GP_VERSION_NUMBER (GP_VERSION_MAJOR * 10000 + GP_VERSION_MINOR * 100 + GP_VERSION_PATCH)

/** Marks the library's exported functions. */
#if defined(__GNUC__)
#define GP_API __attribute__((visibility("default")))
#else
#define GP_API
#endif

/** The version of the library actually loaded, as GP_VERSION_NUMBER and as "0.1.0". */
/** @{ */
GP_API unsigned gp_version(void);
GP_API const char *gp_version_string(void);
/** @} */

/* ---- Status ---------------------------------------------------------------------------- */

/** X(name, value, meaning): the one list every status comes from. */
#define GP_STATUS_LIST(X)                                                                      \
    X(GP_SUCCESS, 0, "success")                                                                \
    X(GP_NOT_READY, 1, "the work is not finished yet")                                         \
    X(GP_ERROR_INVALID_ARGUMENT, -1, "an argument is invalid")                                 \
    X(GP_ERROR_INVALID_HANDLE, -2, "a handle is NULL or not valid")                            \
    X(GP_ERROR_OUT_OF_RANGE, -3, "a range lies outside a buffer")                              \
    X(GP_ERROR_DEVICE_MISMATCH, -4, "objects of different devices were used together")         \
    X(GP_ERROR_NOT_FOUND, -5, "no such device, backend or kernel")                             \
    X(GP_ERROR_BACKEND_UNAVAILABLE, -6, "the backend is not available on this machine")        \
    X(GP_ERROR_OUT_OF_DEVICE_MEMORY, -7, "the device is out of memory")                        \
    X(GP_ERROR_OUT_OF_HOST_MEMORY, -8, "the host is out of memory")                            \
    X(GP_ERROR_BUILD_FAILED, -9, "a kernel did not compile")                                   \
    X(GP_ERROR_INVALID_KERNEL_ARGS, -10, "kernel arguments do not match the kernel")           \
    X(GP_ERROR_INVALID_LAUNCH, -11, "the launch sizes are not valid for this kernel or device")\
    X(GP_ERROR_UNSUPPORTED, -12, "the device or backend does not support this")                \
    X(GP_ERROR_PLUGIN_VERSION, -13, "a backend plugin was built for another plugin ABI")       \
    X(GP_ERROR_BACKEND, -14, "the backend reported an error")

/** The result of every call: GP_SUCCESS (0), GP_NOT_READY (1, a state) or an error (negative). */
typedef enum gp_status {
#define GP__STATUS_ENUM(name, value, text) name = value,
    GP_STATUS_LIST(GP__STATUS_ENUM)
#undef GP__STATUS_ENUM
} gp_status;

/** "GP_ERROR_OUT_OF_RANGE" and "a range lies outside a buffer"; unknown values get a text that
 * says so, never NULL. */
/** @{ */
GP_API const char *gp_status_name(gp_status status);
GP_API const char *gp_status_string(gp_status status);
/** @} */

/** What went wrong in the calling thread's last failed call, in words; "" when nothing has.
 * Successful calls leave it alone; it stays valid until the thread's next failed call. */
GP_API const char *gp_last_error(void);
/** For libraries built on gpuport (libgpuport-mpi, bindings): sets the calling thread's
 * gp_last_error() to the formatted message and returns status, as gpuport's own calls do. */
GP_API gp_status gp_set_last_error(gp_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- Backends and devices -------------------------------------------------------------- */

typedef struct gp_device gp_device; /**< a device; owned by the library: never destroyed by the caller */
typedef struct gp_buffer gp_buffer; /**< memory of a device (gp_buffer_create, gp_buffer_destroy) */
typedef struct gp_stream gp_stream; /**< an in-order queue of work on a device */
typedef struct gp_event gp_event; /**< a point in a stream, for ordering and device time */
typedef struct gp_program gp_program; /**< kernels compiled for a device */
typedef struct gp_kernel gp_kernel; /**< one kernel of a program, to launch */

/** A backend's state (gp_backend_get_info). */
typedef struct gp_backend_info {
    char name[16];        /**< "cuda", "hip", "opencl" */
    int available;        /**< 1 when the plugin loaded and its vendor runtime works */
    char reason[512];     /**< when not available: why, in words a user can act on; then, or when
                             available, the plugin files passed over on the way ("" if none) */
    char plugin_path[512];/**< the plugin file that was loaded, "" if none was found */
    char version[128];    /**< the vendor runtime or driver version, when available */
    size_t device_count;  /**< its devices, 0 when not available */
} gp_backend_info;

/** Backends in a fixed order: cuda, hip, opencl. Loading happens once, on first use: each
 * backend's plugin is the first valid libgpuport-NAME.so in the absolute folders of
 * GPUPORT_PLUGIN_PATH, then the installed plugin folder, then beside libgpuport (a file that
 * does not load or is no plugin of this version is passed over, with the reason kept). */
/** @{ */
GP_API gp_status gp_backend_count(size_t *count);
GP_API gp_status gp_backend_get_info(size_t index, gp_backend_info *info);
/** @} */

/** What a device is. */
typedef enum gp_device_type { GP_DEVICE_GPU = 1, GP_DEVICE_CPU = 2, GP_DEVICE_OTHER = 3 } gp_device_type;

/** A device's properties (gp_device_get_info). */
typedef struct gp_device_info {
    char name[256];              /**< as the vendor's runtime names it */
    char vendor[128];            /**< the vendor's name */
    char backend[16];            /**< "cuda", "hip", "opencl" */
    size_t backend_index;        /**< the N of "opencl:N" */
    gp_device_type type;         /**< GPU, CPU or other */
    uint64_t global_mem_bytes;   /**< its memory */
    uint64_t local_mem_bytes;    /**< per work-group (shared memory per block): the most a launch can
                                      have, on CUDA the driver's opt-in limit */
    uint64_t local_mem_own_bytes; /**< of those, the most a kernel's own GP_LOCAL arrays may have (48 KiB
                                      on CUDA; the rest comes through GP_LOCAL_ARG) */
    uint32_t compute_units;      /**< SMs, CUs or cores */
    size_t max_work_group_size;  /**< the most work-items in one work-group */
    size_t max_work_item_sizes[3]; /**< the most in each dimension of a work-group */
    uint32_t subgroup_size;      /**< warp or wavefront width; 0 where the device does not say */
    int fp64;                    /**< 1 when double precision kernels are supported */
    int unified_memory;          /**< 1 when host and device share memory (a CPU device) */
    char driver_version[128];    /**< the driver's version */
    char runtime_version[128];   /**< the runtime's (CUDA, HIP or OpenCL) version */
} gp_device_info;

/** Every device of every available backend, backends in the order above. */
/** @{ */
GP_API gp_status gp_device_count(size_t *count);
GP_API gp_status gp_device_get(size_t index, gp_device **device);
/** @} */
/** By name: "cuda:0", "opencl:1", "hip:0", "gpu" (the best GPU), "cpu" (the first CPU device),
 * or a backend alone ("opencl" = "opencl:0"). An unknown or absent device is GP_ERROR_NOT_FOUND
 * and the message lists the devices there are. */
GP_API gp_status gp_device_find(const char *spec, gp_device **device);
/** GPUPORT_DEVICE when it is set (and an error if it names no device), else the best GPU,
 * else the first CPU device. */
/** @{ */
GP_API gp_status gp_device_default(gp_device **device);
GP_API gp_status gp_device_get_info(const gp_device *device, gp_device_info *info);
/** @} */
/** Waits for all work queued on every stream of the device. Streams created and destroyed by
 * other threads meanwhile are safe: each is waited for, or not, but never used after its end. */
GP_API gp_status gp_device_synchronize(gp_device *device);

/* ---- Buffers --------------------------------------------------------------------------- */

/** The kinds of buffer memory. */
typedef enum gp_memory {
    GP_MEMORY_DEVICE = 0, /**< device memory */
    GP_MEMORY_PINNED = 1, /**< page-locked host memory: the fast source and target of copies */
    GP_MEMORY_MAPPED = 2  /* zero-copy host memory that kernels read and write directly */
} gp_memory;

/** A size of 0 is valid: the buffer takes part in every call with ranges of 0 bytes. Buffers in
 * the device's memory (device buffers, and every kind on a device that shares the host's
 * memory) that would together pass the device's global_mem_bytes are refused with
 * GP_ERROR_OUT_OF_DEVICE_MEMORY, also where the driver would only fail at first use. */
/** @{ */
GP_API gp_status gp_buffer_create(gp_device *device, gp_memory memory, size_t bytes, gp_buffer **buffer);
GP_API gp_status gp_buffer_destroy(gp_buffer *buffer); /**< NULL is a no-op */
GP_API gp_status gp_buffer_get_size(const gp_buffer *buffer, size_t *bytes);
GP_API gp_status gp_buffer_get_device(const gp_buffer *buffer, gp_device **device);
/** @} */

/** Pinned and mapped buffers, and device buffers of a device that shares the host's memory
 * (unified_memory, where the backend can: OpenCL, pocl's CPU devices among them): waits for the
 * stream (NULL: the device's default stream) and returns the host address of the whole buffer,
 * valid until gp_buffer_unmap. Kernels must not use the buffer while it is mapped. */
/** @{ */
GP_API gp_status gp_buffer_map(gp_stream *stream, gp_buffer *buffer, void **host);
GP_API gp_status gp_buffer_unmap(gp_stream *stream, gp_buffer *buffer);
/** @} */

/** Copies. stream NULL means the default stream of the buffer's device. The plain calls return
 * when the copy is done; the _async calls only queue it, and the host memory must stay valid
 * and unchanged until the stream has passed it. Every range is checked against the buffer
 * (GP_ERROR_OUT_OF_RANGE); a copy within one buffer whose ranges overlap, and any copy, fill or
 * launch that uses a buffer while it is mapped, is GP_ERROR_INVALID_ARGUMENT.
 *
 * gp_buffer_copy and gp_buffer_copy_async also copy between buffers of two devices, of one
 * backend or of two. stream may be on either device (NULL: dst's default stream): the part of
 * the copy on stream's device is queued there, the part on the other device on that device's
 * default stream, so the copy starts after the work queued before it on both, and later work on
 * either is ordered after it; order other streams with events (gp_stream_wait_event takes an
 * event of any device). Two CUDA or two HIP devices with peer access copy device to device on
 * stream. A CUDA and an OpenCL device of one GPU copy 16 MiB or more through that GPU's own
 * memory where the OpenCL driver imports CUDA's (NVIDIA's does), in 64 MiB chunks. Other pairs
 * copy through pinned host memory in chunks (GPUPORT_COPY_CHUNK bytes, 8 MiB by default),
 * reading one chunk while the one before is written. Either way the host waits between chunks,
 * so the _async form returns only once the last chunk is queued. */
/** @{ */
GP_API gp_status gp_buffer_write(gp_stream *stream, gp_buffer *dst, size_t dst_offset, const void *src, size_t bytes);
GP_API gp_status gp_buffer_read(gp_stream *stream, gp_buffer *src, size_t src_offset, void *dst, size_t bytes);
GP_API gp_status gp_buffer_copy(gp_stream *stream, gp_buffer *dst, size_t dst_offset, gp_buffer *src,
                                size_t src_offset, size_t bytes);
/** @} */
/** Fills bytes with a repeated pattern of 1, 2, 4 or 8 bytes; offset and bytes must be
 * multiples of the pattern size. */
GP_API gp_status gp_buffer_fill(gp_stream *stream, gp_buffer *dst, size_t offset, size_t bytes, const void *pattern,
                                size_t pattern_size);

/** The same as gp_buffer_write, read, copy and fill, queued on the stream: they return at once
 * (between two devices, once the last chunk is queued); the host memory must stay untouched
 * until the stream's work is done. */
/** @{ */
GP_API gp_status gp_buffer_write_async(gp_stream *stream, gp_buffer *dst, size_t dst_offset, const void *src,
                                       size_t bytes);
GP_API gp_status gp_buffer_read_async(gp_stream *stream, gp_buffer *src, size_t src_offset, void *dst, size_t bytes);
GP_API gp_status gp_buffer_copy_async(gp_stream *stream, gp_buffer *dst, size_t dst_offset, gp_buffer *src,
                                      size_t src_offset, size_t bytes);
GP_API gp_status gp_buffer_fill_async(gp_stream *stream, gp_buffer *dst, size_t offset, size_t bytes,
                                      const void *pattern, size_t pattern_size);
/** @} */

/* ---- Streams and events ---------------------------------------------------------------- */

/* At exit: a program may end (return from main, exit(), the end of a Python script) with work
 * still queued on any stream, its objects never destroyed. The library then waits for every
 * stream of every device before the vendors' runtimes are torn down, so that queued work
 * finishes instead of crashing the exit; nothing is freed for it (the process's end frees all).
 * What it cannot finish: work of a thread still making calls while another exits, and the queues
 * of a forked child, where the runtimes' threads did not come along (it must use _exit or exec). */

/** A new stream of the device. */
GP_API gp_status gp_stream_create(gp_device *device, gp_stream **stream);
/** Waits for the stream's work, then frees it. NULL is a no-op. */
GP_API gp_status gp_stream_destroy(gp_stream *stream);
/** The stream that NULL stands for in calls on this device's objects; owned by the library. */
GP_API gp_status gp_stream_get_default(gp_device *device, gp_stream **stream);
/** Waits for the stream's work; NULL: for that of every device's default stream. */
GP_API gp_status gp_stream_synchronize(gp_stream *stream);

/** A new event of the device, not yet recorded. */
GP_API gp_status gp_event_create(gp_device *device, gp_event **event);
GP_API gp_status gp_event_destroy(gp_event *event); /**< NULL is a no-op */
/** Marks the point in the stream reached by the work queued so far. Recording again moves it.
 * An event never recorded counts as reached (waiting on it, synchronizing and querying succeed
 * at once), but has no time: gp_event_elapsed_ms on it is GP_ERROR_INVALID_ARGUMENT. */
GP_API gp_status gp_event_record(gp_event *event, gp_stream *stream);
/** Work queued on stream (NULL: the event's device's default stream) after this call starts only
 * when the event has been reached. The event may be of another device: CUDA and HIP devices
 * of one backend wait on the device; for other pairs this call itself waits, on the host, until
 * the event is reached. */
/** @{ */
GP_API gp_status gp_stream_wait_event(gp_stream *stream, gp_event *event);
GP_API gp_status gp_event_synchronize(gp_event *event);
/** @} */
/** GP_SUCCESS when reached, GP_NOT_READY when not yet. */
GP_API gp_status gp_event_query(gp_event *event);
/** Device time between two recorded events of one device, once both are reached. */
GP_API gp_status gp_event_elapsed_ms(gp_event *start, gp_event *end, double *ms);

/* ---- Native handles: gpuport beside other GPU code ---------------------------------------- */
/** The vendor's own handles of gpuport's objects, and gpuport objects around the caller's, so
 * that gpuport mixes with CUDA, HIP or OpenCL code, vendor libraries (cuBLAS, CLBlast, ...) and
 * array libraries. No vendor header is needed here: handles travel as void pointers and integers,
 * tagged with the backend. docs/interop.md has the rules with examples. */

typedef enum gp_backend_id { GP_BACKEND_CUDA = 1, GP_BACKEND_HIP = 2, GP_BACKEND_OPENCL = 3 } gp_backend_id;

/** CUDA: the CUdevice (ordinal) and the device's primary CUcontext, which gpuport works in, as the
 * CUDA runtime does. HIP: the hipDevice_t (ordinal). OpenCL: the cl_platform_id, cl_device_id
 * and the cl_context gpuport made for the device. Valid while the process runs; owned by
 * gpuport: never release or destroy them (retain your own reference to keep one longer). */
typedef struct gp_native_device {
    gp_backend_id backend; /**< which backend's handles these are */
    int ordinal;    /**< CUDA, HIP; -1 on OpenCL */
    void *context;  /**< CUDA: CUcontext; OpenCL: cl_context; HIP: NULL */
    void *platform; /**< OpenCL: cl_platform_id */
    void *device;   /**< OpenCL: cl_device_id */
} gp_native_device;

/** CUstream, hipStream_t or cl_command_queue (in order). Valid until gp_stream_destroy; owned by
 * gpuport unless it came from gp_stream_wrap with GP_BORROW. */
typedef struct gp_native_stream {
    gp_backend_id backend; /**< which backend's handle this is */
    void *stream;          /**< CUstream, hipStream_t or cl_command_queue */
} gp_native_stream;

/** A buffer's memory. CUDA and HIP: device_ptr (a CUdeviceptr, or a HIP device pointer as an
 * integer), and for pinned and mapped buffers host, the host address. OpenCL: mem (a cl_mem),
 * and host for registered memory (gp_buffer_register_host; others map with gp_buffer_map).
 * bytes is the buffer's size. Valid until gp_buffer_destroy; never free it yourself unless
 * you wrapped it with GP_BORROW. */
typedef struct gp_native_buffer {
    gp_backend_id backend; /**< which backend's memory this is */
    uint64_t device_ptr;   /**< CUDA, HIP: the device address */
    void *mem;             /**< OpenCL: the cl_mem */
    void *host;            /**< pinned and mapped buffers (CUDA, HIP) and registered memory: the host address */
    size_t bytes;          /**< the buffer's size */
} gp_native_buffer;

/** CUevent or hipEvent_t, valid until gp_event_destroy. OpenCL: the cl_event of the last
 * gp_event_record (NULL before one), valid until the next record or the destroy: retain it
 * (clRetainEvent) to keep it longer. */
typedef struct gp_native_event {
    gp_backend_id backend; /**< which backend's handle this is */
    void *event;           /**< CUevent, hipEvent_t or cl_event */
} gp_native_event;

/** A device's, stream's, buffer's or event's native handles, as described with their structs. */
/** @{ */
GP_API gp_status gp_device_get_native(const gp_device *device, gp_native_device *native);
/** The one call that takes no NULL stream: get the default one with gp_stream_get_default. */
/** @{ */
GP_API gp_status gp_stream_get_native(const gp_stream *stream, gp_native_stream *native);
GP_API gp_status gp_buffer_get_native(const gp_buffer *buffer, gp_native_buffer *native);
GP_API gp_status gp_event_get_native(const gp_event *event, gp_native_event *native);
/** @} */
/** @} */

/** Who frees a wrapped handle: GP_BORROW, the caller, after destroying the gpuport object;
 * GP_ADOPT, gpuport, when the object is destroyed (cuMemFree, hipFree, clReleaseMemObject;
 * cuStreamDestroy, hipStreamDestroy, clReleaseCommandQueue). */
typedef enum gp_ownership { GP_BORROW = 0, GP_ADOPT = 1 } gp_ownership;

/** A buffer over existing memory of the device: native->device_ptr (CUDA, HIP) or native->mem
 * (OpenCL), and native->bytes of it (0: to the end of the allocation). What can be checked is:
 * the backend is the device's, the memory is the device's (its context; another context's or
 * device's is GP_ERROR_DEVICE_MISMATCH), the allocation holds that many bytes; otherwise
 * GP_ERROR_INVALID_ARGUMENT and nothing is taken. A pointer that is no vendor object at all (a
 * freed cl_mem, a random CUstream) cannot be told from one: like the vendor's API, that is the
 * caller's bug, as is using a wrapped buffer after its memory was freed. Wrapped buffers work
 * with every gp_ call, the primitives included. */
GP_API gp_status gp_buffer_wrap(gp_device *device, const gp_native_buffer *native, gp_ownership ownership,
                                gp_buffer **buffer);
/** Host memory of the caller's (bytes from host, which stays the caller's to free after the
 * buffer is destroyed) as a pinned buffer, without copying: cuMemHostRegister, hipHostRegister
 * or CL_MEM_USE_HOST_PTR. Its contents are the memory itself whenever the buffer is mapped,
 * and after any call that waits for the stream that last wrote it. */
GP_API gp_status gp_buffer_register_host(gp_device *device, void *host, size_t bytes, gp_buffer **buffer);
/** A stream of the caller's (native->stream, of this device and, on OpenCL, in order) as a
 * gp_stream: gpuport's work on it is ordered with the caller's own. On OpenCL, events recorded
 * on a queue made without CL_QUEUE_PROFILING_ENABLE have no time (gp_event_elapsed_ms is
 * GP_ERROR_UNSUPPORTED). CUDA's NULL stream (the legacy default stream) is accepted. */
GP_API gp_status gp_stream_wrap(gp_device *device, const gp_native_stream *native, gp_ownership ownership,
                                gp_stream **stream);

/* ---- Element types --------------------------------------------------------------------- */

/** The element types of buffers, kernel arguments and primitives. */
typedef enum gp_type {
    GP_TYPE_NONE = 0, /**< none of these (a struct, a char), or not known */
    GP_F32 = 1, GP_F64 = 2, GP_I32 = 3, GP_U32 = 4, GP_I64 = 5, GP_U64 = 6
} gp_type;

/** Bytes of one element, 0 for a value that is not a gp_type (GP_TYPE_NONE included). */
GP_API size_t gp_type_size(gp_type type);

/* ---- Programs, kernels and launches ------------------------------------------------------ */

/** Compiles source in the gpuport kernel dialect (docs/kernel-dialect.md) for the device, or
 * takes it from the kernel cache. options: NULL or space-separated -DNAME and -DNAME=VALUE
 * (NAME an identifier, VALUE with no backslash or comment); they become macro definitions just
 * before source, after the backend's prelude and headers, which they never reach.
 * A compile error returns GP_ERROR_BUILD_FAILED and gp_last_error() holds the whole log. */
/** @{ */
GP_API gp_status gp_program_create(gp_device *device, const char *source, const char *options, gp_program **program);
GP_API gp_status gp_program_destroy(gp_program *program); /**< NULL is a no-op */
/** @} */

/** Compiles CUDA C source (`extern "C" __global__` kernels, `__device__` functions, CUDA's
 * built-ins, `__shared__` and `extern __shared__` arrays, atomics, math functions) for the
 * device: through NVRTC as written on CUDA, hiprtc on HIP, and on OpenCL translated to the
 * kernel dialect first (docs/cuda-c.md lists what the translation takes; the rest is
 * GP_ERROR_BUILD_FAILED naming the line and the construct). options as for gp_program_create.
 * Launch its kernels with gp_kernel_launch, global = grid * block and local = block; a kernel
 * with an `extern __shared__` array takes its size as a last argument, GP_LOCAL_BYTES(bytes). */
GP_API gp_status gp_program_create_cuda(gp_device *device, const char *source, const char *options,
                                        gp_program **program);

/** The memory of a CUDA C program's file-scope `__constant__` or `__device__` variable (a scalar,
 * or an array of a size known at compile time) as a buffer of its bytes, zero until written:
 * write it with gp_buffer_write or any gp_ call, and launches queued after read what it holds
 * then. The program owns the buffer (gp_buffer_destroy refuses it); it is valid while the program
 * or one of its kernels lives. CUDA and HIP give the module's own variable; on OpenCL it is a
 * buffer that each of the program's kernels takes as hidden last arguments. GP_ERROR_NOT_FOUND
 * when there is no such variable (or, on CUDA and HIP, the compiler left out one no kernel uses). */
GP_API gp_status gp_program_get_global(gp_program *program, const char *name, gp_buffer **buffer);

/** Where a program's binary came from. */
typedef struct gp_program_info {
    int from_cache;     /**< 1 when the binary came from the kernel cache (disk or memory) */
    int cache_on_disk;  /**< 1 when the cache entry is (now) on disk, 0 when kept in memory only */
    size_t binary_bytes;/**< the binary's size */
} gp_program_info;
/** Where the program's binary came from. */
GP_API gp_status gp_program_get_info(const gp_program *program, gp_program_info *info);

/** The kernel cache's folder as this process sees it. A folder (or entry) is used only when it
 * belongs to you, root or a uid listed in GPUPORT_CACHE_TRUST and no one else can write it; in a
 * shared sticky folder such as /tmp/gpuport-cache, your own subfolder inside it (named by your
 * uid) is used. A folder that fails is never an error: kernels are then kept in memory, and
 * reason says why. */
typedef struct gp_cache_info {
    char folder[4096];  /**< the folder in use, or the one refused ("" when none could be named) */
    int on_disk;        /**< 1 when entries are read from that folder, 0 when kept in memory only */
    int writable;       /**< 1 when new entries are written there too */
    char reason[1024];  /**< why on_disk or writable is 0; "" when both are 1 */
} gp_cache_info;
/** Checks the cache folder now (creating it, as a compile would) and describes it. */
GP_API gp_status gp_cache_get_info(gp_cache_info *info);

/** The kernel of that name in the program (GP_ERROR_NOT_FOUND when there is none); it keeps the
 * program alive until it is destroyed. */
GP_API gp_status gp_kernel_create(gp_program *program, const char *name, gp_kernel **kernel);
GP_API gp_status gp_kernel_destroy(gp_kernel *kernel); /**< NULL is a no-op */

/** What a kernel argument (or parameter) is. */
typedef enum gp_arg_kind { GP_ARG_BUFFER = 1, GP_ARG_VALUE = 2, GP_ARG_LOCAL = 3 } gp_arg_kind;

/** One kernel argument: a buffer, a scalar or small struct by value (its address, size and, where
 * known, type), or local memory by size (for a GP_LOCAL_ARG parameter). Build them with
 * GP_BUFFER(buffer), GP_VALUE(variable) and GP_LOCAL_BYTES(bytes), plain C99 and C++ (inline
 * functions underneath); GP_VALUE_AS(pointer, type) names a value's type where the compiler
 * cannot (C99, bindings). GP_VALUE takes the variable's type from C11 and C++: an int or uint32_t
 * passed for a float parameter is then refused, not run. */
typedef struct gp_arg {
    gp_arg_kind kind;  /**< buffer, value or local memory */
    gp_buffer *buffer; /**< a buffer argument's buffer */
    const void *value; /**< a value argument's address */
    size_t size;       /**< a value's or local memory's bytes */
    gp_type type; /**< a value's element type; GP_TYPE_NONE: checked by size only */
} gp_arg;

static inline gp_arg gp__arg(gp_arg_kind kind, gp_buffer *buffer, const void *value, size_t size, gp_type type)
{
    gp_arg a;
    a.kind = kind;
    a.buffer = buffer;
    a.value = value;
    a.size = size;
    a.type = type;
    return a;
}
#ifdef __cplusplus
} /* the type of a value, by C++ overloads (outside extern "C") */
static inline gp_type gp__type_of(float) { return GP_F32; }
static inline gp_type gp__type_of(double) { return GP_F64; }
static inline gp_type gp__type_of(int) { return GP_I32; }
static inline gp_type gp__type_of(unsigned int) { return GP_U32; }
static inline gp_type gp__type_of(long) { return sizeof(long) == 8 ? GP_I64 : GP_I32; }
static inline gp_type gp__type_of(unsigned long) { return sizeof(long) == 8 ? GP_U64 : GP_U32; }
static inline gp_type gp__type_of(long long) { return GP_I64; }
static inline gp_type gp__type_of(unsigned long long) { return GP_U64; }
template <typename V> static inline gp_type gp__type_of(const V &) { return GP_TYPE_NONE; }
extern "C" {
#define GP__TYPE_OF(v) gp__type_of(v)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define GP__TYPE_OF(v)                                                                             \
    _Generic((v), float: GP_F32, double: GP_F64, int: GP_I32, unsigned int: GP_U32,                  \
             long: sizeof(long) == 8 ? GP_I64 : GP_I32, unsigned long: sizeof(long) == 8 ? GP_U64 : GP_U32, \
             long long: GP_I64, unsigned long long: GP_U64, default: GP_TYPE_NONE)
#else
#define GP__TYPE_OF(v) GP_TYPE_NONE
#endif
/** A buffer argument. */
#define GP_BUFFER(b) gp__arg(GP_ARG_BUFFER, (b), NULL, 0, GP_TYPE_NONE)
/** A value argument: the variable's address, size and (C11, C++) type. */
#define GP_VALUE(v) gp__arg(GP_ARG_VALUE, NULL, &(v), sizeof(v), GP__TYPE_OF(v))
/** A value argument of the named gp_type at p. */
#define GP_VALUE_AS(p, type) gp__arg(GP_ARG_VALUE, NULL, (p), gp_type_size(type), (type))
/** Local memory of n bytes, for a GP_LOCAL_ARG parameter. */
#define GP_LOCAL_BYTES(n) gp__arg(GP_ARG_LOCAL, NULL, NULL, (n), GP_TYPE_NONE)

/** A kernel's parameters, as its declaration in the source says (after the -D options and the
 * source's own macros), for bindings that convert and check arguments: what the launch must
 * pass (kind), a value's or a buffer element's type (GP_TYPE_NONE for others), a value's size in
 * bytes (0 where unknown) and the names as written. Launches check arguments against them. A
 * kernel whose declaration gpuport cannot read (one made by a macro) has no parameters to tell:
 * gp_kernel_get_param is then GP_ERROR_UNSUPPORTED, and launches check only what the backend can. */
typedef struct gp_kernel_param {
    gp_arg_kind kind;    /**< what the launch must pass */
    gp_type type;        /**< a value's or a buffer element's type; GP_TYPE_NONE for others */
    size_t size;         /**< a value's bytes, 0 where unknown */
    char type_name[64];  /**< the type as written ("GP_GLOBAL float *", "uint") */
    char name[64];       /**< the parameter's name */
} gp_kernel_param;
/** How many parameters the kernel's declaration has, and each of them. */
/** @{ */
GP_API gp_status gp_kernel_get_param_count(const gp_kernel *kernel, size_t *count);
GP_API gp_status gp_kernel_get_param(const gp_kernel *kernel, size_t index, gp_kernel_param *param);
/** @} */

/** Queues the kernel on the stream (NULL: the default stream). dims is 1, 2 or 3. global[d] is
 * the number of work-items wanted in dimension d; local (NULL: chosen for the device) is the
 * work-group shape. The launch covers global rounded up to a multiple of local, so kernels
 * compare their index with their own size; a global size of 0 launches nothing.
 * Wrong arguments (count, a NULL buffer, on CUDA and OpenCL a value of the wrong size or an
 * argument of the wrong kind) are GP_ERROR_INVALID_KERNEL_ARGS; a local size of 0 or above what
 * the kernel or device allows, or more local memory (the kernel's own arrays and every
 * GP_LOCAL_BYTES) than the device has per work-group, is GP_ERROR_INVALID_LAUNCH. */
GP_API gp_status gp_kernel_launch(gp_stream *stream, gp_kernel *kernel, unsigned dims, const size_t *global,
                                  const size_t *local, size_t nargs, const gp_arg *args);

/* ---- Built-in primitives: map, reduce, scan -------------------------------------------- */
/** Each runs on a stream of any device, queued like a kernel (the _to_host calls wait). They
 * allocate nothing per call: the scratch they need is kept with the stream (see gp_stream_trim)
 * and is at most 1% of the input plus a few KB. Every element range is checked against its
 * buffer. Integer results are exact on every backend; floating-point sums and products are
 * added in a device-dependent order (docs/primitives.md says how far they may differ). */

/** Elements of a buffer from an element offset: the operand of every primitive. */
typedef struct gp_view {
    gp_buffer *buffer; /**< the buffer (NULL: no operand) */
    size_t offset; /**< in elements, not bytes */
} gp_view;
static inline gp_view gp__view(gp_buffer *buffer, size_t offset)
{
    gp_view v;
    v.buffer = buffer;
    v.offset = offset;
    return v;
}
/** A buffer's elements from the first, or from element off. */
/** @{ */
#define GP_VIEW(b) gp__view((b), 0)
#define GP_VIEW_AT(b, off) gp__view((b), (off))
/** @} */

/** A scalar operand, passed by address; the member that matches the operation's type is read
 * (f for floating point, i for signed, u for unsigned). NULL where the operation reads none. */
typedef union gp_scalar {
    double f;   /**< for floating-point types */
    int64_t i;  /**< for signed integer types */
    uint64_t u; /**< for unsigned integer types */
} gp_scalar;

/** The built-in element-wise operations. */
typedef enum gp_map_op {
    GP_MAP_COPY,  /**< out = x */
    GP_MAP_FILL,  /**< out = a */
    GP_MAP_SCALE, /**< out = a * x */
    GP_MAP_AXPY,  /**< out = a * x + y */
    GP_MAP_ADD,   /**< out = x + y */
    GP_MAP_SUB,   /**< out = x - y */
    GP_MAP_MUL,   /**< out = x * y */
    GP_MAP_DIV,   /**< out = x / y (integers: y == 0 gives 0) */
    GP_MAP_MIN,   /**< out = min(x, y) */
    GP_MAP_MAX,   /**< out = max(x, y) */
    GP_MAP_ABS,   /**< out = |x| */
    GP_MAP_SQRT,  /**< floating-point types only, as are the rest */
    GP_MAP_EXP,
    GP_MAP_LOG,
    GP_MAP_SIN,
    GP_MAP_COS,
    GP_MAP_POW    /* out = pow(x, y) */
} gp_map_op;

/** out[i] = op(x[i], y[i], *a) for i < n, all of one type. Unused operands are ignored (pass
 * GP_VIEW(NULL), and a NULL a). out may be x or y at the same offset (in place). */
GP_API gp_status gp_map(gp_stream *stream, gp_map_op op, gp_type type, size_t n, gp_view out, gp_view x,
                        gp_view y, const gp_scalar *a);

/** A map of your own: expression in the kernel dialect over the inputs x, y, z (up to three, of
 * in_types), the scalar a (of out_type; 0 when run with a NULL a), and the index i (a ulong),
 * for example "a * x + sin(y)". A snippet with statements instead assigns r:
 * "r = x > 0 ? x : a * x;". Compiled on creation for the device, then cached like any program. */
typedef struct gp_map_kernel gp_map_kernel; /**< a map of your own */
/** Compiles it for the device (or takes it from the kernel cache). */
GP_API gp_status gp_map_kernel_create(gp_device *device, gp_type out_type, size_t nin, const gp_type *in_types,
                                      const char *expression, gp_map_kernel **kernel);
GP_API gp_status gp_map_kernel_destroy(gp_map_kernel *kernel); /**< NULL is a no-op */
/** in: nin views, as many as the kernel was created with. */
GP_API gp_status gp_map_kernel_run(gp_stream *stream, gp_map_kernel *kernel, size_t n, gp_view out,
                                   const gp_view *in, const gp_scalar *a);

/** The built-in reductions. */
typedef enum gp_reduce_op {
    GP_REDUCE_SUM,
    GP_REDUCE_PROD,
    GP_REDUCE_MIN,
    GP_REDUCE_MAX,
    GP_REDUCE_ARGMIN, /**< the index (a uint64_t) of the first smallest element */
    GP_REDUCE_ARGMAX  /* the index (a uint64_t) of the first largest element */
} gp_reduce_op;

/** Reduces in[0..n) into out[0]: one element of type, or a GP_U64 index for ARGMIN/ARGMAX.
 * n == 0 gives the identity: 0, 1, the type's largest or smallest value (infinity for floats),
 * or UINT64_MAX for an index. */
GP_API gp_status gp_reduce(gp_stream *stream, gp_reduce_op op, gp_type type, size_t n, gp_view in, gp_view out);
/** The same, waiting for the result and writing it to host memory (gp_type_size(type) bytes,
 * or a uint64_t for ARGMIN/ARGMAX). */
GP_API gp_status gp_reduce_to_host(gp_stream *stream, gp_reduce_op op, gp_type type, size_t n, gp_view in,
                                   void *result);

/** A reduction of your own over one to three inputs: the elements x, y, z (of in_types) at each
 * index i are first mapped by map_expression to the accumulator type, then accumulators a and
 * b are combined by combine_expression, which must be associative and commutative (elements
 * are combined in a device-dependent order); identity is the accumulator's starting value.
 * Examples: the sum of squares, map "x * x", combine "a + b", identity "0"; a dot product of
 * two inputs in one pass, map "x * y", combine "a + b", identity "0". */
typedef struct gp_reduce_kernel gp_reduce_kernel; /**< a reduction of your own */
/** Compiles it for the device (or takes it from the kernel cache). */
GP_API gp_status gp_reduce_kernel_create(gp_device *device, size_t nin, const gp_type *in_types, gp_type acc_type,
                                         const char *map_expression, const char *combine_expression,
                                         const char *identity, gp_reduce_kernel **kernel);
GP_API gp_status gp_reduce_kernel_destroy(gp_reduce_kernel *kernel); /**< NULL is a no-op */
/** in: nin views, as many as the kernel was created with. */
/** @{ */
GP_API gp_status gp_reduce_kernel_run(gp_stream *stream, gp_reduce_kernel *kernel, size_t n, const gp_view *in,
                                      gp_view out);
GP_API gp_status gp_reduce_kernel_run_to_host(gp_stream *stream, gp_reduce_kernel *kernel, size_t n,
                                              const gp_view *in, void *result);
/** @} */

/** What a scan combines: sums (integers wrap), or the smallest or largest so far. */
typedef enum gp_scan_op { GP_SCAN_SUM, GP_SCAN_MIN, GP_SCAN_MAX } gp_scan_op;

/** out[i] = in[0] op ... op in[i] (inclusive), or of in[0..i) starting from the identity
 * (exclusive). out may be in at the same offset. */
GP_API gp_status gp_scan(gp_stream *stream, gp_scan_op op, int exclusive, gp_type type, size_t n, gp_view in,
                         gp_view out);

/** Waits for the stream, then frees the scratch memory the primitives keep with it (for the
 * default stream, get it with gp_stream_get_default); it comes back at the next call that
 * needs it. */
GP_API gp_status gp_stream_trim(gp_stream *stream);

/* ---- Stencils -------------------------------------------------------------------------- */
/** A grid is a dense array of nx * ny * nz elements from its view's offset, x varying fastest
 * (cell (x, y, z) is element x + nx * (y + ny * z)); nz is 1 for the 2D shapes. */

typedef enum gp_stencil_shape {
    GP_STENCIL_5POINT = 1, /**< 2D, weights: centre, west (x-1), east (x+1), south (y-1), north (y+1) */
    GP_STENCIL_3X3 = 2,    /**< 2D, weights: the 3x3 block row by row, (x-1, y-1) (x, y-1) ... (x+1, y+1) */
    GP_STENCIL_7POINT = 3  /* 3D, weights: centre, x-1, x+1, y-1, y+1, z-1, z+1 */
} gp_stencil_shape;

/** What a stencil does at the grid's edge. */
typedef enum gp_boundary {
    GP_BOUNDARY_FIXED = 0, /**< cells on the grid's edge are copied from the input unchanged */
    GP_BOUNDARY_CLAMP = 1, /**< every cell is updated; a neighbour off the grid is the nearest edge cell */
    GP_BOUNDARY_ZERO = 2   /* every cell is updated; a neighbour off the grid counts as 0 */
} gp_boundary;

/** A stencil: its shape, weights, boundary and the grid it runs on. */
typedef struct gp_stencil {
    gp_stencil_shape shape; /**< 5-point, 3x3 or 7-point */
    gp_type type;         /**< GP_F32 or GP_F64 */
    gp_boundary boundary; /**< fixed, clamp or zero */
    size_t nx;            /**< the grid's cells along x (the fastest) */
    size_t ny;            /**< along y */
    size_t nz;            /**< along z: 1 for 2D shapes */
    double weights[9];    /**< 5, 9 or 7 of them, in the shape's order above */
    double source_weight; /**< with a source grid: out += source_weight * source */
} gp_stencil;

/** out = the weighted sum of each cell's neighbours in `in` (plus source_weight * source where
 * source.buffer is not NULL), out of place: out must not overlap in or source. The Jacobi step
 * u' = (u_n + u_s + u_e + u_w + h^2 f) / 4 is GP_STENCIL_5POINT with weights {0, .25, .25, .25,
 * .25}, source_weight h^2 / 4 and GP_BOUNDARY_FIXED. */
GP_API gp_status gp_stencil_apply(gp_stream *stream, const gp_stencil *stencil, gp_view out, gp_view in,
                                  gp_view source);
/** gp_stencil_apply on the box of cells origin[d] <= c[d] < origin[d] + extent[d] (d = x, y, z)
 * alone; out's other cells are left as they are. Boundaries stay those of the whole grid, so
 * boxes that tile the grid give gp_stencil_apply's result, bit for bit (a distributed solver
 * computes a block's interior while its halos travel). A box leaving the grid is
 * GP_ERROR_OUT_OF_RANGE; an extent of 0 runs nothing. */
GP_API gp_status gp_stencil_apply_region(gp_stream *stream, const gp_stencil *stencil, const size_t origin[3],
                                         const size_t extent[3], gp_view out, gp_view in, gp_view source);
/** steps applications, ping-ponging a -> b -> a ...: the result is in b after an odd number of
 * steps and in a after an even one (0 steps: nothing runs); *result (when not NULL) is that view. */
GP_API gp_status gp_stencil_run(gp_stream *stream, const gp_stencil *stencil, size_t steps, gp_view a, gp_view b,
                                gp_view source, gp_view *result);

/* ---- Matrix multiply ------------------------------------------------------------------- */

/** How a matrix is stored: rows one after another, or columns. */
typedef enum gp_layout { GP_ROW_MAJOR = 0, GP_COL_MAJOR = 1 } gp_layout;
/** Whether a GEMM operand is used as stored or transposed. */
typedef enum gp_transpose { GP_NO_TRANS = 0, GP_TRANS = 1 } gp_transpose;

/** Whose GEMM runs. */
typedef enum gp_gemm_impl {
    GP_GEMM_AUTO = 0,    /**< GPUPORT_GEMM=gpuport|vendor when set; else the vendor's library where
                            it was measured faster: the host's own BLAS on CPU devices
                            (gp_gemm_vendor_info's text ends in " (host)"; where it says
                            " (host for f32, ", for f32 from 1024^3 multiply-adds), cuBLAS on CUDA
                            devices for f64 and for f32 below 2048^3 multiply-adds; gpuport's
                            kernel everywhere else */
    GP_GEMM_GPUPORT = 1, /**< gpuport's tiled kernel */
    GP_GEMM_VENDOR = 2   /* the vendor's library: cuBLAS, rocBLAS, CLBlast, and on OpenCL CPU devices
                            OpenBLAS over the buffers' memory (GPUPORT_OPENCL_BLAS=openblas|clblast
                            chooses); GP_ERROR_UNSUPPORTED, with the reason, where it is not there */
} gp_gemm_impl;

/** C = alpha * op(A) * op(B) + beta * C, with op(A) m x k, op(B) k x n and C m x n, each matrix
 * stored in layout with its leading dimension (the distance between rows for GP_ROW_MAJOR,
 * between columns for GP_COL_MAJOR) from its view's offset. type is GP_F32 or GP_F64; alpha and
 * beta are converted to it. beta == 0 never reads C (NaN in C does not spread). */
GP_API gp_status gp_gemm(gp_stream *stream, gp_gemm_impl impl, gp_type type, gp_layout layout,
                         gp_transpose trans_a, gp_transpose trans_b, size_t m, size_t n, size_t k, double alpha,
                         gp_view a, size_t lda, gp_view b, size_t ldb, double beta, gp_view c, size_t ldc);

/** Whether the vendor's library serves this device: GP_SUCCESS with its name and version in
 * text ("cuBLAS 13.0.2"), or GP_ERROR_UNSUPPORTED with the reason in text and gp_last_error(). */
GP_API gp_status gp_gemm_vendor_info(gp_device *device, char *text, size_t text_len);

/** The tile shape of gpuport's kernel: each work-group computes a tile_m x tile_n block of C,
 * stepping through K by tile_k with tiles of A and B in local memory; each work-item computes
 * work_m x work_n elements of it, so a group has (tile_m / work_m) * (tile_n / work_n) items. */
typedef struct gp_gemm_params {
    unsigned tile_m; /**< a work-group's rows of C */
    unsigned tile_n; /**< a work-group's columns of C */
    unsigned tile_k; /**< the step through K */
    unsigned work_m; /**< a work-item's rows */
    unsigned work_n; /**< a work-item's columns */
} gp_gemm_params;

/** The parameters gp_gemm uses on this device for type, and where they come from, in this
 * order: GPUPORT_GEMM_PARAMS ("f32:128,128,16,8,8;f64:64,64,16,4,4", one type or both; malformed
 * or invalid for the device: GP_ERROR_INVALID_ARGUMENT), the choice of gp_gemm_params_set or
 * gp_gemm_tune in this process, the saved result of gp_gemm_tune for this device, gpuport's
 * table of device classes. From the table only, gp_gemm takes a smaller shape of the same
 * class for a product that would leave some of the device's compute units without a tile. */
GP_API gp_status gp_gemm_params_get(gp_device *device, gp_type type, gp_gemm_params *params);
/** Uses params for type on this device in this process (checked first: invalid shapes are
 * GP_ERROR_INVALID_ARGUMENT and change nothing). */
GP_API gp_status gp_gemm_params_set(gp_device *device, gp_type type, const gp_gemm_params *params);
/** Times every candidate shape on an n x n x n product, keeps the fastest whose result is right,
 * uses it from now on, and saves it with the kernel cache so later processes use it too.
 * gpuport-tune-gemm runs it from the command line. */
GP_API gp_status gp_gemm_tune(gp_stream *stream, gp_type type, size_t n, gp_gemm_params *best, double *gflops);

#ifdef __cplusplus
}
#endif

#endif /* GPUPORT_H */
