"""CuPy's cupy.testing assertions: NumPy's, taking gpuport arrays (copied to the host to compare)."""
import numpy as np

from ._array import asnumpy


def assert_allclose(actual, desired, rtol=1e-7, atol=0, err_msg="", verbose=True):
    np.testing.assert_allclose(asnumpy(actual), asnumpy(desired), rtol, atol, err_msg=err_msg, verbose=verbose)


def assert_array_equal(x, y, err_msg="", verbose=True, strict=False):
    np.testing.assert_array_equal(asnumpy(x), asnumpy(y), err_msg=err_msg, verbose=verbose, strict=strict)


def assert_array_almost_equal(x, y, decimal=6, err_msg="", verbose=True):
    np.testing.assert_array_almost_equal(asnumpy(x), asnumpy(y), decimal, err_msg, verbose)


def assert_array_less(x, y, err_msg="", verbose=True):
    np.testing.assert_array_less(asnumpy(x), asnumpy(y), err_msg, verbose)
