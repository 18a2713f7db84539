/* Proves CUDA C kernels (gp_program_create_cuda) compute what plain C computes on every device,
 * and that what the OpenCL translation does not take is refused with the line and the construct. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

static gp_program *cuda_program(const char *source)
{
    gp_program *p = NULL;
    GP_OK(gp_program_create_cuda(tst_dev, source, NULL, &p));
    return p;
}

/* The Carpentries lesson's histogram: a __shared__ array, __syncthreads and atomicAdd on int in
 * shared and global memory, beside a device function and CUDA's type names. */
static const char *histogram_src =
    "#include <cuda_runtime.h>\n"
    "__device__ __forceinline__ unsigned int bin_of(int v) { return (unsigned int)v & 255u; }\n"
    "extern \"C\"\n"
    "__global__ void histogram(const int * input, int * output, unsigned int n)\n"
    "{\n"
    "    unsigned int item = (blockIdx.x * blockDim.x) + threadIdx.x;\n"
    "    __shared__ int temp_histogram[256];\n"
    "    temp_histogram[threadIdx.x] = 0;\n"
    "    __syncthreads();\n"
    "    if (item < n)\n"
    "        atomicAdd(&(temp_histogram[bin_of(input[item])]), 1);\n"
    "    __syncthreads();\n"
    "    atomicAdd(&(output[threadIdx.x]), temp_histogram[threadIdx.x]);\n"
    "}\n";

static void histogram(void **state)
{
    enum { N = 100000 };
    int *in = tst_malloc(N * sizeof(int)), out[256], ref[256] = {0};
    uint64_t seed = 5;
    for (int i = 0; i < N; i++) {
        in[i] = (int)(tst_random_u32(&seed) % 100000) - 50000;
        ref[(unsigned)in[i] & 255u]++;
    }
    gp_program *p = cuda_program(histogram_src);
    gp_kernel *k = tst_kernel(p, "histogram");
    gp_buffer *bi = tst_buffer(GP_MEMORY_DEVICE, N * sizeof(int)), *bo = tst_buffer(GP_MEMORY_DEVICE, sizeof out);
    GP_OK(gp_buffer_write(NULL, bi, 0, in, N * sizeof(int)));
    int zero = 0;
    GP_OK(gp_buffer_fill(NULL, bo, 0, sizeof out, &zero, sizeof zero));
    unsigned n = N;
    size_t block = 256, global = (N + 255) / 256 * 256;
    gp_arg args[] = {GP_BUFFER(bi), GP_BUFFER(bo), GP_VALUE(n)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &global, &block, 3, args));
    GP_OK(gp_buffer_read(NULL, bo, 0, out, sizeof out));
    assert_memory_equal(out, ref, sizeof out);
    free(in);
    GP_OK(gp_buffer_destroy(bi));
    GP_OK(gp_buffer_destroy(bo));
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

/* extern __shared__ memory sized at launch, a 2D launch, float atomics and math functions. */
static const char *shared_src =
    "extern __shared__ float tile[];\n"
    "extern \"C\" {\n"
    "__global__ void reverse_rows(const float *__restrict__ x, float *y, float *total, int w, int h)\n"
    "{\n"
    "    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;\n"
    "    tile[threadIdx.x] = col < w ? x[row * w + col] : 0.0f;\n"
    "    __syncthreads();\n"
    "    int from = blockDim.x - 1 - threadIdx.x;\n"
    "    if (col < w && row < h) {\n"
    "        y[row * w + col] = fmaxf(tile[from], 0.0f) + sqrtf(4.0f);\n"
    "        atomicAdd(total, tile[threadIdx.x]);\n"
    "    }\n"
    "}\n"
    "}\n";

