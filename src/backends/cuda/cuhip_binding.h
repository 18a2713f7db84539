/* The CUDA binding of the shared CUDA/HIP host code (../cuhip/cuhip.h says what a binding
 * provides). Vendor headers are read at build time only: every entry point is resolved with
 * dlsym, so the plugin loads on machines without the NVIDIA driver. */
#ifndef GPUPORT_CUDA_BINDING_H
#define GPUPORT_CUDA_BINDING_H

#include <cuda.h>
#include <nvrtc.h>

#define CH_BACKEND_NAME "cuda"
#define CH_DRIVER_TITLE "CUDA driver"
#define CH_RTC_TITLE "NVRTC"
#define CH_VENDOR "NVIDIA"

typedef CUresult ch_result;
typedef CUdevice ch_device;
typedef CUdeviceptr ch_dptr;
typedef CUstream ch_stream;
typedef CUevent ch_event;
typedef CUmodule ch_module;
typedef CUfunction ch_function;
typedef nvrtcResult ch_rtc_result;
typedef nvrtcProgram ch_rtc_program;

#define CH_SUCCESS CUDA_SUCCESS
#define CH_ERROR_NOT_READY CUDA_ERROR_NOT_READY
#define CH_ERROR_OUT_OF_MEMORY CUDA_ERROR_OUT_OF_MEMORY
#define CH_ERROR_NOT_FOUND CUDA_ERROR_NOT_FOUND
#define CH_ERROR_INVALID_VALUE CUDA_ERROR_INVALID_VALUE
#define CH_ERROR_LAUNCH_OUT_OF_RESOURCES CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
#define CH_RTC_SUCCESS NVRTC_SUCCESS
#define CH_RTC_ERROR_COMPILATION NVRTC_ERROR_COMPILATION

#define CH_STREAM_NON_BLOCKING CU_STREAM_NON_BLOCKING
#define CH_EVENT_DEFAULT CU_EVENT_DEFAULT
#define CH_HOSTALLOC_PORTABLE CU_MEMHOSTALLOC_PORTABLE
#define CH_HOSTALLOC_DEVICEMAP CU_MEMHOSTALLOC_DEVICEMAP

#define CH_ATTR_MAX_THREADS_PER_BLOCK CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
#define CH_ATTR_MAX_BLOCK_DIM_X CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X
#define CH_ATTR_MAX_BLOCK_DIM_Y CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y
#define CH_ATTR_MAX_BLOCK_DIM_Z CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z
#define CH_ATTR_SHARED_MEM_PER_BLOCK CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK
#define CH_ATTR_COMPUTE_UNITS CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
#define CH_ATTR_WARP_SIZE CU_DEVICE_ATTRIBUTE_WARP_SIZE
#define CH_ATTR_INTEGRATED CU_DEVICE_ATTRIBUTE_INTEGRATED
#define CH_FUNC_ATTR_MAX_THREADS_PER_BLOCK CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
#define CH_FUNC_ATTR_SHARED_SIZE_BYTES CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
/* CUDA only: a block's dynamic shared memory past 48 KiB needs the kernel's opt-in. */
#define CH_ATTR_SHARED_MEM_OPTIN CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
#define CH_FUNC_ATTR_MAX_DYNAMIC_SHARED CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

/* Device pointers are integers in CUDA. */
#define CH_DPTR_ADD(p, off) ((p) + (CUdeviceptr)(off))
#define CH_DPTR_IS_NULL(p) ((p) == 0)
#define CH_DPTR_FROM_U64(u) ((CUdeviceptr)(u))
#define CH_DPTR_TO_U64(p) ((uint64_t)(p))

/* Interop: what a pointer is, and how host memory is registered. */
#define CH_POINTER_ATTR_MEMORY_TYPE CU_POINTER_ATTRIBUTE_MEMORY_TYPE
#define CH_POINTER_ATTR_HOST_POINTER CU_POINTER_ATTRIBUTE_HOST_POINTER
#define CH_MEMORYTYPE_HOST CU_MEMORYTYPE_HOST
#define CH_HOSTREGISTER_FLAGS (CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP)

