"""gpuport from Python: devices, arrays on them that feel like NumPy's, gpuport's primitives and
kernels of your own in the gpuport kernel dialect, on any CUDA, HIP or OpenCL device (pocl on a
CPU included). docs/python.md says how each maps onto the C API.

    import gpuport as gp, numpy as np
    x = gp.asarray(np.linspace(0, 1, 1000, dtype=np.float32))
    y = gp.sin(x) * 2 + 1
    print(y.sum(), y.get()[:4])
"""
import ctypes
import numbers

import numpy as np

from . import _ffi
from ._ffi import CONSTANTS as _C, RECORDS as _R, GpuportError, check as _check, lib as _lib

__all__ = [
    "GpuportError", "Device", "Stream", "Event", "Array", "Program", "Kernel", "ElementwiseKernel", "ReductionKernel",
    "devices", "device", "asarray", "empty", "zeros", "full", "local", "add", "subtract", "multiply", "divide",
    "minimum", "maximum", "absolute", "sqrt", "exp", "log", "sin", "cos", "power", "sum", "prod", "min", "max",
    "argmin", "argmax", "cumsum", "cummin", "cummax", "stencil", "matmul", "version", "cache_info",
]

globals().update({k: v for k, v in _C.items() if k.startswith("GP_")})


def version():
    """gpuport's version, "MAJOR.MINOR.PATCH"."""
    return _lib.gp_version_string().decode()


__version__ = version()


def cache_info():
    """The kernel cache as gpuport-info shows it: {"folder", "on_disk", "writable", "reason"}. A
    folder that someone else could write is not used (kernels stay in memory); reason says why."""
    c = _R["gp_cache_info"]()
    _check(_lib.gp_cache_get_info(ctypes.byref(c)))
    return {"folder": _text(c.folder), "on_disk": bool(c.on_disk), "writable": bool(c.writable),
            "reason": _text(c.reason)}

_TYPES = {np.dtype(np.float32): _C["GP_F32"], np.dtype(np.float64): _C["GP_F64"], np.dtype(np.int32): _C["GP_I32"],
          np.dtype(np.uint32): _C["GP_U32"], np.dtype(np.int64): _C["GP_I64"], np.dtype(np.uint64): _C["GP_U64"]}
_DTYPES = {v: k for k, v in _TYPES.items()}


def _gp_type(dtype):
    dtype = np.dtype(dtype)
    if dtype not in _TYPES:
        raise TypeError("gpuport: %s is not an element type gpuport has (float32, float64, int32, uint32, int64, "
                        "uint64)" % dtype)
    return _TYPES[dtype]


def _text(chars):
    return bytes(chars).split(b"\0", 1)[0].decode(errors="replace")


def _handle_out(call, *args):
    """Calls call(*args, &handle) and returns the handle (a ctypes c_void_p)."""
    h = ctypes.c_void_p()
    _check(call(*args, ctypes.byref(h)))
    return h


# ---- Devices, streams, events ------------------------------------------------------------------

class Device:
    """A device of a backend ("cuda:0", "opencl:1"); owned by gpuport, alive for the process."""

    _known = {}

    def __new__(cls, handle):
        key = handle.value
        if key not in cls._known:
            d = super().__new__(cls)
            d._h = handle
            info = _R["gp_device_info"]()
            _check(_lib.gp_device_get_info(handle, ctypes.byref(info)))
            d.info = {f: getattr(info, f) for f, _ in info._fields_}
            d.info.update({f: v.decode(errors="replace") for f, v in d.info.items() if isinstance(v, bytes)})
            d.info["max_work_item_sizes"] = list(info.max_work_item_sizes)
            d.info["type"] = {1: "gpu", 2: "cpu"}.get(info.type, "other")
            d.spec = "%s:%d" % (d.info["backend"], d.info["backend_index"])
            cls._known[key] = d
        return cls._known[key]

    name = property(lambda self: self.info["name"])
    backend = property(lambda self: self.info["backend"])
    type = property(lambda self: self.info["type"])

    def synchronize(self):
        """Waits for every stream of the device."""
        _check(_lib.gp_device_synchronize(self._h))

    def __repr__(self):
        return "<gpuport.Device %s: %s (%s)>" % (self.spec, self.name, self.type)


