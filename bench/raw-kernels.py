#!/usr/bin/env python3
"""CuPy's kernel classes on each device, and CuPy's own on CUDA devices where CuPy is installed, in
one run: the Carpentries lesson's CUDA C vector add and histogram through RawKernel (and the same
kernels in the dialect, through Program), an ElementwiseKernel, a ReductionKernel over all, the
last and the first axis, SciPy's convolve2d, sort and argsort of 2^24 floats, fft, ifft, rfft and fft2, and linalg's solve,
inv, det, cholesky, qr, svd and eigh of a 1024 by 1024 float64 matrix (gpuport.linalg.solver(dev)
and gpuport.fft.library(dev) name the libraries). Device ms from events, median (min) of the runs after a dropped first one,
results checked.

    python3 bench/raw-kernels.py [--reps 20] [--quick] [--only fft]
"""
import argparse
import statistics

import numpy as np

import gpuport as gp
from gpuport.scipy.signal import convolve2d

VECTOR_ADD = r'''
extern "C" __global__ void vector_add(const float * A, const float * B, float * C, const int size)
{
    int item = (blockIdx.x * blockDim.x) + threadIdx.x;
    if ( item < size )
        C[item] = A[item] + B[item];
}
'''
HISTOGRAM = r'''
extern "C" __global__ void histogram(const int * input, int * output)
{
    int item = (blockIdx.x * blockDim.x) + threadIdx.x;
    __shared__ int temp_histogram[256];
    temp_histogram[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&(temp_histogram[input[item]]), 1);
    __syncthreads();
    atomicAdd(&(output[threadIdx.x]), temp_histogram[threadIdx.x]);
}
'''


def timed(run, reps, event, elapsed):
    times = []
    for r in range(reps + 1):
        start, end = event(), event()
        start.record()
        run()
        end.record()
        end.synchronize()
        if r:
            times.append(elapsed(start, end))
    return statistics.median(times), min(times)


