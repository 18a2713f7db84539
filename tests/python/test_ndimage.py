"""gpuport.scipy.ndimage on every device against SciPy's: the Carpentries lesson's source finding
(a segmented image labelled into a float output, then each source's centre of mass and flux),
other structures and dimensions, and what is refused."""
import numpy as np
import pytest
import scipy.ndimage as nd

import gpuport as gp
from gpuport.scipy.ndimage import center_of_mass, label, sum_labels

RNG = np.random.default_rng(3)


def test_lesson_source_measurements(dev):
    with dev:
        data = RNG.random((512, 300))
        segmented = gp.where(gp.asarray(data) > 0.7, 1, 0)
        labeled = gp.empty(data.shape)  # the lesson's output: float64, as cp.empty makes it
        count = label(segmented, output=labeled)
        want, want_count = nd.label(np.where(data > 0.7, 1, 0))
        assert count == want_count
        np.testing.assert_array_equal(labeled.get(), want)
        index = gp.arange(1, count + 1)
        positions = center_of_mass(gp.asarray(data), labeled, index)
        np.testing.assert_allclose(np.array(positions), np.array(nd.center_of_mass(data, want, range(1, count + 1))))
        fluxes = sum_labels(gp.asarray(data), labeled, index)
        np.testing.assert_allclose(fluxes.get(), nd.sum_labels(data, want, range(1, count + 1)))
        np.testing.assert_allclose(np.sort(fluxes)[-10:].get(), np.sort(nd.sum_labels(data, want,
                                                                                        range(1, count + 1)))[-10:])


def test_structures_and_dimensions(dev):
    with dev:
        for shape, structure in (((1000,), None), ((64, 80), np.ones((3, 3))), ((12, 20, 30), None),
                                 ((12, 20, 30), np.ones((3, 3, 3)))):
            x = RNG.random(shape) > 0.6
            got, n = label(gp.asarray(x), structure=structure)
            want, m = nd.label(x, structure=structure)
            assert n == m and got.dtype == np.int32
            np.testing.assert_array_equal(got.get(), want)
        snake = np.zeros((9, 9), np.int8)  # one component the passes must follow around its bends
        snake[::2, :] = 1
        snake[1::4, -1] = snake[3::4, 0] = 1
        got, n = label(gp.asarray(snake))
        assert n == 1 and (got.get() == snake).all()
        img = RNG.random((40, 50))
        assert center_of_mass(gp.asarray(img)) == pytest.approx(nd.center_of_mass(img))
        assert float(sum_labels(gp.asarray(img))) == pytest.approx(nd.sum_labels(img))
        labels = np.array([[1, 1, 0, 2], [0, 3, 3, 0], [2, 0, 0, 5]])  # labels absent, or below 0: sums of 0
        small = np.arange(12.0).reshape(3, 4)
        np.testing.assert_array_equal(sum_labels(gp.asarray(small), gp.asarray(labels), gp.asarray([-1, 1, 2, 5, 4])).get(),
                                      nd.sum_labels(small, labels, [-1, 1, 2, 5, 4]))
        with pytest.raises(NotImplementedError, match="structure"):
            label(gp.asarray(img > 0.5), structure=np.array([[0, 1, 0], [1, 1, 0], [0, 0, 0]]))
        with pytest.raises(ValueError, match="labels must have the input's shape"):
            sum_labels(gp.asarray(img), gp.zeros(3), 1)
