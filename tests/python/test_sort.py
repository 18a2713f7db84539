"""sort, argsort, unique and median on every device, against NumPy's (argsort against its stable
kind, whose order of equal values is the one gpuport keeps)."""
import numpy as np
import pytest

import gpuport as gp

RNG = np.random.default_rng(7)


def _values(dtype, n):
    if np.dtype(dtype) == np.bool_:
        return RNG.integers(0, 2, n).astype(np.bool_)
    if np.dtype(dtype).kind == "f":
        x = (RNG.standard_normal(n) * 100).round(1).astype(dtype)  # rounded: many equal values
        x[::97] = np.nan
        x[1::89] = -np.inf
        x[2::83] = -0.0
        x[3::79] = 0.0
        return x
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint32, np.int64, np.uint64, np.int8,
                                   np.uint16, np.bool_])
def test_sort_and_argsort_1d(dev, dtype):
    with dev:
        for n in (0, 1, 4097, 50001):
            x = _values(dtype, n)
            np.testing.assert_array_equal(gp.sort(gp.asarray(x)).get(), np.sort(x))
            np.testing.assert_array_equal(gp.argsort(gp.asarray(x)).get(), np.argsort(x, kind="stable"))


def test_sort_along_axes(dev):
    with dev:
        x = RNG.integers(0, 40, (6, 700, 5)).astype(np.float32)
        g = gp.asarray(x)
        for axis in (-1, 0, 1, None):
            np.testing.assert_array_equal(gp.sort(g, axis=axis).get(), np.sort(x, axis=axis))
            np.testing.assert_array_equal(gp.argsort(g, axis=axis).get(), np.argsort(x, axis=axis, kind="stable"))
            np.testing.assert_array_equal(gp.median(g, axis=axis).get(), np.median(x, axis=axis))
        np.testing.assert_array_equal(gp.median(g, axis=1, keepdims=True).get(), np.median(x, axis=1, keepdims=True))
        y = gp.asarray(x[:, :, 0].T)  # a strided view, sorted in place
        y.sort()
        np.testing.assert_array_equal(y.get(), np.sort(x[:, :, 0].T))
        np.testing.assert_array_equal(np.sort(g).get(), np.sort(x))  # NumPy's function runs gpuport's
        with pytest.raises(NotImplementedError, match="order="):
            gp.sort(g, order="a")


def test_unique_and_median(dev):
    with dev:
        y = RNG.integers(-5, 30, 3000)
        got = gp.unique(gp.asarray(y), return_index=True, return_inverse=True, return_counts=True)
        for a, b in zip(got, np.unique(y, return_index=True, return_inverse=True, return_counts=True)):
            np.testing.assert_array_equal(a.get(), b)
        f = np.array([3, np.nan, 1, np.nan, 3, -0.0, 0.0], np.float32)
        np.testing.assert_array_equal(gp.unique(gp.asarray(f)).get(), np.unique(f))
        np.testing.assert_array_equal(gp.unique(gp.asarray(f), equal_nan=False).get(), np.unique(f, equal_nan=False))
        assert np.isnan(gp.median(gp.asarray(f)).get())
        assert gp.median(gp.asarray(np.arange(10))).get() == 4.5
        with pytest.raises(ValueError, match="empty"):
            gp.median(gp.zeros(0))


def test_searchsorted(dev):
    with dev:
        a = np.array([1.0, 2, 2, 3, np.inf, np.nan])
        v = np.array([[0, 2, 2.5], [3, np.inf, np.nan]])
        for side in ("left", "right"):
            np.testing.assert_array_equal(gp.searchsorted(gp.asarray(a), gp.asarray(v), side).get(),
                                          np.searchsorted(a, v, side))
        ints = np.sort(RNG.integers(0, 100, 1000))
        np.testing.assert_array_equal(gp.searchsorted(gp.asarray(ints), gp.asarray(ints), "right").get(),
                                      np.searchsorted(ints, ints, "right"))
        assert int(gp.searchsorted(gp.asarray(a), 2.0)) == 1
        with pytest.raises(ValueError, match="side"):
            gp.searchsorted(gp.asarray(a), 1.0, side="middle")


def test_choice_and_permutation(dev):
    with dev:
        r = gp.random.RandomState(11)
        p = np.array([0.1, 0.0, 0.2, 0.3, 0.4])
        c = r.choice(5, 200000, p=p).get()
        assert c.dtype == np.int64 and c.shape == (200000,)
        # each count within 5 standard deviations of its expectation; the zero-probability one never drawn
        counts = np.bincount(c, minlength=5)
        assert (np.abs(counts - 200000 * p) <= 5 * np.sqrt(200000 * p * (1 - p)) + 1e-9).all(), counts
        pool = np.arange(10) * 10
        drawn = r.choice(gp.asarray(pool), (3, 4)).get()
        assert drawn.shape == (3, 4) and np.isin(drawn, pool).all()
        np.testing.assert_array_equal(np.sort(r.choice(1000, 1000, replace=False).get()), np.arange(1000))
        np.testing.assert_array_equal(np.sort(r.permutation(gp.arange(50)).get()), np.arange(50))
        assert gp.random.RandomState(5).choice(7, 9).get().tolist() == gp.random.RandomState(5).choice(7, 9).get().tolist()
        with pytest.raises(ValueError, match="larger sample"):
            r.choice(3, 4, replace=False)
        with pytest.raises(ValueError, match="probabilities"):
            r.choice(3, p=[0.5, 0.6, -0.1])
