#!/usr/bin/env python3
"""The workshop's Numba kernels, timed three ways on each device in one run: written in Python
and translated by gpuport (`from gpuport import cuda`), written by hand in the kernel dialect, and,
on an NVIDIA GPU where Numba is installed, by Numba itself. Device events time each launch; the
first run is dropped; every result is checked against NumPy. Prints the median and minimum of the
runs in ms and the ratios (gpuport's Python kernel against the hand-written one and against Numba),
then the first launch's compile time and a cached launch's host cost.

    python3 bench/numba-kernels.py [--device cuda:0] [--reps 20] [--quick]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import gpuport as gp
from gpuport import cuda, float32

TPB = 16


def kernels(cuda, float32):
    """The kernels as the workshop writes them, for gpuport's cuda or Numba's."""
    @cuda.jit
    def add(x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = x[i] + y[i]

    @cuda.jit
    def max_global(values, result):
        i = cuda.grid(1)
        if i < values.size:
            cuda.atomic.max(result, 0, values[i])

    @cuda.jit
    def max_block(values, result):
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
    def matmul(A, B, C):
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
    return {"add": add, "max_global": max_global, "max_block": max_block, "matmul": matmul,
            "matmul_tiled": matmul_tiled}


# The same kernels written by hand in the dialect, as a C programmer would write them.
DIALECT = r"""
GP_KERNEL void add(GP_GLOBAL const float *x, GP_GLOBAL const float *y, GP_GLOBAL float *out, long n)
{
    long i = gp_global_id(0);
    if (i < n)
        out[i] = x[i] + y[i];
}

GP_FUNC void atomic_max_f(GP_GLOBAL float *p, float v)
{
    GP_GLOBAL int *q = (GP_GLOBAL int *)p;
    int old = *q, seen;
    do {
        seen = old;
        if (!(v > AS_FLOAT(seen))) break;
        old = gp_atomic_cas(q, seen, AS_INT(v));
    } while (old != seen);
}

GP_FUNC void atomic_max_lf(GP_LOCAL_PTR(float) p, float v)
{
    GP_LOCAL_PTR(int) q = (GP_LOCAL_PTR(int))p;
    int old = *q, seen;
    do {
        seen = old;
        if (!(v > AS_FLOAT(seen))) break;
        old = gp_atomic_cas(q, seen, AS_INT(v));
    } while (old != seen);
}

GP_KERNEL void max_global(GP_GLOBAL const float *values, GP_GLOBAL float *result, long n)
{
    long i = gp_global_id(0);
    if (i < n)
        atomic_max_f(result, values[i]);
}

GP_KERNEL void max_block(GP_GLOBAL const float *values, GP_GLOBAL float *result, long n)
{
    GP_LOCAL float best[1];
    uint t = gp_local_id(0);
    long i = gp_global_id(0);
    if (t == 0)
        best[0] = -GP_INFINITY_F;
    gp_barrier();
    if (i < n)
        atomic_max_lf(best, values[i]);
    gp_barrier();
    if (t == 0)
        atomic_max_f(result, best[0]);
}

GP_KERNEL void matmul(GP_GLOBAL const float *A, GP_GLOBAL const float *B, GP_GLOBAL float *C, long n)
{
    long i = gp_global_id(0), j = gp_global_id(1);
    if (i < n && j < n) {
        double tmp = 0.;
        for (long k = 0; k < n; k++)
            tmp += A[i * n + k] * B[k * n + j];
        C[i * n + j] = tmp;
    }
}