/* X(field, function the prototype is taken from, symbol name). The symbol is the one cuda.h
 * maps the name to (cuMemAlloc -> cuMemAlloc_v2), except where that mapping needs a newer
 * driver than the oldest supported (cuEventElapsedTime_v2 arrived in 12.8; the original has
 * the same prototype). */
#define CH_S(sym) CH__STR(sym)
#define CH__STR(sym) #sym
#define CH_DRIVER_API(X)                                                                       \
    X(init, cuInit, CH_S(cuInit))                                                              \
    X(driver_get_version, cuDriverGetVersion, CH_S(cuDriverGetVersion))                        \
    X(get_error_name, cuGetErrorName, CH_S(cuGetErrorName))                                    \
    X(device_get_count, cuDeviceGetCount, CH_S(cuDeviceGetCount))                              \
    X(device_get, cuDeviceGet, CH_S(cuDeviceGet))                                              \
    X(device_get_name, cuDeviceGetName, CH_S(cuDeviceGetName))                                 \
    X(device_get_attribute, cuDeviceGetAttribute, CH_S(cuDeviceGetAttribute))                  \
    X(device_total_mem, cuDeviceTotalMem, CH_S(cuDeviceTotalMem))                              \
    X(primary_ctx_retain, cuDevicePrimaryCtxRetain, CH_S(cuDevicePrimaryCtxRetain))            \
    X(primary_ctx_release, cuDevicePrimaryCtxRelease, CH_S(cuDevicePrimaryCtxRelease))         \
    X(ctx_get_current, cuCtxGetCurrent, CH_S(cuCtxGetCurrent))                                 \
    X(ctx_set_current, cuCtxSetCurrent, CH_S(cuCtxSetCurrent))                                 \
    X(mem_alloc, cuMemAlloc, CH_S(cuMemAlloc))                                                 \
    X(mem_free, cuMemFree, CH_S(cuMemFree))                                                    \
    X(host_alloc, cuMemHostAlloc, CH_S(cuMemHostAlloc))                                        \
    X(host_free, cuMemFreeHost, CH_S(cuMemFreeHost))                                           \
    X(host_get_device_pointer, cuMemHostGetDevicePointer, CH_S(cuMemHostGetDevicePointer))     \
    X(memcpy_htod_async, cuMemcpyHtoDAsync, CH_S(cuMemcpyHtoDAsync))                           \
    X(memcpy_dtoh_async, cuMemcpyDtoHAsync, CH_S(cuMemcpyDtoHAsync))                           \
    X(memcpy_dtod_async, cuMemcpyDtoDAsync, CH_S(cuMemcpyDtoDAsync))                           \
    X(memset_d8_async, cuMemsetD8Async, CH_S(cuMemsetD8Async))                                 \
    X(memset_d16_async, cuMemsetD16Async, CH_S(cuMemsetD16Async))                              \
    X(memset_d32_async, cuMemsetD32Async, CH_S(cuMemsetD32Async))                              \
    X(stream_create, cuStreamCreate, CH_S(cuStreamCreate))                                     \
    X(stream_destroy, cuStreamDestroy, CH_S(cuStreamDestroy))                                  \
    X(stream_synchronize, cuStreamSynchronize, CH_S(cuStreamSynchronize))                      \
    X(stream_wait_event, cuStreamWaitEvent, CH_S(cuStreamWaitEvent))                           \
    X(event_create, cuEventCreate, CH_S(cuEventCreate))                                        \
    X(event_destroy, cuEventDestroy, CH_S(cuEventDestroy))                                     \
    X(event_record, cuEventRecord, CH_S(cuEventRecord))                                        \
    X(event_synchronize, cuEventSynchronize, CH_S(cuEventSynchronize))                         \
    X(event_query, cuEventQuery, CH_S(cuEventQuery))                                           \
    X(event_elapsed_time, cuEventElapsedTime, "cuEventElapsedTime")                            \
    X(module_load_data, cuModuleLoadData, CH_S(cuModuleLoadData))                              \
    X(module_unload, cuModuleUnload, CH_S(cuModuleUnload))                                     \
    X(module_get_function, cuModuleGetFunction, CH_S(cuModuleGetFunction))                     \
    X(module_get_global, cuModuleGetGlobal, CH_S(cuModuleGetGlobal))                           \
    X(func_get_attribute, cuFuncGetAttribute, CH_S(cuFuncGetAttribute))                        \
    X(func_set_attribute, cuFuncSetAttribute, CH_S(cuFuncSetAttribute))                        \
    X(launch_kernel, cuLaunchKernel, CH_S(cuLaunchKernel))                                     \
    X(ctx_synchronize, cuCtxSynchronize, CH_S(cuCtxSynchronize))

