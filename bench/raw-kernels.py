#!/usr/bin/env python3
"""CUDA C kernels (the Carpentries lesson's vector add and histogram) through gpuport.RawKernel on
each device, and through CuPy's RawKernel on CUDA devices where CuPy is installed, in one run:
device ms from events, median (min) of the runs after a dropped first one, results checked.

    python3 bench/raw-kernels.py [--reps 20] [--quick]
"""
import argparse
import statistics

import numpy as np

import gpuport as gp

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    try:
        import cupy as cp
    except ImportError:
        cp = None
    n = 1 << (16 if a.quick else 26)
    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    h = rng.integers(0, 256, n).astype(np.int32)
    print("gpuport %s: CUDA C kernels, n = %d; device ms, median (min) of %d runs" % (gp.version(), n, a.reps))
    for dev in gp.devices():
        with dev:
            gx, gy, gz, gh, gout = gp.asarray(x), gp.asarray(y), gp.empty(n, np.float32), gp.asarray(h), \
                gp.zeros(256, np.int32)
            add, hist = gp.RawKernel(VECTOR_ADD, "vector_add"), gp.RawKernel(HISTOGRAM, "histogram")
            rows = [("vector_add", timed(lambda: add((n // 256,), (256,), (gx, gy, gz, n)), a.reps, gp.cuda.Event,
                                         gp.cuda.get_elapsed_time))]
            assert np.array_equal(gz.get(), x + y)
            rows.append(("histogram", timed(lambda: hist((n // 256,), (256,), (gh, gout)), a.reps, gp.cuda.Event,
                                            gp.cuda.get_elapsed_time)))
            assert np.array_equal(gout.get(), np.bincount(h, minlength=256) * (a.reps + 1))
        anchor = {}
        if cp is not None and dev.backend == "cuda":
            cx, cy, cz, ch, cout = cp.asarray(x), cp.asarray(y), cp.empty(n, np.float32), cp.asarray(h), \
                cp.zeros(256, np.int32)
            cadd, chist = cp.RawKernel(VECTOR_ADD, "vector_add"), cp.RawKernel(HISTOGRAM, "histogram")
            anchor["vector_add"] = timed(lambda: cadd((n // 256,), (256,), (cx, cy, cz, np.int32(n))), a.reps,
                                         cp.cuda.Event, cp.cuda.get_elapsed_time)
            anchor["histogram"] = timed(lambda: chist((n // 256,), (256,), (ch, cout)), a.reps, cp.cuda.Event,
                                        cp.cuda.get_elapsed_time)
            assert np.array_equal(cp.asnumpy(cz), x + y)
        for name, t in rows:
            c = anchor.get(name)
            print("%-10s %-11s gpuport %8.4f (%8.4f)%s" % (dev.spec, name, t[0], t[1], "   CuPy %8.4f (%8.4f)  "
                                                            "CuPy's ms / gpuport's %.3f" % (c[0], c[1], c[0] / t[0])
                                                            if c else ""))


if __name__ == "__main__":
    main()
