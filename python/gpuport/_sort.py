"""NumPy's sort, argsort, unique, median and searchsorted on the device: a stable least-significant-digit radix
sort of 8-bit digits, in the kernel dialect (every backend). Keys are unsigned integers that order
as the values do (floats with their sign bit flipped, or all bits where negative; every NaN last,
as NumPy puts them), made from the values by the first pass and turned back into values by the
last; each pass counts the digits of each tile of 2048-4096 keys, scans the counts (digit-major,
so that a digit's keys follow those of the digits below it) and scatters each key to its place,
keeping the order of equal digits. Sorting along an axis of an N-D array sorts each row: the
keys first, then, stably, the row each key belongs to."""
import math

import numpy as np

from . import _elementwise as ew
from ._array import CTYPES, asarray, empty, normalize_axis
from ._primitives import Program, cumsum

_SOURCE = r"""
#define BINS 256
#define THREADS 256
#define TILE (THREADS * ITEMS)

GP_FUNC K bits_of(T v) { union { T v; K k; } u; u.k = 0; u.v = v; return u.k; }
GP_FUNC T of_bits(K k) { union { T v; K k; } u; u.k = k; return u.v; }

/* The flags of a pass: RAW, it reads the values themselves (x) and makes their keys; INDEX, the
 * values it carries are the keys' indices, made here; VALUES_OUT, it writes the values back
 * (xout) in place of the keys; ZEROS_EQUAL, -0.0 sorts as 0.0 (for indices in NumPy's order). */
#define RAW 1
#define INDEX 2
#define VALUES_OUT 4
#define ZEROS_EQUAL 8

/* The sort key of v: an unsigned integer of the same order (NaN above all; -0.0 below 0.0, so
 * that a sort gives back each value's bits, unless zeros_equal). */
GP_FUNC K key_of(T v, int zeros_equal)
{
#if FLOAT
    K bits = zeros_equal && v == 0 ? 0 : bits_of(v);
    return isnan(v) ? (K)-1 : (bits >> (KBITS - 1)) ? ~bits : bits | ((K)1 << (KBITS - 1));
#elif SIGNED
    return (K)v ^ ((K)1 << (KBITS - 1));
#else
    return (K)v;
#endif
}

GP_FUNC T value_of(K k)
{
#if FLOAT
    return (k >> (KBITS - 1)) ? of_bits(k ^ ((K)1 << (KBITS - 1))) : of_bits(~k);
#elif SIGNED
    return (T)(k ^ ((K)1 << (KBITS - 1)));
#else
    return (T)k;
#endif
}

GP_FUNC K key_at(GP_GLOBAL const T *x, GP_GLOBAL const K *keys, uint i, int flags)
{
    return flags & RAW ? key_of(x[i], flags & ZEROS_EQUAL) : keys[i];
}

/* counts[d * tiles + b]: the keys of tile b whose digit at shift is d. A work-item adds a run of
 * equal digits at once: where most keys share a digit (the exponent of values of one scale), the
 * group's atomics on one counter would otherwise take turns. */
GP_KERNEL void radix_count(GP_GLOBAL const T *x, GP_GLOBAL const K *keys, GP_GLOBAL uint *counts, uint n,
                           uint shift, uint tiles, int flags)
{
    GP_LOCAL uint h[BINS];
    uint t = gp_local_id(0), b = gp_group_id(0), run = 0, last = 0, d[ITEMS];
    h[t] = 0;
#pragma unroll
    for (uint j = 0; j < ITEMS; j++) { /* every load first, then the counting */
        uint i = b * TILE + j * THREADS + t;
        d[j] = i < n ? (uint)(key_at(x, keys, i, flags) >> shift) & (BINS - 1) : BINS;
    }
    gp_barrier();
#pragma unroll
    for (uint j = 0; j < ITEMS; j++) {
        if (d[j] != last && run) {
            gp_atomic_add(&h[last], run);
            run = 0;
        }
        last = d[j];
        run += d[j] < BINS;
    }
    if (run) gp_atomic_add(&h[last], run);
    gp_barrier();
    counts[t * tiles + b] = h[t];
}

/* The sum of x over the work-items before t (of THREADS): by subgroup scans where subgroups are
 * runs of consecutive work-items (CUDA, HIP, NVIDIA's OpenCL), else by doubling steps. */
GP_FUNC uint exclusive_sum(GP_LOCAL_PTR(uint) sums, uint t, uint x)
{
#if defined(GP_HAS_SUBGROUPS) && (!defined(GP_BACKEND_OPENCL) || defined(GP_NV_SM))
    uint in = gp_sub_group_scan_inclusive_add(x), g = gp_sub_group_id();
    if (gp_sub_group_local_id() == gp_sub_group_size() - 1) sums[g] = in;
    gp_barrier();
    if (t == 0)
        for (uint k = 0, acc = 0; k < gp_num_sub_groups(); k++) {
            uint v = sums[k];
            sums[k] = acc;
            acc += v;
        }
    gp_barrier();
    uint before = sums[g] + in - x;
    gp_barrier(); /* sums is free again when this returns */
    return before;
#else
    sums[t] = x;
    gp_barrier();
    for (uint step = 1; step < THREADS; step <<= 1) {
        uint y = t >= step ? sums[t - step] : 0;
        gp_barrier();
        sums[t] += y;
        gp_barrier();
    }
    return sums[t] - x;
#endif
}

/* Local memory with a word of padding every 32, so that work-items reading ITEMS in a row meet
 * in different banks. */
#define AT(q) ((q) + ((q) >> 5))

/* The counters of the scatter's local sort, digit-major: C(d, t) counts work-item t's keys of
 * digit d. A row has a word of padding every 16, so that both the counting (work-item t in row
 * d) and the scan (work-item t over 16 counters in a row) meet at most two to a bank. */
#define CROW (THREADS + THREADS / 16)
#define C(d, t) c[(d) * CROW + (t) + ((t) >> 4)]

/* Each key of tile b to offsets[d * tiles + b] plus its rank among the tile's keys of digit d;
 * its value goes along (the key's index, with INDEX). The tile is read into local memory in one
 * coalesced sweep and sorted there by its 8-bit digit, stably, in two passes of 4 bits (a
 * work-item ranks ITEMS keys in a row, so that equal digits keep their order); then written out
 * in that order, so that the writes to global memory are runs of consecutive addresses. */
GP_KERNEL void radix_scatter(GP_GLOBAL const T *x, GP_GLOBAL const K *keys, GP_GLOBAL K *out, GP_GLOBAL T *xout,
                             GP_GLOBAL const uint *values, GP_GLOBAL uint *out_values, GP_GLOBAL const uint *counts,
                             GP_GLOBAL const uint *offsets, uint n, uint shift, uint tiles, int flags)
{
    GP_LOCAL uint c[16 * CROW];
    GP_LOCAL uint sums[THREADS];
    GP_LOCAL uint base[BINS]; /* digit d's offset in out less where its run starts in the sorted tile */
    GP_LOCAL K lk[AT(TILE)];
#if VALUES
    GP_LOCAL uint lv[AT(TILE)];
    uint v[ITEMS];
#endif
    K k[ITEMS];
    uint t = gp_local_id(0), b = gp_group_id(0), mine = t * ITEMS;
    uint valid = n - b * TILE < TILE ? n - b * TILE : TILE;
    uint count = counts[t * tiles + b], offset = offsets[t * tiles + b];
#pragma unroll
    for (uint j = 0; j < ITEMS; j++) {
        uint q = j * THREADS + t;
        lk[AT(q)] = q < valid ? key_at(x, keys, b * TILE + q, flags) : 0;
#if VALUES
        lv[AT(q)] = flags & INDEX || q >= valid ? b * TILE + q : values[b * TILE + q];
#endif
    }
    base[t] = offset - exclusive_sum(sums, t, count); /* (its barriers order the loads above too) */
    for (uint round = 0; round < 2; round++) {
        /* a work-item counts its keys' 16 digits in two words of eight 8-bit counters (ITEMS is
         * below 256), which gives each key its rank among the work-item's keys of its digit */
        uint nibble = shift + 4 * round, r[ITEMS];
        ulong lo = 0, hi = 0;
#pragma unroll
        for (uint j = 0; j < ITEMS; j++) {
            k[j] = lk[AT(mine + j)];
#if VALUES
            v[j] = lv[AT(mine + j)];
#endif
            uint dj = (uint)(k[j] >> nibble) & 15, at = (dj & 7) * 8;
            ulong one = mine + j < valid ? (ulong)1 << at : 0;
            r[j] = (uint)((dj & 8 ? hi : lo) >> at) & 255;
            if (dj & 8) hi += one;
            else lo += one;
        }
        for (uint d = 0; d < 16; d++) C(d, t) = (uint)((d & 8 ? hi : lo) >> ((d & 7) * 8)) & 255;
        gp_barrier();
        /* the counts' exclusive scan, digit-major: work-item t takes 16 of them in a row */
        uint d = t / 16, s = (t % 16) * 16, run = 0;
        for (uint q = 0; q < 16; q++) run += C(d, s + q);
        uint prefix = exclusive_sum(sums, t, run);
        for (uint q = 0; q < 16; q++) {
            uint y = C(d, s + q);
            C(d, s + q) = prefix;
            prefix += y;
        }
        gp_barrier();
#pragma unroll
        for (uint j = 0; j < ITEMS; j++) {
            if (mine + j < valid) {
                uint at = C((uint)(k[j] >> nibble) & 15, t) + r[j];
                lk[AT(at)] = k[j];
#if VALUES
                lv[AT(at)] = v[j];
#endif
            }
        }
        gp_barrier();
    }
#pragma unroll
    for (uint j = 0; j < ITEMS; j++) {
        uint q = j * THREADS + t;
        if (q < valid) {
            K key = lk[AT(q)];
            uint at = base[(uint)(key >> shift) & (BINS - 1)] + q;
            if (flags & VALUES_OUT) xout[at] = value_of(key);
            else out[at] = key;
#if VALUES
            out_values[at] = lv[AT(q)];
#endif
        }
    }
}

/* The row of each sorted element (its index over the row's length), the key of the second sort. */
GP_KERNEL void rows_of(GP_GLOBAL const uint *index, GP_GLOBAL uint *rows, uint length, uint n)
{
    GP_FOR(i, n) rows[i] = index[i] / length;
}
"""
_SEARCH = r"""
/* NumPy's order, in which NaN is above every number. */
#if FLOAT
#define LESS(a, b) ((a) < (b) || (isnan(b) && !isnan(a)))
#else
#define LESS(a, b) ((a) < (b))
#endif
GP_KERNEL void searchsorted(GP_GLOBAL const T *a, GP_GLOBAL const T *v, GP_GLOBAL long *out, uint n, uint m, int right)
{
    GP_FOR(i, m) {
        T x = v[i];
        uint lo = 0, hi = n;
        while (lo < hi) {
            uint mid = lo + (hi - lo) / 2;
            if (right ? !LESS(x, a[mid]) : LESS(a[mid], x)) lo = mid + 1;
            else hi = mid;
        }
        out[i] = (long)lo;
    }
}
"""
_programs = {}
_KEYS = {4: "uint", 8: "ulong"}
_RAW, _INDEX, _VALUES_OUT, _ZEROS_EQUAL = 1, 2, 4, 8  # a pass's flags, as _SOURCE defines them


