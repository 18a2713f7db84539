"""The expressions of a Python kernel, typed and written as dialect C: names, constants,
operators with Python's semantics, indexing, calls of math functions, of cuda's intrinsics and
atomics, and of device functions. Translation (_jit.py) adds the statements and the passes."""
import ast
import builtins
import math

import numpy as np

from ._array import CTYPES
from ._jit_c import (_arith, Arr, ArrV, _ATOMIC_NATIVE, _ATOMIC_TYPES, B1, _BITS, _CMP, cname, _const, _ctype, F4, F8,
                     _FAST, _FAST_MACROS, grid, gridsize, _helper_atomic, _helper_floordiv, _helper_mod, _helper_powi,
                     _HELPERS, I4, I8, _Intrinsic, _literal, local, _MATH1, _MATH2, _MATH_BOOL, _MATH_INT, _NP1, _NP2,
                     _OPS, _paren, _promote, _PYOPS, shared, _simple, _SREG, Static, syncthreads, V, _WHAT, _widen)


class Expressions:
    """The expression half of a Translation (it provides fail, line, module and the variables)."""

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
            return V(cname(name), t, t.kind in "ub")
        if name in self.assigned:
            t = self.vars.get(name)
            if t is None:
                if self.emit:
                    self.fail(n, "%s is used before it is given a value" % name)
                return V(None, None)
            if isinstance(t, tuple):
                return V([V("%s_%d" % (cname(name), i), e, self.nn.get("%s_%d" % (name, i), False))
                          for i, e in enumerate(t)], t, False)
            return V(cname(name), t, self.nn.get(name, False) or t.kind in "ub")
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
        name, rt = self.device_function(dispatcher, types)
        parts = []
        for a in args:
            if isinstance(a, ArrV):
                parts += [a.ptr] + a.shape + (a.strides or [])
            else:
                parts.append(a.c)
        return V("%s(%s)" % (name, ", ".join(parts)), rt)