/* Interop (native handles in and out, peer copies): resolved when the driver has them; the
 * calls that need them say so when it does not. */
#define CH_INTEROP_API(X)                                                                      \
    X(pointer_get_attribute, cuPointerGetAttribute, CH_S(cuPointerGetAttribute))               \
    X(mem_get_address_range, cuMemGetAddressRange, CH_S(cuMemGetAddressRange))                 \
    X(host_register, cuMemHostRegister, CH_S(cuMemHostRegister))                               \
    X(host_unregister, cuMemHostUnregister, CH_S(cuMemHostUnregister))                         \
    X(device_can_access_peer, cuDeviceCanAccessPeer, CH_S(cuDeviceCanAccessPeer))              \
    X(stream_get_ctx, cuStreamGetCtx, CH_S(cuStreamGetCtx))                                    \
    X(ctx_enable_peer_access, cuCtxEnablePeerAccess, CH_S(cuCtxEnablePeerAccess))              \
    X(memcpy_peer_async, cuMemcpyPeerAsync, CH_S(cuMemcpyPeerAsync))                           \
    X(device_get_uuid, cuDeviceGetUuid_v2, "cuDeviceGetUuid_v2")                                \
    X(mem_get_granularity, cuMemGetAllocationGranularity, CH_S(cuMemGetAllocationGranularity))  \
    X(mem_create, cuMemCreate, CH_S(cuMemCreate))                                              \
    X(mem_release, cuMemRelease, CH_S(cuMemRelease))                                           \
    X(mem_address_reserve, cuMemAddressReserve, CH_S(cuMemAddressReserve))                     \
    X(mem_address_free, cuMemAddressFree, CH_S(cuMemAddressFree))                              \
    X(mem_map, cuMemMap, CH_S(cuMemMap))                                                       \
    X(mem_unmap, cuMemUnmap, CH_S(cuMemUnmap))                                                 \
    X(mem_set_access, cuMemSetAccess, CH_S(cuMemSetAccess))                                    \
    X(mem_export, cuMemExportToShareableHandle, CH_S(cuMemExportToShareableHandle))

/* Entry points a driver may lack; the field stays NULL. */
#define CH_DRIVER_API_OPTIONAL(X) X(func_get_param_info, cuFuncGetParamInfo, CH_S(cuFuncGetParamInfo))

#define CH_RTC_API(X)                                                                          \
    X(rtc_version, nvrtcVersion, CH_S(nvrtcVersion))                                           \
    X(rtc_get_error_string, nvrtcGetErrorString, CH_S(nvrtcGetErrorString))                    \
    X(rtc_create_program, nvrtcCreateProgram, CH_S(nvrtcCreateProgram))                        \
    X(rtc_destroy_program, nvrtcDestroyProgram, CH_S(nvrtcDestroyProgram))                     \
    X(rtc_compile_program, nvrtcCompileProgram, CH_S(nvrtcCompileProgram))                     \
    X(rtc_get_program_log_size, nvrtcGetProgramLogSize, CH_S(nvrtcGetProgramLogSize))          \
    X(rtc_get_program_log, nvrtcGetProgramLog, CH_S(nvrtcGetProgramLog))                       \
    X(rtc_get_num_supported_archs, nvrtcGetNumSupportedArchs, CH_S(nvrtcGetNumSupportedArchs)) \
    X(rtc_get_supported_archs, nvrtcGetSupportedArchs, CH_S(nvrtcGetSupportedArchs))           \
    X(rtc_get_ptx_size, nvrtcGetPTXSize, CH_S(nvrtcGetPTXSize))                                \
    X(rtc_get_ptx, nvrtcGetPTX, CH_S(nvrtcGetPTX))                                             \
    X(rtc_get_cubin_size, nvrtcGetCUBINSize, CH_S(nvrtcGetCUBINSize))                          \
    X(rtc_get_cubin, nvrtcGetCUBIN, CH_S(nvrtcGetCUBIN))

