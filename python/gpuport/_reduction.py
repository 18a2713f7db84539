"""Reductions with NumPy's axis, keepdims and result dtypes: sum, prod, min, max, argmin, argmax,
any, all, and mean, var and std built on them. A reduction is a kernel generated like the
element-wise ones: each work-item reduces a part of one output's elements (interleaved on GPUs,
so that neighbours read neighbours; one block each on CPUs), and further passes reduce the
parts, so that one output of many elements keeps the device busy. A whole contiguous float sum
goes to gp_reduce."""
import builtins
import math

import numpy as np

from ._array import CTYPES, GP_TYPES, Array, normalize_axis
from ._device import _stream
from ._elementwise import _fix, _merged, launch, operands
from ._ffi import CONSTANTS as _C, RECORDS as _R, check as _check, lib as _lib

# op: (first value of the accumulator from v, how v joins it)
_OPS = {
    "sum": ("v", "acc = acc + v;"),
    "prod": ("v", "acc = acc * v;"),
    "min": ("v", "if (v != v || v < acc) acc = v;"),
    "max": ("v", "if (v != v || v > acc) acc = v;"),
    "any": ("(v != 0)", "acc = acc || (v != 0);"),
    "all": ("(v != 0)", "acc = acc && (v != 0);"),
    "argmin": ("v", "if (v != v ? (acc == acc || vi < best) : (acc == acc && (v < acc || (v == acc && vi < best)))) "
               "{ acc = v; best = vi; }"),
    "argmax": ("v", "if (v != v ? (acc == acc || vi < best) : (acc == acc && (v > acc || (v == acc && vi < best)))) "
               "{ acc = v; best = vi; }"),
}


def _source(in_ct, at_ct, op, has_idx, kept, red, interleave):
    init, join = _OPS[op]
    arg = op.startswith("arg")
    params = ["GP_GLOBAL %s *acc_out" % at_ct] + (["GP_GLOBAL long *idx_out"] if arg else [])
    params += ["GP_GLOBAL const %s *xin" % in_ct] + (["GP_GLOBAL const long *idx"] if has_idx else []) + ["long f"]
    body = ["        uint o = w / G, g = w % G, r = o;", "        long base = f;"]
    for d in range(len(kept) - 1, -1, -1):
        s = kept[d][1][0]
        add = "" if s == 0 else "base += (long)%s * tk%d;" % ("r" if d == 0 else "c", d)
        params += ["long tk%d" % d] if s != 0 else []
        if d:
            params.append("uint nk%d" % d)
            body.append("        { uint c = r %% nk%d; r /= nk%d; %s }" % (d, d, add))
        else:
            body.append("        " + add)
    loop = ["            ulong q = t;", "            long p = base;"]
    for d in range(len(red) - 1, -1, -1):
        s = red[d][1][0]
        step = "p += (long)%s;" if s == 1 else "p += (long)%%s * tr%d;" % d
        add = "" if s == 0 else step % ("q" if d == 0 else "c")
        params += ["long tr%d" % d] if s not in (0, 1) else []
        if d:
            params.append("ulong nr%d" % d)
            loop.append("            { ulong c = q %% nr%d; q /= nr%d; %s }" % (d, d, add))
        else:
            loop.append("            " + add)
    params += ["ulong R", "uint G", "uint n"]
    if interleave:
        body.append("        ulong t0 = g, t1 = R, step = G;")
    else:
        body.append("        ulong chunk = (R + G - 1) / G, t0 = (ulong)g * chunk, step = 1;")
        body.append("        ulong t1 = t0 + chunk < R ? t0 + chunk : R;")
    body += ["        %s acc = 0;" % at_ct, "        long best = -1;",
             "        for (ulong t = t0; t < t1; t += step) {"] + loop + [
        "            %s v = (%s)(xin[p]%s);" % (at_ct, at_ct, " != 0" if op in ("any", "all") else ""),
        "            long vi = %s;" % ("idx[p]" if has_idx else "(long)t"),
        "            if (best < 0) { acc = %s; best = vi; } else { %s }" % (init, join),
        "        }", "        acc_out[w] = acc;"] + (["        idx_out[w] = best;"] if arg else [])
    return "GP_KERNEL void k(%s)\n{\n    GP_FOR(w, n) {\n%s\n    }\n}\n" % (", ".join(params), "\n".join(body))