def devices():
    """Every device of every available backend, in gpuport's order."""
    n = ctypes.c_size_t()
    _check(_lib.gp_device_count(ctypes.byref(n)))
    return [Device(_handle_out(_lib.gp_device_get, i)) for i in range(n.value)]


_default = None


def device(spec=None):
    """The device a spec names ("cuda:0", "opencl:1", "gpu", "cpu"), or with none the default:
    GPUPORT_DEVICE when set, else the best device gpuport finds."""
    global _default
    if spec is None:
        if _default is None:
            _default = Device(_handle_out(_lib.gp_device_default))
        return _default
    if isinstance(spec, Device):
        return spec
    return Device(_handle_out(_lib.gp_device_find, spec.encode()))


_device = device  # for functions whose device= parameter hides it


class Stream:
    """An in-order queue of work on a device. None, wherever a stream is taken, is the device's
    default stream."""

    def __init__(self, dev=None):
        self.device = device(dev)
        self._h = _handle_out(_lib.gp_stream_create, self.device._h)

    def synchronize(self):
        _check(_lib.gp_stream_synchronize(self._h))

    def wait(self, event):
        """Work queued on this stream from now on waits for event (of any device)."""
        _check(_lib.gp_stream_wait_event(self._h, event._h))

    def __del__(self, _destroy=_lib.gp_stream_destroy):
        if getattr(self, "_h", None):
            _destroy(self._h)  # safe while work is queued: it finishes first
            self._h = None


def _stream(s):
    return s._h if s is not None else None


class Event:
    """A point in a stream's work, for ordering and for device-measured time."""

    def __init__(self, dev=None):
        self.device = device(dev)
        self._h = _handle_out(_lib.gp_event_create, self.device._h)

    def record(self, stream=None):
        _check(_lib.gp_event_record(self._h, _stream(stream)))
        return self

    def synchronize(self):
        _check(_lib.gp_event_synchronize(self._h))

    def elapsed_ms(self, end):
        """Milliseconds of device time from this event to end (both recorded, on one device)."""
        ms = ctypes.c_double()
        _check(_lib.gp_event_elapsed_ms(self._h, end._h, ctypes.byref(ms)))
        return ms.value

    def __del__(self, _destroy=_lib.gp_event_destroy):
        if getattr(self, "_h", None):
            _destroy(self._h)
            self._h = None


# ---- Arrays ------------------------------------------------------------------------------------

def _view(a):
    return _R["gp_view"](a._buf, 0) if a is not None else _R["gp_view"](None, 0)


def _scalar_arg(value, dtype):
    s = _R["gp_scalar"]()
    kind = np.dtype(dtype).kind
    if kind == "f":
        s.f = float(value)
    elif kind == "i":
        s.i = int(value)
    else:
        s.u = int(value)
    return s


