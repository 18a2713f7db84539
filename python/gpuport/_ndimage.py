"""SciPy's ndimage functions that image lessons use, on the device: label (connected components,
numbered as SciPy numbers them), sum_labels and center_of_mass (by _counting's label_sums).

label gives every foreground element the index of its component's first element in C order:
each pass takes the smallest label among an element's neighbours and the label that label's own
element holds (pointer jumping), until a pass changes nothing. The components' first elements,
counted in C order, then number them 1, 2, ... as SciPy's scan does."""
import numpy as np

from . import _elementwise as ew
from ._array import CTYPES, asarray, empty, zeros
from ._counting import label_sums
from ._join import concatenate
from ._primitives import Program, cumsum

_LABEL = r"""
GP_KERNEL void label_init(GP_GLOBAL const T *x, GP_GLOBAL uint *l, uint n)
{
    GP_FOR(i, n) l[i] = x[i] != 0 ? i + 1 : 0;
}

/* One pass over the elements of a shape (nz, ny, nx): the smallest label of the neighbours the
 * structure names (faces, or with diagonal every element of the 3x3x3 block), and of the element
 * a label points to. changed[0] is set where a label falls. */
GP_KERNEL void label_pass(GP_GLOBAL uint *l, uint nx, uint ny, uint nz, int diagonal, GP_GLOBAL uint *changed)
{
    GP_FOR(i, nx * ny * nz) {
        uint m = l[i];
        if (m == 0) continue;
        int x = (int)(i % nx), y = (int)(i / nx % ny), z = (int)(i / nx / ny);
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int far = (dx != 0) + (dy != 0) + (dz != 0);
                    int xx = x + dx, yy = y + dy, zz = z + dz;
                    if (far == 0 || (far > 1 && !diagonal) || xx < 0 || yy < 0 || zz < 0 || xx >= (int)nx ||
                        yy >= (int)ny || zz >= (int)nz)
                        continue;
                    uint v = l[((uint)zz * ny + (uint)yy) * nx + (uint)xx];
                    if (v != 0 && v < m) m = v;
                }
        m = l[m - 1] < m ? l[m - 1] : m;
        if (m < l[i]) {
            l[i] = m;
            changed[0] = 1;
        }
    }
}

GP_KERNEL void label_roots(GP_GLOBAL const uint *l, GP_GLOBAL uint *root, uint n)
{
    GP_FOR(i, n) root[i] = l[i] == i + 1;
}

GP_KERNEL void label_number(GP_GLOBAL const uint *l, GP_GLOBAL const uint *rank, GP_GLOBAL O *out, uint n)
{
    GP_FOR(i, n) out[i] = l[i] ? (O)(rank[l[i] - 1] + 1) : (O)0;
}
"""
_kept = {}


def _structure(structure, ndim):
    """1 for every element of the 3^ndim block, 0 for faces only (SciPy's default)."""
    if structure is None:
        return 0
    s = np.asarray(structure if not hasattr(structure, "get") else structure.get()) != 0
    faces = np.zeros((3,) * ndim, bool)
    for d in range(ndim):
        faces[(1,) * d + (slice(None),) + (1,) * (ndim - d - 1)] = True
    if s.shape == faces.shape and (s == faces).all():
        return 0
    if s.shape == faces.shape and s.all():
        return 1
    raise NotImplementedError("gpuport.scipy.ndimage.label: the structure is the faces' cross (the default) or "
                              "all ones of shape %s" % (faces.shape,))


