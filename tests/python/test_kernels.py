"""Kernels of your own from Python: user maps and reductions, dialect source launched with Python
arguments converted by the kernel's declared parameters, and the errors a user meets."""
import gc

import numpy as np
import pytest

import gpuport as gp


def test_elementwise_and_reduction_kernels(dev):
    x, y = np.linspace(-1, 1, 1001, dtype=np.float32), np.linspace(2, 3, 1001, dtype=np.float32)
    gx, gy = gp.asarray(x, device=dev), gp.asarray(y, device=dev)
    k = gp.ElementwiseKernel("a * x + y", nin=2, device=dev)
    assert np.allclose(k(gx, gy, a=0.5).get(), 0.5 * x + y, rtol=1e-6)
    out = gp.empty(1001, np.float32, device=dev)
    assert k(gx, gy, a=2, out=out) is out
    dot = gp.ReductionKernel("x * y", "a + b", "0", [np.float32, np.float32], device=dev)
    want = np.dot(x.astype(np.float64), y.astype(np.float64))
    assert abs(dot(gx, gy) - want) <= 1000 * np.finfo(np.float32).eps * np.abs(x * y).sum()
    count = gp.ReductionKernel("x > 0 ? 1 : 0", "a + b", "0", [np.float32], np.uint64, device=dev)
    assert count(gx) == (x > 0).sum()


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
