/* The vendors' own APIs, opened at run time for the tests that check gpuport's native handles
 * against them: OpenCL through the ICD loader and CLBlast, the CUDA driver API and cuBLAS.
 * Each loader returns 1 when the whole table is there; the suite needs none of them to build
 * (headers permitting) or to run. */
#ifndef GPUPORT_TESTS_VENDOR_H
#define GPUPORT_TESTS_VENDOR_H

#ifdef TST_HAVE_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#define TST_CL_FUNCS(X)                                                                            \
    X(clCreateBuffer) X(clReleaseMemObject) X(clRetainMemObject) X(clGetMemObjectInfo)             \
    X(clEnqueueWriteBuffer) X(clEnqueueReadBuffer) X(clFinish) X(clCreateProgramWithSource)        \
    X(clBuildProgram) X(clCreateKernel) X(clSetKernelArg) X(clEnqueueNDRangeKernel)                \
    X(clReleaseKernel) X(clReleaseProgram) X(clCreateCommandQueue) X(clReleaseCommandQueue)        \
    X(clGetCommandQueueInfo) X(clCreateContext) X(clReleaseContext) X(clGetEventInfo)

typedef struct tst_cl_api {
#define TST_CL_MEMBER(fn) __typeof__(&fn) fn;
    TST_CL_FUNCS(TST_CL_MEMBER)
#undef TST_CL_MEMBER
    /* CLBlast's C API (clblast_c.h): CLBlastSgemm, or NULL where the library is missing. */
    int (*sgemm)(int layout, int a_transpose, int b_transpose, size_t m, size_t n, size_t k, float alpha,
                 cl_mem a, size_t a_offset, size_t a_ld, cl_mem b, size_t b_offset, size_t b_ld, float beta,
                 cl_mem c, size_t c_offset, size_t c_ld, cl_command_queue *queue, cl_event *event);
} tst_cl_api;
extern tst_cl_api tst_cl;
int tst_cl_load(void);
#endif

#ifdef TST_HAVE_CUDA
#include <cuda.h>

#define TST_CU_FUNCS(X)                                                                            \
    X(cuCtxSetCurrent, "cuCtxSetCurrent") X(cuMemAlloc, "cuMemAlloc_v2") X(cuMemFree, "cuMemFree_v2") \
    X(cuMemcpyHtoD, "cuMemcpyHtoD_v2") X(cuMemcpyDtoH, "cuMemcpyDtoH_v2")                         \
    X(cuPointerGetAttribute, "cuPointerGetAttribute") X(cuModuleLoadData, "cuModuleLoadData")      \
    X(cuModuleGetFunction, "cuModuleGetFunction") X(cuModuleUnload, "cuModuleUnload")              \
    X(cuLaunchKernel, "cuLaunchKernel") X(cuStreamCreate, "cuStreamCreate")                        \
    X(cuStreamDestroy, "cuStreamDestroy_v2") X(cuStreamSynchronize, "cuStreamSynchronize")         \
    X(cuCtxDestroy, "cuCtxDestroy_v2") X(cuCtxGetCurrent, "cuCtxGetCurrent")

typedef struct tst_cu_api {
#define TST_CU_MEMBER(fn, sym) __typeof__(&fn) fn;
    TST_CU_FUNCS(TST_CU_MEMBER)
#undef TST_CU_MEMBER
    /* cuCtxCreate_v2, whose prototype CUDA 13's header no longer names. */
    CUresult (*cuCtxCreate)(CUcontext *ctx, unsigned int flags, CUdevice dev);
    /* cuBLAS (cublas_api.h), or NULL where it is missing. */
    int (*cublasCreate)(void **handle);
    int (*cublasDestroy)(void *handle);
    int (*cublasSetStream)(void *handle, CUstream stream);
    int (*cublasSgemm)(void *handle, int transa, int transb, int m, int n, int k, const float *alpha, const float *a,
                       int lda, const float *b, int ldb, const float *beta, float *c, int ldc);
} tst_cu_api;
extern tst_cu_api tst_cu;
int tst_cu_load(void);
#endif

#endif
