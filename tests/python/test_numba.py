"""Kernels written as Numba's @cuda.jit takes them run on every device, each checked against NumPy:
the workshop's kernels, each construct of the supported subset, and every refusal's message."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import gpuport as gp
from gpuport import cuda, float32, int32

TPB = 16          # module-level constants are frozen into the kernel when it is compiled
SCALE = 2.5
OFFSETS = (1, 2, 3)


# ---- the workshop's kernels, as its notebooks write them -------------------------------------

@cuda.jit
def add_kernel(x, y, out):
    idx = cuda.grid(1)
    if idx < out.size:
        out[idx] = x[idx] + y[idx]


@cuda.jit
def add_stride(x, y, out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        out[i] = x[i] + y[i]


@cuda.jit
def scale_2d(a, s, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j] * s


@cuda.jit
def shared_add(a, b, out):
    sa = cuda.shared.array(256, dtype=float32)
    sb = cuda.shared.array(256, dtype=float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    if i < a.size:
        sa[t] = a[i]
        sb[t] = b[i]
    cuda.syncthreads()
    if i < a.size:
        out[i] = sa[t] + sb[t]


@cuda.jit
def max_global(values, result):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.max(result, 0, values[i])


@cuda.jit
def max_per_block(values, result):
    best = cuda.shared.array(1, dtype=float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t == 0:
        best[0] = -np.inf
    cuda.syncthreads()
    if i < values.size:
        cuda.atomic.max(best, 0, values[i])
    cuda.syncthreads()
    if t == 0:
        cuda.atomic.max(result, 0, best[0])


@cuda.jit
def matmul_naive(A, B, C):
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


@cuda.jit
def matmul_tiled(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tmp = float32(0.)
    for t in range((A.shape[1] + TPB - 1) // TPB):
        sA[ty, tx] = A[y, tx + t * TPB] if y < A.shape[0] and tx + t * TPB < A.shape[1] else 0
        sB[ty, tx] = B[ty + t * TPB, x] if x < B.shape[1] and ty + t * TPB < B.shape[0] else 0
        cuda.syncthreads()
        for k in range(TPB):
            tmp += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


def _rng(seed=0):
    return np.random.default_rng(seed)


def test_vector_add(dev):
    with dev:
        n = 100003
        x, y = _rng().random(n, dtype=np.float32), _rng(1).random(n, dtype=np.float32)
        out = np.zeros_like(x)
        add_kernel[(n + 255) // 256, 256](x, y, out)        # NumPy arrays: copied there and back
        np.testing.assert_array_equal(out, x + y)
        dx, dy, dout = cuda.to_device(x), cuda.to_device(y), cuda.device_array_like(x)
        add_stride[32, 128](dx, dy, dout)                   # fewer threads than elements
        np.testing.assert_array_equal(dout.copy_to_host(), x + y)
        assert isinstance(dout, gp.Array) and float(gp.sum(dout)) == pytest.approx(float(np.sum(x + y)), rel=1e-5)


def test_scale_2d(dev):
    with dev:
        a = _rng().random((67, 45))
        out = cuda.device_array(a.shape)
        scale_2d[(5, 3), (16, 16)](cuda.to_device(a), SCALE, out)
        np.testing.assert_array_equal(out.copy_to_host(), a * SCALE)


def test_shared_add(dev):
    with dev:
        n = 1000
        a, b = _rng().random(n, dtype=np.float32), _rng(2).random(n, dtype=np.float32)
        out = cuda.device_array(n, dtype=np.float32)
        shared_add[(n + 255) // 256, 256](cuda.to_device(a), cuda.to_device(b), out)
        np.testing.assert_array_equal(out.copy_to_host(), a + b)


def test_atomic_max_global_and_per_block(dev):
    with dev:
        n = 1 << 16
        values = _rng().standard_normal(n).astype(np.float32)
        d = cuda.to_device(values)
        for kernel in (max_global, max_per_block):
            result = cuda.to_device(np.array([-np.inf], np.float32))
            kernel[(n + 255) // 256, 256](d, result)
            assert result.copy_to_host()[0] == values.max()


@pytest.mark.parametrize("n", [16, 50, 129])
def test_matmul_naive_and_tiled(dev, n):
    with dev:
        A, B = _rng().random((n, n + 3), dtype=np.float32), _rng(3).random((n + 3, n - 5), dtype=np.float32)
        expect = A.astype(np.float64) @ B.astype(np.float64)
        dA, dB = cuda.to_device(A), cuda.to_device(B)
        C = cuda.device_array((n, n - 5), dtype=np.float32)
        blocks = ((n + TPB - 1) // TPB, (n - 5 + TPB - 1) // TPB)
        matmul_naive[blocks, (TPB, TPB)](dA, dB, C)
        np.testing.assert_allclose(C.copy_to_host(), expect, rtol=1e-5)
        C2 = cuda.device_array((n, n - 5), dtype=np.float32)
        matmul_tiled[(blocks[1], blocks[0]), (TPB, TPB)](dA, dB, C2)
        np.testing.assert_allclose(C2.copy_to_host(), expect, rtol=1e-5)


def test_streams(dev):
    with dev:
        n = 1 << 15
        xs = [_rng(i).random(n, dtype=np.float32) for i in range(3)]
        streams = [cuda.stream() for _ in xs]
        outs = []
        for x, s in zip(xs, streams):
            dx = cuda.to_device(x, stream=s)
            dout = cuda.device_array_like(dx)
            add_kernel[(n + 127) // 128, 128, s](dx, dx, dout)
            host = cuda.pinned_array(n, dtype=np.float32)
            dout.copy_to_host(host, stream=s)
            outs.append(host)
        for s in streams:
            s.synchronize()
        for x, out in zip(xs, outs):
            np.testing.assert_array_equal(out, x + x)
        start, end = cuda.event(), cuda.event()
        start.record(streams[0])
        add_kernel[1, 32, streams[0]](xs[0][:32].copy(), xs[1][:32].copy(), np.zeros(32, np.float32))
        end.record(streams[0])
        end.synchronize()
        assert cuda.event_elapsed_time(start, end) >= 0
        out = np.zeros(32, np.float32)
        with streams[1].auto_synchronize():
            add_kernel[1, 32, cuda.default_stream()](xs[0][:32].copy(), xs[1][:32].copy(), out)
        np.testing.assert_array_equal(out, xs[0][:32] + xs[1][:32])


def test_mapped_memory(dev):
    with dev:
        a = cuda.mapped_array(1000, dtype=np.float32)
        a[:] = np.arange(1000, dtype=np.float32)
        out = cuda.mapped_array(1000, dtype=np.float32)
        add_kernel[4, 256](a, a, out)
        cuda.synchronize()
        np.testing.assert_array_equal(out, 2 * np.arange(1000, dtype=np.float32))
        a[:10] = 7                         # the host writes, the next launch sees it
        add_kernel[4, 256](a, a, out)
        assert out[0] == 14 and out[10] == 20


# ---- the constructs, one kernel each, against NumPy ------------------------------------------

@cuda.jit
def typing_kernel(x, out64, outi):
    i = cuda.grid(1)
    if i < x.size:
        out64[i] = x[i] * 0.1               # float32 * a float literal: float64, as in Numba
        outi[i] = x[i] * 3 // 2              # floor division of float64


def test_numba_typing(dev):
    with dev:
        x = (_rng().random(1000, dtype=np.float32) - 0.5) * 100
        out64, outi = np.zeros(1000), np.zeros(1000, np.int64)
        typing_kernel[4, 256](x, out64, outi)
        np.testing.assert_array_equal(out64, x.astype(np.float64) * 0.1)
        np.testing.assert_array_equal(outi, np.floor(x.astype(np.float64) * 3 / 2).astype(np.int64))


@cuda.jit
def int_ops(a, b, q, r, s, bits):
    i = cuda.grid(1)
    if i < a.size:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        s[i] = -a[i] ** 2 + abs(a[i]) + min(a[i], b[i], 3) + max(a[i], b[i])
        bits[i] = (a[i] & 0xff) | (b[i] << 2) ^ (~a[i] >> 1)


def test_integer_semantics(dev):
    with dev:
        a = _rng().integers(-1000, 1000, 4096).astype(np.int32)
        b = _rng(1).integers(-20, 20, 4096).astype(np.int32)
        q, r, s, bits = (np.zeros(4096, np.int64) for _ in range(4))
        int_ops[16, 256](a, b, q, r, s, bits)
        a64, b64 = a.astype(np.int64), b.astype(np.int64)
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal(q, np.floor_divide(a64, b64))   # Python's floor, x // 0 gives 0
            np.testing.assert_array_equal(r, np.mod(a64, b64))
        np.testing.assert_array_equal(s, -a64 ** 2 + np.abs(a64) + np.minimum(np.minimum(a64, b64), 3)
                                      + np.maximum(a64, b64))
        np.testing.assert_array_equal(bits, (a64 & 0xff) | (b64 << 2) ^ (~a64 >> 1))


@cuda.jit
def float_ops(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[0, i] = math.sqrt(abs(v)) + math.exp(-v * v)
        out[1, i] = math.sin(v) * math.cos(y[i]) + math.atan2(v, y[i])
        out[2, i] = math.log(1 + abs(v)) + math.tanh(v) + math.pow(abs(v), 1.5)
        out[3, i] = v % y[i] if y[i] != 0 else 0
        out[4, i] = round(v * 3) + int(v * 7) + math.floor(v) + math.ceil(v)
        out[5, i] = 1.0 if math.isnan(v / y[i]) else 0.0
        out[6, i] = v ** 2 + y[i] ** 3 + abs(v) ** 0.5
        out[7, i] = math.pi * float(i) + math.hypot(v, y[i]) + math.fabs(math.trunc(v))


def test_float_math(dev):
    with dev:
        n = 2048
        x = (_rng().random(n) - 0.5) * 8
        y = (_rng(1).random(n) - 0.5) * 8
        x[:4], y[:4] = [0, 1.5, -2.5, 2.5], [0, 0.5, 0.25, -1]
        out = np.zeros((8, n))
        float_ops[8, 256](x, y, out)
        idx = np.arange(n)
        with np.errstate(invalid="ignore", divide="ignore"):
            expect = [np.sqrt(np.abs(x)) + np.exp(-x * x), np.sin(x) * np.cos(y) + np.arctan2(x, y),
                      np.log(1 + np.abs(x)) + np.tanh(x) + np.abs(x) ** 1.5, np.where(y != 0, np.mod(x, y), 0),
                      np.round(x * 3) + np.trunc(x * 7) + np.floor(x) + np.ceil(x),
                      np.isnan(x / y).astype(float), x ** 2 + y ** 3 + np.abs(x) ** 0.5,
                      np.pi * idx + np.hypot(x, y) + np.abs(np.trunc(x))]
        for k, e in enumerate(expect):
            np.testing.assert_allclose(out[k], e, rtol=1e-12, atol=1e-12, err_msg="row %d" % k)


@cuda.jit(device=True)
def collatz_steps(v):
    steps = 0
    while v != 1 and steps < 1000:
        if v % 2 == 0:
            v //= 2
        elif v > 10 ** 6:
            break
        else:
            v = 3 * v + 1
        steps += 1
    return steps


@cuda.jit
def control_flow(x, out):
    i, j, k = cuda.grid(3)
    n = x.shape[0]
    if i >= n or j >= x.shape[1] or k >= x.shape[2]:
        return
    steps = collatz_steps(x[i, j, k])
    total = 0
    for t in range(10, 0, -3):
        if t == 4:
            continue
        total += t
    a, b = steps, total
    a, b = b, a                          # swaps: both values are read first
    out[i, j, k] = a * 10000 + b if 0 <= i < n else -1


def test_control_flow(dev):
    collatz = collatz_steps.py_func  # the same function, run by Python itself: the reference
    with dev:
        x = _rng().integers(1, 5000, (5, 6, 7)).astype(np.int64)
        out = np.zeros_like(x)
        control_flow[(2, 2, 2), (4, 4, 4)](x, out)
        expect = np.vectorize(collatz)(x) + (10 + 7 + 1) * 10000
        np.testing.assert_array_equal(out, expect)


@cuda.jit
def indices_kernel(out):
    x, y = cuda.grid(2)
    w, h = cuda.gridsize(2)
    if x < out.shape[1] and y < out.shape[0]:
        out[y, x, 0] = cuda.threadIdx.x + 10 * cuda.threadIdx.y
        out[y, x, 1] = cuda.blockIdx.x + 10 * cuda.blockIdx.y
        out[y, x, 2] = cuda.blockDim.x + 10 * cuda.blockDim.y + 100 * cuda.blockDim.z
        out[y, x, 3] = cuda.gridDim.x + 10 * cuda.gridDim.y
        out[y, x, 4] = w + 1000 * h
        out[y, x, -1] = out.ndim + OFFSETS[2]       # a negative index counts from the end


def test_thread_indices(dev):
    with dev:
        out = cuda.device_array((12, 10, 6), dtype=np.int32)
        indices_kernel[(3, 4), (4, 3)](out)
        o = out.copy_to_host()
        y, x = np.mgrid[0:12, 0:10]
        np.testing.assert_array_equal(o[..., 0], x % 4 + 10 * (y % 3))
        np.testing.assert_array_equal(o[..., 1], x // 4 + 10 * (y // 3))
        assert (o[..., 2] == 4 + 30 + 100).all() and (o[..., 3] == 3 + 40).all()
        assert (o[..., 4] == 12 + 12000).all() and (o[..., 5] == 3 + 3).all()


@cuda.jit(device=True)
def clamp(v, lo, hi):
    return max(lo, min(v, hi))


@cuda.jit(device=True)
def row_sum(a, row):
    s = 0.0
    for j in range(a.shape[1]):
        s += a[row, j]
    return s


@cuda.jit
def device_functions(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        scratch = cuda.local.array(4, dtype=np.float64)
        for k in range(4):
            scratch[k] = clamp(a[i, k], 0.25, 0.75)
        out[i] = row_sum(a, i) + scratch[0] + scratch[1] + scratch[2] + scratch[3]


def test_device_functions_and_local_arrays(dev):
    with dev:
        a = _rng().random((300, 5))
        out = np.zeros(300)
        device_functions[2, 256](a, out)
        np.testing.assert_allclose(out, a.sum(1) + np.clip(a[:, :4], 0.25, 0.75).sum(1), rtol=1e-13)


@cuda.jit
def atomics(i32, u32, i64, u64, f32, f64, old, one):
    i = cuda.grid(1)
    if i < 1000:
        v = i % 50
        cuda.atomic.add(i32, 0, v)
        cuda.atomic.sub(i32, 1, v)
        cuda.atomic.max(i32, 2, v)
        cuda.atomic.min(i32, 3, v - 7)
        cuda.atomic.and_(u32, 0, ~(1 << (i % 32)))
        cuda.atomic.or_(u32, 1, 1 << (i % 20))
        cuda.atomic.xor(u32, 2, i)
        cuda.atomic.inc(u32, 3, 9)
        cuda.atomic.dec(u32, 4, 9)
        cuda.atomic.add(i64, 0, v * 10 ** 10)
        cuda.atomic.max(i64, 1, -v * 10 ** 10)
        cuda.atomic.min(u64, 0, v + 5)
        cuda.atomic.add(u64, 1, v)
        cuda.atomic.add(f32, 0, 0.5)
        cuda.atomic.max(f32, 1, v * 0.25)
        cuda.atomic.min(f64, 0, v * -0.5)
        cuda.atomic.add(f64, 1, 0.25)
        cuda.atomic.sub(f64, 2, 0.5)
        cuda.atomic.exch(i64, 2, 77)
        old[i] = cuda.atomic.cas(i32, 4, i, i + 1)      # succeeds only when it holds i: a chain from 0
        cuda.atomic.compare_and_swap(one, 0, i + 10)    # only the first thread finds 0


def test_atomics(dev):
    with dev:
        i32, u32 = np.array([0, 0, -1, 100, 0], np.int32), np.array([0xffffffff, 0, 0, 0, 0], np.uint32)
        i64, u64 = np.array([0, 0, 0], np.int64), np.array([100, 0], np.uint64)
        f32, f64 = np.array([0, -1], np.float32), np.array([0, 0, 0], np.float64)
        old, one = np.zeros(1000, np.int32), np.zeros(1, np.uint64)
        atomics[4, 256](i32, u32, i64, u64, f32, f64, old, one)
        v = np.arange(1000) % 50
        assert list(i32[:4]) == [v.sum(), -v.sum(), 49, -7]
        assert u32[0] == 0 and u32[1] == (1 << 20) - 1 and u32[2] == np.bitwise_xor.reduce(np.arange(1000))
        assert u32[3] == 1000 % 10                      # inc wraps to 0 past 9, dec from 0 to 9
        assert u32[4] == (-1000) % 10
        assert i64[0] == v.sum() * 10 ** 10 and i64[1] == 0 and i64[2] == 77
        assert u64[0] == 5 and u64[1] == v.sum() and 10 <= one[0] < 1010
        assert f32[0] == 500 and f32[1] == 49 * 0.25
        assert f64[0] == -49 * 0.5 and f64[1] == 250 and f64[2] == -500
        k = i32[4]                          # the threads that found their own index made a chain from 0
        assert k >= 1 and (old[:k] == np.arange(k)).all() and (old[k:] != np.arange(k, 1000)).all()


@cuda.jit
def dynamic_shared(x, out):
    buf = cuda.shared.array(0, dtype=np.float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    if i < x.size:
        out[i] = buf[buf.size - 1 - t]


def test_dynamic_shared_memory(dev):
    with dev:
        x = np.arange(512, dtype=np.float64)
        out = np.zeros(512)
        dynamic_shared[4, 128, 0, 128 * 8](x, out)
        np.testing.assert_array_equal(out, x.reshape(4, 128)[:, ::-1].ravel())


@cuda.jit
def copy_2d(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j]


def test_views_strided_and_offset(dev):
    with dev:
        h = _rng().random((40, 30))
        d = gp.asarray(h)
        for view, expect in ((d[3:, 5:], h[3:, 5:]), (d.T, h.T), (d[::2, ::3], h[::2, ::3]),
                             (d[1:-1, :], h[1:-1, :])):
            out = cuda.device_array(view.shape)
            copy_2d[(4, 4), (16, 16)](view, out)
            np.testing.assert_array_equal(out.copy_to_host(), expect)
        host = h[::3]                               # a strided NumPy array too
        out = np.zeros(host.shape)
        copy_2d[(4, 4), (16, 16)](host, out)
        np.testing.assert_array_equal(out, host)


@cuda.jit("void(float32[::1], float32, int32)")
def eager_axpy(x, a, n):
    i = cuda.grid(1)
    if i < n:
        x[i] = a * x[i] + 1


@cuda.jit(fastmath=True)
def fast_sin(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = math.sin(x[i]) + math.exp(x[i] / float32(4))


def test_eager_signature_and_fastmath(dev):
    with dev:
        x = np.arange(100, dtype=np.float32)
        eager_axpy[1, 128](x, 2, 100)               # 2 and 100 become the signature's float32 and int32
        np.testing.assert_array_equal(x, 2 * np.arange(100, dtype=np.float32) + 1)
        with pytest.raises(TypeError, match="no signature of eager_axpy matches"):
            eager_axpy[1, 128](np.zeros(4), 2, 4)
        y = np.linspace(-3, 3, 1000).astype(np.float32)
        out = np.zeros_like(y)
        fast_sin[4, 256](y, out)
        np.testing.assert_allclose(out, np.sin(y) + np.exp(y / 4), atol=2e-5, rtol=1e-5)


def test_cuda_array_interface(dev):
    if dev.backend != "cuda":
        pytest.skip("__cuda_array_interface__ is CUDA's")
    with dev:
        x = gp.arange(64, dtype=np.float32)

        class Foreign:                  # another library's device array, used in place
            __cuda_array_interface__ = x.__cuda_array_interface__
        out = cuda.device_array(64, dtype=np.float32)
        add_kernel[1, 64](Foreign(), x, out)
        np.testing.assert_array_equal(out.copy_to_host(), 2 * np.arange(64, dtype=np.float32))


@cuda.jit
def sin(new, half):                 # names C, C++ or OpenCL keep for themselves
    int = cuda.grid(1)
    if int < new.size:
        double = half * 2
        new[int] = double + math.sin(new[int])


def test_python_names_that_c_reserves(dev):
    with dev:
        x = np.linspace(0, 1, 50)
        sin[1, 64](x, 1.5)
        np.testing.assert_allclose(x, 3 + np.sin(np.linspace(0, 1, 50)), rtol=1e-14)


def test_source_is_readable_and_cached(dev):
    with dev:
        add_kernel[1, 32](np.zeros(8, np.float32), np.ones(8, np.float32), np.zeros(8, np.float32))
        sources = [s for (spec, _), s in add_kernel.inspect_source().items() if spec == dev.spec]
        assert sources and "GP_KERNEL void add_kernel(GP_GLOBAL float *x" in sources[0]
        assert "out[idx] = (x[idx] + y[idx]);" in sources[0]


def test_second_process_compiles_nothing(dev, tmp_path):
    script = tmp_path / "vector_add.py"
    script.write_text("import numpy as np\nfrom gpuport import cuda\n\n\n@cuda.jit\ndef add(x, out):\n"
                      "    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = x[i] + 1\n\n\n"
                      "out = np.zeros(10)\nadd[1, 32](np.arange(10.0), out)\nassert (out == np.arange(1, 11)).all()\n")
    env = dict(os.environ, GPUPORT_CACHE_DIR=str(tmp_path / "cache"), GPUPORT_DEVICE=dev.spec, GPUPORT_DEBUG="compile")
    first, second = (subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
                     for _ in range(2))
    assert first.returncode == 0 and "%s built in" % dev.spec in first.stderr, first.stderr
    assert second.returncode == 0 and "%s loaded from cache" % dev.spec in second.stderr, second.stderr
    assert " built in " not in second.stderr and "built for" not in second.stderr


# ---- what is refused, and how -----------------------------------------------------------------

def _kernel_list(out):
    a = [1, 2]
    out[0] = a[0]


def _kernel_unknown(out):
    out[0] = np.linalg.norm(out)


@cuda.jit(device=True)
def _recurse(n):
    return 1 if n <= 1 else n * _recurse(n - 1)


def _kernel_recursion(out):
    out[0] = _recurse(5)


def _kernel_grid4(out):
    out[0] = cuda.grid(4)


def _kernel_slice(out):
    out[0] = out[1:3]


def _kernel_warp(out):
    out[0] = cuda.warpsize


def _kernel_return(out):
    return out[0]


def _kernel_string(out):
    out[0] = len("abc")


def _kernel_big_shared(out):
    s = cuda.shared.array(1 << 24, dtype=np.float64)
    s[0] = 1
    out[0] = s[0]


@pytest.mark.parametrize("fn, message", [
    (_kernel_list, r"test_numba.py:\d+: in _kernel_list: a Python list is not supported"),
    (_kernel_unknown, r"in _kernel_unknown: numpy.norm is not supported|unknown function norm"),
    (_kernel_recursion, r"_recurse calls itself"),
    (_kernel_grid4, r"cuda.grid\(n\) takes n = 1, 2 or 3"),
    (_kernel_slice, r"slices of arrays are not supported"),
    (_kernel_warp, r"warp intrinsics are not supported"),
    (_kernel_return, r"a kernel returns nothing"),
    (_kernel_string, r"strings are not supported"),
])
def test_refused_with_file_line_and_construct(dev, fn, message):
    with dev:
        k = cuda.jit(fn)
        with pytest.raises(cuda.TypingError, match=message) as e:
            k[1, 1](np.zeros(4))
        assert "\n    " in str(e.value)            # the offending line is quoted


def test_refused_launches_and_arguments(dev):
    with dev:
        x = np.zeros(8, np.float32)
        with pytest.raises(TypeError, match="add_kernel takes 3 arguments, 2 given"):
            add_kernel[1, 8](x, x)
        with pytest.raises(TypeError, match="argument 1 of add_kernel is a str"):
            add_kernel[1, 8](x, "y", x)
        with pytest.raises(TypeError, match="complex128 are not supported"):
            add_kernel[1, 8](x, x, np.zeros(8, np.complex128))
        with pytest.raises(TypeError, match="launch it with a shape"):
            add_kernel(x, x, x)
        with pytest.raises(ValueError, match="threads must be a positive integer"):
            add_kernel[1, 0](x, x, x)
        with pytest.raises(ValueError, match="4 dimensions"):
            add_kernel[1, (1, 1, 1, 1)](x, x, x)
        with pytest.raises(ValueError, match="threads in a block .* more than"):
            add_kernel[1, dev.info["max_work_group_size"] * 2](x, x, x)
        with pytest.raises(ValueError, match="shared memory .* more than"):
            cuda.jit(_kernel_big_shared)[1, 1](x)
        with pytest.raises(ValueError, match="shared memory .* dynamic"):
            dynamic_shared[1, 128, 0, 1 << 30](np.zeros(128), np.zeros(128))
        with pytest.raises(TypeError, match="can only be used inside a @cuda.jit function"):
            cuda.grid(1)
