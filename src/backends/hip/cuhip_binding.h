/* The HIP binding of the shared CUDA/HIP host code (../cuhip/cuhip.h says what a binding
 * provides). The ROCm headers are read at build time only: every entry point is resolved with
 * dlsym, so the plugin loads on machines without ROCm. */
#ifndef GPUPORT_HIP_BINDING_H
#define GPUPORT_HIP_BINDING_H

#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <hip/hiprtc.h>

#define CH_BACKEND_NAME "hip"
#define CH_DRIVER_TITLE "HIP runtime"
#define CH_RTC_TITLE "hiprtc"
#define CH_VENDOR "AMD"

typedef hipError_t ch_result;
typedef hipDevice_t ch_device;
typedef hipDeviceptr_t ch_dptr;
typedef hipStream_t ch_stream;
typedef hipEvent_t ch_event;
typedef hipModule_t ch_module;
typedef hipFunction_t ch_function;
typedef hiprtcResult ch_rtc_result;
typedef hiprtcProgram ch_rtc_program;

#define CH_SUCCESS hipSuccess
#define CH_ERROR_NOT_READY hipErrorNotReady
#define CH_ERROR_OUT_OF_MEMORY hipErrorOutOfMemory
#define CH_ERROR_NOT_FOUND hipErrorNotFound
#define CH_ERROR_INVALID_VALUE hipErrorInvalidValue
#define CH_ERROR_LAUNCH_OUT_OF_RESOURCES hipErrorLaunchOutOfResources
#define CH_RTC_SUCCESS HIPRTC_SUCCESS
#define CH_RTC_ERROR_COMPILATION HIPRTC_ERROR_COMPILATION

#define CH_STREAM_NON_BLOCKING hipStreamNonBlocking
#define CH_EVENT_DEFAULT hipEventDefault
#define CH_HOSTALLOC_PORTABLE hipHostMallocPortable
#define CH_HOSTALLOC_DEVICEMAP hipHostMallocMapped

#define CH_ATTR_MAX_THREADS_PER_BLOCK hipDeviceAttributeMaxThreadsPerBlock
#define CH_ATTR_MAX_BLOCK_DIM_X hipDeviceAttributeMaxBlockDimX
#define CH_ATTR_MAX_BLOCK_DIM_Y hipDeviceAttributeMaxBlockDimY
#define CH_ATTR_MAX_BLOCK_DIM_Z hipDeviceAttributeMaxBlockDimZ
#define CH_ATTR_SHARED_MEM_PER_BLOCK hipDeviceAttributeMaxSharedMemoryPerBlock
#define CH_ATTR_COMPUTE_UNITS hipDeviceAttributeMultiprocessorCount
#define CH_ATTR_WARP_SIZE hipDeviceAttributeWarpSize /* 64 on most AMD GPUs, 32 on RDNA in wave32 */
#define CH_ATTR_INTEGRATED hipDeviceAttributeIntegrated
/* Past the default limit, where the runtime has one (HIP's NVIDIA platform; ROCm answers none). */
#define CH_ATTR_SHARED_MEM_OPTIN hipDeviceAttributeSharedMemPerBlockOptin
#define CH_FUNC_ATTR_MAX_THREADS_PER_BLOCK HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
#define CH_FUNC_ATTR_SHARED_SIZE_BYTES HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES

/* Device pointers are void * in HIP. */
#define CH_DPTR_ADD(p, off) ((void *)((char *)(p) + (off)))
#define CH_DPTR_IS_NULL(p) ((p) == NULL)
#define CH_DPTR_FROM_U64(u) ((void *)(uintptr_t)(u))
#define CH_DPTR_TO_U64(p) ((uint64_t)(uintptr_t)(p))

/* Interop: what a pointer is, and how host memory is registered. */
#define CH_POINTER_ATTR_MEMORY_TYPE HIP_POINTER_ATTRIBUTE_MEMORY_TYPE
#define CH_POINTER_ATTR_HOST_POINTER HIP_POINTER_ATTRIBUTE_HOST_POINTER
#define CH_MEMORYTYPE_HOST hipMemoryTypeHost
#define CH_HOSTREGISTER_FLAGS (hipHostRegisterPortable | hipHostRegisterMapped)

/* X(field, function the prototype is taken from, symbol name); the symbol is the one the
 * headers map the name to (ROCm 6 headers rename a few, e.g. hipGetDevicePropertiesR0600). */
