/* Every gp__backend hook, once, for CUDA and HIP alike (cuhip.h says how a plugin binds it). */
#include "cuhip.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gp__ch_api gp__ch;
const gp__host *gp__ch_host;
int gp__ch_rtc_loaded;
char gp__ch_driver_version[32], gp__ch_rtc_version[32];

static void *ch_driver_lib, *ch_rtc_lib;
static char ch_rtc_tried[1536]; /* for the message when the runtime compiler is missing */

/* Launches with at most this many arguments build their parameter array on the stack. */
#define CH_STACK_ARGS 32

typedef struct ch_event_obj {
    ch_event ev;
    atomic_int recorded; /* elapsed time on a never-recorded event is the caller's error */
} ch_event_obj;

typedef struct ch_kernel {
    ch_function fn;
#ifdef CH_FUNC_ATTR_MAX_DYNAMIC_SHARED
    _Atomic size_t dynamic_ok; /* dynamic shared memory the kernel has been opted in to */
#endif
    size_t nparams; /* (size_t)-1 when the driver cannot tell */
    size_t sizes[];
} ch_kernel;

/* program_build output: this header, then the code the vendor loader takes. The checksum
 * lets a truncated or damaged cache entry be refused instead of reaching the driver. */
typedef struct ch_binary_header {
    char magic[8];
    uint32_t kind;
    uint32_t reserved;
    uint64_t bytes;
    uint64_t checksum;
} ch_binary_header;
static const char ch_magic[8] = {'G', 'P', 'C', 'U', 'H', 'I', 'P', '1'};

static uint64_t ch_fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

gp_status gp__ch_fail(ch_result r, const char *what)
{
    gp__ch_host->set_error("%s failed: %s (%d)", what, gp__ch_vendor_error_name(r), (int)r);
    if (r == CH_ERROR_OUT_OF_MEMORY)
        return GP_ERROR_OUT_OF_DEVICE_MEMORY;
    if (r == CH_ERROR_NOT_FOUND)
        return GP_ERROR_NOT_FOUND;
    return GP_ERROR_BACKEND;
}

static gp_status ch_no_host_memory(void)
{
    gp__ch_host->set_error("out of host memory");
    return GP_ERROR_OUT_OF_HOST_MEMORY;
}

#define CH_CALL(call, what)                                                                    \
    do {                                                                                       \
        ch_result ch__r = (call);                                                              \
        if (ch__r != CH_SUCCESS)                                                               \
            return gp__ch_fail(ch__r, what);                                                   \
    } while (0)

#define CH_ENTER(d)                                                                            \
    do {                                                                                       \
        gp_status ch__s = gp__ch_vendor_enter(d);                                              \
        if (ch__s != GP_SUCCESS)                                                               \
            return ch__s;                                                                      \
    } while (0)

/* ---- Loading ---- */

/* Returns the first symbol the library lacks, or NULL. */
static const char *ch_resolve_driver(void *lib)
{
#define CH__LOAD(field, fn, sym)                                                               \
    if (!(gp__ch.field = (__typeof__(fn) *)dlsym(lib, sym)))                                   \
        return sym;
#define CH__LOAD_OPTIONAL(field, fn, sym) gp__ch.field = (__typeof__(fn) *)dlsym(lib, sym);
    CH_DRIVER_API(CH__LOAD)
    CH_DRIVER_API_OPTIONAL(CH__LOAD_OPTIONAL)
    CH_INTEROP_API(CH__LOAD_OPTIONAL)
    return NULL;
}

static const char *ch_resolve_rtc(void *lib)
{
    CH_RTC_API(CH__LOAD)
    return NULL;
#undef CH__LOAD
#undef CH__LOAD_OPTIONAL
}

static void ch_append(char *buf, size_t len, const char *fmt, const char *a, const char *b)
{
    size_t used = strlen(buf);
    if (used < len)
        snprintf(buf + used, len - used, fmt, a, b);
}

/* Opens path and resolves it; the library, or NULL with the failure appended to tried and, when
 * it is the first, copied to first. */
static void *ch_try_lib(const char *path, const char *(*resolve)(void *lib), char *tried, size_t tried_len,
                        char *first, size_t first_len)
{
    char why[512];
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const char *missing = NULL;
    if (lib && !(missing = resolve(lib)))
        return lib;
    if (lib) {
        snprintf(why, sizeof why, "%s lacks %s", path, missing);
        dlclose(lib);
    } else {
        const char *e = dlerror();
        snprintf(why, sizeof why, "%s", e ? e : path);
    }
    if (tried)
        ch_append(tried, tried_len, "%s%s", tried[0] ? "; " : "", why);
    if (first && first_len && !first[0])
        snprintf(first, first_len, "%s", why);
    return NULL;
}

void *gp__ch_find_lib(const char *const *names, const char *(*resolve)(void *lib), char *tried, size_t tried_len,
                      char *first, size_t first_len)
{
    char dir[1024], path[1200];
    void *lib = NULL;
    for (size_t d = 0; !lib && (d == 0 || gp__ch_vendor_lib_dirs[d - 1]); d++) {
        const char *folder = d ? gp__ch_vendor_lib_dirs[d - 1] : NULL;
        if (folder && folder[0] == '$') {
            size_t vlen = strcspn(folder + 1, "/");
            char var[64];
            snprintf(var, sizeof var, "%.*s", (int)(vlen < sizeof var ? vlen : sizeof var - 1), folder + 1);
            const char *value = getenv(var);
            if (!value || !value[0])
                continue;
            snprintf(dir, sizeof dir, "%s%s", value, folder + 1 + vlen);
            folder = dir;
        }
        for (size_t n = 0; !lib && names[n]; n++) {
            snprintf(path, sizeof path, "%s%s%s", folder ? folder : "", folder ? "/" : "", names[n]);
            lib = ch_try_lib(path, resolve, tried, tried_len, first, first_len);
        }
    }
    return lib;
}

/* The runtime compiler is optional: without it only prebuilt binaries load. Tried in order:
 * the loader's own search, then each of the vendor's folders, then the vendor's fallback
 * library. */
