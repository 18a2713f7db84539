"""gpuport's own primitives beyond NumPy's names (scans, stencils) and kernels of your own in the dialect (Program, Kernel), each over the C API it names."""
import ctypes

import numpy as np

from ._array import CTYPES, GP_TYPES, Array, check_out, off_default_stream
from ._device import _handle_out, _stream, _text, device as _device
from ._elementwise import operands
from ._ffi import CONSTANTS as _C, RECORDS as _R, check as _check, lib as _lib

_DTYPES = {v: k for k, v in GP_TYPES.items()}


def _gp_type(dtype, what):
    dtype = np.dtype(dtype)
    if dtype not in GP_TYPES:
        raise TypeError("gpuport.%s: takes float32, float64, int32, uint32, int64 or uint64, not %s" % (what, dtype))
    return GP_TYPES[dtype]


def _contig(x, what):
    """x as a gpuport array in C order (a copy of a strided view)."""
    x, = operands(x)
    if not isinstance(x, Array):
        raise TypeError("gpuport.%s: takes gpuport arrays (use gpuport.asarray)" % what)
    return x if x.contiguous else x.copy()


def _view(a):
    return _R["gp_view"](a._buf, a._off) if a is not None else _R["gp_view"](None, 0)


def _larger(x, y):
    return x if x > y else y


def _scan(op, x, exclusive, out, stream):
    x = _contig(x, "cumsum")
    if out is not None:
        check_out(out, x.dtype, "cumsum")
    out = Array(x.size, x.dtype, device=x.device) if out is None else out
    if out.size != x.size or out.dtype != x.dtype or not out.contiguous:
        raise ValueError("gpuport: out must be a contiguous array of the input's size and dtype")
    if stream is not None:
        off_default_stream(x, out)
    _check(_lib.gp_scan(_stream(stream), _C[op], int(bool(exclusive)), _gp_type(x.dtype, "cumsum"), x.size, _view(x),
                        _view(out)))
    return out


def cumsum(x, exclusive=False, out=None, stream=None):
    """Running sums of the array flattened (NumPy's cumsum); exclusive: from 0, without the element."""
    return _scan("GP_SCAN_SUM", x, exclusive, out, stream)


def cummin(x, exclusive=False, out=None, stream=None):
    return _scan("GP_SCAN_MIN", x, exclusive, out, stream)


def cummax(x, exclusive=False, out=None, stream=None):
    return _scan("GP_SCAN_MAX", x, exclusive, out, stream)


_SHAPES = {("5point", 5): "GP_STENCIL_5POINT", ("3x3", 9): "GP_STENCIL_3X3", ("7point", 7): "GP_STENCIL_7POINT"}


def stencil(u, weights, boundary="fixed", source=None, source_weight=0.0, steps=1, out=None, stream=None):
    """steps applications of a stencil to the 2D (5 or 9 weights) or 3D (7 weights) array u, as
    gp_stencil_run does (docs/primitives.md gives the weights' order and the boundaries:
    "fixed", "clamp", "zero"); returns a new array, u unchanged. With one step, out= names the
    array to write (another than u), so that a loop allocates nothing."""
    u = _contig(u, "stencil")
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
    for other in (source, out):
        if other is not None and (other.shape != u.shape or other.dtype != u.dtype or other.device is not u.device
                                  or not other.contiguous):
            raise ValueError("gpuport.stencil: source and out must be contiguous arrays like u (%s %s on %s)"
                             % (u.shape, u.dtype, u.device.spec))
    if stream is not None:
        off_default_stream(u, source, out)
    s = _R["gp_stencil"]()
    s.shape, s.type, s.boundary = _C[_SHAPES[(shape, len(weights))]], GP_TYPES[u.dtype], _C[b]
    s.nx, s.ny, s.nz = u.shape[-1], u.shape[-2], u.shape[0] if u.ndim == 3 else 1
    for i, w in enumerate(weights):
        s.weights[i] = w
    s.source_weight = source_weight
    if out is not None:
        check_out(out, u.dtype, "stencil")
        if steps != 1 or out is u:
            raise ValueError("gpuport.stencil: out= takes one step into another array than u")
        _check(_lib.gp_stencil_apply(_stream(stream), ctypes.byref(s), _view(out), _view(u), _view(source)))
        return out
    a, b2 = u.copy(stream), Array(u.shape, u.dtype, device=u.device)
    result = _R["gp_view"]()
    _check(_lib.gp_stencil_run(_stream(stream), ctypes.byref(s), steps, _view(a), _view(b2), _view(source),
                               ctypes.byref(result)))
    return b2 if steps % 2 else a


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


_CSCALARS = {np.dtype(t): c for t, c in ((np.float32, ctypes.c_float), (np.float64, ctypes.c_double),
                                          (np.int32, ctypes.c_int32), (np.uint32, ctypes.c_uint32),
                                          (np.int64, ctypes.c_int64), (np.uint64, ctypes.c_uint64))}
_BUFFER, _VALUE, _LOCAL = _C["GP_ARG_BUFFER"], _C["GP_ARG_VALUE"], _C["GP_ARG_LOCAL"]
_ARG_ARRAYS = {}


