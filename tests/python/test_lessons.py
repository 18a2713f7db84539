"""What the Carpentries GPU lesson's CuPy episode does for its image processing for astronomy,
written with gpuport under CuPy's names and checked against NumPy and SciPy on every device:
NumPy's functions on device arrays (np.median, np.std, np.where, x.compress) for kappa-sigma
clipping and segmentation, then gpuport.scipy.ndimage (as cupyx.scipy.ndimage) for connected
components into a float output, each source's centre of mass and flux, and profiler.benchmark.
The sky is made here: noise and Gaussian sources (the lesson reads a radio image from a file)."""
import numpy as np
import scipy.ndimage

import gpuport as gp
import gpuport.scipy.ndimage as gp_ndimage
from gpuport.profiler import benchmark


def _sky(n=512, sources=40):
    rng = np.random.default_rng(12)
    sky = rng.normal(0, 0.0133, (n, n))
    rows, cols = np.mgrid[0:n, 0:n]
    for r, c, peak in zip(rng.integers(10, n - 10, sources), rng.integers(10, n - 10, sources),
                          rng.uniform(0.1, 1, sources)):
        sky += peak * np.exp(-((rows - r) ** 2 + (cols - c) ** 2) / 8.0)
    return sky


def _background(pixels):
    """Pixels within three standard deviations of the median, until none is left out (either
    library's arrays: only NumPy's names are used)."""
    while True:
        centre, spread = np.median(pixels), np.std(pixels)
        kept = pixels.compress(pixels > centre - 3 * spread)
        kept = kept.compress(kept < centre + 3 * spread)
        if len(kept) == len(pixels):
            return pixels
        pixels = kept


def _segments(image):
    return np.where(image > 5 * np.std(_background(image.ravel())), 1, 0)


def _sources(xp, ndimage, image, segments):
    """Each source's centre and flux, as arrays on the host."""
    labels = xp.empty(image.shape)  # float64, as the lesson makes it
    count = ndimage.label(segments, output=labels)
    index = xp.arange(1, count + 1)
    centres = ndimage.center_of_mass(image, labels, index)
    fluxes = ndimage.sum_labels(image, labels, index)
    to_host = gp.asnumpy if xp is gp else np.asarray
    return np.array(centres), to_host(fluxes)


def test_image_processing_for_astronomy(dev):
    sky = _sky()
    with dev:
        on_device = gp.asarray(sky)
        np.testing.assert_array_equal(np.sort(gp.asnumpy(_background(on_device.ravel()))),
                                      np.sort(_background(sky.ravel())))
        segments = _segments(on_device)
        assert isinstance(segments, gp.ndarray)
        np.testing.assert_array_equal(gp.asnumpy(segments), _segments(sky))
        want = _sources(np, scipy.ndimage, sky, _segments(sky))
        got = _sources(gp, gp_ndimage, on_device, segments)
        assert len(want[1]) > 20
        np.testing.assert_allclose(got[0], want[0])
        np.testing.assert_allclose(got[1], want[1])
        timing = benchmark(_sources, (gp, gp_ndimage, on_device, segments), n_repeat=2, n_warmup=1)
        assert np.amin(timing.gpu_times) > 0
