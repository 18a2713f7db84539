#!/usr/bin/env python3
"""Runs docs/lesson/lesson.py, a lesson written for CuPy, with `import cupy as cp` replaced by
another module and nothing else changed, timing each step (waiting for the device at its end):

  run.py [--as gpuport|cupy|numpy ...] [--quick] [--csv FILE]

gpuport runs on GPUPORT_DEVICE (default: the best device); numpy runs on the host through a
shim of the few CuPy names NumPy lacks (asnumpy, cuda.Device, dtype= of rand and randn). With
several --as, a table of seconds per step, one column each, the first run of each dropped."""
import argparse
import contextlib
import os
import re
import sys
import time
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def numpy_shim():
    """NumPy under CuPy's names, for the host column of the table."""
    m = types.ModuleType("numpy_as_cupy")
    m.__dict__.update({k: getattr(np, k) for k in dir(np) if not k.startswith("__")})
    m.asnumpy = np.asarray
    m.cuda = types.SimpleNamespace(Device=lambda i=0: contextlib.nullcontext())
    r = types.SimpleNamespace(**{k: getattr(np.random, k) for k in dir(np.random) if not k.startswith("_")})
    r.rand = lambda *s, dtype=np.float64: np.random.random(s).astype(dtype, copy=False)
    r.randn = lambda *s, dtype=np.float64: np.random.standard_normal(s).astype(dtype, copy=False)
    m.random = r
    return m


def load(name):
    if name == "numpy":
        return numpy_shim(), lambda: None
    mod = __import__(name)
    if name == "cupy":
        return mod, lambda: mod.cuda.Device().synchronize()
    return mod, lambda: mod.device().synchronize()


def run(name):
    """Seconds of each step of the lesson with cp = module name."""
    cp, sync = load(name)
    src = open(os.path.join(HERE, "lesson.py")).read()
    assert "import cupy as cp\n" in src
    head, *steps = re.split(r"^# %%", src.replace("import cupy as cp\n", ""), flags=re.M)
    env = {"__name__": "lesson", "cp": cp}
    exec(compile(head, "lesson.py", "exec"), env)
    times = []
    for step in steps:
        title = step.split("\n", 1)[0].strip()
        t = time.perf_counter()
        exec(compile("# %%" + step, "lesson.py: " + title, "exec"), env)
        sync()
        times.append((title, time.perf_counter() - t))
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--as", dest="mods", action="append", help="gpuport, cupy or numpy (repeatable)")
    ap.add_argument("--quick", action="store_true", help="small sizes")
    ap.add_argument("--csv", help="also write the table here")
    ap.add_argument("--rounds", type=int, default=1, help="timed runs after the dropped first one")
    a = ap.parse_args()
    if a.quick:
        os.environ["LESSON_QUICK"] = "1"
    mods = a.mods or ["gpuport"]
    cols = {}
    for m in mods:
        run(m)  # the first run compiles and warms: dropped
        best = None
        for _ in range(a.rounds):
            t = run(m)
            best = t if best is None else [(n, min(s, b)) for (n, s), (_, b) in zip(t, best)]
        cols[m] = best
    titles = [n for n, _ in cols[mods[0]]]
    lines = ["step," + ",".join(mods)] + ["%s,%s" % (t.replace(",", ";"), ",".join("%.4f" % dict(cols[m])[t]
                                                                                 for m in mods)) for t in titles]
    print("seconds per step (best of %d after a dropped first run)%s" % (a.rounds, ", quick" if a.quick else ""))
    for line in lines:
        print("  " + " | ".join("%-48s" % c if i == 0 else "%10s" % c for i, c in enumerate(line.split(","))))
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
