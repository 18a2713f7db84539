"""Boolean masks, nonzero, compress and the nan-skipping reductions on every device, each against
NumPy."""
import numpy as np
import pytest

import gpuport as gp


def test_mask_get_and_set(dev):
    with dev:
        rng = np.random.default_rng(1)
        for dtype in (np.float32, np.float64, np.int32, np.uint8, np.bool_, np.int64):
            h = (rng.random((37, 23)) * 100).astype(dtype)
            x = gp.asarray(h)
            m = h > h.mean() if dtype != np.bool_ else h
            gp.testing.assert_array_equal(x[gp.asarray(m)], h[m])
            gp.testing.assert_array_equal(x[m], h[m])                 # a NumPy mask too
            gp.testing.assert_array_equal(x.T[m.T], h.T[m.T])         # a strided view
            assert x[gp.zeros(h.shape, bool)].shape == (0,)
        h = rng.standard_normal((50, 40))
        x = gp.asarray(h)
        x[x < 0] = 0                                                  # the lesson's clip by mask
        h[h < 0] = 0
        gp.testing.assert_array_equal(x, h)
        v = np.arange(int((h > 1).sum()), dtype=np.float64)
        x[x > 1] = gp.asarray(v)                                      # one value each
        h[h > 1] = v
        gp.testing.assert_array_equal(x, h)
        sub = x[5:15, ::2]                                            # into a view, in place
        hsub = h[5:15, ::2]
        sub[sub > 0.5] = -1
        hsub[hsub > 0.5] = -1
        gp.testing.assert_array_equal(x, h)
        with pytest.raises(ValueError, match="cannot assign 3 input values to the"):
            x[x > -2] = np.arange(3.0)
        with pytest.raises(IndexError, match="the shapes must match"):
            x[gp.ones(50, bool)]


def test_nonzero_flatnonzero_compress(dev):
    with dev:
        h = np.random.default_rng(2).integers(0, 3, (6, 5, 4))
        for got, want in zip(gp.nonzero(gp.asarray(h)), np.nonzero(h)):
            gp.testing.assert_array_equal(got, want)
        gp.testing.assert_array_equal(gp.asarray(h).nonzero()[2], h.nonzero()[2])
        gp.testing.assert_array_equal(gp.flatnonzero(gp.asarray(h)), np.flatnonzero(h))
        a = np.arange(10.0)
        gp.testing.assert_array_equal(gp.compress(a % 3 == 0, gp.asarray(a)), np.compress(a % 3 == 0, a))
        gp.testing.assert_array_equal(gp.compress([True, False, True], gp.asarray(a)),
                                      np.compress([True, False, True], a))
        with pytest.raises(ValueError, match="0d arrays"):
            gp.nonzero(gp.asarray(np.float64(1)))


def test_nan_reductions(dev):
    with dev:
        h = np.random.default_rng(3).random((20, 30))
        h[h < 0.2] = np.nan
        h[4] = np.nan                                                  # a row of NaNs only
        x = gp.asarray(h)
        with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
            for name in ("nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanvar", "nanstd"):
                for axis in (None, 0, 1):
                    np.testing.assert_allclose(gp.asnumpy(getattr(gp, name)(x, axis=axis)),
                                               getattr(np, name)(h, axis=axis), rtol=1e-12, err_msg=name)
            np.testing.assert_allclose(gp.asnumpy(gp.nanstd(x, axis=1, ddof=1, keepdims=True)),
                                       np.nanstd(h, axis=1, ddof=1, keepdims=True), rtol=1e-12)
        gp.testing.assert_array_equal(gp.nansum(gp.arange(5)), 10)


def test_integer_array_indices(dev):
    with dev:
        h = np.arange(60.0).reshape(12, 5)
        x = gp.asarray(h)
        idx = np.array([3, -1, 0, 3, 11])
        gp.testing.assert_array_equal(x[gp.asarray(idx)], h[idx])
        gp.testing.assert_array_equal(x[[1, 2]], h[[1, 2]])
        gp.testing.assert_array_equal(x.T[np.array([[0, 4], [2, 2]])], h.T[np.array([[0, 4], [2, 2]])])
        gp.testing.assert_array_equal(gp.asarray(h.ravel())[gp.arange(0, 60, 7)], h.ravel()[::7])
        x[np.array([0, -2])] = -1.0
        h[np.array([0, -2])] = -1.0
        x[[5]] = gp.arange(5.0)
        h[[5]] = np.arange(5.0)
        gp.testing.assert_array_equal(x, h)
        with pytest.raises(IndexError, match="index 12 is out of bounds for axis 0 with size 12"):
            x[[0, 12]]
        with pytest.raises(IndexError, match="integer"):
            x[np.array([0.5])]


def test_histogram(dev):
    with dev:
        rng = np.random.default_rng(4)
        for h in (rng.standard_normal(10 ** 5).astype(np.float32), rng.standard_normal(10 ** 5),
                  rng.integers(-50, 50, 10 ** 5)):
            for kwargs in ({}, {"bins": 37}, {"bins": 8, "range": (-1.5, 1.5)}, {"bins": [-3, -1, 0, 0.5, 2, 9]}):
                got, edges = gp.histogram(gp.asarray(h), **kwargs)
                want, want_edges = np.histogram(h, **kwargs)
                gp.testing.assert_array_equal(got, want)
                gp.testing.assert_array_equal(edges, want_edges)
        edge_values = np.array([0.0, 0.1, 0.2, 0.30000000000000004, 1.0, 0.7, 1.0000001], np.float64)
        gp.testing.assert_array_equal(gp.histogram(gp.asarray(edge_values), 10, (0, 1))[0],
                                      np.histogram(edge_values, 10, (0, 1))[0])
        r = rng.random(1000)
        gp.testing.assert_allclose(gp.histogram(gp.asarray(r), 5, density=True)[0],
                                   np.histogram(r, 5, density=True)[0], rtol=1e-12)
        for w in (rng.random(1000), rng.random(1000).astype(np.float32), rng.integers(-5, 9, 1000).astype(np.int32)):
            for kwargs in ({"bins": 7}, {"bins": [0, 0.1, 0.5, 1], "density": True}):
                got, _ = gp.histogram(gp.asarray(r), weights=gp.asarray(w), **kwargs)
                want, _ = np.histogram(r, weights=w, **kwargs)
                assert got.dtype == want.dtype
                gp.testing.assert_allclose(got, want, rtol=1e-5)
