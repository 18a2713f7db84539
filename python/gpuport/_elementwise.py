"""Element-wise work on arrays of any shape, strides and broadcast, with NumPy's type rules. Each
operation becomes a kernel of the dialect generated for the operation, the dtypes, the number of
dimensions (after merging those that lie one after another) and which strides are 0 or 1;
compiled once per device and kept; sizes, offsets and other strides are its arguments. Nothing
goes through the host."""
import ctypes
import math
import numbers
import warnings

import numpy as np

from . import _complex as cx
from ._array import CTYPES, Array, asarray, c_strides, check_dtype, off_default_stream
from ._device import _handle_out, _stream
from ._ffi import CONSTANTS as _C, RECORDS as _R, check as _check, lib as _lib

_kernels = {}
_VALUES = {"int": (ctypes.c_int32, "GP_I32"), "uint": (ctypes.c_uint32, "GP_U32"), "long": (ctypes.c_int64, "GP_I64"),
           "ulong": (ctypes.c_uint64, "GP_U64"), "float": (ctypes.c_float, "GP_F32"),
           "double": (ctypes.c_double, "GP_F64")}
MAX_N = (1 << 32) - 1


def kernel(dev, source):
    """The kernel "k" of source, compiled once for dev (and kept on disk by gpuport's cache)."""
    key = (dev.spec, source)
    k = _kernels.get(key)
    if k is None:
        prog = _handle_out(_lib.gp_program_create, dev._h, (cx.helpers(source) + source).encode(), None)
        try:
            k = _kernels[key] = _handle_out(_lib.gp_kernel_create, prog, b"k")
        finally:
            _lib.gp_program_destroy(prog)  # the kernel keeps it alive
    return k


def launch(dev, source, buffers, values, n, stream=None):
    """Runs kernel k of source over n work-items: buffers first, then (value, C type) pairs."""
    if n > MAX_N:
        raise ValueError("gpuport: one operation takes at most 2^32 - 1 elements, not %d" % n)
    k = kernel(dev, source)
    args = (_R["gp_arg"] * max(len(buffers) + len(values), 1))()
    keep = []
    for a, b in zip(args, buffers):
        a.kind, a.buffer = _C["GP_ARG_BUFFER"], b
    for a, (v, ct) in zip(args[len(buffers):], values):
        ctype, gt = _VALUES[ct]
        c = ctype(v)
        keep.append(c)
        a.kind, a.value, a.size, a.type = _C["GP_ARG_VALUE"], ctypes.addressof(c), ctypes.sizeof(c), _C[gt]
    _check(_lib.gp_kernel_launch(_stream(stream), k, 1, (ctypes.c_size_t * 1)(n), None, len(buffers) + len(values),
                                 args))


def operands(*xs):
    """The gpuport arrays among xs share one device; other array-likes (NumPy arrays, lists) are
    copied there; Python and NumPy scalars stay scalars."""
    dev = None
    for x in xs:
        if isinstance(x, Array):
            if dev is not None and x.device is not dev:
                raise ValueError("gpuport: the arrays are on two devices, %s and %s; copy one with .to() or "
                                 "gp.asarray(x, device=...)" % (dev.spec, x.device.spec))
            dev = x.device
    return [x if isinstance(x, Array) or _is_scalar(x) else asarray(x, device=dev) for x in xs]


def _is_scalar(x):
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, np.ndarray)


def _dummy(x):
    """What stands for x when NumPy is asked for a result's dtype: an array of x's dtype (a 0-d
    one too, as NumPy 2 and the array API type them: NumPy 1 would type it by its value, which
    is on the device), or the number itself."""
    if isinstance(x, Array):
        return np.zeros(1, x.dtype)
    return x


def _fix(dtype):
    return np.dtype(np.float32) if dtype == np.float16 else check_dtype(dtype)