#define TPB 16
GP_KERNEL void matmul_tiled(GP_GLOBAL const float *A, GP_GLOBAL const float *B, GP_GLOBAL float *C, long n)
{
    GP_LOCAL float sA[TPB][TPB], sB[TPB][TPB];
    long x = gp_global_id(0), y = gp_global_id(1);
    uint tx = gp_local_id(0), ty = gp_local_id(1);
    float tmp = 0.0f;
    for (long t = 0; t < (n + TPB - 1) / TPB; t++) {
        sA[ty][tx] = y < n && tx + t * TPB < n ? A[y * n + tx + t * TPB] : 0;
        sB[ty][tx] = x < n && ty + t * TPB < n ? B[(ty + t * TPB) * n + x] : 0;
        gp_barrier();
        for (int k = 0; k < TPB; k++)
            tmp += sA[ty][k] * sB[k][tx];
        gp_barrier();
    }
    if (y < n && x < n)
        C[y * n + x] = tmp;
}
"""
BITS = """
#if GP_BACKEND_OPENCL
#define AS_FLOAT(i) as_float(i)
#define AS_INT(f) as_int(f)
#else
#define AS_FLOAT(i) __int_as_float(i)
#define AS_INT(f) __float_as_int(f)
#endif
"""


def timed(launches, reps, start, end, sync):
    """Device milliseconds of each launch, (median, min) for each of launches, taken in turn run by
    run so that a shared machine's drift falls on each alike; the first run is dropped."""
    times = [[] for _ in launches]
    for r in range(reps + 1):
        for launch, t in zip(launches, times):
            start.record()
            launch()
            end.record()
            sync()
            if r:
                t.append(start.elapsed_time(end))
    return [(statistics.median(t), min(t)) for t in times]


def workloads(dev, quick):
    cpu = dev.type == "cpu"
    n_add = 1 << (22 if quick else 24 if cpu else 26)
    sizes = [128] if quick else [256, 512] if cpu else [1024, 2048, 4096]
    out = [("add", n_add), ("max_global", 1 << (16 if quick else 20)), ("max_block", 1 << (16 if quick else 20))]
    return out + [(k, n) for n in sizes for k in ("matmul", "matmul_tiled")]


def data(name, n):
    rng = np.random.default_rng(1)
    if name == "add":
        x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        return [x, y, np.zeros(n, np.float32)], x + y, 2
    if name.startswith("max"):
        v = rng.standard_normal(n).astype(np.float32)
        return [v, np.array([-np.inf], np.float32)], v.max(), 1
    A, B = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    return [A, B, np.zeros((n, n), np.float32)], None, 2


