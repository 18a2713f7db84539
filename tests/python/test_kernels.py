"""Kernels of your own from Python: user maps and reductions, dialect source launched with Python
arguments converted by the kernel's declared parameters, and the errors a user meets."""
import gc
import math

import numpy as np
import pytest

import gpuport as gp


def test_elementwise_kernel_cupy_forms(dev):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(1001).astype(np.float32), rng.standard_normal(1001).astype(np.float32)
    gx, gy = gp.asarray(x, device=dev), gp.asarray(y, device=dev)
    sqdiff = gp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "sqdiff")
    assert np.array_equal(sqdiff(gx, gy).get(), (x - y) * (x - y))
    z = gp.empty(1001, np.float32, device=dev)
    assert sqdiff(gx, gy, z) is z and np.array_equal(z.get(), (x - y) * (x - y))
    # placeholders bound by the arrays, a scalar, broadcasting, the index i, a preamble
    axpy = gp.ElementwiseKernel("T a, T x, T y", "T z", "z = twice(a) * x + y + i",
                                "axpy", preamble="__device__ float twice(float v) { return 2 * v; }")
    m = rng.standard_normal((7, 1)).astype(np.float32)
    got = axpy(1.5, gp.asarray(m, device=dev), gx[:13]).get()
    want = np.float32(3) * m + x[:13] + np.arange(7 * 13, dtype=np.float32).reshape(7, 13)
    assert got.shape == (7, 13) and np.allclose(got, want, rtol=1e-6)
    # several outputs, int64 and bool, a strided input
    k = gp.ElementwiseKernel("int64 n", "int64 half, bool odd", "half = n / 2; odd = n % 2 != 0", "halves")
    n = np.arange(-20, 20, dtype=np.int64)
    half, odd = k(gp.asarray(n, device=dev)[::2])
    assert np.array_equal(half.get(), np.trunc(n[::2] / 2).astype(np.int64))  # C's division
    assert odd.dtype == np.bool_ and np.array_equal(odd.get(), n[::2] % 2 != 0)
    # a raw array read at other indices, the size given; an output read and written
    rev = gp.ElementwiseKernel("raw T x, int32 n", "T y", "y += x[n - 1 - i]", "rev_add")
    acc = gp.asarray(np.ones(1001, np.float32), device=dev)
    rev(gx, 1001, acc)
    assert np.array_equal(acc.get(), 1 + x[::-1])
    fill = gp.ElementwiseKernel("", "raw int32 y", "y[i] = 3 * i", "fill", no_return=True)
    out = gp.zeros(9, np.int32, device=dev)
    assert fill(out, size=5) is None and out.get().tolist() == [0, 3, 6, 9, 12, 0, 0, 0, 0]


def test_abs_of_floats_and_integers(dev):
    """CUDA's abs takes floats too (C++ overloads), as CuPy's examples use it; OpenCL's takes integers only."""
    k = gp.ElementwiseKernel("T x", "T y", "y = abs(x) + abs(-3)", "absolute")
    with dev:
        for dtype in (np.float32, np.float64, np.int32, np.int64):
            x = np.array([-2.5, -1, 0, 1.5, 7], dtype=dtype)
            np.testing.assert_array_equal(k(gp.asarray(x)).get(), np.abs(x) + 3)


def test_random_state_in_private_memory(dev):
    """A generator's state in a local array that __device__ functions of the preamble update (as
    CuPy's Monte Carlo example keeps it), a typedef of uint64_t, T(x) casts and erfcinv: against
    the same xorshift in NumPy's uint64 and SciPy-free checks of erfcinv by erfc."""
    k = gp.ElementwiseKernel("int32 seed", "T u, T z", """
        uint64_t state[2];
        start(state, i, seed);
        uint64_t r = 0;
        for (int j = 0; j < 3; ++j) r = next(state);
        u = T(r >> 11) / T(9007199254740992.0);
        z = erfcinv(T(2) * (u + T(1e-9)) / (T(1) + T(2e-9)));
        """, "private_state", preamble="""
        typedef unsigned long long uint64_t;
        __device__ inline void start(uint64_t* a, int i, int seed) { a[0] = i + 1; a[1] = 0x5c721fd808f616b6 + seed; }
        __device__ inline uint64_t next(uint64_t* x) {
            uint64_t s1 = x[0], s0 = x[1];
            x[0] = s0;
            s1 ^= s1 << 23;
            s1 = s1 ^ (s1 >> 17) ^ s0 ^ (s0 >> 26);
            x[1] = s1;
            return s0 + s1;
        }
        """)
    n = 5000
    a, b = np.arange(1, n + 1, dtype=np.uint64), np.full(n, 0x5c721fd808f616b6 + 7, np.uint64)
    with np.errstate(over="ignore"):
        for _ in range(3):
            s1, s0 = a, b
            a = s0
            s1 = s1 ^ (s1 << np.uint64(23))
            s1 = s1 ^ (s1 >> np.uint64(17)) ^ s0 ^ (s0 >> np.uint64(26))
            b = s1
            r = s0 + s1
    want = (r >> np.uint64(11)).astype(np.float64) / 2.0 ** 53
    with dev:
        u, z = gp.empty(n), gp.empty(n)
        k(7, u, z)
        np.testing.assert_array_equal(u.get(), want)
        y = 2 * (want + 1e-9) / (1 + 2e-9)
        np.testing.assert_allclose([math.erfc(v) for v in z.get()], y, rtol=1e-13)


