"""gpuport from Python: NumPy's array surface (the part GPU lessons use, with CuPy's names where
CuPy adds one) on any CUDA, HIP or OpenCL device, pocl on a CPU included; gpuport's primitives;
and kernels of your own in the gpuport kernel dialect or in Python, as Numba's `@cuda.jit` takes them. docs/python.md lists the surface beside
NumPy's and CuPy's names and what differs.

    import gpuport as gp
    x = gp.linspace(0, 1, 1000, dtype=gp.float32)
    y = gp.sin(x) * 2 + 1
    print(y.sum(), gp.asnumpy(y)[:4])

The package's files: _ffi (the C API through ctypes), _device (devices, streams, events),
_array (Array, indexing, making arrays, products), _elementwise (generated element-wise
kernels, the ufuncs), _reduction (reductions, norm), random, linalg, fft, _primitives (gpuport's own
primitives and kernels of your own), _jit and _numba (Numba's `cuda.jit` kernels translated to the
dialect, and Numba's cuda names).
"""
import builtins as _builtins

import numpy as _np

from . import _ffi, fft, linalg, profiler, random, testing
from . import _methods  # noqa: F401  (Array's methods that compute)
from ._array import (Array, array, asarray, ascontiguousarray, asnumpy, astype, empty, empty_like, free_memory, full,
                     full_like, get_default_memory_pool, ones, ones_like, zeros, zeros_like)
from ._device import Device, Event, Stream, device, devices, get_device
from ._numba import cuda
from ._elementwise import angle, clip, conj, imag, real, where
from ._elementwise import _NAMES as _UFUNCS
from ._elementwise import (abs, acos, acosh, asin, asinh, atan, atan2, atanh, bitwise_invert,  # noqa: F401
                           bitwise_left_shift, bitwise_not, bitwise_right_shift, divide, mod, pow)
from ._ffi import CONSTANTS as _C, RECORDS as _R, GpuportError, OutOfMemoryError, check as _check, lib as _lib
from ._counting import histogram
from ._join import concatenate, get_array_module, hstack, stack, vstack
from ._masks import (compress, flatnonzero, nanmax, nanmean, nanmin, nanprod, nanstd, nansum, nanvar,  # noqa: F401
                     nonzero)
from ._products import dot, inner, matmul, outer, vdot
from ._raw import RawKernel, RawModule
from ._ranges import arange, eye, identity, linspace, tril, triu
from ._cupy_kernels import ElementwiseKernel, ReductionKernel
from . import _ndimage, _signal
from ._signal import convolve, correlate
from ._sort import argsort, median, searchsorted, sort, unique
from ._primitives import Kernel, Program, cummax, cummin, cumsum, local, stencil
from ._reduction import (all, any, argmax, argmin, count_nonzero, max, mean, min, prod, std, sum,  # noqa: A004
                         var)
from . import _elementwise as _ew

globals().update({n: getattr(_ew, n) for n in _UFUNCS})
globals().update({k: v for k, v in _C.items() if k.startswith("GP_")})

# NumPy's dtype and constant names, so that gp.float32 and gp.pi read as np.float32 and np.pi.
bool_, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float32, float64, complex64, complex128 = (
    _np.bool_, _np.int8, _np.uint8, _np.int16, _np.uint16, _np.int32, _np.uint32, _np.int64, _np.uint64, _np.float32,
    _np.float64, _np.complex64, _np.complex128)
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
dtype, ndarray = _np.dtype, Array
iinfo, finfo, result_type, can_cast = _np.iinfo, _np.finfo, _np.result_type, _np.can_cast
globals()["bool"] = _np.bool_  # the array API's name (this file calls the builtin as _builtins.bool)
amin, amax = min, max


def _namespace(name, doc, **names):
    """A module of names that import finds (gpuport.scipy.signal, as cupyx.scipy.signal)."""
    import sys
    import types
    m = types.ModuleType(name, doc)
    m.__dict__.update(names)
    sys.modules[name] = m
    return m