def _kernels(dtype, values, dev):
    """The sort's kernels for keys of dtype (None: plain uint keys), with values or not."""
    key = (dev.spec, dtype, values)
    if key not in _programs:
        size = dtype.itemsize if dtype is not None else 4
        k = _KEYS[max(size, 4)]
        t = CTYPES[dtype] if dtype is not None else "uint"
        kind = dtype.kind if dtype is not None else "u"
        # keys a work-item takes: the scatter's tile of keys (and values) in local memory, its
        # counts beside them, under the 48 KiB that every backend here gives a work-group
        items = 8 if size == 8 else 12 if values else 16
        opts = "-DT=%s -DK=%s -DKBITS=%d -DFLOAT=%d -DSIGNED=%d -DVALUES=%d -DITEMS=%d" % (
            t, k, 8 * max(size, 4), kind == "f", kind == "i", int(values), items)
        p = Program(_SOURCE, opts, device=dev)
        _programs[key] = {n: p.kernel(n) for n in ("radix_count", "radix_scatter", "rows_of")}
        _programs[key]["tile"] = 256 * items
    return _programs[key]


def _radix(keys, bits, values, kernels, stream, x=None, zeros_equal=False, out=None):
    """Sorts keys (uint or ulong, contiguous) by their low bits, carrying values: a uint array,
    True (the keys' indices, made by the first pass) or None. Where x is given, the first pass reads
    its values and makes their keys (keys is then only room for them); where out is, the last pass
    writes the sorted values there in place of their keys. Returns the sorted keys and values."""
    n, dev = keys.size, keys.device
    tiles = -(-n // kernels["tile"])
    counts = empty(256 * tiles, np.uint32, dev)
    other, carry, first = empty(n, keys.dtype, dev), values is not None, values is True
    if first:
        values = empty(n, np.uint32, dev)  # not read: the first pass writes the indices
    other_values = empty(n, np.uint32, dev) if carry else counts
    values = values if carry else counts  # (not used without VALUES)
    raw, x = x is not None, x if x is not None else keys  # (x: not read after the first pass, nor without it)
    for shift in range(0, bits, 8):
        flags = (_RAW if raw and shift == 0 else 0) | (_INDEX if first and shift == 0 else 0) | \
            (_VALUES_OUT if out is not None and shift + 8 >= bits else 0) | (_ZEROS_EQUAL if zeros_equal else 0)
        kernels["radix_count"](x, keys, counts, n, shift, tiles, flags, global_size=tiles * 256, local_size=256,
                               stream=stream)
        offsets = cumsum(counts, exclusive=True, stream=stream)
        kernels["radix_scatter"](x, keys, other, out if out is not None else x, values, other_values, counts, offsets, n,
                                 shift, tiles, flags, global_size=tiles * 256, local_size=256, stream=stream)
        keys, other = other, keys
        if carry:
            values, other_values = other_values, values
    return keys, values if carry else None


def _sorted(x, want_index, stream=None, values=True):
    """x (1-D or N-D, sorted along its last axis) sorted (None without values), and the indices
    along that axis that sort it (int64), where want_index."""
    if x.dtype.kind not in "biuf" or x.dtype.itemsize > 8:
        raise TypeError("gpuport.sort: takes bool, integer and float arrays, not %s" % x.dtype)
    n, dev = x.size, x.device
    if n >= 1 << 32:
        raise ValueError("gpuport.sort: takes arrays of fewer than 2^32 elements")
    x = x if x.contiguous and not x._off else x.copy()
    if n == 0:
        return x.copy(), (empty(x.shape, np.int64, dev) if want_index else None)
    length = x.shape[-1] if x.ndim else 1
    rows = n // length
    kern = _kernels(x.dtype, want_index or rows > 1, dev)
    keys = empty(n, np.uint32 if x.dtype.itemsize <= 4 else np.uint64, dev)
    # the values straight from the last pass, unless they come by their indices: after a second
    # sort by row, or where the keys took -0.0 as 0.0 (for indices in NumPy's order)
    gather = rows > 1 or (want_index and x.dtype.kind == "f")
    out = empty(x.shape, x.dtype, dev) if values and not gather else None
    keys, index = _radix(keys, 8 * keys.itemsize, True if want_index or rows > 1 else None, kern, stream,
                         x=x.reshape(n), zeros_equal=want_index, out=out)
    if rows > 1:  # then stably by row: each row's keys together, in their order
        row = empty(n, np.uint32, dev)
        kern["rows_of"](index, row, length, n, global_size=n, stream=stream)
        _, index = _radix(row, 8 * math.ceil(math.log2(rows) / 8), index, _kernels(None, True, dev), stream)
    if gather:
        index = index.astype(np.int64)
        if values:
            out = x.reshape(n)[index].reshape(x.shape)
        if want_index and rows > 1:  # the index within the row
            index = ew.remainder(index, length)
    return out, (index.astype(np.int64, copy=False).reshape(x.shape) if want_index else None)


def _along(a, axis, want_index, back=True, values=True):
    """a sorted along axis (None: flattened; None without values), and the indices that sort it
    where want_index; the axis is moved last for the sort, and back unless back is False."""
    x = asarray(a)
    if axis is None:
        return _sorted(x.ravel(), want_index, values=values)
    if x.ndim == 0:
        raise getattr(np, "exceptions", np).AxisError(axis, 0)
    ax = normalize_axis(axis, x.ndim)
    if ax == x.ndim - 1:
        return _sorted(x, want_index, values=values)
    order = [d for d in range(x.ndim) if d != ax] + [ax]
    out, index = _sorted(x.transpose(order), want_index, values=values)
    if back:
        undo = list(np.argsort(order))
        out = out.transpose(undo).copy() if out is not None else None
        index = index.transpose(undo).copy() if index is not None else None
    return out, index


def _check_kind(kind, order, what):
    if order is not None:
        raise NotImplementedError("gpuport.%s: order= (fields of structured arrays) is not supported" % what)
    if kind not in (None, "quicksort", "mergesort", "heapsort", "stable"):
        raise ValueError("gpuport.%s: kind %r is not one of quicksort, mergesort, heapsort, stable" % (what, kind))


def sort(a, axis=-1, kind=None, order=None):
    """NumPy's sort: a sorted copy (along axis; None: flattened), NaN last; always stable."""
    _check_kind(kind, order, "sort")
    return _along(a, axis, False)[0]


def argsort(a, axis=-1, kind=None, order=None):
    """NumPy's argsort: the int64 indices that sort a along axis (stable: equal values keep their order)."""
    _check_kind(kind, order, "argsort")
    return _along(a, axis, True, values=False)[1]


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True):
    """NumPy's unique of the flattened array: the sorted distinct values, and as asked the index
    of each one's first occurrence, the inverse (ar's values as indices into them) and counts."""
    if axis is not None:
        raise NotImplementedError("gpuport.unique: axis= is not supported (the flattened array only)")
    x = asarray(ar).ravel()
    s, perm = _along(x, None, True)
    n = s.size
    first = empty(n, np.bool_, x.device)
    if n:
        first[:1] = True
        first[1:] = ew.not_equal(s[1:], s[:-1])
        if equal_nan and s.dtype.kind == "f":  # NaNs, all at the end, are one value
            first[1:] = ew.logical_and(first[1:], ew.logical_not(ew.isnan(s[:-1])))
    out = [s[first]]
    if return_index:
        out.append(perm[first])
    if return_inverse:
        inverse = empty(n, np.int64, x.device)
        inverse[perm] = ew.subtract(cumsum(first.astype(np.int64)), 1)
        out.append(inverse.reshape(np.shape(ar)) if np.ndim(ar) > 1 else inverse)
    if return_counts:
        starts = first.nonzero()[0]
        ends = empty(starts.size, np.int64, x.device)
        ends[:-1] = starts[1:]
        ends[-1:] = n
        out.append(ew.subtract(ends, starts))
    return out[0] if len(out) == 1 else tuple(out)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """NumPy's median: the middle of the sorted values (the mean of the two middle ones), NaN where
    there is a NaN."""
    if out is not None:
        raise NotImplementedError("gpuport.median: out= is not supported")
    x = asarray(a)
    s = _along(x, axis, False, back=False)[0]
    m = s.shape[-1] if s.ndim else 0
    if m == 0:
        raise ValueError("gpuport.median: of an empty array")
    lo, hi = s[..., (m - 1) // 2], s[..., m // 2]
    mid = ew.multiply(ew.add(lo, hi), 0.5)
    if s.dtype.kind == "f":  # NaN, sorted last, where there is one
        mid = ew.where(ew.isnan(s[..., -1]), s[..., -1], mid).astype(s.dtype)
    if keepdims:
        axes = range(x.ndim) if axis is None else [normalize_axis(axis, x.ndim)]
        mid = mid.reshape(tuple(1 if d in axes else n for d, n in enumerate(x.shape)))
    return mid


def searchsorted(a, v, side="left", sorter=None):
    """NumPy's searchsorted: where each of v would go in the sorted 1-D a (side "left": before
    equal values, "right": after them), as int64; NaN sorts above every number, as NumPy's."""
    if side not in ("left", "right"):
        raise ValueError("gpuport.searchsorted: side is 'left' or 'right', not %r" % (side,))
    a = asarray(a)
    if a.ndim != 1:
        raise ValueError("gpuport.searchsorted: a must be 1-D, not of shape %s" % (a.shape,))
    if sorter is not None:
        a = a[asarray(sorter, device=a.device)]
    scalar = np.ndim(v) == 0 and not hasattr(v, "device")
    v = asarray(v, device=a.device)
    dtype = np.result_type(a.dtype, v.dtype)
    if dtype.kind not in "iuf" or a.size >= 1 << 32 or v.size >= 1 << 32:
        raise TypeError("gpuport.searchsorted: takes integer and float arrays of fewer than 2^32 elements, not %s"
                        % dtype)
    a, flat = (x.astype(dtype) if x.dtype != dtype or not x.contiguous or x._off else x for x in (a, v.ravel()))
    key = (a.device.spec, dtype, "search")
    if key not in _programs:
        p = Program(_SEARCH, "-DT=%s -DFLOAT=%d" % (CTYPES[dtype], dtype.kind == "f"), device=a.device)
        _programs[key] = p.kernel("searchsorted")
    out = empty(v.shape, np.int64, a.device)
    if v.size:
        _programs[key](a, flat, out, a.size, v.size, int(side == "right"), global_size=v.size)
    return out.reshape(()) if scalar else out
