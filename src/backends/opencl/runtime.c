/* libgpuport-opencl: devices, buffers, streams and events on OpenCL 1.2 through the ICD loader
 * (loader.c), and the plugin's table; programs, kernels and launches are in program.c, CLBlast in blas.c,
 * memory made elsewhere (wrapped, registered, imported) in external.c. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

extern const char gp__opencl_prelude[]; /* kernels/prelude_opencl.h, embedded at build time */

/* Devices are found once in init; a fixed table keeps the plugin free of state to tear down. */
#define GP__CL_MAX_DEVICES 64

typedef struct gp__cl_event {
    pthread_mutex_t lock; /* record may replace mark while another thread waits on the old one */
    cl_event mark;
} gp__cl_event;

static struct {
    cl_platform_id platform;
    cl_device_id device;
} gp__found[GP__CL_MAX_DEVICES];
static size_t gp__nfound;

/* String queries return malloc'ed text (NULL on failure) since their lengths have no bound. */
static char *gp__cl_platform_text(cl_platform_id p, cl_platform_info what)
{
    size_t n = 0;
    if (gp__cl.clGetPlatformInfo(p, what, 0, NULL, &n) != CL_SUCCESS)
        return NULL;
    char *s = malloc(n + 1);
    if (s && gp__cl.clGetPlatformInfo(p, what, n, s, NULL) != CL_SUCCESS) {
        free(s);
        return NULL;
    }
    if (s)
        s[n] = '\0';
    return s;
}

/* Copies s without surrounding blanks (some drivers pad names), then frees it. */
static void gp__cl_take_text(char *dst, size_t len, char *s)
{
    const char *b = s ? s : "";
    while (*b == ' ')
        b++;
    size_t n = strlen(b);
    while (n > 0 && (b[n - 1] == ' ' || b[n - 1] == '\n'))
        n--;
    snprintf(dst, len, "%.*s", (int)n, b);
    free(s);
}

static int gp__cl_device_get(cl_device_id d, cl_device_info what, void *out, size_t size)
{
    return gp__cl.clGetDeviceInfo(d, what, size, out, NULL) == CL_SUCCESS;
}

static int gp__cl_has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list ? strstr(list, word) : NULL; p; p = strstr(p + 1, word)) {
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    }
    return 0;
}

/* 1 when "OpenCL M.N ..." says 1.2 or later: older platforms lack entry points we call. */
static int gp__cl_is_1_2(const char *version)
{
    int major = 0, minor = 0;
    if (!version || sscanf(version, "OpenCL %d.%d", &major, &minor) != 2)
        return 0;
    return major > 1 || (major == 1 && minor >= 2);
}

double gp__cl_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- init and devices ----------------------------------------------------------------- */

/* Adds the platform's usable devices to gp__found; returns how many it skipped as too old. */
static size_t gp__cl_add_platform(cl_platform_id p, const char *pname, const char *pversion)
{
    cl_uint n = 0;
    cl_int err = gp__cl.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, NULL, &n);
    if (err != CL_SUCCESS || n == 0) {
        gp__cl_host->debug("load", "opencl: platform '%s' (%s): no devices", pname, pversion);
        return 0;
    }
    cl_device_id *ids = malloc(n * sizeof *ids);
    if (!ids || gp__cl.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ids, NULL) != CL_SUCCESS) {
        free(ids);
        return 0;
    }
    size_t skipped = 0;
    for (cl_uint i = 0; i < n; i++) {
        char *name = gp__cl_device_text(ids[i], CL_DEVICE_NAME);
        char *version = gp__cl_device_text(ids[i], CL_DEVICE_VERSION);
        if (!gp__cl_is_1_2(pversion) || !gp__cl_is_1_2(version)) {
            gp__cl_host->debug("load", "opencl: skipping '%s' (%s): OpenCL 1.2 or later is needed", name ? name : "?",
                               version ? version : "no version");
            skipped++;
        } else if (gp__nfound == GP__CL_MAX_DEVICES) {
            gp__cl_host->debug("load", "opencl: skipping '%s': more than %d devices", name ? name : "?",
                               GP__CL_MAX_DEVICES);
        } else {
            gp__cl_host->debug("load", "opencl:%zu is '%s' (%s) on platform '%s'", gp__nfound, name ? name : "?",
                               version ? version : "", pname);
            gp__found[gp__nfound].platform = p;
            gp__found[gp__nfound].device = ids[i];
            gp__nfound++;
        }
        free(name);
        free(version);
    }
    free(ids);
    return skipped;
}