class Array:
    """Elements of one dtype (float32, float64, int32, uint32, int64, uint64) in C order on a
    device, in a gpuport buffer: created by asarray, empty, zeros and full, or returned by
    operations. get() (or numpy.asarray(array)) copies it back to a NumPy array."""

    def __init__(self, shape, dtype=np.float32, dev=None, _buffer=None, _base=None):
        self.dtype = np.dtype(dtype)
        self._type = _gp_type(self.dtype)
        self.shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        if any(s < 0 for s in self.shape):
            raise ValueError("gpuport: negative dimensions are not allowed: %s" % (self.shape,))
        self.size = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        self.nbytes = self.size * self.dtype.itemsize
        self.device = device(dev)
        self._base = _base  # what keeps the buffer's memory alive (an array viewed, a wrapped object)
        self._owned = _buffer is None
        self._buf = _buffer if _buffer is not None else _handle_out(
            _lib.gp_buffer_create, self.device._h, _C["GP_MEMORY_DEVICE"], self.nbytes)

    ndim = property(lambda self: len(self.shape))

    def __del__(self, _destroy=_lib.gp_buffer_destroy):
        # The destroy functions are bound at definition: when Python exits, module globals may
        # already be gone.
        if getattr(self, "_owned", False) and getattr(self, "_buf", None):
            _destroy(self._buf)  # safe while work is queued: it finishes first
            self._buf = None

    def __repr__(self):
        return "<gpuport.Array %s %s on %s>" % (self.shape, self.dtype, self.device.spec)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def get(self, stream=None):
        """The elements, copied into a new NumPy array (waits for the stream's work)."""
        out = np.empty(self.shape, self.dtype)
        if self.nbytes:
            _check(_lib.gp_buffer_read(_stream(stream), self._buf, 0, out.ctypes.data, self.nbytes))
        return out

    def set(self, values, stream=None):
        """Copies values (anything NumPy turns into this array's shape and dtype) into the array."""
        host = np.ascontiguousarray(np.broadcast_to(np.asarray(values, self.dtype), self.shape))
        if self.nbytes:
            _check(_lib.gp_buffer_write(_stream(stream), self._buf, 0, host.ctypes.data, self.nbytes))
        return self

    def __array__(self, dtype=None, copy=None):
        a = self.get()
        return a if dtype is None else a.astype(dtype)

    def copy(self, stream=None):
        out = Array(self.shape, self.dtype, self.device)
        if self.nbytes:
            _check(_lib.gp_buffer_copy(_stream(stream), out._buf, 0, self._buf, 0, self.nbytes))
        return out

    def to(self, dev, stream=None):
        """A copy of the array on another device (or this one)."""
        out = Array(self.shape, self.dtype, dev)
        if self.nbytes:
            _check(_lib.gp_buffer_copy(_stream(stream), out._buf, 0, self._buf, 0, self.nbytes))
        return out

    def fill(self, value, stream=None):
        pattern = np.array(value, self.dtype)
        if self.nbytes:
            _check(_lib.gp_buffer_fill(_stream(stream), self._buf, 0, self.nbytes, pattern.ctypes.data,
                                       self.dtype.itemsize))
        return self

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        shape = list(shape)
        if shape.count(-1) == 1:
            rest = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
            shape[shape.index(-1)] = self.size // rest if rest else 0
        if int(np.prod(shape, dtype=np.int64)) != self.size:
            raise ValueError("gpuport: cannot reshape an array of %d elements into %s" % (self.size, tuple(shape)))
        return Array(shape, self.dtype, self.device, _buffer=self._buf, _base=self)

    def ravel(self):
        return self.reshape(self.size)

    @property
    def __cuda_array_interface__(self):
        """The array's device memory for CuPy, Numba, PyTorch (CUDA devices only)."""
        if self.device.backend != "cuda":
            raise AttributeError("gpuport: __cuda_array_interface__ is for arrays of CUDA devices; this one is on %s"
                                 % self.device.spec)
        native = _R["gp_native_buffer"]()
        _check(_lib.gp_buffer_get_native(self._buf, ctypes.byref(native)))
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (native.device_ptr or 0, False),
                "strides": None, "version": 3, "stream": 1}  # 1: the legacy default stream, gpuport's default

    # Arithmetic: elementwise with an array of the same shape and dtype, or a scalar.
    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(self, other)

    def __sub__(self, other):
        return subtract(self, other)

    def __rsub__(self, other):
        return _scalar_map("a - x", self, other)

    def __mul__(self, other):
        return multiply(self, other)

    def __rmul__(self, other):
        return multiply(self, other)

    def __truediv__(self, other):
        return divide(self, other)

    def __rtruediv__(self, other):
        return _scalar_map("a / x", self, other)

    def __neg__(self):
        return multiply(self, -1)

    def __abs__(self):
        return absolute(self)

    def __matmul__(self, other):
        return matmul(self, other)

    def sum(self, stream=None):
        return sum(self, stream)

    def prod(self, stream=None):
        return prod(self, stream)

    def min(self, stream=None):
        return min(self, stream)

    def max(self, stream=None):
        return max(self, stream)

    def argmin(self, stream=None):
        return argmin(self, stream)

    def argmax(self, stream=None):
        return argmax(self, stream)


class _Borrowed:
    """Keeps a wrapped buffer's gpuport handle and its owner (another library's array) together."""

    def __init__(self, buf, owner):
        self.buf, self.owner = buf, owner

    def __del__(self, _destroy=_lib.gp_buffer_destroy):
        _destroy(self.buf)


