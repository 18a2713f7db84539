"""The NumPy surface of gpuport arrays against NumPy itself, on every device: making arrays, views
and indexing, slice assignment, broadcasting operators and ufuncs with NumPy's result dtypes,
reductions with axis and keepdims, products, norms, random numbers, devices and the errors."""
import threading

import numpy as np
import pytest

import gpuport as gp

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float32,
          np.float64]
NUMERIC = [d for d in DTYPES if d is not np.bool_]


def need(dev, *dtypes):
    if any(np.dtype(d) == np.float64 for d in dtypes) and not dev.info["fp64"]:
        pytest.skip("%s has no double precision" % dev.spec)


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "f":
        return rng.uniform(-8, 8, shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True).astype(dtype)


def same(got, want, exact=None, ulps=4):
    """got (a gpuport array) equals NumPy's want in shape, dtype and value (floats to their
    precision, NaNs in the same places)."""
    assert isinstance(got, gp.Array), type(got)
    host = gp.asnumpy(got)
    want = np.asarray(want)
    assert host.shape == want.shape, (host.shape, want.shape)
    assert host.dtype == want.dtype, (host.dtype, want.dtype)
    if want.dtype.kind == "f" and not exact:
        eps = np.finfo(want.dtype).eps
        scale = np.abs(want[np.isfinite(want)]).max(initial=0)
        np.testing.assert_allclose(host, want, rtol=ulps * eps, atol=ulps * eps * scale, equal_nan=True)
    else:
        np.testing.assert_array_equal(host, want)


# ---- making arrays ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trips_and_fills(dev, dtype):
    need(dev, dtype)
    h = sample((3, 4), dtype)
    with gp.Device(dev):
        same(gp.array(h), h)
        same(gp.asarray(h), h)
        same(gp.zeros((2, 3), dtype), np.zeros((2, 3), dtype))
        same(gp.ones(5, dtype), np.ones(5, dtype))
        same(gp.full((2, 2), 1, dtype), np.full((2, 2), 1, dtype))
        same(gp.zeros_like(gp.asarray(h)), np.zeros_like(h))
        same(gp.ones_like(h), np.ones_like(h))
        same(gp.full_like(h, 3), np.full_like(h, 3))
        assert gp.empty_like(h).shape == h.shape and gp.empty((0, 3), dtype).shape == (0, 3)
        same(gp.asarray(h).copy(), h)
        same(gp.asarray(np.array(h[0, 0])), np.array(h[0, 0]))  # 0-d
    assert np.array_equal(gp.asnumpy(gp.asarray(h, device=dev)), h)


def test_default_dtypes_follow_numpy(dev):
    need(dev, np.float64)
    with gp.Device(dev):
        for got, want in [(gp.zeros(3), np.zeros(3)), (gp.ones(2), np.ones(2)), (gp.arange(5), np.arange(5)),
                          (gp.arange(0.5, 3), np.arange(0.5, 3)), (gp.linspace(0, 1, 5), np.linspace(0, 1, 5)),
                          (gp.eye(3), np.eye(3)), (gp.full(2, 7), np.full(2, 7)), (gp.full(2, 1.5), np.full(2, 1.5)),
                          (gp.asarray([1, 2]), np.asarray([1, 2])), (gp.asarray([True]), np.asarray([True]))]:
            same(got, want)


@pytest.mark.parametrize("args", [(10,), (2, 11), (2, 11, 3), (10, 0, -2), (5, 5), (-3, 4), (0, 1, 0.1),
                                  (1.5, -2, -0.25)])
def test_arange(dev, args):
    need(dev, np.float64)
    with gp.Device(dev):
        same(gp.arange(*args), np.arange(*args))
        for dtype in (np.int32, np.float32, np.uint8):
            if dtype is np.uint8 and min(np.arange(*args), default=0) < 0:
                continue
            same(gp.arange(*args, dtype=dtype), np.arange(*args, dtype=dtype))


@pytest.mark.parametrize("num,endpoint", [(50, True), (1, True), (0, True), (7, False), (2, False)])
def test_linspace_and_eye(dev, num, endpoint):
    need(dev, np.float64)
    with gp.Device(dev):
        same(gp.linspace(-1, 3, num, endpoint=endpoint), np.linspace(-1, 3, num, endpoint=endpoint))
        same(gp.linspace(0, 1, num, endpoint=endpoint, dtype=np.float32),
             np.linspace(0, 1, num, endpoint=endpoint, dtype=np.float32))
        g, step = gp.linspace(2, 4, 5, retstep=True)
        assert step == np.linspace(2, 4, 5, retstep=True)[1]
        for n, m, k in [(3, None, 0), (2, 4, 1), (4, 3, -2), (0, 0, 0), (3, 3, 5)]:
            same(gp.eye(n, m, k), np.eye(n, m, k))
        same(gp.eye(3, dtype=np.int8), np.eye(3, dtype=np.int8))