def broadcast_shape(*shapes):
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(nd):
        sizes = {s[d - nd + len(s)] for s in shapes if d - nd + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError("gpuport: operands could not be broadcast together with shapes %s"
                             % " ".join(str(tuple(s)) for s in shapes))
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _merged(shape, strides):
    """The dimensions left when those of size 1 are dropped and neighbours that lie one after
    another in every operand are joined: [(size, [stride of each operand])]."""
    dims = []
    for d, n in enumerate(shape):
        if n == 1:
            continue
        sts = [s[d] for s in strides]
        if dims and all(p == s * n for p, s in zip(dims[-1][1], sts)):
            dims[-1] = (dims[-1][0] * n, sts)
        else:
            dims.append((n, sts))
    return dims or [(1, [0] * len(strides))]


def _source(out_ct, expr_ct, in_cts, scalar_cts, casts, expr, dims, helpers):
    """A kernel k(out, inputs..., scalars..., offsets..., strides..., sizes..., n)."""
    nops = 1 + len(in_cts)
    params = ["GP_GLOBAL %s *o0" % out_ct] + ["GP_GLOBAL const %s *o%d" % (t, j + 1) for j, t in enumerate(in_cts)]
    params += ["%s s%d" % (t, j) for j, t in enumerate(scalar_cts)]
    params += ["long f%d" % j for j in range(nops)]
    body = ["    uint r = i;", "    long " + ", ".join("p%d = f%d" % (j, j) for j in range(nops)) + ";"]
    for d in range(len(dims) - 1, -1, -1):
        coord = "r" if d == 0 else "c"
        adds = []
        for j in range(nops):
            s = dims[d][1][j]
            if s == 1:
                adds.append("p%d += %s;" % (j, coord))
            elif s != 0:
                params.append("long t%d_%d" % (j, d))
                adds.append("p%d += (long)%s * t%d_%d;" % (j, coord, j, d))
        if d == 0:
            body.append("    " + " ".join(adds))
        else:
            params.append("uint n%d" % d)
            body.append("    { uint c = r %% n%d; r /= n%d; %s }" % (d, d, " ".join(adds)))
    params.append("uint n")
    for name, (ct, value) in casts.items():
        body.append("    %s %s = %s;" % (ct, name, value))
    body.append("    o0[p0] = %s;" % cx.convert(out_ct, expr_ct, expr))
    src = "".join(helpers) + "GP_KERNEL void k(%s)\n{\n    GP_FOR(i, n) {\n%s\n    }\n}\n" % (", ".join(params),
                                                                                               "\n".join(body))
    return src.replace("GP_GLOBAL bool", "GP_GLOBAL uchar").replace("const bool", "const uchar")


def _ct(dtype):
    return "bool" if dtype == np.bool_ else CTYPES[np.dtype(dtype)]


def _scalar_ct(value, loop_ct):
    if loop_ct in ("float", "double"):
        return loop_ct
    if isinstance(value, (float, np.floating)):
        return "double"
    return "ulong" if int(value) > (1 << 63) - 1 else "long"


def run(expr, ops, loop_dtypes, out_dtype, out=None, helpers=(), stream=None):
    """out[...] = expr over ops broadcast (x0, x1, ... in expr; each cast to its loop dtype, bool
    as 0/1), a new array of out_dtype when out is None. Writes through a temporary array where
    out overlaps an input in another layout."""
    arrays = [o for o in ops if isinstance(o, Array)]
    dev = arrays[0].device if arrays else (out.device if out is not None else None)
    if out is not None:
        if not isinstance(out, Array):
            raise TypeError("gpuport: out must be a gpuport array, not %s" % type(out).__name__)
        if out._ro:
            raise ValueError("output array is read-only")
        if out.device is not dev and arrays:
            raise ValueError("gpuport: out is on %s and the operands on %s" % (out.device.spec, dev.spec))
    if any(isinstance(o, (complex, np.complexfloating)) for o in ops):  # a complex scalar: a 0-d array
        ops = [asarray(np.asarray(o, lt), device=dev) if isinstance(o, (complex, np.complexfloating)) else o
               for o, lt in zip(ops, loop_dtypes)]
        arrays = [o for o in ops if isinstance(o, Array)]
    kinds = tuple((o.dtype, o.shape, o._st) if isinstance(o, Array) else _scalar_ct(o, _ct(lt))
                  for o, lt in zip(ops, loop_dtypes))
    key = (expr, helpers, tuple(loop_dtypes), kinds, np.dtype(out_dtype),
           None if out is None else (out.dtype, out.shape, out._st))
    plan = _plans.get(key)
    if plan is None:
        plan = _plan(expr, ops, kinds, loop_dtypes, out_dtype, out, helpers)
        if len(_plans) >= 4096:
            _plans.clear()
        _plans[key] = plan
    shape, src, tail = plan
    if out is None:
        out = Array(shape, out_dtype, device=dev)
    else:
        for a in arrays:
            if a._buf.value == out._buf.value and a is not out and not _same_layout(a.broadcast_to(shape), out):
                return assign(out, run(expr, ops, loop_dtypes, out.dtype, None, helpers, stream), stream)
    if out.size == 0:
        return out
    if stream is not None:
        off_default_stream(out, *arrays)
    values = [(float(o) if k in ("float", "double") else int(o), k) for o, k in zip(ops, kinds) if isinstance(k, str)]
    values += [(out._off, "long")] + [(a._off, "long") for a in arrays]
    launch(dev, src, [out._buf] + [a._buf for a in arrays], values + tail, out.size, stream)
    return out


def _plan(expr, ops, kinds, loop_dtypes, out_dtype, out, helpers):
    """What run needs for one expression over operands of one layout each, besides their offsets
    and the scalars' values: the result's shape, the kernel's source, and the values that follow
    the offsets (strides, sizes, n). Raises where out cannot take the result."""
    arrays = [o for o in ops if isinstance(o, Array)]
    shape = broadcast_shape(*[a.shape for a in arrays])
    expr_ct = _ct(out_dtype)  # the expression's type: the result's, whatever out holds
    if out is not None:
        if broadcast_shape(out.shape, shape) != out.shape:
            raise ValueError("gpuport: the result of shape %s does not fit out of shape %s" % (shape, out.shape))
        shape = out.shape
        if np.dtype(out_dtype) != out.dtype and not np.can_cast(out_dtype, out.dtype, "same_kind"):
            raise TypeError("gpuport: cannot cast the result from %s to out's %s under the same_kind rule"
                            % (np.dtype(out_dtype), out.dtype))
        out_dtype, out_st = out.dtype, out._st
    else:
        out_st = c_strides(shape)
    dims = _merged(shape, [out_st] + [a.broadcast_to(shape)._st for a in arrays])
    casts, in_cts, scalar_cts, k_in, k_s = {}, [], [], 0, 0
    for idx, (o, k, lt) in enumerate(zip(ops, kinds, loop_dtypes)):
        lct = _ct(lt)
        if isinstance(o, Array):
            k_in += 1
            in_cts.append(_ct(o.dtype))
            read, read_ct = "o%d[p%d]" % (k_in, k_in), in_cts[-1]
        else:
            scalar_cts.append(k)
            read, read_ct = "s%d" % k_s, k
            k_s += 1
        casts["x%d" % idx] = ("uchar" if lct == "bool" else lct, cx.convert(lct, read_ct, read))
    tail = []
    for d in range(len(dims) - 1, -1, -1):
        tail += [(s, "long") for s in dims[d][1] if s not in (0, 1)]
        if d:
            tail.append((dims[d][0], "uint"))
    tail.append((math.prod(shape), "uint"))
    key = (expr, expr_ct, tuple(in_cts), tuple(scalar_cts), tuple(casts.values()), np.dtype(out_dtype).char,
           tuple(tuple(0 if s == 0 else 1 if s == 1 else 2 for s in d[1]) for d in dims), helpers)
    src = _sources.get(key)
    if src is None:
        src = _sources[key] = _source(_ct(out_dtype), expr_ct, in_cts, scalar_cts, casts, expr, dims, helpers)
    return shape, src, tail


_sources = {}  # the kernel source of each (expression, types, layout class): made once
_plans = {}  # run's plan for each expression, types and operands' layouts (_plan); cleared when large


def _same_layout(a, b):
    return a.shape == b.shape and a._off == b._off and a._st == b._st


def assign(out, value, stream=None):
    """out[...] = value (an array of out's device, a scalar, or anything NumPy takes), converted
    to out's dtype as NumPy converts on assignment."""
    if out._ro:
        raise ValueError("assignment destination is read-only")
    if not isinstance(value, Array) and not _is_scalar(value):
        host = np.asarray(value)
        value = asarray(host.astype(out.dtype, copy=False) if host.dtype != out.dtype and host.dtype.kind in "fiub"
                        else host, device=out.device)
    elif isinstance(value, Array) and value.device is not out.device:
        raise ValueError("gpuport: cannot assign an array of %s to one of %s; copy it with .to() first"
                         % (value.device.spec, out.device.spec))
    elif _is_scalar(value) and out.dtype.kind in "iub" and isinstance(value, (float, np.floating)):
        value = int(value) if np.isfinite(value) else value
    if out.dtype.kind != "c" and isinstance(value, Array) and value.dtype.kind == "c":
        warnings.warn("Casting complex values to real discards the imaginary part",
                      getattr(np, "exceptions", np).ComplexWarning, stacklevel=3)
    if isinstance(value, Array) and broadcast_shape(value.shape, out.shape) != out.shape:
        raise ValueError("gpuport: could not broadcast input array from shape %s into shape %s"
                         % (value.shape, out.shape))
    return run("x0", [value], [out.dtype], out.dtype, out, stream=stream)


def generate(out, expr, scalars, stream=None, prelude="", statements=""):
    """out[i] = expr for each flat index i of a new contiguous out, with scalars s0, s1, ...
    given as (value, C type), after statements; prelude holds helper functions."""
    if out.size:
        src = "%sGP_KERNEL void k(GP_GLOBAL %s *o, %s, uint n)\n{\n    GP_FOR(i, n) { %s o[i] = %s; }\n}\n" % (
            prelude, CTYPES[out.dtype], ", ".join("%s s%d" % (ct, j) for j, (_, ct) in enumerate(scalars)),
            statements, expr)
        launch(out.device, src, [out._buf], list(scalars) + [(out.size, "uint")], out.size, stream)
    return out


# ---- ufuncs ---------------------------------------------------------------------------------------

def _helper_floordiv(ct):
    return ("GP_FUNC %s gp_fdiv_%s(%s a, %s b)\n{\n    if (b == 0) return 0;\n    %s q = a / b;\n"
            "    return (a %% b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n" % (ct, ct, ct, ct, ct))


def _helper_mod(ct):
    if ct in ("float", "double"):
        return ("GP_FUNC %s gp_mod_%s(%s a, %s b)\n{\n    %s m = fmod(a, b);\n"
                "    if (m != 0 && ((m < 0) != (b < 0))) m += b;\n    return m == 0 ? copysign((%s)0, b) : m;\n}\n"
                % (ct, ct, ct, ct, ct, ct))
    return ("GP_FUNC %s gp_mod_%s(%s a, %s b)\n{\n    if (b == 0) return 0;\n    %s m = a %% b;\n"
            "    return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;\n}\n" % (ct, ct, ct, ct, ct))


def _helper_ipow(ct):
    return ("GP_FUNC %s gp_pow_%s(%s a, %s b)\n{\n    %s r = 1;\n    if (b < 0) return a == 1 ? 1 : 0;\n"
            "    while (b > 0) { if (b & 1) r *= a; a *= a; b >>= 1; }\n    return r;\n}\n" % (ct, ct, ct, ct, ct))


def _floats(expr):
    return lambda ct: (expr, ())


_UNARY_FLOAT = {"sqrt": "sqrt", "exp": "exp", "log": "log", "log2": "log2", "log10": "log10", "sin": "sin",
                "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "sinh": "sinh",
                "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "floor": "floor", "ceil": "ceil", "trunc": "trunc", "exp2": "exp2",
                "expm1": "expm1", "log1p": "log1p", "rint": "rint"}


def _expr(name, ct):
    """The expression (and helper functions) of ufunc name in loop C type ct."""
    if ct in cx.COMPLEX_CTS:
        try:
            return cx.expr(name, ct), ()
        except KeyError:
            raise TypeError("gpuport.%s: not computed for complex numbers (gpuport's complex ufuncs: %s)"
                            % (name, ", ".join(cx.NAMES))) from None
    flt = ct in ("float", "double")
    signed = ct in ("char", "short", "int", "long")
    if name in _UNARY_FLOAT:
        return ("%s(x0)" % _UNARY_FLOAT[name], ()) if flt else ("x0", ())
    table = {
        "add": "x0 + x1", "subtract": "x0 - x1", "multiply": "x0 * x1", "true_divide": "x0 / x1",
        "negative": "-x0", "positive": "x0", "conjugate": "x0", "square": "x0 * x0", "reciprocal": "1 / x0",
        "less": "x0 < x1", "less_equal": "x0 <= x1", "greater": "x0 > x1", "greater_equal": "x0 >= x1",
        "equal": "x0 == x1", "not_equal": "x0 != x1",
        "logical_and": "(x0 != 0) && (x1 != 0)", "logical_or": "(x0 != 0) || (x1 != 0)",
        "logical_xor": "(x0 != 0) != (x1 != 0)", "logical_not": "x0 == 0",
        "bitwise_and": "x0 & x1", "bitwise_or": "x0 | x1", "bitwise_xor": "x0 ^ x1",
        "left_shift": "x0 << x1", "right_shift": "x0 >> x1",
        "invert": "x0 == 0" if ct == "bool" else "~x0",
        # NaN where a float operand is NaN; integers have none (and compilers warn of x != x there)
        "minimum": "isnan(x0) ? x0 : (isnan(x1) ? x1 : (x0 < x1 ? x0 : x1))" if flt else "(x0 < x1 ? x0 : x1)",
        "maximum": "isnan(x0) ? x0 : (isnan(x1) ? x1 : (x0 > x1 ? x0 : x1))" if flt else "(x0 > x1 ? x0 : x1)",
        "absolute": "fabs(x0)" if flt else "(x0 < 0 ? -x0 : x0)" if signed else "x0",
        "sign": ("(isnan(x0) ? x0 : " if flt else "(") + "(%s)((x0 > 0) - (x0 < 0)))" % ct,
        "isnan": "isnan(x0)" if flt else "0", "isinf": "isinf(x0)" if flt else "0",
        "isfinite": "isfinite(x0)" if flt else "1",
        "where": "x0 ? x1 : x2", "clip": "x0 < x1 ? x1 : (x0 > x2 ? x2 : x0)",
        "arctan2": "atan2(x0, x1)", "hypot": "hypot(x0, x1)",
        "fmod": "fmod(x0, x1)" if flt else "(x1 == 0 ? 0 : x0 % x1)",
    }
    if name in table:
        return table[name], ()
    if name == "floor_divide":
        return ("floor(x0 / x1)", ()) if flt else ("gp_fdiv_%s(x0, x1)" % ct, (_helper_floordiv(ct),))
    if name == "remainder":
        return "gp_mod_%s(x0, x1)" % ct, (_helper_mod(ct),)
    if name == "power":
        return ("pow(x0, x1)", ()) if flt else ("gp_pow_%s(x0, x1)" % ct, (_helper_ipow(ct),))
    raise KeyError(name)


# loop dtype: "out" (the result's), "in" (the inputs' common one: comparisons, logic)
_LOOP_IN = {"less", "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and", "logical_or",
            "logical_xor", "logical_not", "isnan", "isinf", "isfinite"}


def ufunc(name, *xs, out=None, stream=None):
    xs = operands(*xs)
    np_ufunc = getattr(np, "divide" if name == "true_divide" else name)
    if not any(isinstance(x, Array) for x in xs):  # scalars only: a 0-d array of NumPy's answer
        for x in xs:
            if not isinstance(x, (numbers.Number, np.generic)):
                raise TypeError("gpuport.%s: takes arrays and numbers, not %s" % (name, type(x).__name__))
        with np.errstate(all="ignore"):
            return asarray(np.asarray(np_ufunc(*xs)), device=out.device if out is not None else None)
    # NumPy's types for these operands (scalars by value: NumPy 1 types them so), asked once
    key = (name,) + tuple(x.dtype if isinstance(x, Array) else (type(x), x) for x in xs)
    found = _resolved.get(key)
    if found is None:
        with np.errstate(all="ignore"):
            res = _fix(np_ufunc(*[_dummy(x) for x in xs]).dtype)
            complex_in = res.kind != "c" and any(isinstance(x, Array) and x.dtype.kind == "c" for x in xs)
            loop = _fix(np.result_type(*[_dummy(x) for x in xs])) if name in _LOOP_IN or complex_in else res
        if len(_resolved) >= 4096:
            _resolved.clear()
        found = _resolved[key] = (res, loop) + _expr(name, _ct(loop))
    res, loop, expr, helpers = found
    return run(expr, xs, [loop] * len(xs), res, out, helpers, stream)


_resolved = {}  # ufunc's result and loop dtypes, expression and helpers for each name and operand types


def _make(name):
    def f(*xs, out=None, stream=None):
        return ufunc(name, *xs, out=out, stream=stream)
    f.__name__ = name
    f.__doc__ = "NumPy's %s, element-wise on the device, broadcasting its operands." % name
    return f


_NAMES = list(_UNARY_FLOAT) + ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power",
                               "negative", "positive", "conjugate", "square", "reciprocal", "absolute", "sign", "less",
                               "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and",
                               "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
                               "bitwise_xor", "invert", "left_shift", "right_shift", "minimum", "maximum", "isnan", "isinf", "isfinite",
                               "arctan2", "hypot", "fmod"]
