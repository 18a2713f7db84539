"""Kernels written in Python as Numba's CUDA target takes them (`@cuda.jit`), translated to the
kernel dialect: the function's ast, typed from the launch's arguments as Numba types them (an
integer is int64, a float literal float64, int32 + int32 is int64, float32 * 2.0 is float64),
emitted as dialect source a person can read (GPUPORT_DEBUG=compile prints it). This file holds
the statements and the passes; _jit_expr.py the expressions; _jit_c.py the types and the C
pieces; _numba.py the host side: the decorator, launches, device arrays. docs/numba.md lists
the subset."""
import ast

import numpy as np

from ._array import CTYPES
from ._jit_c import (Arr, ArrV, B1, cname, _ctype, I8, Module, _OPS, _promote, _source, Static, type_name, TypingError,
                     U8, V, _WHAT)
from ._jit_expr import Expressions


class Translation(Expressions):
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
        params = []
        for name, t in zip(self.params, self.argtypes):
            if isinstance(t, Arr):
                c = cname(name)
                shape = ["%s_n%d" % (c, d) for d in range(t.ndim)]
                strides = ["%s_s%d" % (c, d) for d in range(t.ndim)] if t.layout != "C" else None
                self.arrays[name] = ArrV(c, t, shape, strides)
                params.append(self._pointer_decl(t, c))
                params += ["long %s" % s for s in shape + (strides or [])]
                if t.offset:
                    params.append("long %s_off" % c)
                    self.top.append("%s += %s_off;" % (c, c))
            elif isinstance(t, np.dtype):
                flag = t == B1 and self.kernel  # a kernel's bool arrives as a byte
                c = cname(name)
                params.append("%s %s" % ("uchar" if flag else _ctype(t), c + ("_b" if flag else "")))
                if flag:
                    self.top.append("bool %s = %s_b != 0;" % (c, c))
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
                decls += ["    %s %s_%d;" % (_ctype(e), cname(v), i) for i, e in enumerate(t)]
            elif t is not None:
                decls.append("    %s %s;" % (_ctype(t), cname(v)))
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
            self.line(("(void)%s;" if v.t is not None else "%s;") % v.c)

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
                    self.line("%s = %s;" % (cname(name), self.cast(v, t)))
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
                    self.line("%s_%d = %s;" % (cname(name), i, self.cast(item, t[i])))
            return
        if v.t is None:
            return
        old = self.vars.get(name)
        if isinstance(old, tuple):
            self.fail(s, "%s holds a tuple elsewhere" % name)
        self.vars[name] = v.t if old is None else _promote(old, v.t)
        self.nn[name] = self.nn.get(name, True) and v.nn
        self.line("%s = %s;" % (cname(name), self.cast(v, self.vars[name])))

    def s_AugAssign(self, s):
        op = type(s.op)
        if isinstance(s.target, ast.Name):
            if s.target.id in self.arrays:
                self.fail(s, "%s names an array: update its elements, %s[...] %s= ..." % (
                    s.target.id, s.target.id, _OPS.get(op, "?")))
            cur = self.expr(ast.Name(s.target.id, ast.Load(), lineno=s.lineno, col_offset=0))
            self.assign(s.target, self.binop(op, cur, self.scalar(self.expr(s.value), s), s), s)
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
        self.block(s.body)
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
        self.block(s.body)
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

    def device_function(self, dispatcher, types):
        return translate_device(dispatcher, types, self.module)


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
    tr = Translation(fn, types, module, True, cname(fn.__name__))
    if tr.dynamic is not None:
        tr.c_params += ["GP_LOCAL_ARG(ulong, gp__dyn)", "long gp__dyn_bytes"]
        tr.top.insert(0, "GP_LOCAL_BIND(ulong, gp__dyn);")
    return module.source(tr.text()), tr.name, tr
