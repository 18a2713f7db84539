"""Convolutions on the device: NumPy's convolve and SciPy's signal.convolve2d and correlate2d,
one CUDA C kernel (built by gp_program_create_cuda for every backend) that computes each output
element of the full convolution's window it is asked for, the boundary filled, wrapped or mirrored
as SciPy's are."""
import numpy as np

from ._array import Array, asarray, empty
from ._raw import RawModule

_CONVOLVE = r"""
__device__ int gp_edge(int r, int n) /* the index r stands for, or -1: the fill value */
{
    if (r >= 0 && r < n) return r;
#if BOUNDARY == 1 /* wrap */
    r %= n;
    return r < 0 ? r + n : r;
#elif BOUNDARY == 2 /* symm: the edge repeated */
    r %= 2 * n;
    if (r < 0) r += 2 * n;
    return r < n ? r : 2 * n - 1 - r;
#else
    return -1;
#endif
}

extern "C" __global__ void convolve2d(const T *a, const T *k, T *out, int am, int an, int km, int kn, int om,
                                      int on, int oi, int oj, T fill)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= om || j >= on) return;
    T acc = 0;
    int inside = j + oj - (kn - 1) >= 0 && j + oj < an; /* every column of the window in a */
    for (int p = 0; p < km; p++) {
        int r = gp_edge(i + oi - p, am);
        const T *krow = k + (FLIP ? km - 1 - p : p) * kn;
        if (r >= 0 && inside) {
            const T *arow = a + r * an + j + oj;
            for (int q = 0; q < kn; q++) acc += arow[-q] * krow[FLIP ? kn - 1 - q : q];
            continue;
        }
        for (int q = 0; q < kn; q++) {
            int c = gp_edge(j + oj - q, an);
            T v = r >= 0 && c >= 0 ? a[r * an + c] : fill;
            acc += v * krow[FLIP ? kn - 1 - q : q];
        }
    }
    out[i * on + j] = acc;
}
"""
_CTYPE = {np.dtype(np.float32): "float", np.dtype(np.float64): "double", np.dtype(np.int32): "int",
          np.dtype(np.int64): "long long"}
_modules = {}
_BOUNDARY = {"fill": 0, "wrap": 1, "circular": 1, "symm": 2, "symmetric": 2}


def _kernel(dtype, boundary, flip):
    """The kernel for dtype, its boundary (0 fill, 1 wrap, 2 symm) and flip (convolution) fixed
    when it is compiled."""
    key = (dtype, boundary, flip)
    if key not in _modules:
        _modules[key] = RawModule(code=_CONVOLVE, options=("-DT=%s" % _CTYPE[dtype], "-DBOUNDARY=%d" % boundary,
                                                           "-DFLIP=%d" % int(flip)))
    return _modules[key].get_function("convolve2d")


def _pair(x, y):
    """Both as arrays on the device of the one that is a gpuport array (of the first, if both are)."""
    dev = next((t.device for t in (x, y) if isinstance(t, Array)), None)
    return asarray(x, device=dev), asarray(y, device=dev)


def _run(what, in1, in2, mode, boundary, fillvalue, flip, numpy_same=False):
    a, k = _pair(in1, in2)
    if a.ndim != 2 or k.ndim != 2:
        raise ValueError("gpuport.%s: takes two 2-D arrays, not %d-D and %d-D" % (what, a.ndim, k.ndim))
    if mode not in ("full", "same", "valid"):
        raise ValueError("gpuport.%s: mode is 'full', 'same' or 'valid', not %r" % (what, mode))
    if boundary not in _BOUNDARY:
        raise ValueError("gpuport.%s: boundary is 'fill', 'wrap' or 'symm', not %r" % (what, boundary))
    dtype = np.result_type(a.dtype, k.dtype)
    if dtype not in _CTYPE:
        raise TypeError("gpuport.%s: takes float32, float64, int32 or int64 arrays, not %s" % (what, dtype))
    swapped = mode == "valid" and all(ks >= s for s, ks in zip(a.shape, k.shape)) and a.shape != k.shape
    if swapped:  # SciPy's: in 'valid' mode the larger array is the one slid over
        a, k = k, a
    if mode == "valid" and not all(s >= ks for s, ks in zip(a.shape, k.shape)):
        raise ValueError("gpuport.%s: in 'valid' mode one input must be at least as large as the other in every "
                         "dimension" % what)
    (am, an), (km, kn) = a.shape, k.shape
    if mode == "full":
        (om, on), (oi, oj) = (am + km - 1, an + kn - 1), (0, 0)
    elif mode == "same":
        (om, on), (oi, oj) = (am, an), ((km - 1) // 2, (kn - 1) // 2)
    else:
        (om, on), (oi, oj) = (am - km + 1, an - kn + 1), (km - 1, kn - 1)
    if flip and mode == "same" and not numpy_same:  # the window of the full correlation SciPy takes
        oi, oj = km - 1 - (km - 1) // 2, kn - 1 - (kn - 1) // 2
    out = empty((om, on), dtype, a.device)
    if out.size and a.size and k.size:
        a, k = (x.astype(dtype) if x.dtype != dtype else x for x in (a, k))
        a, k = (x if x.contiguous and not x._off else x.copy() for x in (a, k))
        fill = float(fillvalue) if dtype.kind == "f" else int(fillvalue)
        _kernel(dtype, _BOUNDARY[boundary], flip)(((on + 31) // 32, (om + 7) // 8), (32, 8),
                                                  (a, k, out, am, an, km, kn, om, on, oi, oj, fill))
    elif out.size:
        out[...] = 0
    return out[::-1, ::-1].copy() if swapped and flip else out


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """SciPy's signal.convolve2d on the device."""
    return _run("convolve2d", in1, in2, mode, boundary, fillvalue, False)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """SciPy's signal.correlate2d on the device."""
    return _run("correlate2d", in1, in2, mode, boundary, fillvalue, True)


def convolve(a, v, mode="full"):
    """NumPy's convolve of two 1-D arrays on the device (the longer one is slid over)."""
    a, v = _pair(a, v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("gpuport.convolve: takes 1-D arrays")
    if a.size == 0 or v.size == 0:
        raise ValueError("gpuport.convolve: an input is empty")
    if v.size > a.size:
        a, v = v, a
    out = _run("convolve", a.reshape(1, a.size), v.reshape(1, v.size), mode, "fill", 0, False)
    return out.reshape(out.size)


def correlate(a, v, mode="valid"):
    """NumPy's correlate of two 1-D arrays on the device."""
    a, v = _pair(a, v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("gpuport.correlate: takes 1-D arrays")
    if v.size > a.size:  # NumPy's: the other way round, reversed
        return correlate(v, a, mode)[::-1].copy()
    out = _run("correlate", a.reshape(1, a.size), v.reshape(1, v.size), mode, "fill", 0, True, numpy_same=True)
    return out.reshape(out.size)