@pytest.mark.parametrize("src", DTYPES)
def test_astype(dev, src):
    need(dev, src, np.float64)
    h = sample((2, 5), src)
    g = gp.asarray(h, device=dev)
    for dst in DTYPES:
        if np.dtype(src).kind == "f" and np.dtype(dst).kind in "iu":
            h2 = np.trunc(h).clip(0 if np.dtype(dst).kind == "u" else -100, 100)  # C and NumPy agree in range
            same(gp.asarray(h2.astype(src), device=dev).astype(dst), h2.astype(src).astype(dst))
            continue
        with np.errstate(over="ignore"):
            same(g.astype(dst), h.astype(dst))
    assert g.astype(src, copy=False) is g


# ---- views and indexing ---------------------------------------------------------------------------

KEYS = [0, -1, (1, 2), (-1, -3), slice(None), slice(1, None), slice(None, None, 2), slice(None, None, -1),
        slice(-2, None, -2), slice(5, 1, -1), slice(10, 20), (Ellipsis, 1), (1, Ellipsis), (None, 0),
        (slice(None), None, 1), (slice(1, 3), slice(None, None, -2)), (Ellipsis,), ()]


def test_basic_indexing_matches_numpy(dev):
    h = np.arange(4 * 6, dtype=np.int32).reshape(4, 6)
    g = gp.asarray(h, device=dev)
    for key in KEYS:
        same(g[key], h[key])
        same(g[key].copy(), h[key].copy())
    same(g.T, h.T)
    same(g.T[::2, 1:], h.T[::2, 1:])
    same(g[::-1].T[1:3], h[::-1].T[1:3])
    same(g.reshape(2, 12)[:, ::5], h.reshape(2, 12)[:, ::5])
    same(g.transpose(1, 0), h.transpose(1, 0))
    same(g[None, :, :, None].squeeze(), h)
    same(g.ravel(), h.ravel())
    same(g.T.ravel(), h.T.ravel())  # a copy: the view is not contiguous
    same(g.T.reshape(3, 8), h.T.reshape(3, 8))
    same(g.flatten(), h.flatten())
    same(g[1:3].reshape(-1), h[1:3].reshape(-1))
    assert g.strides == h.strides and g.T.strides == h.T.strides and g[::-2].strides == h[::-2].strides
    x = g[2, 3]
    assert x.ndim == 0 and int(x) == h[2, 3] and float(x) == h[2, 3] and x.item() == h[2, 3]
    assert len(g) == 4 and [int(r.sum()) for r in g] == [int(r.sum()) for r in h]
    assert g.tolist() == h.tolist()


def test_views_share_the_buffer(dev):
    h = np.zeros((4, 5), np.float32)
    g = gp.asarray(h, device=dev)
    v = g[1:3, ::2]
    v += 1
    h[1:3, ::2] += 1
    same(g, h)
    t = g.T
    t[0] = 7
    h.T[0] = 7
    same(g, h)
    r = g.reshape(20)
    r[::3] = -1
    h.reshape(20)[::3] = -1
    same(g, h)


def test_slice_assignment(dev):
    h = np.zeros((5, 6), np.float32)
    g = gp.asarray(h, device=dev)
    for key, value in [((slice(1, -1), slice(1, -1)), 2.5), (0, np.arange(6)), ((slice(None), 1), 9),
                       ((slice(None, None, -2), slice(None, None, 3)), np.array([[1, 2]])),
                       ((Ellipsis, -1), np.arange(5, dtype=np.int64)), ((slice(2, 4),), [[3.0], [4.0]]),
                       ((slice(3, 3),), 1.0)]:
        g[key] = value
        h[key] = value
        same(g, h)
    g[:, :] = gp.asarray(h[::-1], device=dev)  # from another gpuport array, broadcast
    h[:, :] = h[::-1].copy()
    same(g, h)
    g[1:] = g[:-1]  # overlapping source and destination: NumPy's answer
    h[1:] = h[:-1]
    same(g, h)
    g[0] = g[0, 0]  # a 0-d gpuport array
    h[0] = h[0, 0]
    same(g, h)
    u = gp.zeros(256, np.uint8, device=dev)
    u[:] = np.arange(256, dtype=np.uint8)
    same(u, np.arange(256, dtype=np.uint8))
    i = gp.zeros(4, np.int32, device=dev)
    i[:] = 2.7  # NumPy truncates
    same(i, np.full(4, 2, np.int32))
    with pytest.raises(ValueError, match="broadcast"):
        g[0] = np.arange(5)


