"""The C API through ctypes, declared from _api.py, which the build generates from gpuport.h
(python/gen_api.py): every enum, status, struct and prototype comes from the header itself, and
the test suite checks the layouts against the C compiler's."""
import ctypes
import os

import numpy  # noqa: F401  (loaded before _numpy_openblas looks for its OpenBLAS)

from . import _api, _where

_SCALARS = {
    "int": ctypes.c_int, "uint": ctypes.c_uint, "size_t": ctypes.c_size_t, "double": ctypes.c_double,
    "float": ctypes.c_float, "char": ctypes.c_char, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
    "int64": ctypes.c_int64, "ptr": ctypes.c_void_p, "handle": ctypes.c_void_p, "char_p": ctypes.c_char_p,
}

# Every enum constant and status, as module attributes: GP_F32, GP_ERROR_BUILD_FAILED, ...
CONSTANTS = dict(_api.CONSTANTS)
for _values in _api.ENUMS.values():
    CONSTANTS.update(_values)
CONSTANTS.update({name: value for name, value, _ in _api.STATUSES})
STATUS_NAMES = {value: name for name, value, _ in _api.STATUSES}

RECORDS = {}


def _record(name):
    if name not in RECORDS:
        kind, fields = _api.RECORDS[name]
        base = ctypes.Structure if kind == "struct" else ctypes.Union
        cls = type(name, (base,), {})
        RECORDS[name] = cls
        cls._fields_ = [(f, _ctype(t) * count if count else _ctype(t)) for f, t, count in fields]
    return RECORDS[name]


def _ctype(t):
    if t in _SCALARS:
        return _SCALARS[t]
    if t.startswith("struct:"):
        return _record(t[7:])
    if t.startswith("ptr:"):
        inner = t[4:]
        return ctypes.POINTER(_record(inner) if inner in _api.RECORDS else _SCALARS[inner])
    raise TypeError("gpuport._ffi: no ctypes type for %r" % t)


for _name in _api.RECORDS:
    _record(_name)


def _numpy_openblas():
    """The OpenBLAS that NumPy calls, where its wheel brings its own (numpy.libs/libscipy_openblas*,
    loaded with NumPy, which the package imports first); None with Debian's NumPy, which calls the
    system's."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(None, 5)[-1].strip()
                if os.path.basename(path).startswith("libscipy_openblas"):
                    return path
    except OSError:
        pass
    return None


# gp_gemm on a CPU device then calls NumPy's own OpenBLAS (GPUPORT_OPENBLAS, README.md), so that
# `@` there runs at NumPy's speed and one pool of BLAS threads serves both.
if not os.environ.get("GPUPORT_OPENBLAS") and (_blas := _numpy_openblas()):
    os.environ["GPUPORT_OPENBLAS"] = _blas


def _load():
    """libgpuport: GPUPORT_LIBRARY when set, else the library of the build tree or installation
    this package belongs to (_where.py), else the system's search path."""
    tried = []
    names = [os.environ.get("GPUPORT_LIBRARY")] if os.environ.get("GPUPORT_LIBRARY") else []
    here = os.path.dirname(os.path.abspath(__file__))
    names += [os.path.normpath(os.path.join(here, d, "libgpuport.so.%d" % CONSTANTS["GP_VERSION_MAJOR"]))
              for d in _where.LIBRARY_DIRS]
    names.append("libgpuport.so.%d" % CONSTANTS["GP_VERSION_MAJOR"])
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError as e:
            tried.append(str(e))
    raise ImportError("gpuport: cannot load libgpuport (set GPUPORT_LIBRARY to its path): " + "; ".join(tried))


lib = _load()
for _fname, _ret, _args in _api.FUNCTIONS:
    _f = getattr(lib, _fname)
    _f.restype = _ctype(_ret)
    _f.argtypes = [_ctype(a) for a in _args]


class GpuportError(Exception):
    """A gpuport call failed: status (the gp_status value), name ("GP_ERROR_BUILD_FAILED") and
    message (gp_last_error() at the time: what went wrong, in words)."""

    def __init__(self, status, message):
        self.status = status
        self.name = STATUS_NAMES.get(status, "GP_STATUS_%d" % status)
        self.message = message
        super().__init__("%s: %s" % (self.name, message))


class OutOfMemoryError(GpuportError, MemoryError):
    """The device is out of memory (GP_ERROR_OUT_OF_DEVICE_MEMORY), on every backend: CuPy's
    cupy.cuda.memory.OutOfMemoryError, and a MemoryError as CuPy's is."""


def check(status):
    """Raises GpuportError unless status is GP_SUCCESS (or GP_NOT_READY, a state)."""
    if status < 0:
        error = OutOfMemoryError if status == CONSTANTS["GP_ERROR_OUT_OF_DEVICE_MEMORY"] else GpuportError
        raise error(status, lib.gp_last_error().decode(errors="replace"))
    return status
