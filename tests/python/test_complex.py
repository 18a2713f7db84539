"""Complex arrays on every device against NumPy: making and reading them, the ufuncs gpuport
computes for them (with NumPy's result types, real and complex scalars mixed in), real and imag
as views that write through, sums and means, conversions both ways and the refusals."""
import warnings

import numpy as np
import pytest

import gpuport as gp

RNG = np.random.default_rng(21)


def _pair(shape, dtype):
    a = (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    return a, gp.asarray(a)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_ufuncs(dev, dtype):
    tol = dict(rtol=2e-6, atol=2e-6) if dtype == np.complex64 else dict(rtol=1e-13, atol=1e-13)
    with dev:
        a, x = _pair((4, 9), dtype)
        b, y = _pair((9,), dtype)
        r = RNG.standard_normal(9).astype(np.float32)
        z = gp.asarray(r)
        cases = [(lambda p, q, s: p + q), (lambda p, q, s: p - s), (lambda p, q, s: s * p), (lambda p, q, s: p / q),
                 (lambda p, q, s: s / p), (lambda p, q, s: -p), (lambda p, q, s: p * 1j + 2), (lambda p, q, s: p ** 2),
                 (lambda p, q, s: p * (0.5 - 2j)), (lambda p, q, s: np.conj(p)), (lambda p, q, s: np.exp(p)),
                 (lambda p, q, s: np.log(p)), (lambda p, q, s: np.sqrt(p)), (lambda p, q, s: np.square(q)),
                 (lambda p, q, s: np.reciprocal(q)), (lambda p, q, s: np.power(p, q))]
        for f in cases:
            want, got = f(a, b, r), f(x, y, z)
            assert got.dtype == want.dtype
            np.testing.assert_allclose(gp.asnumpy(got), want, **tol)
        for f in (np.abs, np.angle, np.real, np.imag):
            got = f(x)
            assert isinstance(got, gp.ndarray) and got.dtype == f(a).dtype
            np.testing.assert_allclose(gp.asnumpy(got), f(a), **tol)
        np.testing.assert_array_equal(gp.asnumpy(x == x[0]), a == a[0])
        np.testing.assert_array_equal(gp.asnumpy(x != x[0]), a != a[0])
        special = np.array([1 + 1j, 0, np.nan, complex(np.inf, 1), complex(1, -np.inf)], dtype)
        s = gp.asarray(special)
        for f in (np.isnan, np.isinf, np.isfinite):
            np.testing.assert_array_equal(gp.asnumpy(f(s)), f(special))
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(gp.asnumpy(s / 0), special / dtype(0))
        with pytest.raises(TypeError, match="complex"):
            gp.less(x, x)


def test_parts_reductions_and_conversions(dev):
    with dev:
        a, x = _pair((5, 6), np.complex64)
        np.testing.assert_array_equal(gp.asnumpy(x.real), a.real)
        np.testing.assert_array_equal(gp.asnumpy(x[1:, ::2].imag), a[1:, ::2].imag)
        x.imag[0] = 7  # views write through, as NumPy's
        a.imag[0] = 7
        x.real = x.real * 2
        a.real = a.real * 2
        np.testing.assert_array_equal(gp.asnumpy(x), a)
        for axis in (None, 0, 1):
            np.testing.assert_allclose(gp.asnumpy(x.sum(axis)), a.sum(axis), rtol=1e-5)
            np.testing.assert_allclose(gp.asnumpy(x.mean(axis)), a.mean(axis), rtol=1e-5)
        assert x.sum().dtype == np.complex64 and bool(x.any()) and not bool((x * 0).any())
        np.testing.assert_allclose(float(gp.linalg.norm(x)), np.linalg.norm(a), rtol=1e-5)
        r = RNG.integers(-5, 5, 8)
        np.testing.assert_array_equal(gp.asnumpy(gp.asarray(r).astype(np.complex128)), r.astype(np.complex128))
        with pytest.warns(getattr(np, "exceptions", np).ComplexWarning):
            got = x.astype(np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.testing.assert_array_equal(gp.asnumpy(got), a.astype(np.float32))
        np.testing.assert_array_equal(gp.asnumpy(x.astype(np.complex128)), a.astype(np.complex128))
        f = gp.zeros(3, np.float32)
        with pytest.raises(TypeError):
            f[...] = 1j
        c = gp.zeros(3, gp.complex64)
        c[1] = 2 - 1j
        np.testing.assert_array_equal(gp.asnumpy(c), [0, 2 - 1j, 0])
        with pytest.raises(TypeError, match="complex"):
            x.max()
        assert np.iscomplexobj(x) and not np.iscomplexobj(x.real)


def test_products_indexing_and_statistics(dev):
    with dev:
        a, x = _pair((5, 7), np.complex64)
        b, y = _pair((7, 3), np.complex64)
        r = RNG.standard_normal((7, 3)).astype(np.float32)
        tol = dict(rtol=1e-5, atol=1e-5)
        for got, want in ((x @ y, a @ b), (x @ gp.asarray(r), a @ r), (gp.asarray(r.T) @ x.T, r.T @ a.T),
                          (gp.dot(x[0], x[1]), np.dot(a[0], a[1])), (gp.vdot(x[0], x[1]), np.vdot(a[0], a[1])),
                          (gp.var(x, axis=0), np.var(a, axis=0)), (gp.std(x), np.std(a))):
            assert got.dtype == want.dtype
            np.testing.assert_allclose(gp.asnumpy(got), want, **tol)
        np.testing.assert_array_equal(gp.asnumpy(x[np.array([4, 0, 2])]), a[[4, 0, 2]])
        np.testing.assert_array_equal(gp.asnumpy(x[x.real > 0]), a[a.real > 0])
        x[x.imag > 0] = 1j
        a[a.imag > 0] = 1j
        np.testing.assert_array_equal(gp.asnumpy(x), a)
        np.testing.assert_array_equal(gp.asnumpy(gp.concatenate([x, x[:2]])), np.concatenate([a, a[:2]]))
        np.testing.assert_array_equal(gp.asnumpy(gp.arange(4, dtype=np.complex128)), np.arange(4, dtype=np.complex128))
        with pytest.raises(TypeError, match="complex64"):
            gp.sort(x)
        with pytest.raises(TypeError, match="complex types are not supported"):
            gp.ElementwiseKernel("T a", "T b", "b = a * 2", "twice")(x)