static gp_status gp__cl_init(const gp__host *host, char *reason, size_t reason_len, char *version, size_t version_len,
                             size_t *ndevices)
{
    gp__cl_host = host;
    gp__nfound = 0;
    *ndevices = 0;
    if (version_len)
        version[0] = '\0';
    if (!gp__cl_load(host, reason, reason_len))
        return GP_ERROR_BACKEND_UNAVAILABLE;

    cl_uint np = 0;
    cl_int err = gp__cl.clGetPlatformIDs(0, NULL, &np);
    if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && np == 0)) {
        snprintf(reason, reason_len,
                 "the OpenCL loader found no platform: no ICD in /etc/OpenCL/vendors (or OCL_ICD_VENDORS)");
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }
    char text[96];
    if (err != CL_SUCCESS) {
        snprintf(reason, reason_len, "clGetPlatformIDs failed: %s", gp__cl_error_text(err, text, sizeof text));
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }
    cl_platform_id *plats = malloc(np * sizeof *plats);
    if (!plats || (err = gp__cl.clGetPlatformIDs(np, plats, NULL)) != CL_SUCCESS) {
        free(plats);
        snprintf(reason, reason_len, "clGetPlatformIDs failed: %s",
                 plats ? gp__cl_error_text(err, text, sizeof text) : "out of host memory");
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }

    size_t skipped = 0, used = 0;
    for (cl_uint i = 0; i < np; i++) {
        char *pname = gp__cl_platform_text(plats[i], CL_PLATFORM_NAME);
        char *pversion = gp__cl_platform_text(plats[i], CL_PLATFORM_VERSION);
        const char *nm = pname ? pname : "?", *ver = pversion ? pversion : "";
        if (used < version_len) {
            int w = snprintf(version + used, version_len - used, "%s%s (%s)", i ? "; " : "", nm, ver);
            used = w < 0 ? version_len : used + (size_t)w;
        }
        skipped += gp__cl_add_platform(plats[i], nm, ver);
        free(pname);
        free(pversion);
    }
    free(plats);

    if (gp__nfound == 0) {
        if (skipped)
            snprintf(reason, reason_len, "no OpenCL device of version 1.2 or later (%zu older ones skipped)", skipped);
        else
            snprintf(reason, reason_len, "no OpenCL device on the platforms found: %s", version_len ? version : "");
        return GP_ERROR_BACKEND_UNAVAILABLE;
    }
    *ndevices = gp__nfound;
    return GP_SUCCESS;
}

/* Drivers report asynchronous errors (a faulting kernel, say) only through this callback. */
static void CL_CALLBACK gp__cl_notify(const char *what, const void *info, size_t info_len, void *user)
{
    (void)info;
    (void)info_len;
    gp__cl_host->debug("launch", "opencl: driver says on '%s': %s", ((const gp__cl_dev *)user)->name, what);
}

/* Markers are the natural event, but the spec leaves their profiling times to the driver; where
 * one gives none, a 4-byte fill (a real command, so always timed) stands in for the marker. */
static gp_status gp__cl_probe_markers(gp__cl_dev *d)
{
    cl_int err;
    cl_command_queue q = gp__cl.clCreateCommandQueue(d->ctx, d->id, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!q)
        return gp__cl_fail("clCreateCommandQueue", err);
    cl_event ev = NULL;
    cl_ulong end = 0;
    err = gp__cl.clEnqueueMarkerWithWaitList(q, 0, NULL, &ev);
    if (err == CL_SUCCESS)
        err = gp__cl.clWaitForEvents(1, &ev);
    if (err == CL_SUCCESS)
        err = gp__cl.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
    if (ev)
        gp__cl.clReleaseEvent(ev);
    gp__cl.clReleaseCommandQueue(q);
    if (err == CL_SUCCESS && end != 0)
        return GP_SUCCESS;
    gp__cl_host->debug("load", "opencl: '%s' gives markers no profiling times; timing events with fills", d->name);
    d->scratch = gp__cl.clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, 4, NULL, &err);
    return d->scratch ? GP_SUCCESS : gp__cl_fail("clCreateBuffer", err);
}