def test_indexing_errors(dev):
    g = gp.zeros((3, 4), np.float32, device=dev)
    for key, err in [(3, IndexError), ((0, -5), IndexError), ((0, 0, 0), IndexError), ((..., ...), IndexError),
                     (gp.full(3, 5, np.int32, device=dev), IndexError), (np.array([True, False, True]), IndexError),
                     (1.5, IndexError)]:
        with pytest.raises(err):
            g[key]
    with pytest.raises(TypeError):
        len(g[0, 0])
    with pytest.raises(ValueError, match="ambiguous"):
        bool(g)
    with pytest.raises(ValueError):
        g.reshape(5, 3)
    with pytest.raises(ValueError):
        g.reshape(-1, -1)


# ---- element-wise work ----------------------------------------------------------------------------

BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power", "minimum", "maximum",
          "less", "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and", "logical_or",
          "logical_xor", "left_shift", "right_shift"]
SHAPES = [((3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3)), ((0, 4), (4,)), ((2, 1, 3), (5, 1)), ((5,), ())]


def _binary_inputs(dtype, name, sa, sb):
    a, b = sample(sa, dtype, 1), sample(sb, dtype, 2)
    if name in ("floor_divide", "remainder", "true_divide") and np.dtype(dtype).kind in "iub":
        b = np.where(b == 0, 1, b).astype(dtype)  # NumPy warns, C would trap: both give 0 here
    if name in ("left_shift", "right_shift") and np.dtype(dtype).kind in "iu":
        a, b = np.abs(a).astype(dtype), (np.abs(b) % 7).astype(dtype)  # C leaves other counts undefined
    if name == "power":
        a = (np.abs(a) % 4).astype(dtype) if np.dtype(dtype).kind != "b" else a
        b = (np.abs(b) % 3).astype(dtype) if np.dtype(dtype).kind != "b" else b
    return a, b


@pytest.mark.parametrize("dtype", NUMERIC + [np.bool_])
def test_binary_ufuncs_broadcast(dev, dtype):
    need(dev, dtype, np.float64)
    for name in BINARY:
        for sa, sb in SHAPES:
            a, b = _binary_inputs(dtype, name, sa, sb)
            f = getattr(np, "divide" if name == "true_divide" else name)
            try:
                with np.errstate(all="ignore"):
                    want = f(a, b)
            except TypeError:  # NumPy has no such loop (subtract of bools): gpuport refuses too
                with pytest.raises(TypeError):
                    getattr(gp, name)(gp.asarray(a, device=dev), gp.asarray(b, device=dev))
                continue
            got = getattr(gp, name)(gp.asarray(a, device=dev), gp.asarray(b, device=dev))
            same(got, want, exact=name not in ("true_divide", "power", "remainder", "floor_divide"))