def _arg_array(n):
    """The ctypes type of n gp_arg (at least one), made once."""
    t = _ARG_ARRAYS.get(n)
    if t is None:
        t = _ARG_ARRAYS[n] = _R["gp_arg"] * _larger(n, 1)
    return t


def _range(dtype):
    """An integer type's (min, max), or None."""
    return (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)) if dtype is not None and dtype.kind in "iu" else None


_TYPE_NAMES = {"unsigned char": "uchar", "signed char": "char", "unsigned short": "ushort",
               "unsigned int": "uint", "unsigned": "uint", "unsigned long": "ulong"}


class Kernel:
    """A kernel of a Program. params lists its parameters as its source declares them; calling
    it with Python arguments (Arrays, numbers, local(n)) converts each to its parameter's type and
    launches it: kernel(x, 2.5, n, global_size=n). An array must match the element type its
    parameter declares and start at its buffer's beginning (a slice that does not: pass a copy)."""

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
            declared = " ".join(w for w in _text(p.type_name).replace("*", " ").split()
                                if w not in ("const", "volatile", "GP_GLOBAL", "__global"))
            declared = _TYPE_NAMES.get(declared, declared)
            dtype = _DTYPES.get(p.type)
            self.params.append({"kind": {1: "buffer", 2: "value", 3: "local"}[p.kind],
                                "dtype": dtype, "size": p.size, "type": _text(p.type_name), "name": _text(p.name),
                                "elem": declared if declared in CTYPES.values() else None,
                                "range": _range(dtype)})

    def _refuse_buffer(self, i, p, value):
        """Raises what is wrong with array value as argument i."""
        if value._off:
            raise ValueError("gpuport: argument %d of %s is a view that starts %d elements into its buffer; "
                             "pass value.copy()" % (i, self.name, value._off))
        if p["kind"] != "buffer":
            raise TypeError("gpuport: argument %d (%s) of %s is a %s parameter, not an array" % (i, p["name"],
                                                                                               self.name, p["kind"]))
        raise TypeError("gpuport: argument %d (%s) of %s points to %s, but the array holds %s"
                        % (i, p["name"], self.name, p["elem"], value.dtype))

    def _value(self, i, p, value):
        """A value argument as a ctypes scalar of its parameter's type."""
        if p is not None and p["kind"] != "value":
            raise TypeError("gpuport: argument %d (%s) of %s is a %s parameter; %r is a value"
                            % (i, p["name"], self.name, p["kind"], value))
        if p is not None and p["dtype"] is None:
            raise TypeError("gpuport: argument %d (%s) of %s has type %s, which Python values cannot fill"
                            % (i, p["name"], self.name, p["type"]))
        dtype, bounds = (p["dtype"], p["range"]) if p is not None else (np.asarray(value).dtype, None)
        if isinstance(value, np.generic):  # NumPy's scalars compare and convert slowly: as Python's
            value = value.item()
        bounds = bounds or _range(dtype)
        if bounds and not bounds[0] <= value <= bounds[1]:
            raise OverflowError("gpuport: %r does not fit argument %d (%s, %s)" % (value, i, p and p["name"], dtype))
        ctype = _CSCALARS[dtype]
        try:
            return ctype(value), dtype
        except TypeError:  # a float for an integer parameter, a 0-d array: as NumPy converts them
            return ctype(np.array(value, dtype=dtype).item()), dtype

    def __call__(self, *args, global_size, local_size=None, stream=None):
        params = self.params
        if params is not None and len(args) != len(params):
            raise TypeError("gpuport: kernel %s takes %d arguments, %d given" % (self.name, len(params), len(args)))
        keep, gp_args = [], _arg_array(len(args))()
        for i, value in enumerate(args):
            p = params[i] if params is not None else None
            a = gp_args[i]
            if isinstance(value, Array):
                if value._off or (p is not None and (p["kind"] != "buffer" or
                                                     p["elem"] not in (None, CTYPES[value.dtype]))):
                    self._refuse_buffer(i, p, value)
                if stream is not None:
                    off_default_stream(value)
                a.kind, a.buffer = _BUFFER, value._buf
            elif isinstance(value, local):
                a.kind, a.size = _LOCAL, value.nbytes
            else:
                v, dtype = self._value(i, p, value)
                keep.append(v)
                a.kind, a.value, a.size, a.type = _VALUE, ctypes.addressof(v), dtype.itemsize, GP_TYPES[dtype]
        g = global_size if isinstance(global_size, (tuple, list)) else (global_size,)
        dims = len(g)
        gs = (ctypes.c_size_t * dims)(*g)
        ls = None
        if local_size is not None:
            lsz = local_size if isinstance(local_size, (tuple, list)) else (local_size,)
            ls = (ctypes.c_size_t * dims)(*lsz)
        _check(_lib.gp_kernel_launch(_stream(stream), self._h, dims, gs, ls, len(args), gp_args))

    def __del__(self, _destroy=_lib.gp_kernel_destroy):
        if getattr(self, "_h", None):
            _destroy(self._h)
            self._h = None
