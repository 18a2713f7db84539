"""NumPy's protocols, followed as CuPy's arrays follow them: NumPy's ufuncs and functions given a
gpuport array (np.sin(x), np.std(x), np.linalg.norm(x)) run gpuport's function of the same name on
the device and return gpuport arrays; one gpuport does not have raises NumPy's TypeError naming it,
rather than computing on the host unseen; and an implicit conversion to a NumPy array (np.asarray(x),
SciPy given a device array) raises TypeError naming gp.asnumpy, since a silent copy teaches the
wrong speed."""
import sys

import numpy as np

# np.add.reduce(x) and friends, as gpuport's reductions
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min", "logical_or": "any",
           "logical_and": "all"}
_ACCUMULATE = {"add": "cumsum", "maximum": "cummax", "minimum": "cummin"}
# NumPy functions that only look at shapes and types: NumPy's own code serves
_INSPECT = {"ndim", "shape", "size", "iscomplexobj", "isrealobj", "result_type", "can_cast", "min_scalar_type"}


def _gpuport(path):
    obj = sys.modules["gpuport"]
    for part in path:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    name = {"__call__": ufunc.__name__, "reduce": _REDUCE.get(ufunc.__name__),
            "accumulate": _ACCUMULATE.get(ufunc.__name__)}.get(method)
    fn = _gpuport([name]) if name else None
    if fn is None:
        return NotImplemented
    out = kwargs.get("out")
    if isinstance(out, tuple):
        if len(out) != 1:
            return NotImplemented
        kwargs["out"] = out[0]
    return fn(*inputs, **kwargs)


def array_function(self, func, types, args, kwargs):
    from ._array import Array
    if func.__name__ in _INSPECT:
        args = [a.dtype if isinstance(a, Array) and func.__name__ in ("result_type", "can_cast", "min_scalar_type")
                else a for a in args]
        return getattr(func, "_implementation", func)(*args, **kwargs)
    if not all(issubclass(t, (Array, np.ndarray)) for t in types):
        return NotImplemented
    fn = _gpuport((func.__module__ or "numpy").split(".")[1:] + [func.__name__])
    if not callable(fn) or fn is func:
        return NotImplemented
    return fn(*args, **kwargs)


def no_implicit_copy(self, dtype=None, copy=None):
    raise TypeError("gpuport: an implicit conversion of a gpuport array to a NumPy array is not allowed (it would "
                    "copy from the device unseen): use gp.asnumpy(x) or x.get()")
