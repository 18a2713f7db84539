"""Joining arrays as NumPy does (concatenate, stack, vstack, hstack), each part copied on the
device into the result, and CuPy's get_array_module."""
import numpy as np

from ._array import Array, asarray, empty, normalize_axis


def _operands(arrays, what):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to %s" % what)
    dev = next((a.device for a in arrays if isinstance(a, Array)), None)
    return [asarray(a, device=dev) for a in arrays]


def concatenate(arrays, axis=0, out=None, dtype=None):
    """NumPy's concatenate: the arrays joined along axis (None: flattened first)."""
    arrays = _operands(arrays, "concatenate")
    if axis is None:
        arrays, axis = [a.ravel() for a in arrays], 0
    first = arrays[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(axis, first.ndim)
    for i, a in enumerate(arrays[1:], 1):
        if a.ndim != first.ndim:
            raise ValueError("all the input arrays must have same number of dimensions, but the array at index 0 "
                             "has %d dimension(s) and the array at index %d has %d dimension(s)"
                             % (first.ndim, i, a.ndim))
        for d in range(first.ndim):
            if d != axis and a.shape[d] != first.shape[d]:
                raise ValueError("all the input array dimensions except for the concatenation axis must match "
                                 "exactly, but along dimension %d, the array at index 0 has size %d and the array "
                                 "at index %d has size %d" % (d, first.shape[d], i, a.shape[d]))
    shape = list(first.shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    dtype = np.dtype(dtype) if dtype is not None else np.result_type(*[a.dtype for a in arrays])
    if out is None:
        out = empty(tuple(shape), dtype, first.device)
    elif out.shape != tuple(shape):
        raise ValueError("Output array has wrong dimensionality: %s, not %s" % (out.shape, tuple(shape)))
    start = 0
    for a in arrays:
        part = [slice(None)] * len(shape)
        part[axis] = slice(start, start + a.shape[axis])
        out[tuple(part)] = a
        start += a.shape[axis]
    return out


def stack(arrays, axis=0, out=None, dtype=None):
    """NumPy's stack: arrays of one shape joined along a new axis."""
    arrays = _operands(arrays, "stack")
    if any(a.shape != arrays[0].shape for a in arrays):
        raise ValueError("all input arrays must have the same shape")
    axis = normalize_axis(axis, arrays[0].ndim + 1)
    shape = arrays[0].shape[:axis] + (1,) + arrays[0].shape[axis:]
    return concatenate([a.reshape(shape) for a in arrays], axis, out, dtype)


def vstack(arrays, dtype=None):
    arrays = _operands(arrays, "vstack")
    return concatenate([a.reshape(1, -1) if a.ndim < 2 else a for a in arrays], 0, dtype=dtype)


def hstack(arrays, dtype=None):
    arrays = [a.reshape(1) if a.ndim == 0 else a for a in _operands(arrays, "hstack")]
    return concatenate(arrays, 0 if arrays[0].ndim == 1 else 1, dtype=dtype)


def get_array_module(*args):
    """CuPy's: this module when any argument is a gpuport array, NumPy otherwise."""
    import gpuport
    return gpuport if any(isinstance(a, Array) for a in args) else np