def test_elementwise_kernel_refusals(dev):
    gx = gp.arange(4, dtype=np.float32, device=dev)
    with pytest.raises(ValueError, match="cannot read the parameter 'float32'"):
        gp.ElementwiseKernel("float32", "float32 y", "y = 1")
    k = gp.ElementwiseKernel("T x", "U y", "y = x")
    with pytest.raises(TypeError, match="the type U of y is not known"):
        k(gx)
    k = gp.ElementwiseKernel("T x, T y", "T z", "z = x + y")
    with pytest.raises(TypeError, match="y is int32, but T is already float32"):
        k(gx, gp.arange(4, dtype=np.int32, device=dev))
    with pytest.raises(TypeError, match="takes 2 inputs"):
        k(gx)
    with pytest.raises(ValueError, match="the output z has shape"):
        k(gx, gx, gp.empty(3, np.float32, device=dev))
    with pytest.raises(gp.GpuportError, match="CUDA C|error"):
        gp.ElementwiseKernel("T x", "T y", "y = x +* 2")(gx)


def _rows_reference(a, axis):
    return np.sqrt((a.astype(np.float64) ** 2).sum(axis=axis))


@pytest.mark.parametrize("shape, axis", [((1 << 20,), None), ((3, 4), 1), ((3, 4), 0), ((5000, 300), 0),
                                         ((300, 5000), 1), ((6, 7, 8), (0, 2)), ((6, 7, 8), 1), ((0, 3), 0)])
def test_reduction_kernel_axes(dev, shape, axis):
    a = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    l2 = gp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    got = l2(gp.asarray(a, device=dev), axis=axis)
    want = _rows_reference(a, axis)
    assert got.shape == np.shape(want) and got.dtype == np.float32
    assert np.allclose(got.get(), want, rtol=1e-4)
    kept = l2(gp.asarray(a, device=dev), axis=axis, keepdims=True)
    assert kept.shape == np.sqrt((a ** 2).sum(axis=axis, keepdims=True)).shape


def test_reduction_kernel_types_and_inputs(dev):
    x = np.random.default_rng(3).standard_normal(100003).astype(np.float32)
    y = np.random.default_rng(4).standard_normal(100003).astype(np.float32)
    dot = gp.ReductionKernel("T x, T y", "float64 z", "x * y", "a + b", "z = a", "0", "dot", reduce_type="double")
    assert abs(dot(gp.asarray(x, device=dev), gp.asarray(y, device=dev)).item()
               - np.dot(x.astype(np.float64), y.astype(np.float64))) < 1e-9 * np.abs(x * y).sum()
    count = gp.ReductionKernel("float32 x", "int64 n", "x > 0 ? 1 : 0", "a + b", "n = a", "0", "positives")
    assert count(gp.asarray(x, device=dev)).item() == (x > 0).sum()
    # a maximum with its own identity, over the rows of a broadcast pair
    big = gp.ReductionKernel("T x, T y", "T m", "x - y", "max(a, b)", "m = a", "-1e30", "maxdiff")
    col = x[:50].reshape(50, 1)
    got = big(gp.asarray(col, device=dev), gp.asarray(y[:7], device=dev), axis=1)
    assert np.array_equal(got.get(), (col - y[:7]).max(axis=1))
    with pytest.raises(ValueError, match="give the identity"):
        gp.ReductionKernel("T x", "T y", "x", "a + b", "y = a", None)


def test_program_kernels_and_parameters(dev):
    p = gp.Program("GP_KERNEL void axpb(GP_GLOBAL T *x, T a, T b, uint n) { GP_FOR(i, n) x[i] = a * x[i] + b; }",
                   "-DT=float", device=dev)
    k = p.kernel("axpb")
    assert [(q["kind"], q["name"], q["dtype"]) for q in k.params] == [
        ("buffer", "x", np.float32), ("value", "a", np.float32), ("value", "b", np.float32),
        ("value", "n", np.uint32)]
    x = gp.asarray(np.arange(100, dtype=np.float32), device=dev)
    k(x, 2, 0.5, 100, global_size=100)  # Python ints and floats become the parameters' types
    assert np.array_equal(x.get(), 2 * np.arange(100, dtype=np.float32) + 0.5)
    k(x, 1, 1, 10, global_size=(64,), local_size=(32,))
    assert x.get()[9] == 2 * 9 + 1.5 and x.get()[10] == 2 * 10 + 0.5


