"""What the translation of Python kernels (_jit.py) is made of: the names kernels call (markers
found by identity), the types it gives values, as Numba types them, and the C it writes besides
the kernel: literals, the helper functions for Python's integer semantics, atomics and fast math."""
import ast
import inspect
import re
import math
import textwrap

import numpy as np

from ._array import CTYPES

I8, U8, F4, F8, B1, I4 = (np.dtype(t) for t in (np.int64, np.uint64, np.float32, np.float64, np.bool_, np.int32))


class TypingError(TypeError):
    """A kernel uses what the translation does not take; says the file, the line and the construct."""


# ---- what kernels call: markers, found by identity while translating ------------------------

class _Intrinsic:
    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kwargs):
        raise TypeError("gpuport: cuda.%s can only be used inside a @cuda.jit function" % self.name)

    def __repr__(self):
        return "<gpuport cuda.%s>" % self.name


class _Dim3(_Intrinsic):
    x = y = z = property(lambda self: self(None))


class _Space:
    def __init__(self, name):
        self.array = _Intrinsic(name + ".array")


class _Atomic:
    _OPS = ("add", "sub", "max", "min", "exch", "cas", "and_", "or_", "xor", "inc", "dec", "compare_and_swap",
            "nanmax", "nanmin")

    def __init__(self):
        for op in self._OPS:
            setattr(self, op, _Intrinsic("atomic." + op))


threadIdx, blockIdx, blockDim, gridDim = (_Dim3(n) for n in ("threadIdx", "blockIdx", "blockDim", "gridDim"))
grid, gridsize, syncthreads = _Intrinsic("grid"), _Intrinsic("gridsize"), _Intrinsic("syncthreads")
shared, local, atomic = _Space("shared"), _Space("local"), _Atomic()
_SREG = {id(threadIdx): "gp_local_id", id(blockIdx): "gp_group_id", id(blockDim): "gp_local_size",
         id(gridDim): "gp_num_groups"}

# ---- types ----------------------------------------------------------------------------------


class Arr:
    """An array's type: element dtype, dimensions, layout ("C" contiguous or "A" strided), where
    it lives (global, local or private memory) and whether its view starts into its buffer."""
    __slots__ = ("dtype", "ndim", "layout", "space", "offset")

    def __init__(self, dtype, ndim, layout="C", space="global", offset=False):
        self.dtype, self.ndim, self.layout, self.space, self.offset = np.dtype(dtype), ndim, layout, space, offset

    def key(self):
        return ("A", self.dtype.str, self.ndim, self.layout, self.space, self.offset)

    def __eq__(self, other):
        return isinstance(other, Arr) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def __str__(self):
        return "%s[%s]" % (self.dtype, ", ".join([":"] * (self.ndim - 1) + ["::1" if self.layout == "C" else ":"]))


def type_name(t):
    return str(t) if isinstance(t, Arr) else "tuple" if isinstance(t, tuple) else np.dtype(t).name


def _ctype(t):
    return "bool" if t == B1 else CTYPES[t]


def _widen(t):
    """Numba computes integers as 64-bit ones (bool and int32 become int64, uint32 uint64)."""
    return I8 if t.kind in "bi" else U8 if t.kind == "u" else t


def _promote(a, b):
    return np.promote_types(a, b)


def _arith(a, b):
    return _promote(_widen(a), _widen(b))


def _literal(value, t):
    if t == B1:
        return "true" if value else "false"
    if t.kind in "iu":
        v = int(value)
        return "%d%s" % (v, {8: "L" if t.kind == "i" else "UL", 4: "" if t.kind == "i" else "u"}.get(t.itemsize, ""))
    v = float(value)
    if math.isnan(v) or math.isinf(v):
        inf = "GP_INFINITY_F" if t == F4 else "GP_INFINITY_D"
        return "(%s - %s)" % (inf, inf) if math.isnan(v) else inf if v > 0 else "(-%s)" % inf
    text = repr(v)
    if "e" not in text and "." not in text:
        text += ".0"
    return text + ("f" if t == F4 else "")