DIALECT = r'''
GP_KERNEL void vector_add(GP_GLOBAL const float *A, GP_GLOBAL const float *B, GP_GLOBAL float *C, const int size)
{
    int item = gp_global_id(0);
    if (item < size)
        C[item] = A[item] + B[item];
}
GP_KERNEL void histogram(GP_GLOBAL const int *input, GP_GLOBAL int *output)
{
    GP_LOCAL int temp_histogram[256];
    int item = gp_global_id(0), t = gp_local_id(0);
    temp_histogram[t] = 0;
    gp_barrier();
    gp_atomic_add(&temp_histogram[input[item]], 1);
    gp_barrier();
    gp_atomic_add(&output[t], temp_histogram[t]);
}
'''
SQDIFF = ("float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "sqdiff")
L2NORM = ("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")


def cases(lib, n, x, y, h, only=""):
    """(name, run, check) of each kernel through lib (gpuport or CuPy), its inputs made there."""
    gx, gy, gz, gh, gout = lib.asarray(x), lib.asarray(y), lib.empty(n, np.float32), lib.asarray(h), \
        lib.zeros(256, np.int32)
    add, hist = lib.RawKernel(VECTOR_ADD, "vector_add"), lib.RawKernel(HISTOGRAM, "histogram")
    sqdiff, l2 = lib.ElementwiseKernel(*SQDIFF), lib.ReductionKernel(*L2NORM)
    m = gx.reshape(n // 2048, 2048)
    side = 2048 if n >= 1 << 22 else 256
    img, k = lib.asarray(x[:side * side].reshape(side, side)), lib.asarray(y[:49].reshape(7, 7))
    s_n = min(n, 1 << 24)
    gs = lib.asarray(x[:s_n])
    conv = convolve2d if lib is gp else __import__("cupyx.scipy.signal").scipy.signal.convolve2d
    out = []
    if lib is gp:
        p = gp.Program(DIALECT)
        dadd, dhist = p.kernel("vector_add"), p.kernel("histogram")
        out += [("vector_add dialect", lambda: dadd(gx, gy, gz, n, global_size=n, local_size=256), None),
                ("histogram dialect", lambda: dhist(gh, gout, global_size=n, local_size=256), None)]
    out += [("vector_add", lambda: add((n // 256,), (256,), (gx, gy, gz, np.int32(n))),
             lambda: np.array_equal(lib.asnumpy(gz), x + y)),
            ("histogram", lambda: hist((n // 256,), (256,), (gh, gout)), None),
            ("Elementwise sqdiff", lambda: sqdiff(gx, gy, gz), lambda: np.array_equal(lib.asnumpy(gz), (x - y) ** 2)),
            ("Reduction l2norm", lambda: l2(gx), lambda: np.isclose(float(l2(gx)), np.linalg.norm(x), rtol=1e-3)),
            ("Reduction axis=1", lambda: l2(m, axis=1), lambda: np.allclose(
                lib.asnumpy(l2(m, axis=1)), np.linalg.norm(x.reshape(-1, 2048), axis=1), rtol=1e-3)),
            ("Reduction axis=0", lambda: l2(m, axis=0), lambda: np.allclose(
                lib.asnumpy(l2(m, axis=0)), np.linalg.norm(x.reshape(-1, 2048), axis=0), rtol=1e-3)),
            ("convolve2d %d^2 7x7" % side, lambda: conv(img, k, mode="same"), None),
            ("sort %d f32" % s_n, lambda: lib.sort(gs), lambda: np.array_equal(lib.asnumpy(lib.sort(gs)), np.sort(x[:s_n]))),
            ("argsort %d f32" % s_n, lambda: lib.argsort(gs), lambda: np.array_equal(
                lib.asnumpy(lib.argsort(gs)), np.argsort(x[:s_n], kind="stable")))]
    return [c for c in out + fft(lib, n) + linalg(lib, 64 if n < 1 << 22 else 1024) if only in c[0]]


def fft(lib, n):
    """The fft cases: n / 16 complex64 and complex128 points, rfft of n / 4 float32, fft2 of a
    complex64 image of n / 16 points (cuFFT on CUDA, gpuport's own FFT elsewhere)."""
    rng = np.random.default_rng(2)
    m = n // 16
    c = (rng.standard_normal(m) + 1j * rng.standard_normal(m)).astype(np.complex64)
    r = rng.standard_normal(n // 4).astype(np.float32)
    side = int(np.sqrt(m))
    g64, g128, gr, img = lib.asarray(c), lib.asarray(c.astype(np.complex128)), lib.asarray(r), lib.asarray(c[:side * side].reshape(side, side))

    def close(got, want):
        return lambda: np.allclose(lib.asnumpy(got()), want, rtol=0, atol=1e-4 * np.abs(want).max())
    return [("fft %d c64" % m, lambda: lib.fft.fft(g64), close(lambda: lib.fft.fft(g64), np.fft.fft(c))),
            ("ifft %d c128" % m, lambda: lib.fft.ifft(g128), close(lambda: lib.fft.ifft(g128), np.fft.ifft(c))),
            ("rfft %d f32" % r.size, lambda: lib.fft.rfft(gr), close(lambda: lib.fft.rfft(gr), np.fft.rfft(r))),
            ("fft2 %d^2 c64" % side, lambda: lib.fft.fft2(img), None)]


def linalg(lib, n):
    """The linalg cases: a well-conditioned symmetric positive definite matrix of n by n float64."""
    rng = np.random.default_rng(1)
    m = rng.standard_normal((n, n))
    a = m @ m.T / n + np.eye(n)
    b = rng.standard_normal((n, 4))
    ga, gb, la = lib.asarray(a), lib.asarray(b), lib.linalg

    def close(got, want, tol=1e-6):
        return lambda: np.allclose(lib.asnumpy(got()), want, rtol=tol, atol=tol)
    w = np.linalg.eigvalsh(a)
    return [("solve %d f64" % n, lambda: la.solve(ga, gb), close(lambda: la.solve(ga, gb), np.linalg.solve(a, b))),
            ("inv %d f64" % n, lambda: la.inv(ga), close(lambda: la.inv(ga) @ ga, np.eye(n))),
            ("det %d f64" % n, lambda: la.det(ga / 2), close(lambda: la.det(ga / 2), np.linalg.det(a / 2))),
            ("cholesky %d f64" % n, lambda: la.cholesky(ga), close(lambda: la.cholesky(ga), np.linalg.cholesky(a))),
            ("qr %d f64" % n, lambda: la.qr(ga), close(lambda: (lambda q, r: q @ r)(*la.qr(ga)), a)),
            ("svd %d f64" % n, lambda: la.svd(ga), close(lambda: la.svd(ga)[1], np.linalg.svd(a, compute_uv=False))),
            ("eigh %d f64" % n, lambda: la.eigh(ga), close(lambda: la.eigh(ga)[0], w))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="run the cases whose names contain this text (fft, sort, ...)")
    a = ap.parse_args()
    try:
        import cupy as cp
    except ImportError:
        cp = None
    n = 1 << (16 if a.quick else 26)
    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    h = rng.integers(0, 256, n).astype(np.int32)
    print("gpuport %s: CuPy's kernel classes, n = %d; device ms, median (min) of %d runs" % (gp.version(), n, a.reps))
    anchor = {}
    if cp is not None and any(d.backend == "cuda" for d in gp.devices()):
        for name, run, check in cases(cp, n, x, y, h, a.only):
            anchor[name] = timed(run, a.reps, cp.cuda.Event, cp.cuda.get_elapsed_time)
            assert check is None or check(), name
    for dev in gp.devices():
        with dev:
            print("%-9s linalg: %s; fft: %s" % (dev.spec, gp.linalg.solver(), gp.fft.library()))
            mine = {}
            for name, run, check in cases(gp, n, x, y, h, a.only):
                mine[name] = t = timed(run, a.reps, gp.cuda.Event, gp.cuda.get_elapsed_time)
                assert check is None or check(), (dev.spec, name)
                c = anchor.get(name) if dev.backend == "cuda" else None
                print("%-9s %-20s gpuport %8.4f (%8.4f)%s" % (
                    dev.spec, name, t[0], t[1], "   CuPy %8.4f (%8.4f)  CuPy's ms / gpuport's %.3f"
                    % (c[0], c[1], c[0] / t[0]) if c else ""))
            for name in ("vector_add", "histogram") if a.only in "vector_add histogram" else ():
                print("%-9s %-20s dialect's ms / CUDA C's %.3f" % (dev.spec, name, mine[name + " dialect"][0]
                                                                  / mine[name][0]))


if __name__ == "__main__":
    main()