def asarray(obj, dtype=None, device=None, stream=None):
    """obj as an Array on the device: the array itself when it is one there already; memory of
    another CUDA library (an object with __cuda_array_interface__: CuPy, Numba, PyTorch)
    wrapped in place on a CUDA device, without a copy; anything else through NumPy, copied."""
    dev = _device(device)
    if isinstance(obj, Array):
        if dtype is not None and np.dtype(dtype) != obj.dtype:
            raise TypeError("gpuport: the array is %s; asarray does not convert to %s" % (obj.dtype, np.dtype(dtype)))
        return obj if obj.device is dev else obj.to(dev, stream)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return _wrap_cuda(obj, cai, dtype, dev)
    host = np.ascontiguousarray(obj, dtype=dtype)
    out = Array(host.shape, host.dtype, dev)
    if out.nbytes:
        _check(_lib.gp_buffer_write(_stream(stream), out._buf, 0, host.ctypes.data, out.nbytes))
    return out


def _wrap_cuda(obj, cai, dtype, dev):
    if dev.backend != "cuda":
        raise ValueError("gpuport: an object with __cuda_array_interface__ can be used only on a CUDA device, not %s"
                         % dev.spec)
    typestr, shape = np.dtype(cai["typestr"]), tuple(cai["shape"])
    if dtype is not None and np.dtype(dtype) != typestr:
        raise TypeError("gpuport: the object holds %s, not %s" % (typestr, np.dtype(dtype)))
    strides = cai.get("strides")
    if strides is not None and tuple(strides) != tuple(np.empty(shape, typestr).strides):
        raise ValueError("gpuport: only C-contiguous memory can be wrapped (the object has strides %s)"
                         % (tuple(strides),))
    native = _R["gp_native_buffer"]()
    native.backend = _C["GP_BACKEND_CUDA"]
    native.device_ptr = cai["data"][0]
    native.bytes = int(np.prod(shape, dtype=np.int64)) * typestr.itemsize
    if native.bytes == 0:
        return Array(shape, typestr, dev)
    buf = _handle_out(_lib.gp_buffer_wrap, dev._h, ctypes.byref(native), _C["GP_BORROW"])
    return Array(shape, typestr, dev, _buffer=buf, _base=_Borrowed(buf, obj))


def empty(shape, dtype=np.float32, device=None):
    return Array(shape, dtype, device)


def zeros(shape, dtype=np.float32, device=None):
    return Array(shape, dtype, device).fill(0)


def full(shape, value, dtype=np.float32, device=None):
    return Array(shape, dtype, device).fill(value)


# ---- Map -----------------------------------------------------------------------------------------

def _same(a, b, what):
    if not isinstance(a, Array) or not isinstance(b, Array):
        raise TypeError("gpuport.%s: takes gpuport arrays (use gpuport.asarray)" % what)
    if a.shape != b.shape or a.dtype != b.dtype:
        raise ValueError("gpuport.%s: the arrays are %s %s and %s %s; they must have the same shape and dtype"
                         % (what, a.shape, a.dtype, b.shape, b.dtype))
    if a.device is not b.device:
        raise ValueError("gpuport.%s: the arrays are on %s and %s; copy one with .to()" % (what, a.device.spec,
                                                                                         b.device.spec))


def _map(op, x, y=None, a=None, out=None, stream=None, what="map"):
    if not isinstance(x, Array):
        raise TypeError("gpuport.%s: takes gpuport arrays (use gpuport.asarray)" % what)
    if y is not None:
        _same(x, y, what)
    if out is None:
        out = Array(x.shape, x.dtype, x.device)
    else:
        _same(x, out, what)
    s = _scalar_arg(a, x.dtype) if a is not None else None
    _check(_lib.gp_map(_stream(stream), _C[op], x._type, x.size, _view(out), _view(x), _view(y),
                       ctypes.byref(s) if s is not None else None))
    return out


_scalar_kernels = {}


def _scalar_map(expression, x, value, out=None, stream=None):
    """x op a for a Python scalar a, with a map kernel of gpuport's made once per device and dtype."""
    key = (expression, x.device, x.dtype)
    if key not in _scalar_kernels:
        _scalar_kernels[key] = ElementwiseKernel(expression, nin=1, dtype=x.dtype, device=x.device)
    return _scalar_kernels[key](x, a=value, out=out, stream=stream)


