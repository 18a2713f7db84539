"""Proves a script may end with its work still queued (tests/exit.sh runs each case many times
with a cold kernel cache): it must end with the status the case expects and nothing on stderr
but an exception's own traceback. Usage: exit_cases.py ufunc|kernel|copy|exception"""
import os
import sys

import numpy as np

import gpuport as gp

case = sys.argv[1]
x = gp.zeros(1 << 20, dtype=gp.float32)
if case == "ufunc":  # the student's three lines
    y = x + 1
elif case == "kernel":  # a source no cache has seen, so its first launch compiles
    source = ("GP_KERNEL void twice(GP_GLOBAL float *x, uint n) { uint i = gp_global_id(0);"
              " if (i < n) x[i] = x[i] * 2.0f + %d.0f; }" % os.getpid())
    gp.Program(source).kernel("twice")(x, x.size, global_size=x.size)
elif case == "copy":
    y = gp.asarray(np.ones(1 << 22, dtype=np.float64))
elif case == "exception":
    y = gp.sin(x) * 3
    raise RuntimeError("the lesson's deliberate mistake")
else:
    sys.exit("unknown case %r" % case)