static void extern_shared_2d(void **state)
{
    enum { W = 64, H = 37 };
    float *x = tst_malloc(W * H * sizeof(float)), *y = tst_malloc(W * H * sizeof(float)), total = 0, sum = 0;
    for (int i = 0; i < W * H; i++) {
        x[i] = (float)(i % 17) - 8.0f;
        sum += x[i];
    }
    gp_program *p = cuda_program(shared_src);
    gp_kernel *k = tst_kernel(p, "reverse_rows");
    gp_buffer *bx = tst_buffer(GP_MEMORY_DEVICE, W * H * sizeof(float));
    gp_buffer *by = tst_buffer(GP_MEMORY_DEVICE, W * H * sizeof(float)), *bt = tst_buffer(GP_MEMORY_DEVICE, 4);
    GP_OK(gp_buffer_write(NULL, bx, 0, x, W * H * sizeof(float)));
    GP_OK(gp_buffer_write(NULL, bt, 0, &total, 4));
    int w = W, h = H;
    size_t global[2] = {W, H}, local[2] = {W, 1};
    gp_arg args[] = {GP_BUFFER(bx), GP_BUFFER(by), GP_BUFFER(bt), GP_VALUE(w), GP_VALUE(h),
                     GP_LOCAL_BYTES(W * sizeof(float))};
    GP_OK(gp_kernel_launch(NULL, k, 2, global, local, 6, args));
    GP_OK(gp_buffer_read(NULL, by, 0, y, W * H * sizeof(float)));
    GP_OK(gp_buffer_read(NULL, bt, 0, &total, 4));
    for (int r = 0; r < H; r++)
        for (int c = 0; c < W; c++) {
            float v = x[r * W + (W - 1 - c)];
            if (y[r * W + c] != (v > 0 ? v : 0) + 2.0f)
                fail_msg("y[%d][%d] = %g, expected %g", r, c, y[r * W + c], (v > 0 ? v : 0) + 2.0f);
        }
    assert_true(total == sum); /* integers: exact in any order */
    free(x);
    free(y);
    GP_OK(gp_buffer_destroy(bx));
    GP_OK(gp_buffer_destroy(by));
    GP_OK(gp_buffer_destroy(bt));
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

/* What the translation does not take, each with its line; CUDA and HIP take some of it as
 * written (NVRTC knows templates), OpenCL never. */
static void refused_constructs(void **state)
{
    static const struct {
        const char *src, *message;
    } cases[] = {
        {"template <typename T>\n__global__ void f(T *x) { x[0] = 1; }\n", "line 1: the C++ construct 'template'"},
        {"extern \"C\" __global__ void f(int *x)\n{\n  x[0] = __shfl_sync(0xffffffff, x[1], 0);\n}\n",
         "line 3: the warp intrinsic '__shfl_sync'"},
        {"texture<float, 1> t;\n", "line 1: the C++ construct 'texture'"},
        {"void host(int *x) { x[0] = 1; }\n", "line 1: the host function 'host'"},
        {"#include <thrust/sort.h>\n", "line 1: #include of a header"},
        {"extern \"C\" __device__ float g(float *p) { __shared__ float s[4]; s[0] = p[0]; return s[0]; }\n",
         "line 1: __shared__ memory in a __device__ function"},
    };
    if (strcmp(tst_info.backend, "opencl") != 0) skip(); /* NVRTC and hiprtc judge CUDA C as written */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gp_program *p = NULL;
        gp_status st = gp_program_create_cuda(tst_dev, cases[c].src, NULL, &p);
        if (st != GP_ERROR_BUILD_FAILED || !strstr(gp_last_error(), cases[c].message))
            fail_msg("case %zu: %s, '%s' (expected GP_ERROR_BUILD_FAILED with '%s')", c, gp_status_name(st),
                     gp_last_error(), cases[c].message);
        assert_null(p);
    }
}

const struct CMUnitTest tst_cuda_c_tests[] = {
    cmocka_unit_test(histogram),
    cmocka_unit_test(extern_shared_2d),
    cmocka_unit_test(refused_constructs),
};
const size_t tst_cuda_c_tests_count = sizeof tst_cuda_c_tests / sizeof tst_cuda_c_tests[0];
