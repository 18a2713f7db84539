"""Kernels written in Python as Numba's CUDA target takes them (`@cuda.jit`), translated to the
kernel dialect: the function's ast, typed from the launch's arguments as Numba types them (an
integer is int64, a float literal float64, int32 + int32 is int64, float32 * 2.0 is float64),
emitted as dialect source a person can read (GPUPORT_DEBUG=compile prints it). _numba.py holds
the host side: the decorator, launches, device arrays. docs/numba.md lists the subset."""
import ast
import builtins
import inspect
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


class Translation:
    """One function (a kernel, or a device function for one signature) translated to the dialect."""

    def __init__(self, fn, argtypes, module, kernel, name):
        self.fn, self.module, self.kernel, self.name = fn, module, kernel, name
        self.node, self.line0, self.lines = _source(fn)
        self.file = fn.__code__.co_filename
        self.lineno = self.node.lineno
        self.globals = dict(fn.__globals__)
        if fn.__closure__:
            self.globals.update({n: c.cell_contents for n, c in zip(fn.__code__.co_freevars, fn.__closure__)})
        a = self.node.args
        self.dynamic = None
        self.shared_bytes = 0
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or getattr(a, "posonlyargs", None):
            self.fail(self.node, "only plain positional parameters (no defaults, *args or **kwargs)")
        self.params = [p.arg for p in a.args]
        if len(self.params) != len(argtypes):
            raise TypeError("gpuport: %s takes %d arguments, %d given" % (fn.__name__, len(self.params),
                                                                          len(argtypes)))
        self.argtypes = list(argtypes)
        self.assigned = {t.id for n in ast.walk(self.node) for t in self._targets(n)
                         if isinstance(t, ast.Name)} - set(self.params)
        self.tmp = 0
        self._translate()

    @staticmethod
    def _targets(n):
        out = []
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, (ast.AugAssign, ast.For,
                                                                                          ast.AnnAssign)) else []):
            out.extend(t.elts if isinstance(t, ast.Tuple) else [t])
        return out

    # ---- errors ----

    def fail(self, node, what):
        line = getattr(node, "lineno", self.lineno)
        text = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        raise TypingError("%s:%d: in %s: %s\n    %s" % (self.file, line + self.line0, self.fn.__name__, what, text))

    # ---- the passes ----

    def _translate(self):
        self.vars, self.nn = {}, {}
        for _ in range(20):  # types and signs settle as assignments are seen (a loop assigns before its top)
            before = (dict(self.vars), dict(self.nn))
            self._pass(emit=False)
            if (self.vars, self.nn) == before:
                break
        self.ret = self._return_type()
        self._pass(emit=True)

    def _pass(self, emit):
        self.emit, self.out, self.indent, self.arrays, self.returns = emit, [], 1, {}, []
        self.decls, self.top = [], []
        self.loops = 0
        params = []
        for name, t in zip(self.params, self.argtypes):
            if isinstance(t, Arr):
                shape = ["%s_n%d" % (name, d) for d in range(t.ndim)]
                strides = ["%s_s%d" % (name, d) for d in range(t.ndim)] if t.layout != "C" else None
                self.arrays[name] = ArrV(name, t, shape, strides)
                params.append(self._pointer_decl(t, name))
                params += ["long %s" % s for s in shape + (strides or [])]
                if t.offset:
                    params.append("long %s_off" % name)
                    self.top.append("%s += %s_off;" % (name, name))
            elif isinstance(t, np.dtype):
                flag = t == B1 and self.kernel  # a kernel's bool arrives as a byte
                params.append("%s %s" % ("uchar" if flag else _ctype(t), name + ("_b" if flag else "")))
                if flag:
                    self.top.append("bool %s = %s_b != 0;" % (name, name))
            else:
                raise TypeError("gpuport: argument %s of %s: %r cannot be passed" % (name, self.fn.__name__, t))
        self.param_decls = params
        self.block(self.node.body)
        if emit:
            self.c_params = params

    def _pointer_decl(self, t, name):
        c = CTYPES[t.dtype]
        return ("GP_GLOBAL %s *%s" if t.space == "global" else "GP_LOCAL_PTR(%s) %s" if t.space == "local"
                else "%s *%s") % (c, name)

    def text(self):
        ret = "void" if self.kernel or self.ret is None else _ctype(self.ret)
        head = "%s %s %s(%s)" % ("GP_KERNEL" if self.kernel else "GP_FUNC", ret, self.name,
                                 ", ".join(self.c_params) or "void")
        decls = ["    %s" % d for d in self.decls]
        for v, t in sorted(self.vars.items()):
            if isinstance(t, tuple):
                decls += ["    %s %s_%d;" % (_ctype(e), v, i) for i, e in enumerate(t)]
            elif t is not None:
                decls.append("    %s %s;" % (_ctype(t), v))
        sig = ", ".join(type_name(t) for t in self.argtypes)
        where = "/* %s:%d, %s(%s) */" % (self.file, self.lineno + self.line0, self.fn.__name__, sig)
        return "\n".join([where, head, "{"] + decls + ["    " + t for t in self.top] + self.out + ["}"])

    def _return_type(self):
        types = {r for r in self.returns}
        if not types or types == {None}:
            return None
        if None in types:
            self.fail(self.node, "returns a value on some paths and nothing on others")
        rt = types.pop()
        for t in types:
            rt = _promote(rt, t)
        return rt

    # ---- output ----

    def line(self, text):
        if self.emit:
            self.out.append("    " * self.indent + text)

    def temp(self, t):
        self.tmp += 1
        name = "gp__t%d" % self.tmp
        if self.emit:
            self.decls.append("%s %s;" % (_ctype(t), name))
        return name

    # ---- statements ----

    def block(self, body):
        for s in body:
            self.stmt(s)

    def stmt(self, s):
        m = getattr(self, "s_" + type(s).__name__, None)
        if m is None:
            self.fail(s, "%s statements are not supported in kernels" % _WHAT.get(type(s).__name__,
                                                                                  type(s).__name__))
        m(s)

    def s_Pass(self, s):
        pass

    def s_Expr(self, s):
        if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return  # a docstring
        v = self.expr(s.value)
        if isinstance(v, V) and v.c and self.emit:
            self.line("%s;" % v.c)

    def s_Assert(self, s):
        pass  # as Numba's CUDA target without debug=True

    def s_Assign(self, s):
        value = self.expr(s.value)
        for target in s.targets:
            self.assign(target, value, s)

    def s_AnnAssign(self, s):
        if s.value is None:
            self.fail(s, "an annotation without a value")
        self.assign(s.target, self.expr(s.value), s)

    def assign(self, target, value, s):
        if isinstance(target, ast.Name):
            name = target.id
            if isinstance(value, ArrV):
                if name in self.vars or name in self.params or (name in self.arrays and
                                                                self.arrays[name].t != value.t):
                    self.fail(s, "%s is assigned an array and another value; an array name is bound once" % name)
                self.arrays[name] = value
                return
            if name in self.arrays:
                self.fail(s, "%s names an array; it cannot be assigned a %s" % (name, self._kind(value)))
            v = self.scalar(value, s)
            if name in self.params:  # a scalar parameter keeps its type
                if isinstance(v.t, tuple):
                    self.fail(s, "the parameter %s is a number; it cannot be assigned a tuple" % name)
                t = self.argtypes[self.params.index(name)]
                if v.t is not None:
                    self.line("%s = %s;" % (name, self.cast(v, t)))
                return
            self.set_var(name, v, s)
        elif isinstance(target, ast.Subscript):
            a = self.expr(target.value)
            if not isinstance(a, ArrV):
                self.fail(s, "only array elements can be assigned by index")
            self.store(a, target, self.scalar(value, s), s)
        elif isinstance(target, ast.Tuple):
            if not isinstance(value, V) or not isinstance(value.t, tuple):
                self.fail(s, "unpacking needs a tuple (cuda.grid(2), a.shape, a, b), not a %s" % self._kind(value))
            if len(value.c) != len(target.elts):
                self.fail(s, "unpacking %d values into %d names" % (len(value.c), len(target.elts)))
            items = value.c
            if isinstance(s.value, ast.Tuple) and len(items) > 1:  # a, b = b, a: every value first
                held = []
                for v in items:
                    if v.t is None:
                        held.append(v)
                        continue
                    name = self.temp(v.t)
                    self.line("%s = %s;" % (name, v.c))
                    held.append(V(name, v.t, v.nn, v.const))
                items = held
            for t, v in zip(target.elts, items):
                self.assign(t, v, s)
        else:
            self.fail(s, "assigning to a %s" % type(target).__name__)

    def set_var(self, name, v, s):
        if isinstance(v.t, tuple):
            old = self.vars.get(name)
            if old is not None and (not isinstance(old, tuple) or len(old) != len(v.t)):
                self.fail(s, "%s holds a tuple here and something else elsewhere" % name)
            t = tuple(e if o is None else _promote(o, e) for o, e in zip(old or [None] * len(v.t), v.t)) \
                if all(e is not None for e in v.t) else old
            self.vars[name] = t
            for i, item in enumerate(v.c):
                self.nn["%s_%d" % (name, i)] = self.nn.get("%s_%d" % (name, i), True) and item.nn
                if t is not None:
                    self.line("%s_%d = %s;" % (name, i, self.cast(item, t[i])))
            return
        if v.t is None:
            return
        old = self.vars.get(name)
        if isinstance(old, tuple):
            self.fail(s, "%s holds a tuple elsewhere" % name)
        self.vars[name] = v.t if old is None else _promote(old, v.t)
        self.nn[name] = self.nn.get(name, True) and v.nn
        self.line("%s = %s;" % (name, self.cast(v, self.vars[name])))

    def s_AugAssign(self, s):
        op = type(s.op)
        if isinstance(s.target, ast.Name):
            if s.target.id in self.arrays:
                self.fail(s, "%s names an array: update its elements, %s[...] %s= ..." % (
                    s.target.id, s.target.id, _OPS.get(op, "?")))
            cur = self.expr(ast.Name(s.target.id, ast.Load(), lineno=s.lineno, col_offset=0))
            self.set_var(s.target.id, self.binop(op, cur, self.scalar(self.expr(s.value), s), s), s)
        elif isinstance(s.target, ast.Subscript):
            a = self.expr(s.target.value)
            if not isinstance(a, ArrV):
                self.fail(s, "only array elements can be updated by index")
            ref = self.element(a, s.target.slice, s)
            cur = self.load(a, ref)
            self.put(a, ref, self.binop(op, cur, self.scalar(self.expr(s.value), s), s))
        else:
            self.fail(s, "updating a %s" % type(s.target).__name__)

    def s_If(self, s):
        c = self.truth(self.expr(s.test), s)
        self.line("if (%s) {" % c)
        self.indent += 1
        self.block(s.body)
        self.indent -= 1
        if s.orelse:
            if len(s.orelse) == 1 and isinstance(s.orelse[0], ast.If):
                self.line("} else")
                self.s_If(s.orelse[0])
                return
            self.line("} else {")
            self.indent += 1
            self.block(s.orelse)
            self.indent -= 1
        self.line("}")

    def s_While(self, s):
        if s.orelse:
            self.fail(s, "while ... else")
        self.line("for (;;) {")
        self.indent += 1
        c = self.truth(self.expr(s.test), s)
        self.line("if (!(%s)) break;" % c)
        self.loops += 1
        self.block(s.body)
        self.loops -= 1
        self.indent -= 1
        self.line("}")

    def s_For(self, s):
        if s.orelse:
            self.fail(s, "for ... else")
        it = s.iter
        if not (isinstance(it, ast.Call) and isinstance(self.expr(it.func), Static) and
                self.expr(it.func).obj is range):
            self.fail(s, "for loops run over range(...) only")
        if it.keywords or not 1 <= len(it.args) <= 3:
            self.fail(s, "range takes one to three integers")
        args = [self.scalar(self.expr(a), s) for a in it.args]
        for a in args:
            if a.t is not None and a.t.kind not in "biu":
                self.fail(s, "range takes integers, not %s" % a.t)
        start, stop, step = (V("0L", I8, True, 0), args[0], V("1L", I8, True, 1)) if len(args) == 1 else \
            (args[0], args[1], args[2] if len(args) == 3 else V("1L", I8, True, 1))
        known = all(a.t is not None for a in (start, stop, step))
        t = (U8 if all(a.t.kind == "u" for a in (start, stop, step) if a.t != B1) and
             any(a.t.kind == "u" for a in (start, stop, step)) else I8) if known else None
        if not isinstance(s.target, ast.Name):
            self.fail(s, "a for loop's target is one name")
        up = step.const is not None and step.const > 0
        down = step.const is not None and step.const < 0
        if step.const == 0:
            self.fail(s, "range() step must not be zero")
        nn = start.nn and (up or (step.nn and step.const is None))
        counter = V(None, t, nn)
        if known:
            k, e = self.temp(t), self.temp(t)
            inc = self.cast(step, t)
            if up or down:
                cond = "%s %s %s" % (k, "<" if up else ">", e)
            else:
                inc = self.temp(t)
                self.line("%s = %s;" % (inc, self.cast(step, t)))
                cond = "(%s > 0 ? %s < %s : %s < 0 && %s > %s)" % (inc, k, e, inc, k, e)
            self.line("for (%s = %s, %s = %s; %s; %s += %s) {" % (k, self.cast(start, t), e, self.cast(stop, t),
                                                                  cond, k, inc))
            counter = V(k, t, nn)
        else:
            self.line("for (;;) {")
        self.indent += 1
        if s.target.id in self.arrays or s.target.id in self.params:
            self.fail(s, "the loop's name %s is already an array or parameter" % s.target.id)
        self.set_var(s.target.id, counter, s)
        self.loops += 1
        self.block(s.body)
        self.loops -= 1
        self.indent -= 1
        self.line("}")

    def s_Break(self, s):
        self.line("break;")

    def s_Continue(self, s):
        self.line("continue;")

    def s_Return(self, s):
        if s.value is None or (isinstance(s.value, ast.Constant) and s.value.value is None):
            self.returns.append(None)
            self.line("return;")
            return
        if self.kernel:
            self.fail(s, "a kernel returns nothing; write its results into an array")
        v = self.scalar(self.expr(s.value), s)
        if isinstance(v.t, tuple):
            self.fail(s, "device functions here return one number, not a tuple")
        self.returns.append(v.t)
        if self.emit:
            self.line("return %s;" % self.cast(v, self.ret))

    # ---- expressions ----

    def _kind(self, v):
        return "array" if isinstance(v, ArrV) else "tuple" if isinstance(v, V) and isinstance(v.t, tuple) else \
            "%r" % (v.obj,) if isinstance(v, Static) else "number"

    def scalar(self, v, s):
        if isinstance(v, V):
            return v
        if isinstance(v, ArrV):
            self.fail(s, "an array is used where a number is wanted")
        obj = v.obj
        if isinstance(obj, (list, dict, set, str)):
            self.fail(s, "a Python %s is not supported in kernels (use a tuple of numbers, or an array)"
                      % type(obj).__name__)
        self.fail(s, "%r is not a number a kernel can use" % (obj,))

    def expr(self, n):
        m = getattr(self, "e_" + type(n).__name__, None)
        if m is None:
            self.fail(n, "%s is not supported in kernels" % _WHAT.get(type(n).__name__, type(n).__name__))
        return m(n)

    def e_Constant(self, n):
        v = _const(n.value)
        if v is None:
            if isinstance(n.value, str):
                self.fail(n, "strings are not supported in kernels")
            self.fail(n, "the constant %r is not supported in kernels" % (n.value,))
        return v

    def e_Name(self, n):
        name = n.id
        if name in self.arrays:
            return self.arrays[name]
        if name in self.params:
            t = self.argtypes[self.params.index(name)]
            return V(name, t, t.kind in "ub")
        if name in self.assigned:
            t = self.vars.get(name)
            if t is None:
                if self.emit:
                    self.fail(n, "%s is used before it is given a value" % name)
                return V(None, None)
            if isinstance(t, tuple):
                return V([V("%s_%d" % (name, i), e, self.nn.get("%s_%d" % (name, i), False))
                          for i, e in enumerate(t)], t, False)
            return V(name, t, self.nn.get(name, False) or t.kind in "ub")
        if name in self.globals:
            obj = self.globals[name]
        elif name in builtins.__dict__:
            obj = builtins.__dict__[name]
        else:
            self.fail(n, "name %r is not defined" % name)
        return self.static(obj, n)

    def static(self, obj, n):
        v = _const(obj)
        if v is not None:
            return v
        if isinstance(obj, np.ndarray):
            self.fail(n, "a global NumPy array cannot be used in a kernel (pass it as an argument)")
        return Static(obj)

    def e_Attribute(self, n):
        base = self.expr(n.value)
        if isinstance(base, Static):
            if id(base.obj) in _SREG and n.attr in "xyz" and len(n.attr) == 1:
                return V("(int)%s(%d)" % (_SREG[id(base.obj)], "xyz".index(n.attr)), I4, True)
            if n.attr in ("warpsize", "laneid") and hasattr(base.obj, "syncthreads"):
                self.fail(n, "cuda.%s: warp intrinsics are not supported (warps are 32 wide on NVIDIA, 64 on "
                          "most AMD GPUs, and CPUs have none)" % n.attr)
            if not hasattr(base.obj, n.attr):
                self.fail(n, "%r has no attribute %r" % (base.obj, n.attr))
            return self.static(getattr(base.obj, n.attr), n)
        if isinstance(base, ArrV):
            if n.attr == "shape":
                return V([V(s, I8, True) for s in base.shape], (I8,) * base.t.ndim, True)
            if n.attr == "size":
                return V("(%s)" % " * ".join(base.shape) if base.shape else "1L", I8, True)
            if n.attr == "ndim":
                return _const(base.t.ndim)
            if n.attr == "dtype":
                return Static(base.t.dtype.type)
            if n.attr == "strides" and base.t.layout == "C":
                acc, out = [], str(base.t.dtype.itemsize) + "L"
                for s in reversed(base.shape):
                    acc.insert(0, V(out, I8, True))
                    out = "%s * %s" % (s, out)
                return V(acc, (I8,) * base.t.ndim, True)
            self.fail(n, "arrays in kernels have shape, size, ndim and dtype, not %s" % n.attr)
        if isinstance(base, V) and base.t is not None and not isinstance(base.t, tuple):
            if n.attr in ("real",):
                return base
            if n.attr == "imag":
                return V(_literal(0, base.t), base.t, True, 0)
        self.fail(n, "attribute %s of a %s" % (n.attr, self._kind(base)))

    def e_Tuple(self, n):
        items = [self.scalar(self.expr(e), n) for e in n.elts]
        consts = tuple(i.const for i in items)
        return V(items, tuple(i.t for i in items) if all(i.t is not None for i in items) else None,
                 all(i.nn for i in items), consts if all(c is not None for c in consts) else None)

    def e_List(self, n):
        self.fail(n, "a Python list is not supported in kernels (use cuda.local.array for an array of this "
                  "thread's own)")

    def e_Subscript(self, n):
        base = self.expr(n.value)
        if isinstance(base, ArrV):
            return self.load(base, self.element(base, n.slice, n))
        if isinstance(base, V) and isinstance(base.c, list):
            i = self.expr(n.slice)
            if not isinstance(i, V) or i.const is None or not isinstance(i.const, int):
                self.fail(n, "a tuple is indexed by a constant integer")
            if not -len(base.c) <= i.const < len(base.c):
                self.fail(n, "index %d of a tuple of %d" % (i.const, len(base.c)))
            return base.c[i.const]
        self.fail(n, "indexing a %s" % self._kind(base))

    def element(self, a, index, n):
        """The C expression of a's element at index (a tuple of integers, one per dimension)."""
        if isinstance(index, ast.Slice) or (isinstance(index, ast.Tuple) and
                                            any(isinstance(e, ast.Slice) for e in index.elts)):
            self.fail(n, "slices of arrays are not supported in kernels; index each element")
        v = self.scalar(self.expr(index), n)
        items = v.c if isinstance(v.c, list) else [v]
        if v.t is None or any(i.t is None for i in items):
            return None
        if len(items) != a.t.ndim:
            self.fail(n, "%d indices into a %d-D array: index every dimension (a row or a slice of an array "
                      "is not supported in kernels)" % (len(items), a.t.ndim))
        parts = []
        for d, i in enumerate(items):
            if i.t.kind not in "biu":
                self.fail(n, "arrays are indexed by integers, not %s" % i.t)
            c = _paren(i.c)  # C widens it beside the long shape
            if not i.nn:
                if i.const is not None:
                    c = "(%s + %s)" % (c, a.shape[d])
                else:
                    self.module.helper("wrap", _HELPERS["wrap"])
                    c = "gp__wrap(%s, %s)" % (c, a.shape[d])
            parts.append(c)
        if a.strides is not None:
            return " + ".join("%s * %s" % (_paren(p), s) for p, s in zip(parts, a.strides))
        lin = parts[0]
        for p, s in zip(parts[1:], a.shape[1:]):
            lin = "%s * %s + %s" % (_paren(lin), s, p)
        return lin

    def load(self, a, ref):
        if ref is None:
            return V(None, a.t.dtype)
        if a.t.dtype == B1:
            return V("(%s[%s] != 0)" % (a.ptr, ref), B1, True)
        return V("%s[%s]" % (a.ptr, ref), a.t.dtype, a.t.dtype.kind in "ub")

    def put(self, a, ref, v):
        if ref is not None and v.t is not None:
            self.line("%s[%s] = %s;" % (a.ptr, ref, self.cast(v, a.t.dtype) if a.t.dtype != B1 else
                                        "(uchar)(%s)" % self.truth(v, None)))

    def store(self, a, target, v, s):
        if isinstance(v.t, tuple):
            self.fail(s, "an array element takes a number, not a tuple")
        self.put(a, self.element(a, target.slice, s), v)

    def cast(self, v, t):
        if v.t == t or t is None:
            return v.c
        if v.const is not None and not isinstance(v.const, tuple):
            if t == B1:
                return _literal(bool(v.const), B1)
            if t.kind in "iu" and isinstance(v.const, float):
                return "((%s)%s)" % (_ctype(t), v.c)
            return _literal(v.const, t)
        if t == B1:
            return "(%s != 0)" % v.c
        return "(%s)%s" % (_ctype(t), _paren(v.c))

    def truth(self, v, s):
        if not isinstance(v, V) or isinstance(v.t, tuple):
            self.fail(s, "the truth of a %s" % self._kind(v))
        if v.t is None or v.t == B1:
            return v.c
        return "%s != 0" % _paren(v.c)

    def e_BoolOp(self, n):
        vals = [self.expr(e) for e in n.values]
        if any(isinstance(v, V) and v.t is None for v in vals):
            return V(None, None)
        op = " && " if isinstance(n.op, ast.And) else " || "  # (Python's and/or of numbers: their truth)
        return V("(%s)" % op.join(self.truth(v, n) for v in vals), B1, True)

    def e_UnaryOp(self, n):
        v = self.scalar(self.expr(n.operand), n)
        if v.t is None:
            return V(None, None)
        if isinstance(n.op, ast.Not):
            return V("!(%s)" % self.truth(v, n), B1, True)
        if isinstance(n.op, ast.Invert):
            if v.t == B1:
                return V("!%s" % _paren(v.c), B1, True)
            if v.t.kind not in "iu":
                self.fail(n, "~ of %s" % v.t)
            t = _widen(v.t)
            return V("~%s" % _paren(self.cast(v, t)), t)
        t = _widen(v.t)
        if isinstance(n.op, ast.UAdd):
            return V(self.cast(v, t), t, v.nn, v.const)
        if v.const is not None:
            return _const(-v.const) if not isinstance(v.const, bool) else _const(-int(v.const))
        return V("-%s" % _paren(self.cast(v, t)), t)

    def e_BinOp(self, n):
        a, b = self.scalar(self.expr(n.left), n), self.scalar(self.expr(n.right), n)
        return self.binop(type(n.op), a, b, n)

    def binop(self, op, a, b, n):
        if a.t is None or b.t is None:
            return V(None, None)
        if isinstance(a.t, tuple) or isinstance(b.t, tuple):
            self.fail(n, "arithmetic on tuples")
        sym = _OPS.get(op)
        if sym is None:
            self.fail(n, "the operator %s is not supported in kernels" % op.__name__)
        if a.const is not None and b.const is not None and op not in (ast.Div, ast.FloorDiv, ast.Mod, ast.Pow):
            try:
                r = _PYOPS[op](a.const, b.const)
                t = _arith(a.t, b.t) if op not in (ast.BitAnd, ast.BitOr, ast.BitXor) or a.t != B1 or \
                    b.t != B1 else B1
                return V(_literal(r, t), t, r >= 0, t.type(r).item() if t.kind in "iuf" else r)
            except (OverflowError, TypeError, ValueError):
                pass
        if op in (ast.BitAnd, ast.BitOr, ast.BitXor) and a.t == B1 and b.t == B1:
            return V("(%s %s %s)" % (a.c, sym, b.c), B1, True)
        t = _arith(a.t, b.t)
        if op in (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift):
            if t.kind not in "iu":
                self.fail(n, "%s of %s and %s (bitwise operators take integers)" % (sym, a.t, b.t))
            nn = (a.nn and b.nn) or (op is ast.BitAnd and (a.nn or b.nn)) or (op is ast.RShift and a.nn)
            return V("(%s %s %s)" % (self.cast(a, t), sym, self.cast(b, t)), t, nn)
        if op is ast.Div:
            t = F8 if t.kind in "iu" else t
            return V("(%s / %s)" % (self.cast(a, t), self.cast(b, t)), t, a.nn and b.nn)
        if op is ast.Pow:
            return self.power(a, b, n)
        c = _ctype(t)
        if op in (ast.FloorDiv, ast.Mod) and t.kind in "iu" and a.nn and b.const is not None and b.const > 0:
            return V("(%s %s %s)" % (self.cast(a, t), "/" if op is ast.FloorDiv else "%", self.cast(b, t)), t, True)
        if op is ast.FloorDiv:
            if t.kind == "f":
                return V("floor(%s / %s)" % (self.cast(a, t), self.cast(b, t)), t, a.nn and b.nn)
            self.module.helper("floordiv_" + c, _helper_floordiv(c))
            return V("gp__floordiv_%s(%s, %s)" % (c, self.cast(a, t), self.cast(b, t)), t, a.nn and b.nn)
        if op is ast.Mod:
            self.module.helper("mod_" + c, _helper_mod(c))
            return V("gp__mod_%s(%s, %s)" % (c, self.cast(a, t), self.cast(b, t)), t, b.nn)
        nn = a.nn and b.nn and op is not ast.Sub
        return V("(%s %s %s)" % (self.cast(a, t), sym, self.cast(b, t)), t, nn)

    def power(self, a, b, n):
        if b.t.kind in "biu":
            t = _widen(a.t)
            if b.const is not None and 0 <= b.const <= 3 and _simple(a.c):
                c = self.cast(a, t)
                return V({0: _literal(1, t), 1: c, 2: "(%s * %s)" % (c, c), 3: "(%s * %s * %s)" % (c, c, c)}
                         [b.const], t, a.nn or b.const % 2 == 0)
            if t.kind in "iu" and b.const is not None and b.const < 0:
                t = F8
            c = _ctype(t)
            self.module.helper("powi_" + c, _helper_powi(c))
            return V("gp__powi_%s(%s, %s)" % (c, self.cast(a, t), self.cast(b, I8)), t, a.nn)
        t = _arith(a.t, b.t)
        return V("pow(%s, %s)" % (self.cast(a, t), self.cast(b, t)), t, a.nn)

    def e_Compare(self, n):
        left = self.scalar(self.expr(n.left), n)
        parts = []
        for op, right in zip(n.ops, n.comparators):
            r = self.scalar(self.expr(right), n)
            sym = _CMP.get(type(op))
            if sym is None:
                self.fail(n, "the comparison %s is not supported in kernels" % type(op).__name__)
            if left.t is None or r.t is None:
                return V(None, B1, True)
            if isinstance(left.t, tuple) or isinstance(r.t, tuple):
                self.fail(n, "comparing tuples")
            t = _arith(left.t, r.t) if not (left.t == B1 and r.t == B1) else B1
            parts.append("%s %s %s" % (_paren(self.cast(left, t)), sym, _paren(self.cast(r, t))))
            left = r
        return V(parts[0] if len(parts) == 1 else "(%s)" % " && ".join("(%s)" % p for p in parts), B1, True)

    def e_IfExp(self, n):
        c = self.truth(self.expr(n.test), n)
        a, b = self.scalar(self.expr(n.body), n), self.scalar(self.expr(n.orelse), n)
        if a.t is None or b.t is None:
            return V(None, a.t or b.t)
        t = _promote(a.t, b.t) if a.t != b.t else a.t
        return V("(%s ? %s : %s)" % (c, self.cast(a, t), self.cast(b, t)), t, a.nn and b.nn)

    def e_Call(self, n):
        f = self.expr(n.func)
        if not isinstance(f, Static):
            self.fail(n, "calling a %s" % self._kind(f))
        obj = f.obj
        kwargs = {k.arg: k.value for k in n.keywords}
        if obj is shared.array or obj is local.array:
            return self.new_array(n, obj is shared.array, kwargs)
        if obj is grid or obj is gridsize:
            if kwargs or len(n.args) != 1:
                self.fail(n, "cuda.%s takes one argument, the number of dimensions" % obj.name)
            d = self.expr(n.args[0])
            if not isinstance(d, V) or d.const not in (1, 2, 3):
                self.fail(n, "cuda.%s(n) takes n = 1, 2 or 3, a constant" % obj.name)
            fn = "gp_global_id" if obj is grid else "gp_global_size"
            items = [V("(long)%s(%d)" % (fn, i), I8, True) for i in range(d.const)]
            return items[0] if d.const == 1 else V(items, (I8,) * d.const, True)
        if obj is syncthreads:
            if n.args or kwargs:
                self.fail(n, "cuda.syncthreads() takes no arguments")
            return V("gp_barrier()", None)
        if isinstance(obj, _Intrinsic) and obj.name.startswith("atomic."):
            return self.atomic(n, obj.name[7:])
        if isinstance(obj, _Intrinsic):
            self.fail(n, "cuda.%s is not supported in kernels" % obj.name)
        args = [self.expr(a) for a in n.args]
        args = [a if isinstance(a, ArrV) else self.scalar(a, n) for a in args]
        if getattr(obj, "_gp_device_function", False):
            if kwargs:
                self.fail(n, "device functions take positional arguments")
            return self.call_device(obj, args, n)
        if getattr(obj, "_gp_kernel", False):
            self.fail(n, "%s is a kernel; a kernel calls device functions (@cuda.jit(device=True)), not kernels"
                      % obj.__name__)
        if kwargs:
            self.fail(n, "keyword arguments to %s" % getattr(obj, "__name__", obj))
        if any(isinstance(a, V) and a.t is None for a in args):
            return V(None, None)
        return self.builtin(obj, args, n)

    def builtin(self, obj, args, n):
        name = getattr(obj, "__name__", None)
        mod = getattr(obj, "__module__", None) or ""
        if obj is len and len(args) == 1 and isinstance(args[0], ArrV):
            return V(args[0].shape[0], I8, True)
        is_math = obj is getattr(math, name or "", None)
        is_np = isinstance(obj, np.ufunc) or (mod.startswith("numpy") and obj is getattr(np, name or "", None))
        if any(isinstance(a, ArrV) for a in args):
            if is_math or is_np or obj in (abs, min, max, round, int, float, bool):
                self.fail(n, "%s takes numbers in kernels, not arrays" % name)
            self.fail(n, "call of an unknown function %s: kernels call math and NumPy functions, abs, min, max, "
                      "round, int, float and @cuda.jit(device=True) functions" % (name or repr(obj)))
        if obj in (abs, min, max, round, int, float, bool, len):
            return self.python_builtin(obj, args, n)
        if isinstance(obj, type) and issubclass(obj, np.generic) and np.dtype(obj) in CTYPES:
            if len(args) != 1:
                self.fail(n, "%s(x) takes one number" % name)
            t = np.dtype(obj)
            return V(self.cast(args[0], t), t, args[0].nn and t.kind != "f" or args[0].nn)
        if is_math and name in _MATH_INT and len(args) == 1:
            if args[0].t.kind in "biu":
                return V(self.cast(args[0], I8), I8, args[0].nn)
            return V("(long)%s(%s)" % (_MATH_INT[name], args[0].c), I8, args[0].nn)
        if (is_math and name in _MATH_BOOL) or (is_np and name in _MATH_BOOL):
            t = args[0].t if args[0].t.kind == "f" else F8
            return V("(%s(%s) != 0)" % (name, self.cast(args[0], t)), B1, True)
        if is_math and name in ("degrees", "radians"):
            t = args[0].t if args[0].t.kind == "f" else F8
            k = 180 / math.pi if name == "degrees" else math.pi / 180
            return V("(%s * %s)" % (self.cast(args[0], t), _literal(k, t)), t)
        table1, table2 = (_MATH1, _MATH2) if is_math else (_NP1, _NP2) if is_np else ({}, {})
        if name in table1 and len(args) == 1:
            t = args[0].t if args[0].t.kind == "f" else F8
            if is_np and name in ("floor", "ceil", "trunc"):
                return V("%s(%s)" % (name, self.cast(args[0], t)), t, args[0].nn)
            return V("%s(%s)" % (self.math_name(table1[name], t), self.cast(args[0], t)), t,
                     name in ("sqrt", "exp", "fabs", "absolute", "cosh", "exp2", "erfc"))
        if name in table2 and len(args) == 2:
            t = _arith(args[0].t, args[1].t)
            t = t if t.kind == "f" else F8
            return V("%s(%s, %s)" % (self.math_name(table2[name], t), self.cast(args[0], t), self.cast(args[1], t)),
                     t, name == "hypot")
        if is_math or is_np:
            self.fail(n, "%s.%s is not supported in kernels (or not with %d arguments)"
                      % ("math" if is_math else "numpy", name, len(args)))
        if obj is range:
            self.fail(n, "range() is taken only by a for loop")
        self.fail(n, "call of an unknown function %s: kernels call math and NumPy functions, abs, min, max, round, "
                  "int, float and @cuda.jit(device=True) functions" % (name or repr(obj)))

    def math_name(self, c, t):
        if self.module.fastmath and t == F4 and c in _FAST:
            self.module.helper("fast", _FAST_MACROS)
            return "gp__fast_" + _FAST[c]
        return c

    def python_builtin(self, obj, args, n):
        if obj is len:
            self.fail(n, "len() of a number")
        if obj in (min, max):
            if len(args) < 2:
                self.fail(n, "%s() takes two or more numbers in kernels" % obj.__name__)
            t = args[0].t
            for a in args[1:]:
                t = _promote(t, a.t) if t != a.t else t
            c = _ctype(t)
            key = "min" if obj is min else "max"
            self.module.helper("%s_%s" % (key, c), _HELPERS[key] % {"c": c})
            out = self.cast(args[0], t)
            for a in args[1:]:
                out = "gp__%s_%s(%s, %s)" % (key, c, out, self.cast(a, t))
            nn = all(a.nn for a in args) if obj is min else any(a.nn for a in args)
            return V(out, t, nn)
        if len(args) != 1:
            self.fail(n, "%s() takes one number in kernels" % obj.__name__)
        a = args[0]
        if obj is abs:
            if a.t.kind == "f":
                return V("fabs(%s)" % a.c, a.t, True)
            t = _widen(a.t)
            if a.t.kind in "ub":
                return V(self.cast(a, t), t, True)
            self.module.helper("max_long", _HELPERS["max"] % {"c": "long"})
            return V("(%s < 0 ? -%s : %s)" % ((self.cast(a, t),) * 3) if _simple(a.c) else
                     "gp__max_long(%s, -%s)" % (self.cast(a, t), _paren(self.cast(a, t))), t, True)
        if obj is round:
            if a.t.kind != "f":
                return V(self.cast(a, I8), I8, a.nn)
            return V("(long)rint(%s)" % a.c, I8, a.nn)
        if obj is int:
            return V(self.cast(a, I8) if a.t != I8 else a.c, I8, a.nn)
        if obj is float:
            return V(self.cast(a, F8), F8, a.nn)
        return V(self.truth(a, n), B1, True)

    def new_array(self, n, is_shared, kwargs):
        what = "cuda.shared.array" if is_shared else "cuda.local.array"
        names = ["shape", "dtype"]
        given = dict(zip(names, n.args))
        for k, v in kwargs.items():
            if k not in names or k in given:
                self.fail(n, "%s(shape, dtype) has no argument %r" % (what, k))
            given[k] = v
        if len(given) != 2:
            self.fail(n, "%s takes a shape and a dtype" % what)
        shape = self.expr(given["shape"])
        dims = shape.const if isinstance(shape, V) else None
        dims = (dims,) if isinstance(dims, int) else dims
        if not isinstance(dims, tuple) or not all(isinstance(d, int) and d >= 0 for d in dims):
            self.fail(n, "%s: the shape must be an integer or a tuple of them, each a constant (a literal or a "
                      "module-level name)" % what)
        dt = given["dtype"]
        dt = Static(dt.value) if isinstance(dt, ast.Constant) and isinstance(dt.value, str) else self.expr(dt)
        try:
            dtype = np.dtype(dt.obj if isinstance(dt, Static) else None if not isinstance(dt, V) else dt.const)
        except TypeError:
            dtype = None
        if dtype is None or dtype not in CTYPES or isinstance(dt, V) and dt.const is None:
            self.fail(n, "%s: dtype must be one of NumPy's integer, float or bool types" % what)
        if is_shared and not self.kernel:
            self.fail(n, "cuda.shared.array inside a device function: OpenCL allocates shared memory only in "
                      "kernels; make it in the kernel and pass it in")
        name = "gp__%s%d" % ("sh" if is_shared else "lo", len(self.arrays))
        c = CTYPES[dtype]
        if is_shared and dims == (0,):
            self.dynamic = ("gp__dyn", dtype)
            t = Arr(dtype, 1, "C", "local")
            return ArrV("((GP_LOCAL_PTR(%s))gp__dyn)" % c, t, ["(gp__dyn_bytes / %dL)" % dtype.itemsize])
        total = math.prod(dims)
        if total == 0:
            self.fail(n, "%s of no elements" % what)
        if self.emit:
            self.decls.append("%s%s %s[%d];" % ("GP_LOCAL " if is_shared else "", c, name, total))
            if is_shared:
                self.shared_bytes += total * dtype.itemsize
        t = Arr(dtype, len(dims), "C", "local" if is_shared else "private")
        return ArrV(name, t, ["%dL" % d for d in dims])

    def atomic(self, n, op):
        if n.keywords:
            self.fail(n, "cuda.atomic.%s takes positional arguments" % op)
        want = {"cas": 4, "compare_and_swap": 3}.get(op, 3)
        if len(n.args) != want:
            self.fail(n, "cuda.atomic.%s takes %d arguments" % (op, want))
        a = self.expr(n.args[0])
        if not isinstance(a, ArrV):
            self.fail(n, "cuda.atomic.%s works on an array element; the first argument is not an array" % op)
        if a.t.space == "private":
            self.fail(n, "cuda.atomic.%s on a cuda.local.array, which no other thread sees" % op)
        t = a.t.dtype
        if t not in _ATOMIC_TYPES:
            self.fail(n, "cuda.atomic.%s on %s: atomics take int32, uint32, int64, uint64, float32 and float64"
                      % (op, t))
        if op == "compare_and_swap":
            idx, rest = ast.Constant(0, lineno=n.lineno, col_offset=0), n.args[1:]
            if a.t.ndim != 1:
                self.fail(n, "cuda.atomic.compare_and_swap takes a 1-D array (its element 0)")
        else:
            idx, rest = n.args[1], n.args[2:]
        ref = self.element(a, idx, n)
        vals = [self.scalar(self.expr(v), n) for v in rest]
        if ref is None or any(v.t is None for v in vals):
            return V(None, t)
        ptr = "&%s[%s]" % (a.ptr, ref)
        if op in ("cas", "compare_and_swap"):
            if t.kind == "f":
                self.fail(n, "cuda.atomic.%s takes integer arrays" % op)
            if t.itemsize == 4:
                return V("gp_atomic_cas(%s, %s, %s)" % (ptr, self.cast(vals[0], t), self.cast(vals[1], t)), t)
            self.module.helper("bits", _BITS)
            return V("(%s)gp__cas64((GP_GLOBAL ulong *)%s, (ulong)%s, (ulong)%s)" % (
                CTYPES[t], ptr, _paren(self.cast(vals[0], t)), _paren(self.cast(vals[1], t))), t) \
                if a.t.space == "global" else V("(%s)gp__cas64((GP_LOCAL_PTR(ulong))%s, (ulong)%s, (ulong)%s)" % (
                    CTYPES[t], ptr, _paren(self.cast(vals[0], t)), _paren(self.cast(vals[1], t))), t)
        if op in ("and_", "or_", "xor") and t.kind == "f":
            self.fail(n, "cuda.atomic.%s takes integer arrays" % op)
        if op in ("inc", "dec") and t.kind != "u":
            self.fail(n, "cuda.atomic.%s takes uint32 or uint64 arrays, as Numba's" % op)
        name, text = _helper_atomic(op, t, a.t.space)
        if text is None:
            return V("%s(%s, %s)" % (_ATOMIC_NATIVE[op], ptr, self.cast(vals[0], t)), t)
        if t.kind == "f" or t.itemsize == 8:
            self.module.helper("bits", _BITS)
        self.module.helper(name, text)
        return V("%s(%s, %s)" % (name, ptr, self.cast(vals[0], t)), t)

    def call_device(self, dispatcher, args, n):
        # a view's offset is applied to its pointer in the kernel already
        types = [Arr(a.t.dtype, a.t.ndim, a.t.layout, a.t.space) if isinstance(a, ArrV) else a.t for a in args]
        if any(t is None for t in types):
            return V(None, None)
        if any(isinstance(t, tuple) for t in types):
            self.fail(n, "device functions take numbers and arrays, not tuples")
        fn = dispatcher.py_func
        if fn in self.module.translating:
            self.fail(n, "%s calls itself, directly or through others: recursion is not supported in kernels"
                      % fn.__name__)
        nparams = fn.__code__.co_argcount
        if nparams != len(args):
            self.fail(n, "%s takes %d arguments, %d given" % (fn.__name__, nparams, len(args)))
        name, rt = translate_device(dispatcher, types, self.module)
        parts = []
        for a in args:
            if isinstance(a, ArrV):
                parts += [a.ptr] + a.shape + (a.strides or [])
            else:
                parts.append(a.c)
        return V("%s(%s)" % (name, ", ".join(parts)), rt)


