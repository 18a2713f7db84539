/* Proves CUDA C kernels (gp_program_create_cuda) compute what plain C computes on every device,
 * and that what the OpenCL translation does not take is refused with the line and the construct. */
#include "common.h"

#include <math.h>
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

/* The Carpentries lesson's constant memory: a __constant__ array sized by a macro, read by a
 * __device__ function; a __constant__ scalar; a __device__ counter that atomicAdd keeps between
 * launches. The host writes them through gp_program_get_global. */
static const char *constant_src =
    "extern \"C\" {\n"
    "#define BLOCKS 4\n"
    "__constant__ float factors[BLOCKS];\n"
    "__constant__ float offset;\n"
    "__device__ unsigned int calls;\n"
    "__device__ float scaled(float v) { return v * factors[blockIdx.x] + offset; }\n"
    "__global__ void scaled_sum(const float *A, const float *B, float *C, const int size)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < size) C[i] = scaled(A[i] + B[i]);\n"
    "    if (threadIdx.x == 0) atomicAdd(&calls, 1u);\n"
    "}\n"
    "}\n";

static void constant_memory(void **state)
{
    enum { N = 1000, BLOCKS = 4 };
    float a[N], b[N], c[N], factors[BLOCKS] = {0.5f, 2.0f, -1.0f, 3.0f}, offset = 0.25f;
    for (int i = 0; i < N; i++) a[i] = (float)i, b[i] = (float)(N - 2 * i) / 8;
    gp_program *p = cuda_program(constant_src);
    gp_buffer *gf = NULL, *go = NULL, *gc = NULL, *none = NULL;
    GP_OK(gp_program_get_global(p, "factors", &gf));
    GP_OK(gp_program_get_global(p, "offset", &go));
    GP_OK(gp_program_get_global(p, "calls", &gc));
    size_t bytes[3];
    GP_OK(gp_buffer_get_size(gf, &bytes[0]));
    GP_OK(gp_buffer_get_size(go, &bytes[1]));
    GP_OK(gp_buffer_get_size(gc, &bytes[2]));
    assert_true(bytes[0] == sizeof factors && bytes[1] == sizeof offset && bytes[2] == sizeof(unsigned));
    assert_int_equal(gp_program_get_global(p, "factor", &none), GP_ERROR_NOT_FOUND);
    assert_non_null(strstr(gp_last_error(), "no __constant__ or __device__ variable named 'factor'"));
    assert_int_equal(gp_buffer_destroy(gf), GP_ERROR_INVALID_ARGUMENT);
    unsigned calls = 1;
    GP_OK(gp_buffer_read(NULL, gc, 0, &calls, sizeof calls));
    assert_int_equal(calls, 0); /* zero until written, as CUDA's */
    GP_OK(gp_buffer_write(NULL, gf, 0, factors, sizeof factors));
    GP_OK(gp_buffer_write(NULL, go, 0, &offset, sizeof offset));

    gp_kernel *k = tst_kernel(p, "scaled_sum");
    size_t count = 0;
    GP_OK(gp_kernel_get_param_count(k, &count));
    assert_int_equal(count, 4); /* the globals are no parameters of the caller's */
    gp_buffer *ba = tst_buffer(GP_MEMORY_DEVICE, sizeof a), *bb = tst_buffer(GP_MEMORY_DEVICE, sizeof b),
              *bc = tst_buffer(GP_MEMORY_DEVICE, sizeof c);
    GP_OK(gp_buffer_write(NULL, ba, 0, a, sizeof a));
    GP_OK(gp_buffer_write(NULL, bb, 0, b, sizeof b));
    int n = N;
    size_t block = 256, global = BLOCKS * 256;
    gp_arg args[] = {GP_BUFFER(ba), GP_BUFFER(bb), GP_BUFFER(bc), GP_VALUE(n)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &global, &block, 4, args));
    GP_OK(gp_kernel_launch(NULL, k, 1, &global, &block, 4, args));
    GP_OK(gp_buffer_read(NULL, bc, 0, c, sizeof c));
    for (int i = 0; i < N; i++) {
        float want = (a[i] + b[i]) * factors[i / 256] + offset;
        if (fabsf(c[i] - want) > 1e-6f * fabsf(want) + 1e-6f) fail_msg("C[%d] = %g, plain C %g", i, c[i], want);
    }
    GP_OK(gp_buffer_read(NULL, gc, 0, &calls, sizeof calls));
    assert_int_equal(calls, 2 * BLOCKS);
    GP_OK(gp_buffer_destroy(ba));
    GP_OK(gp_buffer_destroy(bb));
    GP_OK(gp_buffer_destroy(bc));
    GP_OK(gp_program_destroy(p)); /* the kernel keeps the program, and its variables, alive */
    GP_OK(gp_buffer_read(NULL, gc, 0, &calls, sizeof calls));
    assert_int_equal(calls, 2 * BLOCKS);
    GP_OK(gp_kernel_destroy(k));
}

/* What the translation does not take, each with its line; CUDA and HIP take some of it as
 * written (NVRTC knows templates), OpenCL never. */
/* One __device__ function called with global, __shared__ and private memory (the OpenCL
 * translation writes it once per address space, and a function that passes its pointer on, too),
 * function-style casts of a typedef's name, and erfinvf and erfcinvf (OpenCL C has neither). */