def label(input, structure=None, output=None):
    """SciPy's label: (labels, count), or count where output= is given (an array it fills)."""
    x = asarray(input)
    if not 1 <= x.ndim <= 3:
        raise NotImplementedError("gpuport.scipy.ndimage.label: takes 1 to 3 dimensions, not %d" % x.ndim)
    if x.size >= 1 << 32:
        raise ValueError("gpuport.scipy.ndimage.label: takes fewer than 2^32 elements")
    diagonal = _structure(structure, x.ndim)
    x = x if x.contiguous and not x._off else x.copy()
    dev, n = x.device, x.size
    out = output if output is not None else empty(x.shape, np.int32, dev)
    if out.shape != x.shape or not out.contiguous or out._off:
        raise ValueError("gpuport.scipy.ndimage.label: output must be a contiguous array of the input's shape")
    key = (dev.spec, x.dtype, out.dtype)
    if key not in _kept:
        p = Program(_LABEL, "-DT=%s -DO=%s" % (CTYPES[x.dtype], CTYPES[out.dtype]), device=dev)
        _kept[key] = {k: p.kernel(k) for k in ("label_init", "label_pass", "label_roots", "label_number")}
    k = _kept[key]
    shape = (1,) * (3 - x.ndim) + x.shape
    labels, changed, zero = empty(n, np.uint32, dev), empty(1, np.uint32, dev), np.zeros(1, np.uint32)
    k["label_init"](x, labels, n, global_size=n)
    while True:
        changed.set(zero)
        for _ in range(4):  # a few passes between looks at the flag
            k["label_pass"](labels, shape[2], shape[1], shape[0], diagonal, changed, global_size=n)
        if not changed.get()[0]:
            break
    roots = empty(n, np.uint32, dev)
    k["label_roots"](labels, roots, n, global_size=n)
    rank = cumsum(roots, exclusive=True)
    count = int(rank[-1:].get()[0] + roots[-1:].get()[0]) if n else 0
    k["label_number"](labels, rank, out, n, global_size=n)
    return count if output is not None else (out, count)


def _sums(input, labels, index, moments):
    """Per label of index: the sum of input (and of input times each coordinate), in double."""
    x = asarray(input)
    x = x if x.contiguous and not x._off else x.copy()
    dev = x.device
    if x.ndim > 3:
        raise NotImplementedError("gpuport.scipy.ndimage: takes 1 to 3 dimensions, not %d" % x.ndim)
    lab = (asarray(labels, device=dev) if labels is not None else ew.not_equal(x, 0)).astype(np.int64)
    if lab.shape != x.shape:
        raise ValueError("gpuport.scipy.ndimage: labels must have the input's shape, %s" % (x.shape,))
    scalar = index is not None and np.ndim(index) == 0 and not hasattr(index, "device")
    idx = asarray(np.asarray([1]) if index is None else np.atleast_1d(index) if scalar else index, device=dev)
    idx = idx.astype(np.int64)
    top = int(idx.max().get()) + 1 if idx.size else 1
    if index is None:  # every label above 0, as one
        lab = ew.where(ew.greater(lab, 0), 1, -1).astype(np.int64)
    sums = label_sums(lab, x, top, (1,) * (3 - x.ndim) + x.shape, moments=True) if moments else \
        label_sums(lab, x, top).reshape(top, 1)
    table = concatenate([sums, zeros((1, sums.shape[1]), device=dev)])  # the last row: labels not there
    picked = table[ew.where(ew.greater_equal(idx, 0), idx, top)] if idx.size else table[:0]
    return picked, scalar or index is None, x.ndim


def sum_labels(input, labels=None, index=None):
    """SciPy's sum_labels: the sum of input over each label of index (all labels above 0 where
    index is None; input's nonzero elements where labels is None), in float64."""
    picked, one, _ = _sums(input, labels, index, False)
    out = picked.reshape(picked.shape[0])
    return out.reshape(()) if one else out


def center_of_mass(input, labels=None, index=None):
    """SciPy's center_of_mass: the input-weighted mean position of each label of index, a tuple
    of coordinates (a list of them for several labels)."""
    picked, one, ndim = _sums(input, labels, index, True)
    table = picked.get()
    centres = [tuple((row[4 - ndim:] / row[0]).tolist()) for row in table]
    return centres[0] if one else centres
