"""NumPy's fft on the device: fft, ifft, rfft, irfft, their 2-D and n-D forms, fftfreq, rfftfreq,
fftshift and ifftshift, with NumPy's n, axis, axes, s and norm. On CUDA devices the transforms are
NVIDIA's cuFFT (libcufft, loaded at first use, on the current stream); elsewhere gpuport's own:
a Stockham FFT in the dialect (passes of radix 4, 2, 3, 5 and 7; on CPUs twiddles from a table
made once) for lengths of those factors, and Bluestein's algorithm over a power of two for every
other length; the tables of the last 32 lengths are kept. library(device) says which. Float32 and complex64 give complex64, as CuPy and NumPy 2 give it;
other types complex128."""
import ctypes
import math

import numpy as np

from . import _elementwise as ew
from ._array import CTYPES, Array, asarray, normalize_axis, zeros
from ._join import concatenate
from ._vendor import address, current_stream, load

_NORMS = (None, "backward", "ortho", "forward")


# ---- where transforms run -------------------------------------------------------------------------

class _CuFFT:
    """libcufft, and its plans by device, length, batch and type (made once, kept)."""
    C2C, Z2Z, R2C, D2Z, C2R, Z2D = 0x29, 0x69, 0x2a, 0x6a, 0x2c, 0x6c

    def __init__(self):
        self.plans, self.streams = {}, {}  # plans by key; the stream each plan was last set to
        self.lib, self.path, why = load(("libcufft.so.12", "libcufft.so.11", "libcufft.so"))
        self.why = None if self.lib else "cuFFT was not found (%s)" % why
        if self.lib:
            v = ctypes.c_int()
            self.lib.cufftGetVersion(ctypes.byref(v))
            self.version = "%d.%d.%d" % (v.value // 1000, v.value % 1000 // 100, v.value % 100)

    def run(self, kind, src, dst, dims, batch, direction=0):
        """One batch of transforms of the sizes dims (one to three: the last axes of C-ordered
        arrays) from src's memory into dst's, on the current stream."""
        dev = src.device
        stream = current_stream(dev)
        key = (dev.spec, dims, batch, kind)
        plan = self.plans.get(key)
        if plan is None:
            if len(self.plans) >= 32:
                for p in self.plans.values():
                    self.lib.cufftDestroy(p)
                self.plans.clear()
                self.streams.clear()
            plan = ctypes.c_int()
            self._status("PlanMany", self.lib.cufftPlanMany(ctypes.byref(plan), len(dims),
                                                            (ctypes.c_int * len(dims))(*dims), None, 1, 0, None, 1, 0,
                                                            kind, batch))
            self.plans[key] = plan = plan.value
        if self.streams.get(plan) != stream.value:
            self._status("SetStream", self.lib.cufftSetStream(plan, stream))
            self.streams[plan] = stream.value
        name = {self.C2C: "C2C", self.Z2Z: "Z2Z", self.R2C: "R2C", self.D2Z: "D2Z", self.C2R: "C2R", self.Z2D: "Z2D"}
        args = (plan, address(src), address(dst))
        args += (direction,) if kind in (self.C2C, self.Z2Z) else ()
        self._status("Exec" + name[kind], getattr(self.lib, "cufftExec" + name[kind])(*args))

    @staticmethod
    def _status(name, st):
        if st:
            raise RuntimeError("gpuport.fft: cufft%s returned status %d" % (name, st))


_cufft = []


def _vendor(x):
    """cuFFT for an array of a CUDA device where libcufft loads, else None."""
    if x.device.backend != "cuda":
        return None
    if not _cufft:
        _cufft.append(_CuFFT())
    return _cufft[0] if _cufft[0].lib else None


def library(device=None):
    """Which FFT gpuport.fft uses on device (the current one by default), and why."""
    from ._device import device as _device
    dev = _device(device)
    own = "gpuport's FFT in the dialect (Stockham radix 4, 2, 3, 5, 7; Bluestein for other lengths)"
    if dev.backend != "cuda":
        return "%s: %s has no vendor FFT that gpuport loads" % (own, dev.backend)
    if not _cufft:
        _cufft.append(_CuFFT())
    return "cuFFT %s (%s)" % (_cufft[0].version, _cufft[0].path) if _cufft[0].lib else "%s: %s" % (own, _cufft[0].why)


# ---- gpuport's own FFT ----------------------------------------------------------------------------

_PASS = """GP_KERNEL void k(GP_GLOBAL {c} *dst, GP_GLOBAL const {c} *src, GP_GLOBAL const {c} *tw, uint n, uint ns,
                 uint stride, {r} sign, {r} scale, uint total)
{{
    GP_FOR(t, total) {{
        uint q = n / {R}, b = t / q, j = t - b * q, k = j % ns;
        ulong base = (ulong)b * n;
        {r} vr[{R}], vi[{R}], c, s, ang = sign * ({r})6.283185307179586 * ({r})k / ({r})(ns * {R});
        for (uint r = 0; r < {R}; r++) {{
            {c} v = src[base + j + r * q];
{twiddle}
            vr[r] = v.re * c - v.im * s; vi[r] = v.re * s + v.im * c;
        }}
{butterfly}
        ulong d = base + (j / ns) * ns * {R} + k;
        for (uint r = 0; r < {R}; r++) {{
            dst[d + r * ns].re = vr[r] * scale; dst[d + r * ns].im = vi[r] * scale;
        }}
    }}
}}
"""
# the twiddle of v: on CPUs the table's forward one (conjugated for the inverse), since their sin
# and cos cost more than the whole pass; on GPUs computed, since a table's reads would scatter
_TWIDDLE = {True: "            {c} w = tw[k * r * stride];\n            c = w.re; s = -sign * w.im;",
            False: "            c = cos(ang * r); s = sin(ang * r);"}
_BUTTERFLY = {2: """        c = vr[0] - vr[1]; s = vi[0] - vi[1];
        vr[0] += vr[1]; vi[0] += vi[1]; vr[1] = c; vi[1] = s;""",
              4: """        {r} a0r = vr[0] + vr[2], a0i = vi[0] + vi[2], a1r = vr[0] - vr[2], a1i = vi[0] - vi[2];
        {r} a2r = vr[1] + vr[3], a2i = vi[1] + vi[3];
        {r} a3r = -sign * (vi[1] - vi[3]), a3i = sign * (vr[1] - vr[3]);
        vr[0] = a0r + a2r; vi[0] = a0i + a2i; vr[2] = a0r - a2r; vi[2] = a0i - a2i;
        vr[1] = a1r + a3r; vi[1] = a1i + a3i; vr[3] = a1r - a3r; vi[3] = a1i - a3i;"""}



def _butterfly(R, r):
    """The code of a DFT of R points over vr, vi (sign: the transform's direction)."""
    if R in _BUTTERFLY:
        return _BUTTERFLY[R].format(r=r)
    lines = []
    for p in range(R):
        re, im = [], []
        for q in range(R):
            c, s = math.cos(2 * math.pi * p * q / R), math.sin(2 * math.pi * p * q / R)
            c, s = (0.0 if abs(c) < 1e-15 else c), (0.0 if abs(s) < 1e-15 else s)
            re.append("vr[%d] * (%s)%.17g - vi[%d] * sign * (%s)%.17g" % (q, r, c, q, r, s))
            im.append("vr[%d] * sign * (%s)%.17g + vi[%d] * (%s)%.17g" % (q, r, s, q, r, c))
        lines.append("        %s y%dr = %s, y%di = %s;" % (r, p, " + ".join(re), p, " + ".join(im)))
    lines += ["        vr[%d] = y%dr; vi[%d] = y%di;" % (p, p, p, p) for p in range(R)]
    return "\n".join(lines)


def _radices(n):
    """The passes of a Stockham FFT of n points (4, 2, 3, 5, 7 as n's factors allow), or None."""
    radices = []
    for R in (4, 2, 3, 5, 7):
        while n % R == 0:
            radices.append(R)
            n //= R
    return radices if n == 1 else None


# Bluestein's chirp w(k) = exp(sign i pi k^2 / n), k^2 taken modulo 2n so that the angle is exact
_CHIRP = """GP_FUNC {c} w(ulong k, uint n, {r} sign, {r} scale)
{{
    {r} ang = sign * ({r})3.141592653589793 * ({r})((k * k) % (2 * (ulong)n)) / ({r})n;
    return gp_{s}_make(cos(ang) * scale, sin(ang) * scale);
}}
"""
_BLUESTEIN = {  # o, x, and wt: the chirp w(k) for k < n
    "w": "o[t] = w(t, n, sign, 1);",
    # a[b, k] = x[b, k] w(k) for k < n, 0 up to m
    "in": "uint b = t / m, k = t - b * m; o[t] = k < n ? gp_{s}_mul(x[(ulong)b * n + k], wt[k]) : gp_{s}_make(0, 0);",
    # the chirp's conjugate at k and m - k
    "chirp": "uint k = t < n ? t : m - t; o[t] = t < n || t > m - n ? gp_{s}_make(wt[k].re, -wt[k].im) "
             ": gp_{s}_make(0, 0);",
    "mul": "o[t] = gp_{s}_mul(o[t], x[t % m]);",
    # y[b, k] = w(k) a[b, k] / m
    "out": "uint b = t / n, k = t - b * n; o[t] = gp_{s}_mul(x[(ulong)b * m + k], wt[k]); o[t].re *= scale / m; "
           "o[t].im *= scale / m;",
}


def _bluestein_kernel(step, ct):
    c = CTYPES[np.dtype(ct)]
    r = "float" if c == "gp_c64" else "double"
    return (_CHIRP.format(c=c, r=r, s=c[3:]) + "GP_KERNEL void k(GP_GLOBAL %s *o, GP_GLOBAL const %s *x, "
            "GP_GLOBAL const %s *wt, uint n, uint m, %s sign, %s scale, uint total)\n{\n    GP_FOR(t, total) { %s }\n}\n"
            % (c, c, c, r, r, _BLUESTEIN[step].format(s=c[3:])))


_tables = {}  # twiddles and Bluestein's transformed chirps, by device, length, dtype (and sign)


def _kept(key, make):
    t = _tables.get(key)
    if t is None:
        if len(_tables) >= 32:
            _tables.clear()
        t = _tables[key] = make()
    return t


def _twiddles(dev, n, dtype):
    """exp(-2 pi i j / n) for j < n."""
    r = "float" if dtype == np.complex64 else "double"
    return ew.generate(Array((n,), dtype, device=dev), "%s_make(cos(a), sin(a))" % CTYPES[dtype], [(n, "uint")],
                       statements="%s a = (%s)-6.283185307179586 * (%s)i / (%s)s0;" % (r, r, r, r))


def _stockham(x, sign, scale):
    """The transforms of x's rows (contiguous, of a length _radices takes), unscaled but the
    last pass by scale: a new array."""
    n, rows = x.shape[-1], x.size // max(x.shape[-1], 1)
    c = CTYPES[x.dtype]
    r = "float" if c == "gp_c64" else "double"
    table = x.device.info["type"] == "cpu"
    tw = _kept((x.device.spec, n, x.dtype), lambda: _twiddles(x.device, n, x.dtype)) if table else x
    src, dst = x, Array(x.shape, x.dtype, device=x.device)
    radices, ns = _radices(n), 1
    for i, R in enumerate(radices):
        src_code = _PASS.format(c=c, r=r, R=R, butterfly=_butterfly(R, r), twiddle=_TWIDDLE[table].format(c=c))
        last = i == len(radices) - 1
        ew.launch(x.device, src_code, [dst._buf, src._buf, tw._buf],
                  [(n, "uint"), (ns, "uint"), (n // (ns * R), "uint"), (sign, r), (scale if last else 1.0, r),
                   (rows * n // R, "uint")], rows * n // R)
        ns *= R
        src, dst = dst, (src if src is not x else Array(x.shape, x.dtype, device=x.device))
    return src if radices else ew.multiply(x, scale).astype(x.dtype, copy=False)


def _bluestein(x, sign, scale):
    n, rows = x.shape[-1], x.size // x.shape[-1]
    m = 1 << (2 * n - 2).bit_length()
    r = "float" if x.dtype == np.complex64 else "double"
    dev, lead = x.device, x.shape[:-1]

    def step(name, out, src, total, wt=None):
        ew.launch(dev, _bluestein_kernel(name, x.dtype), [out._buf, src._buf, (out if wt is None else wt)._buf],
                  [(n, "uint"), (m, "uint"), (sign, r), (scale, r), (total, "uint")], total)
        return out

    def tables():
        wt = step("w", Array((n,), x.dtype, device=dev), x, n)
        return wt, _stockham(step("chirp", Array((m,), x.dtype, device=dev), x, m, wt), -1.0, 1.0)
    wt, chirp = _kept((dev.spec, n, x.dtype, sign), tables)
    a = _stockham(step("in", Array(lead + (m,), x.dtype, device=dev), x, rows * m, wt), -1.0, 1.0)
    a = _stockham(step("mul", a, chirp, rows * m), 1.0, 1.0)
    return step("out", Array(x.shape, x.dtype, device=dev), a, rows * n, wt)


def _own(x, sign, scale):
    if x.size == 0:
        return x.copy()
    n = x.shape[-1]
    return (_stockham if _radices(n) is not None else _bluestein)(x, sign, scale)


# ---- NumPy's functions ----------------------------------------------------------------------------

def _complex_dtype(dtype):
    return np.dtype(np.complex64 if dtype in (np.float32, np.complex64, np.float16) else np.complex128)


def _scale(norm, n, inverse):
    """The factor of a transform of n points: 1/n on the inverse ("backward", the default), on
    the forward one ("forward"), 1/sqrt(n) on both ("ortho")."""
    if norm not in _NORMS:
        raise ValueError('gpuport.fft: norm is "backward", "ortho" or "forward", not %r' % (norm,))
    if norm == "ortho":
        return 1 / math.sqrt(n)
    return 1 / n if inverse == (norm in (None, "backward")) else 1.0


def _along(x, axis, n, dtype):
    """x with axis moved last, cut or padded with zeros to n there, C-contiguous, of dtype, and
    the axes that move the result's last axis back (None: it is there)."""
    axis = normalize_axis(axis, x.ndim)
    if axis == x.ndim - 1 and n == x.shape[-1] and x.dtype == dtype and x.contiguous:
        return x, None  # as it is: no views made, the usual case
    perm = [d for d in range(x.ndim) if d != axis] + [axis]
    v = x.transpose(perm)
    if n <= v.shape[-1]:
        v = v[..., :n]
        v = v.astype(dtype) if v.dtype != dtype or not v.contiguous else v
    else:
        z = zeros(v.shape[:-1] + (n,), dtype, x.device)
        z[..., :v.shape[-1]] = v
        v = z
    return v, [perm.index(d) for d in range(x.ndim)]


def _back(out, back):
    return out if back is None else out.transpose(back)


def _input(a, n, axis, default=lambda m: m):
    """a as a device array of at least one dimension, and the transform's points: n, or default
    of the length along axis."""
    x, = ew.operands(a)
    if x.ndim == 0:
        raise ValueError("gpuport.fft: the input must have at least one dimension")
    n = default(x.shape[normalize_axis(axis, x.ndim)]) if n is None else n
    if n < 1:
        raise ValueError("gpuport.fft: invalid number of data points (%d) specified" % n)
    return x, n


def _scaled(out, scale):
    return out if scale == 1 else ew.multiply(out, scale, out=out)


def _c2c(a, n, axis, norm, inverse):
    x, n = _input(a, n, axis)
    v, back = _along(x, axis, n, _complex_dtype(x.dtype))
    scale = _scale(norm, n, inverse)
    lib = _vendor(v)
    if lib is None or v.size == 0:
        out = _own(v, 1.0 if inverse else -1.0, scale)
    else:
        out = Array(v.shape, v.dtype, device=v.device)
        lib.run(lib.C2C if v.dtype == np.complex64 else lib.Z2Z, v, out, (n,), v.size // n, 1 if inverse else -1)
        out = _scaled(out, scale)
    return _back(out, back)


def fft(a, n=None, axis=-1, norm=None):
    """NumPy's fft.fft: the discrete Fourier transform along axis."""
    return _c2c(a, n, axis, norm, False)


def ifft(a, n=None, axis=-1, norm=None):
    """NumPy's fft.ifft: the inverse transform along axis."""
    return _c2c(a, n, axis, norm, True)


def rfft(a, n=None, axis=-1, norm=None):
    """NumPy's fft.rfft: the transform of real input, its n // 2 + 1 non-negative frequencies."""
    x, n = _input(a, n, axis)
    if x.dtype.kind == "c":
        raise TypeError("gpuport.fft.rfft: the input must be real, not %s" % x.dtype)
    real = np.dtype(np.float32 if x.dtype in (np.float32, np.float16) else np.float64)
    v, back = _along(x, axis, n, real)
    lib = _vendor(v)
    if lib is None or v.size == 0:
        out = _own(v.astype(_complex_dtype(real)), -1.0, _scale(norm, n, False))[..., :n // 2 + 1]
    else:
        out = Array(v.shape[:-1] + (n // 2 + 1,), _complex_dtype(real), device=v.device)
        lib.run(lib.R2C if real == np.float32 else lib.D2Z, v, out, (n,), v.size // n)
        out = _scaled(out, _scale(norm, n, False))
    return _back(out, back)


_HERMITIAN = ("GP_KERNEL void k(GP_GLOBAL {c} *o, GP_GLOBAL const {c} *x, uint n, uint m, uint total)\n{{\n"
              "    GP_FOR(t, total) {{\n        uint b = t / n, k = t - b * n;\n"
              "        {c} v = x[(ulong)b * m + (k < m ? k : n - k)];\n"
              "        if (k >= m) v.im = -v.im;\n        o[t] = v;\n    }}\n}}\n")


def irfft(a, n=None, axis=-1, norm=None):
    """NumPy's fft.irfft: the real signal of n points (2 (m - 1) by default) whose rfft is a."""
    x, n = _input(a, n, axis, lambda m: 2 * (m - 1))
    m = n // 2 + 1
    v, back = _along(x, axis, m, _complex_dtype(x.dtype))
    real = np.dtype(v.dtype.char.lower())
    scale, lib = _scale(norm, n, True), _vendor(v)
    if lib is None or v.size == 0:
        full = Array(v.shape[:-1] + (n,), v.dtype, device=v.device)
        rows = v.size // m
        ew.launch(v.device, _HERMITIAN.format(c=CTYPES[v.dtype]), [full._buf, v._buf],
                  [(n, "uint"), (m, "uint"), (rows * n, "uint")], rows * n)
        out = _own(full, 1.0, scale).real.copy()
    else:
        out = Array(v.shape[:-1] + (n,), real, device=v.device)
        lib.run(lib.C2R if real == np.float32 else lib.Z2D, v.copy(), out, (n,), v.size // m)  # C2R overwrites
        out = _scaled(out, scale)
    return _back(out, back)


def _axes_sizes(x, s, axes):
    if axes is None:
        axes = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    axes = [normalize_axis(a, x.ndim) for a in axes]
    if s is None:
        s = [x.shape[a] for a in axes]
    if len(s) != len(axes):
        raise ValueError("gpuport.fft: shape and axes have different lengths")
    return list(s), axes


def _nd(a, s, axes, norm, inverse):
    """fftn and ifftn: on CUDA one cuFFT plan over up to three last axes taken whole, else one
    axis after another."""
    x, = ew.operands(a)
    s, axes = _axes_sizes(x, s, axes)
    k, lib = len(axes), _vendor(x)
    if lib and 1 <= k <= 3 and axes == list(range(x.ndim - k, x.ndim)) and s == list(x.shape[-k:]) and x.size:
        dtype = _complex_dtype(x.dtype)
        v = x if x.dtype == dtype and x.contiguous else x.astype(dtype)
        out = Array(v.shape, dtype, device=v.device)
        lib.run(lib.C2C if dtype == np.complex64 else lib.Z2Z, v, out, tuple(s), v.size // math.prod(s),
                1 if inverse else -1)
        return _scaled(out, math.prod(_scale(norm, n, inverse) for n in s))
    for n, ax in zip(s[::-1], axes[::-1]):
        x = _c2c(x, n, ax, norm, inverse)
    return x


def fftn(a, s=None, axes=None, norm=None):
    """NumPy's fft.fftn: the transform over axes (all by default)."""
    return _nd(a, s, axes, norm, False)


def ifftn(a, s=None, axes=None, norm=None):
    """NumPy's fft.ifftn."""
    return _nd(a, s, axes, norm, True)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """NumPy's fft.fft2: the transform over the last two axes."""
    return fftn(a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """NumPy's fft.ifft2."""
    return ifftn(a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """NumPy's fft.rfftn: rfft over the last axis given, then fft over the others."""
    x, = ew.operands(a)
    s, axes = _axes_sizes(x, s, axes)
    x = rfft(x, s[-1], axes[-1], norm)
    for n, ax in zip(s[-2::-1], axes[-2::-1]):
        x = fft(x, n, ax, norm)
    return x


def irfftn(a, s=None, axes=None, norm=None):
    """NumPy's fft.irfftn: ifft over all axes given but the last, then irfft over that (of
    2 (m - 1) points where s does not say)."""
    x, = ew.operands(a)
    given = s is not None
    s, axes = _axes_sizes(x, s, axes)
    if not given:
        s[-1] = 2 * (s[-1] - 1)
    for n, ax in zip(s[:-1], axes[:-1]):
        x = ifft(x, n, ax, norm)
    return irfft(x, s[-1], axes[-1], norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """NumPy's fft.rfft2."""
    return rfftn(a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """NumPy's fft.irfft2."""
    return irfftn(a, s, axes, norm)


def fftfreq(n, d=1.0):
    """NumPy's fft.fftfreq: the frequencies of an n-point transform with sample spacing d."""
    return asarray(np.fft.fftfreq(n, d))


def rfftfreq(n, d=1.0):
    """NumPy's fft.rfftfreq."""
    return asarray(np.fft.rfftfreq(n, d))


def _roll(x, shifts, axes):
    for sh, ax in zip(shifts, axes):
        n = x.shape[ax]
        if n:
            sh %= n
            idx = [slice(None)] * x.ndim
            idx[ax] = slice(n - sh, None)
            head = x[tuple(idx)]
            idx[ax] = slice(0, n - sh)
            x = concatenate([head, x[tuple(idx)]], axis=ax)
    return x


def fftshift(x, axes=None):
    """NumPy's fft.fftshift: the zero frequency moved to the centre."""
    x, = ew.operands(x)
    axes = list(range(x.ndim)) if axes is None else [normalize_axis(a, x.ndim) for a in np.atleast_1d(axes)]
    return _roll(x, [x.shape[a] // 2 for a in axes], axes)


def ifftshift(x, axes=None):
    """NumPy's fft.ifftshift: fftshift undone."""
    x, = ew.operands(x)
    axes = list(range(x.ndim)) if axes is None else [normalize_axis(a, x.ndim) for a in np.atleast_1d(axes)]
    return _roll(x, [-(x.shape[a] // 2) for a in axes], axes)
