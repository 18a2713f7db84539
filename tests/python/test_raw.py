"""CuPy's RawKernel and RawModule with the Carpentries lesson's CUDA C kernels on every device, each
checked against NumPy; what the OpenCL translation refuses, with its line."""
import numpy as np
import pytest

import gpuport as gp

VECTOR_ADD = r'''
extern "C"
__global__ void vector_add(const float * A, const float * B, float * C, const int size)
{
    int item = (blockIdx.x * blockDim.x) + threadIdx.x;
    if ( item < size )
    {
        C[item] = A[item] + B[item];
    }
}
'''

PRIMES = r'''
extern "C"
__global__ void all_primes_to(int size, int * const all_prime_numbers)
{
    int number = (blockIdx.x * blockDim.x) + threadIdx.x;
    int result = 1;

    if ( number < size )
    {
        for ( int factor = 2; factor <= number / 2; factor++ )
        {
            if ( number % factor == 0 )
            {
                result = 0;
                break;
            }
        }

        all_prime_numbers[number] = result;
    }
}
'''

HISTOGRAM = r'''
extern "C"
__global__ void histogram(const int * input, int * output)
{
    int item = (blockIdx.x * blockDim.x) + threadIdx.x;
    __shared__ int temp_histogram[256];

    // Initialize shared memory and synchronize
    temp_histogram[threadIdx.x] = 0;
    __syncthreads();

    // Compute shared memory histogram and synchronize
    atomicAdd(&(temp_histogram[input[item]]), 1);
    __syncthreads();

    // Update global histogram
    atomicAdd(&(output[threadIdx.x]), temp_histogram[threadIdx.x]);
}
'''

MODULE = r'''
__device__ float square(float v) { return v * v; }

extern "C" __global__ void scale(float* x, int N)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < N) x[i] *= 2.0;
}

extern "C" __global__ void block_sums(const float* x, float* sums, int N)
{
    extern __shared__ float part[];
    unsigned int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    part[t] = i < N ? square(x[i]) : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) part[t] += part[t + s];
        __syncthreads();
    }
    if (t == 0) sums[blockIdx.x] = part[0];
}
'''


def test_lesson_kernels(dev):
    with dev:
        size = 100000
        a, b = np.random.default_rng(0).random(size, dtype=np.float32), np.ones(size, np.float32)
        c = gp.zeros(size, np.float32)
        # the lesson's blocks of 1024 (NVIDIA's OpenCL says every kernel takes 256, and runs them)
        gp.RawKernel(VECTOR_ADD, "vector_add")((size // 1024 + 1,), (1024,), (gp.asarray(a), gp.asarray(b), c, size))
        np.testing.assert_array_equal(c.get(), a + b)
        n = 10000
        primes = gp.zeros(n, np.int32)
        gp.RawKernel(PRIMES, "all_primes_to")((n // 1024 + 1,), (1024,), (np.int32(n), primes))
        want = np.array([1 if k < 2 or all(k % f for f in range(2, k // 2 + 1)) else 0 for k in range(n)])
        np.testing.assert_array_equal(primes.get(), want)
        x = np.random.default_rng(1).integers(0, 256, 2 ** 16).astype(np.int32)
        out = gp.zeros(256, np.int32)
        gp.RawKernel(HISTOGRAM, "histogram")((2 ** 16 // 256,), (256,), (gp.asarray(x), out))
        np.testing.assert_array_equal(out.get(), np.bincount(x, minlength=256))


def test_raw_module_and_dynamic_shared_memory(dev):
    with dev:
        mod = gp.RawModule(code=MODULE)
        x = gp.arange(1000, dtype=np.float32)
        mod.get_function("scale")((4,), (256,), (x, np.int32(1000)))
        np.testing.assert_array_equal(x.get(), 2 * np.arange(1000, dtype=np.float32))
        sums = gp.zeros(4, np.float32)
        mod.get_function("block_sums")((4,), (256,), (x, sums, 1000), shared_mem=256 * 4)
        h = np.zeros(1024, np.float32)
        h[:1000] = (2 * np.arange(1000, dtype=np.float32)) ** 2
        np.testing.assert_allclose(sums.get(), h.reshape(4, 256).sum(1), rtol=1e-6)


# __constant__ memory as the lesson teaches it: an array sized by a name replaced in the source
# before compiling, one weight a block, written from the host through get_global.
BLOCK_WEIGHTS = r'''
extern "C" {
__constant__ float weights[NBLOCKS];

__global__ void weighted_sum(const float * u, const float * v, float * out, const int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = weights[blockIdx.x] * (u[i] + v[i]);
}
}
'''


def _block_weights(block):
    n = 10**5
    u, v = gp.random.rand(n, dtype=gp.float32), gp.random.rand(n, dtype=gp.float32)
    out = gp.zeros(n, dtype=gp.float32)
    blocks = -(-n // block)
    module = gp.RawModule(code=BLOCK_WEIGHTS.replace("NBLOCKS", str(blocks)))
    where = module.get_global("weights")
    weights = gp.ndarray(blocks, gp.float32, where)
    weights[...] = gp.random.random(blocks, dtype=gp.float32)
    module.get_function("weighted_sum")((blocks, 1, 1), (block, 1, 1), (u, v, out, n))
    np.testing.assert_allclose(out.get(), np.repeat(weights.get(), block)[:n] * (u.get() + v.get()), rtol=1e-6)
    return module, where, weights, blocks


def test_constant_memory(dev):
    with dev:
        module, where, weights, blocks = _block_weights(1024)  # the lesson's block
        assert where.device is dev and weights.device is dev
        with pytest.raises(ValueError, match="outside memptr's %d bytes" % (4 * blocks)):
            gp.ndarray(blocks + 1, gp.float32, where)
        with pytest.raises(gp.GpuportError, match="no __constant__ or __device__ variable named 'weight'"):
            module.get_global("weight")


def test_memory_pointers(dev):
    with dev:
        x = gp.arange(10, dtype=np.float32)
        v = gp.ndarray((2, 3), np.float32, x.data + 8, strides=(4, 8))  # a transposed view from x[2]
        np.testing.assert_array_equal(v.get(), np.arange(2, 8, dtype=np.float32).reshape(3, 2).T)
        v[...] = 0
        np.testing.assert_array_equal(x.get()[2:8], 0)
        with pytest.raises(ValueError, match="multiples of the item size"):
            gp.ndarray(2, np.float32, x.data + 2)
        f = gp.ndarray((2, 3), np.float32, order="F")
        assert f.strides == (4, 8)
        if dev.backend == "opencl":
            with pytest.raises(TypeError, match="OpenCL buffers have no address"):
                x.data.ptr
        else:
            assert (x[3:].data.ptr - x.data.ptr) == 12 and x.data.ptr == x.__cuda_array_interface__["data"][0]


def test_refusals_name_the_line(dev):
    if dev.backend != "opencl":
        pytest.skip("NVRTC and hiprtc take CUDA C as written")
    with dev:
        with pytest.raises(gp.GpuportError, match="CUDA C, line 4: the warp intrinsic '__shfl_down_sync'"):
            gp.RawKernel('extern "C" __global__ void f(float *x)\n{\n    float v = x[threadIdx.x];\n'
                         '    v += __shfl_down_sync(0xffffffff, v, 1);\n    x[0] = v;\n}\n', "f")
        with pytest.raises(gp.GpuportError, match="line 1: the C\\+\\+ construct 'template'"):
            gp.RawModule(code="template <typename T> __global__ void f(T *x) {}")
