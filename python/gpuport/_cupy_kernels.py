"""CuPy's ElementwiseKernel and ReductionKernel, with CuPy's signatures: parameters as "float32 x,
T y, raw T z", the operation in CUDA C, type placeholders bound by the arguments. Each is written
out as a CUDA C kernel, built per device and binding by gp_program_create_cuda (NVRTC as written on
CUDA, translated on OpenCL), and kept."""
import re

import numpy as np

from ._array import Array, asarray, check_dtype, empty, normalize_axis
from ._device import device as _device
from ._primitives import Kernel
from ._raw import _CudaProgram

# (Kernels are named cupy_<name>: a name such as dot is one of OpenCL's functions.)
# NumPy's type names as CUDA C writes them (bool arrays hold a byte each).
_C_TYPES = {"bool": "unsigned char", "int8": "signed char", "uint8": "unsigned char", "int16": "short",
            "uint16": "unsigned short", "int32": "int", "uint32": "unsigned int", "int64": "long long",
            "uint64": "unsigned long long", "float32": "float", "float64": "double"}
_PARAM = re.compile(r"\s*(raw\s+)?([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*$")
_BLOCK = 256


def _params(text, what):
    """[(name, type name, dtype or None for a placeholder, raw)] of "float32 x, raw T y"."""
    out = []
    for part in text.split(",") if text.strip() else []:
        m = _PARAM.match(part)
        if not m:
            raise ValueError("gpuport.%s: cannot read the parameter '%s' (write 'float32 x', 'T x' or 'raw T x')"
                             % (what, part.strip()))
        raw, tname, name = m.groups()
        dtype = np.dtype(tname) if tname in _C_TYPES else None
        if name in [p[0] for p in out]:
            raise ValueError("gpuport.%s: the parameter name '%s' is used twice" % (what, name))
        out.append((name, tname, dtype, bool(raw)))
    return out


def _bind(what, params, args, types):
    """Binds the placeholders to the arrays' dtypes, then to the scalars' (NumPy's result_type)."""
    for array_pass in (True, False):
        for (name, tname, dtype, raw), a in zip(params, args):
            if a is None or isinstance(a, Array) != array_pass or dtype is not None:
                continue
            t = a.dtype if array_pass else np.result_type(a)
            if np.dtype(t).kind == "c":
                raise TypeError("gpuport.%s: %s is %s; complex types are not supported in kernels of your own"
                                % (what, name, t))
            if tname not in types:
                types[tname] = check_dtype(t)
            elif array_pass and types[tname] != t:
                raise TypeError("gpuport.%s: %s is %s, but %s is already %s" % (what, name, t, tname, types[tname]))


def _type_of(p, types, what):
    name, tname, dtype, raw = p
    if dtype is not None:
        return dtype
    if tname not in types:
        raise TypeError("gpuport.%s: the type %s of %s is not known: pass an array for it" % (what, tname, name))
    return types[tname]


def _typedefs(types):
    return "".join("typedef %s %s;\n" % (_C_TYPES[t.name], name) for name, t in sorted(types.items()))


def _inputs(what, params, args):
    """The arguments as arrays of their parameter's dtype (numbers stay numbers) and the device."""
    out, dev = [], None
    for (name, tname, dtype, raw), a in zip(params, args):
        if not isinstance(a, Array) and (raw or hasattr(a, "__array_interface__") or isinstance(a, (list, tuple))):
            a = asarray(a)
        if isinstance(a, Array):
            if dev is not None and a.device is not dev:
                raise ValueError("gpuport.%s: %s is on %s, the other arrays on %s" % (what, name, a.device.spec,
                                                                                   dev.spec))
            dev = a.device
            if dtype is not None and a.dtype != dtype:
                a = a.astype(dtype)
        elif not np.isscalar(a) and not (isinstance(a, np.ndarray) and a.ndim == 0):
            raise TypeError("gpuport.%s: %s takes an array or a number, not %s" % (what, name, type(a).__name__))
        out.append(a)
    return out, dev or _device()