static void ch_load_rtc(void)
{
    ch_rtc_tried[0] = '\0';
    ch_rtc_lib = gp__ch_find_lib(gp__ch_vendor_rtc_libs, ch_resolve_rtc, ch_rtc_tried, sizeof ch_rtc_tried, NULL, 0);
    const char *fallback = gp__ch_vendor_rtc_fallback();
    if (!ch_rtc_lib && fallback)
        ch_rtc_lib = ch_try_lib(fallback, ch_resolve_rtc, ch_rtc_tried, sizeof ch_rtc_tried, NULL, 0);
    if (!ch_rtc_lib)
        return; /* gp__ch_rtc_loaded stays 0, so no rtc_* entry is used */
    int major = 0, minor = 0;
    if (gp__ch.rtc_version(&major, &minor) == CH_RTC_SUCCESS)
        snprintf(gp__ch_rtc_version, sizeof gp__ch_rtc_version, "%d.%d", major, minor);
    gp__ch_rtc_loaded = 1;
    gp__ch_host->debug("load", "%s %s loaded", CH_RTC_TITLE, gp__ch_rtc_version);
}

static gp_status ch_init(const gp__host *host, char *reason, size_t reason_len, char *version, size_t version_len,
                         size_t *ndevices)
{
    gp__ch_host = host;
    if (!ch_driver_lib) {
        char first_error[384] = "";
        void *lib = NULL;
        for (size_t i = 0; gp__ch_vendor_driver_libs[i] && !lib; i++) {
            lib = dlopen(gp__ch_vendor_driver_libs[i], RTLD_NOW | RTLD_LOCAL);
            const char *e = lib ? NULL : dlerror();
            if (i == 0 && e)
                snprintf(first_error, sizeof first_error, "%s", e);
        }
        if (!lib) {
            snprintf(reason, reason_len, "%s not found (%s): %s", gp__ch_vendor_driver_libs[0], first_error,
                     gp__ch_vendor_driver_hint);
            return GP_ERROR_BACKEND_UNAVAILABLE;
        }
        const char *missing = ch_resolve_driver(lib);
        if (missing) {
            snprintf(reason, reason_len, "the %s lacks %s: it is too old; %s", CH_DRIVER_TITLE, missing,
                     gp__ch_vendor_driver_hint);
            dlclose(lib);
            return GP_ERROR_BACKEND_UNAVAILABLE;
        }
        ch_driver_lib = lib;
    }
    gp_status st = gp__ch_vendor_init(reason, reason_len);
    if (st != GP_SUCCESS)
        return st;
    if (!ch_rtc_lib)
        ch_load_rtc();

    int count = 0;
    ch_result r = gp__ch.device_get_count(&count);
    if (r != CH_SUCCESS) {
        snprintf(reason, reason_len, "counting devices failed: %s (%d)", gp__ch_vendor_error_name(r), (int)r);
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }
    *ndevices = count > 0 ? (size_t)count : 0;
    snprintf(version, version_len, "%s %s, %s %s", CH_DRIVER_TITLE, gp__ch_driver_version, CH_RTC_TITLE,
             gp__ch_rtc_loaded ? gp__ch_rtc_version : "not found");
    return GP_SUCCESS;
}

/* ---- Devices ---- */

static int ch_attr(gp__ch_device *d, int attr)
{
    int v = 0;
    if (gp__ch.device_get_attribute(&v, attr, d->device) != CH_SUCCESS)
        return 0;
    return v;
}

static gp_status ch_device_open(size_t index, void **out, gp_device_info *info)
{
    gp__ch_device *d = calloc(1, sizeof *d);
    if (!d)
        return ch_no_host_memory();
    d->ordinal = (int)index;
    ch_result r = gp__ch.device_get(&d->device, d->ordinal);
    if (r == CH_SUCCESS)
        r = gp__ch.device_get_name(d->name, (int)sizeof d->name, d->device);
    if (r != CH_SUCCESS) {
        free(d);
        return gp__ch_fail(r, "opening the device");
    }
    gp_status st = gp__ch_vendor_device_open(d, info);
    if (st != GP_SUCCESS) {
        free(d);
        return st;
    }
    pthread_mutex_init(&d->fill_lock, NULL);
    pthread_mutex_init(&d->blas_lock, NULL);

    size_t total = 0;
    gp__ch.device_total_mem(&total, d->device);
    snprintf(info->name, sizeof info->name, "%s", d->name);
    snprintf(info->vendor, sizeof info->vendor, "%s", CH_VENDOR);
    info->type = GP_DEVICE_GPU;
    info->global_mem_bytes = total;
    info->local_mem_bytes = info->local_mem_own_bytes = (uint64_t)ch_attr(d, CH_ATTR_SHARED_MEM_PER_BLOCK);
#ifdef CH_ATTR_SHARED_MEM_OPTIN /* what a launch can have, past the default limit (ch_launch) */
    uint64_t optin = (uint64_t)ch_attr(d, CH_ATTR_SHARED_MEM_OPTIN);
    if (optin > info->local_mem_bytes)
        info->local_mem_bytes = optin;
#endif
    info->compute_units = (uint32_t)ch_attr(d, CH_ATTR_COMPUTE_UNITS);
    info->max_work_group_size = (size_t)ch_attr(d, CH_ATTR_MAX_THREADS_PER_BLOCK);
    info->max_work_item_sizes[0] = (size_t)ch_attr(d, CH_ATTR_MAX_BLOCK_DIM_X);
    info->max_work_item_sizes[1] = (size_t)ch_attr(d, CH_ATTR_MAX_BLOCK_DIM_Y);
    info->max_work_item_sizes[2] = (size_t)ch_attr(d, CH_ATTR_MAX_BLOCK_DIM_Z);
    info->subgroup_size = (uint32_t)ch_attr(d, CH_ATTR_WARP_SIZE);
    info->fp64 = 1;
    info->unified_memory = ch_attr(d, CH_ATTR_INTEGRATED) != 0;
    snprintf(info->driver_version, sizeof info->driver_version, "%s", gp__ch_driver_version);
    snprintf(info->runtime_version, sizeof info->runtime_version, "%s",
             gp__ch_rtc_loaded ? gp__ch_rtc_version : "none");
    gp__ch_host->debug("load", "%s:%d is %s", CH_BACKEND_NAME, d->ordinal, d->name);
    *out = d;
    return GP_SUCCESS;
}

static void ch_device_close(void *dev)
{
    gp__ch_device *d = dev;
    gp__ch_blas_close(d);
    if (d->fill_module) {
        gp__ch_vendor_enter(d);
        gp__ch.module_unload(d->fill_module);
    }
    pthread_mutex_destroy(&d->fill_lock);
    pthread_mutex_destroy(&d->blas_lock);
    gp__ch_vendor_device_close(d);
    free(d);
}