#define CH_S(sym) CH__STR(sym)
#define CH__STR(sym) #sym
#define CH_DRIVER_API(X)                                                                       \
    X(init, hipInit, CH_S(hipInit))                                                            \
    X(driver_get_version, hipDriverGetVersion, CH_S(hipDriverGetVersion))                      \
    X(get_error_name, hipGetErrorName, CH_S(hipGetErrorName))                                  \
    X(device_get_count, hipGetDeviceCount, CH_S(hipGetDeviceCount))                            \
    X(device_get, hipDeviceGet, CH_S(hipDeviceGet))                                            \
    X(device_get_name, hipDeviceGetName, CH_S(hipDeviceGetName))                               \
    X(device_get_attribute, hipDeviceGetAttribute, CH_S(hipDeviceGetAttribute))                \
    X(device_total_mem, hipDeviceTotalMem, CH_S(hipDeviceTotalMem))                            \
    X(get_device, hipGetDevice, CH_S(hipGetDevice))                                            \
    X(set_device, hipSetDevice, CH_S(hipSetDevice))                                            \
    X(mem_alloc, hipMalloc, CH_S(hipMalloc))                                                   \
    X(mem_free, hipFree, CH_S(hipFree))                                                        \
    X(host_alloc, hipHostMalloc, CH_S(hipHostMalloc))                                          \
    X(host_free, hipHostFree, CH_S(hipHostFree))                                               \
    X(host_get_device_pointer, hipHostGetDevicePointer, CH_S(hipHostGetDevicePointer))         \
    X(memcpy_htod_async, hipMemcpyHtoDAsync, CH_S(hipMemcpyHtoDAsync))                         \
    X(memcpy_dtoh_async, hipMemcpyDtoHAsync, CH_S(hipMemcpyDtoHAsync))                         \
    X(memcpy_dtod_async, hipMemcpyDtoDAsync, CH_S(hipMemcpyDtoDAsync))                         \
    X(memset_d8_async, hipMemsetD8Async, CH_S(hipMemsetD8Async))                               \
    X(memset_d16_async, hipMemsetD16Async, CH_S(hipMemsetD16Async))                            \
    X(memset_d32_async, hipMemsetD32Async, CH_S(hipMemsetD32Async))                            \
    X(stream_create, hipStreamCreateWithFlags, CH_S(hipStreamCreateWithFlags))                 \
    X(stream_destroy, hipStreamDestroy, CH_S(hipStreamDestroy))                                \
    X(stream_synchronize, hipStreamSynchronize, CH_S(hipStreamSynchronize))                    \
    X(stream_wait_event, hipStreamWaitEvent, CH_S(hipStreamWaitEvent))                         \
    X(event_create, hipEventCreateWithFlags, CH_S(hipEventCreateWithFlags))                    \
    X(event_destroy, hipEventDestroy, CH_S(hipEventDestroy))                                   \
    X(event_record, hipEventRecord, CH_S(hipEventRecord))                                      \
    X(event_synchronize, hipEventSynchronize, CH_S(hipEventSynchronize))                       \
    X(event_query, hipEventQuery, CH_S(hipEventQuery))                                         \
    X(event_elapsed_time, hipEventElapsedTime, CH_S(hipEventElapsedTime))                      \
    X(module_load_data, hipModuleLoadData, CH_S(hipModuleLoadData))                            \
    X(module_unload, hipModuleUnload, CH_S(hipModuleUnload))                                   \
    X(module_get_function, hipModuleGetFunction, CH_S(hipModuleGetFunction))                   \
    X(module_get_global, hipModuleGetGlobal, CH_S(hipModuleGetGlobal))                         \
    X(func_get_attribute, hipFuncGetAttribute, CH_S(hipFuncGetAttribute))                      \
    X(launch_kernel, hipModuleLaunchKernel, CH_S(hipModuleLaunchKernel))                   \
    X(ctx_synchronize, hipDeviceSynchronize, CH_S(hipDeviceSynchronize))

/* Interop (native handles in and out, peer copies): resolved when the driver has them; the
 * calls that need them say so when it does not. */
#define CH_INTEROP_API(X)                                                                      \
    X(pointer_get_attribute, hipPointerGetAttribute, CH_S(hipPointerGetAttribute))             \
    X(mem_get_address_range, hipMemGetAddressRange, CH_S(hipMemGetAddressRange))               \
    X(host_register, hipHostRegister, CH_S(hipHostRegister))                                   \
    X(host_unregister, hipHostUnregister, CH_S(hipHostUnregister))                             \
    X(device_can_access_peer, hipDeviceCanAccessPeer, CH_S(hipDeviceCanAccessPeer))            \
    X(stream_get_flags, hipStreamGetFlags, CH_S(hipStreamGetFlags))                            \
    X(device_enable_peer_access, hipDeviceEnablePeerAccess, CH_S(hipDeviceEnablePeerAccess))   \
    X(memcpy_peer_async, hipMemcpyPeerAsync, CH_S(hipMemcpyPeerAsync))

