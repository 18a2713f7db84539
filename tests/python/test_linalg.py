"""gpuport.linalg's det, solve and inv on every device against NumPy's (LAPACK's), stacks and
singular matrices included."""
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