static void ch_device_cache_id(void *dev, char *buf, size_t len)
{
    gp__ch_vendor_cache_id(dev, buf, len);
}

/* ---- Buffers ---- */

static gp_status ch_buffer_create(void *dev, gp_memory memory, size_t bytes, void **out)
{
    CH_ENTER(dev);
    ch_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return ch_no_host_memory();
    b->bytes = bytes;
    b->memory = memory;
    b->owned = 1;
    /* A 0-byte buffer keeps NULL pointers: the allocators are never asked for 0 bytes. */
    ch_result r = CH_SUCCESS;
    if (bytes && memory == GP_MEMORY_DEVICE) {
        r = gp__ch.mem_alloc(&b->ptr, bytes);
    } else if (bytes) {
        unsigned flags = CH_HOSTALLOC_PORTABLE | (memory == GP_MEMORY_MAPPED ? CH_HOSTALLOC_DEVICEMAP : 0u);
        r = gp__ch.host_alloc(&b->host, bytes, flags);
        /* Pinned memory has a device address too where addressing is unified; where it has
         * none, kernels cannot take the buffer and launch says so. */
        if (r == CH_SUCCESS && gp__ch.host_get_device_pointer(&b->ptr, b->host, 0) != CH_SUCCESS) {
            b->ptr = 0;
            if (memory == GP_MEMORY_MAPPED) {
                gp__ch.host_free(b->host);
                free(b);
                gp__ch_host->set_error("mapped memory has no device address on this device");
                return GP_ERROR_UNSUPPORTED;
            }
        }
    }
    if (r != CH_SUCCESS) {
        free(b);
        gp_status st = gp__ch_fail(r, memory == GP_MEMORY_DEVICE ? "allocating device memory"
                                                                 : "allocating page-locked host memory");
        return st == GP_ERROR_OUT_OF_DEVICE_MEMORY && memory != GP_MEMORY_DEVICE ? GP_ERROR_OUT_OF_HOST_MEMORY : st;
    }
    *out = b;
    return GP_SUCCESS;
}

static void ch_buffer_destroy(void *dev, void *buf)
{
    ch_buffer *b = buf;
    /* Released even where the context cannot be made current (a lost one): the driver frees
     * what it can, and gpuport keeps nothing. Likewise for every destroy below. */
    gp__ch_vendor_enter(dev);
    if (b->registered && b->host)
        gp__ch.host_unregister(b->host);
    else if (b->owned && b->memory == GP_MEMORY_DEVICE && !CH_DPTR_IS_NULL(b->ptr))
        gp__ch.mem_free(b->ptr);
    else if (b->owned && b->host)
        gp__ch.host_free(b->host);
    free(b);
}

static gp_status ch_sync(void *dev, void *stream)
{
    CH_ENTER(dev);
    CH_CALL(gp__ch.stream_synchronize((ch_stream)stream), "synchronizing the stream");
    return GP_SUCCESS;
}

static gp_status ch_buffer_map(void *dev, void *stream, void *buf, size_t bytes, void **host)
{
    static char empty[1]; /* a 0-byte buffer still maps to a valid address */
    ch_buffer *b = buf;
    (void)bytes;
    gp_status st = ch_sync(dev, stream);
    if (st == GP_SUCCESS)
        *host = b->host ? b->host : empty;
    return st;
}

static gp_status ch_buffer_unmap(void *dev, void *stream, void *buf, void *host)
{
    (void)dev, (void)stream, (void)buf, (void)host;
    return GP_SUCCESS; /* host memory the device reads in place: nothing to write back */
}

/* ---- Streams ---- */

static gp_status ch_stream_create(void *dev, void **out)
{
    CH_ENTER(dev);
    ch_stream s;
    CH_CALL(gp__ch.stream_create(&s, CH_STREAM_NON_BLOCKING), "creating a stream");
    *out = (void *)s;
    return GP_SUCCESS;
}

static void ch_stream_destroy(void *dev, void *stream)
{
    if (gp__ch_vendor_enter(dev) == GP_SUCCESS)
        gp__ch.stream_synchronize((ch_stream)stream);
    gp__ch.stream_destroy((ch_stream)stream);
}

/* ---- Copies and fills ----
 * Device memory goes through the driver's asynchronous copies. Pinned and mapped buffers are
 * host memory: copies between them and the device use their host address; a copy with host
 * memory on both ends waits for the stream and copies on the host, which also satisfies the
 * _async calls (they may finish early). */

static gp_status ch_finish(void *dev, void *stream, int blocking)
{
    return blocking ? ch_sync(dev, stream) : GP_SUCCESS;
}

static gp_status ch_write(void *dev, void *stream, void *dst, size_t off, const void *src, size_t bytes, int blocking)
{
    ch_buffer *b = dst;
    if (b->memory != GP_MEMORY_DEVICE) {
        gp_status st = ch_sync(dev, stream);
        if (st == GP_SUCCESS)
            memcpy((char *)b->host + off, src, bytes);
        return st;
    }
    CH_ENTER(dev);
    /* HIP's prototype takes a non-const source. */
    CH_CALL(gp__ch.memcpy_htod_async(CH_DPTR_ADD(b->ptr, off), (void *)src, bytes, (ch_stream)stream),
            "copying host to device");
    return ch_finish(dev, stream, blocking);
}

static gp_status ch_read(void *dev, void *stream, void *src, size_t off, void *dst, size_t bytes, int blocking)
{
    ch_buffer *b = src;
    if (b->memory != GP_MEMORY_DEVICE) {
        gp_status st = ch_sync(dev, stream);
        if (st == GP_SUCCESS)
            memcpy(dst, (char *)b->host + off, bytes);
        return st;
    }
    CH_ENTER(dev);
    CH_CALL(gp__ch.memcpy_dtoh_async(dst, CH_DPTR_ADD(b->ptr, off), bytes, (ch_stream)stream),
            "copying device to host");
    return ch_finish(dev, stream, blocking);
}

