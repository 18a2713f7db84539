"""Boolean masks (x[mask], x[mask] = v), integer-array indices (x[idx], x[idx] = v), nonzero,
flatnonzero, compress, and NumPy's nan-skipping reductions, on the device: a mask's positions come
from an exclusive scan of it, and one kernel moves the chosen elements."""
import numpy as np

from . import _complex as cx
from . import _elementwise as ew
from . import _reduction as red
from ._array import CTYPES, Array, asarray
from ._primitives import Program, cumsum

_MOVE = r"""
GP_KERNEL void gather(GP_GLOBAL const T *x, GP_GLOBAL const uchar *m, GP_GLOBAL const long *pos, GP_GLOBAL T *out,
                      uint n)
{
    GP_FOR(i, n) if (m[i]) out[pos[i]] = x[i];
}

GP_KERNEL void scatter(GP_GLOBAL T *x, GP_GLOBAL const uchar *m, GP_GLOBAL const long *pos, GP_GLOBAL const T *v,
                       uint n)
{
    GP_FOR(i, n) if (m[i]) x[i] = v[pos[i]];
}

/* Rows of x (row elements each) at idx (wrapped as NumPy wraps negative ones), and back. */
GP_KERNEL void take(GP_GLOBAL const T *x, GP_GLOBAL const long *idx, GP_GLOBAL T *out, ulong rows, ulong row, uint n)
{
    GP_FOR(i, n) {
        long r = idx[i / row];
        out[i] = x[(ulong)(r < 0 ? r + (long)rows : r) * row + i % row];
    }
}

GP_KERNEL void put(GP_GLOBAL T *x, GP_GLOBAL const long *idx, GP_GLOBAL const T *v, ulong rows, ulong row, uint n)
{
    GP_FOR(i, n) {
        long r = idx[i / row];
        x[(ulong)(r < 0 ? r + (long)rows : r) * row + i % row] = v[i];
    }
}
"""
_programs = {}


def _kernels(dev, dtype):
    key = (dev.spec, dtype)
    if key not in _programs:
        p = Program(cx.helpers(CTYPES[dtype]) + _MOVE, "-DT=%s" % CTYPES[dtype], device=dev)  # complex types too
        _programs[key] = (p, p.kernel("gather"), p.kernel("scatter"), p.kernel("take"), p.kernel("put"))
    return _programs[key][1:]


def _mask(x, mask):
    """mask as a contiguous bool array of x's device and shape, its exclusive scan, its count."""
    mask = asarray(mask, device=x.device)
    if mask.dtype != np.bool_:
        raise IndexError("gpuport: arrays used as indices must be boolean masks here (integer-array indexing is "
                         "not supported), not %s" % mask.dtype)
    if mask.shape != x.shape:
        raise IndexError("gpuport: a boolean mask of shape %s for an array of shape %s: the shapes must match"
                         % (mask.shape, x.shape))
    mask = mask if mask.contiguous else mask.copy()
    if x.size >= 1 << 32:
        raise IndexError("gpuport: boolean masks take arrays of fewer than 2^32 elements")
    pos = cumsum(mask.ravel().astype(np.int64), exclusive=True) if x.size else None
    count = int(red.sum(mask)) if x.size else 0
    return mask, pos, count


def get(x, mask):
    """x[mask]: the elements where mask holds, in C order, as a new 1-D array."""
    mask, pos, count = _mask(x, mask)
    out = Array(count, x.dtype, device=x.device)
    if count:
        src = x if x.contiguous else x.copy()
        gather = _kernels(x.device, x.dtype)[0]
        gather(src, mask, pos, out, x.size, global_size=x.size)
    return out


def put(x, mask, value):
    """x[mask] = value: a scalar (or one element) everywhere mask holds, or one value each."""
    if x._ro:
        raise ValueError("assignment destination is read-only")
    value = value if isinstance(value, Array) else asarray(np.asarray(value), device=x.device)
    if value.size == 1:
        ew.assign(x, ew.where(mask, value.reshape(()), x))
        return
    mask, pos, count = _mask(x, mask)
    if value.size != count:
        raise ValueError("NumPy boolean array indexing assignment cannot assign %d input values to the %d output "
                         "values where the mask is true" % (value.size, count))
    target = x if x.contiguous and x._off == 0 else x.copy()
    v = value.astype(x.dtype).ravel()
    v = v if v.contiguous and v._off == 0 else v.copy()
    scatter = _kernels(x.device, x.dtype)[1]
    scatter(target, mask, pos, v, x.size, global_size=x.size)
    if target is not x:
        ew.assign(x, target)