def test_operators_and_scalars(dev):
    need(dev, np.float64)
    h = sample((3, 4), np.float32, 3)
    i = sample((3, 4), np.int32, 4)
    g, gi = gp.asarray(h, device=dev), gp.asarray(i, device=dev)
    cases = [(g + 1, h + 1), (1 + g, 1 + h), (g - 2.5, h - 2.5), (2.5 - g, 2.5 - h), (g * 3, h * 3), (g / 4, h / 4),
             (4 / (abs(g) + 1), 4 / (abs(h) + 1)), (-g, -h), (+g, +h), (g ** 2, h ** 2), (2 ** (gi % 5), 2 ** (i % 5)),
             (gi // 3, i // 3), (gi % 3, i % 3), (-gi // 4, -i // 4), (gi / 2, i / 2), (gi * 1.5, i * 1.5),
             (g > 0, h > 0), (0 < g, 0 < h), (g == g, h == h), (g != 1, h != 1), (gi & 6, i & 6), (gi | 1, i | 1),
             (gi ^ 3, i ^ 3), (~gi, ~i), (~(g > 0), ~(h > 0)), ((g > 0) & (g < 3), (h > 0) & (h < 3)),
             ((g > 0) | (gi == 1), (h > 0) | (i == 1)), (g + gi, h + i),
             (g + np.float64(1), h + np.float64(1)), (g * h[0], h * h[0]), (h[0] * g, h[0] * h)]
    for got, want in cases:
        same(got, want)
    try:  # NumPy 1 widens to int64; NumPy 2 refuses a Python int that does not fit: so does gpuport
        want = i + 2 ** 40
    except OverflowError:
        with pytest.raises(OverflowError):
            gi + 2 ** 40
    else:
        same(gi + 2 ** 40, want)
    x, hx = g.copy(), h.copy()
    for op in ("__iadd__", "__isub__", "__imul__", "__itruediv__"):
        x = getattr(x, op)(2)
        hx = getattr(hx, op)(2)
        same(x, hx)
    y, hy = gi.copy(), i.copy()
    y += gi[0]
    hy += i[0]
    y //= 3
    hy //= 3
    y **= 2
    hy **= 2
    same(y, hy)
    same(gi << 2, i << 2)
    same(gp.astype(g, np.int16), h.astype(np.int16))
    for a, b in [(gp.acos, np.arccos), (gp.asinh, np.arcsinh), (gp.pow, np.power), (gp.atan2, np.arctan2),
                 (gp.bitwise_invert, np.invert)]:
        args = (gi,) if a is gp.bitwise_invert else (g / 10,) * (2 if a in (gp.pow, gp.atan2) else 1)
        with np.errstate(all="ignore"):
            same(a(*args), b(*[gp.asnumpy(x) for x in args]))
    with dev:  # asarray's default device is the current one, not necessarily g's
        assert gp.asarray(g) is g and gp.asarray(g, copy=True) is not g
    with pytest.raises(ValueError, match="copy=False"):
        gp.asarray(h, copy=False)
    with pytest.raises(TypeError):
        gi += 1.5  # NumPy: cannot cast float64 to int32 in place
    with pytest.raises(TypeError):
        gp.asarray([True], device=dev) - gp.asarray([False], device=dev)


def test_repeated_operations_use_each_call_s_offsets_scalars_and_out(dev):
    """An operation repeated on operands of the same layouts takes each call's own offsets,
    scalars, result types and overlaps (gpuport keeps what it worked out for a layout)."""
    h = sample((6, 8), np.float32, 6)
    u = sample((6, 8), np.uint8, 7)
    g, gu = gp.asarray(h, device=dev), gp.asarray(u, device=dev)
    for r in range(3):  # same shapes and strides, other offsets each time
        same(g[r:r + 3, 1:5] + g[3 - r:6 - r, r:r + 4], h[r:r + 3, 1:5] + h[3 - r:6 - r, r:r + 4])
    for s in (2, 3.5, -1, 2):
        same(g * s, h * s)
    for s in (3, 300, 3, 2 ** 16):  # NumPy 1 types a Python int by its value, NumPy 2 refuses one that does not fit
        try:
            want = u + s
        except OverflowError:
            with pytest.raises(OverflowError):
                gu + s
        else:
            same(gu + s, want)
    x, hx = g.copy(), h.copy()
    for _ in range(3):  # out overlaps its input in another layout: through a temporary each time
        x[1:, :] = x[:-1, :] + 1
        hx[1:, :] = hx[:-1, :] + 1
        same(x, hx)
    y, hy = gu.copy(), u.copy()
    for s in (1, 1.5, 1):
        if isinstance(s, float):
            with pytest.raises(TypeError):
                y += s  # NumPy: cannot cast float64 to uint8 in place
        else:
            y += s
            hy += s
    same(y, hy)


UNARY = ["sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
         "tanh", "arcsinh", "arccosh", "arctanh", "floor", "ceil", "trunc", "absolute", "negative", "square", "sign", "isnan", "isinf", "isfinite",
         "logical_not"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.int64])
def test_unary_ufuncs(dev, dtype):
    need(dev, dtype, np.float64)
    h = sample((4, 5), dtype, 5)[:, ::-2]
    if np.dtype(dtype).kind == "f":
        h = h.copy()
        h[0, 0], h[1, 1] = np.nan, np.inf
    g = gp.asarray(h, device=dev)[:, :]
    for name in UNARY:
        with np.errstate(all="ignore"):
            want = getattr(np, name)(h)
            if want.dtype == np.float16:  # gpuport computes NumPy's float16 results in float32
                want = getattr(np, name)(h.astype(np.float32))
        got = getattr(gp, name)(g)
        assert got.dtype == want.dtype, name
        host = gp.asnumpy(got)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(host, want, rtol=8 * np.finfo(want.dtype).eps, atol=1e-30, equal_nan=True,
                                       err_msg=name)
        else:
            np.testing.assert_array_equal(host, want, err_msg=name)