static void gp__cl_fill_info(gp__cl_dev *d, gp_device_info *info)
{
    cl_device_id id = d->id;
    char *ext = gp__cl_device_text(id, CL_DEVICE_EXTENSIONS);
    cl_device_type type = 0;
    cl_ulong u64 = 0;
    cl_uint u32 = 0, dims = 0;
    size_t sizes[16] = {0};
    cl_device_fp_config fp = 0;
    cl_bool unified = CL_FALSE;

    snprintf(info->name, sizeof info->name, "%s", d->name);
    gp__cl_take_text(info->vendor, sizeof info->vendor, gp__cl_device_text(id, CL_DEVICE_VENDOR));
    gp__cl_device_get(id, CL_DEVICE_TYPE, &type, sizeof type);
    info->type = (type & CL_DEVICE_TYPE_GPU)   ? GP_DEVICE_GPU
                 : (type & CL_DEVICE_TYPE_CPU) ? GP_DEVICE_CPU
                                               : GP_DEVICE_OTHER;
    if (gp__cl_device_get(id, CL_DEVICE_GLOBAL_MEM_SIZE, &u64, sizeof u64))
        info->global_mem_bytes = u64;
    if (gp__cl_device_get(id, CL_DEVICE_LOCAL_MEM_SIZE, &u64, sizeof u64))
        info->local_mem_bytes = u64;
    if (gp__cl_device_get(id, CL_DEVICE_MAX_COMPUTE_UNITS, &u32, sizeof u32))
        info->compute_units = u32;
    gp__cl_device_get(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, &info->max_work_group_size, sizeof(size_t));
    if (gp__cl_device_get(id, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, &dims, sizeof dims) && dims <= 16)
        gp__cl_device_get(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizes, dims * sizeof(size_t));
    for (int i = 0; i < 3; i++)
        info->max_work_item_sizes[i] = sizes[i] ? sizes[i] : 1;

    /* CL_DEVICE_DOUBLE_FP_CONFIG is optional in 1.2 (an error without cl_khr_fp64). */
    info->fp64 = (gp__cl_device_get(id, CL_DEVICE_DOUBLE_FP_CONFIG, &fp, sizeof fp) && fp != 0) ||
                 gp__cl_has_word(ext, "cl_khr_fp64");
    if (gp__cl_device_get(id, CL_DEVICE_HOST_UNIFIED_MEMORY, &unified, sizeof unified))
        info->unified_memory = unified == CL_TRUE;
    else
        info->unified_memory = info->type == GP_DEVICE_CPU;
    d->host_memory = info->type == GP_DEVICE_CPU && info->unified_memory;

    /* Every build asks for argument info: launch uses it to catch an argument of the wrong kind. */
    int len = snprintf(d->build_options, sizeof d->build_options, "-cl-std=CL1.2 -cl-kernel-arg-info%s",
                       info->type == GP_DEVICE_CPU ? " -DGP__CPU" : "");
    u32 = 0;
    cl_uint major = 0, minor = 0;
    if (gp__cl_has_word(ext, "cl_nv_device_attribute_query")) {
        d->kernel_group_size = info->max_work_group_size;
        gp__cl_device_get(id, CL_DEVICE_WARP_SIZE_NV, &u32, sizeof u32);
        if (gp__cl_device_get(id, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, &major, sizeof major) &&
            gp__cl_device_get(id, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, &minor, sizeof minor) && major < 100 &&
            minor < 10)
            snprintf(d->build_options + len, sizeof d->build_options - (size_t)len, " -DGP_NV_SM=%u",
                     major * 10 + minor);
    } else if (gp__cl_has_word(ext, "cl_amd_device_attribute_query"))
        gp__cl_device_get(id, CL_DEVICE_WAVEFRONT_WIDTH_AMD, &u32, sizeof u32);
    info->subgroup_size = u32;

    gp__cl_take_text(info->driver_version, sizeof info->driver_version, gp__cl_device_text(id, CL_DRIVER_VERSION));
    char *pname = gp__cl_platform_text(d->platform, CL_PLATFORM_NAME);
    char *pversion = gp__cl_platform_text(d->platform, CL_PLATFORM_VERSION);
    char *dversion = gp__cl_device_text(id, CL_DEVICE_VERSION);
    char *cversion = gp__cl_device_text(id, CL_DEVICE_OPENCL_C_VERSION);
    snprintf(info->runtime_version, sizeof info->runtime_version, "%s %s", pname ? pname : "",
             pversion ? pversion : "");
    snprintf(d->cache_id, sizeof d->cache_id, "opencl|%s|%s|%s|%s|%s|%s|%s", pname ? pname : "",
             pversion ? pversion : "", d->name, dversion ? dversion : "", info->driver_version, cversion ? cversion : "",
             d->build_options);
    d->serialize_kernels = pname && strstr(pname, "Portable Computing Language") != NULL;
    free(pname);
    free(pversion);
    free(dversion);
    free(cversion);
    free(ext);
}

