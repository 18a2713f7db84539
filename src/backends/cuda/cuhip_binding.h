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

/* Device pointers are integers in CUDA. */
#define CH_DPTR_ADD(p, off) ((p) + (CUdeviceptr)(off))
#define CH_DPTR_IS_NULL(p) ((p) == 0)

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
    X(func_get_attribute, cuFuncGetAttribute, CH_S(cuFuncGetAttribute))                        \
    X(launch_kernel, cuLaunchKernel, CH_S(cuLaunchKernel))

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

/* What the vendor part keeps per device beside the shared fields. */
typedef struct ch_vendor_device {
    CUcontext ctx; /* the retained primary context */
    int arch;      /* compute capability as major * 10 + minor */
} ch_vendor_device;

#endif /* GPUPORT_CUDA_BINDING_H */
