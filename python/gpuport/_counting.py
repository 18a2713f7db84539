"""NumPy's histogram on the device: the bin edges as NumPy makes them, each element's bin found
as NumPy finds it (the same arithmetic in the same dtype, then the same corrections at the edges),
one atomic add a counted element."""
import numpy as np

from . import _elementwise as ew
from . import _reduction as red
from ._array import CTYPES, asarray
from ._primitives import Program

_HISTOGRAM = r"""
GP_KERNEL void histogram(GP_GLOBAL const T *x, GP_GLOBAL const E *edges, GP_GLOBAL uint *counts, uint nbins,
                         E first, E norm, int uniform, uint n)
{
    GP_FOR(i, n) {
        E v = (E)x[i];
        if (!(v >= edges[0] && v <= edges[nbins])) continue; /* outside, or NaN */
        long b;
        if (uniform) {
            b = (long)((v - first) * norm);
            if (b == (long)nbins) b--;
            if (v < edges[b]) b--;
            else if (v >= edges[b + 1] && b != (long)nbins - 1) b++;
        } else { /* the last edge above v, as searchsorted(edges, v, "right") */
            uint lo = 0, hi = nbins + 1;
            while (lo < hi) {
                uint m = (lo + hi) / 2;
                if (edges[m] > v) hi = m;
                else lo = m + 1;
            }
            b = (long)lo - 1 == (long)nbins ? (long)nbins - 1 : (long)lo - 1;
        }
        gp_atomic_add(&counts[b], 1u);
    }
}
"""
_programs = {}


def histogram(a, bins=10, range=None, density=False, weights=None):
    """NumPy's histogram of a (flattened): (counts, bin edges), both on the device. bins is a
    number of equal bins or the edges themselves."""
    x = asarray(a).ravel()
    if weights is not None:
        raise NotImplementedError("gpuport.histogram: weights are not supported")
    if x.dtype.kind not in "iuf":
        raise TypeError("gpuport.histogram: takes integer or float arrays, not %s" % x.dtype)
    x = x if x.contiguous and x._off == 0 else x.copy()
    if x.size >= 1 << 32:
        raise ValueError("gpuport.histogram: takes arrays of fewer than 2^32 elements")
    uniform = np.ndim(bins) == 0
    # NumPy's edges of NumPy's dtype, made from what NumPy makes them of: the range as given, or
    # the array's own min and max (scalars of its dtype, which NumPy 2 computes the edges in)
    if range is None and uniform and x.size:
        sample = np.array([red.min(x).item(), red.max(x).item()], x.dtype)
    else:
        sample = np.zeros(1, x.dtype) if range is None else np.asarray(range, dtype=x.dtype)[:1]
    edges = np.histogram_bin_edges(sample, bins, range)
    nbins = edges.size - 1
    key = (x.device.spec, x.dtype, edges.dtype)
    if key not in _programs:
        p = Program(_HISTOGRAM, "-DT=%s -DE=%s" % (CTYPES[x.dtype], CTYPES[edges.dtype]), device=x.device)
        _programs[key] = (p, p.kernel("histogram"))
    counts = asarray(np.zeros(nbins, np.uint32), device=x.device)
    if x.size:
        first, last = edges[0], edges[-1]
        norm = nbins / (float(last) - float(first)) if uniform and last != first else 0.0
        _programs[key][1](x, asarray(edges, device=x.device), counts, nbins, float(first), norm, int(uniform), x.size,
                          global_size=x.size)
    counts = counts.astype(np.int64)
    gp_edges = asarray(edges, device=x.device)
    if density:
        widths = ew.subtract(gp_edges[1:], gp_edges[:-1])
        return ew.true_divide(counts, ew.multiply(widths, float(red.sum(counts)))), gp_edges
    return counts, gp_edges