globals().update({n: _make(n) for n in _NAMES})
# NumPy's other names, and the array API standard's
divide, mod, abs, bitwise_not, conj = true_divide, remainder, absolute, invert, conjugate  # noqa: F821
acos, asin, atan, atan2, acosh, asinh, atanh = arccos, arcsin, arctan, arctan2, arccosh, arcsinh, arctanh  # noqa: F821
pow, bitwise_invert, bitwise_left_shift, bitwise_right_shift = power, invert, left_shift, right_shift  # noqa: F821


def real(val):
    """NumPy's real: the real parts of a complex array (a view), or the array."""
    return operands(val)[0].real


def imag(val):
    """NumPy's imag: the imaginary parts of a complex array (a view), or zeros."""
    return operands(val)[0].imag


def angle(z, deg=False):
    """NumPy's angle: the argument of each element, in radians (degrees with deg)."""
    z, = operands(z)
    a = arctan2(z.imag, z.real)  # noqa: F821
    return multiply(a, 180 / math.pi) if deg else a  # noqa: F821


def make_complex(re, im, dtype):
    """re + 1j * im: the complex array of dtype with these parts (arrays or numbers)."""
    r = np.dtype(np.dtype(dtype).char.lower())
    return run("%s_make(x0, x1)" % CTYPES[np.dtype(dtype)], operands(re, im), [r, r], dtype)