# Names C, C++ or OpenCL C keep for themselves, or that the dialect or the math library uses: a
# Python name among them gets "_py" in the C it becomes.
_RESERVED = set("""auto break case char const continue default do double else enum extern float for goto if inline
int long register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
bool true false class new delete this template typename namespace operator private public protected virtual friend try
catch throw using explicit mutable export constexpr nullptr decltype static_cast dynamic_cast reinterpret_cast
const_cast wchar_t char16_t char32_t alignas alignof asm noexcept thread_local static_assert and or not xor bitand bitor
compl and_eq or_eq xor_eq not_eq half uchar ushort uint ulong size_t ptrdiff_t intptr_t uintptr_t kernel global local
constant read_only write_only image2d_t image3d_t sampler_t event_t complex imaginary main min max abs mad clamp fmin
fmax rint select mix sign dot cross length distance normalize barrier floor ceil trunc round isnan isinf isfinite
NAN INFINITY""".split())
_VECTOR = re.compile(r"(u?char|u?short|u?int|u?long|float|double|half|bool)(2|3|4|8|16)$")


def cname(name):
    """The C name of a Python name."""
    taken = name in _RESERVED or name in _MATH_ALL or _VECTOR.match(name) or name.startswith(("gp_", "GP_", "__"))
    return name + "_py" if taken else name


class V:
    """A value in the generated code: its C text (a list of values for a tuple), its type, whether
    it is known not to be negative (indexing then needs no wrap-around), and its Python value
    when it is a constant."""
    __slots__ = ("c", "t", "nn", "const")

    def __init__(self, c, t, nn=False, const=None):
        self.c, self.t, self.nn, self.const = c, t, nn, const


def _const(value):
    if isinstance(value, (bool, np.bool_)):
        return V(_literal(value, B1), B1, True, bool(value))
    if isinstance(value, np.generic):
        t = value.dtype
        if t not in CTYPES:
            return None
        return V(_literal(value, t), t, not (t.kind in "if" and value < 0), value.item())
    if isinstance(value, int):
        t = I8 if -2 ** 63 <= value < 2 ** 63 else U8
        return V(_literal(value, t), t, value >= 0, value)
    if isinstance(value, float):
        return V(_literal(value, F8), F8, value >= 0, value)
    if isinstance(value, tuple) and value and all(_const(v) is not None for v in value):
        items = [_const(v) for v in value]
        return V(items, tuple(i.t for i in items), all(i.nn for i in items), value)
    return None


class ArrV:
    """An array in the generated code: its pointer, its shape and (strided ones) its strides, in
    elements, as C expressions."""
    __slots__ = ("ptr", "t", "shape", "strides")

    def __init__(self, ptr, t, shape, strides=None):
        self.ptr, self.t, self.shape, self.strides = ptr, t, shape, strides


class Static:
    """A Python object a kernel names (a module, a function, a dtype), resolved while translating."""
    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj


_MATH1 = {"sqrt": "sqrt", "exp": "exp", "log": "log", "log2": "log2", "log10": "log10", "log1p": "log1p",
          "expm1": "expm1", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos",
          "atan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh",
          "atanh": "atanh", "erf": "erf", "erfc": "erfc", "gamma": "tgamma", "lgamma": "lgamma", "fabs": "fabs",
          "exp2": "exp2", "cbrt": "cbrt"}
_MATH2 = {"atan2": "atan2", "pow": "pow", "hypot": "hypot", "copysign": "copysign", "fmod": "fmod"}
_MATH_INT = {"floor": "floor", "ceil": "ceil", "trunc": "trunc"}
_MATH_BOOL = {"isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite"}
_NP1 = dict(_MATH1, arcsin="asin", arccos="acos", arctan="atan", arcsinh="asinh", arccosh="acosh",
            arctanh="atanh", absolute="fabs", floor="floor", ceil="ceil", trunc="trunc")
_NP2 = {"arctan2": "atan2", "power": "pow", "hypot": "hypot", "copysign": "copysign", "fmod": "fmod"}
_MATH_ALL = set(_MATH1.values()) | set(_MATH2.values()) | set(_MATH1) | set(_MATH2)
_FAST = {"sin": "sin", "cos": "cos", "exp": "exp", "log": "log", "sqrt": "sqrt", "tan": "tan", "pow": "powr",
         "log2": "log2", "log10": "log10", "exp2": "exp2"}
_CUDA_FAST = {"sin": "__sinf", "cos": "__cosf", "exp": "__expf", "log": "__logf", "sqrt": "__fsqrt_rn",
              "tan": "__tanf", "powr": "__powf", "log2": "__log2f", "log10": "__log10f", "exp2": "exp2f"}

