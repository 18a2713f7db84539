/* The ICD loader, opened by dlopen, and what every file of the plugin uses: OpenCL error names
 * and messages, string queries. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

gp__cl_api gp__cl;
const gp__host *gp__cl_host;
gp__cl_create_buffer_props_fn *gp__cl_create_buffer_props;
gp__cl_extension_fn *gp__cl_extension_address;

int gp__cl_load(const gp__host *host, char *reason, size_t reason_len)
{
    static const char *const names[] = {"libOpenCL.so.1", "libOpenCL.so"};
    char first_error[256] = "";
    const char *opened = names[0];
    void *lib = dlopen(names[0], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        /* Report the versioned name's failure: the unversioned one exists only with -dev packages. */
        const char *e = dlerror();
        snprintf(first_error, sizeof first_error, "%s", e ? e : "no dlerror text");
        opened = names[1];
        lib = dlopen(names[1], RTLD_NOW | RTLD_LOCAL);
    }
    if (!lib) {
        snprintf(reason, reason_len,
                 "%s not found (%s); install ocl-icd-libopencl1 and an OpenCL driver such as pocl-opencl-icd",
                 names[0], first_error);
        return 0;
    }
    host->debug("load", "opencl: opened the ICD loader %s", opened);
    void *sym;

    /* memcpy, not a cast: ISO C has no conversion from object to function pointers. */
#define GP__CL_RESOLVE(fn)                                                                                \
    sym = dlsym(lib, #fn);                                                                                \
    memcpy(&gp__cl.fn, &sym, sizeof sym);                                                                 \
    if (!sym) {                                                                                           \
        snprintf(reason, reason_len, "%s has no %s: an OpenCL 1.2 ICD loader is needed", opened, #fn);   \
        dlclose(lib);                                                                                     \
        return 0;                                                                                         \
    }
    GP__CL_FUNCS(GP__CL_RESOLVE)
#undef GP__CL_RESOLVE
    sym = dlsym(lib, "clCreateBufferWithProperties");
    memcpy(&gp__cl_create_buffer_props, &sym, sizeof sym);
    sym = dlsym(lib, "clGetExtensionFunctionAddressForPlatform");
    memcpy(&gp__cl_extension_address, &sym, sizeof sym);
    /* The loader stays open for the life of the process: drivers such as pocl keep threads that
     * must not see their code unmapped at exit. */
    return 1;
}

#define GP__CL_ERRORS(X)                                                                                  \
    X(CL_DEVICE_NOT_FOUND) X(CL_DEVICE_NOT_AVAILABLE) X(CL_COMPILER_NOT_AVAILABLE)                      \
    X(CL_MEM_OBJECT_ALLOCATION_FAILURE) X(CL_OUT_OF_RESOURCES) X(CL_OUT_OF_HOST_MEMORY)                 \
    X(CL_PROFILING_INFO_NOT_AVAILABLE) X(CL_MEM_COPY_OVERLAP) X(CL_BUILD_PROGRAM_FAILURE)               \
    X(CL_MAP_FAILURE) X(CL_MISALIGNED_SUB_BUFFER_OFFSET) X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) \
    X(CL_COMPILE_PROGRAM_FAILURE) X(CL_LINK_PROGRAM_FAILURE) X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)        \
    X(CL_INVALID_VALUE) X(CL_INVALID_DEVICE_TYPE) X(CL_INVALID_PLATFORM) X(CL_INVALID_DEVICE)           \
    X(CL_INVALID_CONTEXT) X(CL_INVALID_QUEUE_PROPERTIES) X(CL_INVALID_COMMAND_QUEUE)                    \
    X(CL_INVALID_HOST_PTR) X(CL_INVALID_MEM_OBJECT) X(CL_INVALID_BINARY) X(CL_INVALID_BUILD_OPTIONS)    \
    X(CL_INVALID_PROGRAM) X(CL_INVALID_PROGRAM_EXECUTABLE) X(CL_INVALID_KERNEL_NAME)                    \
    X(CL_INVALID_KERNEL_DEFINITION) X(CL_INVALID_KERNEL) X(CL_INVALID_ARG_INDEX) X(CL_INVALID_ARG_VALUE) \
    X(CL_INVALID_ARG_SIZE) X(CL_INVALID_KERNEL_ARGS) X(CL_INVALID_WORK_DIMENSION)                       \
    X(CL_INVALID_WORK_GROUP_SIZE) X(CL_INVALID_WORK_ITEM_SIZE) X(CL_INVALID_GLOBAL_OFFSET)              \
    X(CL_INVALID_EVENT_WAIT_LIST) X(CL_INVALID_EVENT) X(CL_INVALID_OPERATION)                           \
    X(CL_INVALID_BUFFER_SIZE) X(CL_INVALID_GLOBAL_WORK_SIZE) X(CL_INVALID_PROPERTY)                     \
    X(CL_PLATFORM_NOT_FOUND_KHR)

const char *gp__cl_error_text(cl_int err, char *buf, size_t len)
{
    static const struct {
        cl_int code;
        const char *name;
    } table[] = {
#define GP__CL_ERROR_ROW(code) {code, #code},
        GP__CL_ERRORS(GP__CL_ERROR_ROW)
#undef GP__CL_ERROR_ROW
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (table[i].code == err) {
            snprintf(buf, len, "%s (%d)", table[i].name, (int)err);
            return buf;
        }
    }
    if (err == -9999) /* not in any header: NVIDIA's code for a kernel's out-of-bounds access */
        snprintf(buf, len, "CL error -9999 (NVIDIA: a kernel accessed memory outside its buffers)");
    else
        snprintf(buf, len, "CL error %d", (int)err);
    return buf;
}

gp_status gp__cl_fail(const char *call, cl_int err)
{
    char text[96];
    gp__cl_host->set_error("%s failed: %s", call, gp__cl_error_text(err, text, sizeof text));
    if (err == CL_OUT_OF_HOST_MEMORY)
        return GP_ERROR_OUT_OF_HOST_MEMORY;
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE)
        return GP_ERROR_OUT_OF_DEVICE_MEMORY;
    return GP_ERROR_BACKEND;
}

gp_status gp__cl_no_memory(const char *what)
{
    gp__cl_host->set_error("out of host memory for %s", what);
    return GP_ERROR_OUT_OF_HOST_MEMORY;
}

/* A device's string query as malloc'ed text (NULL on failure): its length has no bound. */
char *gp__cl_device_text(cl_device_id d, cl_device_info what)
{
    size_t n = 0;
    if (gp__cl.clGetDeviceInfo(d, what, 0, NULL, &n) != CL_SUCCESS)
        return NULL;
    char *s = malloc(n + 1);
    if (s && gp__cl.clGetDeviceInfo(d, what, n, s, NULL) != CL_SUCCESS) {
        free(s);
        return NULL;
    }
    if (s)
        s[n] = '\0';
    return s;
}