scipy = _namespace("gpuport.scipy", "SciPy's functions on the device, as CuPy's cupyx.scipy has them.",
                   signal=_namespace("gpuport.scipy.signal", "SciPy's signal: convolve2d, correlate2d.",
                                     convolve2d=_signal.convolve2d, correlate2d=_signal.correlate2d),
                   ndimage=_namespace("gpuport.scipy.ndimage", "SciPy's ndimage: label, sum_labels, center_of_mass.",
                                      label=_ndimage.label, sum_labels=_ndimage.sum_labels,
                                      center_of_mass=_ndimage.center_of_mass))


def version():
    """gpuport's version, "MAJOR.MINOR.PATCH"."""
    return _lib.gp_version_string().decode()


__version__ = version()


def cache_info():
    """The kernel cache as gpuport-info shows it: {"folder", "on_disk", "writable", "reason"}. A
    folder that someone else could write is not used (kernels stay in memory); reason says why."""
    import ctypes
    from ._device import _text
    c = _R["gp_cache_info"]()
    _check(_lib.gp_cache_get_info(ctypes.byref(c)))
    flag = _builtins.bool
    return {"folder": _text(c.folder), "on_disk": flag(c.on_disk), "writable": flag(c.writable),
            "reason": _text(c.reason)}


def reshape(a, shape):
    return asarray(a).reshape(shape)


def ravel(a):
    return asarray(a).ravel()


def transpose(a, axes=None):
    return asarray(a).transpose(axes) if axes is not None else asarray(a).transpose()


def broadcast_to(a, shape):
    return asarray(a).broadcast_to(shape)


def copy(a):
    return asarray(a).copy()


def shape(a):
    return asarray(a).shape


def size(a):
    return asarray(a).size


def ndim(a):
    return asarray(a).ndim


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """NumPy's allclose, the comparison made on the device and one bool brought back."""
    return _builtins.bool(isclose(a, b, rtol, atol, equal_nan).all())


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _ew.operands(a, b)
    close = less_equal(absolute(subtract(a, b)), add(atol, multiply(rtol, absolute(b))))  # noqa: F821
    close = logical_or(close, equal(a, b))  # noqa: F821  (infinities)
    if equal_nan:
        close = logical_or(close, logical_and(isnan(a), isnan(b)))  # noqa: F821
    return close


def array_equal(a, b):
    a, b = _ew.operands(a, b)
    return a.shape == b.shape and _builtins.bool(equal(a, b).all())  # noqa: F821


__all__ = ["convolve", "correlate", "sort", "argsort", "unique", "median", "searchsorted", "scipy", "RawKernel", "RawModule", "GpuportError", "OutOfMemoryError", "get_default_memory_pool", "profiler", "testing", "concatenate",
           "stack", "vstack", "hstack", "get_array_module", "histogram", "compress", "flatnonzero", "nonzero", "nanmax", "nanmean",
           "nanmin", "nanprod", "nanstd", "nansum", "nanvar", "Device", "Stream", "Event", "Array", "Program", "Kernel", "ElementwiseKernel",
           "ReductionKernel", "devices", "device", "get_device", "cuda", "local", "random", "linalg", "fft", "version",
           "cache_info", "free_memory", "array", "asarray", "asnumpy", "ascontiguousarray", "empty", "zeros", "ones",
           "full",
           "empty_like", "zeros_like", "ones_like", "full_like", "arange", "linspace", "eye", "identity", "tril", "triu", "dot",
           "vdot", "inner", "outer", "matmul", "where", "clip", "sum", "prod", "min", "max", "amin", "amax", "mean",
           "var", "std", "argmin", "argmax", "any", "all", "count_nonzero", "cumsum", "cummin", "cummax", "stencil",
           "reshape", "ravel", "transpose", "broadcast_to", "copy", "allclose", "isclose", "array_equal",
           "divide", "mod", "abs", "bitwise_not", "conj", "real", "imag", "angle", "astype", "acos", "asin", "atan", "atan2", "acosh", "asinh", "atanh",
           "pow", "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift"] + list(_UFUNCS)