# Helpers the generated code calls, emitted once each where used.
_BITS = """#if GP_BACKEND_OPENCL
#define gp__f32(b) as_float((uint)(b))
#define gp__b32(x) as_uint(x)
#define gp__f64(b) as_double((ulong)(b))
#define gp__b64(x) as_ulong(x)
#define gp__cas64(p, c, v) atom_cmpxchg((p), (c), (v))
#else
#define gp__f32(b) __uint_as_float((uint)(b))
#define gp__b32(x) __float_as_uint(x)
#define gp__f64(b) __longlong_as_double((long long)(b))
#define gp__b64(x) ((ulong)__double_as_longlong(x))
#define gp__cas64(p, c, v) ((ulong)atomicCAS((unsigned long long *)(p), (unsigned long long)(c), \\
                                             (unsigned long long)(v)))
#endif"""
_FAST_MACROS = "#if GP_BACKEND_OPENCL\n%s\n#else\n%s\n#endif" % (
    "\n".join("#define gp__fast_%s native_%s" % (v, v) for v in sorted(set(_FAST.values()))),
    "\n".join("#define gp__fast_%s %s" % (v, _CUDA_FAST[v]) for v in sorted(set(_FAST.values()))))


def _helper_floordiv(c):
    if c.startswith("u"):
        return "GP_FUNC %s gp__floordiv_%s(%s a, %s b) { return b ? a / b : 0; }" % (c, c, c, c)
    return ("GP_FUNC %s gp__floordiv_%s(%s a, %s b)\n{\n    if (b == 0) return 0;\n"
            "    if (b == -1) return (%s)(0 - (u%s)a);\n    %s q = a / b;\n"
            "    return q * b != a && (a < 0) != (b < 0) ? q - 1 : q;\n}" % (c, c, c, c, c, c, c))


def _helper_mod(c):
    if c.startswith("u"):
        return "GP_FUNC %s gp__mod_%s(%s a, %s b) { return b ? a %% b : 0; }" % (c, c, c, c)
    if c in ("float", "double"):
        return ("GP_FUNC %s gp__mod_%s(%s a, %s b)\n{\n    %s r = fmod(a, b);\n"
                "    return r != 0 && (r < 0) != (b < 0) ? r + b : r;\n}" % (c, c, c, c, c))
    return ("GP_FUNC %s gp__mod_%s(%s a, %s b)\n{\n    if (b == 0 || b == -1) return 0;\n    %s r = a %% b;\n"
            "    return r != 0 && (r < 0) != (b < 0) ? r + b : r;\n}" % (c, c, c, c, c))


def _helper_powi(c):
    return ("GP_FUNC %s gp__powi_%s(%s x, long n)\n{\n    %s r = 1;\n    if (n < 0) return (%s)(1.0 / "
            "gp__powi_%s(x, -n));\n    for (; n; n >>= 1, x *= x)\n        if (n & 1) r *= x;\n    return r;\n}"
            % (c, c, c, c, c, c) if c in ("float", "double") else
            "GP_FUNC %s gp__powi_%s(%s x, long n)\n{\n    %s r = 1;\n    if (n < 0) return x == 1 ? 1 : x == -1 ? "
            "(n & 1 ? -1 : 1) : 0;\n    for (; n; n >>= 1, x *= x)\n        if (n & 1) r *= x;\n    return r;\n}"
            % (c, c, c, c))


_HELPERS = {
    "wrap": "GP_FUNC long gp__wrap(long i, long n) { return i < 0 ? i + n : i; }",
    "min": "GP_FUNC %(c)s gp__min_%(c)s(%(c)s a, %(c)s b) { return b < a ? b : a; }",
    "max": "GP_FUNC %(c)s gp__max_%(c)s(%(c)s a, %(c)s b) { return b > a ? b : a; }",
}

# An atomic's new value from the old (x) and the operand (v); Numba's inc and dec wrap at v.
_ATOMIC_NEW = {"add": "x + v", "sub": "x - v", "max": "v > x ? v : x", "min": "v < x ? v : x", "exch": "v",
               "and_": "x & v", "or_": "x | v", "xor": "x ^ v", "inc": "x >= v ? 0 : x + 1",
               "dec": "x == 0 || x > v ? v : x - 1", "nanmax": "x != x || v > x ? v : x",
               "nanmin": "x != x || v < x ? v : x"}