def shape(name, n):
    if name in ("add", "max_global", "max_block"):
        return ((n + 255) // 256,), (256,)
    return ((n + TPB - 1) // TPB,) * 2, (TPB, TPB)


def check(name, got, expect, A=None, B=None):
    if name.startswith("matmul"):
        rows = np.arange(0, A.shape[0], max(1, A.shape[0] // 64))
        ref = A[rows].astype(np.float64) @ B.astype(np.float64)
        ok = np.allclose(got[rows], ref, rtol=1e-4)
    elif name.startswith("max"):
        ok = got[0] == expect
    else:
        ok = np.array_equal(got, expect)
    if not ok:
        raise SystemExit("numba-kernels: %s gave a wrong result" % name)


def run_device(dev, reps, quick, numba_cuda):
    ours = kernels(cuda, float32)
    prog = gp.Program(BITS + DIALECT, device=dev)
    rows = []
    for name, n in workloads(dev, quick):
        host, expect, nout = data(name, n)
        blocks, threads = shape(name, n)
        with dev:
            dargs = [gp.asarray(a) for a in host]
            start, end = cuda.event(), cuda.event()
            k = ours[name]
            out = dargs[nout]

            hk = prog.kernel(name)
            gsize = tuple(b * t for b, t in zip(blocks, threads))
            run_py = lambda: k[blocks, threads](*dargs)  # noqa: E731
            run_c = lambda: hk(*dargs, n, global_size=gsize, local_size=threads)  # noqa: E731
            t_py, t_c = timed([run_py, run_c], reps, start, end, dev.synchronize)
            for run in (run_py, run_c):  # each checked on its own
                out[...] = -np.inf if name.startswith("max") else 0
                run()
                check(name, out.get(), expect, *host[:2] if name.startswith("matmul") else ())
        t_nb = None
        if numba_cuda is not None:
            nk = numba_cuda[0][name]
            nc = numba_cuda[1]
            nargs = [nc.to_device(a) for a in host]
            s, e = nc.event(), nc.event()
            t_nb, = timed([lambda: nk[blocks, threads](*nargs)], reps, s, e, nc.synchronize)
            check(name, nargs[nout].copy_to_host(), expect, *host[:2] if name.startswith("matmul") else ())
        rows.append((name, n, t_py, t_c, t_nb))
    return rows


COMPILE = r"""
import sys, time
import numpy as np
if sys.argv[1] == "numba":
    np.row_stack = getattr(np, "row_stack", np.vstack)
    from numba import cuda
    from numba import float32
else:
    import gpuport as gp
    from gpuport import cuda, float32
    gp.Device(sys.argv[2]).use()
sys.path.insert(0, sys.argv[3])
import importlib.util
spec = importlib.util.spec_from_file_location("nk", sys.argv[3] + "/numba-kernels.py")
nk = importlib.util.module_from_spec(spec); spec.loader.exec_module(nk)
k = nk.kernels(cuda, float32)["matmul_tiled"]
A = cuda.to_device(np.ones((64, 64), np.float32)); C = cuda.device_array((64, 64), np.float32)
t = time.perf_counter(); k[(4, 4), (16, 16)](A, A, C); cuda.synchronize(); first = time.perf_counter() - t
small = nk.kernels(cuda, float32)["add"]
x = cuda.to_device(np.ones(1024, np.float32)); o = cuda.device_array(1024, np.float32)
small[4, 256](x, x, o); cuda.synchronize()
n = 3000
t = time.perf_counter()
for _ in range(n):
    small[4, 256](x, x, o)
host = (time.perf_counter() - t) / n
cuda.synchronize()
print("%.1f %.2f" % (first * 1e3, host * 1e6))
"""


def compile_and_launch(which, spec, cache):
    env = dict(os.environ, GPUPORT_CACHE_DIR=cache)
    r = subprocess.run([sys.executable, "-c", COMPILE, which, spec, os.path.dirname(os.path.abspath(__file__))],
                       env=env, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("numba-kernels: the compile run failed:\n" + r.stderr)
    return [float(v) for v in r.stdout.split()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", action="append", help="a device (default: every device)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="small sizes, to check that it runs")
    a = ap.parse_args()
    devs = [gp.Device(s) for s in a.device] if a.device else gp.devices()
    numba = None
    try:
        np.row_stack = getattr(np, "row_stack", np.vstack)  # that Numba still names it; NumPy 2.5 removed it
        from numba import cuda as ncuda, float32 as nf32
        if ncuda.is_available():
            numba = (kernels(ncuda, nf32), ncuda)
    except ImportError:
        pass
    print("gpuport %s, the workshop's kernels: Python (gpuport.cuda.jit), the dialect by hand%s; "
          "device ms, median (min) of %d runs" % (gp.version(), ", Numba %s" % __import__("numba").__version__
                                                   if numba else "", a.reps))
    print("%-10s %-13s %9s %21s %21s %21s %10s %10s" % ("device", "kernel", "n", "python", "dialect", "numba",
                                                      "py/dialect", "py/numba"))
    for dev in devs:
        nb = numba if dev.backend == "cuda" and "NVIDIA" in dev.name else None
        for name, n, t_py, t_c, t_nb in run_device(dev, a.reps, a.quick, nb):
            fmt = lambda t: "%9.4f (%9.4f)" % t if t else "%21s" % "-"  # noqa: E731
            print("%-10s %-13s %9d %s %s %s %10.3f %10s" % (dev.spec, name, n, fmt(t_py), fmt(t_c), fmt(t_nb),
                                                          t_c[0] / t_py[0], "%.3f" % (t_nb[0] / t_py[0]) if t_nb
                                                          else "-"))
    print("\nfirst launch (translate and compile, empty caches) and a cached launch's host cost:")
    for dev in devs:
        with tempfile.TemporaryDirectory() as cache:
            first, host = compile_and_launch("gpuport", dev.spec, cache)
            again, _ = compile_and_launch("gpuport", dev.spec, cache)
        print("%-10s gpuport: first launch %.1f ms, in a second process %.1f ms; host cost %.2f us a launch"
              % (dev.spec, first, again, host))
        if numba and dev.backend == "cuda" and "NVIDIA" in dev.name:
            first, host = compile_and_launch("numba", dev.spec, "")
            print("%-10s Numba:   first launch %.1f ms; host cost %.2f us a launch" % (dev.spec, first, host))


if __name__ == "__main__":
    main()
