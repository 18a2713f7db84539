"""NumPy's linalg names that gpuport has: norm (vectors, and matrices but for the 2-norm), and
det, solve and inv through an LU factorisation with partial pivoting in the kernel dialect (every
backend; pivots chosen as LAPACK's getrf chooses them, the first of the largest), one column at a
time: its pivot found and swapped by one work-group, then the rows below it updated and scaled.
Stacks of matrices are taken one matrix after another."""
import numpy as np

from ._array import asarray, empty
from ._primitives import Program
from ._reduction import norm, prod

__all__ = ["norm", "det", "solve", "inv", "LinAlgError"]
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


def _square(a, what):
    a = asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise LinAlgError("gpuport.linalg.%s: the last two dimensions must be square, not %s" % (what, a.shape))
    dtype = np.dtype(np.float32) if a.dtype == np.float32 else np.dtype(np.float64)
    if a.dtype.kind not in "biuf":
        raise TypeError("gpuport.linalg.%s: takes real arrays, not %s" % (what, a.dtype))
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
    """one(matrix) for each matrix of a stack, stacked again."""
    if a.ndim == 2:
        return one(a)
    parts = [one(a[i]) for i in np.ndindex(a.shape[:-2])]
    out = empty(a.shape[:-2] + parts[0].shape, parts[0].dtype, a.device)
    for i, p in zip(np.ndindex(a.shape[:-2]), parts):
        out[i] = p
    return out


def det(a):
    """NumPy's det: the product of U's diagonal, its sign from the row swaps (0 for a singular matrix)."""
    a, dtype = _square(a, "det")

    def one(m):
        n = m.shape[0]
        if n == 0:
            return asarray(np.ones((), dtype), device=m.device)
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
    lu, perm, info, k = _lu(a, dtype)
    if int(info.get()[0]):
        raise LinAlgError("Singular matrix")
    x = b.astype(dtype)
    cols = 1 if b.ndim == 1 else b.shape[1]
    if n and cols:
        k["lu_solve"](lu, perm, x, n, cols, global_size=cols)
    return x


def inv(a):
    """NumPy's inv: solve(a, I); LinAlgError where a is singular."""
    a, dtype = _square(a, "inv")

    def one(m):
        n = m.shape[0]
        return solve(m, asarray(np.eye(n, dtype=dtype), device=m.device))
    return _each(a, one)