def _binary(op, expression, x, y, out, stream, what):
    if isinstance(y, numbers.Number):
        if op == "GP_MAP_MUL":
            return _map("GP_MAP_SCALE", x, None, y, out, stream, what)
        return _scalar_map(expression, x, y, out, stream)
    return _map(op, x, y, None, out, stream, what)


def add(x, y, out=None, stream=None):
    return _binary("GP_MAP_ADD", "x + a", x, y, out, stream, "add")


def subtract(x, y, out=None, stream=None):
    return _binary("GP_MAP_SUB", "x - a", x, y, out, stream, "subtract")


def multiply(x, y, out=None, stream=None):
    return _binary("GP_MAP_MUL", None, x, y, out, stream, "multiply")


def divide(x, y, out=None, stream=None):
    """x / y; integers divided by 0 give 0 (docs/primitives.md)."""
    return _binary("GP_MAP_DIV", "x / a", x, y, out, stream, "divide")


def minimum(x, y, out=None, stream=None):
    return _map("GP_MAP_MIN", x, y, None, out, stream, "minimum")


def maximum(x, y, out=None, stream=None):
    return _map("GP_MAP_MAX", x, y, None, out, stream, "maximum")


def power(x, y, out=None, stream=None):
    return _map("GP_MAP_POW", x, y, None, out, stream, "power")


def absolute(x, out=None, stream=None):
    return _map("GP_MAP_ABS", x, None, None, out, stream, "absolute")


def sqrt(x, out=None, stream=None):
    return _map("GP_MAP_SQRT", x, None, None, out, stream, "sqrt")


def exp(x, out=None, stream=None):
    return _map("GP_MAP_EXP", x, None, None, out, stream, "exp")


def log(x, out=None, stream=None):
    return _map("GP_MAP_LOG", x, None, None, out, stream, "log")


def sin(x, out=None, stream=None):
    return _map("GP_MAP_SIN", x, None, None, out, stream, "sin")


def cos(x, out=None, stream=None):
    return _map("GP_MAP_COS", x, None, None, out, stream, "cos")


class ElementwiseKernel:
    """A map of your own: expression in the kernel dialect over x, y, z (nin of them), the scalar
    a and the index i ("a * x + sin(y)"), or statements assigning r; compiled once for the device.
    Call it with the input arrays; a= gives the scalar, out= an array to write."""

    def __init__(self, expression, nin=1, dtype=np.float32, in_dtypes=None, device=None):
        self.device = _device(device)
        self.dtype = np.dtype(dtype)
        in_dtypes = [self.dtype] * nin if in_dtypes is None else [np.dtype(t) for t in in_dtypes]
        self.nin = len(in_dtypes)
        types = (ctypes.c_int * _larger(self.nin, 1))(*[_gp_type(t) for t in in_dtypes])
        self._h = _handle_out(_lib.gp_map_kernel_create, self.device._h, _gp_type(self.dtype), self.nin, types,
                              expression.encode())

    def __call__(self, *inputs, a=None, out=None, stream=None):
        if len(inputs) != self.nin:
            raise TypeError("gpuport: the kernel takes %d input arrays, %d given" % (self.nin, len(inputs)))
        n = inputs[0].size if inputs else (out.size if out is not None else 0)
        shape = inputs[0].shape if inputs else out.shape
        out = Array(shape, self.dtype, self.device) if out is None else out
        views = (_R["gp_view"] * _larger(self.nin, 1))(*[_view(x) for x in inputs])
        s = _scalar_arg(a, self.dtype) if a is not None else None
        _check(_lib.gp_map_kernel_run(_stream(stream), self._h, n, _view(out), views,
                                      ctypes.byref(s) if s is not None else None))
        return out

    def __del__(self, _destroy=_lib.gp_map_kernel_destroy):
        if getattr(self, "_h", None):
            _destroy(self._h)
            self._h = None


# ---- Reduce and scan ------------------------------------------------------------------------------