static gp_status ch_copy(void *dev, void *stream, void *dst, size_t dst_off, void *src, size_t src_off, size_t bytes,
                         int blocking)
{
    ch_buffer *d = dst, *s = src;
    int d_host = d->memory != GP_MEMORY_DEVICE, s_host = s->memory != GP_MEMORY_DEVICE;
    if (d_host && s_host) {
        gp_status st = ch_sync(dev, stream);
        if (st == GP_SUCCESS)
            memmove((char *)d->host + dst_off, (char *)s->host + src_off, bytes);
        return st;
    }
    CH_ENTER(dev);
    ch_stream st = (ch_stream)stream;
    if (d_host)
        CH_CALL(gp__ch.memcpy_dtoh_async((char *)d->host + dst_off, CH_DPTR_ADD(s->ptr, src_off), bytes, st),
                "copying device to host");
    else if (s_host)
        CH_CALL(gp__ch.memcpy_htod_async(CH_DPTR_ADD(d->ptr, dst_off), (char *)s->host + src_off, bytes, st),
                "copying host to device");
    else
        CH_CALL(gp__ch.memcpy_dtod_async(CH_DPTR_ADD(d->ptr, dst_off), CH_DPTR_ADD(s->ptr, src_off), bytes, st),
                "copying device to device");
    return ch_finish(dev, stream, blocking);
}

/* The driver has no 64-bit memset: kernels/fill.gp, prebuilt or compiled on first use. */
static gp_status ch_program_build(void *dev, const char *source, void **binary, size_t *binary_bytes);
static gp_status ch_program_load(void *dev, const void *binary, size_t binary_bytes, void **out);

static gp_status ch_fill8(gp__ch_device *d, ch_stream stream, ch_dptr p, uint64_t count, uint64_t value)
{
    pthread_mutex_lock(&d->fill_lock);
    gp_status st = GP_SUCCESS;
    if (!d->fill_function) {
        static const char line_reset[] = "\n#line 1\n"; /* as core composes a source without options */
        size_t plen = strlen(gp__ch_prelude), flen = strlen(gp__ch_fill_source);
        char *source = malloc(plen + sizeof line_reset + flen);
        void *binary = NULL, *m = NULL;
        size_t binary_bytes = 0;
        st = source ? GP_SUCCESS : ch_no_host_memory();
        if (st == GP_SUCCESS) {
            memcpy(source, gp__ch_prelude, plen);
            memcpy(source + plen, line_reset, sizeof line_reset - 1);
            memcpy(source + plen + sizeof line_reset - 1, gp__ch_fill_source, flen + 1);
            st = ch_program_build(d, source, &binary, &binary_bytes);
        }
        if (st == GP_SUCCESS)
            st = ch_program_load(d, binary, binary_bytes, &m);
        free(source);
        free(binary);
        if (st == GP_SUCCESS) {
            ch_result r = gp__ch.module_get_function(&d->fill_function, (ch_module)m, "gp_fill8");
            if (r != CH_SUCCESS) {
                gp__ch.module_unload((ch_module)m);
                d->fill_function = NULL;
                st = gp__ch_fail(r, "finding the 8-byte fill kernel");
            } else {
                d->fill_module = (ch_module)m;
            }
        }
    }
    ch_function fn = d->fill_function;
    pthread_mutex_unlock(&d->fill_lock);
    if (st != GP_SUCCESS)
        return st;
    uint64_t groups = (count + 255) / 256;
    if (groups > 65535)
        groups = 65535; /* the kernel strides over the rest */
    void *params[] = {&p, &count, &value};
    CH_CALL(gp__ch.launch_kernel(fn, (unsigned)groups, 1, 1, 256, 1, 1, 0, stream, params, NULL),
            "launching the 8-byte fill kernel");
    return GP_SUCCESS;
}

static gp_status ch_fill(void *dev, void *stream, void *dst, size_t off, size_t bytes, const void *pattern,
                         size_t pattern_size, int blocking)
{
    ch_buffer *b = dst;
    if (b->memory != GP_MEMORY_DEVICE) {
        gp_status st = ch_sync(dev, stream);
        if (st != GP_SUCCESS)
            return st;
        for (size_t i = 0; i < bytes; i += pattern_size)
            memcpy((char *)b->host + off + i, pattern, pattern_size);
        return GP_SUCCESS;
    }
    CH_ENTER(dev);
    ch_dptr p = CH_DPTR_ADD(b->ptr, off);
    ch_stream s = (ch_stream)stream;
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;
    switch (pattern_size) {
    case 1:
        memcpy(&v8, pattern, 1);
        CH_CALL(gp__ch.memset_d8_async(p, v8, bytes, s), "filling with a 1-byte pattern");
        break;
    case 2:
        memcpy(&v16, pattern, 2);
        CH_CALL(gp__ch.memset_d16_async(p, v16, bytes / 2, s), "filling with a 2-byte pattern");
        break;
    case 4:
        memcpy(&v32, pattern, 4);
        CH_CALL(gp__ch.memset_d32_async(p, v32, bytes / 4, s), "filling with a 4-byte pattern");
        break;
    case 8: {
        memcpy(&v64, pattern, 8);
        gp_status st = ch_fill8(dev, s, p, bytes / 8, v64);
        if (st != GP_SUCCESS)
            return st;
        break;
    }
    default:
        gp__ch_host->set_error("fill patterns are 1, 2, 4 or 8 bytes, not %zu", pattern_size);
        return GP_ERROR_INVALID_ARGUMENT;
    }
    return ch_finish(dev, stream, blocking);
}

/* ---- Events ---- */

static gp_status ch_event_create(void *dev, void **out)
{
    CH_ENTER(dev);
    ch_event_obj *e = calloc(1, sizeof *e);
    if (!e)
        return ch_no_host_memory();
    ch_result r = gp__ch.event_create(&e->ev, CH_EVENT_DEFAULT);
    if (r != CH_SUCCESS) {
        free(e);
        return gp__ch_fail(r, "creating an event");
    }
    atomic_init(&e->recorded, 0);
    *out = e;
    return GP_SUCCESS;
}

static void ch_event_destroy(void *dev, void *event)
{
    ch_event_obj *e = event;
    gp__ch_vendor_enter(dev);
    gp__ch.event_destroy(e->ev);
    free(e);
}

static gp_status ch_event_record(void *dev, void *event, void *stream)
{
    ch_event_obj *e = event;
    CH_ENTER(dev);
    CH_CALL(gp__ch.event_record(e->ev, (ch_stream)stream), "recording an event");
    atomic_store(&e->recorded, 1);
    return GP_SUCCESS;
}