def _index(x, idx):
    """idx as int64 indices of x's first axis, checked against its length as NumPy checks them."""
    idx = asarray(idx, device=x.device)
    if idx.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if x.ndim == 0:
        raise IndexError("too many indices for array: array is 0-dimensional, but 1 were indexed")
    idx = idx.astype(np.int64)
    idx = idx if idx.contiguous and idx._off == 0 else idx.copy()
    if idx.size:
        lo, hi = int(red.min(idx)), int(red.max(idx))
        for v in (lo, hi):
            if not -x.shape[0] <= v < x.shape[0]:
                raise IndexError("index %d is out of bounds for axis 0 with size %d" % (v, x.shape[0]))
    if x.size >= 1 << 32 or idx.size * (x.size // max(x.shape[0], 1)) >= 1 << 32:
        raise IndexError("gpuport: integer-array indexing takes fewer than 2^32 elements")
    return idx


def take_rows(x, idx):
    """x[idx] for an integer array idx: rows of x's first axis, of shape idx.shape + x.shape[1:]."""
    idx = _index(x, idx)
    row = x.size // x.shape[0] if x.shape[0] else 0
    out = Array(idx.shape + x.shape[1:], x.dtype, device=x.device)
    if out.size:
        src = x if x.contiguous and x._off == 0 else x.copy()
        take = _kernels(x.device, x.dtype)[2]
        take(src, idx, out, x.shape[0], row, out.size, global_size=out.size)
    return out


def put_rows(x, idx, value):
    """x[idx] = value: rows of x's first axis set from value (broadcast to idx.shape + x.shape[1:])."""
    if x._ro:
        raise ValueError("assignment destination is read-only")
    idx = _index(x, idx)
    row = x.size // x.shape[0] if x.shape[0] else 0
    shape = idx.shape + x.shape[1:]
    v = ew.assign(Array(shape, x.dtype, device=x.device), value)
    if not v.size:
        return
    target = x if x.contiguous and x._off == 0 else x.copy()
    put = _kernels(x.device, x.dtype)[3]
    put(target, idx, v, x.shape[0], row, v.size, global_size=v.size)
    if target is not x:
        ew.assign(x, target)


def flatnonzero(a):
    x = asarray(a)
    return get(_arange(x), ew.not_equal(x, 0))


def _arange(x):
    from ._ranges import arange
    return arange(x.size, dtype=np.int64, device=x.device).reshape(x.shape)


def nonzero(a):
    """NumPy's nonzero: a tuple of index arrays, one per dimension."""
    x = asarray(a)
    if x.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead.")
    flat = flatnonzero(x)
    out, rest = [], flat
    for n in reversed(x.shape[1:]):
        out.append(ew.remainder(rest, n))
        rest = ew.floor_divide(rest, n)
    return tuple([rest] + out[::-1])


def compress(condition, a, axis=None):
    """NumPy's compress for axis None (a flattened) and for 1-D a."""
    x = asarray(a)
    if axis is not None and x.ndim != 1:
        raise NotImplementedError("gpuport.compress: along an axis of an array of more than one dimension")
    x = x.ravel()
    c = asarray(condition, device=x.device).astype(np.bool_)
    if c.size > x.size:
        raise IndexError("index %d is out of bounds for axis 0 with size %d" % (c.size - 1, x.size))
    return get(x[:c.size], c)


def _nan_filled(a, fill):
    x = asarray(a)
    return ew.where(ew.isnan(x), fill, x) if x.dtype.kind == "f" else x


def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    return red.sum(_nan_filled(a, 0), axis, dtype, out, keepdims)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    return red.prod(_nan_filled(a, 1), axis, dtype, out, keepdims)


def _counted(a, axis, keepdims):
    x = asarray(a)
    return red.sum(ew.logical_not(ew.isnan(x)), axis, np.int64, keepdims=keepdims) if x.dtype.kind == "f" else \
        red._count(x, axis)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    x = asarray(a)
    dtype = dtype or (x.dtype if x.dtype.kind == "f" else np.float64)
    with np.errstate(all="ignore"):
        r = ew.true_divide(nansum(x, axis, dtype, keepdims=keepdims), _counted(x, axis, keepdims)).astype(dtype)
    return r if out is None else red._into(out, r)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    x = asarray(a)
    d = ew.subtract(x, nanmean(x, axis, dtype, keepdims=True))
    n = _counted(x, axis, keepdims)
    with np.errstate(all="ignore"):
        r = ew.true_divide(nansum(ew.multiply(d, d), axis, dtype, keepdims=keepdims), ew.subtract(n, ddof))
    r = ew.where(ew.less_equal(n, ddof), np.nan, r).astype(r.dtype)  # no degrees of freedom left: NaN, as NumPy
    return r if out is None else red._into(out, r)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    r = ew.sqrt(nanvar(a, axis, dtype, ddof=ddof, keepdims=keepdims))
    return r if out is None else red._into(out, r)


def _nan_extreme(fn, fill, a, axis, out, keepdims):
    x = asarray(a)
    if x.dtype.kind != "f":
        return fn(x, axis, out, keepdims)
    r = fn(_nan_filled(x, fill), axis, keepdims=keepdims)
    r = ew.where(ew.equal(_counted(x, axis, keepdims), 0), np.nan, r).astype(x.dtype)  # all NaN: NaN, as NumPy
    return r if out is None else red._into(out, r)


def nanmax(a, axis=None, out=None, keepdims=False):
    return _nan_extreme(red.max, -np.inf, a, axis, out, keepdims)


def nanmin(a, axis=None, out=None, keepdims=False):
    return _nan_extreme(red.min, np.inf, a, axis, out, keepdims)
