"""NumPy's histogram on the device: the bin edges as NumPy makes them, each element's bin found
as NumPy finds it (the same arithmetic in the same dtype, then the same corrections at the edges),
one atomic add a counted element."""
import numpy as np

from . import _elementwise as ew
from . import _reduction as red
from ._array import CTYPES, asarray, empty
from ._cupy_kernels import _C_TYPES
from ._primitives import Program
from ._raw import RawKernel

_HISTOGRAM = r"""
GP_KERNEL void histogram(GP_GLOBAL const T *x, GP_GLOBAL const E *edges, GP_GLOBAL uint *counts, uint nbins,
                         E first, E norm, int uniform, uint n, GP_GLOBAL long *bins)
{
    GP_FOR(i, n) {
        E v = (E)x[i];
        if (WEIGHTED) bins[i] = -1;
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
        if (WEIGHTED) bins[i] = b;
        else gp_atomic_add(&counts[b], 1u);
    }
}
"""
# Each element's value added to its label's sums (labels out of [0, nlabels) left out), with its
# value times each coordinate too for a centre of mass: in double, or in 64-bit integers (two's
# complement) for integers summed exactly. Histogram weights (the labels their bins) and
# gpuport.scipy.ndimage's sums.
_SUMS = r"""
extern "C" __global__ void label_sums(const long long *labels, const VALUE_T *x, SUM_T *sums, unsigned int n,
                                      long long nlabels, unsigned int nx, unsigned int ny, int moments)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || labels[i] < 0 || labels[i] >= nlabels) return;
    SUM_T v = (SUM_T)x[i];
    long long at = labels[i] * (moments ? 4 : 1);
    atomicAdd(&sums[at], v);
    if (moments) {
        atomicAdd(&sums[at + 1], v * (SUM_T)(i / nx / ny));
        atomicAdd(&sums[at + 2], v * (SUM_T)(i / nx % ny));
        atomicAdd(&sums[at + 3], v * (SUM_T)(i % nx));
    }
}
"""
_programs = {}


def histogram(a, bins=10, range=None, density=False, weights=None):
    """NumPy's histogram of a (flattened): (counts, bin edges), both on the device. bins is a
    number of equal bins or the edges themselves."""
    x = asarray(a).ravel()
    w = None if weights is None else asarray(weights, device=x.device)
    if w is not None and (w.shape != asarray(a).shape or w.dtype.kind not in "biuf"):
        raise ValueError("gpuport.histogram: weights must be numbers of a's shape, %s" % (asarray(a).shape,))
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
    key = (x.device.spec, x.dtype, edges.dtype, w is not None)
    if key not in _programs:
        p = Program(_HISTOGRAM, "-DT=%s -DE=%s -DWEIGHTED=%d" % (CTYPES[x.dtype], CTYPES[edges.dtype], w is not None),
                    device=x.device)
        _programs[key] = (p, p.kernel("histogram"))
    counts = asarray(np.zeros(nbins, np.uint32), device=x.device)
    bins_of = empty(x.size if w is not None else 1, np.int64, x.device)
    if x.size:
        first, last = edges[0], edges[-1]
        norm = nbins / (float(last) - float(first)) if uniform and last != first else 0.0
        _programs[key][1](x, asarray(edges, device=x.device), counts, nbins, float(first), norm, int(uniform), x.size,
                          bins_of, global_size=x.size)
    counts = counts.astype(np.int64) if w is None else _add_weights(bins_of, w.ravel(), nbins)
    gp_edges = asarray(edges, device=x.device)
    if density:
        widths = ew.subtract(gp_edges[1:], gp_edges[:-1])
        return ew.true_divide(counts, ew.multiply(widths, float(red.sum(counts)))), gp_edges
    return counts, gp_edges


def label_sums(labels, x, nlabels, shape=(1, 1, 1), moments=False, exact=False):
    """Per label 0 .. nlabels - 1 (labels: int64 of x's size), the sum of x, and with moments of x
    times each coordinate of shape (nz, ny, nx): rows of 1 or 4, float64, or uint64 sums of an
    integer x taken exactly where exact."""
    integer = exact and x.dtype.kind != "f"
    per = 4 if moments else 1
    sums = asarray(np.zeros(nlabels * per, np.uint64 if integer else np.float64), device=x.device)
    key = (x.device.spec, x.dtype, integer, "sums")
    if key not in _programs:
        source = _SUMS.replace("VALUE_T", _C_TYPES[x.dtype.name]).replace(
            "SUM_T", "unsigned long long" if integer else "double")
        _programs[key] = RawKernel(source, "label_sums")
    if x.size:
        x = x if x.contiguous and not x._off else x.copy()
        _programs[key]((-(-x.size // 256),), (256,), (labels, x, sums, np.uint32(x.size), np.int64(nlabels),
                                                     np.uint32(shape[2]), np.uint32(shape[1]), np.int32(moments)))
    return sums.reshape(nlabels, per) if moments else sums


def _add_weights(bins, w, nbins):
    """The weights of each bin summed (bins[i]: element i's bin, or -1), in w's dtype, as NumPy's
    bincount sums them (floats in double, integers exactly)."""
    sums = label_sums(bins, w, nbins, exact=True)
    return (sums if w.dtype.kind == "f" else sums.astype(np.int64)).astype(w.dtype)
