"""NumPy's linalg names that gpuport has: norm; cholesky, eigh, eigvalsh, qr and svd (cuSOLVER on
CUDA devices, LAPACK on the host elsewhere: _solvers); det, solve and inv by cuSOLVER's LU on CUDA
devices and elsewhere by an LU factorisation with partial pivoting in the kernel dialect (pivots
chosen as LAPACK's getrf chooses them, the first of the largest), one column at a time: its pivot
found and swapped by one work-group, then the rows below it updated and scaled. Stacks of
matrices are taken one matrix after another. solver(device) says which library a device uses."""
import numpy as np

from ._array import asarray, empty
from ._primitives import Program
from ._reduction import norm as _norm, prod

__all__ = ["norm", "det", "solve", "inv", "cholesky", "eigh", "eigvalsh", "qr", "svd", "solver", "LinAlgError"]
LinAlgError = np.linalg.LinAlgError

_LU = r"""
/* Column k's pivot, the row p >= k of the largest |a[p][k]| (the first of equals), swapped with
 * row k; perm[k] = p. info[0]: 1 + the first column without a nonzero pivot, where there is one. */
GP_KERNEL void lu_pivot(GP_GLOBAL T *a, GP_GLOBAL int *perm, GP_GLOBAL int *info, uint n, uint k)
{
    GP_LOCAL T best[256];
    GP_LOCAL uint where[256];
    uint t = gp_local_id(0), at = k;
    T m = -1;
    for (uint i = k + t; i < n; i += 256) {
        T v = fabs(a[i * n + k]);
        if (v > m) {
            m = v;
            at = i;
        }
    }
    best[t] = m;
    where[t] = at;
    gp_barrier();
    for (uint s = 128; s > 0; s >>= 1) {
        if (t < s && (best[t + s] > best[t] || (best[t + s] == best[t] && where[t + s] < where[t]))) {
            best[t] = best[t + s];
            where[t] = where[t + s];
        }
        gp_barrier();
    }
    uint p = where[0];
    if (t == 0) {
        perm[k] = (int)p;
        if (!(best[0] > 0) && info[0] == 0) info[0] = (int)k + 1;
    }
    if (p != k)
        for (uint j = t; j < n; j += 256) {
            T x = a[k * n + j];
            a[k * n + j] = a[p * n + j];
            a[p * n + j] = x;
        }
}

/* The rows below k: a[i][j] -= a[i][k] / a[k][k] * a[k][j] for j > k. */
GP_KERNEL void lu_update(GP_GLOBAL T *a, uint n, uint k)
{
    uint j = gp_global_id(0) + k + 1, i = gp_global_id(1) + k + 1;
    if (i < n && j < n && a[k * n + k] != 0) a[i * n + j] -= a[i * n + k] / a[k * n + k] * a[k * n + j];
}

/* Then column k below the diagonal: L's multipliers. */
GP_KERNEL void lu_scale(GP_GLOBAL T *a, uint n, uint k)
{
    GP_FOR(r, n - k - 1) {
        if (a[k * n + k] != 0) a[(k + 1 + r) * n + k] /= a[k * n + k];
    }
}

/* Each column of b (n by m) solved with the factors: its rows permuted, then L and U. */
GP_KERNEL void lu_solve(GP_GLOBAL const T *a, GP_GLOBAL const int *perm, GP_GLOBAL T *b, uint n, uint m)
{
    GP_FOR(c, m) {
        for (uint k = 0; k < n; k++) {
            uint p = (uint)perm[k];
            T x = b[k * m + c];
            b[k * m + c] = b[p * m + c];
            b[p * m + c] = x;
        }
        for (uint i = 0; i < n; i++) {
            T s = b[i * m + c];
            for (uint k = 0; k < i; k++) s -= a[i * n + k] * b[k * m + c];
            b[i * m + c] = s;
        }
        for (uint i = n; i-- > 0;) {
            T s = b[i * m + c];
            for (uint k = i + 1; k < n; k++) s -= a[i * n + k] * b[k * m + c];
            b[i * m + c] = s / a[i * n + i];
        }
    }
}
"""
_kernels = {}