def test_nan_aware_minimum_where_clip(dev):
    need(dev, np.float64)
    a = np.array([1.0, np.nan, 3.0, -1.0, np.inf])
    b = np.array([2.0, 0.0, np.nan, -2.0, 1.0])
    ga, gb = gp.asarray(a, device=dev), gp.asarray(b, device=dev)
    same(gp.minimum(ga, gb), np.minimum(a, b))
    same(gp.maximum(ga, gb), np.maximum(a, b))
    h = sample((3, 4), np.float32, 6)
    g = gp.asarray(h, device=dev)
    same(gp.where(g > 0, g, 0), np.where(h > 0, h, 0))
    same(gp.where(g > 0, 1.0, -1), np.where(h > 0, 1.0, -1))
    same(gp.where(g[0] > 0, g, g[:, :1]), np.where(h[0] > 0, h, h[:, :1]))
    same(gp.clip(g, -1, 2), np.clip(h, -1, 2))
    same(g.clip(None, 0.5), h.clip(None, 0.5))
    same(gp.clip(gp.asarray(np.arange(10), device=dev), 2, 7), np.clip(np.arange(10), 2, 7))
    with pytest.raises(TypeError):
        gp.where(g > 0)


# ---- reductions -----------------------------------------------------------------------------------

REDUCTIONS = ["sum", "prod", "min", "max", "mean", "var", "std", "argmin", "argmax", "any", "all"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.int64, np.bool_])
def test_reductions_with_axis(dev, dtype):
    need(dev, dtype, np.float64)
    base = sample((4, 6, 5), dtype, 7)
    if np.dtype(dtype).kind in "iu":
        base = (base % 3).astype(dtype)  # products stay small
    gbase = gp.asarray(base, device=dev)
    for view in (lambda x: x, lambda x: x[:, ::-2, 1:], lambda x: x.transpose(2, 0, 1), lambda x: x[1:2]):
        h, g = view(base), view(gbase)
        for name in REDUCTIONS:
            axes = [None, 0, 1, -1] if name in ("argmin", "argmax") else [None, 0, 1, 2, (0, 2), (1, 2), ()]
            for axis in axes:
                for keepdims in (False, True):
                    if name in ("argmin", "argmax") and keepdims and not _numpy2():
                        continue  # NumPy 1.x's argmin has no keepdims
                    with np.errstate(all="ignore"):
                        want = np.asarray(getattr(np, name)(h, axis=axis, keepdims=keepdims))
                    host = gp.asnumpy(getattr(gp, name)(g, axis=axis, keepdims=keepdims))
                    assert host.shape == want.shape and host.dtype == want.dtype, (name, axis, host.dtype, want.dtype)
                    if want.dtype.kind == "f":  # sums in another order: within n ulps of the largest term
                        tol = 2 * h.size * np.finfo(want.dtype).eps * max(np.abs(h).max(initial=0), 1) ** 2
                        np.testing.assert_allclose(host, want, rtol=64 * np.finfo(want.dtype).eps, atol=tol,
                                                   err_msg="%s axis=%s" % (name, axis))
                    else:
                        np.testing.assert_array_equal(host, want, err_msg="%s axis=%s" % (name, axis))


def _numpy2():
    return int(np.__version__.split(".")[0]) >= 2


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
def test_reduction_edges(dev):
    need(dev, np.float64)
    for h in [np.zeros((0, 3)), np.zeros((3, 0)), np.float32(2.5) * np.ones(()), np.arange(1e6, dtype=np.float32),
              np.array([1.0, np.nan, -np.inf, 2.0]), np.array([np.nan, np.nan])]:
        g = gp.asarray(h, device=dev)
        for name in ("sum", "prod", "any", "all", "mean"):
            if name == "prod" and h.size > 100:
                continue  # 0 * (a part's product, overflowed to inf) is NaN: the order decides
            with np.errstate(all="ignore"):
                want = getattr(np, name)(h)
            same(getattr(gp, name)(g), want, ulps=64)  # sums of 10^6 floats in another order
        if h.size:
            for name in ("min", "max", "argmin", "argmax"):
                same(getattr(gp, name)(g), getattr(np, name)(h))
        else:
            for name in ("min", "argmax"):
                with pytest.raises(ValueError):
                    getattr(gp, name)(g)
    ties = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 1, 9], np.int32)
    g = gp.asarray(np.tile(ties, 5000), device=dev)
    assert int(gp.argmin(g)) == 1 and int(gp.argmax(g)) == 5  # the first of equals
    same(gp.count_nonzero(g), np.int64(np.count_nonzero(np.tile(ties, 5000))) * np.ones((), np.int64))
    big = np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32)
    gb = gp.asarray(big, device=dev)
    assert abs(float(gb.sum()) - big.astype(np.float64).sum()) < 1e-4 * np.abs(big).sum()
    assert abs(float(gb.std()) - big.astype(np.float64).std()) < 1e-4
    assert int(gb.argmax()) == int(big.argmax()) and float(gb.max()) == big.max()


