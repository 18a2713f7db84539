"""gpuport.linalg on every device against NumPy's (LAPACK's): det, solve and inv, stacks and singular
matrices included; cholesky, eigh, qr and svd by what defines them (L L^T = a, A v = v w, orthonormal
factors that multiply back to a) and their values against NumPy's; the matrix norms that need singular values."""
import numpy as np
import pytest

import gpuport as gp

RNG = np.random.default_rng(9)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_det_solve_inv(dev, dtype):
    # float32: a random 130 by 130 matrix loses some digits to its condition in any LU, LAPACK's too
    tol = dict(rtol=1e-2, atol=5e-3) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-11)
    with dev:
        for n in (1, 3, 40, 130):
            a = (RNG.standard_normal((n, n)) / np.sqrt(n)).astype(dtype)  # a determinant float32 holds
            b = RNG.standard_normal((n, 4)).astype(dtype)
            g = gp.asarray(a)
            np.testing.assert_allclose(gp.linalg.det(g).get(), np.linalg.det(a), **tol)
            np.testing.assert_allclose(gp.linalg.solve(g, gp.asarray(b)).get(), np.linalg.solve(a, b), **tol)
            np.testing.assert_allclose(gp.linalg.solve(g, gp.asarray(b[:, 0])).get(), np.linalg.solve(a, b[:, 0]), **tol)
            inv = gp.linalg.inv(g)
            assert inv.dtype == dtype
            np.testing.assert_allclose(inv.get(), np.linalg.inv(a), **tol)


def test_stacks_pivots_and_singular(dev):
    with dev:
        s = RNG.standard_normal((3, 2, 5, 5))
        np.testing.assert_allclose(gp.linalg.det(gp.asarray(s)).get(), np.linalg.det(s), rtol=1e-9)
        np.testing.assert_allclose(gp.linalg.inv(gp.asarray(s)).get(), np.linalg.inv(s), rtol=1e-8)
        swap = np.eye(4)[[2, 0, 3, 1]]  # every pivot a swap
        assert gp.linalg.det(gp.asarray(swap)).get() == np.linalg.det(swap)
        np.testing.assert_array_equal(gp.linalg.inv(gp.asarray(swap)).get(), np.linalg.inv(swap))
        ints = np.array([[4, 1], [2, 3]])
        assert gp.linalg.det(gp.asarray(ints)).get() == pytest.approx(10.0)
        singular = gp.asarray([[1.0, 2.0], [2.0, 4.0]])
        assert gp.linalg.det(singular).get() == 0
        with pytest.raises(gp.linalg.LinAlgError, match="Singular matrix"):
            gp.linalg.inv(singular)
        with pytest.raises(gp.linalg.LinAlgError, match="square"):
            gp.linalg.det(gp.zeros((2, 3)))
        np.testing.assert_allclose(np.linalg.solve(gp.asarray(s[0, 0]), gp.asarray(s[0, 1])).get(),
                                   np.linalg.solve(s[0, 0], s[0, 1]), rtol=1e-8)  # NumPy's names run gpuport's


