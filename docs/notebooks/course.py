"""What every course notebook shares: the devices to run on, timing as gpuport-bench times (the
best of a few runs from device events, a first run dropped) and a plain table.

GPUPORT_TEST_DEVICES=cuda:0,opencl:1 narrows the devices; GPUPORT_NOTEBOOK_QUICK=1 asks for the
small sizes the test suite runs the notebooks at."""
import os
import time

import gpuport as gp

try:
    import cupy as cp  # where CuPy is installed, CUDA devices get a CuPy column
except ImportError:
    cp = None

QUICK = os.environ.get("GPUPORT_NOTEBOOK_QUICK") == "1"
_wanted = [s for s in os.environ.get("GPUPORT_TEST_DEVICES", "").split(",") if s]
DEVICES = [d for d in gp.devices() if not _wanted or d.spec in _wanted]
if not DEVICES:
    raise RuntimeError("gpuport found no device: gpuport-info says why")
CUPY = cp is not None and any(d.backend == "cuda" for d in DEVICES)


def show_devices():
    for d in DEVICES:
        print("%-10s %-4s %s" % (d.spec, d.type, d.name))
    print("CuPy:", cp.__version__ if cp else "not installed", "(no CUDA device)" if cp and not CUPY else "")


def device_ms(fn, d, runs=5):
    """The best time of fn() on device d in ms, from device events."""
    fn()
    best = float("inf")
    for _ in range(runs):
        start, end = gp.Event(d).record(), gp.Event(d)
        fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_ms(end))
    return best


def cupy_ms(fn, runs=5):
    """The same for CuPy, from CUDA events."""
    fn()
    best = float("inf")
    for _ in range(runs):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(start, end))
    return best


def host_ms(fn, runs=3):
    """The best wall-clock time of fn() on the host in ms."""
    fn()
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        best = min(best, 1e3 * (time.perf_counter() - t))
    return best


def show_table(rows, fmt="%.3f"):
    """Rows (dicts) as one aligned table, a column per key, '-' where a row has no value."""
    cols = list(dict.fromkeys(k for r in rows for k in r))
    text = [[fmt % v if isinstance(v, float) else str(v) for v in (r.get(c, "-") for c in cols)] for r in rows]
    width = [max(len(c), *(len(t[i]) for t in text)) for i, c in enumerate(cols)]
    print(" | ".join(c.rjust(w) for c, w in zip(cols, width)))
    print("-|-".join("-" * w for w in width))
    for t in text:
        print(" | ".join(v.rjust(w) for v, w in zip(t, width)))
