"""Where gpuport.linalg's factorisations run. On CUDA devices: NVIDIA's cuSOLVER (libcusolver,
loaded at first use, called on the current stream with the arrays' device pointers). Elsewhere
(OpenCL and HIP devices) Cholesky, QR, SVD and eigh run in LAPACK on the host (NumPy's: OpenBLAS
where NumPy brings it), the arrays copied there and back; det, solve and inv stay on the device
(linalg's LU in the dialect). solver(device) says which, and why where cuSOLVER is missing.

cuSOLVER's matrices are column-major and gpuport's row-major: a row-major buffer is, read by
cuSOLVER, the transpose of the matrix, which each function below turns to its use (a symmetric
matrix is its own transpose; A = QR is taken of a copy of A's transpose)."""
import ctypes

import numpy as np

from ._array import asarray, empty, zeros
from ._vendor import address, current_stream, load

_LIBS = ("libcusolver.so.12", "libcusolver.so.11", "libcusolver.so")
_UPPER, _LOWER, _TRANS = 1, 0, 1  # cublasFillMode_t, cublasOperation_t
_P = ctypes.c_void_p


class _CuSolver:
    """libcusolver and one cusolverDn handle per device, made on first use."""

    def __init__(self):
        self.handles = {}
        self.lib, self.path, why = load(_LIBS)
        if self.lib is None:
            self.why = "cuSOLVER was not found (%s)" % why
            return
        v = ctypes.c_int()
        self.lib.cusolverGetVersion(ctypes.byref(v))
        self.version = "%d.%d.%d" % (v.value // 1000, v.value % 1000 // 100, v.value % 100)

    def handle(self, dev):
        """The device's handle, its context current on this thread and its stream the current one."""
        s = current_stream(dev)
        h = self.handles.get(dev.spec)
        if h is None:
            h = _P()
            self.status("Create", self.lib.cusolverDnCreate(ctypes.byref(h)))
            self.handles[dev.spec] = h
        self.status("SetStream", self.lib.cusolverDnSetStream(h, s))
        return h

    @staticmethod
    def status(name, st):
        if st:
            raise RuntimeError("gpuport.linalg: cusolverDn%s returned status %d" % (name, st))

    def call(self, name, dtype, *args):
        name = ("S" if dtype == np.float32 else "D") + name
        self.status(name, getattr(self.lib, "cusolverDn" + name)(*args))

    def work(self, name, dtype, *args):
        """The workspace, in elements, that name's _bufferSize asks for."""
        lwork = ctypes.c_int()
        self.call(name + "_bufferSize", dtype, *args, ctypes.byref(lwork))
        return lwork.value


_cusolver = None


def _solver():
    global _cusolver
    if _cusolver is None:
        _cusolver = _CuSolver()
    return _cusolver


def cusolver(a):
    """cuSOLVER where a is on a CUDA device and libcusolver loads, else None (and for an empty a,
    which NumPy's rules take more simply than cuSOLVER's leading dimensions of at least 1)."""
    return _solver() if a.device.backend == "cuda" and a.size and _solver().lib is not None else None


def solver(device=None):
    """Which library gpuport.linalg uses on device (the current one by default), and why."""
    from ._device import device as _device
    dev = _device(device)
    if dev.backend == "cuda":
        s = _solver()
        if s.lib is not None:
            return "cuSOLVER %s (%s)" % (s.version, s.path)
        return "LAPACK on the host (NumPy's) for cholesky, qr, svd, eigh; det, solve, inv by gpuport's LU: " + s.why
    return ("LAPACK on the host (NumPy's) for cholesky, qr, svd, eigh; det, solve, inv by gpuport's LU in the dialect "
            "on the device (%s has no vendor solver that gpuport loads)" % dev.backend)




def _info(x, what):
    """The devInfo of a call: raises numpy's LinAlgError text where it is positive."""
    i = int(x.get()[0])
    if i > 0:
        raise np.linalg.LinAlgError(what)
    if i < 0:
        raise RuntimeError("gpuport.linalg: cuSOLVER refused its argument %d" % -i)


def cholesky(s, m, dtype):
    """L, lower, with m = L L^T: cuSOLVER's upper factor of the column-major reading."""
    n, a = m.shape[0], m.astype(dtype)
    h = s.handle(m.device)
    w = empty(max(s.work("potrf", dtype, h, _UPPER, n, address(a), n), 1), dtype, m.device)
    info = zeros(1, np.int32, m.device)
    s.call("potrf", dtype, h, _UPPER, n, address(a), n, address(w), w.size, address(info))
    _info(info, "Matrix is not positive definite")
    return a


def eigh(s, m, dtype, uplo, vectors):
    """Eigenvalues ascending (and vectors as columns) of the symmetric m, from its uplo triangle."""
    n, a = m.shape[0], m.astype(dtype)
    h = s.handle(m.device)
    fill = _UPPER if uplo == "L" else _LOWER  # the row-major lower triangle is the column-major upper
    w = empty(n, dtype, m.device)
    job = 1 if vectors else 0
    work = empty(max(s.work("syevd", dtype, h, job, fill, n, address(a), n, address(w)), 1), dtype, m.device)
    info = zeros(1, np.int32, m.device)
    s.call("syevd", dtype, h, job, fill, n, address(a), n, address(w), address(work), work.size, address(info))
    _info(info, "Eigenvalues did not converge")
    return (w, a.T.copy()) if vectors else w


def qr(s, m, dtype, mode):
    """Householder QR of m (r by c): geqrf of the column-major m (a row-major copy of m.T), R its
    upper triangle, Q from orgqr (r by min(r, c), or r by r for mode 'complete')."""
    r, c = m.shape
    k = min(r, c)
    a = m.T.astype(dtype)  # c by r row-major: m column-major, leading dimension r
    h, dev = s.handle(m.device), m.device
    tau = empty(max(k, 1), dtype, dev)
    info = zeros(1, np.int32, dev)
    w = empty(max(s.work("geqrf", dtype, h, r, c, address(a), r), 1), dtype, dev)
    s.call("geqrf", dtype, h, r, c, address(a), r, address(tau), address(w), w.size, address(info))
    _info(info, "QR failed")
    from ._ranges import triu
    R = triu(a.T[:k if mode != "complete" else r, :])
    if mode == "r":
        return R
    cols = r if mode == "complete" else k
    q = a[:cols] if cols <= c else _padded(a, r)
    if cols and r:
        w = empty(max(s.work("orgqr", dtype, h, r, cols, k, address(q), r, address(tau)), 1), dtype, dev)
        s.call("orgqr", dtype, h, r, cols, k, address(q), r, address(tau), address(w), w.size, address(info))
        _info(info, "QR failed")
    return q.T.copy(), R


def _padded(a, rows):
    out = zeros((rows,) + a.shape[1:], a.dtype, a.device)
    out[:a.shape[0]] = a
    return out


def svd(s, m, dtype, full, uv):
    """gesvd of a column-major matrix of at least as many rows as columns: m itself where m is
    wider than tall (its row-major buffer is m.T column-major), else a copy of m.T; u and vt of
    m follow from those of whichever it was."""
    r, c = m.shape
    wide = c >= r
    a = m.astype(dtype) if wide else m.T.astype(dtype)
    rows, cols = (c, r) if wide else (r, c)
    dev, h = m.device, s.handle(m.device)
    sv = empty(cols, dtype, dev)
    ucols = rows if full else cols
    u = empty((ucols, rows), dtype, dev) if uv else None
    vt = empty((cols, cols), dtype, dev) if uv else None
    job = ord("A" if full else "S") if uv else ord("N")
    w = empty(max(s.work("gesvd", dtype, h, rows, cols), 1), dtype, dev)
    rwork = empty(max(cols, 1), dtype, dev)
    info = zeros(1, np.int32, dev)
    s.call("gesvd", dtype, h, ctypes.c_char(job), ctypes.c_char(ord("A") if uv else job), rows, cols, address(a), rows,
           address(sv), address(u), rows, address(vt), cols, address(w), w.size, address(rwork), address(info))
    _info(info, "SVD did not converge")
    if not uv:
        return sv
    if wide:  # m = (a column-major)^T = (U S V^T)^T: m's u is V, its vt is U^T
        return vt, sv, u
    return u.T.copy(), sv, vt.T.copy()


def lu(s, m, dtype):
    """getrf of the column-major reading of m (m's transpose, whose determinant is m's): the
    factors and LAPACK's 1-based pivots; info > 0 where it is singular."""
    n, a = m.shape[0], m.astype(dtype)
    dev, h = m.device, s.handle(m.device)
    piv = empty(max(n, 1), np.int32, dev)
    info = zeros(1, np.int32, dev)
    w = empty(max(s.work("getrf", dtype, h, n, n, address(a), n), 1), dtype, dev)
    s.call("getrf", dtype, h, n, n, address(a), n, address(w), address(piv), address(info))
    return a, piv, info


def lu_solve(s, a, piv, b):
    """x with m x = b from lu's factors of m^T (getrs of the transpose); b n or n by k."""
    x = b.astype(a.dtype) if b.ndim == 1 else b.T.astype(a.dtype)  # b column-major
    _getrs(s, a, piv, x, _TRANS, 1 if b.ndim == 1 else b.shape[1])
    return x if b.ndim == 1 else x.T.copy()


def inv(s, m, dtype):
    """m's inverse: getrs solves m^T x = I in column-major x, whose row-major reading is x^T =
    (m^T)^-1^T = m^-1, with no transposing copy."""
    a, piv, info = lu(s, m, dtype)
    _info(info, "Singular matrix")
    from ._ranges import eye
    x = eye(m.shape[0], dtype=dtype, device=m.device)
    _getrs(s, a, piv, x, 0, m.shape[0])
    return x


def _getrs(s, a, piv, x, trans, k):
    n = a.shape[0]
    info = zeros(1, np.int32, a.device)
    if n and k:
        s.call("getrs", a.dtype, s.handle(a.device), trans, n, k, address(a), n, address(piv), address(x), n, address(info))


def host(name, a, *args, **kw):
    """np.linalg.name on a copy of a on the host, its results copied back to a's device."""
    out = getattr(np.linalg, name)(a.get(), *args, **kw)
    if isinstance(out, tuple):
        return tuple(asarray(o, device=a.device) for o in out)
    return asarray(out, device=a.device)