def _reduce(op, x, stream):
    if not isinstance(x, Array):
        raise TypeError("gpuport: reductions take gpuport arrays (use gpuport.asarray)")
    arg = op in ("GP_REDUCE_ARGMIN", "GP_REDUCE_ARGMAX")
    result = np.zeros(1, np.uint64 if arg else x.dtype)
    _check(_lib.gp_reduce_to_host(_stream(stream), _C[op], x._type, x.size, _view(x), result.ctypes.data))
    return int(result[0]) if arg else result[0]


def sum(x, stream=None):
    return _reduce("GP_REDUCE_SUM", x, stream)


def prod(x, stream=None):
    return _reduce("GP_REDUCE_PROD", x, stream)


def min(x, stream=None):
    """The smallest element (NaNs skipped; +inf, or the type's largest value, for none)."""
    return _reduce("GP_REDUCE_MIN", x, stream)


def max(x, stream=None):
    return _reduce("GP_REDUCE_MAX", x, stream)


def argmin(x, stream=None):
    """The index of the first smallest element (of the array flattened)."""
    if x.size == 0:
        raise ValueError("gpuport.argmin: the array is empty")
    return _reduce("GP_REDUCE_ARGMIN", x, stream)


def argmax(x, stream=None):
    if x.size == 0:
        raise ValueError("gpuport.argmax: the array is empty")
    return _reduce("GP_REDUCE_ARGMAX", x, stream)


class ReductionKernel:
    """A reduction of your own over one to three inputs: map_expression over x, y, z gives an
    accumulator, combine_expression joins accumulators a and b (associative and commutative),
    identity starts it: ReductionKernel("x * y", "a + b", "0", [np.float32] * 2) is a dot product.
    Calling it returns the result as a NumPy scalar."""

    def __init__(self, map_expression, combine_expression, identity, in_dtypes, acc_dtype=None, device=None):
        self.device = _device(device)
        in_dtypes = [np.dtype(t) for t in in_dtypes]
        self.acc_dtype = np.dtype(acc_dtype) if acc_dtype is not None else in_dtypes[0]
        self.nin = len(in_dtypes)
        types = (ctypes.c_int * self.nin)(*[_gp_type(t) for t in in_dtypes])
        self._h = _handle_out(_lib.gp_reduce_kernel_create, self.device._h, self.nin, types,
                              _gp_type(self.acc_dtype), map_expression.encode(), combine_expression.encode(),
                              str(identity).encode())

    def __call__(self, *inputs, stream=None):
        if len(inputs) != self.nin:
            raise TypeError("gpuport: the kernel takes %d input arrays, %d given" % (self.nin, len(inputs)))
        for x in inputs[1:]:
            if x.size != inputs[0].size:
                raise ValueError("gpuport: the inputs have %d and %d elements" % (inputs[0].size, x.size))
        views = (_R["gp_view"] * self.nin)(*[_view(x) for x in inputs])
        result = np.zeros(1, self.acc_dtype)
        _check(_lib.gp_reduce_kernel_run_to_host(_stream(stream), self._h, inputs[0].size, views,
                                                 result.ctypes.data))
        return result[0]

    def __del__(self, _destroy=_lib.gp_reduce_kernel_destroy):
        if getattr(self, "_h", None):
            _destroy(self._h)
            self._h = None


def _scan(op, x, exclusive, out, stream):
    if not isinstance(x, Array):
        raise TypeError("gpuport: scans take gpuport arrays (use gpuport.asarray)")
    out = Array(x.shape, x.dtype, x.device) if out is None else out
    if out.size != x.size or out.dtype != x.dtype:
        raise ValueError("gpuport: out must have the input's size and dtype")
    _check(_lib.gp_scan(_stream(stream), _C[op], int(bool(exclusive)), x._type, x.size, _view(x), _view(out)))
    return out


def cumsum(x, exclusive=False, out=None, stream=None):
    """Running sums of the array flattened (NumPy's cumsum); exclusive: from 0, without the element."""
    return _scan("GP_SCAN_SUM", x, exclusive, out, stream)


def cummin(x, exclusive=False, out=None, stream=None):
    return _scan("GP_SCAN_MIN", x, exclusive, out, stream)


def cummax(x, exclusive=False, out=None, stream=None):
    return _scan("GP_SCAN_MAX", x, exclusive, out, stream)


# ---- Stencils and matrix multiply --------------------------------------------------------------------

