/* Memory the OpenCL plugin did not allocate: cl_mem objects wrapped from the caller, the caller's
 * host memory registered, and device memory another API exported (cl_khr_external_memory with
 * opaque file descriptors: CUDA's, on the same GPU, for core's copies between the two). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#ifndef CL_DEVICE_UUID_KHR
#define CL_DEVICE_UUID_KHR 0x106A
#endif
#ifndef CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR
#define CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR 0x2060
#define CL_DEVICE_HANDLE_LIST_KHR 0x2051
#define CL_DEVICE_HANDLE_LIST_END_KHR 0
#endif

gp_status gp__cl_buffer_wrap(void *dev, const gp_native_buffer *native, int adopt, void **buf, size_t *bytes,
                             gp_memory *memory)
{
    gp__cl_dev *d = dev;
    cl_mem m = native->mem;
    cl_context ctx = NULL;
    cl_mem_object_type type = 0;
    cl_mem_flags flags = 0;
    size_t size = 0;
    cl_int err = m ? gp__cl.clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof ctx, &ctx, NULL) : CL_INVALID_MEM_OBJECT;
    if (err == CL_SUCCESS) err = gp__cl.clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof type, &type, NULL);
    if (err == CL_SUCCESS) err = gp__cl.clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof flags, &flags, NULL);
    if (err == CL_SUCCESS) err = gp__cl.clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL);
    char text[96];
    if (err != CL_SUCCESS || type != CL_MEM_OBJECT_BUFFER) {
        gp__cl_host->set_error("the native buffer's mem is no OpenCL buffer (%s)",
                               err != CL_SUCCESS ? gp__cl_error_text(err, text, sizeof text) : "an image or pipe");
        return GP_ERROR_INVALID_ARGUMENT;
    }
    if (ctx != d->ctx) {
        gp__cl_host->set_error("the cl_mem belongs to another cl_context than the one gpuport made for '%s'; create it "
                               "in that one (gp_device_get_native gives it)",
                               d->name);
        return GP_ERROR_DEVICE_MISMATCH;
    }
    if (native->bytes > size) {
        gp__cl_host->set_error("the native buffer claims %zu bytes, but the cl_mem has %zu", native->bytes, size);
        return GP_ERROR_INVALID_ARGUMENT;
    }
    if (!adopt && (err = gp__cl.clRetainMemObject(m)) != CL_SUCCESS) /* buffer_destroy releases ours */
        return gp__cl_fail("clRetainMemObject", err);
    *buf = m;
    *bytes = native->bytes ? native->bytes : size;
    *memory = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR) ? GP_MEMORY_PINNED : GP_MEMORY_DEVICE;
    return GP_SUCCESS;
}

gp_status gp__cl_buffer_register(void *dev, void *host, size_t bytes, void **buf)
{
    gp__cl_dev *d = dev;
    cl_int err;
    /* OpenCL refuses empty buffers: a 0-byte registration holds one byte of its own. */
    cl_mem m = bytes ? gp__cl.clCreateBuffer(d->ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host, &err)
                     : gp__cl.clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, 1, NULL, &err);
    if (!m)
        return gp__cl_fail("clCreateBuffer(CL_MEM_USE_HOST_PTR)", err);
    *buf = m;
    return GP_SUCCESS;
}

/* Whether the device lists the extension (a whole name of its space-separated list). */
static int has_extension(cl_device_id id, const char *name)
{
    char *ext = gp__cl_device_text(id, CL_DEVICE_EXTENSIONS);
    size_t n = strlen(name);
    int found = 0;
    for (const char *at = ext; at && !found && (at = strstr(at, name)) != NULL; at += n)
        found = (at == ext || at[-1] == ' ') && (at[n] == ' ' || at[n] == '\0');
    free(ext);
    return found;
}

int gp__cl_device_uuid(void *dev, unsigned char uuid[16])
{
    gp__cl_dev *d = dev;
    return has_extension(d->id, "cl_khr_device_uuid") &&
           gp__cl.clGetDeviceInfo(d->id, CL_DEVICE_UUID_KHR, 16, uuid, NULL) == CL_SUCCESS;
}

