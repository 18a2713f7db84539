/* interop_opencl: gpuport beside OpenCL code of your own. Memory you made with clCreateBuffer
 * is wrapped and reduced by gpuport; then CLBlast multiplies matrices in gpuport's buffers, on
 * gpuport's command queue. Both results are checked against plain C. Runs on an OpenCL device
 * (--device opencl:N; the first by default). */
#include "common.h"

#include <CL/cl.h>
#include <clblast_c.h>
#include <math.h>
#include <stdlib.h>

enum { N = 1 << 20, M = 256 };

static int run(gp_device *dev, void *ctx)
{
    (void)ctx;
    gp_native_device nd;
    CHECK(gp_device_get_native(dev, &nd));
    if (nd.backend != GP_BACKEND_OPENCL) {
        fprintf(stderr, "interop_opencl: pick an OpenCL device (--device opencl:0)\n");
        return 2;
    }
    gp_stream *stream;
    gp_native_stream ns;
    CHECK(gp_stream_get_default(dev, &stream));
    CHECK(gp_stream_get_native(stream, &ns));
    cl_command_queue queue = ns.stream; /* gpuport's queue: your commands on it are ordered with gpuport's */

    /* 1. Your cl_mem, made in gpuport's context, summed by gpuport. */
    float *x = malloc(N * sizeof *x);
    if (!x) return 1;
    double want = 0;
    for (int i = 0; i < N; i++) want += x[i] = (float)(i % 1000) * 0.001f;
    cl_int err;
    cl_mem mine = clCreateBuffer((cl_context)nd.context, CL_MEM_READ_WRITE, N * sizeof *x, NULL, &err);
    if (err != CL_SUCCESS || clEnqueueWriteBuffer(queue, mine, CL_TRUE, 0, N * sizeof *x, x, 0, NULL, NULL)) {
        fprintf(stderr, "interop_opencl: OpenCL error %d\n", err);
        return 1;
    }
    gp_native_buffer nb = {GP_BACKEND_OPENCL, 0, mine, NULL, 0}; /* 0 bytes: the whole cl_mem */
    gp_buffer *wrapped;
    float sum = 0;
    CHECK(gp_buffer_wrap(dev, &nb, GP_BORROW, &wrapped));
    CHECK(gp_reduce_to_host(stream, GP_REDUCE_SUM, GP_F32, N, GP_VIEW(wrapped), &sum));
    CHECK(gp_buffer_destroy(wrapped)); /* borrowed: the cl_mem is still yours */
    clReleaseMemObject(mine);
    int ok = fabs(sum - want) <= 1e-4 * want;
    printf("gpuport's sum of your cl_mem: %.3f (plain C: %.3f) %s\n", sum, want, ok ? "ok" : "WRONG");

    /* 2. CLBlast's SGEMM on gpuport's buffers and queue: C = A B, row-major M x M. */
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
    CLBlastStatusCode s = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, M, M, M, 1.0f,
                                       na.mem, 0, M, nbb.mem, 0, M, 0.0f, nc.mem, 0, M, &queue, NULL);
    if (s != CLBlastSuccess) {
        fprintf(stderr, "interop_opencl: CLBlastSgemm failed: %d\n", (int)s);
        return 1;
    }
    CHECK(gp_buffer_read(stream, gc, 0, c, M * M * sizeof *c)); /* after CLBlast's kernel, same queue */
    int bad = 0;
    for (int i = 0; i < M && !bad; i++)
        for (int j = 0; j < M; j++) {
            double w = 0;
            for (int k = 0; k < M; k++) w += (double)a[i * M + k] * b[k * M + j];
            if (fabs(c[i * M + j] - w) > 1e-3 * (1 + fabs(w))) bad = 1;
        }
    printf("CLBlast on gpuport's buffers and queue: %s\n", bad ? "WRONG" : "ok");
    gp_buffer_destroy(ga);
    gp_buffer_destroy(gb);
    gp_buffer_destroy(gc);
    free(x);
    free(a);
    free(b);
    free(c);
    return ok && !bad ? 0 : 1;
}

int main(int argc, char **argv)
{
    ex_parse(argc, argv, "usage: interop_opencl [--device SPEC] [--all]\n"
                         "  gpuport's reduce over your cl_mem, CLBlast on gpuport's buffers and queue\n");
    if (!ex_string(argc, argv, "--device", NULL) && !ex_flag(argc, argv, "--all")) {
        gp_device *dev;
        if (gp_device_find("opencl", &dev) != GP_SUCCESS) {
            printf("interop_opencl: no OpenCL device here; skipping\n");
            return 77;
        }
        return run(dev, NULL);
    }
    return ex_run(argc, argv, run, NULL);
}
