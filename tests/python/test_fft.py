"""gpuport.fft on every device against NumPy's (pocketfft): fft and ifft of lengths of every
radix gpuport's own FFT has and of others (its Bluestein path), every norm, n cutting and
padding, any axis, rfft and irfft of even and odd lengths, the 2-D and n-D forms, the frequency
helpers, and a convolution computed through the transform against a direct one."""
import numpy as np
import pytest

import gpuport as gp

RNG = np.random.default_rng(33)
LENGTHS = (1, 2, 8, 16, 128, 4096, 3, 6, 7, 100, 1000, 1025, 11, 2 * 3 * 5 * 7 * 4, 3 ** 7)


def _close(got, want, dtype):
    assert isinstance(got, gp.ndarray) and got.dtype == dtype
    g = gp.asnumpy(got)
    scale = max(np.abs(want).max(), 1)
    np.testing.assert_allclose(g, want, rtol=0, atol=(3e-6 if dtype in (np.complex64, np.float32) else 1e-12) * scale
                               * np.log2(max(want.shape[-1], 2)))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_fft_ifft_lengths(dev, dtype):
    with dev:
        for n in LENGTHS:
            a = (RNG.standard_normal((3, n)) + 1j * RNG.standard_normal((3, n))).astype(dtype)
            x = gp.asarray(a)
            _close(gp.fft.fft(x), np.fft.fft(a.astype(np.complex128)), dtype)
            _close(gp.fft.ifft(x), np.fft.ifft(a.astype(np.complex128)), dtype)


def test_norms_sizes_axes(dev):
    with dev:
        a = RNG.standard_normal((6, 10, 5))
        x = gp.asarray(a)
        for norm in (None, "backward", "ortho", "forward"):
            _close(gp.fft.fft(x, norm=norm), np.fft.fft(a, norm=norm), np.complex128)
            _close(gp.fft.ifft(x, norm=norm), np.fft.ifft(a, norm=norm), np.complex128)
        for n, axis in ((4, 1), (16, 1), (9, 0), (5, -1), (3, 0)):
            _close(gp.fft.fft(x, n, axis), np.fft.fft(a, n, axis), np.complex128)
        _close(gp.fft.fft(x.astype(np.float32), axis=1), np.fft.fft(a, axis=1), np.complex64)
        ints = RNG.integers(-9, 9, 12)
        _close(gp.fft.fft(gp.asarray(ints)), np.fft.fft(ints), np.complex128)
        with pytest.raises(ValueError, match="norm"):
            gp.fft.fft(x, norm="both")
        with pytest.raises(ValueError, match="data points"):
            gp.fft.fft(x, 0)


def test_real_transforms(dev):
    with dev:
        for n in (1, 2, 8, 9, 64, 100, 513):
            a = RNG.standard_normal((4, n))
            x = gp.asarray(a)
            _close(gp.fft.rfft(x), np.fft.rfft(a), np.complex128)
            _close(gp.fft.rfft(x.astype(np.float32)), np.fft.rfft(a), np.complex64)
            spectrum = np.fft.rfft(a)
            s = gp.asarray(spectrum)
            if n == 1:  # one frequency: irfft's default of 2 (m - 1) points is none
                with pytest.raises(ValueError, match="data points"):
                    gp.fft.irfft(s)
            else:
                _close(gp.fft.irfft(s), np.fft.irfft(spectrum), np.float64)
            _close(gp.fft.irfft(s, n), np.fft.irfft(spectrum, n), np.float64)
            _close(gp.fft.irfft(s.astype(np.complex64), n), np.fft.irfft(spectrum, n), np.float32)
        a = RNG.standard_normal((6, 8, 5))
        x = gp.asarray(a)
        _close(gp.fft.rfft(x, 6, axis=0), np.fft.rfft(a, 6, axis=0), np.complex128)
        _close(gp.fft.rfft2(x), np.fft.rfft2(a), np.complex128)
        _close(gp.fft.irfft2(gp.asarray(np.fft.rfft2(a))), np.fft.irfft2(np.fft.rfft2(a)), np.float64)
        _close(gp.fft.irfftn(gp.asarray(np.fft.rfftn(a)), a.shape), a, np.float64)
        with pytest.raises(TypeError, match="real"):
            gp.fft.rfft(x.astype(np.complex64))
        none = np.zeros((0, 6))  # no rows: empty results of NumPy's shapes
        for f in (gp.fft.fft, gp.fft.rfft, gp.fft.irfft):
            got = f(gp.asarray(none))
            assert got.shape == getattr(np.fft, f.__name__)(none).shape


def test_two_and_n_dimensions(dev):
    with dev:
        a = RNG.standard_normal((3, 12, 20)) + 1j * RNG.standard_normal((3, 12, 20))
        x = gp.asarray(a)
        _close(gp.fft.fft2(x), np.fft.fft2(a), np.complex128)
        _close(gp.fft.ifft2(x), np.fft.ifft2(a), np.complex128)
        _close(gp.fft.fftn(x), np.fft.fftn(a), np.complex128)
        _close(gp.fft.ifftn(x, axes=(0, 2)), np.fft.ifftn(a, axes=(0, 2)), np.complex128)
        _close(gp.fft.fft2(x, s=(8, 32)), np.fft.fft2(a, s=(8, 32)), np.complex128)
        for n, d in ((8, 1.0), (9, 0.1)):
            np.testing.assert_allclose(gp.asnumpy(gp.fft.fftfreq(n, d)), np.fft.fftfreq(n, d))
            np.testing.assert_allclose(gp.asnumpy(gp.fft.rfftfreq(n, d)), np.fft.rfftfreq(n, d))
        for axes in (None, 0, (1, 2)):
            np.testing.assert_array_equal(gp.asnumpy(gp.fft.fftshift(x, axes)), np.fft.fftshift(a, axes))
            np.testing.assert_array_equal(gp.asnumpy(gp.fft.ifftshift(x, axes)), np.fft.ifftshift(a, axes))
        assert isinstance(np.fft.fft(x), gp.ndarray)  # NumPy's function on a device array runs gpuport's


def test_convolution_by_transform(dev):
    """What lessons compute with an FFT: a circular convolution of an image with a kernel, as the
    inverse transform of the transforms' product, against the sum written out."""
    image, kernel = RNG.standard_normal((32, 48)), np.zeros((32, 48))
    kernel[:3, :3] = RNG.standard_normal((3, 3))
    want = np.zeros_like(image)
    for i in range(3):
        for j in range(3):
            want += kernel[i, j] * np.roll(image, (i, j), (0, 1))
    with dev:
        got = gp.fft.ifft2(gp.fft.fft2(gp.asarray(image)) * gp.fft.fft2(gp.asarray(kernel))).real
        np.testing.assert_allclose(gp.asnumpy(got), want, atol=1e-10)
        assert "FFT" in gp.fft.library()