_SHAPES = {("5point", 5): "GP_STENCIL_5POINT", ("3x3", 9): "GP_STENCIL_3X3", ("7point", 7): "GP_STENCIL_7POINT"}


def stencil(u, weights, boundary="fixed", source=None, source_weight=0.0, steps=1, out=None, stream=None):
    """steps applications of a stencil to the 2D (5 or 9 weights) or 3D (7 weights) array u, as
    gp_stencil_run does (docs/primitives.md gives the weights' order and the boundaries:
    "fixed", "clamp", "zero"); returns a new array, u unchanged. With one step, out= names the
    array to write (another than u), so that a loop allocates nothing."""
    weights = [float(w) for w in weights]
    shape = {(2, 5): "5point", (2, 9): "3x3", (3, 7): "7point"}.get((u.ndim, len(weights)))
    if shape is None:
        raise ValueError("gpuport.stencil: %d weights on a %d-D array: 5 or 9 weights take a 2D array, 7 a 3D one"
                         % (len(weights), u.ndim))
    if u.dtype not in (np.float32, np.float64):
        raise TypeError("gpuport.stencil: float32 or float64 arrays only, not %s" % u.dtype)
    b = {"fixed": "GP_BOUNDARY_FIXED", "clamp": "GP_BOUNDARY_CLAMP", "zero": "GP_BOUNDARY_ZERO"}.get(boundary)
    if b is None:
        raise ValueError("gpuport.stencil: boundary %r is not fixed, clamp or zero" % (boundary,))
    if source is not None:
        _same(u, source, "stencil")
    s = _R["gp_stencil"]()
    s.shape, s.type, s.boundary = _C[_SHAPES[(shape, len(weights))]], u._type, _C[b]
    s.nx, s.ny, s.nz = u.shape[-1], u.shape[-2], u.shape[0] if u.ndim == 3 else 1
    for i, w in enumerate(weights):
        s.weights[i] = w
    s.source_weight = source_weight
    if out is not None:
        _same(u, out, "stencil")
        if steps != 1 or out is u:
            raise ValueError("gpuport.stencil: out= takes one step into another array than u")
        _check(_lib.gp_stencil_apply(_stream(stream), ctypes.byref(s), _view(out), _view(u), _view(source)))
        return out
    a, b2 = u.copy(stream), Array(u.shape, u.dtype, u.device)
    result = _R["gp_view"]()
    _check(_lib.gp_stencil_run(_stream(stream), ctypes.byref(s), steps, _view(a), _view(b2), _view(source),
                               ctypes.byref(result)))
    return b2 if steps % 2 else a


def matmul(a, b, impl="auto", out=None, stream=None):
    """a @ b for 2D float32 or float64 arrays, with gpuport's kernel ("gpuport"), the vendor's
    library ("vendor": cuBLAS, CLBlast, rocBLAS) or, for "auto", GPUPORT_GEMM's choice."""
    if not isinstance(a, Array) or not isinstance(b, Array):
        raise TypeError("gpuport.matmul: takes gpuport arrays (use gpuport.asarray)")
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError("gpuport.matmul: shapes %s and %s do not multiply" % (a.shape, b.shape))
    if a.dtype != b.dtype or a.dtype not in (np.float32, np.float64):
        raise TypeError("gpuport.matmul: two float32 or two float64 arrays, not %s and %s" % (a.dtype, b.dtype))
    impls = {"auto": "GP_GEMM_AUTO", "gpuport": "GP_GEMM_GPUPORT", "vendor": "GP_GEMM_VENDOR"}
    if impl not in impls:
        raise ValueError("gpuport.matmul: impl %r is not auto, gpuport or vendor" % (impl,))
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    out = Array((m, n), a.dtype, a.device) if out is None else out
    if out.shape != (m, n) or out.dtype != a.dtype:
        raise ValueError("gpuport.matmul: out must be %s %s" % ((m, n), a.dtype))
    _check(_lib.gp_gemm(_stream(stream), _C[impls[impl]], a._type, _C["GP_ROW_MAJOR"], _C["GP_NO_TRANS"],
                        _C["GP_NO_TRANS"], m, n, k, 1.0, _view(a), _larger(k, 1), _view(b), _larger(n, 1),
                        0.0, _view(out), _larger(n, 1)))
    return out