def _matrix(a, what):
    """a as an array of matrices of real numbers, and the float type linalg computes them in."""
    a = asarray(a)
    if a.ndim < 2:
        raise LinAlgError("%d-dimensional array given. Array must be at least two-dimensional" % a.ndim)
    if a.dtype.kind not in "biuf":
        raise TypeError("gpuport.linalg.%s: takes real arrays, not %s" % (what, a.dtype))
    return a, (np.dtype(np.float32) if a.dtype == np.float32 else np.dtype(np.float64))


def _square(a, what):
    a, dtype = _matrix(a, what)
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError("gpuport.linalg.%s: the last two dimensions must be square, not %s" % (what, a.shape))
    return a, dtype


def _lu(m, dtype):
    """The LU factors of the square matrix m (a copy, pivoted in place), its pivots and info."""
    dev, n = m.device, m.shape[0]
    key = (dev.spec, dtype)
    if key not in _kernels:
        p = Program(_LU, "-DT=%s" % ("float" if dtype == np.float32 else "double"), device=dev)
        _kernels[key] = {k: p.kernel(k) for k in ("lu_pivot", "lu_update", "lu_scale", "lu_solve")}
    k = _kernels[key]
    lu = m.astype(dtype)  # a new array
    perm = empty(max(n, 1), np.int32, dev)
    info = asarray(np.zeros(1, np.int32), device=dev)
    for c in range(n):
        k["lu_pivot"](lu, perm, info, n, c, global_size=256, local_size=256)
        rest = n - c - 1
        if rest:
            k["lu_update"](lu, n, c, global_size=(-(-rest // 16) * 16, -(-rest // 16) * 16), local_size=(16, 16))
            k["lu_scale"](lu, n, c, global_size=rest)
    return lu, perm, info, k


def _each(a, one):
    """one(matrix) for each matrix of a stack, stacked again (each of a tuple of results)."""
    if a.ndim == 2:
        return one(a)
    parts = [one(a[i]) for i in np.ndindex(a.shape[:-2])]
    tuples = isinstance(parts[0], tuple)
    outs = []
    for j in range(len(parts[0]) if tuples else 1):
        first = parts[0][j] if tuples else parts[0]
        out = empty(a.shape[:-2] + first.shape, first.dtype, a.device)
        for i, p in zip(np.ndindex(a.shape[:-2]), parts):
            out[i] = p[j] if tuples else p
        outs.append(out)
    return tuple(outs) if tuples else outs[0]


def det(a):
    """NumPy's det: the product of U's diagonal, its sign from the row swaps (0 for a singular matrix)."""
    a, dtype = _square(a, "det")
    s = _solvers.cusolver(a)

    def one(m):
        n = m.shape[0]
        if n == 0:
            return asarray(np.ones((), dtype), device=m.device)
        if s:
            lu, perm, _ = _solvers.lu(s, m, dtype)
            swaps = int((perm.get()[:n] != np.arange(1, n + 1)).sum())
        else:
            lu, perm, info, _ = _lu(m, dtype)
            swaps = int((perm.get()[:n] != np.arange(n)).sum())
        d = prod(lu.reshape(n * n)[::n + 1])
        return d if swaps % 2 == 0 else -d
    return _each(a, one)


def solve(a, b):
    """NumPy's solve: x with a @ x = b (b a vector or a matrix of columns); LinAlgError where a is singular."""
    a, dtype = _square(a, "solve")
    b = asarray(b, device=a.device)
    if a.ndim != 2:
        raise NotImplementedError("gpuport.linalg.solve: takes one matrix, not a stack")
    n = a.shape[0]
    if b.shape[0] != n or b.ndim > 2:
        raise ValueError("gpuport.linalg.solve: b has shape %s; it must be (%d,) or (%d, k)" % (b.shape, n, n))
    dtype = np.result_type(dtype, b.dtype if b.dtype.kind == "f" else np.float64)
    s = _solvers.cusolver(a)
    if s:
        lu, perm, info = _solvers.lu(s, a, dtype)
    else:
        lu, perm, info, k = _lu(a, dtype)
    if int(info.get()[0]):
        raise LinAlgError("Singular matrix")
    if s:
        return _solvers.lu_solve(s, lu, perm, b)
    x = b.astype(dtype)
    cols = 1 if b.ndim == 1 else b.shape[1]
    if n and cols:
        k["lu_solve"](lu, perm, x, n, cols, global_size=cols)
    return x


def inv(a):
    """NumPy's inv: solve(a, I); LinAlgError where a is singular."""
    a, dtype = _square(a, "inv")
    s = _solvers.cusolver(a)
    if s:
        return _each(a, lambda m: _solvers.inv(s, m, dtype))

    def one(m):
        n = m.shape[0]
        return solve(m, asarray(np.eye(n, dtype=dtype), device=m.device))
    return _each(a, one)


def cholesky(a):
    """NumPy's cholesky: L, lower triangular, with a = L @ L.T; LinAlgError where a is not
    positive definite. cuSOLVER's potrf on CUDA devices, LAPACK on the host elsewhere."""
    a, dtype = _square(a, "cholesky")
    s = _solvers.cusolver(a)
    if not s:
        return _solvers.host("cholesky", a)
    return tril(_each(a, lambda m: _solvers.cholesky(s, m, dtype)))


def eigh(a, UPLO="L"):
    """NumPy's eigh: eigenvalues ascending and eigenvectors (as columns) of the symmetric a, read
    from its UPLO triangle. cuSOLVER's syevd on CUDA devices, LAPACK on the host elsewhere."""
    return _eigh(a, UPLO, True)


def eigvalsh(a, UPLO="L"):
    """NumPy's eigvalsh: eigh's eigenvalues alone."""
    return _eigh(a, UPLO, False)


def _eigh(a, uplo, vectors):
    what = "eigh" if vectors else "eigvalsh"
    a, dtype = _square(a, what)
    if uplo not in ("L", "U"):
        raise ValueError("gpuport.linalg.%s: UPLO is 'L' or 'U', not %r" % (what, uplo))
    s = _solvers.cusolver(a)
    if not s:
        return _solvers.host(what, a, UPLO=uplo)
    return _each(a, lambda m: _solvers.eigh(s, m, dtype, uplo, vectors))


def qr(a, mode="reduced"):
    """NumPy's qr: Q with orthonormal columns and R upper triangular, a = Q @ R ('reduced': Q is
    m by min(m, n); 'complete': m by m; 'r': R alone). cuSOLVER's geqrf and orgqr on CUDA
    devices, LAPACK on the host elsewhere."""
    a, dtype = _matrix(a, "qr")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError("gpuport.linalg.qr: mode is 'reduced', 'complete' or 'r', not %r" % (mode,))
    s = _solvers.cusolver(a)
    if not s:
        return _solvers.host("qr", a, mode=mode)
    return _each(a, lambda m: _solvers.qr(s, m, dtype, mode))


def svd(a, full_matrices=True, compute_uv=True):
    """NumPy's svd: u, s (descending) and vh with a = u @ diag(s) @ vh (s alone without
    compute_uv). cuSOLVER's gesvd on CUDA devices, LAPACK on the host elsewhere."""
    a, dtype = _matrix(a, "svd")
    s = _solvers.cusolver(a)
    if not s:
        return _solvers.host("svd", a, full_matrices=full_matrices, compute_uv=compute_uv)
    return _each(a, lambda m: _solvers.svd(s, m, dtype, bool(full_matrices), bool(compute_uv)))



def norm(x, ord=None, axis=None, keepdims=False):
    """NumPy's linalg.norm; the matrix norms 2, -2 and 'nuc' from the singular values."""
    if ord not in (2, -2, "nuc") or (axis is None and asarray(x).ndim != 2) or (axis is not None and (
            not isinstance(axis, tuple) or len(axis) != 2)):
        return _norm(x, ord, axis, keepdims)
    x = asarray(x)
    axes = tuple(d % x.ndim for d in (axis if axis is not None else (0, 1)))
    rest = [d for d in range(x.ndim) if d not in axes]
    sv = svd(x.transpose(rest + list(axes)), compute_uv=False)
    r = sv.max(axis=-1) if ord == 2 else sv.min(axis=-1) if ord == -2 else sv.sum(axis=-1)
    if keepdims:
        r = r.reshape([1 if d in axes else n for d, n in enumerate(x.shape)])
    return r


from . import _solvers  # noqa: E402
from ._ranges import tril  # noqa: E402
from ._solvers import solver  # noqa: E402,F401