def test_errors_carry_status_and_message(dev):
    with pytest.raises(gp.GpuportError) as e:
        gp.Program("GP_KERNEL void broken(GP_GLOBAL float *x) { x[0] = undefined_name; }", device=dev)
    assert e.value.status == gp.GP_ERROR_BUILD_FAILED and e.value.name == "GP_ERROR_BUILD_FAILED"
    assert "undefined_name" in e.value.message
    k = gp.Program("GP_KERNEL void f(GP_GLOBAL float *x, uint n) { GP_FOR(i, n) x[i] = 1; }", device=dev).kernel("f")
    x = gp.zeros(4, np.float32, device=dev)
    with pytest.raises(TypeError):
        k(x, global_size=4)  # one argument short
    with pytest.raises(TypeError, match="points to float, but the array holds int64"):
        k(gp.zeros(4, np.int64, device=dev), 4, global_size=4)
    with pytest.raises(ValueError, match="view that starts 1 elements"):
        k(x[1:], 3, global_size=3)
    with pytest.raises(TypeError):
        k(4, x, global_size=4)  # a value for a buffer
    with pytest.raises(OverflowError):
        k(x, -1, global_size=4)
    with pytest.raises(gp.GpuportError) as e:
        k(x, 4, global_size=4, local_size=1 << 30)
    assert e.value.status == gp.GP_ERROR_INVALID_LAUNCH
    with pytest.raises(gp.GpuportError) as e:
        gp.Program("GP_KERNEL void f(GP_GLOBAL float *x) {}", device=dev).kernel("missing")
    assert e.value.status == gp.GP_ERROR_NOT_FOUND
    with pytest.raises(gp.GpuportError) as e:
        gp.device("opencl:99")
    assert e.value.status == gp.GP_ERROR_NOT_FOUND and "opencl:99" in e.value.message
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes \(2,\) \(3,\)"):
        gp.asarray([1.0, 2.0], device=dev) + gp.asarray([1.0, 2.0, 3.0], device=dev)
    with pytest.raises(TypeError):
        gp.asarray(np.zeros(3, np.float16), device=dev)
    with pytest.raises(ValueError):
        gp.stencil(gp.zeros((3, 3), device=dev), [1, 2, 3])


def test_lifetimes(dev):
    """Objects may go in any order while work that uses them is queued, and nothing grows over
    many rounds of a notebook's rerun."""
    s = gp.Stream(dev)
    x = gp.asarray(np.ones(1 << 16, np.float32), device=dev)
    y = gp.sin(x, stream=s)
    del s, x  # the stream and the input go first, the work still queued
    gc.collect()
    assert np.allclose(y.get(), np.sin(1.0))
    a = gp.asarray(np.arange(10, dtype=np.float32), device=dev)
    view = a.reshape(2, 5)
    del a
    gc.collect()
    assert np.array_equal(view.get().ravel(), np.arange(10))  # the view keeps its memory alive
    p = gp.Program("GP_KERNEL void f(GP_GLOBAL float *x) { x[0] = 3; }", device=dev)
    k = p.kernel("f")
    del p
    gc.collect()
    z = gp.zeros(1, np.float32, device=dev)
    k(z, global_size=1)
    assert z.get()[0] == 3
    assert dev is gp.device(dev.spec) and dev in gp.devices()
    for _ in range(200):  # a rerun loop: arrays, kernels and events created and dropped
        e0, e1 = gp.Event(dev), gp.Event(dev)
        e0.record()
        b = gp.asarray(np.ones(1000, np.float32), device=dev) * 2
        e1.record()
        e1.synchronize()
        assert e0.elapsed_ms(e1) >= 0 and b.sum() == 2000
    gc.collect()


def test_cuda_array_interface(dev):
    a = gp.asarray(np.arange(6, dtype=np.float32), device=dev)
    if dev.backend != "cuda":
        assert not hasattr(a, "__cuda_array_interface__")
        return
    cai = a.__cuda_array_interface__
    assert cai["shape"] == (6,) and cai["typestr"] == "<f4" and cai["data"][0] != 0
    wrapped = gp.asarray(a_like(cai, a), device=dev)  # wrapped without a copy
    assert wrapped.__cuda_array_interface__["data"][0] == cai["data"][0]
    assert np.array_equal(wrapped.get(), np.arange(6))
    cupy = pytest.importorskip("cupy")
    c = cupy.asarray(a)  # CuPy reads gpuport's memory in place
    assert c.data.ptr == cai["data"][0] and float(c.sum()) == 15
    back = gp.asarray(cupy.arange(4, dtype=cupy.float64), device=dev)
    assert np.array_equal(back.get(), np.arange(4.0))


class a_like:
    """Another library's array, as far as __cuda_array_interface__ goes, keeping its owner."""

    def __init__(self, cai, owner):
        self.__cuda_array_interface__, self.owner = cai, owner