static void gp__cl_device_close(void *dev)
{
    gp__cl_dev *d = dev;
    if (!d)
        return;
    if (d->scratch)
        gp__cl.clReleaseMemObject(d->scratch);
    if (d->last_kernel)
        gp__cl.clReleaseEvent(d->last_kernel);
    pthread_mutex_destroy(&d->kernel_lock);
    if (d->ctx)
        gp__cl.clReleaseContext(d->ctx);
    free(d);
}

static gp_status gp__cl_device_open(size_t index, void **dev, gp_device_info *info)
{
    if (index >= gp__nfound) {
        gp__cl_host->set_error("no OpenCL device %zu (there are %zu)", index, gp__nfound);
        return GP_ERROR_NOT_FOUND;
    }
    gp__cl_dev *d = calloc(1, sizeof *d);
    if (!d)
        return gp__cl_no_memory("an OpenCL device");
    d->platform = gp__found[index].platform;
    d->id = gp__found[index].device;
    gp__cl_take_text(d->name, sizeof d->name, gp__cl_device_text(d->id, CL_DEVICE_NAME));
    pthread_mutex_init(&d->kernel_lock, NULL);

    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)d->platform, 0};
    cl_int err;
    d->ctx = gp__cl.clCreateContext(props, 1, &d->id, gp__cl_notify, d, &err);
    if (!d->ctx) {
        free(d);
        return gp__cl_fail("clCreateContext", err);
    }
    gp__cl_fill_info(d, info);
    gp_status st = gp__cl_probe_markers(d);
    if (st != GP_SUCCESS) {
        gp__cl_device_close(d);
        return st;
    }
    *dev = d;
    return GP_SUCCESS;
}

static void gp__cl_device_cache_id(void *dev, char *buf, size_t len)
{
    snprintf(buf, len, "%s", ((gp__cl_dev *)dev)->cache_id);
}

/* ---- buffers and streams ---------------------------------------------------------------- */

