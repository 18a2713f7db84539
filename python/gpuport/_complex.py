"""Complex elements in generated kernels: complex64 and complex128 are the structs gp_c64 and
gp_c128 (real part first, as NumPy lays them out), with the functions the ufuncs need, written
into a kernel's source when it names them. Conversions follow NumPy's: a real value becomes the
real part, a complex one cast to a real type keeps its real part."""
COMPLEX_CTS = {"gp_c64": "float", "gp_c128": "double"}

# ufuncs NumPy defines on complex operands that gpuport computes: name -> expression
_OPS = {
    "add": "gp_{c}_add(x0, x1)", "subtract": "gp_{c}_sub(x0, x1)", "multiply": "gp_{c}_mul(x0, x1)",
    "true_divide": "gp_{c}_div(x0, x1)", "negative": "gp_{c}_make(-x0.re, -x0.im)", "positive": "x0",
    "square": "gp_{c}_mul(x0, x0)", "reciprocal": "gp_{c}_div(gp_{c}_make(1, 0), x0)",
    "conjugate": "gp_{c}_make(x0.re, -x0.im)", "absolute": "hypot(x0.re, x0.im)",
    "equal": "(x0.re == x1.re && x0.im == x1.im)", "not_equal": "(x0.re != x1.re || x0.im != x1.im)",
    "isnan": "(isnan(x0.re) || isnan(x0.im))", "isinf": "(isinf(x0.re) || isinf(x0.im))",
    "isfinite": "(isfinite(x0.re) && isfinite(x0.im))", "exp": "gp_{c}_exp(x0)", "log": "gp_{c}_log(x0)",
    "sqrt": "gp_{c}_sqrt(x0)", "power": "gp_{c}_pow(x0, x1)",
}
NAMES = sorted(_OPS)

_HELPERS = """typedef struct {{ {r} re, im; }} gp_{c};
GP_FUNC gp_{c} gp_{c}_make({r} re, {r} im) {{ gp_{c} z; z.re = re; z.im = im; return z; }}
GP_FUNC gp_{c} gp_{c}_add(gp_{c} a, gp_{c} b) {{ return gp_{c}_make(a.re + b.re, a.im + b.im); }}
GP_FUNC gp_{c} gp_{c}_sub(gp_{c} a, gp_{c} b) {{ return gp_{c}_make(a.re - b.re, a.im - b.im); }}
GP_FUNC gp_{c} gp_{c}_mul(gp_{c} a, gp_{c} b)
{{
    return gp_{c}_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}}
/* Smith's division: no overflow where |b| is large, as NumPy's. */
GP_FUNC gp_{c} gp_{c}_div(gp_{c} a, gp_{c} b)
{{
    if (fabs(b.re) >= fabs(b.im)) {{
        if (b.re == 0 && b.im == 0) return gp_{c}_make(a.re / fabs(b.re), a.im / fabs(b.im));
        {r} t = b.im / b.re, d = b.re + b.im * t;
        return gp_{c}_make((a.re + a.im * t) / d, (a.im - a.re * t) / d);
    }}
    {r} t = b.re / b.im, d = b.re * t + b.im;
    return gp_{c}_make((a.re * t + a.im) / d, (a.im * t - a.re) / d);
}}
GP_FUNC gp_{c} gp_{c}_exp(gp_{c} a)
{{
    {r} m = exp(a.re);
    return a.im == 0 ? gp_{c}_make(m, a.im) : gp_{c}_make(m * cos(a.im), m * sin(a.im));
}}
GP_FUNC gp_{c} gp_{c}_log(gp_{c} a) {{ return gp_{c}_make(log(hypot(a.re, a.im)), atan2(a.im, a.re)); }}
GP_FUNC gp_{c} gp_{c}_sqrt(gp_{c} a)
{{
    if (a.re == 0 && a.im == 0) return gp_{c}_make(0, a.im);
    {r} t = sqrt((fabs(a.re) + hypot(a.re, a.im)) / 2);
    if (a.re >= 0) return gp_{c}_make(t, a.im / (2 * t));
    return gp_{c}_make(fabs(a.im) / (2 * t), a.im >= 0 ? t : -t);
}}
GP_FUNC gp_{c} gp_{c}_pow(gp_{c} a, gp_{c} b)
{{
    if (b.re == 0 && b.im == 0) return gp_{c}_make(1, 0);
    if (a.re == 0 && a.im == 0) return gp_{c}_make(0, 0);
    return gp_{c}_exp(gp_{c}_mul(b, gp_{c}_log(a)));
}}
"""


def helpers(source):
    """The definitions of the complex types and functions source uses, to put before it."""
    return "".join(_HELPERS.format(c=c[3:], r=r) for c, r in COMPLEX_CTS.items() if c in source)


def expr(name, ct):
    """The expression of ufunc name over operands of complex C type ct; KeyError where gpuport
    does not compute it for complex numbers."""
    return _OPS[name].format(c=ct[3:])


def convert(to_ct, from_ct, e):
    """e, of C type from_ct, converted to to_ct as NumPy converts ("bool" is a truth value)."""
    if to_ct == from_ct and to_ct in COMPLEX_CTS:
        return e
    if from_ct in COMPLEX_CTS:
        if to_ct in COMPLEX_CTS:
            r = COMPLEX_CTS[to_ct]
            return "%s_make((%s)(%s).re, (%s)(%s).im)" % (to_ct, r, e, r, e)
        if to_ct == "bool":
            return "((%s).re != 0 || (%s).im != 0)" % (e, e)
        return "(%s)((%s).re)" % (to_ct, e)
    if to_ct in COMPLEX_CTS:
        return "%s_make((%s)(%s), 0)" % (to_ct, COMPLEX_CTS[to_ct], e)
    if to_ct == "bool":
        return "(uchar)((%s) != 0)" % e
    return "(%s)(%s)" % (to_ct, e)
