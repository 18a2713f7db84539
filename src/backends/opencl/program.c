/* Programs (built from source, kept as binaries, loaded back), kernels and launches. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct gp__cl_kernel {
    cl_kernel k;
    pthread_mutex_t lock; /* clSetKernelArg..clEnqueueNDRangeKernel must not interleave */
    cl_uint nargs;
    cl_kernel_arg_address_qualifier *quals; /* per parameter; NULL when the driver cannot say */
    size_t (*shapes)[3]; /* on pocl, the work-group shapes launched so far (see first_of_shape) */
    size_t nshapes;
    char name[];
} gp__cl_kernel;

/* "build failed on DEVICE:\n" + the driver's log, malloc'ed; NULL when out of memory. */
static char *gp__cl_build_log(gp__cl_dev *d, cl_program p, const char *head)
{
    size_t n = 0;
    gp__cl.clGetProgramBuildInfo(p, d->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
    size_t at = strlen(head) + strlen(d->name) + 3;
    char *text = malloc(at + n + 1);
    if (!text)
        return NULL;
    snprintf(text, at + 1, "%s %s:\n", head, d->name);
    at = strlen(text);
    if (n && gp__cl.clGetProgramBuildInfo(p, d->id, CL_PROGRAM_BUILD_LOG, n, text + at, NULL) == CL_SUCCESS)
        text[at + n] = '\0';
    return text;
}

/* Program binaries travel inside a header holding their size and checksum: drivers parse them
 * without bounds checks (pocl 3.1 reads past the end of a truncated binary), so a damaged cache
 * entry must be caught before it reaches clCreateProgramWithBinary. */
#define GP__CL_BINARY_MAGIC "gpclbin1"
enum { GP__CL_HEADER = 24 }; /* magic[8], payload bytes u64, FNV-1a 64 of the payload */

static uint64_t gp__cl_fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

static gp_status gp__cl_get_binary(cl_program p, void **binary, size_t *binary_bytes)
{
    size_t n = 0;
    cl_int err = gp__cl.clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, NULL);
    if (err != CL_SUCCESS)
        return gp__cl_fail("clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)", err);
    if (n == 0) {
        gp__cl_host->set_error("the OpenCL driver gave an empty program binary");
        return GP_ERROR_BACKEND;
    }
    unsigned char *out = malloc(GP__CL_HEADER + n);
    if (!out)
        return gp__cl_no_memory("a program binary");
    unsigned char *payload = out + GP__CL_HEADER;
    err = gp__cl.clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof payload, &payload, NULL);
    if (err != CL_SUCCESS) {
        free(out);
        return gp__cl_fail("clGetProgramInfo(CL_PROGRAM_BINARIES)", err);
    }
    uint64_t size = n, hash = gp__cl_fnv1a(payload, n);
    memcpy(out, GP__CL_BINARY_MAGIC, 8);
    memcpy(out + 8, &size, 8);
    memcpy(out + 16, &hash, 8);
    *binary = out;
    *binary_bytes = GP__CL_HEADER + n;
    return GP_SUCCESS;
}

/* The driver's binary inside a program_build result, or NULL with the detail set. */
static const unsigned char *gp__cl_unwrap(gp__cl_dev *d, const void *binary, size_t *bytes)
{
    const unsigned char *b = binary;
    uint64_t size = 0, hash = 0;
    if (*bytes >= GP__CL_HEADER) {
        memcpy(&size, b + 8, 8);
        memcpy(&hash, b + 16, 8);
    }
    if (*bytes < GP__CL_HEADER || memcmp(b, GP__CL_BINARY_MAGIC, 8) != 0 || size != *bytes - GP__CL_HEADER ||
        gp__cl_fnv1a(b + GP__CL_HEADER, *bytes - GP__CL_HEADER) != hash) {
        gp__cl_host->set_error("a program binary of %zu bytes for '%s' is damaged or not from this plugin (bad size or "
                               "checksum)",
                               *bytes, d->name);
        return NULL;
    }
    *bytes -= GP__CL_HEADER;
    return b + GP__CL_HEADER;
}