static gp_status gp__cl_buffer_create(void *dev, gp_memory memory, size_t bytes, void **buf)
{
    gp__cl_dev *d = dev;
    cl_mem_flags flags = CL_MEM_READ_WRITE | (memory == GP_MEMORY_DEVICE ? 0 : CL_MEM_ALLOC_HOST_PTR);
    cl_int err;
    /* OpenCL refuses empty buffers; a 0-byte gp_buffer holds one unused byte. */
    cl_mem m = gp__cl.clCreateBuffer(d->ctx, flags, bytes ? bytes : 1, NULL, &err);
    if (m) {
        *buf = m;
        return GP_SUCCESS;
    }
    gp_status st = gp__cl_fail("clCreateBuffer", err);
    if (err == CL_OUT_OF_RESOURCES || err == CL_INVALID_BUFFER_SIZE) {
        cl_ulong most = 0;
        gp__cl_device_get(d->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, &most, sizeof most);
        char text[96];
        gp__cl_host->set_error(
            "clCreateBuffer of %zu bytes failed: %s; the device allows at most %llu bytes per buffer", bytes,
            gp__cl_error_text(err, text, sizeof text), (unsigned long long)most);
        return GP_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    return st;
}

static void gp__cl_buffer_destroy(void *dev, void *buf)
{
    gp__cl_external_forget(buf);
    gp__cl.clReleaseMemObject(buf);
}

/* Waits for ev when blocking, and releases it either way. */
static gp_status gp__cl_finish(const char *call, cl_event ev, int blocking)
{
    cl_int err = blocking ? gp__cl.clWaitForEvents(1, &ev) : CL_SUCCESS;
    gp__cl.clReleaseEvent(ev);
    return err == CL_SUCCESS ? GP_SUCCESS : gp__cl_fail(call, err);
}

static gp_status gp__cl_buffer_map(void *dev, void *stream, void *buf, size_t bytes, void **host)
{
    cl_int err;
    void *p = gp__cl.clEnqueueMapBuffer(stream, buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes ? bytes : 1, 0, NULL,
                                        NULL, &err);
    if (!p)
        return gp__cl_fail("clEnqueueMapBuffer", err);
    *host = p;
    return GP_SUCCESS;
}

static gp_status gp__cl_buffer_unmap(void *dev, void *stream, void *buf, void *host)
{
    cl_event ev;
    cl_int err = gp__cl.clEnqueueUnmapMemObject(stream, buf, host, 0, NULL, &ev);
    if (err != CL_SUCCESS)
        return gp__cl_fail("clEnqueueUnmapMemObject", err);
    return gp__cl_finish("clEnqueueUnmapMemObject", ev, 1);
}

static gp_status gp__cl_stream_create(void *dev, void **stream)
{
    gp__cl_dev *d = dev;
    cl_int err;
    cl_command_queue q = gp__cl.clCreateCommandQueue(d->ctx, d->id, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!q)
        return gp__cl_fail("clCreateCommandQueue", err);
    *stream = q;
    return GP_SUCCESS;
}

static void gp__cl_stream_destroy(void *dev, void *stream)
{
    gp__cl.clFinish(stream);
    gp__cl.clReleaseCommandQueue(stream);
}

static gp_status gp__cl_stream_synchronize(void *dev, void *stream)
{
    cl_int err = gp__cl.clFinish(stream);
    return err == CL_SUCCESS ? GP_SUCCESS : gp__cl_fail("clFinish", err);
}

static gp_status gp__cl_write(void *dev, void *stream, void *dst, size_t off, const void *src, size_t bytes,
                              int blocking)
{
    cl_int err =
        gp__cl.clEnqueueWriteBuffer(stream, dst, blocking ? CL_TRUE : CL_FALSE, off, bytes, src, 0, NULL, NULL);
    return err == CL_SUCCESS ? GP_SUCCESS : gp__cl_fail("clEnqueueWriteBuffer", err);
}

static gp_status gp__cl_read(void *dev, void *stream, void *src, size_t off, void *dst, size_t bytes, int blocking)
{
    cl_int err = gp__cl.clEnqueueReadBuffer(stream, src, blocking ? CL_TRUE : CL_FALSE, off, bytes, dst, 0, NULL, NULL);
    return err == CL_SUCCESS ? GP_SUCCESS : gp__cl_fail("clEnqueueReadBuffer", err);
}

static gp_status gp__cl_copy(void *dev, void *stream, void *dst, size_t dst_off, void *src, size_t src_off,
                             size_t bytes, int blocking)
{
    cl_event ev;
    gp_status st = gp__cl_external_hand(stream, dst, src, 1); /* imported memory: external.c */
    cl_int err = st != GP_SUCCESS ? CL_SUCCESS
                                  : gp__cl.clEnqueueCopyBuffer(stream, src, dst, src_off, dst_off, bytes, 0, NULL, &ev);
    if (err == CL_MEM_COPY_OVERLAP) {
        gp__cl_host->set_error("clEnqueueCopyBuffer failed: CL_MEM_COPY_OVERLAP (-8): the source and destination "
                               "ranges overlap in one buffer");
        return GP_ERROR_INVALID_ARGUMENT;
    }
    if (err != CL_SUCCESS)
        return gp__cl_fail("clEnqueueCopyBuffer", err);
    if (st == GP_SUCCESS && (st = gp__cl_external_hand(stream, dst, src, 0)) != GP_SUCCESS) gp__cl.clReleaseEvent(ev);
    return st != GP_SUCCESS ? st : gp__cl_finish("clEnqueueCopyBuffer", ev, blocking);
}

static gp_status gp__cl_fill(void *dev, void *stream, void *dst, size_t off, size_t bytes, const void *pattern,
                             size_t pattern_size, int blocking)
{
    cl_event ev;
    cl_int err = gp__cl.clEnqueueFillBuffer(stream, dst, pattern, pattern_size, off, bytes, 0, NULL, &ev);
    if (err != CL_SUCCESS)
        return gp__cl_fail("clEnqueueFillBuffer", err);
    return gp__cl_finish("clEnqueueFillBuffer", ev, blocking);
}

/* ---- events ---------------------------------------------------------------------------- */

static gp_status gp__cl_event_create(void *dev, void **event)
{
    gp__cl_event *e = calloc(1, sizeof *e);
    if (!e)
        return gp__cl_no_memory("an event");
    if (pthread_mutex_init(&e->lock, NULL) != 0) {
        free(e);
        gp__cl_host->set_error("pthread_mutex_init failed for an event");
        return GP_ERROR_BACKEND;
    }
    *event = e;
    return GP_SUCCESS;
}

static void gp__cl_event_destroy(void *dev, void *event)
{
    gp__cl_event *e = event;
    if (e->mark)
        gp__cl.clReleaseEvent(e->mark);
    pthread_mutex_destroy(&e->lock);
    free(e);
}

/* The current marker, retained so that a concurrent record cannot free it under the caller; NULL
 * before the first record, when (as gpuport.h says) the event counts as reached. */
static cl_event gp__cl_mark(gp__cl_event *e)
{
    pthread_mutex_lock(&e->lock);
    cl_event m = e->mark;
    if (m)
        gp__cl.clRetainEvent(m);
    pthread_mutex_unlock(&e->lock);
    return m;
}

static gp_status gp__cl_event_record(void *dev, void *event, void *stream)
{
    gp__cl_dev *d = dev;
    gp__cl_event *e = event;
    cl_event m;
    cl_int err;
    if (d->scratch) {
        static const cl_uint zero = 0;
        err = gp__cl.clEnqueueFillBuffer(stream, d->scratch, &zero, sizeof zero, 0, sizeof zero, 0, NULL, &m);
    } else {
        err = gp__cl.clEnqueueMarkerWithWaitList(stream, 0, NULL, &m);
    }
    if (err != CL_SUCCESS)
        return gp__cl_fail(d->scratch ? "clEnqueueFillBuffer" : "clEnqueueMarkerWithWaitList", err);
    /* Without a flush a marker may never be submitted, and a query would spin on it forever. */
    gp__cl.clFlush(stream);
    pthread_mutex_lock(&e->lock);
    cl_event old = e->mark;
    e->mark = m;
    pthread_mutex_unlock(&e->lock);
    if (old)
        gp__cl.clReleaseEvent(old);
    return GP_SUCCESS;
}

static gp_status gp__cl_stream_wait_event(void *dev, void *stream, void *event)
{
    cl_event m = gp__cl_mark(event);
    if (!m)
        return GP_SUCCESS;
    cl_int err = gp__cl.clEnqueueBarrierWithWaitList(stream, 1, &m, NULL);
    gp__cl.clReleaseEvent(m);
    return err == CL_SUCCESS ? GP_SUCCESS : gp__cl_fail("clEnqueueBarrierWithWaitList", err);
}

static gp_status gp__cl_event_synchronize(void *dev, void *event)
{
    cl_event m = gp__cl_mark(event);
    if (!m)
        return GP_SUCCESS;
    cl_int err = gp__cl.clWaitForEvents(1, &m);
    gp__cl.clReleaseEvent(m);
    return err == CL_SUCCESS ? GP_SUCCESS : gp__cl_fail("clWaitForEvents", err);
}

/* GP_SUCCESS when m has completed, GP_NOT_READY before, an error when its work failed. */
static gp_status gp__cl_mark_status(cl_event m)
{
    cl_int status = CL_QUEUED;
    cl_int err = gp__cl.clGetEventInfo(m, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    if (err != CL_SUCCESS)
        return gp__cl_fail("clGetEventInfo", err);
    if (status < 0)
        return gp__cl_fail("the work before the event", status);
    return status == CL_COMPLETE ? GP_SUCCESS : GP_NOT_READY;
}

static gp_status gp__cl_event_query(void *dev, void *event)
{
    cl_event m = gp__cl_mark(event);
    if (!m)
        return GP_SUCCESS;
    gp_status st = gp__cl_mark_status(m);
    gp__cl.clReleaseEvent(m);
    return st;
}

static gp_status gp__cl_event_elapsed_ms(void *dev, void *start, void *end, double *ms)
{
    cl_event m[2] = {gp__cl_mark(start), NULL};
    if (m[0])
        m[1] = gp__cl_mark(end);
    gp_status st = m[1] ? GP_SUCCESS : GP_ERROR_INVALID_ARGUMENT;
    if (!m[1])
        gp__cl_host->set_error("the %s event was never recorded", m[0] ? "end" : "start");
    cl_ulong t[2] = {0, 0};
    for (int i = 0; i < 2 && st == GP_SUCCESS; i++) {
        st = gp__cl_mark_status(m[i]);
        if (st == GP_NOT_READY)
            gp__cl_host->set_error("the %s event has not been reached yet", i ? "end" : "start");
        cl_int err = CL_SUCCESS;
        if (st == GP_SUCCESS)
            err = gp__cl.clGetEventProfilingInfo(m[i], CL_PROFILING_COMMAND_END, sizeof t[i], &t[i], NULL);
        if (err == CL_PROFILING_INFO_NOT_AVAILABLE) {
            gp__cl_host->set_error("the events were recorded on a command queue without CL_QUEUE_PROFILING_ENABLE "
                                   "(one of the caller's, wrapped): they have no time");
            st = GP_ERROR_UNSUPPORTED;
        } else if (err != CL_SUCCESS) {
            st = gp__cl_fail("clGetEventProfilingInfo", err);
        }
    }
    for (int i = 0; i < 2; i++)
        if (m[i])
            gp__cl.clReleaseEvent(m[i]);
    if (st == GP_SUCCESS)
        *ms = t[1] >= t[0] ? (double)(t[1] - t[0]) / 1e6 : -(double)(t[0] - t[1]) / 1e6;
    return st;
}

/* ---- interop ----------------------------------------------------------------------------- */

static gp_status gp__cl_native_device(void *dev, gp_native_device *out)
{
    gp__cl_dev *d = dev;
    out->platform = d->platform;
    out->device = d->id;
    out->context = d->ctx;
    return GP_SUCCESS;
}

static gp_status gp__cl_native_stream(void *dev, void *stream, gp_native_stream *out)
{
    out->stream = stream; /* the plugin's stream is the queue */
    return GP_SUCCESS;
}

static gp_status gp__cl_native_buffer(void *dev, void *buf, gp_native_buffer *out)
{
    void *host = NULL;
    cl_int err = gp__cl.clGetMemObjectInfo(buf, CL_MEM_HOST_PTR, sizeof host, &host, NULL);
    if (err != CL_SUCCESS)
        return gp__cl_fail("clGetMemObjectInfo(CL_MEM_HOST_PTR)", err);
    out->mem = buf;
    out->host = host; /* the registered memory of CL_MEM_USE_HOST_PTR, else NULL */
    return GP_SUCCESS;
}

static gp_status gp__cl_native_event(void *dev, void *event, gp_native_event *out)
{
    gp__cl_event *e = event;
    pthread_mutex_lock(&e->lock);
    out->event = e->mark;
    pthread_mutex_unlock(&e->lock);
    return GP_SUCCESS;
}

static gp_status gp__cl_stream_wrap(void *dev, const gp_native_stream *native, void **stream)
{
    gp__cl_dev *d = dev;
    cl_command_queue q = native->stream;
    cl_context ctx = NULL;
    cl_device_id id = NULL;
    cl_command_queue_properties props = 0;
    cl_int err = q ? gp__cl.clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL) : CL_INVALID_COMMAND_QUEUE;
    if (err == CL_SUCCESS) err = gp__cl.clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof id, &id, NULL);
    if (err == CL_SUCCESS) err = gp__cl.clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    char text[96];
    if (err != CL_SUCCESS) {
        gp__cl_host->set_error("the native stream is no OpenCL command queue (%s)", gp__cl_error_text(err, text, sizeof text));
        return GP_ERROR_INVALID_ARGUMENT;
    }
    if (ctx != d->ctx || id != d->id) {
        gp__cl_host->set_error("the command queue is of another %s than gpuport's for '%s'", ctx != d->ctx ? "cl_context" : "device",
                               d->name);
        return GP_ERROR_DEVICE_MISMATCH;
    }
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
        gp__cl_host->set_error("the command queue runs out of order; a gp_stream is in order");
        return GP_ERROR_INVALID_ARGUMENT;
    }
    *stream = q;
    return GP_SUCCESS;
}

