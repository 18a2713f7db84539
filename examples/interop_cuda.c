/* interop_cuda: gpuport beside CUDA code of your own. Memory you allocated with cuMemAlloc is
 * wrapped and reduced by gpuport; then cuBLAS multiplies matrices in gpuport's buffers, on
 * gpuport's stream. Both results are checked against plain C. Runs on a CUDA device
 * (--device cuda:N; the first by default). */
#include "common.h"

#include <cublas_v2.h>
#include <cuda.h>
#include <math.h>
#include <stdlib.h>

enum { N = 1 << 20, M = 256 };

static int run(gp_device *dev, void *ctx)
{
    (void)ctx;
    gp_native_device nd;
    CHECK(gp_device_get_native(dev, &nd));
    if (nd.backend != GP_BACKEND_CUDA) {
        fprintf(stderr, "interop_cuda: pick a CUDA device (--device cuda:0)\n");
        return 2;
    }
    gp_stream *stream;
    gp_native_stream ns;
    CHECK(gp_stream_create(dev, &stream));
    CHECK(gp_stream_get_native(stream, &ns));

    /* 1. Your cuMemAlloc, in the device's primary context (where cudaMalloc allocates too),
     * summed by gpuport. */
    float *x = malloc(N * sizeof *x);
    if (!x) return 1;
    double want = 0;
    for (int i = 0; i < N; i++) want += x[i] = (float)(i % 1000) * 0.001f;
    CUdeviceptr mine;
    if (cuCtxSetCurrent((CUcontext)nd.context) != CUDA_SUCCESS || cuMemAlloc(&mine, N * sizeof *x) != CUDA_SUCCESS ||
        cuMemcpyHtoD(mine, x, N * sizeof *x) != CUDA_SUCCESS) {
        fprintf(stderr, "interop_cuda: the CUDA driver API failed\n");
        return 1;
    }
    gp_native_buffer nb = {GP_BACKEND_CUDA, mine, NULL, NULL, N * sizeof *x};
    gp_buffer *wrapped;
    float sum = 0;
    CHECK(gp_buffer_wrap(dev, &nb, GP_ADOPT, &wrapped)); /* gpuport frees it */
    CHECK(gp_reduce_to_host(stream, GP_REDUCE_SUM, GP_F32, N, GP_VIEW(wrapped), &sum));
    CHECK(gp_buffer_destroy(wrapped));
    int ok = fabs(sum - want) <= 1e-4 * want;
    printf("gpuport's sum of your cuMemAlloc: %.3f (plain C: %.3f) %s\n", sum, want, ok ? "ok" : "WRONG");

    /* 2. cuBLAS's SGEMM on gpuport's buffers and stream: C = A B, row-major M x M, which is
     * cuBLAS's column-major C^T = B^T A^T. */
    float *a = malloc(M * M * sizeof *a), *b = malloc(M * M * sizeof *b), *c = malloc(M * M * sizeof *c);
    if (!a || !b || !c) return 1;
    for (int i = 0; i < M * M; i++) a[i] = (float)(i % 17) - 8, b[i] = (float)(i % 13) * 0.25f;
    gp_buffer *ga, *gb, *gc;
    gp_native_buffer na, nbb, nc;
    CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, M * M * sizeof *a, &ga));
    CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, M * M * sizeof *b, &gb));
    CHECK(gp_buffer_create(dev, GP_MEMORY_DEVICE, M * M * sizeof *c, &gc));
    CHECK(gp_buffer_write_async(stream, ga, 0, a, M * M * sizeof *a));
    CHECK(gp_buffer_write_async(stream, gb, 0, b, M * M * sizeof *b));
    CHECK(gp_buffer_get_native(ga, &na));
    CHECK(gp_buffer_get_native(gb, &nbb));
    CHECK(gp_buffer_get_native(gc, &nc));
    cublasHandle_t h;
    const float one = 1, zero = 0;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetStream(h, (cudaStream_t)ns.stream) != CUBLAS_STATUS_SUCCESS ||
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, M, M, &one, (const float *)nbb.device_ptr, M,
                    (const float *)na.device_ptr, M, &zero, (float *)nc.device_ptr, M) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "interop_cuda: cuBLAS failed\n");
        return 1;
    }
    CHECK(gp_buffer_read(stream, gc, 0, c, M * M * sizeof *c)); /* after cuBLAS's kernel, same stream */
    cublasDestroy(h);
    int bad = 0;
    for (int i = 0; i < M && !bad; i++)
        for (int j = 0; j < M; j++) {
            double w = 0;
            for (int k = 0; k < M; k++) w += (double)a[i * M + k] * b[k * M + j];
            if (fabs(c[i * M + j] - w) > 1e-3 * (1 + fabs(w))) bad = 1;
        }
    printf("cuBLAS on gpuport's buffers and stream: %s\n", bad ? "WRONG" : "ok");
    gp_buffer_destroy(ga);
    gp_buffer_destroy(gb);
    gp_buffer_destroy(gc);
    gp_stream_destroy(stream);
    free(x);
    free(a);
    free(b);
    free(c);
    return ok && !bad ? 0 : 1;
}

int main(int argc, char **argv)
{
    ex_parse(argc, argv, "usage: interop_cuda [--device SPEC] [--all]\n"
                         "  gpuport's reduce over your cuMemAlloc, cuBLAS on gpuport's buffers and stream\n");
    if (!ex_string(argc, argv, "--device", NULL) && !ex_flag(argc, argv, "--all")) {
        gp_device *dev;
        if (gp_device_find("cuda", &dev) != GP_SUCCESS) {
            printf("interop_cuda: no CUDA device here; skipping\n");
            return 77;
        }
        return run(dev, NULL);
    }
    return ex_run(argc, argv, run, NULL);
}