# ---- products and norms ---------------------------------------------------------------------------

def test_dot_matmul_norm(dev):
    need(dev, np.float64)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5, 7)), rng.standard_normal((7, 3))
    v, w = rng.standard_normal(7), rng.standard_normal(5)
    ga, gb, gv, gw = (gp.asarray(x, device=dev) for x in (a, b, v, w))
    tol = dict(rtol=1e-12, atol=1e-12)
    for got, want in [(ga @ gb, a @ b), (gp.matmul(ga, gv), a @ v), (gw @ ga, w @ a), (gp.dot(gv, gv), v @ v),
                      (ga.T @ gw, a.T @ w), (gp.dot(ga[:, ::2], gb[::2]), a[:, ::2] @ b[::2]),
                      (gb.T @ ga.T, b.T @ a.T), (gp.outer(gv, gw), np.outer(v, w)), (gp.dot(ga, 2.0), a * 2),
                      (ga.astype(np.float32) @ gb.astype(np.float32), (a.astype(np.float32) @ b.astype(np.float32)))]:
        assert gp.asnumpy(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(gp.asnumpy(got), want, **(tol if np.asarray(want).dtype == np.float64
                                                              else dict(rtol=1e-5, atol=1e-5)))
    ia, ib = rng.integers(-5, 5, (4, 6)), rng.integers(-5, 5, (6, 2)).astype(np.int32)
    same(gp.asarray(ia, device=dev) @ gp.asarray(ib, device=dev), ia @ ib)
    stack = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(gp.asnumpy(gp.asarray(stack, device=dev) @ gb[:4]), stack @ b[:4], **tol)
    with pytest.raises(ValueError, match="do not multiply"):
        ga @ ga
    for ord in (None, 2, 1, np.inf, -np.inf, 0, 3):
        np.testing.assert_allclose(gp.asnumpy(gp.linalg.norm(gv, ord)), np.linalg.norm(v, ord), **tol)
    for ord in (None, "fro", 1, -1, np.inf, -np.inf):
        np.testing.assert_allclose(gp.asnumpy(gp.linalg.norm(ga, ord)), np.linalg.norm(a, ord), **tol)
    np.testing.assert_allclose(gp.asnumpy(gp.linalg.norm(ga, axis=1)), np.linalg.norm(a, axis=1), **tol)
    np.testing.assert_allclose(gp.asnumpy(gp.linalg.norm(ga, axis=0, keepdims=True)),
                               np.linalg.norm(a, axis=0, keepdims=True), **tol)
    assert gp.allclose(ga, a) and not gp.allclose(ga, a + 1) and gp.array_equal(gv, v)


# ---- random numbers -------------------------------------------------------------------------------

def test_random_is_seeded_reproducible_and_right(dev):
    need(dev, np.float64)
    with gp.Device(dev):
        gp.random.seed(42)
        a = gp.random.rand(1000, 3, dtype=np.float32)
        b = gp.random.rand(1000, 3, dtype=np.float32)
        gp.random.seed(42)
        same(gp.random.rand(1000, 3, dtype=np.float32), gp.asnumpy(a), exact=True)
        assert not np.array_equal(gp.asnumpy(a), gp.asnumpy(b))
        assert a.dtype == np.float32 and gp.random.rand(3).dtype == np.float64 and gp.random.random().shape == ()
        u = gp.asnumpy(gp.random.uniform(-2, 5, 200000))
        assert u.min() >= -2 and u.max() < 5 and abs(u.mean() - 1.5) < 0.03
        n = gp.asnumpy(gp.random.randn(200000))
        assert abs(n.mean()) < 0.01 and abs(n.std() - 1) < 0.01
        m = gp.asnumpy(gp.random.normal(3, 2, (400, 500), dtype=np.float32))
        assert m.shape == (400, 500) and abs(m.mean() - 3) < 0.02 and abs(m.std() - 2) < 0.02
        r = gp.asnumpy(gp.random.randint(-3, 4, 100000))
        assert r.dtype == np.int64 and set(np.unique(r)) == set(range(-3, 4))
        c = gp.asnumpy(gp.random.randint(256, size=50000, dtype=np.uint8))
        assert c.dtype == np.uint8 and c.max() == 255 and c.min() == 0
        g1, g2 = gp.random.default_rng(7), gp.random.default_rng(7)
        same(g1.random(100), gp.asnumpy(g2.random(100)), exact=True)
        assert set(np.unique(gp.asnumpy(g1.integers(1, 3, 1000, endpoint=True)))) == {1, 2, 3}
    with pytest.raises(ValueError):
        gp.random.seed(-1)
    with pytest.raises(TypeError):
        gp.random.rand(3, dtype=np.int32)


def test_random_is_the_same_on_every_device():
    devs = [d for d in gp.devices() if d.info["fp64"]]
    if len(devs) < 2:
        pytest.skip("one device: nothing to compare")
    results = []
    for d in devs:
        st = gp.random.RandomState(1234)
        results.append((gp.asnumpy(st.rand(4096, dtype=np.float32, device=d)),
                        gp.asnumpy(st.random_sample(4096, device=d)), gp.asnumpy(st.randint(0, 1000, 4096, device=d)),
                        gp.asnumpy(st.randn(4096, device=d))))
    for other in results[1:]:
        for x, y in zip(results[0][:3], other[:3]):
            assert np.array_equal(x, y)  # integer arithmetic: bit for bit
        np.testing.assert_allclose(results[0][3], other[3], rtol=1e-12, atol=1e-12)


# ---- devices, strictness, threads -----------------------------------------------------------------

def test_devices_and_contexts(dev):
    with gp.Device(dev.spec) as d:
        assert d is dev and gp.device() is dev and gp.zeros(2).device is dev
        with gp.Device(dev):
            assert gp.arange(3).device is dev
    assert gp.Device(dev.spec) is dev and gp.cuda.Device(dev.id) is dev
    x = gp.asarray([1.0, 2.0], device=dev)
    for other in gp.devices():
        y = gp.asarray(x, device=other)
        assert y.device is other and np.array_equal(gp.asnumpy(y), [1.0, 2.0])
        z = x.to(other)
        assert z.device is other
        if other is not dev:
            with pytest.raises(ValueError, match="two devices, %s and %s" % (dev.spec, other.spec)):
                x + z


def test_strict_inputs(dev):
    with pytest.raises(ValueError, match="2\\^63"):
        gp.empty((1 << 62,), np.float32, device=dev)
    with pytest.raises(ValueError, match="2\\^63"):
        gp.empty((1 << 40, 1 << 40), np.uint8, device=dev)
    with pytest.raises(ValueError, match="negative"):
        gp.zeros((2, -1), device=dev)
    with pytest.raises(TypeError, match="float16"):
        gp.asarray(np.zeros(3, np.float16), device=dev)
    with pytest.raises(TypeError, match="complex256"):
        gp.zeros(3, np.clongdouble, device=dev)
    with pytest.raises(TypeError):
        gp.sin("x")


def test_threads_each_with_a_stream_overlap_on_the_device(dev):
    """Two Python threads each drive a stream of their own: each waits in gpuport with the GIL
    released, so both streams' kernels are in flight at once; on a GPU their device-timed
    intervals overlap."""
    src = ("GP_KERNEL void spin(GP_GLOBAL float *x, uint n, uint rounds)\n"
           "{ GP_FOR(i, n) { float v = x[i]; for (uint r = 0; r < rounds; r++) v = v * 0.999f + 0.001f; x[i] = v; } }")
    k = gp.Program(src, device=dev).kernel("spin")
    n = 1 << 12
    rounds = 400000 if dev.type == "gpu" else 2000
    spans, errors, ready = {}, [], threading.Barrier(2)

    def work(name):
        try:
            s = gp.Stream(dev)
            x = gp.zeros(n, np.float32, device=dev)
            k(x, n, 10, global_size=n, stream=s)  # warm
            s.synchronize()
            e0, e1 = gp.Event(dev), gp.Event(dev)
            ready.wait()
            e0.record(s)
            k(x, n, rounds, global_size=n, stream=s)
            e1.record(s)
            s.synchronize()
            spans[name] = (e0, e1)
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    (a0, a1), (b0, b1) = spans["a"], spans["b"]
    # both intervals measured against a's start: overlap where each starts before the other ends
    a_end, b_start, b_end = a0.elapsed_ms(a1), a0.elapsed_ms(b0), a0.elapsed_ms(b1)
    if dev.type != "gpu":
        assert a_end > 0 and b_end > b_start
        return
    assert b_start < a_end and 0 < b_end, (a_end, b_start, b_end)


def test_memory_of_arrays_that_are_gone_is_reused_on_the_default_stream_only(dev):
    from gpuport._array import _pool
    gp.free_memory(dev)
    a = gp.zeros(1000, np.float32, device=dev)
    h = a._buf.value
    del a
    assert _pool.kept[dev.spec] == 4096  # kept, rounded to 512 bytes
    b = gp.ones(1000, np.float32, device=dev)  # the same size: the same memory, its new values
    assert b._buf.value == h and _pool.kept[dev.spec] == 0 and float(b.sum()) == 1000
    kept = _pool.kept[dev.spec]
    s = gp.Stream(dev)
    c = gp.sin(b, stream=s)
    del c
    s.synchronize()
    assert _pool.kept[dev.spec] == kept  # used on a stream of its own: given back, not kept
    gp.free_memory()


# ---- where NumPy refuses, gpuport refuses too (no silent wrong results) ---------------------

def _refusals(xp, a):
    """What each refused write raises under xp (numpy or gpuport), as (type, message) pairs."""
    b = xp.broadcast_to(a, (64, a.size))
    cases = [lambda: b.__iadd__(1), lambda: b.__setitem__((0, 0), 5), lambda: xp.add(a, a, out=b),
             lambda: b[1:].fill(2), lambda: xp.multiply(b.T, 2, out=b.T)]
    seen = []
    for case in cases:
        with pytest.raises(ValueError) as e:
            case()
        seen.append(str(e.value))
    return seen, [b.flags.writeable, b[1:].flags.writeable, b.T.flags.writeable, b.copy().flags.writeable]


def test_broadcast_views_are_read_only(dev):
    host = np.arange(33, dtype=np.float32)
    a = gp.asarray(host, device=dev)
    assert _refusals(gp, a) == _refusals(np, host.copy())
    assert np.array_equal(a.get(), host)  # nothing was written
    v = a[3:]
    v.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        v += 1
    with pytest.raises(ValueError, match="read-only"):
        v[2:] -= 1  # a view of a read-only view is read-only
    v.flags.writeable = True
    v += 1
    host[3:] += 1
    assert np.array_equal(a.get(), host)
    with pytest.raises(ValueError):
        gp.broadcast_to(a, (2, 33)).flags.writeable = True


def test_out_follows_numpy_casting(dev):
    need(dev, np.float64)
    a, b = gp.ones((4, 4), device=dev), gp.ones((4, 4), device=dev)
    ints = gp.zeros((4, 4), gp.int32, device=dev)
    for xp, x, y, o in ((np, np.ones((4, 4)), np.ones((4, 4)), np.zeros((4, 4), np.int32)), (gp, a, b, ints)):
        with pytest.raises(TypeError):
            xp.matmul(x, y, out=o)
        with pytest.raises(TypeError):
            xp.add(x, y, out=o)
        with pytest.raises(ValueError):
            xp.matmul(x, y, out=xp.zeros((5, 4)))
    assert not ints.get().any()  # refused before anything was written
    out = gp.zeros((4, 4), device=dev)
    assert gp.matmul(a, b, out=out) is out and np.array_equal(out.get(), np.full((4, 4), 4.0))
    vec = gp.zeros(4, device=dev)
    assert np.array_equal(gp.matmul(a, gp.ones(4, device=dev), out=vec).get(), np.full(4, 4.0))
    with pytest.raises(TypeError):
        gp.cumsum(gp.ones(4, device=dev), out=gp.zeros(4, gp.int64, device=dev).astype(gp.int32))


@pytest.mark.parametrize("shape", [True, False, (2, True), np.bool_(True)])
def test_booleans_are_not_shapes(dev, shape):
    with pytest.raises(TypeError):
        np.zeros(shape)
    for make in (gp.zeros, gp.ones, gp.empty):
        with pytest.raises(TypeError, match="shape"):
            make(shape, device=dev)