def _larger(x, y):
    return x if x > y else y


# ---- Kernels of your own ----------------------------------------------------------------------

class local:
    """Local (shared) memory for a GP_LOCAL_ARG parameter: local(nbytes) as its argument."""

    def __init__(self, nbytes):
        self.nbytes = int(nbytes)


class Program:
    """Source in the gpuport kernel dialect compiled for a device (options: "-DT=float ...")."""

    def __init__(self, source, options=None, device=None):
        self.device = _device(device)
        self._h = _handle_out(_lib.gp_program_create, self.device._h, source.encode(),
                              options.encode() if options else None)

    def kernel(self, name):
        return Kernel(self, name)

    def __del__(self, _destroy=_lib.gp_program_destroy):
        if getattr(self, "_h", None):
            _destroy(self._h)  # kernels made from it keep it alive in gpuport
            self._h = None


class Kernel:
    """A kernel of a Program. params lists its parameters as its source declares them; calling
    it with Python arguments (Arrays, numbers, local(n)) converts each to its parameter's type and
    launches it: kernel(x, 2.5, n, global_size=n)."""

    def __init__(self, program, name):
        self.program, self.name = program, name
        self._h = _handle_out(_lib.gp_kernel_create, program._h, name.encode())
        count = ctypes.c_size_t()
        _check(_lib.gp_kernel_get_param_count(self._h, ctypes.byref(count)))
        self.params = []
        for i in range(count.value):
            p = _R["gp_kernel_param"]()
            status = _lib.gp_kernel_get_param(self._h, i, ctypes.byref(p))
            if status == _C["GP_ERROR_UNSUPPORTED"]:  # declared by a macro: checked by the backend only
                self.params = None
                break
            _check(status)
            self.params.append({"kind": {1: "buffer", 2: "value", 3: "local"}[p.kind],
                                "dtype": _DTYPES.get(p.type), "size": p.size, "type": _text(p.type_name),
                                "name": _text(p.name)})

    def __call__(self, *args, global_size, local_size=None, stream=None):
        if self.params is not None and len(args) != len(self.params):
            raise TypeError("gpuport: kernel %s takes %d arguments, %d given" % (self.name, len(self.params),
                                                                               len(args)))
        keep, gp_args = [], (_R["gp_arg"] * _larger(len(args), 1))()
        for i, value in enumerate(args):
            p = self.params[i] if self.params is not None else None
            a = gp_args[i]
            if isinstance(value, Array):
                a.kind, a.buffer = _C["GP_ARG_BUFFER"], value._buf
            elif isinstance(value, local):
                a.kind, a.size = _C["GP_ARG_LOCAL"], value.nbytes
            else:
                if p is not None and p["kind"] != "value":
                    raise TypeError("gpuport: argument %d (%s) of %s is a %s parameter; %r is a value"
                                    % (i, p["name"], self.name, p["kind"], value))
                if p is not None and p["dtype"] is None:
                    raise TypeError("gpuport: argument %d (%s) of %s has type %s, which Python values cannot fill"
                                    % (i, p["name"], self.name, p["type"]))
                dtype = np.dtype(p["dtype"] if p is not None else np.asarray(value).dtype)
                if dtype.kind in "iu" and not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
                    raise OverflowError("gpuport: %r does not fit argument %d (%s, %s)" % (value, i, p and p["name"],
                                                                                          dtype))
                v = np.array(value, dtype=dtype)
                keep.append(v)
                a.kind, a.value, a.size, a.type = _C["GP_ARG_VALUE"], v.ctypes.data, v.dtype.itemsize, _gp_type(v.dtype)
        g = global_size if isinstance(global_size, (tuple, list)) else (global_size,)
        dims = len(g)
        gs = (ctypes.c_size_t * dims)(*g)
        ls = None
        if local_size is not None:
            l = local_size if isinstance(local_size, (tuple, list)) else (local_size,)
            ls = (ctypes.c_size_t * dims)(*l)
        _check(_lib.gp_kernel_launch(_stream(stream), self._h, dims, gs, ls, len(args), gp_args))

    def __del__(self, _destroy=_lib.gp_kernel_destroy):
        if getattr(self, "_h", None):
            _destroy(self._h)
            self._h = None
