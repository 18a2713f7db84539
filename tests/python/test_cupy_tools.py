"""CuPy's tools that lessons use, on every device: cupyx.profiler.benchmark's times and report,
the memory pool's accounting, OutOfMemoryError, pinned memory and the device count."""
import csv
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import gpuport as gp
from gpuport import cuda
from gpuport.profiler import benchmark


def test_benchmark_times_and_report(dev):
    with dev:
        x = gp.arange(1 << 16, dtype=np.float32)
        calls = []

        def work(a, scale=1.0):
            calls.append(1)
            return gp.sin(a) * scale

        r = benchmark(work, (x,), {"scale": 2.0}, n_repeat=7, n_warmup=3)
        assert len(calls) == 10 and r.cpu_times.shape == (7,) and r.gpu_times.shape == (1, 7)
        assert (r.cpu_times > 0).all() and (r.gpu_times > 0).all()
        number = r"\s*[0-9.]+"
        line = (r"work {16}:    CPU:%s us   \+/-%s \(min:%s / max:%s\) us     GPU-%d:%s us   \+/-%s \(min:%s / "
                r"max:%s\) us" % ((number,) * 4 + (dev.id,) + (number,) * 4))
        assert re.fullmatch(line, str(r)), str(r)
        quick = benchmark(work, (x,), n_repeat=10 ** 6, max_duration=0.05, name="capped")
        assert 0 < quick.cpu_times.size < 10 ** 6 and str(quick).startswith("capped")


def test_memory_pool_accounting(dev):
    with dev:
        gp.free_memory()
        pool = gp.get_default_memory_pool()
        used = pool.used_bytes()
        a = gp.empty(1000, np.float32)            # 4000 bytes, rounded up to 4096
        b = gp.empty(10 ** 5, np.float64)
        assert pool.used_bytes() == used + 4096 + 800256
        del a
        assert pool.used_bytes() == used + 800256 and pool.free_bytes() >= 4096 and pool.n_free_blocks() >= 1
        assert pool.total_bytes() == pool.used_bytes() + pool.free_bytes()
        pool.free_all_blocks()
        assert pool.free_bytes() == 0 and pool.total_bytes() == pool.used_bytes()
        del b
        assert pool.used_bytes() == used


def test_out_of_memory_error(dev):
    with dev:
        with pytest.raises(cuda.memory.OutOfMemoryError) as e:
            gp.empty(dev.info["global_mem_bytes"] // 4 + 1024, np.float64)
        assert isinstance(e.value, MemoryError) and isinstance(e.value, gp.GpuportError)
        assert gp.OutOfMemoryError is cuda.memory.OutOfMemoryError


def test_pinned_memory_and_device_count(dev):
    assert cuda.runtime.getDeviceCount() == len(gp.devices())
    with dev:
        mem = cuda.alloc_pinned_memory(4 * 1000)
        host = np.frombuffer(mem, np.float32, 1000)
        host[:] = np.arange(1000)
        d = gp.asarray(host)
        host[:] = 0
        d.get(out=host)
        np.testing.assert_array_equal(host, np.arange(1000, dtype=np.float32))


@cuda.jit
def _twice(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 2 * x[i]


def test_streams_and_events_as_cupy_writes_them(dev):
    with dev:
        n = 1 << 20
        s1, s2 = cuda.Stream(), cuda.Stream()
        x = gp.arange(n, dtype=np.float32)
        y, z = gp.empty_like(x), gp.empty_like(x)
        _twice[n // 256, 256, s1](x, y)
        done = s1.record()                  # a new event, recorded on s1
        s2.wait_event(done)                 # s2's next work waits for it
        _twice[n // 256, 256, s2](y, z)
        s2.synchronize()
        np.testing.assert_array_equal(z.get(), 4 * np.arange(n, dtype=np.float32))
        e = cuda.Event()
        assert cuda.Stream.null.record(e) is e
        cuda.Stream.null.wait_event(done)
        cuda.Stream.null.synchronize()
        assert cuda.get_elapsed_time(done, done) == 0


_CURRENT_STREAM = """
import numpy as np, gpuport as gp
with gp.device(%r):
    x = gp.arange(1000, dtype=np.float32)
    s = gp.cuda.Stream(non_blocking=True)
    y = x * 2                                         # the default stream
    with s:
        assert gp.cuda.get_current_stream() is s
        z = x * 3                                     # s
        with gp.cuda.Stream.null:
            v = x - 1                                 # the default stream again
        k = gp.ElementwiseKernel("T x", "T y", "y = x + 5", "add5")
        u = k(x)                                      # s
    assert gp.cuda.get_current_stream() is gp.cuda.Stream.null
    s.use()
    w = x + 1                                         # s
    gp.cuda.Stream.null.use()
    s.synchronize()
    assert [a.get()[1] for a in (y, z, v, u, w)] == [2, 3, 0, 6, 2]
"""


def test_current_stream(dev, tmp_path):
    """Work given no stream runs on the current one; GPUPORT_TRACE names each kernel's stream."""
    trace = tmp_path / "trace.csv"
    run = subprocess.run([sys.executable, "-c", _CURRENT_STREAM % dev.spec], capture_output=True, text=True,
                         env=dict(os.environ, GPUPORT_TRACE=str(trace)))
    assert run.returncode == 0, run.stderr
    rows = sorted((r for r in csv.DictReader(open(trace)) if r["command"] == "kernel"), key=lambda r: int(r["seq"]))
    assert [r["stream"] != "0" for r in rows] == [False, False, True, False, True, True]  # arange first


def test_concatenate_stack_and_testing(dev):
    with dev:
        rng = np.random.default_rng(5)
        a, b = rng.random((3, 4)), rng.random((2, 4)).astype(np.float32)
        c = rng.integers(0, 9, (3, 5)).astype(np.int32)
        ga, gb, gc = (gp.asarray(v) for v in (a, b, c))
        for got, want in ((gp.concatenate([ga, gb]), np.concatenate([a, b])),
                          (gp.concatenate([ga, gc], axis=1), np.concatenate([a, c], axis=1)),
                          (gp.concatenate([ga, gb], axis=None), np.concatenate([a, b], axis=None)),
                          (gp.concatenate([ga, b], axis=-2), np.concatenate([a, b], axis=-2)),
                          (gp.stack([ga, ga * 2], axis=1), np.stack([a, a * 2], axis=1)),
                          (gp.vstack([ga[0], gb]), np.vstack([a[0], b])),
                          (gp.hstack([ga, gc]), np.hstack([a, c])),
                          (gp.hstack([ga[0], gc[1]]), np.hstack([a[0], c[1]]))):
            assert isinstance(got, gp.Array) and got.dtype == want.dtype
            gp.testing.assert_array_equal(got, want)
        gp.testing.assert_allclose(gp.concatenate([ga, gb], dtype=np.float32), np.concatenate([a, b]).astype(np.float32))
        with pytest.raises(ValueError, match="along dimension 1, the array at index 0 has size 4 and the array at "
                                             "index 1 has size 5"):
            gp.concatenate([ga, gc])
        with pytest.raises(ValueError, match="zero-dimensional arrays cannot be concatenated"):
            gp.concatenate([ga[0, 0], ga[0, 1]])
        with pytest.raises(ValueError, match="same shape"):
            gp.stack([ga, gb])
        with pytest.raises(AssertionError):
            gp.testing.assert_allclose(ga, a + 1e-3)
        assert gp.get_array_module(ga, a) is gp and gp.get_array_module(a) is np
