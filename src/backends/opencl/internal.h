/* What the OpenCL plugin's files share: the OpenCL 1.2 entry points, resolved from the ICD loader
 * at run time so the plugin loads (and can say why OpenCL is unusable) on machines without an
 * OpenCL driver; the device; the error helpers. */
#ifndef GPUPORT_OPENCL_INTERNAL_H
#define GPUPORT_OPENCL_INTERNAL_H

#include <pthread.h>
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "backend.h"

/* Older headers lack the vendor queries; the values are fixed by the extensions. */
#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif
#ifndef CL_DEVICE_WARP_SIZE_NV
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#define CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#define CL_DEVICE_WARP_SIZE_NV 0x4003
#endif
#ifndef CL_DEVICE_WAVEFRONT_WIDTH_AMD
#define CL_DEVICE_WAVEFRONT_WIDTH_AMD 0x4043
#endif

#define GP__CL_FUNCS(X)                                                                                  \
    X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo)                       \
    X(clCreateContext) X(clReleaseContext) X(clCreateCommandQueue) X(clReleaseCommandQueue)             \
    X(clFlush) X(clFinish) X(clCreateBuffer) X(clReleaseMemObject)                                      \
    X(clEnqueueWriteBuffer) X(clEnqueueReadBuffer) X(clEnqueueCopyBuffer) X(clEnqueueFillBuffer)        \
    X(clEnqueueMapBuffer) X(clEnqueueUnmapMemObject) X(clEnqueueMarkerWithWaitList)                     \
    X(clEnqueueBarrierWithWaitList) X(clWaitForEvents) X(clGetEventInfo) X(clGetEventProfilingInfo)     \
    X(clRetainEvent) X(clReleaseEvent) X(clCreateProgramWithSource) X(clCreateProgramWithBinary)        \
    X(clBuildProgram) X(clGetProgramInfo) X(clGetProgramBuildInfo) X(clReleaseProgram)                  \
    X(clCreateKernel) X(clReleaseKernel) X(clGetKernelInfo) X(clGetKernelWorkGroupInfo)                 \
    X(clGetKernelArgInfo) X(clSetKernelArg) X(clEnqueueNDRangeKernel)                                  \
    X(clGetMemObjectInfo) X(clRetainMemObject) X(clGetCommandQueueInfo)

typedef struct gp__cl_api {
#define GP__CL_MEMBER(fn) __typeof__(&fn) fn;
    GP__CL_FUNCS(GP__CL_MEMBER)
#undef GP__CL_MEMBER
} gp__cl_api;

extern gp__cl_api gp__cl;

/* OpenCL 3.0's clCreateBufferWithProperties and OpenCL 1.2's way to extensions' entry points,
 * where the ICD loader has them (NULL otherwise): external.c imports memory with them. */
typedef cl_mem gp__cl_create_buffer_props_fn(cl_context, const cl_ulong *, cl_mem_flags, size_t, void *, cl_int *);
typedef void *gp__cl_extension_fn(cl_platform_id, const char *);
extern gp__cl_create_buffer_props_fn *gp__cl_create_buffer_props;
extern gp__cl_extension_fn *gp__cl_extension_address;

/* Opens the ICD loader and fills gp__cl; 0 with the reason written when that is impossible. */
int gp__cl_load(const gp__host *host, char *reason, size_t reason_len);

/* "CL_INVALID_VALUE (-30)", or "CL error -N" for codes the table does not know. */
const char *gp__cl_error_text(cl_int err, char *buf, size_t len);

typedef struct gp__cl_dev {
    cl_platform_id platform;
    cl_device_id id;
    cl_context ctx;
    cl_mem scratch; /* timing target for event_record where markers carry no profiling times */
    char name[256];
    char cache_id[1024];
    /* clBuildProgram's options: the plugin's, and on NVIDIA -DGP_NV_SM=<compute capability, as
     * 90>, which the prelude turns into inline PTX of that architecture (kernels/prelude_opencl.h). */
    char build_options[96];
    /* pocl (4.0 to at least 5.0) matches the wrong entry of its kernel cache when one kernel
     * runs with two grid sizes at once, and aborts. On pocl each kernel command therefore waits
     * for the device's previous one: the CPU runs one kernel at a time there anyway. */
    int serialize_kernels;
    int host_memory; /* a CPU device whose buffers are the host's memory: its vendor BLAS is OpenBLAS */
    /* NVIDIA's driver (580 on an H200) answers CL_KERNEL_WORK_GROUP_SIZE with 256 for every
     * kernel, one declaring reqd_work_group_size(1024) too, and runs groups of 1024 of them: there
     * the device's limit stands for the kernel's, and the driver refuses at launch (with
     * CL_OUT_OF_RESOURCES) a group that a kernel's registers do not allow. 0 elsewhere. */
    size_t kernel_group_size;
    pthread_mutex_t kernel_lock;
    cl_event last_kernel;
} gp__cl_dev;

extern const gp__host *gp__cl_host; /* given to init */

/* Sets the detail "call failed: CL_NAME (code)" and returns the usual status for err. */
gp_status gp__cl_fail(const char *call, cl_int err);
gp_status gp__cl_no_memory(const char *what);
double gp__cl_now_ms(void);

/* A device's string query as malloc'ed text, NULL on failure. */
char *gp__cl_device_text(cl_device_id d, cl_device_info what);

/* The hooks of external.c; the hand-over of imported memory around a copy: before it (acquire 1)
 * and after it (0), for whichever of a and b is imported; and its end, as a buffer goes. */
gp_status gp__cl_buffer_wrap(void *dev, const gp_native_buffer *native, int adopt, void **buf, size_t *bytes,
                             gp_memory *memory);
gp_status gp__cl_buffer_register(void *dev, void *host, size_t bytes, void **buf);
int gp__cl_device_uuid(void *dev, unsigned char uuid[16]);
gp_status gp__cl_buffer_import(void *dev, int fd, size_t bytes, void **buf);
gp_status gp__cl_external_hand(cl_command_queue q, cl_mem a, cl_mem b, int acquire);
void gp__cl_external_forget(cl_mem m);

/* The hooks of program.c. */
gp_status gp__cl_program_build(void *dev, const char *source, void **binary, size_t *binary_bytes);
gp_status gp__cl_program_load(void *dev, const void *binary, size_t binary_bytes, void **program);
void gp__cl_program_destroy(void *dev, void *program);
gp_status gp__cl_kernel_create(void *dev, void *program, const char *name, void **kernel, gp__kernel_props *props);
void gp__cl_kernel_destroy(void *dev, void *kernel);
gp_status gp__cl_launch(void *dev, void *stream, void *kernel, unsigned dims, const size_t groups[3],
                        const size_t local[3], size_t nargs, const gp_arg *args);

/* The hooks of blas.c (CLBlast). */
gp_status gp__cl_blas_info(void *dev, char *text, size_t len);
gp_status gp__cl_blas_gemm(void *dev, void *stream, gp_type type, int trans_a, int trans_b, size_t m, size_t n,
                           size_t k, double alpha, void *a, size_t a_off, size_t lda, void *b, size_t b_off,
                           size_t ldb, double beta, void *c, size_t c_off, size_t ldc);

#endif /* GPUPORT_OPENCL_INTERNAL_H */