def _orthonormal_columns(q, tol):
    np.testing.assert_allclose(q.T @ q, np.eye(q.shape[1]), atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cholesky_and_eigh(dev, dtype):
    tol = 2e-4 if dtype == np.float32 else 1e-10
    with dev:
        for n in (1, 4, 70):
            m = RNG.standard_normal((n, n))
            a = (m @ m.T / n + np.eye(n)).astype(dtype)  # symmetric positive definite
            L = gp.linalg.cholesky(gp.asarray(a))
            assert L.dtype == dtype and L.shape == (n, n)
            L = L.get()
            np.testing.assert_array_equal(L, np.tril(L))
            np.testing.assert_allclose(L @ L.T, a, atol=tol * n)
            w, v = gp.linalg.eigh(gp.asarray(a))
            assert w.dtype == v.dtype == dtype
            w, v = w.get(), v.get()
            np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=tol, atol=tol)
            np.testing.assert_allclose(a @ v, v * w, atol=tol * n)
            _orthonormal_columns(v, tol * n)
            np.testing.assert_allclose(gp.linalg.eigvalsh(gp.asarray(a)).get(), w, rtol=tol, atol=tol)
        # each triangle read alone, as LAPACK reads it
        t = RNG.standard_normal((5, 5)).astype(dtype)
        for uplo in ("L", "U"):
            np.testing.assert_allclose(gp.linalg.eigvalsh(gp.asarray(t), UPLO=uplo).get(),
                                       np.linalg.eigvalsh(t, UPLO=uplo), rtol=tol, atol=tol)
        with pytest.raises(gp.linalg.LinAlgError, match="positive definite"):
            gp.linalg.cholesky(gp.asarray(np.array([[1.0, 2.0], [2.0, 1.0]], dtype)))
        with pytest.raises(ValueError, match="UPLO"):
            gp.linalg.eigh(gp.asarray(a), UPLO="X")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_qr_and_svd(dev, dtype):
    tol = 5e-4 if dtype == np.float32 else 1e-10
    with dev:
        for shape in ((6, 6), (9, 4), (4, 9), (1, 5), (120, 33)):
            a = RNG.standard_normal(shape).astype(dtype)
            k = min(shape)
            q, r = gp.linalg.qr(gp.asarray(a))
            assert q.shape == (shape[0], k) and r.shape == (k, shape[1]) and q.dtype == r.dtype == dtype
            q, r = q.get(), r.get()
            np.testing.assert_array_equal(r, np.triu(r))
            _orthonormal_columns(q, tol)
            np.testing.assert_allclose(q @ r, a, atol=tol * 10)
            np.testing.assert_allclose(np.abs(np.diag(r)), np.abs(np.diag(np.linalg.qr(a, mode="r"))), rtol=tol * 10)
            qc, rc = (x.get() for x in gp.linalg.qr(gp.asarray(a), mode="complete"))
            assert qc.shape == (shape[0], shape[0]) and rc.shape == shape
            _orthonormal_columns(qc, tol)
            np.testing.assert_allclose(qc @ rc, a, atol=tol * 10)
            np.testing.assert_allclose(gp.linalg.qr(gp.asarray(a), mode="r").get(), r, atol=tol)
            s_ref = np.linalg.svd(a, compute_uv=False)
            for full in (True, False):
                u, s, vh = (x.get() for x in gp.linalg.svd(gp.asarray(a), full_matrices=full))
                ref = [x.shape for x in np.linalg.svd(a, full_matrices=full)]
                assert [u.shape, s.shape, vh.shape] == ref and u.dtype == s.dtype == vh.dtype == dtype
                np.testing.assert_allclose(s, s_ref, rtol=tol, atol=tol)
                _orthonormal_columns(u, tol * 10)
                _orthonormal_columns(vh.T, tol * 10)
                np.testing.assert_allclose((u[:, :k] * s) @ vh[:k], a, atol=tol * 10)
            np.testing.assert_allclose(gp.linalg.svd(gp.asarray(a), compute_uv=False).get(), s_ref, rtol=tol, atol=tol)
        with pytest.raises(ValueError, match="mode"):
            gp.linalg.qr(gp.asarray(a), mode="raw")
        with pytest.raises(gp.linalg.LinAlgError, match="two-dimensional"):
            gp.linalg.svd(gp.zeros(3))


def test_stacks_norms_and_triangles(dev):
    with dev:
        s = RNG.standard_normal((2, 3, 5, 4))
        sv = gp.linalg.svd(gp.asarray(s), compute_uv=False)
        np.testing.assert_allclose(sv.get(), np.linalg.svd(s, compute_uv=False), rtol=1e-10)
        u, w, vh = gp.linalg.svd(gp.asarray(s), full_matrices=False)
        np.testing.assert_allclose(np.matmul(u.get() * w.get()[..., None, :], vh.get()), s, atol=1e-10)
        spd = np.matmul(s, np.swapaxes(s, -1, -2)) + np.eye(5)
        np.testing.assert_allclose(gp.linalg.cholesky(gp.asarray(spd)).get(), np.linalg.cholesky(spd), atol=1e-10)
        np.testing.assert_allclose(gp.linalg.eigvalsh(gp.asarray(spd)).get(), np.linalg.eigvalsh(spd), atol=1e-10)
        m = s[0, 0]
        for ord in (2, -2, "nuc"):
            assert gp.linalg.norm(gp.asarray(m), ord).get() == pytest.approx(np.linalg.norm(m, ord), rel=1e-12)
            np.testing.assert_allclose(gp.linalg.norm(gp.asarray(s), ord, axis=(1, 3), keepdims=True).get(),
                                       np.linalg.norm(s, ord, axis=(1, 3), keepdims=True), rtol=1e-12)
        for k in (-2, 0, 1, 7):
            np.testing.assert_array_equal(gp.tril(gp.asarray(s), k).get(), np.tril(s, k))
            np.testing.assert_array_equal(gp.triu(gp.asarray(m), k).get(), np.triu(m, k))
