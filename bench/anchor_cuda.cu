// libgpuport-anchor-cuda.so: the vendor's own figures for gpuport-bench to compare against, on
// the same GPU in the same process: cudaMemcpyAsync device to device (the bandwidth anchor), CUB
// DeviceReduce::Sum and DeviceScan::InclusiveSum. Built by nvcc with the CUDA runtime linked
// statically, so it needs only libcuda.so.1 where it runs.
#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/version.cuh>

#include <limits.h>
#include <stdio.h>

#include "anchor_cuda.h"

#define GPA_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// Writes the failed call and the runtime's error to msg; true when e is an error.
bool failed(cudaError_t e, const char *what, char *msg, size_t msg_len)
{
    if (e == cudaSuccess)
        return false;
    snprintf(msg, msg_len, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    return true;
}

// Everything one run allocates, freed on every path.
struct resources {
    float *x = nullptr, *out = nullptr;
    void *temp = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t *events = nullptr;
    int nevents = 0;
    ~resources()
    {
        for (int i = 0; i < nevents; i++)
            cudaEventDestroy(events[i]);
        delete[] events;
        if (stream)
            cudaStreamDestroy(stream);
        cudaFree(temp);
        cudaFree(out);
        cudaFree(x);
    }
};

template <typename N> cudaError_t cub_call(int kind, resources &r, size_t &temp_bytes, N n)
{
    if (kind == GPA_CUDA_REDUCE)
        return cub::DeviceReduce::Sum(r.temp, temp_bytes, r.x, r.out, n, r.stream);
    return cub::DeviceScan::InclusiveSum(r.temp, temp_bytes, r.x, r.out, n, r.stream);
}

// With no temp storage yet, CUB only writes the size it needs to temp_bytes.
cudaError_t enqueue(int kind, resources &r, size_t &temp_bytes, size_t n)
{
    if (kind == GPA_CUDA_MEMCPY)
        return cudaMemcpyAsync(r.out, r.x, n * sizeof(float), cudaMemcpyDeviceToDevice, r.stream);
    // 32-bit counts where they fit, as CUB's users pass them and as its fastest path expects.
    if (n <= (size_t)INT_MAX)
        return cub_call(kind, r, temp_bytes, (int)n);
    return cub_call(kind, r, temp_bytes, n);
}

} // namespace

GPA_EXPORT int gpa_cuda_abi(void)
{
    return GPA_CUDA_ABI;
}

GPA_EXPORT int gpa_cuda_versions(char *text, size_t text_len, char *msg, size_t msg_len)
{
    int runtime = 0, driver = 0;
    if (failed(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion", msg, msg_len) ||
        failed(cudaDriverGetVersion(&driver), "cudaDriverGetVersion", msg, msg_len))
        return -1;
    snprintf(text, text_len, "CUDA runtime %d.%d (static), driver API %d.%d, CUB %d.%d.%d", runtime / 1000,
             runtime % 1000 / 10, driver / 1000, driver % 1000 / 10, CUB_MAJOR_VERSION, CUB_MINOR_VERSION,
             CUB_SUBMINOR_VERSION);
    return 0;
}

GPA_EXPORT int gpa_cuda_device_count(int *count, char *msg, size_t msg_len)
{
    return failed(cudaGetDeviceCount(count), "cudaGetDeviceCount", msg, msg_len) ? -1 : 0;
}

GPA_EXPORT int gpa_cuda_device_name(int device, char *name, size_t name_len, char *msg, size_t msg_len)
{
    cudaDeviceProp p;
    if (failed(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties", msg, msg_len))
        return -1;
    snprintf(name, name_len, "%s", p.name);
    return 0;
}

GPA_EXPORT int gpa_cuda_run(int device, int kind, size_t n, const float *x, float *out, int reps, double *ms,
                            char *msg, size_t msg_len)
{
    if (kind < GPA_CUDA_MEMCPY || kind > GPA_CUDA_SCAN || n == 0 || reps < 1) {
        snprintf(msg, msg_len, "bad arguments (kind %d, n %zu, reps %d)", kind, n, reps);
        return -1;
    }
    resources r;
    size_t out_n = kind == GPA_CUDA_REDUCE ? 1 : n, temp_bytes = 0;
    if (failed(cudaSetDevice(device), "cudaSetDevice", msg, msg_len) ||
        failed(cudaMalloc(&r.x, n * sizeof(float)), "cudaMalloc", msg, msg_len) ||
        failed(cudaMalloc(&r.out, out_n * sizeof(float)), "cudaMalloc", msg, msg_len) ||
        failed(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "cudaStreamCreate", msg, msg_len) ||
        failed(cudaMemcpy(r.x, x, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy", msg, msg_len))
        return -1;
    // CUB sizes its scratch on a first call with no storage; it stays allocated outside the timing.
    if (kind != GPA_CUDA_MEMCPY &&
        (failed(enqueue(kind, r, temp_bytes, n), "CUB temp size", msg, msg_len) ||
         failed(cudaMalloc(&r.temp, temp_bytes ? temp_bytes : 1), "cudaMalloc", msg, msg_len)))
        return -1;
    r.events = new cudaEvent_t[2 * (size_t)reps];
    for (; r.nevents < 2 * reps; r.nevents++)
        if (failed(cudaEventCreate(&r.events[r.nevents]), "cudaEventCreate", msg, msg_len))
            return -1;
    for (int i = 0; i < reps; i++) {
        if (failed(cudaEventRecord(r.events[2 * i], r.stream), "cudaEventRecord", msg, msg_len) ||
            failed(enqueue(kind, r, temp_bytes, n), kind == GPA_CUDA_MEMCPY ? "cudaMemcpyAsync" : "CUB", msg,
                   msg_len) ||
            failed(cudaEventRecord(r.events[2 * i + 1], r.stream), "cudaEventRecord", msg, msg_len))
            return -1;
    }
    if (failed(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize", msg, msg_len))
        return -1;
    for (int i = 0; i < reps; i++) {
        float t = 0;
        if (failed(cudaEventElapsedTime(&t, r.events[2 * i], r.events[2 * i + 1]), "cudaEventElapsedTime", msg,
                   msg_len))
            return -1;
        ms[i] = t;
    }
    return failed(cudaMemcpy(out, r.out, out_n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy", msg, msg_len)
               ? -1
               : 0;
}
