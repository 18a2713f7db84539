"""NVIDIA's libraries that gpuport calls on CUDA devices (cuSOLVER, cuFFT), loaded through ctypes at
first use: where each is found, and the native stream that a call on the current stream takes."""
import ctypes
import os

from ._device import _stream
from ._ffi import RECORDS as _R, check as _check, lib as _lib


def load(names):
    """(library, path, None) for the first of names that loads, from the loader's path or
    $CUDA_HOME/lib64 (/usr/local/cuda), else (None, None, why)."""
    tried = []
    for name in names:
        for path in (name, os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "lib64", name)):
            try:
                return ctypes.CDLL(path), path, None
            except OSError as e:
                tried.append(str(e))
    return None, None, "; ".join(tried[:2])


_cuda = []
_contexts = {}  # by device: its CUDA context, and the native stream of its default stream


def current_stream(dev):
    """The CUDA stream of the current gpuport stream of dev (its default one outside `with
    stream:`), with dev's context made current on this thread, as the libraries want it."""
    known = _contexts.get(dev.spec)
    if known is None:
        if not _cuda:
            _cuda.append(ctypes.CDLL("libcuda.so.1"))
        native = _R["gp_native_device"]()
        _check(_lib.gp_device_get_native(dev._h, ctypes.byref(native)))
        s = ctypes.c_void_p()
        _check(_lib.gp_stream_get_default(dev._h, ctypes.byref(s)))
        known = _contexts[dev.spec] = (ctypes.c_void_p(native.context), _native_stream(s))
    _cuda[0].cuCtxSetCurrent(known[0])
    s = _stream(None)
    return known[1] if s is None else _native_stream(s)


def _native_stream(s):
    ns = _R["gp_native_stream"]()
    _check(_lib.gp_stream_get_native(s, ctypes.byref(ns)))
    return ctypes.c_void_p(ns.stream)


def address(a):
    """The device address of array a's first element (CUDA and HIP devices), None for None."""
    if a is None:
        return None
    native = _R["gp_native_buffer"]()
    _check(_lib.gp_buffer_get_native(a._buf, ctypes.byref(native)))
    return ctypes.c_void_p((native.device_ptr or 0) + a._off * a.itemsize)