static const char *spaces_src =
    "typedef float real;\n"
    "typedef unsigned long long uint64_t;\n"
    "__device__ real sum3(const real *p) { return p[0] + p[1] + p[2]; }\n"
    "__device__ void step(uint64_t *s) { s[0] = s[0] * 6364136223846793005UL + 1442695040888963407UL; }\n"
    "__device__ real twice_sum(real *q) { return sum3(q) * real(2); }\n"
    "extern \"C\" __global__ void spaces(const real *x, real *y, float *inv, int n)\n"
    "{\n"
    "    __shared__ real tile[258];\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    tile[threadIdx.x] = i < n ? x[i] : real(0);\n"
    "    if (threadIdx.x < 2) tile[256 + threadIdx.x] = 0;\n"
    "    __syncthreads();\n"
    "    real mine[3] = {real(i), real(1), real(2)};\n"
    "    uint64_t state[1] = {(uint64_t)i};\n"
    "    step(state);\n"
    "    if (i >= n) return;\n"
    "    y[4 * i] = sum3(&x[i]);\n"
    "    y[4 * i + 1] = sum3(tile + threadIdx.x);\n"
    "    y[4 * i + 2] = twice_sum(mine);\n"
    "    y[4 * i + 3] = real(state[0] % 1000UL);\n"
    "    float u = (2.0f * i + 1.0f) / n;\n"
    "    inv[2 * i] = erfinvf(u - 1.0f);\n"
    "    inv[2 * i + 1] = erfcinvf(u);\n"
    "}\n";

static void device_function_spaces(void **state)
{
    enum { N = 1000 };
    float x[N + 2], y[4 * N], inv[2 * N];
    for (int i = 0; i < N + 2; i++) x[i] = i < N ? (float)(i % 17) - 8.0f : 0.0f;
    gp_program *p = cuda_program(spaces_src);
    gp_kernel *k = tst_kernel(p, "spaces");
    gp_buffer *bx = tst_buffer(GP_MEMORY_DEVICE, sizeof x), *by = tst_buffer(GP_MEMORY_DEVICE, sizeof y),
              *bi = tst_buffer(GP_MEMORY_DEVICE, sizeof inv);
    GP_OK(gp_buffer_write(NULL, bx, 0, x, sizeof x));
    int n = N;
    size_t block = 256, global = (N + 255) / 256 * 256;
    gp_arg args[] = {GP_BUFFER(bx), GP_BUFFER(by), GP_BUFFER(bi), GP_VALUE(n)};
    GP_OK(gp_kernel_launch(NULL, k, 1, &global, &block, 4, args));
    GP_OK(gp_buffer_read(NULL, by, 0, y, sizeof y));
    GP_OK(gp_buffer_read(NULL, bi, 0, inv, sizeof inv));
    for (int i = 0; i < N; i++) {
        int t = i % 256;
        float local = x[i] + (t + 1 < 256 ? x[i + 1] : 0.0f) + (t + 2 < 256 ? x[i + 2] : 0.0f);
        uint64_t s = (uint64_t)i * 6364136223846793005u + 1442695040888963407u;
        float want[4] = {x[i] + x[i + 1] + x[i + 2], local, 2.0f * ((float)i + 3.0f), (float)(s % 1000u)};
        for (int j = 0; j < 4; j++)
            if (y[4 * i + j] != want[j]) fail_msg("i = %d, output %d: %g, not %g", i, j, y[4 * i + j], want[j]);
        double u = (2.0 * i + 1.0) / N;
        if (fabs(erf(inv[2 * i]) - (u - 1.0)) > 2e-6 || fabs(erfc(inv[2 * i + 1]) - u) > 2e-6 * u)
            fail_msg("i = %d: erfinvf(%g) = %.9g, erfcinvf(%g) = %.9g", i, u - 1.0, inv[2 * i], u, inv[2 * i + 1]);
    }
    GP_OK(gp_buffer_destroy(bx));
    GP_OK(gp_buffer_destroy(by));
    GP_OK(gp_buffer_destroy(bi));
    GP_OK(gp_kernel_destroy(k));
    GP_OK(gp_program_destroy(p));
}

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
        {"__constant__ float c[2] = {1, 2};\n", "line 1: an initialized __constant__ variable"},
        {"\n__constant__ float m[3][3];\n", "line 2: a __constant__ array of 2 dimensions"},
        {"__device__ int *p;\n", "line 1: a __device__ pointer"},
        {"__global__ void f(float *x) { __constant__ float c[2]; x[0] = c[0]; }\n",
         "line 1: __constant__ inside a function"},
        {"__device__ void f4(float *a, float *b, float *c, float *d) { a[0] = b[0] + c[0] + d[0]; }\n"
         "__global__ void f(float *x) { float p[1]; f4(p, x, x, x); x[0] = p[0]; }\n",
         "line 2: local or private memory passed to 'f4', a __device__ function of more than 3 pointer parameters"},
    };
    if (strcmp(tst_info.backend, "opencl") != 0) { /* NVRTC and hiprtc judge CUDA C as written */
        print_message("skipped: the refusals are the OpenCL translation's; NVRTC and hiprtc take CUDA C as written\n");
        skip();
    }
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
    cmocka_unit_test(constant_memory),
    cmocka_unit_test(device_function_spaces),
    cmocka_unit_test(refused_constructs),
};
const size_t tst_cuda_c_tests_count = sizeof tst_cuda_c_tests / sizeof tst_cuda_c_tests[0];
