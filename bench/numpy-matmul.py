"""`a @ b` of N x N float32 and float64 matrices through gpuport's Python arrays against NumPy's
on the same machine: the best of R runs after one untimed, gpuport's timed to the end of its
device's work, each series after a pause, each result checked against NumPy's (within
n u sum |a| |b|, u the unit roundoff). On a CPU device gpuport's `@` is gp_gemm's AUTO choice
(docs/primitives.md), and its vendor GEMM is the OpenBLAS NumPy calls where NumPy's wheel brings
one (docs/python.md).

    PYTHONPATH=build/python python3 bench/numpy-matmul.py [--device SPEC] [--reps R] [--pause S] [N ...]
"""
import argparse
import ctypes
import sys
import time

import numpy as np

import gpuport as gp


def best(run, reps):
    run()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", help="a device as gp_device_find takes it (default cpu)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--pause", type=float, default=1.0, help="seconds of rest before each series (default 1)")
    ap.add_argument("sizes", type=int, nargs="*", default=[512, 1024, 2048])
    args = ap.parse_args()
    try:
        dev = gp.Device(args.device)
    except gp.GpuportError as e:
        print("numpy-matmul: no device %s here: %s" % (args.device, e.message))
        return 77
    text = ctypes.create_string_buffer(256)
    vendor = text.value.decode() if gp._ffi.lib.gp_gemm_vendor_info(dev._h, text, 256) == 0 else "none"
    print("device %s; NumPy %s; its vendor GEMM: %s" % (dev, np.__version__, vendor))
    print("dtype    N    NumPy GFLOP/s  gpuport GFLOP/s  gpuport / NumPy  check")
    rng = np.random.default_rng(1)
    ok = True
    for dtype in (np.dtype(np.float32), np.dtype(np.float64)):
        for n in args.sizes:
            a, b = rng.random((n, n)).astype(dtype), rng.random((n, n)).astype(dtype)
            ga, gb = gp.asarray(a, device=dev), gp.asarray(b, device=dev)

            def on_device():
                ga @ gb
                dev.synchronize()

            # Each side's threads (pocl's, OpenBLAS's) spin a while after a call and would take
            # the other's cores: a pause before each series.
            time.sleep(args.pause)
            t_gp = best(on_device, args.reps)
            time.sleep(args.pause)
            t_np = best(lambda: a @ b, args.reps)
            bound = n * np.finfo(dtype).eps * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
            right = bool(np.all(np.abs((ga @ gb).get().astype(np.float64) - (a @ b)) <= bound))
            ok = ok and right
            flops = 2.0 * n ** 3
            print("%-7s %5d %14.1f %16.1f %16.2f  %s" % (dtype.name, n, flops / t_np / 1e9, flops / t_gp / 1e9,
                                                       t_np / t_gp, "ok" if right else "WRONG"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
