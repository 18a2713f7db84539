"""Products of arrays: matmul (gp_gemm, or a kernel for small or batched ones), dot, vdot, inner,
outer."""
import numpy as np

from . import _elementwise as ew
from ._array import GP_TYPES, Array, check_out
from ._device import _stream
from ._ffi import CONSTANTS as _C, RECORDS as _R, check as _check, lib as _lib


def matmul(a, b, out=None, impl="auto", stream=None):
    """a @ b as NumPy's matmul: 2D float32 or float64 through gp_gemm (gpuport's kernel, the
    vendor's library, or for "auto" GPUPORT_GEMM's choice); vectors, stacks and other dtypes
    through a kernel of their own."""
    a, b = ew.operands(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("gpuport.matmul: operands must have at least one dimension, not a scalar")
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError("gpuport.matmul: shapes %s and %s do not multiply (%d != %d)" % (a.shape, b.shape,
                                                                                        a2.shape[-1], b2.shape[-2]))
    dtype = np.result_type(a.dtype, b.dtype)
    if out is not None:  # before any work, as NumPy refuses it
        shape = list(ew.broadcast_shape(a2.shape[:-2], b2.shape[:-2])) + [a2.shape[-2], b2.shape[-1]]
        if b.ndim == 1:
            shape.pop(-1)
        if a.ndim == 1:
            shape.pop(-2 if b.ndim > 1 else -1)
        check_out(out, dtype, "matmul", shape)
    if dtype.kind == "c":
        r = _complex_matmul(a, b, dtype, stream)
        return r if out is None else ew.assign(out, r)
    if a2.ndim == 2 and b2.ndim == 2 and dtype in (np.float32, np.float64):
        r = _gemm(a2.astype(dtype, copy=False), b2.astype(dtype, copy=False), impl, stream)
    else:
        r = ew.matmul_kernel(a2, b2, dtype)
    if a.ndim == 1:
        r = r[..., 0, :]
    if b.ndim == 1:
        r = r[..., 0]
    if out is not None:
        out[...] = r
        return out
    return r


def _gemm(a, b, impl, stream):
    impls = {"auto": "GP_GEMM_AUTO", "gpuport": "GP_GEMM_GPUPORT", "vendor": "GP_GEMM_VENDOR"}
    if impl not in impls:
        raise ValueError("gpuport.matmul: impl %r is not auto, gpuport or vendor" % (impl,))
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    out = Array((m, n), a.dtype, device=a.device)
    if out.size == 0:
        return out
    if k == 0:
        return out.fill(0)
    args = []
    for x in (a, b):  # row-major as it is, or its transpose's storage (a .T view), or a copy
        if x.contiguous or x.shape[0] == 1 and x._st[1] == 1:
            args += [_C["GP_NO_TRANS"], x, max(x._st[0], x.shape[1], 1)]
        elif x._st[0] == 1 and x._st[1] >= x.shape[0]:
            args += [_C["GP_TRANS"], x, x._st[1]]
        else:
            x = x.copy()
            args += [_C["GP_NO_TRANS"], x, max(x.shape[1], 1)]
    view = _R["gp_view"]
    _check(_lib.gp_gemm(_stream(stream), _C[impls[impl]], GP_TYPES[a.dtype], _C["GP_ROW_MAJOR"], args[0], args[3],
                        m, n, k, 1.0, view(args[1]._buf, args[1]._off), args[2], view(args[4]._buf, args[4]._off),
                        args[5], 0.0, view(out._buf, 0), max(n, 1)))
    return out


def _complex_matmul(a, b, dtype, stream):
    """(ar + i ai)(br + i bi) from the real products of the parts (gp_gemm's where it takes them)."""
    ai = a.imag if a.dtype.kind == "c" else None
    bi = b.imag if b.dtype.kind == "c" else None
    re = matmul(a.real, b.real, stream=stream)
    im = [matmul(x, y, stream=stream) for x, y in ((a.real, bi), (ai, b.real)) if x is not None and y is not None]
    if ai is not None and bi is not None:
        re = ew.subtract(re, matmul(ai, bi, stream=stream))
    return ew.make_complex(re, im[0] if len(im) == 1 else ew.add(*im), dtype)


def dot(a, b, out=None):
    """NumPy's dot: the sum of products for vectors, matmul for matrices, a product with a scalar."""
    a, b = ew.operands(a, b)
    if not isinstance(a, Array) or not isinstance(b, Array) or a.ndim == 0 or b.ndim == 0:
        return ew.multiply(a, b, out=out)
    if b.ndim > 2:
        raise ValueError("gpuport.dot: the second operand has %d dimensions; use matmul for stacks" % b.ndim)
    return matmul(a, b, out=out)


def vdot(a, b):
    """NumPy's vdot: the dot product of the flattened arrays, the first conjugated."""
    a, b = ew.operands(a, b)
    return dot((ew.conjugate(a) if a.dtype.kind == "c" else a).ravel(), b.ravel())


def inner(a, b):
    return dot(a, b) if ew.operands(a)[0].ndim <= 1 else matmul(a, ew.operands(b)[0].T)


def outer(a, b):
    a, b = ew.operands(a, b)
    return ew.multiply(a.ravel()[:, None], b.ravel()[None, :])