static gp_status ch_stream_wait_event(void *dev, void *stream, void *event)
{
    ch_event_obj *e = event;
    CH_ENTER(dev);
    CH_CALL(gp__ch.stream_wait_event((ch_stream)stream, e->ev, 0), "making a stream wait for an event");
    return GP_SUCCESS;
}

static gp_status ch_event_synchronize(void *dev, void *event)
{
    ch_event_obj *e = event;
    CH_ENTER(dev);
    CH_CALL(gp__ch.event_synchronize(e->ev), "waiting for an event");
    return GP_SUCCESS;
}

static gp_status ch_event_query(void *dev, void *event)
{
    ch_event_obj *e = event;
    CH_ENTER(dev);
    ch_result r = gp__ch.event_query(e->ev);
    if (r == CH_ERROR_NOT_READY)
        return GP_NOT_READY;
    return r == CH_SUCCESS ? GP_SUCCESS : gp__ch_fail(r, "querying an event");
}

static gp_status ch_event_elapsed_ms(void *dev, void *start, void *end, double *ms)
{
    ch_event_obj *a = start, *b = end;
    if (!atomic_load(&a->recorded) || !atomic_load(&b->recorded)) {
        gp__ch_host->set_error("elapsed time needs two recorded events; the %s event was never recorded",
                               atomic_load(&a->recorded) ? "end" : "start");
        return GP_ERROR_INVALID_ARGUMENT;
    }
    CH_ENTER(dev);
    float f = 0;
    ch_result r = gp__ch.event_elapsed_time(&f, a->ev, b->ev);
    if (r == CH_ERROR_NOT_READY) {
        gp__ch_host->set_error("the events have not been reached yet");
        return GP_NOT_READY;
    }
    if (r != CH_SUCCESS)
        return gp__ch_fail(r, "measuring the time between events");
    *ms = f;
    return GP_SUCCESS;
}

/* ---- Programs ---- */

static gp_status ch_build_log(ch_rtc_program prog, char **log)
{
    size_t n = 0;
    *log = NULL;
    if (gp__ch.rtc_get_program_log_size(prog, &n) != CH_RTC_SUCCESS || n == 0)
        return GP_SUCCESS;
    *log = malloc(n + 1);
    if (!*log)
        return ch_no_host_memory();
    if (gp__ch.rtc_get_program_log(prog, *log) != CH_RTC_SUCCESS)
        (*log)[0] = '\0';
    (*log)[n] = '\0';
    return GP_SUCCESS;
}

static gp_status ch_rtc_fail(ch_rtc_result r, const char *what)
{
    gp__ch_host->set_error("%s failed: %s (%d)", what, gp__ch.rtc_get_error_string(r), (int)r);
    return GP_ERROR_BACKEND;
}

static gp_status ch_compile(gp__ch_device *d, ch_rtc_program prog, int *kind)
{
    const char *opts[8];
    char arch_buf[256];
    size_t narch = gp__ch_vendor_rtc_options(d, opts, 8, arch_buf, sizeof arch_buf, kind);
    if (narch == (size_t)-1)
        return GP_ERROR_UNSUPPORTED;
    ch_rtc_result r = gp__ch.rtc_compile_program(prog, (int)narch, opts);

    char *log = NULL;
    gp_status st = ch_build_log(prog, &log);
    if (st != GP_SUCCESS)
        return st;
    if (r == CH_RTC_ERROR_COMPILATION) {
        static const char head[] = "build failed on ";
        size_t len = sizeof head + strlen(d->name) + 2 + (log ? strlen(log) : 0);
        char *text = malloc(len);
        if (text) {
            snprintf(text, len, "%s%s:\n%s", head, d->name, log ? log : "");
            gp__ch_host->set_error_text(text);
            free(text);
        } else {
            gp__ch_host->set_error("build failed on %s (the log did not fit in memory)", d->name);
        }
        free(log);
        return GP_ERROR_BUILD_FAILED;
    }
    if (log && log[0] && gp__ch_host->debug_on("compile"))
        gp__ch_host->debug("compile", "%s log for %s:\n%s", CH_RTC_TITLE, d->name, log);
    free(log);
    return r == CH_RTC_SUCCESS ? GP_SUCCESS : ch_rtc_fail(r, "compiling");
}

/* The build's prebuilt binary for exactly this source, if any (cuhip.h). One the device cannot
 * load (an architecture the build did not name) does not count. */
static int ch_prebuilt(gp__ch_device *d, const char *source, const unsigned char **code, size_t *bytes, int *kind)
{
    size_t plen = strlen(gp__ch_prelude);
    if (strncmp(source, gp__ch_prelude, plen) != 0 || source[plen] != '\n')
        return 0;
    const char *user = source + plen + 1;
    for (size_t e = 0; e < gp__ch_prebuilt_count; e++) {
        const gp__ch_prebuilt *p = &gp__ch_prebuilt_table[e];
        if (strcmp(p->source, user) != 0)
            continue;
        ch_module m;
        if (gp__ch_vendor_enter(d) != GP_SUCCESS || gp__ch.module_load_data(&m, p->code) != CH_SUCCESS) {
            gp__ch_host->debug("compile", "the prebuilt binary does not load on %s; compiling instead", d->name);
            return 0;
        }
        gp__ch.module_unload(m);
        *code = p->code;
        *bytes = p->bytes;
        *kind = p->kind;
        return 1;
    }
    return 0;
}

/* Wraps code in the header program_load checks; takes ownership of nothing. */
static gp_status ch_wrap(const void *code, size_t bytes, int kind, void **binary, size_t *binary_bytes)
{
    unsigned char *out = malloc(sizeof(ch_binary_header) + bytes);
    if (!out)
        return ch_no_host_memory();
    ch_binary_header h = {.kind = (uint32_t)kind, .bytes = bytes, .checksum = ch_fnv1a(code, bytes)};
    memcpy(h.magic, ch_magic, sizeof h.magic);
    memcpy(out, &h, sizeof h);
    memcpy(out + sizeof h, code, bytes);
    *binary = out;
    *binary_bytes = sizeof h + bytes;
    return GP_SUCCESS;
}