gp_status gp__cl_program_build(void *dev, const char *source, void **binary, size_t *binary_bytes)
{
    gp__cl_dev *d = dev;
    const char *opts = d->build_options;
    cl_int err;
    cl_program p = gp__cl.clCreateProgramWithSource(d->ctx, 1, &source, NULL, &err);
    if (!p)
        return gp__cl_fail("clCreateProgramWithSource", err);
    double t0 = gp__cl_now_ms();
    err = gp__cl.clBuildProgram(p, 1, &d->id, opts, NULL, NULL);
    gp__cl_host->debug("compile", "opencl: built for '%s' with '%s' in %.1f ms: %s", d->name, opts,
                       gp__cl_now_ms() - t0, err == CL_SUCCESS ? "ok" : "failed");
    gp_status st;
    if (err == CL_BUILD_PROGRAM_FAILURE) {
        char *log = gp__cl_build_log(d, p, "build failed on");
        if (log)
            gp__cl_host->set_error_text(log);
        else
            gp__cl_host->set_error("build failed on %s (no memory for the build log)", d->name);
        free(log);
        st = GP_ERROR_BUILD_FAILED;
    } else if (err == CL_INVALID_BUILD_OPTIONS) {
        gp__cl_host->set_error("clBuildProgram failed: CL_INVALID_BUILD_OPTIONS (-43): the driver refused '%s'", opts);
        st = GP_ERROR_INVALID_ARGUMENT;
    } else if (err != CL_SUCCESS) {
        st = gp__cl_fail("clBuildProgram", err);
    } else {
        st = gp__cl_get_binary(p, binary, binary_bytes);
        if (gp__cl_host->debug_on("compile")) {
            /* Warnings are worth seeing; drivers give a blank or a one-line log for a clean build. */
            char *log = gp__cl_build_log(d, p, "opencl: build log on");
            const char *body = log ? strchr(log, '\n') + 1 : "";
            if (body[strspn(body, " \t\r\n")] != '\0')
                gp__cl_host->debug("compile", "%s", log);
            free(log);
        }
    }
    gp__cl.clReleaseProgram(p);
    return st;
}

gp_status gp__cl_program_load(void *dev, const void *binary, size_t binary_bytes, void **program)
{
    gp__cl_dev *d = dev;
    const unsigned char *bin = gp__cl_unwrap(d, binary, &binary_bytes);
    if (!bin)
        return GP_ERROR_BUILD_FAILED;
    cl_int status = CL_SUCCESS, err;
    char text[96];
    cl_program p = gp__cl.clCreateProgramWithBinary(d->ctx, 1, &d->id, &binary_bytes, &bin, &status, &err);
    if (!p) {
        gp__cl_host->set_error("'%s' refused a cached program binary of %zu bytes: clCreateProgramWithBinary: %s",
                               d->name, binary_bytes, gp__cl_error_text(err, text, sizeof text));
        return err == CL_OUT_OF_HOST_MEMORY ? GP_ERROR_OUT_OF_HOST_MEMORY : GP_ERROR_BUILD_FAILED;
    }
    double t0 = gp__cl_now_ms();
    err = gp__cl.clBuildProgram(p, 1, &d->id, d->build_options, NULL, NULL);
    gp__cl_host->debug("compile", "opencl: loaded a binary of %zu bytes for '%s' in %.1f ms: %s", binary_bytes, d->name,
                       gp__cl_now_ms() - t0, err == CL_SUCCESS ? "ok" : "failed");
    if (err != CL_SUCCESS) {
        gp__cl.clReleaseProgram(p);
        gp__cl_host->set_error("'%s' refused a cached program binary of %zu bytes: clBuildProgram: %s", d->name,
                               binary_bytes, gp__cl_error_text(err, text, sizeof text));
        return err == CL_OUT_OF_HOST_MEMORY ? GP_ERROR_OUT_OF_HOST_MEMORY : GP_ERROR_BUILD_FAILED;
    }
    *program = p;
    return GP_SUCCESS;
}

