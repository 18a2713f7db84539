"""Every primitive from Python against NumPy on random data: sizes 0, 1, 7, 1000 and 2^20, both
precisions (and the integer types where the primitive takes them), on every device."""
import numpy as np
import pytest

import gpuport as gp

SIZES = [0, 1, 7, 1000, 1 << 20]
FLOATS = [np.float32, np.float64]
INTS = [np.int32, np.uint32, np.int64, np.uint64]
EPS = {np.dtype(np.float32): np.finfo(np.float32).eps, np.dtype(np.float64): np.finfo(np.float64).eps}


def need(dev, dtype):
    if np.dtype(dtype) == np.float64 and not dev.info["fp64"]:
        pytest.skip("%s has no double precision" % dev.spec)


def data(n, dtype, seed, lo=-4.0, hi=4.0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.uniform(lo, hi, n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), n, dtype=dtype, endpoint=True)


def close(got, want, dtype, ulps=4):
    """Within ulps units of the type's precision of the reference (computed in double)."""
    want = np.asarray(want, np.float64)
    tol = ulps * EPS[np.dtype(dtype)] * np.maximum(np.abs(want), np.finfo(dtype).tiny)
    bad = ~(np.abs(np.asarray(got, np.float64) - want) <= tol) & ~(np.isnan(got) & np.isnan(want))
    assert not bad.any(), "first mismatch at %d: %r, expected %r" % (np.argmax(bad), got[bad][0], want[bad][0])


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_round_trip_and_arrays(dev, n, dtype):
    need(dev, dtype)
    h = data(n, dtype, 1)
    a = gp.asarray(h, device=dev)
    assert (a.shape, a.dtype, a.size, a.device) == ((n,), np.dtype(dtype), n, dev)
    assert np.array_equal(a.get(), h) and np.array_equal(gp.asnumpy(a), h)
    with pytest.raises(TypeError, match="gp.asnumpy"):  # as CuPy: no copy from the device unseen
        np.asarray(a)
    assert np.array_equal(a.copy().get(), h)
    assert np.array_equal(gp.full(n, 7, dtype, device=dev).get(), np.full(n, 7, dtype))
    if n == 1000:
        assert a.reshape(10, -1).get().shape == (10, 100) and np.array_equal(a.reshape(10, 100).get().ravel(), h)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_maps(dev, n, dtype):
    need(dev, dtype)
    x64, y64 = data(n, dtype, 2).astype(np.float64), data(n, dtype, 3, 0.5, 3).astype(np.float64)
    x, y = gp.asarray(x64.astype(dtype), device=dev), gp.asarray(y64.astype(dtype), device=dev)
    close(gp.sin(x).get(), np.sin(x64), dtype)
    close(gp.cos(x).get(), np.cos(x64), dtype)
    close(gp.exp(x).get(), np.exp(x64), dtype)
    close(gp.log(y).get(), np.log(y64), dtype, ulps=4)
    close(gp.sqrt(y).get(), np.sqrt(y64), dtype, ulps=3)
    close(gp.power(y, x).get(), np.power(y64, x64), dtype, ulps=16)
    close((x + y).get(), x64 + y64, dtype, ulps=1)
    close((x - y).get(), x64 - y64, dtype, ulps=1)
    close((x * y).get(), x64 * y64, dtype, ulps=1)
    close((x / y).get(), x64 / y64, dtype, ulps=3)
    close((x * 2.5 + 1).get(), (x64 * np.float64(dtype(2.5))).astype(dtype).astype(np.float64) + 1, dtype, ulps=1)
    close((1 - x).get(), 1 - x64, dtype, ulps=1)
    close((3 / y).get(), 3 / y64, dtype, ulps=3)
    assert np.array_equal(gp.minimum(x, y).get(), np.minimum(x.get(), y.get()))
    assert np.array_equal(gp.maximum(x, y).get(), np.maximum(x.get(), y.get()))
    assert np.array_equal(abs(x).get(), np.abs(x.get())) and np.array_equal((-x).get(), -x.get())


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", INTS)
def test_integer_maps(dev, n, dtype):
    x, y = data(n, dtype, 4), data(n, dtype, 5)
    gx, gy = gp.asarray(x, device=dev), gp.asarray(y, device=dev)
    with np.errstate(over="ignore"):
        assert np.array_equal((gx + gy).get(), x + y) and np.array_equal((gx - gy).get(), x - y)
        assert np.array_equal((gx * gy).get(), x * y)
    assert np.array_equal(gp.minimum(gx, gy).get(), np.minimum(x, y))
    with np.errstate(divide="ignore", invalid="ignore"):
        assert np.array_equal((gx / gy).get(), x / y, equal_nan=True)  # NumPy's true division: float64
        assert np.array_equal((gx // gy).get(), x // y) and np.array_equal((gx % gy).get(), x % y)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_reductions(dev, n, dtype):
    need(dev, dtype)
    x = data(n, dtype, 6)
    a = gp.asarray(x, device=dev)
    if np.dtype(dtype).kind == "f":
        # docs/primitives.md: a sum of n terms is within (n - 1) u sum |x| of the exact one.
        bound = max(n - 1, 0) * EPS[np.dtype(dtype)] / 2 * np.abs(x.astype(np.float64)).sum()
        assert abs(float(a.sum()) - x.astype(np.float64).sum()) <= bound
    else:
        with np.errstate(over="ignore"):
            assert a.sum() == x.sum(dtype=dtype)
    if n:
        assert a.min() == x.min() and a.max() == x.max()
        assert a.argmin() == int(np.argmin(x)) and a.argmax() == int(np.argmax(x))
    else:
        with pytest.raises(ValueError):
            a.argmax()
    small = gp.asarray(np.full(min(n, 20), 2, dtype), device=dev)
    assert small.prod() == 2 ** min(n, 20)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_scans(dev, n, dtype):
    need(dev, dtype)
    # -1, 0 and 1 keep every float prefix exact (as the C suite's exact checks do).
    x = np.random.default_rng(7).integers(-1, 2, n).astype(dtype) if np.dtype(dtype).kind != "u" else \
        np.random.default_rng(7).integers(0, 3, n).astype(dtype)
    a = gp.asarray(x, device=dev)
    with np.errstate(over="ignore"):
        want = np.cumsum(x, dtype=dtype)
    assert np.array_equal(gp.cumsum(a).get(), want)
    assert np.array_equal(gp.cumsum(a, exclusive=True).get(), np.concatenate([[0], want[:-1]]).astype(dtype)[:n])
    assert np.array_equal(gp.cummax(a).get(), np.maximum.accumulate(x))
    assert np.array_equal(gp.cummin(a).get(), np.minimum.accumulate(x))


@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul(dev, dtype):
    need(dev, dtype)
    for m, k, n in [(1, 1, 1), (7, 5, 3), (64, 100, 33), (256, 256, 256)]:
        a, b = data((m * k), dtype, 8).reshape(m, k), data((k * n), dtype, 9).reshape(k, n)
        ga, gb = gp.asarray(a, device=dev), gp.asarray(b, device=dev)
        want = a.astype(np.float64) @ b.astype(np.float64)
        bound = k * EPS[np.dtype(dtype)] * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)) + 1e-300
        for impl in ["gpuport", "auto"]:
            got = gp.matmul(ga, gb, impl=impl).get()
            assert (np.abs(got - want) <= bound).all(), impl
        assert (np.abs((ga @ gb).get() - want) <= bound).all()


@pytest.mark.parametrize("dtype", FLOATS)
def test_stencils(dev, dtype):
    need(dev, dtype)
    u = data(12 * 9, dtype, 10).reshape(12, 9)
    w = [0.1, 0.2, 0.3, 0.15, 0.25]
    got = gp.stencil(gp.asarray(u, device=dev), w, steps=3).get()
    want = u.astype(np.float64)
    for _ in range(3):
        nxt = want.copy()  # fixed: the edge cells keep their values
        nxt[1:-1, 1:-1] = (w[0] * want[1:-1, 1:-1] + w[1] * want[1:-1, :-2] + w[2] * want[1:-1, 2:] +
                           w[3] * want[:-2, 1:-1] + w[4] * want[2:, 1:-1])
        want = nxt
    assert np.allclose(got, want, rtol=50 * EPS[np.dtype(dtype)], atol=50 * EPS[np.dtype(dtype)])
    cube = data(6 * 5 * 4, dtype, 11).reshape(4, 5, 6)
    got = gp.stencil(gp.asarray(cube, device=dev), [1, 0, 0, 0, 0, 0, 0], boundary="zero").get()
    assert np.array_equal(got, cube)  # the centre weight alone is the identity, boundaries aside