/* cuBLAS, declared here so that the plugin builds without its headers. Values and prototypes
 * as in cublas_api.h of cuBLAS 13.1.0 (CUDA 13.1), unchanged since cuBLAS 11; the enums are
 * passed as int. */
typedef struct cublasContext *ch_blas_handle; /* cublasHandle_t */
typedef int ch_blas_status;                   /* cublasStatus_t */
typedef int ch_blas_op;                       /* cublasOperation_t */
#define CH_BLAS_TITLE "cuBLAS"
#define CH_BLAS_SUCCESS 0      /* CUBLAS_STATUS_SUCCESS */
#define CH_BLAS_ALLOC_FAILED 3 /* CUBLAS_STATUS_ALLOC_FAILED */
#define CH_BLAS_OP_N 0         /* CUBLAS_OP_N */
#define CH_BLAS_OP_T 1         /* CUBLAS_OP_T */
#define CH_CUBLAS_DEFAULT_MATH 0 /* cublasMath_t: FP32 stays FP32; TF32 is 3, opt-in only */
#define CH_CUBLAS_MAJOR_VERSION 0 /* libraryPropertyType (library_types.h) */
#define CH_CUBLAS_MINOR_VERSION 1
#define CH_CUBLAS_PATCH_LEVEL 2
ch_blas_status cublasCreate_v2(ch_blas_handle *handle);
ch_blas_status cublasDestroy_v2(ch_blas_handle handle);
ch_blas_status cublasSetStream_v2(ch_blas_handle handle, CUstream stream);
ch_blas_status cublasSetMathMode(ch_blas_handle handle, int mode);
ch_blas_status cublasGetProperty(int type, int *value);
const char *cublasGetStatusName(ch_blas_status status);
ch_blas_status cublasSgemm_v2(ch_blas_handle handle, ch_blas_op transa, ch_blas_op transb, int m, int n, int k,
                              const float *alpha, const float *a, int lda, const float *b, int ldb,
                              const float *beta, float *c, int ldc);
ch_blas_status cublasDgemm_v2(ch_blas_handle handle, ch_blas_op transa, ch_blas_op transb, int m, int n, int k,
                              const double *alpha, const double *a, int lda, const double *b, int ldb,
                              const double *beta, double *c, int ldc);

#define CH_BLAS_API(X)                                                                         \
    X(blas_create, cublasCreate_v2, "cublasCreate_v2")                                         \
    X(blas_destroy, cublasDestroy_v2, "cublasDestroy_v2")                                      \
    X(blas_set_stream, cublasSetStream_v2, "cublasSetStream_v2")                               \
    X(blas_sgemm, cublasSgemm_v2, "cublasSgemm_v2")                                            \
    X(blas_dgemm, cublasDgemm_v2, "cublasDgemm_v2")                                            \
    X(blas_set_math_mode, cublasSetMathMode, "cublasSetMathMode")                              \
    X(blas_get_property, cublasGetProperty, "cublasGetProperty")
#define CH_BLAS_API_OPTIONAL(X) X(blas_status_name, cublasGetStatusName, "cublasGetStatusName")

/* Device memory other APIs can import (cuda.c): buffer_export and device_uuid. */
#define CH_EXPORTS_MEMORY 1

/* What the vendor part keeps per device beside the shared fields. */
typedef struct ch_vendor_device {
    CUcontext ctx; /* the retained primary context */
    int arch;      /* compute capability as major * 10 + minor */
} ch_vendor_device;

#endif /* GPUPORT_CUDA_BINDING_H */