void gp__cl_program_destroy(void *dev, void *program)
{
    gp__cl.clReleaseProgram(program);
}

void gp__cl_kernel_destroy(void *dev, void *kernel)
{
    gp__cl_kernel *k = kernel;
    gp__cl.clReleaseKernel(k->k);
    pthread_mutex_destroy(&k->lock);
    free(k->quals);
    free(k->shapes);
    free(k);
}

/* The address space of every parameter, or NULL where the driver keeps no argument info. */
static cl_kernel_arg_address_qualifier *gp__cl_arg_quals(cl_kernel k, cl_uint n)
{
    cl_kernel_arg_address_qualifier *q = malloc((n ? n : 1) * sizeof *q);
    for (cl_uint i = 0; q && i < n; i++) {
        if (gp__cl.clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q[i], &q[i], NULL) != CL_SUCCESS) {
            free(q);
            return NULL;
        }
    }
    return q;
}

gp_status gp__cl_kernel_create(void *dev, void *program, const char *name, void **kernel, gp__kernel_props *props)
{
    gp__cl_dev *d = dev;
    size_t len = strlen(name);
    gp__cl_kernel *k = calloc(1, sizeof *k + len + 1);
    if (!k)
        return gp__cl_no_memory("a kernel");
    memcpy(k->name, name, len + 1);
    cl_int err;
    k->k = gp__cl.clCreateKernel(program, name, &err);
    if (!k->k) {
        free(k);
        if (err == CL_INVALID_KERNEL_NAME) {
            gp__cl_host->set_error("no kernel '%s' in the program", name);
            return GP_ERROR_NOT_FOUND;
        }
        return gp__cl_fail("clCreateKernel", err);
    }
    size_t group = 0;
    cl_ulong local = 0;
    err = gp__cl.clGetKernelInfo(k->k, CL_KERNEL_NUM_ARGS, sizeof k->nargs, &k->nargs, NULL);
    if (err == CL_SUCCESS)
        err = gp__cl.clGetKernelWorkGroupInfo(k->k, d->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof group, &group, NULL);
    /* Before any argument is set, this is what the kernel declares itself. */
    if (err == CL_SUCCESS)
        err = gp__cl.clGetKernelWorkGroupInfo(k->k, d->id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
    if (err != CL_SUCCESS || pthread_mutex_init(&k->lock, NULL) != 0) {
        gp__cl.clReleaseKernel(k->k);
        free(k);
        return err != CL_SUCCESS ? gp__cl_fail("clGetKernelInfo", err) : gp__cl_no_memory("a kernel lock");
    }
    k->quals = gp__cl_arg_quals(k->k, k->nargs);
    if (!k->quals)
        gp__cl_host->debug("launch", "opencl: no argument info for '%s'; argument kinds go unchecked", name);
    props->nargs = k->nargs;
    props->max_group_size = d->kernel_group_size ? d->kernel_group_size : group;
    props->local_bytes = (size_t)local;
    *kernel = k;
    return GP_SUCCESS;
}

static const char *gp__cl_qual_name(cl_kernel_arg_address_qualifier q)
{
    switch (q) {
    case CL_KERNEL_ARG_ADDRESS_GLOBAL: return "a __global pointer";
    case CL_KERNEL_ARG_ADDRESS_CONSTANT: return "a __constant pointer";
    case CL_KERNEL_ARG_ADDRESS_LOCAL: return "a __local pointer (GP_LOCAL_ARG)";
    default: return "a value";
    }
}

static gp_status gp__cl_set_arg(gp__cl_kernel *k, size_t i, const gp_arg *a)
{
    static const char *const kinds[] = {"?", "a buffer", "a value", "local memory"};
    cl_kernel_arg_address_qualifier q = k->quals ? k->quals[i] : 0;
    int fits = 1;
    if (k->quals && a->kind == GP_ARG_BUFFER)
        fits = q == CL_KERNEL_ARG_ADDRESS_GLOBAL || q == CL_KERNEL_ARG_ADDRESS_CONSTANT;
    else if (k->quals && a->kind == GP_ARG_LOCAL)
        fits = q == CL_KERNEL_ARG_ADDRESS_LOCAL;
    else if (k->quals && a->kind == GP_ARG_VALUE)
        fits = q == CL_KERNEL_ARG_ADDRESS_PRIVATE;
    const char *kind = a->kind >= GP_ARG_BUFFER && a->kind <= GP_ARG_LOCAL ? kinds[a->kind] : kinds[0];
    if (!fits) {
        gp__cl_host->set_error("kernel '%s' argument %zu is %s, but the parameter is %s", k->name, i, kind,
                               gp__cl_qual_name(q));
        return GP_ERROR_INVALID_KERNEL_ARGS;
    }

    cl_int err;
    if (a->kind == GP_ARG_BUFFER) {
        cl_mem m = (cl_mem)(void *)a->buffer;
        err = gp__cl.clSetKernelArg(k->k, (cl_uint)i, sizeof m, &m);
    } else if (a->kind == GP_ARG_VALUE) {
        err = gp__cl.clSetKernelArg(k->k, (cl_uint)i, a->size, a->value);
    } else if (a->kind == GP_ARG_LOCAL && a->size == 0) {
        /* NVIDIA takes 0 bytes and runs the kernel into a fault that kills the context. */
        gp__cl_host->set_error("kernel '%s' argument %zu: local memory of 0 bytes", k->name, i);
        return GP_ERROR_INVALID_KERNEL_ARGS;
    } else if (a->kind == GP_ARG_LOCAL) {
        err = gp__cl.clSetKernelArg(k->k, (cl_uint)i, a->size, NULL);
    } else {
        gp__cl_host->set_error("kernel '%s' argument %zu has an unknown kind %d", k->name, i, (int)a->kind);
        return GP_ERROR_INVALID_KERNEL_ARGS;
    }
    if (err == CL_SUCCESS)
        return GP_SUCCESS;
    char text[96];
    gp__cl_error_text(err, text, sizeof text);
    if (err == CL_INVALID_ARG_SIZE && a->kind == GP_ARG_VALUE)
        gp__cl_host->set_error("kernel '%s' argument %zu: %zu bytes given, the kernel's parameter is a different size "
                               "(clSetKernelArg: %s)",
                               k->name, i, a->size, text);
    else if (err == CL_INVALID_ARG_SIZE && a->kind == GP_ARG_LOCAL)
        gp__cl_host->set_error("kernel '%s' argument %zu: %zu bytes of local memory refused (clSetKernelArg: %s)",
                               k->name, i, a->size, text);
    else if (err == CL_INVALID_ARG_SIZE || err == CL_INVALID_ARG_VALUE || err == CL_INVALID_MEM_OBJECT ||
             err == CL_INVALID_SAMPLER)
        gp__cl_host->set_error("kernel '%s' argument %zu: %s does not fit the parameter (clSetKernelArg: %s)", k->name,
                               i, kind, text);
    else
        return gp__cl_fail("clSetKernelArg", err);
    return GP_ERROR_INVALID_KERNEL_ARGS;
}

static gp_status gp__cl_launch_failed(gp__cl_kernel *k, cl_int err, unsigned dims, const size_t *groups,
                                      const size_t *local)
{
    char text[96];
    gp__cl_host->set_error("clEnqueueNDRangeKernel failed for '%s' (%u-D, groups %zux%zux%zu of %zux%zux%zu): %s",
                           k->name, dims, groups[0], groups[1], groups[2], local[0], local[1], local[2],
                           gp__cl_error_text(err, text, sizeof text));
    switch (err) {
    case CL_INVALID_WORK_GROUP_SIZE:
    case CL_INVALID_WORK_ITEM_SIZE:
    case CL_INVALID_GLOBAL_WORK_SIZE:
    case CL_INVALID_WORK_DIMENSION:
    case CL_OUT_OF_RESOURCES: /* too much local memory or too many registers for the group */
        return GP_ERROR_INVALID_LAUNCH;
    case CL_INVALID_KERNEL_ARGS: return GP_ERROR_INVALID_KERNEL_ARGS;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return GP_ERROR_OUT_OF_DEVICE_MEMORY;
    case CL_OUT_OF_HOST_MEMORY: return GP_ERROR_OUT_OF_HOST_MEMORY;
    default: return GP_ERROR_BACKEND;
    }
}

/* pocl compiles a kernel for each work-group shape at its first launch, on its own thread. A
 * program that ends meanwhile has LLVM's state torn down under that compile by exit handlers
 * registered as it ran (after gpuport's, which finishes every queue: registry.c), and crashes.
 * So the first launch of each shape waits for its kernel: the compile costs far more than the
 * wait. 1 when local is new to k (and now recorded); called under k->lock. */
static int first_of_shape(gp__cl_kernel *k, const size_t local[3])
{
    for (size_t i = 0; i < k->nshapes; i++)
        if (memcmp(k->shapes[i], local, sizeof k->shapes[i]) == 0) return 0;
    size_t (*grown)[3] = realloc(k->shapes, (k->nshapes + 1) * sizeof *grown);
    if (grown) {
        k->shapes = grown;
        memcpy(k->shapes[k->nshapes++], local, sizeof *grown);
    }
    return 1; /* with no memory to record it, every launch of the shape waits */
}

gp_status gp__cl_launch(void *dev, void *stream, void *kernel, unsigned dims, const size_t groups[3],
                        const size_t local[3], size_t nargs, const gp_arg *args)
{
    gp__cl_kernel *k = kernel;
    if (nargs != k->nargs) { /* core checks this; the per-parameter table below relies on it */
        gp__cl_host->set_error("kernel '%s' takes %u arguments, %zu given", k->name, (unsigned)k->nargs, nargs);
        return GP_ERROR_INVALID_KERNEL_ARGS;
    }
    size_t global[3];
    for (unsigned i = 0; i < 3; i++)
        global[i] = groups[i] * local[i];

    gp__cl_dev *d = dev;
    gp_status st = GP_SUCCESS;
    pthread_mutex_lock(&k->lock);
    for (size_t i = 0; i < nargs && st == GP_SUCCESS; i++)
        st = gp__cl_set_arg(k, i, &args[i]);
    cl_int err = CL_SUCCESS;
    cl_event compiled = NULL; /* the first launch of its shape, waited for below */
    if (st == GP_SUCCESS && d->serialize_kernels) { /* see gp__cl_dev */
        pthread_mutex_lock(&d->kernel_lock);
        cl_event done = NULL;
        err = gp__cl.clEnqueueNDRangeKernel(stream, k->k, dims, NULL, global, local, d->last_kernel ? 1 : 0,
                                            d->last_kernel ? &d->last_kernel : NULL, &done);
        if (err == CL_SUCCESS) {
            if (d->last_kernel)
                gp__cl.clReleaseEvent(d->last_kernel);
            d->last_kernel = done;
            if (first_of_shape(k, local) && gp__cl.clRetainEvent(done) == CL_SUCCESS)
                compiled = done;
        }
        pthread_mutex_unlock(&d->kernel_lock);
    } else if (st == GP_SUCCESS) {
        err = gp__cl.clEnqueueNDRangeKernel(stream, k->k, dims, NULL, global, local, 0, NULL, NULL);
    }
    pthread_mutex_unlock(&k->lock);
    if (err != CL_SUCCESS)
        st = gp__cl_launch_failed(k, err, dims, groups, local);
    if (compiled) {
        /* the stream is in order, so this waits for what was queued before the launch too */
        cl_int werr = gp__cl.clWaitForEvents(1, &compiled);
        gp__cl.clReleaseEvent(compiled);
        if (werr != CL_SUCCESS) st = gp__cl_fail("clWaitForEvents (a kernel's first launch)", werr);
    }
    return st;
}