def _flat(a, shape):
    """a broadcast to shape, contiguous and at its buffer's start (a copy where it is not)."""
    if a.shape != shape:
        a = a.broadcast_to(shape)
    return a if a.contiguous and not a._off else a.copy()


def _value_param(name, dtype):
    """A number's parameter and the local it becomes (kernels take values of 32 and 64 bits)."""
    c = _C_TYPES[dtype.name]
    if dtype.itemsize < 4:
        return "int _v_%s" % name, "    const %s %s = (%s)_v_%s;\n" % (c, name, c, name)
    return "%s %s" % (c, name), ""


class _Compiled:
    """Kernels kept per device and binding: the CUDA C program and its kernels."""

    def __init__(self):
        self._kept = {}

    def get(self, key, dev, source, names, options):
        """The kernels of key; source() writes the program the first time."""
        k = self._kept.get(key)
        if k is None:
            program = _CudaProgram(source(), options, dev)
            k = self._kept[key] = tuple(Kernel(program, n) for n in names)
        return k


def _index_type(n):
    return "int" if n < 1 << 30 else "long long"  # i + the loop's step stays below 2^31


def _launch_size(n, dev):
    """Work-items for a grid-stride loop over n: all of them, up to 1024 groups per compute unit."""
    cap = _BLOCK * 1024 * max(dev.info["compute_units"], 1)
    return max(min(n, cap), 1)


