"""Random numbers made on the device by a counter-based generator (Philox4x32-10, as in Salmon et
al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): element i of a call is a pure
function of (seed, the call's position in the stream, i), so a seed gives the same numbers on
every device and backend. Uniform floats and integers are bit-identical everywhere; normal ones
go through the device's log, sqrt and cos, identical to within their rounding."""
import math
import os

import numpy as np

from . import _elementwise as _ew
from . import _sort
from ._array import CTYPES, Array, _shape, asarray, check_dtype
from ._elementwise import generate
from ._primitives import cumsum as _cumsum

_PHILOX = """
GP_FUNC gp_words gp_philox(uint c0, uint c1, uint c2, uint c3, uint k0, uint k1)
{
    for (int r = 0; r < 10; r++) {
        ulong p0 = (ulong)0xD2511F53u * c0, p1 = (ulong)0xCD9E8D57u * c2;
        uint h0 = (uint)(p0 >> 32), l0 = (uint)p0, h1 = (uint)(p1 >> 32), l1 = (uint)p1;
        c0 = h1 ^ c1 ^ k0; c1 = l1; c2 = h0 ^ c3 ^ k1; c3 = l0;
        k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
    }
    gp_words w; w.x = c0; w.y = c1; w.z = c2; w.w = c3;
    return w;
}
GP_FUNC float gp_u01f(uint x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }
#ifdef GP_WANT_DOUBLE
GP_FUNC double gp_u01d(uint a, uint b)
{
    return (double)((ulong)(a >> 5) * 67108864ul + (b >> 6)) * (1.0 / 9007199254740992.0);
}
#endif
"""
_STRUCT = "typedef struct { uint x, y, z, w; } gp_words;\n"

# kind: (expression of the words w.x .. w.w and the scalars s2, s3 (float32, float64))
_FLOAT = {
    "uniform": ("s2 + (s3 - s2) * gp_u01f(w.x)", "s2 + (s3 - s2) * gp_u01d(w.x, w.y)"),
    "normal": ("s2 + s3 * sqrt(-2.0f * log(1.0f - gp_u01f(w.x))) * cos(6.283185307179586f * gp_u01f(w.z))",
               "s2 + s3 * sqrt(-2.0 * log(1.0 - gp_u01d(w.x, w.y))) * cos(6.283185307179586 * gp_u01d(w.z, w.w))"),
}


