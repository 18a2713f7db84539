// libgpuport-anchor-cuda.so: the vendor's own figures for gpuport-bench to compare against, on
// the same GPU in the same process: cudaMemcpyAsync device to device (the bandwidth anchor), CUB
// DeviceReduce::Sum and DeviceScan::InclusiveSum, pinned host-to-device and device-to-host
// copies and cudaMemcpyPeerAsync (the anchors of copies between devices). Built by nvcc with the CUDA runtime linked
// statically, so it needs only libcuda.so.1 where it runs.
#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/version.cuh>

#include <limits.h>
#include <stdio.h>
#include <string.h>

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
    float *x = nullptr, *out = nullptr, *pinned = nullptr;
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
        cudaFreeHost(pinned);
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
    if (kind == GPA_CUDA_H2D)
        return cudaMemcpyAsync(r.out, r.pinned, n * sizeof(float), cudaMemcpyHostToDevice, r.stream);
    if (kind == GPA_CUDA_D2H)
        return cudaMemcpyAsync(r.pinned, r.x, n * sizeof(float), cudaMemcpyDeviceToHost, r.stream);
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

namespace {
// Times reps runs (enqueue, or run where given) on r.stream with an event pair around each.
int time_runs(int kind, resources &r, size_t temp_bytes, size_t n, int reps, double *ms, char *msg, size_t msg_len,
              int (*run)(resources &, size_t, void *), void *ctx)
{
    r.events = new cudaEvent_t[2 * (size_t)reps];
    for (; r.nevents < 2 * reps; r.nevents++)
        if (failed(cudaEventCreate(&r.events[r.nevents]), "cudaEventCreate", msg, msg_len))
            return -1;
    for (int i = 0; i < reps; i++) {
        cudaError_t e = cudaEventRecord(r.events[2 * i], r.stream);
        if (e == cudaSuccess)
            e = run ? (cudaError_t)run(r, n, ctx) : enqueue(kind, r, temp_bytes, n);
        if (e == cudaSuccess)
            e = cudaEventRecord(r.events[2 * i + 1], r.stream);
        if (failed(e, "a timed run", msg, msg_len))
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
    return 0;
}
} // namespace

GPA_EXPORT int gpa_cuda_run(int device, int kind, size_t n, const float *x, float *out, int reps, double *ms,
                            char *msg, size_t msg_len)
{
    if (kind < GPA_CUDA_MEMCPY || kind > GPA_CUDA_D2H || n == 0 || reps < 1) {
        snprintf(msg, msg_len, "bad arguments (kind %d, n %zu, reps %d)", kind, n, reps);
        return -1;
    }
    resources r;
    size_t out_n = kind == GPA_CUDA_REDUCE ? 1 : n, temp_bytes = 0;
    int host = kind == GPA_CUDA_H2D || kind == GPA_CUDA_D2H;
    if (failed(cudaSetDevice(device), "cudaSetDevice", msg, msg_len) ||
        failed(cudaMalloc(&r.x, n * sizeof(float)), "cudaMalloc", msg, msg_len) ||
        failed(cudaMalloc(&r.out, out_n * sizeof(float)), "cudaMalloc", msg, msg_len) ||
        (host && failed(cudaMallocHost(&r.pinned, n * sizeof(float)), "cudaMallocHost", msg, msg_len)) ||
        failed(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "cudaStreamCreate", msg, msg_len) ||
        failed(cudaMemcpy(r.x, x, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy", msg, msg_len))
        return -1;
    if (host)
        memcpy(r.pinned, x, n * sizeof(float));
    // CUB sizes its scratch on a first call with no storage; it stays allocated outside the timing.
    if (kind != GPA_CUDA_MEMCPY && !host &&
        (failed(enqueue(kind, r, temp_bytes, n), "CUB temp size", msg, msg_len) ||
         failed(cudaMalloc(&r.temp, temp_bytes ? temp_bytes : 1), "cudaMalloc", msg, msg_len)))
        return -1;
    if (time_runs(kind, r, temp_bytes, n, reps, ms, msg, msg_len, nullptr, nullptr))
        return -1;
    if (kind == GPA_CUDA_D2H) {
        memcpy(out, r.pinned, n * sizeof(float));
        return 0;
    }
    return failed(cudaMemcpy(out, r.out, out_n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy", msg, msg_len)
               ? -1
               : 0;
}

namespace {
struct peer_ctx {
    int dst, src;
    float *from;
};
int peer_copy(resources &r, size_t n, void *ctx)
{
    peer_ctx *p = static_cast<peer_ctx *>(ctx);
    return (int)cudaMemcpyPeerAsync(r.out, p->dst, p->from, p->src, n * sizeof(float), r.stream);
}
} // namespace

GPA_EXPORT int gpa_cuda_peer(int dst, int src, size_t n, const float *x, float *out, int reps, double *ms, char *msg,
                             size_t msg_len)
{
    if (n == 0 || reps < 1 || dst == src) {
        snprintf(msg, msg_len, "bad arguments (devices %d and %d, n %zu, reps %d)", dst, src, n, reps);
        return -1;
    }
    resources from; // on src: its x
    resources r;    // on dst: out and the stream
    peer_ctx p = {dst, src, nullptr};
    if (failed(cudaSetDevice(src), "cudaSetDevice", msg, msg_len) ||
        failed(cudaMalloc(&from.x, n * sizeof(float)), "cudaMalloc", msg, msg_len) ||
        failed(cudaMemcpy(from.x, x, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy", msg, msg_len))
        return -1;
    cudaDeviceEnablePeerAccess(dst, 0);
    cudaGetLastError(); // already enabled is fine
    p.from = from.x;
    if (failed(cudaSetDevice(dst), "cudaSetDevice", msg, msg_len) ||
        failed(cudaMalloc(&r.out, n * sizeof(float)), "cudaMalloc", msg, msg_len) ||
        failed(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "cudaStreamCreate", msg, msg_len))
        return -1;
    cudaDeviceEnablePeerAccess(src, 0);
    cudaGetLastError();
    if (time_runs(GPA_CUDA_MEMCPY, r, 0, n, reps, ms, msg, msg_len, peer_copy, &p))
        return -1;
    return failed(cudaMemcpy(out, r.out, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy", msg, msg_len) ? -1
                                                                                                                 : 0;
}