static gp_status ch_program_build(void *dev, const char *source, void **binary, size_t *binary_bytes)
{
    gp__ch_device *d = dev;
    const unsigned char *prebuilt;
    size_t bytes = 0;
    int kind = 0;
    if (ch_prebuilt(d, source, &prebuilt, &bytes, &kind)) {
        gp__ch_host->debug("compile", "prebuilt binary (%zu bytes) for %s", bytes, d->name);
        return ch_wrap(prebuilt, bytes, kind, binary, binary_bytes);
    }
    if (!gp__ch_rtc_loaded) {
        gp__ch_host->set_error("%s was not found, so kernels cannot be compiled from source (tried: %s)",
                               CH_RTC_TITLE, ch_rtc_tried);
        return GP_ERROR_UNSUPPORTED;
    }
    ch_rtc_program prog;
    ch_rtc_result r = gp__ch.rtc_create_program(&prog, source, "gpuport_program.cu", 0, NULL, NULL);
    if (r != CH_RTC_SUCCESS)
        return ch_rtc_fail(r, "creating a program");
    void *code = NULL;
    gp_status st = ch_compile(d, prog, &kind);
    if (st == GP_SUCCESS)
        st = gp__ch_vendor_rtc_code(d, prog, kind, &code, &bytes);
    gp__ch.rtc_destroy_program(&prog);
    if (st == GP_SUCCESS)
        st = ch_wrap(code, bytes, kind, binary, binary_bytes);
    free(code);
    if (st == GP_SUCCESS)
        gp__ch_host->debug("compile", "built %zu bytes of %s for %s", bytes, kind == GP__CH_CODE_PTX ? "PTX" : "code",
                           d->name);
    return st;
}

static gp_status ch_program_load(void *dev, const void *binary, size_t binary_bytes, void **out)
{
    ch_binary_header h;
    memset(&h, 0, sizeof h);
    const unsigned char *code = (const unsigned char *)binary + sizeof h;
    if (binary_bytes >= sizeof h)
        memcpy(&h, binary, sizeof h);
    if (binary_bytes < sizeof h || memcmp(h.magic, ch_magic, sizeof h.magic) || h.bytes != binary_bytes - sizeof h ||
        ch_fnv1a(code, (size_t)h.bytes) != h.checksum || !gp__ch_vendor_code_ok((int)h.kind, code, (size_t)h.bytes)) {
        gp__ch_host->set_error("the binary (%zu bytes) is not a %s program binary for this plugin, or it is damaged",
                               binary_bytes, CH_BACKEND_NAME);
        return GP_ERROR_INVALID_ARGUMENT;
    }
    CH_ENTER(dev);
    /* The loader reads ELF structures in place, so give it aligned memory. */
    void *copy = NULL;
    if ((uintptr_t)code % 16) {
        if (!(copy = malloc((size_t)h.bytes)))
            return ch_no_host_memory();
        memcpy(copy, code, (size_t)h.bytes);
    }
    ch_module m;
    ch_result r = gp__ch.module_load_data(&m, copy ? copy : code);
    free(copy);
    if (r != CH_SUCCESS)
        return gp__ch_fail(r, "loading the program");
    *out = (void *)m;
    return GP_SUCCESS;
}

static void ch_program_destroy(void *dev, void *program)
{
    /* Work queued earlier may still run the module's kernels (gpuport.h's lifetimes): wait for
     * the device first. Modules go rarely; buffers go often, and the driver's own free waits. */
    if (gp__ch_vendor_enter(dev) == GP_SUCCESS)
        gp__ch.ctx_synchronize();
    gp__ch.module_unload((ch_module)program);
}

/* ---- Kernels ---- */

static gp_status ch_kernel_create(void *dev, void *program, const char *name, void **out, gp__kernel_props *props)
{
    CH_ENTER(dev);
    ch_function fn;
    ch_result r = gp__ch.module_get_function(&fn, (ch_module)program, name);
    if (r == CH_ERROR_NOT_FOUND) {
        gp__ch_host->set_error("the program has no kernel named '%s' (%s)", name, gp__ch_vendor_error_name(r));
        return GP_ERROR_NOT_FOUND;
    }
    if (r != CH_SUCCESS)
        return gp__ch_fail(r, "finding the kernel");
    int max_threads = 0, shared = 0;
    CH_CALL(gp__ch.func_get_attribute(&max_threads, CH_FUNC_ATTR_MAX_THREADS_PER_BLOCK, fn),
            "querying the kernel's group size limit");
    CH_CALL(gp__ch.func_get_attribute(&shared, CH_FUNC_ATTR_SHARED_SIZE_BYTES, fn),
            "querying the kernel's shared memory");

    /* One pass for the usual kernel. */
    size_t first[64], n = 0;
    int known = gp__ch_vendor_param_sizes(fn, props->nargs, first, 64, &n);
    ch_kernel *k = malloc(sizeof *k + (known ? n : 0) * sizeof k->sizes[0]);
    if (!k)
        return ch_no_host_memory();
    k->fn = fn;
#ifdef CH_FUNC_ATTR_MAX_DYNAMIC_SHARED
    atomic_init(&k->dynamic_ok, 0);
#endif
    k->nparams = known ? n : (size_t)-1;
    if (known && n <= 64)
        memcpy(k->sizes, first, n * sizeof first[0]);
    else if (known)
        gp__ch_vendor_param_sizes(fn, n, k->sizes, n, &n);
    props->nargs = k->nparams;
    props->max_group_size = max_threads > 0 ? (size_t)max_threads : 0;
    props->local_bytes = shared > 0 ? (size_t)shared : 0;
    *out = k;
    return GP_SUCCESS;
}

static void ch_kernel_destroy(void *dev, void *kernel)
{
    (void)dev;
    free(kernel);
}

typedef union ch_slot {
    ch_dptr ptr;
    unsigned int offset;
} ch_slot;

static gp_status ch_bad_arg(size_t i, const char *what, size_t given, size_t expected)
{
    gp__ch_host->set_error("kernel argument %zu: %s of %zu bytes given, the kernel's parameter takes %zu bytes", i,
                           what, given, expected);
    return GP_ERROR_INVALID_KERNEL_ARGS;
}

/* The hot path: no allocation for up to CH_STACK_ARGS arguments, and the context is made
 * current only when it is not. */