def where(condition, x=None, y=None):
    """x where condition holds, else y (both broadcast); without x and y NumPy returns indices,
    which gpuport does not offer."""
    if x is None or y is None:
        raise TypeError("gpuport.where: takes condition, x and y (the one-argument form is not supported)")
    c, x, y = operands(condition, x, y)
    res = _fix(np.where(np.zeros(1, bool), _dummy(x), _dummy(y)).dtype)
    return run("x0 ? x1 : x2", [c, x, y], [np.bool_, res, res], res)


def clip(a, a_min=None, a_max=None, out=None):
    """NumPy's clip: a limited to [a_min, a_max] (either may be None)."""
    if a_min is None and a_max is None:
        raise ValueError("gpuport.clip: give a_min, a_max or both")
    if a_min is None:
        return minimum(a, a_max, out=out)  # noqa: F821
    if a_max is None:
        return maximum(a, a_min, out=out)  # noqa: F821
    a, lo, hi = operands(a, a_min, a_max)
    with np.errstate(all="ignore"):
        res = _fix(np.clip(*[_dummy(v) for v in (a, lo, hi)]).dtype)
    return run("x0 < x1 ? x1 : (x0 > x2 ? x2 : x0)", [a, lo, hi], [res] * 3, res, out)


def matmul_kernel(a, b, dtype):
    """a @ b for stacks of matrices of any dtype: one work-item an element of the result, its
    row of a and column of b read through their strides."""
    dtype = _fix(dtype)
    lead = broadcast_shape(a.shape[:-2], b.shape[:-2])
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    a = a.broadcast_to(lead + (m, k))
    b = b.broadcast_to(lead + (k, n))
    out = Array(lead + (m, n), dtype, device=a.device)
    if out.size == 0:
        return out
    ct = CTYPES[dtype]
    src = ("GP_KERNEL void k(GP_GLOBAL %s *o, GP_GLOBAL const %s *a, GP_GLOBAL const %s *b, long fo, long fa, long fb, "
           "long ra, long ca, long rb, long cb, uint m, uint n, uint k, uint n_out)\n{\n    GP_FOR(i, n_out) {\n"
           "        uint col = i %% n, row = (i / n) %% m;\n        %s acc = 0;\n"
           "        for (uint t = 0; t < k; t++)\n"
           "            acc += (%s)a[fa + row * ra + t * ca] * (%s)b[fb + t * rb + col * cb];\n"
           "        o[fo + i] = acc;\n    }\n}\n" % (ct, CTYPES[a.dtype], CTYPES[b.dtype], ct, ct, ct))
    for idx in np.ndindex(*lead) if lead else [()]:
        av, bv = a[idx], b[idx]
        o = out[idx]
        launch(a.device, src, [o._buf, av._buf, bv._buf], [(o._off, "long"), (av._off, "long"), (bv._off, "long"),
               (av._st[0], "long"), (av._st[1], "long"), (bv._st[0], "long"), (bv._st[1], "long"), (m, "uint"),
               (n, "uint"), (k, "uint"), (m * n, "uint")], m * n)
    return out
