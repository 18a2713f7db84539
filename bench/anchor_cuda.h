/* The C ABI of libgpuport-anchor-cuda.so, which gpuport-bench opens at run time (dlopen), so the
 * bench has no link-time dependency on CUDA. Plain types only; every function returns 0 on
 * success, or -1 with a sentence in msg. Devices are CUDA runtime ordinals, which follow
 * CUDA_VISIBLE_DEVICES exactly as gpuport's CUDA backend does. */
#ifndef GPUPORT_BENCH_ANCHOR_CUDA_H
#define GPUPORT_BENCH_ANCHOR_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a signature below changes; the bench refuses a library of another version. */
#define GPA_CUDA_ABI 2

enum gpa_cuda_kind {
    GPA_CUDA_MEMCPY = 0, /* cudaMemcpyAsync device to device: out = x, n floats */
    GPA_CUDA_REDUCE = 1, /* cub::DeviceReduce::Sum: out[0] = sum of x */
    GPA_CUDA_SCAN = 2,   /* cub::DeviceScan::InclusiveSum: out = prefix sums of x, n floats */
    GPA_CUDA_H2D = 3,    /* cudaMemcpyAsync pinned host to device: out = x, n floats */
    GPA_CUDA_D2H = 4     /* cudaMemcpyAsync device to pinned host: out = x, n floats */
};

typedef int (*gpa_cuda_abi_fn)(void);
/* The CUDA runtime, driver and CUB versions as one line. */
typedef int (*gpa_cuda_versions_fn)(char *text, size_t text_len, char *msg, size_t msg_len);
typedef int (*gpa_cuda_device_count_fn)(int *count, char *msg, size_t msg_len);
typedef int (*gpa_cuda_device_name_fn)(int device, char *name, size_t name_len, char *msg, size_t msg_len);
/* Uploads x (n floats), runs kind reps times on one stream with a CUDA event pair around each
 * run, writes each run's milliseconds to ms[0..reps) and the last run's result to out. */
typedef int (*gpa_cuda_run_fn)(int device, int kind, size_t n, const float *x, float *out, int reps, double *ms,
                               char *msg, size_t msg_len);

/* cudaMemcpyPeerAsync of n floats from device src to device dst, reps times on a stream of dst,
 * as gpa_cuda_run times its runs; out is what arrived in the last. */
typedef int (*gpa_cuda_peer_fn)(int dst, int src, size_t n, const float *x, float *out, int reps, double *ms,
                                char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif

#endif
