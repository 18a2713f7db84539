"""Arrays whose elements a formula gives, computed on the device: arange, linspace, eye, identity,
and tril and triu (an array with the elements off a triangle zeroed)."""
import math
import operator

import numpy as np

from . import _elementwise as ew
from ._array import CTYPES, Array, check_dtype


def arange(start, stop=None, step=1, dtype=None, device=None):
    """Evenly spaced values in [start, stop), computed on the device as start + i * step."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ZeroDivisionError("gpuport.arange: step is 0")
    dtype = check_dtype(dtype if dtype is not None else np.result_type(start, stop, step))
    if dtype.kind == "c":  # real start, stop and step: the real parts
        return arange(start, stop, step, dtype.char.lower(), device).astype(dtype)
    n = max(0, math.ceil((stop - start) / step))
    out = Array(n, dtype, device=device)
    if dtype.kind in "iu":
        return ew.generate(out, "(%s)(s0 + (long)i * s1)" % CTYPES[dtype], [(int(start), "long"), (int(step), "long")])
    return ew.generate(out, "(%s)(s0 + (double)i * s1)" % CTYPES[dtype], [(float(start), "double"),
                                                                           (float(step), "double")])


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, device=None):
    """num values from start to stop (included with endpoint), computed on the device."""
    num = operator.index(num)
    if num < 0:
        raise ValueError("gpuport.linspace: num must be non-negative, not %d" % num)
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else float("nan")
    dtype = check_dtype(dtype if dtype is not None else np.result_type(float(start), float(stop)))
    out = Array(num, dtype, device=device)
    if dtype.kind in "iu":
        expr = "(%s)floor(s0 + (double)i * s1)"
    else:
        expr = "(%s)(i == s2 ? s3 : s0 + (double)i * s1)"
    ew.generate(out, expr % CTYPES[dtype], [(float(start), "double"), (0.0 if div <= 0 else float(step), "double"),
                                            (num - 1 if endpoint and num > 1 else -1, "long"), (float(stop), "double")])
    return (out, step) if retstep else out


def eye(N, M=None, k=0, dtype=np.float64, device=None):
    M = N if M is None else M
    out = Array((N, M), dtype, device=device)
    return ew.generate(out, "(%s)((long)(i %% s0) - (long)(i / s0) == s1)" % CTYPES[out.dtype],
                       [(max(M, 1), "long"), (int(k), "long")])


def identity(n, dtype=np.float64, device=None):
    return eye(n, dtype=dtype, device=device)


def tril(m, k=0):
    """NumPy's tril: m with the elements above its k-th diagonal zeroed (in its last two axes)."""
    return _triangle(m, k, ew.greater_equal)


def triu(m, k=0):
    """NumPy's triu: m with the elements below its k-th diagonal zeroed (in its last two axes)."""
    return _triangle(m, k, ew.less_equal)


def _triangle(m, k, keep):
    m, = ew.operands(m)
    if m.ndim < 2:
        raise ValueError("gpuport: tril and triu take arrays of at least two dimensions, not %d" % m.ndim)
    r, c = m.shape[-2:]
    rows = arange(r, dtype=np.int64, device=m.device).reshape(r, 1)
    return ew.where(keep(rows + int(k), arange(c, dtype=np.int64, device=m.device)), m, m.dtype.type(0))