_ATOMIC_NATIVE = {"add": "gp_atomic_add", "sub": "gp_atomic_sub", "max": "gp_atomic_max", "min": "gp_atomic_min",
                  "exch": "gp_atomic_xchg"}


def _helper_atomic(op, t, space):
    c = _ctype(t)
    ptr = "GP_GLOBAL %s *" if space == "global" else "GP_LOCAL_PTR(%s) "
    name = "gp__atomic_%s_%s_%s" % (op.rstrip("_"), c, space)
    if t.itemsize == 4 and t.kind in "iu" and op in _ATOMIC_NATIVE:
        return name, None  # the dialect's own
    wide = t.itemsize == 8
    bits, word = ("ulong", "gp__cas64") if wide else ("uint", "gp_atomic_cas")
    to_bits = ("gp__b64(%s)" if wide else "gp__b32(%s)") if t.kind == "f" else "(%s)(%%s)" % bits
    from_bits = ("gp__f64(%s)" if wide else "gp__f32(%s)") if t.kind == "f" else "(%s)(%%s)" % c
    native = ""
    if op == "add" and (t.kind == "f" or wide):  # CUDA and HIP add floats and 64-bit integers themselves
        cast = "(unsigned long long *)p, (unsigned long long)v" if t.kind != "f" else "p, v"
        native = "#if !GP_BACKEND_OPENCL\n    return (%s)atomicAdd(%s);\n#else\n" % (c, cast)
    # leave at once when nothing would change: for max and min, most calls
    skip = {"max": "!(v > x)", "min": "!(v < x)"}.get(op, "%s == seen" % (to_bits % "y"))
    body = ("{\n%s    %s q = (%s)p;\n    %s old = *q, seen;\n    do {\n        seen = old;\n"
            "        %s x = %s, y = %s;\n        if (%s) break;\n        old = %s(q, seen, %s);\n"
            "    } while (old != seen);\n    return %s;\n%s}") % (
        native, ptr % bits, ptr % bits, bits, c, from_bits % "seen", _ATOMIC_NEW[op], skip, word,
        to_bits % "y", from_bits % "old", "#endif\n" if native else "")
    return name, "GP_FUNC %s %s(%sp, %s v)\n%s" % (c, name, ptr % c, c, body)


_ATOMIC_TYPES = {np.dtype(t) for t in (np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64)}


class Module:
    """What one kernel's source gathers: helpers, device functions, then the kernel."""

    def __init__(self, fastmath=False):
        self.helpers, self.functions, self.names, self.fastmath = {}, {}, {}, fastmath
        self.translating = []

    def helper(self, key, text):
        self.helpers.setdefault(key, text)

    def source(self, kernel_text):
        parts = list(self.helpers.values()) + [f for f in self.functions.values() if f] + [kernel_text]
        return "\n\n".join(parts) + "\n"


def _source(fn):
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise TypingError("gpuport: the source of %s cannot be read (%s): a kernel must be a function defined "
                          "in a file or a notebook cell" % (getattr(fn, "__name__", fn), e)) from None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    node = next(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return node, first - 1, lines


def _simple(c):
    return isinstance(c, str) and (c.replace("_", "").isalnum() or _is_number(c))


def _is_number(c):
    try:
        float(c.rstrip("fLU"))
        return True
    except ValueError:
        return False


def _paren(c):
    return c if _simple(c) or (c.startswith("(") and c.endswith(")") and _balanced(c[1:-1])) else "(%s)" % c


def _balanced(c):
    depth = 0
    for ch in c:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
        ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
_PYOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
          ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b,
          ast.LShift: lambda a, b: a << b if 0 <= b < 64 else None, ast.RShift: lambda a, b: a >> b}
_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_WHAT = {"ListComp": "list comprehensions", "GeneratorExp": "generators", "Lambda": "lambdas", "Dict": "dicts",
         "Set": "sets", "DictComp": "dict comprehensions", "SetComp": "set comprehensions", "JoinedStr": "f-strings",
         "Raise": "raise", "Try": "try", "With": "with", "Import": "import", "ImportFrom": "import",
         "FunctionDef": "nested function", "ClassDef": "class", "Global": "global", "Nonlocal": "nonlocal",
         "Delete": "del", "Yield": "yield", "Await": "await", "Starred": "*-unpacking", "NamedExpr": ":=",
         "AsyncFunctionDef": "async function", "Match": "match", "Slice": "a slice"}