static gp_status ch_fill_params(const ch_kernel *k, size_t nargs, const gp_arg *args, void **params, ch_slot *slots,
                                size_t *shared)
{
    size_t total = 0;
    int known = k->nparams != (size_t)-1;
    for (size_t i = 0; i < nargs; i++) {
        const gp_arg *a = &args[i];
        size_t given;
        const char *what;
        if (a->kind == GP_ARG_BUFFER) {
            const ch_buffer *b = (const ch_buffer *)a->buffer;
            if (CH_DPTR_IS_NULL(b->ptr) && b->bytes) {
                gp__ch_host->set_error("kernel argument %zu: this pinned buffer has no device address; use "
                                       "GP_MEMORY_MAPPED for host memory that kernels use",
                                       i);
                return GP_ERROR_INVALID_KERNEL_ARGS;
            }
            slots[i].ptr = b->ptr;
            params[i] = &slots[i].ptr;
            given = sizeof(ch_dptr);
            what = "a buffer";
        } else if (a->kind == GP_ARG_VALUE) {
            params[i] = (void *)a->value;
            given = a->size;
            what = "a value";
        } else {
            /* Each local argument is a 16-byte aligned part of the dynamic shared memory. */
            total = (total + 15) & ~(size_t)15;
            if (total > UINT_MAX || a->size > UINT_MAX - total) {
                gp__ch_host->set_error("kernel argument %zu: %zu bytes of local memory is too much", i, a->size);
                return GP_ERROR_INVALID_LAUNCH;
            }
            slots[i].offset = (unsigned int)total;
            params[i] = &slots[i].offset;
            total += a->size;
            given = sizeof(unsigned int);
            what = "local memory (an offset)";
        }
        if (known && k->sizes[i] != given)
            return ch_bad_arg(i, what, a->kind == GP_ARG_LOCAL ? a->size : given, k->sizes[i]);
    }
    *shared = total;
    return GP_SUCCESS;
}

static gp_status ch_launch(void *dev, void *stream, void *kernel, unsigned dims, const size_t groups[3],
                           const size_t local[3], size_t nargs, const gp_arg *args)
{
    ch_kernel *k = kernel;
    (void)dims; /* core sets unused dimensions to 1 */
    if (k->nparams != (size_t)-1 && nargs != k->nparams) {
        gp__ch_host->set_error("the kernel takes %zu arguments, %zu were given", k->nparams, nargs);
        return GP_ERROR_INVALID_KERNEL_ARGS;
    }
    for (int i = 0; i < 3; i++) {
        if (groups[i] > UINT_MAX || local[i] > UINT_MAX) {
            gp__ch_host->set_error("launch of %zu x %zu groups in dimension %d is too large", groups[i], local[i], i);
            return GP_ERROR_INVALID_LAUNCH;
        }
    }
    void *stack_params[CH_STACK_ARGS];
    ch_slot stack_slots[CH_STACK_ARGS];
    void **params = stack_params;
    ch_slot *slots = stack_slots;
    if (nargs > CH_STACK_ARGS) {
        params = malloc(nargs * sizeof *params);
        slots = malloc(nargs * sizeof *slots);
        if (!params || !slots) {
            free(params);
            free(slots);
            return ch_no_host_memory();
        }
    }
    size_t shared = 0;
    gp_status st = ch_fill_params(k, nargs, args, params, slots, &shared);
    if (st == GP_SUCCESS)
        st = gp__ch_vendor_enter(dev);
#ifdef CH_FUNC_ATTR_MAX_DYNAMIC_SHARED
    /* Past the default limit (48 KiB with the kernel's own), a kernel takes dynamic shared
     * memory only up to what it was opted in to; once per kernel and size, racing calls alike. */
    if (st == GP_SUCCESS && shared > atomic_load(&k->dynamic_ok)) {
        ch_result r = gp__ch.func_set_attribute(k->fn, CH_FUNC_ATTR_MAX_DYNAMIC_SHARED, (int)shared);
        if (r == CH_SUCCESS) {
            atomic_store(&k->dynamic_ok, shared);
        } else {
            gp__ch_fail(r, "allowing the kernel its local memory");
            st = GP_ERROR_INVALID_LAUNCH;
        }
    }
#endif
    if (st == GP_SUCCESS) {
        ch_result r = gp__ch.launch_kernel(k->fn, (unsigned)groups[0], (unsigned)groups[1], (unsigned)groups[2],
                                           (unsigned)local[0], (unsigned)local[1], (unsigned)local[2],
                                           (unsigned)shared, (ch_stream)stream, params, NULL);
        if (r != CH_SUCCESS) {
            st = gp__ch_fail(r, "launching the kernel");
            if (r == CH_ERROR_INVALID_VALUE || r == CH_ERROR_LAUNCH_OUT_OF_RESOURCES)
                st = GP_ERROR_INVALID_LAUNCH;
        }
    }
    if (params != stack_params) {
        free(params);
        free(slots);
    }
    return st;
}

/* ---- Interop ---- */

static gp_status ch_interop_missing(void)
{
    gp__ch_host->set_error("the %s here lacks the entry points of native handles; update it", CH_DRIVER_TITLE);
    return GP_ERROR_UNSUPPORTED;
}
#define CH_INTEROP(field)                                                                      \
    do {                                                                                       \
        if (!gp__ch.field)                                                                     \
            return ch_interop_missing();                                                       \
    } while (0)

static gp_status ch_native_device(void *dev, gp_native_device *out)
{
    gp__ch_device *d = dev;
    out->ordinal = d->ordinal;
    out->context = gp__ch_vendor_context(d);
    return GP_SUCCESS;
}

static gp_status ch_native_stream(void *dev, void *stream, gp_native_stream *out)
{
    (void)dev;
    out->stream = stream; /* the plugin's stream is the vendor's */
    return GP_SUCCESS;
}

static gp_status ch_native_buffer(void *dev, void *buf, gp_native_buffer *out)
{
    (void)dev;
    const ch_buffer *b = buf;
    out->device_ptr = CH_DPTR_TO_U64(b->ptr);
    out->host = b->host;
    return GP_SUCCESS;
}

static gp_status ch_native_event(void *dev, void *event, gp_native_event *out)
{
    (void)dev;
    out->event = (void *)((ch_event_obj *)event)->ev;
    return GP_SUCCESS;
}