static const gp__backend gp__cl_backend = {
    .abi = GP__PLUGIN_ABI,
    .name = "opencl",
    .prelude = gp__opencl_prelude,
    .init = gp__cl_init,
    .device_open = gp__cl_device_open,
    .device_close = gp__cl_device_close,
    .device_cache_id = gp__cl_device_cache_id,
    .buffer_create = gp__cl_buffer_create,
    .buffer_destroy = gp__cl_buffer_destroy,
    .buffer_map = gp__cl_buffer_map,
    .buffer_unmap = gp__cl_buffer_unmap,
    .stream_create = gp__cl_stream_create,
    .stream_destroy = gp__cl_stream_destroy,
    .stream_synchronize = gp__cl_stream_synchronize,
    .write = gp__cl_write,
    .read = gp__cl_read,
    .copy = gp__cl_copy,
    .fill = gp__cl_fill,
    .event_create = gp__cl_event_create,
    .event_destroy = gp__cl_event_destroy,
    .event_record = gp__cl_event_record,
    .stream_wait_event = gp__cl_stream_wait_event,
    .event_synchronize = gp__cl_event_synchronize,
    .event_query = gp__cl_event_query,
    .event_elapsed_ms = gp__cl_event_elapsed_ms,
    .program_build = gp__cl_program_build,
    .program_load = gp__cl_program_load,
    .program_destroy = gp__cl_program_destroy,
    .kernel_create = gp__cl_kernel_create,
    .kernel_destroy = gp__cl_kernel_destroy,
    .launch = gp__cl_launch,
    .blas_info = gp__cl_blas_info,
    .blas_gemm = gp__cl_blas_gemm,
    .native_device = gp__cl_native_device,
    .native_stream = gp__cl_native_stream,
    .native_buffer = gp__cl_native_buffer,
    .native_event = gp__cl_native_event,
    .buffer_wrap = gp__cl_buffer_wrap,
    .buffer_register = gp__cl_buffer_register,
    .stream_wrap = gp__cl_stream_wrap,
    .device_uuid = gp__cl_device_uuid,
    .buffer_import = gp__cl_buffer_import,
    .maps_device_buffers = 1,
};

GP_API const gp__backend *gp_plugin_entry(void);
GP_API const gp__backend *gp_plugin_entry(void)
{
    return &gp__cl_backend;
}