class ElementwiseKernel:
    """CuPy's ElementwiseKernel(in_params, out_params, operation, name): operation is CUDA C over
    the elements of the parameters (raw ones are whole arrays, indexed by i), for every index i of
    the broadcast shape; outputs not given are made. Call it with the inputs, then optionally the
    outputs; size= gives the length where every array is raw."""

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True, preamble="",
                 no_return=False, return_tuple=False, loop_prep="", after_loop="", options=()):
        self.in_params, self.out_params = _params(in_params, "ElementwiseKernel"), _params(out_params,
                                                                                         "ElementwiseKernel")
        if not self.out_params:
            raise ValueError("gpuport.ElementwiseKernel: out_params names no output")
        if set(p[0] for p in self.in_params) & set(p[0] for p in self.out_params):
            raise ValueError("gpuport.ElementwiseKernel: a name is both an input and an output")
        self.operation, self.name, self.preamble = operation, name, preamble
        self.loop_prep, self.after_loop, self.options = loop_prep, after_loop, tuple(options)
        self.no_return, self.return_tuple = no_return, return_tuple
        self.nin, self.nout = len(self.in_params), len(self.out_params)
        self.nargs = self.nin + self.nout
        self._compiled, self._plans = _Compiled(), {}

    def _source(self, dtypes, types, scalars, index):
        params, body, store = [], [], []
        for p, t in zip(self.in_params + self.out_params, dtypes):
            name, raw, c, out = p[0], p[3], _C_TYPES[t.name], p in self.out_params
            if raw:
                params.append("%s%s * __restrict__ %s" % ("" if out else "const ", c, name))
            elif name in scalars:
                decl, local = _value_param(name, t)
                params.append(decl)
                body.append(local)
            else:
                params.append("%s%s * __restrict__ _p_%s" % ("" if out else "const ", c, name))
                body.append("    %s%s %s = _p_%s[i];\n" % ("" if out else "const ", c, name, name))
                if out:
                    store.append("    _p_%s[i] = %s;\n" % (name, name))
        op = self.operation.replace("_ind.size()", "_n")
        return ("%s%s\nextern \"C\" __global__ void %s(%s, %s _n)\n{\n%s\n"
                "for (%s i = (%s)blockIdx.x * blockDim.x + threadIdx.x; i < _n; i += (%s)blockDim.x * gridDim.x) {\n"
                "%s%s;\n%s}\n%s\n}\n" % (_typedefs(types), self.preamble, "cupy_" + self.name, ", ".join(params), index,
                                         self.loop_prep, index, index, index, "".join(body), op, "".join(store),
                                         self.after_loop))

    def _shape(self, ins, outs, size):
        """The inputs' broadcast shape, or the outputs' (which inputs broadcast to), or (size,)."""
        ins = [a.shape for p, a in zip(self.in_params, ins) if isinstance(a, Array) and not p[3]]
        outs = [o.shape for p, o in zip(self.out_params, outs) if o is not None and not p[3]]
        if not ins and not outs:
            if size is None:
                raise ValueError("gpuport.ElementwiseKernel: every argument is raw or a number; give size=")
            return (int(size),)
        try:
            shape = np.broadcast_shapes(*ins) if ins else outs[0]
        except ValueError:
            raise ValueError("gpuport.ElementwiseKernel %s: the inputs' shapes %s do not broadcast together"
                             % (self.name, ", ".join(map(str, ins)))) from None
        grown = outs and len(outs[0]) >= len(shape) and all(
            s in (1, o) for s, o in zip(shape[::-1], outs[0][::-1]))  # the inputs broadcast to the output
        return outs[0] if grown else shape

    def __call__(self, *args, size=None, stream=None):
        # A call like one before (arrays of the same shapes and types, contiguous from their start)
        # reuses its plan, the kernel and the launch shape.
        key = None
        if size is None and all(type(a) is Array and not a._off and a.contiguous for a in args):
            key = tuple((a.device.spec, a.shape, a.dtype) for a in args)
        plan = self._plans.get(key) if key is not None else None
        if plan is None:
            plan, call, outs = self._plan(args, size)
            if key is not None and all(c is a for c, a in zip(call, args)):
                self._plans[key] = plan
        else:
            outs = list(args[self.nin:]) or [empty(plan[1], d, plan[3]) for d in plan[2]]
            call = list(args[:self.nin]) + outs
        kernel, shape, _, dev, n, global_size = plan
        if n:
            kernel(*call, n, global_size=global_size, stream=stream)
        if self.no_return:
            return None
        return tuple(outs) if self.nout > 1 or self.return_tuple else outs[0]

    def _plan(self, args, size):
        """The kernel and launch shape of a call, its arguments as the kernel takes them, and its outputs."""
        what = "ElementwiseKernel"
        if len(args) not in (self.nin, self.nargs):
            raise TypeError("gpuport.%s %s: takes %d inputs (and optionally %d outputs), %d arguments given"
                            % (what, self.name, self.nin, self.nout, len(args)))
        ins, dev = _inputs(what, self.in_params, args[:self.nin])
        outs = list(args[self.nin:]) or [None] * self.nout
        for p, o in zip(self.out_params, outs):
            if o is not None and not isinstance(o, Array):
                raise TypeError("gpuport.%s: the output %s must be a gpuport array" % (what, p[0]))
        if not any(isinstance(a, Array) for a in ins):
            dev = next((o.device for o in outs if o is not None), dev)
        types = {}
        _bind(what, self.in_params + self.out_params, ins + outs, types)
        dtypes = [_type_of(p, types, what) for p in self.in_params + self.out_params]
        shape = self._shape(ins, outs, size)
        n = int(np.prod(shape))
        scalars = {p[0] for p, a in zip(self.in_params, ins) if not isinstance(a, Array)}
        for i, (p, o) in enumerate(zip(self.out_params, outs)):
            if o is None:
                outs[i] = empty(shape, dtypes[self.nin + i], dev)
            elif not p[3] and (o.shape != shape or not o.contiguous or o._off):
                raise ValueError("gpuport.%s: the output %s has shape %s; the inputs broadcast to %s (and it must "
                                 "be contiguous)" % (what, p[0], o.shape, shape))
        call = [a if p[3] or not isinstance(a, Array) else _flat(a, shape) for p, a in zip(self.in_params, ins)]
        call += [o if p[3] or o.contiguous and not o._off else o.copy() for p, o in zip(self.out_params, outs)]
        index = _index_type(n)
        key = (dev.spec, index, tuple(d.str for d in dtypes), tuple(sorted(scalars)))
        kernel, = self._compiled.get(key, dev, lambda: self._source(dtypes, types, scalars, index),
                                     ["cupy_" + self.name], self.options)
        return (kernel, shape, dtypes[self.nin:], dev, n, _launch_size(n, dev)), call, outs


