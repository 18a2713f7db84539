"""Convolutions on every device against NumPy's and SciPy's own: np.convolve and np.correlate
(called as NumPy's functions on gpuport arrays, and as gpuport's), SciPy's convolve2d and
correlate2d in each mode and boundary, with kernels of odd, even and larger-than-image shapes."""
import numpy as np
import pytest

import gpuport as gp

SHAPES = [((9, 11), (3, 3)), ((9, 11), (4, 2)), ((5, 6), (7, 8)), ((6, 6), (6, 6)), ((3, 4), (5, 5))]


@pytest.mark.parametrize("m, n", [(10, 3), (10, 4), (3, 10), (4, 10), (5, 5), (1, 1)])
def test_convolve_and_correlate_1d(dev, m, n):
    rng = np.random.default_rng(m * 10 + n)
    a, v = rng.standard_normal(m), rng.standard_normal(n)
    ga, gv = gp.asarray(a, device=dev), gp.asarray(v, device=dev)
    for mode in ("full", "same", "valid"):
        got = np.convolve(ga, gv, mode)  # NumPy's function: gpuport's runs, on the device
        assert isinstance(got, gp.ndarray) and got.device == dev
        np.testing.assert_allclose(got.get(), np.convolve(a, v, mode), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(gp.correlate(ga, gv, mode).get(), np.correlate(a, v, mode), rtol=1e-12,
                                   atol=1e-12)


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_convolve2d_and_correlate2d_as_scipy(dev, shapes):
    signal = pytest.importorskip("scipy.signal")
    from gpuport.scipy.signal import convolve2d, correlate2d
    rng = np.random.default_rng(3)
    a, k = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    ga, gk = gp.asarray(a, device=dev), gp.asarray(k, device=dev)
    for mode in ("full", "same", "valid"):
        for boundary in ("fill", "wrap", "symm"):
            for ours, theirs in ((convolve2d, signal.convolve2d), (correlate2d, signal.correlate2d)):
                try:
                    want = theirs(a, k, mode=mode, boundary=boundary, fillvalue=0.5)
                except ValueError:
                    with pytest.raises(ValueError, match="at least as large"):
                        ours(ga, gk, mode=mode, boundary=boundary, fillvalue=0.5)
                    continue
                got = ours(ga, gk, mode=mode, boundary=boundary, fillvalue=0.5)
                assert got.shape == want.shape and got.device == dev, (ours.__name__, mode, boundary)
                np.testing.assert_allclose(got.get(), want, rtol=1e-12, atol=1e-12)


def test_convolve2d_float32_image_and_refusals(dev):
    from gpuport.scipy.signal import convolve2d
    rng = np.random.default_rng(4)
    img, k = rng.random((64, 80), dtype=np.float32), rng.random((5, 5), dtype=np.float32)
    got = convolve2d(gp.asarray(img, device=dev), gp.asarray(k, device=dev), mode="same")
    assert got.dtype == np.float32
    want = np.zeros((68, 84))
    for p in range(5):
        for q in range(5):
            want[p:p + 64, q:q + 80] += k[p, q] * img.astype(np.float64)
    np.testing.assert_allclose(got.get(), want[2:66, 2:82], rtol=1e-5)
    with pytest.raises(ValueError, match="mode is 'full', 'same' or 'valid'"):
        convolve2d(gp.asarray(img, device=dev), gp.asarray(k, device=dev), mode="middle")
    with pytest.raises(ValueError, match="two 2-D arrays"):
        convolve2d(gp.asarray(img[0], device=dev), gp.asarray(k, device=dev))