/* Memory the caller allocated on the device, from ptr to the end of its allocation or bytes of it. */
static gp_status ch_buffer_wrap(void *dev, const gp_native_buffer *native, int adopt, void **out, size_t *bytes,
                                gp_memory *memory)
{
    gp__ch_device *d = dev;
    CH_INTEROP(pointer_get_attribute);
    CH_INTEROP(mem_get_address_range);
    ch_dptr ptr = CH_DPTR_FROM_U64(native->device_ptr);
    if (CH_DPTR_IS_NULL(ptr)) {
        gp__ch_host->set_error("the native buffer's device_ptr is 0; wrap memory the device allocated");
        return GP_ERROR_INVALID_ARGUMENT;
    }
    CH_ENTER(d);
    gp_status st = gp__ch_vendor_owns(d, ptr);
    if (st != GP_SUCCESS)
        return st;
    ch_dptr base;
    size_t size = 0;
    CH_CALL(gp__ch.mem_get_address_range(&base, &size, ptr), "finding the allocation of the pointer");
    size_t rest = (size_t)(CH_DPTR_TO_U64(base) + size - CH_DPTR_TO_U64(ptr));
    if (native->bytes > rest) {
        gp__ch_host->set_error("the native buffer claims %zu bytes, but its allocation has %zu from that pointer",
                               native->bytes, rest);
        return GP_ERROR_INVALID_ARGUMENT;
    }
    unsigned int type = 0;
    void *host = NULL;
    CH_CALL(gp__ch.pointer_get_attribute(&type, CH_POINTER_ATTR_MEMORY_TYPE, ptr), "asking what the pointer is");
    if (type == CH_MEMORYTYPE_HOST)
        CH_CALL(gp__ch.pointer_get_attribute(&host, CH_POINTER_ATTR_HOST_POINTER, ptr), "finding its host address");
    ch_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return ch_no_host_memory();
    b->ptr = ptr;
    b->host = host;
    b->bytes = native->bytes ? native->bytes : rest;
    b->memory = host ? GP_MEMORY_PINNED : GP_MEMORY_DEVICE;
    b->owned = adopt;
    *out = b;
    *bytes = b->bytes;
    *memory = b->memory;
    return GP_SUCCESS;
}

static gp_status ch_buffer_register(void *dev, void *host, size_t bytes, void **out)
{
    gp__ch_device *d = dev;
    CH_INTEROP(host_register);
    ch_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return ch_no_host_memory();
    b->bytes = bytes;
    b->memory = GP_MEMORY_PINNED;
    b->registered = 1;
    if (bytes) {
        gp_status st = gp__ch_vendor_enter(d);
        ch_result r = st == GP_SUCCESS ? gp__ch.host_register(host, bytes, CH_HOSTREGISTER_FLAGS) : CH_SUCCESS;
        if (st == GP_SUCCESS && r != CH_SUCCESS)
            st = gp__ch_fail(r, "registering the host memory");
        if (st != GP_SUCCESS) {
            free(b);
            return st;
        }
        b->host = host;
        if (gp__ch.host_get_device_pointer(&b->ptr, host, 0) != CH_SUCCESS)
            b->ptr = CH_DPTR_FROM_U64(0); /* kernels cannot take it; launch says so */
    }
    *out = b;
    return GP_SUCCESS;
}

static gp_status ch_stream_wrap(void *dev, const gp_native_stream *native, void **out)
{
    CH_ENTER(dev);
    gp_status st = gp__ch_vendor_stream_check(dev, (ch_stream)native->stream);
    if (st == GP_SUCCESS)
        *out = native->stream;
    return st;
}

static int ch_can_copy_peer(void *dst, void *src)
{
    return gp__ch.device_can_access_peer && dst != src && gp__ch_vendor_can_peer(dst, src);
}

static gp_status ch_copy_peer(void *dst_dev, void *stream, void *dst, size_t dst_off, void *src_dev, void *src,
                              size_t src_off, size_t bytes, int blocking)
{
    ch_buffer *d = dst, *s = src;
    if (CH_DPTR_IS_NULL(d->ptr) || CH_DPTR_IS_NULL(s->ptr)) {
        gp__ch_host->set_error("a peer copy needs buffers with device addresses");
        return GP_ERROR_UNSUPPORTED;
    }
    gp_status st = gp__ch_vendor_copy_peer(dst_dev, CH_DPTR_ADD(d->ptr, dst_off), src_dev, CH_DPTR_ADD(s->ptr, src_off),
                                           bytes, (ch_stream)stream);
    if (st == GP_SUCCESS && blocking) {
        ch_result r = gp__ch.stream_synchronize((ch_stream)stream);
        if (r != CH_SUCCESS)
            st = gp__ch_fail(r, "waiting for a peer copy");
    }
    return st;
}

/* ---- The table ---- */

static const gp__backend ch_backend = {
    .abi = GP__PLUGIN_ABI,
    .name = CH_BACKEND_NAME,
    .prelude = gp__ch_prelude,
    .init = ch_init,
    .device_open = ch_device_open,
    .device_close = ch_device_close,
    .device_cache_id = ch_device_cache_id,
    .buffer_create = ch_buffer_create,
    .buffer_destroy = ch_buffer_destroy,
    .buffer_map = ch_buffer_map,
    .buffer_unmap = ch_buffer_unmap,
    .stream_create = ch_stream_create,
    .stream_destroy = ch_stream_destroy,
    .stream_synchronize = ch_sync,
    .write = ch_write,
    .read = ch_read,
    .copy = ch_copy,
    .fill = ch_fill,
    .event_create = ch_event_create,
    .event_destroy = ch_event_destroy,
    .event_record = ch_event_record,
    .stream_wait_event = ch_stream_wait_event,
    .event_synchronize = ch_event_synchronize,
    .event_query = ch_event_query,
    .event_elapsed_ms = ch_event_elapsed_ms,
    .program_build = ch_program_build,
    .program_load = ch_program_load,
    .program_destroy = ch_program_destroy,
    .kernel_create = ch_kernel_create,
    .kernel_destroy = ch_kernel_destroy,
    .launch = ch_launch,
    .blas_info = gp__ch_blas_info,
    .blas_gemm = gp__ch_blas_gemm,
    .native_device = ch_native_device,
    .native_stream = ch_native_stream,
    .native_buffer = ch_native_buffer,
    .native_event = ch_native_event,
    .buffer_wrap = ch_buffer_wrap,
    .buffer_register = ch_buffer_register,
    .stream_wrap = ch_stream_wrap,
    .can_copy_peer = ch_can_copy_peer,
    .copy_peer = ch_copy_peer,
    .events_across_devices = 1,
};

GP_API const gp__backend *gp_plugin_entry(void);
const gp__backend *gp_plugin_entry(void)
{
    return &ch_backend;
}