def _reduction_source(name, params, dtypes, types, rtype, map_expr, reduce_expr, post_map, identity, preamble,
                      index, columns):
    ins = ", ".join("const %s * __restrict__ _p_%s" % (_C_TYPES[t.name], p[0]) for p, t in zip(params[:-1], dtypes))
    loads = "".join("            const %s %s = _p_%s[i];\n" % (_C_TYPES[t.name], p[0], p[0])
                    for p, t in zip(params[:-1], dtypes))

    def join(a, b, to):  # b first: an input may be named a or b
        return "{ _type_reduce _b = %s; { _type_reduce a = %s, b = _b; %s = (_type_reduce)(%s); } }" % (
            b, a, to, reduce_expr)

    tree = ("    __shared__ _type_reduce _s[%d];\n    _s[threadIdx.x] = _acc;\n    __syncthreads();\n"
            "    for (unsigned int _h = blockDim.x / 2; _h > 0; _h >>= 1) {\n"
            "        if (threadIdx.x < _h) %s\n        __syncthreads();\n    }\n"
            % (_BLOCK, join("_s[threadIdx.x]", "_s[threadIdx.x + _h]", "_s[threadIdx.x]")))
    def value(u):  # the u-th element ahead, mapped: four are loaded at once, then joined in order
        return ("            _type_reduce _v%d;\n            { %s i = _columns ? (_j + %d * _step) * _rows + _m : "
                "_m * _k + _j + %d * _step;\n%s            _v%d = (_type_reduce)(%s); }\n"
                % (u, index, u, u, loads, u, map_expr))

    loop = ("        for (; _j + 3 * _step < _k; _j += 4 * _step) {\n" + "".join(value(u) for u in range(4))
            + "".join("            %s\n" % join("_acc", "_v%d" % u, "_acc") for u in range(4)) + "        }\n"
            "        for (; _j < _k; _j += _step) {\n" + value(0) + "            %s\n" % join("_acc", "_v0", "_acc")
            + "        }\n    }\n")
    out_c, out_name = _C_TYPES[dtypes[-1].name], params[-1][0]
    finish = ("        if (_parts == 1) { _type_reduce a = _s[0]; %s %s; %s; _p_%s[_m] = %s; }\n"
              "        else _partial[blockIdx.x] = _s[0];\n" % (out_c, out_name, post_map, out_name, out_name))
    # rows: _m's elements lie at _m * _k + j; columns: at j * _rows + _m, for _rows outputs side by side
    return ("#define _columns %d\n%stypedef %s _type_reduce;\n%s\n"
            "extern \"C\" __global__ void %s(%s, %s * __restrict__ _p_%s, _type_reduce * __restrict__ _partial,"
            " %s _k, %s _parts, %s _rows)\n{\n"
            "    %s _m = blockIdx.x / _parts, _part = blockIdx.x %% _parts;\n"
            "    _type_reduce _acc = (_type_reduce)(%s);\n"
            "    if (_columns) _m = (%s)blockIdx.x / _parts * blockDim.x + threadIdx.x;\n"
            "    if (!_columns || _m < _rows) {\n"
            "        %s _j = _columns ? _part : _part * (%s)blockDim.x + threadIdx.x, _step = _columns ? _parts : "
            "_parts * (%s)blockDim.x;\n"
            "%s"
            "    if (_columns) {\n"
            "        if (_m >= _rows) return;\n"
            "        if (_parts == 1) { _type_reduce a = _acc; %s %s; %s; _p_%s[_m] = %s; }\n"
            "        else _partial[_part * _rows + _m] = _acc;\n"
            "        return;\n    }\n%s"
            "    if (threadIdx.x == 0) {\n%s    }\n}\n"
            "extern \"C\" __global__ void %s_parts(const _type_reduce * __restrict__ _partial, %s * __restrict__ _p_%s,"
            " %s _parts, %s _rows)\n{\n"
            "    %s _m = _columns ? (%s)blockIdx.x * blockDim.x + threadIdx.x : blockIdx.x;\n"
            "    _type_reduce _acc = (_type_reduce)(%s);\n"
            "    if (_columns) {\n"
            "        if (_m >= _rows) return;\n"
            "        for (%s _j = 0; _j < _parts; _j++) %s\n"
            "        { _type_reduce a = _acc; %s %s; %s; _p_%s[_m] = %s; }\n"
            "        return;\n    }\n"
            "    for (%s _j = threadIdx.x; _j < _parts; _j += blockDim.x) %s\n%s"
            "    if (threadIdx.x == 0) { _type_reduce a = _s[0]; %s %s; %s; _p_%s[_m] = %s; }\n}\n"
            % (int(columns), _typedefs(types), rtype, preamble, name, ins, out_c, out_name, index, index, index, index, identity,
               index, index, index, index, loop,
               out_c, out_name, post_map, out_name, out_name, tree, finish,
               name, out_c, out_name, index, index, index, index, identity, index,
               join("_acc", "_partial[_j * _rows + _m]", "_acc"), out_c, out_name, post_map, out_name, out_name,
               index, join("_acc", "_partial[_m * _parts + _j]", "_acc"), tree, out_c, out_name, post_map, out_name,
               out_name))