def _pass(x, nkept, op, at, idx=None):
    """One pass over x, whose last ndim - nkept axes are reduced: (partial results of shape
    kept + (G,), their indices or None)."""
    dev = x.device
    kshape, rshape = x.shape[:nkept], x.shape[nkept:]
    O, R = math.prod(kshape), math.prod(rshape)
    gpu = dev.type == "gpu"
    want = 65536 if gpu else 4 * builtins.max(dev.info["compute_units"], 1)
    G = builtins.max(1, builtins.min(R, want // builtins.max(O, 1), math.ceil(R / 32)))
    G = math.ceil(R / math.ceil(R / G))  # no part left empty
    acc = Array(kshape + (G,), at, device=dev)
    out_idx = Array(kshape + (G,), np.int64, device=dev) if op.startswith("arg") else None
    kept = _merged(kshape, [x._st[:nkept]])
    red = _merged(rshape, [x._st[nkept:]])
    src = _source(CTYPES[x.dtype], CTYPES[at], op, idx is not None, kept, red, gpu)
    values = [(x._off, "long")]
    for d in range(len(kept) - 1, -1, -1):
        values += [(kept[d][1][0], "long")] if kept[d][1][0] != 0 else []
        values += [(kept[d][0], "uint")] if d else []
    for d in range(len(red) - 1, -1, -1):
        values += [(red[d][1][0], "long")] if red[d][1][0] not in (0, 1) else []
        values += [(red[d][0], "ulong")] if d else []
    values += [(R, "ulong"), (G, "uint"), (O * G, "uint")]
    bufs = [acc._buf] + ([out_idx._buf] if out_idx is not None else []) + [x._buf] + ([idx._buf] if idx is not None
                                                                                       else [])
    launch(dev, src, bufs, values, O * G)
    return acc, out_idx


def _axes(x, axis):
    if axis is None:
        return tuple(range(x.ndim))
    axes = tuple(normalize_axis(a, x.ndim) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError("gpuport: duplicate value in 'axis'")
    return axes


def _keep(r, x, axes, keepdims):
    if keepdims:
        return r.reshape([1 if d in axes else n for d, n in enumerate(x.shape)])
    return r


def reduce(op, x, axis=None, dtype=None, keepdims=False, out=None):
    x, = operands(x)
    if not isinstance(x, Array):
        x = operands(np.asarray(x))[0]
    if x.dtype.kind == "c":
        return _complex(op, x, axis, dtype, keepdims, out)
    axes = _axes(x, axis)
    kept = [d for d in range(x.ndim) if d not in axes]
    oshape = tuple(x.shape[d] for d in kept)
    R = math.prod(x.shape[d] for d in axes)
    dummy = np.zeros((1,) * x.ndim, x.dtype)
    if op.startswith("arg"):
        if axis is not None and len(axes) > 1:
            raise TypeError("gpuport.%s: axis must be an integer or None" % op)
        at, rdtype = x.dtype, np.dtype(np.int64)
    elif op in ("any", "all"):
        at = rdtype = np.dtype(np.bool_)
    elif op in ("min", "max"):
        at = rdtype = x.dtype
    else:
        rdtype = at = _fix(getattr(np, op)(dummy, dtype=dtype).dtype)
    if R == 0 and op in ("min", "max", "argmin", "argmax"):
        raise ValueError("gpuport.%s: a reduction over a zero-size array has no identity" % op)
    if R == 0 or math.prod(oshape) == 0:
        r = Array(oshape, rdtype, device=x.device)
        r.fill({"sum": 0, "prod": 1, "any": False, "all": True}.get(op, 0))
    elif (op == "sum" and len(axes) == x.ndim and x.contiguous and x.dtype == at and at in GP_TYPES
          and at.kind in "fu" + ("i" if at == np.int64 else "")):
        r = Array((), at, device=x.device)
        _check(_lib.gp_reduce(_stream(None), _C["GP_REDUCE_SUM"], GP_TYPES[at], x.size, _R["gp_view"](x._buf, x._off),
                              _R["gp_view"](r._buf, 0)))
    else:
        v = x.transpose(kept + list(axes))
        acc, idx = _pass(v, len(kept), op, at)
        combine = {"argmin": "argmin", "argmax": "argmax"}.get(op, op)
        while acc.shape[-1] > 1:
            acc, idx = _pass(acc, len(oshape), combine, at, idx)
        r = (idx if idx is not None else acc)[..., 0]
        if r.dtype != rdtype:
            r = r.astype(rdtype)
    r = _keep(r, x, axes, keepdims)
    if out is not None:
        out[...] = r
        return out
    return r


def _complex(op, x, axis, dtype, keepdims, out):
    """A reduction of complex elements: sums part by part, any and all of x != 0."""
    if op in ("any", "all"):
        return reduce(op, ew.not_equal(x, 0), axis, None, keepdims, out)
    if op != "sum":
        raise TypeError("gpuport.%s: not computed for complex numbers (sum, mean, any, all are)" % op)
    rdtype = _fix(np.sum(np.zeros(1, x.dtype), dtype=dtype).dtype)
    parts = [reduce("sum", p, axis, np.dtype(rdtype.char.lower()), keepdims) for p in (x.real, x.imag)]
    r = ew.make_complex(parts[0], parts[1], rdtype)
    return r if out is None else _into(out, r)


def sum(a, axis=None, dtype=None, out=None, keepdims=False):
    return reduce("sum", a, axis, dtype, keepdims, out)


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    return reduce("prod", a, axis, dtype, keepdims, out)


def min(a, axis=None, out=None, keepdims=False):
    return reduce("min", a, axis, None, keepdims, out)


def max(a, axis=None, out=None, keepdims=False):
    return reduce("max", a, axis, None, keepdims, out)


def argmin(a, axis=None, out=None, keepdims=False):
    return reduce("argmin", a, axis, None, keepdims, out)


def argmax(a, axis=None, out=None, keepdims=False):
    return reduce("argmax", a, axis, None, keepdims, out)


def any(a, axis=None, out=None, keepdims=False):
    return reduce("any", a, axis, None, keepdims, out)


def all(a, axis=None, out=None, keepdims=False):
    return reduce("all", a, axis, None, keepdims, out)


def _count(x, axis):
    return math.prod(x.shape[d] for d in _axes(x, axis))


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    x, = operands(a)
    if dtype is None:
        dtype = _fix(np.mean(np.zeros((1,) * x.ndim, x.dtype)).dtype)
    s = sum(x, axis, dtype, keepdims=keepdims)
    with np.errstate(all="ignore"):
        r = ew.true_divide(s, _count(x, axis) or float("nan")).astype(dtype, copy=False)
    return r if out is None else _into(out, r)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    x, = operands(a)
    m = mean(x, axis, dtype, keepdims=True)
    d = ew.subtract(x, m)
    r = mean(ew.square(ew.absolute(d)) if d.dtype.kind == "c" else ew.multiply(d, d), axis, dtype, keepdims=keepdims)
    n = _count(x, axis)
    if ddof:
        r = ew.multiply(r, n / (n - ddof) if n > ddof else float("inf")).astype(r.dtype, copy=False)
    return r if out is None else _into(out, r)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    r = ew.sqrt(var(a, axis, dtype, ddof=ddof, keepdims=keepdims))
    return r if out is None else _into(out, r)


def _into(out, r):
    out[...] = r
    return out


def count_nonzero(a, axis=None):
    x, = operands(a)
    return sum(ew.not_equal(x, 0), axis)


def norm(x, ord=None, axis=None, keepdims=False):
    """NumPy's linalg.norm for vectors (ord None, 2, 1, inf, -inf, 0 or any p) and matrices (None
    or 'fro', 1, -1, inf, -inf; linalg.norm takes 2, -2 and 'nuc' from the singular values)."""
    x, = operands(x)
    a = x if x.dtype.kind == "f" else ew.absolute(x) if x.dtype.kind == "c" else x.astype(np.float64)
    if axis is None and ord is None:
        return ew.sqrt(sum(ew.square(a))).reshape((1,) * x.ndim if keepdims else ())
    axes = _axes(x, axis) if axis is not None else tuple(range(x.ndim))
    a = ew.absolute(a)
    if len(axes) == 1:
        if ord is None or ord == 2:
            return ew.sqrt(sum(ew.square(a), axes, keepdims=keepdims))
        if ord == np.inf:
            return max(a, axes, keepdims=keepdims)
        if ord == -np.inf:
            return min(a, axes, keepdims=keepdims)
        if ord == 0:
            return sum(ew.not_equal(a, 0).astype(a.dtype), axes, keepdims=keepdims)
        if ord == 1:
            return sum(a, axes, keepdims=keepdims)
        return ew.power(sum(ew.power(a, ord), axes, keepdims=keepdims), 1.0 / ord)
    if len(axes) != 2:
        raise ValueError("gpuport.linalg.norm: improper number of dimensions to norm")
    r0, r1 = axes
    if ord in (None, "fro"):
        return ew.sqrt(sum(ew.square(a), axes, keepdims=keepdims))
    if ord in (1, -1):
        s = sum(a, r0, keepdims=True)
        r = (max if ord == 1 else min)(s, r1, keepdims=True)
    elif ord in (np.inf, -np.inf):
        s = sum(a, r1, keepdims=True)
        r = (max if ord == np.inf else min)(s, r0, keepdims=True)
    else:
        raise ValueError("gpuport.linalg.norm: matrix norm %r is not supported (None, 'fro', 1, -1, 2, -2, inf, -inf, 'nuc')"
                         % (ord,))
    return r if keepdims else r.reshape([n for d, n in enumerate(r.shape) if d not in axes])


def _float(x):
    return x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)


from . import _elementwise as ew  # noqa: E402