/* hipDeviceProp_t changed layout in ROCm 6, which keeps the old one as ...R0000. Built with
 * pre-6 headers, ask ROCm 6 for that one (a fresh ROCm 5 has only the plain name); hip.c takes
 * the first that resolved. */
#if HIP_VERSION_MAJOR < 6
#define CH_DRIVER_API_OPTIONAL(X)                                                              \
    X(get_device_properties_r0000, hipGetDeviceProperties, "hipGetDevicePropertiesR0000")      \
    X(get_device_properties, hipGetDeviceProperties, CH_S(hipGetDeviceProperties))
#else
#define CH_DRIVER_API_OPTIONAL(X)                                                              \
    X(get_device_properties, hipGetDeviceProperties, CH_S(hipGetDeviceProperties))
#endif

#define CH_RTC_API(X)                                                                          \
    X(rtc_version, hiprtcVersion, CH_S(hiprtcVersion))                                         \
    X(rtc_get_error_string, hiprtcGetErrorString, CH_S(hiprtcGetErrorString))                  \
    X(rtc_create_program, hiprtcCreateProgram, CH_S(hiprtcCreateProgram))                      \
    X(rtc_destroy_program, hiprtcDestroyProgram, CH_S(hiprtcDestroyProgram))                   \
    X(rtc_compile_program, hiprtcCompileProgram, CH_S(hiprtcCompileProgram))                   \
    X(rtc_get_program_log_size, hiprtcGetProgramLogSize, CH_S(hiprtcGetProgramLogSize))        \
    X(rtc_get_program_log, hiprtcGetProgramLog, CH_S(hiprtcGetProgramLog))                     \
    X(rtc_get_code_size, hiprtcGetCodeSize, CH_S(hiprtcGetCodeSize))                           \
    X(rtc_get_code, hiprtcGetCode, CH_S(hiprtcGetCode))

/* rocBLAS, declared here so that the plugin builds without its headers (Debian has none).
 * Values and prototypes as in rocblas-types.h and rocblas-functions.h of rocBLAS 4 (ROCm 6),
 * the same in rocBLAS 2 and 3 (ROCm 5); rocblas_int is int32_t in these (LP64) builds and the
 * enums are passed as int. */
typedef struct _rocblas_handle *ch_blas_handle; /* rocblas_handle */
typedef int ch_blas_status;                     /* rocblas_status */
typedef int ch_blas_op;                         /* rocblas_operation */
#define CH_BLAS_TITLE "rocBLAS"
#define CH_BLAS_SUCCESS 0      /* rocblas_status_success */
#define CH_BLAS_ALLOC_FAILED 5 /* rocblas_status_memory_error */
#define CH_BLAS_OP_N 111       /* rocblas_operation_none */
#define CH_BLAS_OP_T 112       /* rocblas_operation_transpose */
ch_blas_status rocblas_create_handle(ch_blas_handle *handle);
ch_blas_status rocblas_destroy_handle(ch_blas_handle handle);
ch_blas_status rocblas_set_stream(ch_blas_handle handle, hipStream_t stream);
ch_blas_status rocblas_get_version_string(char *buf, size_t len);
const char *rocblas_status_to_string(ch_blas_status status);
ch_blas_status rocblas_sgemm(ch_blas_handle handle, ch_blas_op transa, ch_blas_op transb, int m, int n, int k,
                             const float *alpha, const float *a, int lda, const float *b, int ldb, const float *beta,
                             float *c, int ldc);
ch_blas_status rocblas_dgemm(ch_blas_handle handle, ch_blas_op transa, ch_blas_op transb, int m, int n, int k,
                             const double *alpha, const double *a, int lda, const double *b, int ldb,
                             const double *beta, double *c, int ldc);

#define CH_BLAS_API(X)                                                                         \
    X(blas_create, rocblas_create_handle, "rocblas_create_handle")                             \
    X(blas_destroy, rocblas_destroy_handle, "rocblas_destroy_handle")                          \
    X(blas_set_stream, rocblas_set_stream, "rocblas_set_stream")                               \
    X(blas_sgemm, rocblas_sgemm, "rocblas_sgemm")                                              \
    X(blas_dgemm, rocblas_dgemm, "rocblas_dgemm")                                              \
    X(blas_get_version_string, rocblas_get_version_string, "rocblas_get_version_string")
#define CH_BLAS_API_OPTIONAL(X) X(blas_status_name, rocblas_status_to_string, "rocblas_status_to_string")

/* What the vendor part keeps per device beside the shared fields. */
typedef struct ch_vendor_device {
    char target[64];  /* the gfx part, for --offload-arch: "gfx90a" */
    char target_id[256]; /* the whole gcnArchName with its features: "gfx90a:sramecc+:xnack-" */
} ch_vendor_device;

#endif /* GPUPORT_HIP_BINDING_H */