class ReductionKernel:
    """CuPy's ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
    name, reduce_type): map_expr maps the inputs' elements, reduce_expr joins two such values a and
    b, post_map_expr writes the output from the result a. Call it with the inputs, axis= and
    keepdims=; the reduced axes are the last or the first (other axes are moved there by a copy)."""

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity, name="reduce_kernel",
                 reduce_type=None, reduce_dims=True, preamble="", options=()):
        what = "ReductionKernel"
        self.in_params, self.out_params = _params(in_params, what), _params(out_params, what)
        if len(self.out_params) != 1 or any(p[3] for p in self.in_params + self.out_params):
            raise ValueError("gpuport.ReductionKernel: takes one output and no raw parameters")
        if identity is None:
            raise ValueError("gpuport.ReductionKernel: give the identity (the value of an empty reduction)")
        self.map_expr, self.reduce_expr, self.post_map_expr = map_expr, reduce_expr, post_map_expr
        self.identity, self.name, self.reduce_type = str(identity), name, reduce_type
        self.preamble, self.options = preamble, tuple(options)
        self._compiled, self._plans = _Compiled(), {}

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None):
        # A call like one before (arrays of the same shapes, contiguous from their start) reuses its
        # plan, the kernels and the launch shape, without working them out again.
        key = None
        if out is None and all(type(a) is Array and not a._off and a.contiguous for a in args):
            key = (tuple((a.device.spec, a.shape, a.dtype) for a in args),
                   tuple(axis) if isinstance(axis, list) else axis, keepdims)
        plan = self._plans.get(key) if key is not None else None
        if plan is None:
            plan, flat = self._plan(args, out, axis, keepdims)
            if key is not None and all(f is a for f, a in zip(flat, args)):
                self._plans[key] = plan
        else:
            flat = args
        first, parts_kernel, out_shape, out_dtype, dev, k, rows, parts, block, groups, size2, pdtype = plan
        result = out if out is not None else empty(out_shape, out_dtype, dev)
        if not rows:
            return result
        partial = empty(parts * rows if parts > 1 else 1, pdtype, dev)
        first(*flat, result, partial, k, parts, rows, global_size=groups * parts * block, local_size=block,
              stream=stream)
        if parts > 1:
            parts_kernel(partial, result, parts, rows, global_size=size2, local_size=_BLOCK, stream=stream)
        return result

    def _plan(self, args, out, axis, keepdims):
        """The kernels and launch shape of a call, and its inputs as the kernel takes them."""
        what = "ReductionKernel"
        if len(args) != len(self.in_params):
            raise TypeError("gpuport.%s %s: takes %d inputs, %d given" % (what, self.name, len(self.in_params),
                                                                          len(args)))
        ins, dev = _inputs(what, self.in_params, args)
        if not all(isinstance(a, Array) for a in ins):
            raise TypeError("gpuport.%s: every input must be an array" % what)
        types = {}
        _bind(what, self.in_params + self.out_params, ins + [out], types)
        dtypes = [_type_of(p, types, what) for p in self.in_params + self.out_params]
        shape = np.broadcast_shapes(*[a.shape for a in ins])
        axes = tuple(range(len(shape))) if axis is None else tuple(sorted(
            normalize_axis(a, len(shape)) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))))
        kept = [d for d in range(len(shape)) if d not in axes]
        out_shape = tuple(1 if d in axes else shape[d] for d in range(len(shape))) if keepdims else tuple(
            shape[d] for d in kept)
        k, rows = int(np.prod([shape[d] for d in axes])), int(np.prod([shape[d] for d in kept]))
        columns = bool(axes and kept and axes == tuple(range(len(axes))))  # reduced axes first: no copy
        order = kept + list(axes) if not columns else list(range(len(shape)))
        flat = [_flat(a, shape) if order == list(range(len(shape))) else _flat(a, shape).transpose(order).copy()
                for a in ins]
        if out is not None and (out.shape != out_shape or out.dtype != dtypes[-1] or not out.contiguous or out._off):
            raise ValueError("gpuport.%s: out must be a contiguous %s array of shape %s" % (what, dtypes[-1], out_shape))
        if not rows:
            return (None, None, out_shape, dtypes[-1], dev, k, rows, 0, 0, 0, 0, None), flat
        rtype = self.reduce_type if self.reduce_type in types else self.reduce_type or self.out_params[0][1]
        rtype = _C_TYPES.get(rtype, rtype) if rtype not in types else rtype
        index = _index_type(max(k * rows, 1))
        key = (dev.spec, index, columns, tuple(d.str for d in dtypes))
        first, parts_kernel = self._compiled.get(key, dev, lambda: _reduction_source(
            "cupy_" + self.name, self.in_params + self.out_params, dtypes, types, rtype, self.map_expr,
            self.reduce_expr, self.post_map_expr, self.identity, self.preamble, index, columns),
            ["cupy_" + self.name, "cupy_%s_parts" % self.name], self.options)
        units = max(dev.info["compute_units"], 1)
        groups = -(-rows // _BLOCK) if columns else rows  # a group per row, or per 256 columns
        # a short row gets a smaller group (at least 16 elements a work-item): fewer barriers an element
        block = _BLOCK if columns else min(_BLOCK, max(32, 1 << (-(-k // 16) - 1).bit_length()))
        parts = max(1, min(-(-k // (block * (1 if columns else 4))), -(-8 * units // groups), 1024))
        return (first, parts_kernel, out_shape, dtypes[-1], dev, k, rows, parts, block, groups,
                (-(-rows // _BLOCK) if columns else rows) * _BLOCK, _rtype_dtype(rtype, types)), flat


def _rtype_dtype(rtype, types):
    """The dtype of the accumulator's C type, for the partial results' array."""
    if rtype in types:
        return types[rtype]
    named = {c: n for n, c in _C_TYPES.items() if n != "bool"}
    named.update({"unsigned long": "uint64", "long": "int64", "unsigned": "uint32", "size_t": "uint64"})
    if rtype not in named:
        raise TypeError("gpuport.ReductionKernel: reduce_type %s is not one of %s" % (rtype, ", ".join(sorted(named))))
    return np.dtype(named[rtype])