class RandomState:
    """A generator with NumPy's RandomState methods; its numbers are made on the array's device."""

    def __init__(self, seed=None):
        self.seed(seed)

    def seed(self, seed=None):
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        seed = int(seed)
        if not 0 <= seed < 1 << 64:
            raise ValueError("gpuport.random.seed: the seed must be between 0 and 2**64 - 1, not %d" % seed)
        self._key, self._calls = seed, 0

    def _fill(self, size, dtype, expr, scalars, device):
        out = Array(() if size is None else _shape(size), dtype, device=device)
        call, self._calls = self._calls, self._calls + 1
        fp64 = out.dtype == np.float64
        prelude = ("#define GP_WANT_DOUBLE 1\n" if fp64 else "") + _STRUCT + _PHILOX
        words = "gp_words w = gp_philox(i, 0u, (uint)s0, (uint)(s0 >> 32), (uint)s1, (uint)(s1 >> 32));"
        return generate(out, "(%s)(%s)" % (CTYPES[out.dtype], expr), [(call, "ulong"), (self._key, "ulong")] + scalars,
                        prelude=prelude, statements=words)

    def _float(self, kind, size, dtype, a, b, device):
        dtype = check_dtype(dtype)
        if dtype.kind != "f":
            raise TypeError("gpuport.random: %s numbers are float32 or float64, not %s" % (kind, dtype))
        ct = CTYPES[dtype]
        return self._fill(size, dtype, _FLOAT[kind][dtype == np.float64], [(a, ct), (b, ct)], device)

    def random_sample(self, size=None, dtype=np.float64, device=None):
        """Uniform in [0, 1)."""
        return self._float("uniform", size, dtype, 0.0, 1.0, device)

    random = random_sample

    def rand(self, *shape, dtype=np.float64, device=None):
        return self.random_sample(shape or None, dtype, device)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float64, device=None):
        return self._float("uniform", size, dtype, float(low), float(high), device)

    def standard_normal(self, size=None, dtype=np.float64, device=None):
        return self._float("normal", size, dtype, 0.0, 1.0, device)

    def randn(self, *shape, dtype=np.float64, device=None):
        return self.standard_normal(shape or None, dtype, device)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=np.float64, device=None):
        return self._float("normal", size, dtype, float(loc), float(scale), device)

    def randint(self, low, high=None, size=None, dtype=np.int64, device=None):
        """Integers in [low, high) (or [0, low) with one bound)."""
        if high is None:
            low, high = 0, low
        dtype = check_dtype(dtype)
        if dtype.kind not in "iu":
            raise TypeError("gpuport.random.randint: dtype must be an integer type, not %s" % dtype)
        info = np.iinfo(dtype)
        if low >= high or low < info.min or high - 1 > info.max:
            raise ValueError("gpuport.random.randint: [%d, %d) is empty or does not fit %s" % (low, high, dtype))
        expr = "s2 + (long)((((ulong)w.y << 32) | w.x) % s3)"
        return self._fill(size, dtype, expr, [(int(low), "long"), (int(high - low), "ulong")], device)


    def permutation(self, x, device=None):
        """A random order of range(x) (x an int) or of x's first axis."""
        n = int(x) if np.ndim(x) == 0 and not isinstance(x, Array) else len(x)
        order = _sort.argsort(self.random_sample(n, device=device if np.ndim(x) == 0 else x.device))
        return order if np.ndim(x) == 0 and not isinstance(x, Array) else x[order]

    def choice(self, a, size=None, replace=True, p=None, device=None):
        """NumPy's choice: elements of a (or of range(a), a an int) drawn with replacement (with the
        probabilities p, or uniformly), or without (uniformly; p is then not supported)."""
        pool = None if np.ndim(a) == 0 and not isinstance(a, Array) else asarray(a, device=device)
        n = int(a) if pool is None else pool.shape[0] if pool.ndim else 0
        dev = pool.device if pool is not None else device
        count = 1 if size is None else math.prod(_shape(size))
        if pool is not None and pool.ndim != 1:
            raise ValueError("gpuport.random.choice: a must be 1-dimensional or an integer")
        if n <= 0 and count:
            raise ValueError("gpuport.random.choice: a cannot be empty unless no samples are taken")
        if not replace:
            if p is not None:
                raise NotImplementedError("gpuport.random.choice: p= without replacement is not supported")
            if count > n:
                raise ValueError("gpuport.random.choice: cannot take a larger sample than population when "
                                 "replace=False")
            idx = self.permutation(n, device=dev)[:count]
        elif p is None:
            idx = self.randint(0, n, count, device=dev)
        else:
            w = asarray(p, np.float64, device=dev)
            if w.shape != (n,) or bool(_ew.less(w, 0).any()) or abs(float(w.sum()) - 1) > 1e-8:
                raise ValueError("gpuport.random.choice: p must be %d probabilities, each >= 0, summing to 1" % n)
            cdf = _cumsum(w)
            u = _ew.multiply(self.random_sample(count, device=dev), cdf[-1:])
            idx = _ew.minimum(_sort.searchsorted(cdf, u, side="right"), n - 1)
        idx = idx.reshape(() if size is None else _shape(size))
        return idx if pool is None else pool[idx.ravel()].reshape(idx.shape)


_global = RandomState()
seed = _global.seed
rand, randn, random, random_sample = _global.rand, _global.randn, _global.random, _global.random_sample
uniform, normal, standard_normal, randint = _global.uniform, _global.normal, _global.standard_normal, _global.randint
choice, permutation = _global.choice, _global.permutation


class Generator:
    """NumPy's Generator names (default_rng) over the same counter-based generator."""

    def __init__(self, seed=None):
        self._state = RandomState(seed)

    def random(self, size=None, dtype=np.float64, device=None):
        return self._state.random_sample(size, dtype, device)

    def standard_normal(self, size=None, dtype=np.float64, device=None):
        return self._state.standard_normal(size, dtype, device)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float64, device=None):
        return self._state.uniform(low, high, size, dtype, device)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=np.float64, device=None):
        return self._state.normal(loc, scale, size, dtype, device)

    def choice(self, a, size=None, replace=True, p=None, device=None):
        return self._state.choice(a, size, replace, p, device)

    def permutation(self, x, device=None):
        return self._state.permutation(x, device)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False, device=None):
        if high is None:
            low, high = 0, low
        return self._state.randint(low, high + 1 if endpoint else high, size, dtype, device)


def default_rng(seed=None):
    return Generator(seed)