def translate_device(dispatcher, types, module):
    """Translates a device function for argument types into module, once per signature; returns
    its C name and its return type (None: returns nothing)."""
    fn = dispatcher.py_func
    key = (fn, tuple(t.key() if isinstance(t, Arr) else t.str for t in types))
    if key not in module.names:
        name = "%s_%d" % (fn.__name__, len(module.names))
        module.translating.append(fn)
        try:
            tr = Translation(fn, list(types), module, False, name)
            if tr.dynamic is not None:
                tr.fail(tr.node, "dynamic shared memory (cuda.shared.array(0, ...)) belongs in the kernel")
        finally:
            module.translating.pop()
        module.functions[key] = tr.text()  # after the functions it calls
        module.names[key] = (name, tr.ret)
    return module.names[key]


def translate_kernel(fn, types, fastmath=False):
    """The dialect source of kernel fn for argument types; returns (source, kernel name, the
    Translation, which says about its dynamic shared memory and shared bytes)."""
    module = Module(fastmath)
    module.translating.append(fn)
    tr = Translation(fn, types, module, True, fn.__name__)
    if tr.dynamic is not None:
        tr.c_params += ["GP_LOCAL_ARG(ulong, gp__dyn)", "long gp__dyn_bytes"]
        tr.top.insert(0, "GP_LOCAL_BIND(ulong, gp__dyn);")
    return module.source(tr.text()), fn.__name__, tr


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