/* Imported buffers, with the extension's calls that hand them between the APIs: OpenCL commands
 * may use such memory only between an acquire and a release. At most one a pair of devices is
 * made (transfer.c), so a short table does. */
typedef cl_int hand_fn(cl_command_queue, cl_uint, const cl_mem *, cl_uint, const cl_event *, cl_event *);
static struct {
    cl_mem mem;
    hand_fn *acquire, *release;
} imported[16];
static int imported_count;
static pthread_mutex_t imported_lock = PTHREAD_MUTEX_INITIALIZER;

gp_status gp__cl_buffer_import(void *dev, int fd, size_t bytes, void **buf)
{
    gp__cl_dev *d = dev;
    void *acquire = NULL, *release = NULL;
    if (gp__cl_extension_address) {
        acquire = gp__cl_extension_address(d->platform, "clEnqueueAcquireExternalMemObjectsKHR");
        release = gp__cl_extension_address(d->platform, "clEnqueueReleaseExternalMemObjectsKHR");
    }
    if (!has_extension(d->id, "cl_khr_external_memory_opaque_fd") || !gp__cl_create_buffer_props || !acquire ||
        !release) {
        close(fd);
        gp__cl_host->set_error("'%s' imports no memory of other APIs (it lacks cl_khr_external_memory_opaque_fd, or "
                               "the ICD loader OpenCL 3.0's clCreateBufferWithProperties)", d->name);
        return GP_ERROR_UNSUPPORTED;
    }
    const cl_ulong props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_ulong)fd, CL_DEVICE_HANDLE_LIST_KHR,
                              (cl_ulong)(uintptr_t)d->id, CL_DEVICE_HANDLE_LIST_END_KHR, 0};
    cl_int err;
    cl_mem m = gp__cl_create_buffer_props(d->ctx, props, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (!m) {
        close(fd); /* a failed import leaves the descriptor open, and the hook's contract closes it */
        return gp__cl_fail("clCreateBufferWithProperties (an opaque file descriptor)", err);
    }
    pthread_mutex_lock(&imported_lock);
    int i = 0;
    while (i < 16 && imported[i].mem) i++;
    if (i < 16) {
        imported[i].mem = m;
        memcpy(&imported[i].acquire, &acquire, sizeof acquire);
        memcpy(&imported[i].release, &release, sizeof release);
        __atomic_add_fetch(&imported_count, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&imported_lock);
    if (i == 16) {
        gp__cl.clReleaseMemObject(m); /* closes fd */
        gp__cl_host->set_error("the OpenCL plugin holds 16 imported buffers, its most");
        return GP_ERROR_UNSUPPORTED;
    }
    *buf = m;
    return GP_SUCCESS;
}

gp_status gp__cl_external_hand(cl_command_queue q, cl_mem a, cl_mem b, int acquire)
{
    if (!__atomic_load_n(&imported_count, __ATOMIC_ACQUIRE)) return GP_SUCCESS;
    cl_int err = CL_SUCCESS;
    pthread_mutex_lock(&imported_lock);
    for (int i = 0; i < 16 && err == CL_SUCCESS; i++)
        if (imported[i].mem && (imported[i].mem == a || imported[i].mem == b))
            err = (acquire ? imported[i].acquire : imported[i].release)(q, 1, &imported[i].mem, 0, NULL, NULL);
    pthread_mutex_unlock(&imported_lock);
    return err == CL_SUCCESS ? GP_SUCCESS
                             : gp__cl_fail(acquire ? "clEnqueueAcquireExternalMemObjectsKHR"
                                                   : "clEnqueueReleaseExternalMemObjectsKHR", err);
}

void gp__cl_external_forget(cl_mem m)
{
    if (!__atomic_load_n(&imported_count, __ATOMIC_ACQUIRE)) return;
    pthread_mutex_lock(&imported_lock);
    for (int i = 0; i < 16; i++)
        if (imported[i].mem == m) {
            imported[i].mem = NULL;
            __atomic_sub_fetch(&imported_count, 1, __ATOMIC_RELEASE);
        }
    pthread_mutex_unlock(&imported_lock);
}
