"""Numba's CUDA names on every gpuport device: `@cuda.jit` kernels and device functions (translated
by _jit.py), launches `kernel[blocks, threads, stream, shared_bytes](args)`, and the host side
(to_device, device_array, pinned and mapped arrays, streams, events). Device arrays are gpuport
arrays. docs/numba.md lists what is supported beside Numba's own."""
import ctypes
import os
import re
import sys
import threading

import numpy as np

from . import _jit, _jit_c
from ._array import Array, MemoryPointer, MemoryPool, _wrap_cuda, asarray, check_dtype, empty, off_default_stream
from ._device import Event, Stream, _Cuda, _handle_out, device as _device, devices, get_current_stream
from ._ffi import CONSTANTS as _C, RECORDS as _R, OutOfMemoryError, check as _check, lib as _lib
from ._primitives import Program

_VALUE = {np.dtype(t): ctypes.__dict__[c] for t, c in (
    (np.int8, "c_int8"), (np.uint8, "c_uint8"), (np.int16, "c_int16"), (np.uint16, "c_uint16"),
    (np.int32, "c_int32"), (np.uint32, "c_uint32"), (np.int64, "c_int64"), (np.uint64, "c_uint64"),
    (np.float32, "c_float"), (np.float64, "c_double"))}
_VALUE[np.dtype(np.bool_)] = ctypes.c_uint8
_GP_TYPE = {np.dtype(np.float32): "GP_F32", np.dtype(np.float64): "GP_F64", np.dtype(np.int32): "GP_I32",
            np.dtype(np.uint32): "GP_U32", np.dtype(np.int64): "GP_I64", np.dtype(np.uint64): "GP_U64"}
_I8 = np.dtype(np.int64)


def _debug_compile():
    return "compile" in os.environ.get("GPUPORT_DEBUG", "").split(",")


# ---- host arrays in pinned and mapped memory -------------------------------------------------

class _HostBuffer:
    """A pinned or mapped gpuport buffer, kept mapped for the NumPy array over it."""

    def __init__(self, dev, kind, nbytes):
        self.dev, self.kind = dev, kind
        self.buf = _handle_out(_lib.gp_buffer_create, dev._h, _C[kind], max(nbytes, 1))
        self.host = self.map()

    def map(self, stream=None):
        p = ctypes.c_void_p()
        _check(_lib.gp_buffer_map(stream, self.buf, ctypes.byref(p)))
        return p.value

    def __del__(self, _unmap=_lib.gp_buffer_unmap, _destroy=_lib.gp_buffer_destroy):
        if getattr(self, "buf", None):
            _unmap(None, self.buf)
            _destroy(self.buf)
            self.buf = None


class HostArray(np.ndarray):
    """A NumPy array in pinned or mapped host memory (cuda.pinned_array, cuda.mapped_array). A
    kernel given a mapped one reads and writes it in place; a pinned one is copied, faster."""

    def __array_finalize__(self, obj):
        self._gp = None  # views and results of arithmetic are plain host memory to gpuport


def _host_array(kind, shape, dtype):
    dtype = check_dtype(dtype)
    dev = _device()
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    hb = _HostBuffer(dev, kind, nbytes)
    raw = (ctypes.c_byte * max(nbytes, 1)).from_address(hb.host)
    a = np.frombuffer(raw, dtype=np.uint8, count=nbytes).view(dtype).reshape(shape).view(HostArray)
    a._gp = hb
    return a


# ---- eager signatures ("void(float32[:], int32)") ---------------------------------------------

_NAMES = {"float32": np.float32, "float64": np.float64, "f4": np.float32, "f8": np.float64, "int8": np.int8,
          "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8, "uint16": np.uint16,
          "uint32": np.uint32, "uint64": np.uint64, "i4": np.int32, "i8": np.int64, "u4": np.uint32,
          "u8": np.uint64, "intp": np.int64, "uintp": np.uint64, "boolean": np.bool_, "bool_": np.bool_,
          "b1": np.bool_, "double": np.float64, "float_": np.float64}


def _parse_signature(sig):
    if not isinstance(sig, str):
        raise TypeError("gpuport: a signature is a string such as \"void(float32[:], int32)\", not %r" % (sig,))
    m = re.fullmatch(r"\s*(\w*)\s*\((.*)\)\s*", sig)
    if not m:
        raise TypeError("gpuport: cannot read the signature %r (write it as \"void(float32[:], int32)\")" % sig)
    types = []
    for part in re.findall(r"\w+\s*(?:\[[^\]]*\])?", m.group(2)):
        name, _, dims = part.partition("[")
        name = name.strip()
        if name not in _NAMES:
            raise TypeError("gpuport: signature %r: unknown type %r" % (sig, name))
        if dims:
            axes = [d.strip() for d in dims.rstrip("] ").split(",")]
            layout = "C" if axes[-1] == "::1" else "A"
            types.append(_jit_c.Arr(_NAMES[name], len(axes), layout))
        else:
            types.append(np.dtype(_NAMES[name]))
    return types


# ---- kernels ---------------------------------------------------------------------------------

class _Compiled:
    """One specialisation of a kernel on one device: its program and the argument slots a
    launch fills (gp_arg records whose value slots stay where they are)."""

    def __init__(self, dispatcher, dev, types):
        source, name, tr = _jit.translate_kernel(dispatcher.py_func, types, dispatcher.fastmath)
        if _debug_compile():
            sys.stderr.write("gpuport: kernel %s(%s) on %s, in the kernel dialect:\n%s" % (
                name, ", ".join(_jit_c.type_name(t) for t in types), dev.spec, source))
        self.source, self.dev, self.types = source, dev, types
        self.shared_bytes, self.dynamic = tr.shared_bytes, tr.dynamic is not None
        if self.shared_bytes > dev.info["local_mem_bytes"]:
            raise ValueError("gpuport: %s: the kernel's shared memory (%d bytes) is more than %s has for a block "
                             "(%d bytes)" % (name, self.shared_bytes, dev.name, dev.info["local_mem_bytes"]))
        self.program = Program(source, device=dev)
        self.kernel = _handle_out(_lib.gp_kernel_create, self.program._h, name.encode())
        slots, self.plan = [], []  # plan: per argument, its kind and the slots it fills
        for t in types:
            if isinstance(t, _jit_c.Arr):
                first = len(slots)
                slots.append(None)
                n = t.ndim * (2 if t.layout != "C" else 1) + (1 if t.offset else 0)
                slots += [_I8] * n
                self.plan.append(("a", first, t))
            else:
                self.plan.append(("s", len(slots), t))
                slots.append(t)
        if self.dynamic:
            slots += ["local", _I8]
        self.nargs = len(slots)
        self.args = (_R["gp_arg"] * max(self.nargs, 1))()
        self.values = []
        for i, s in enumerate(slots):
            a = self.args[i]
            if s is None:
                a.kind = _C["GP_ARG_BUFFER"]
                self.values.append(None)
            elif s == "local":
                a.kind = _C["GP_ARG_LOCAL"]
                self.values.append(None)
            else:
                v = _VALUE[s]()
                a.kind, a.value, a.size = _C["GP_ARG_VALUE"], ctypes.addressof(v), ctypes.sizeof(v)
                a.type = _C[_GP_TYPE[s]] if s in _GP_TYPE else 0
                self.values.append(v)
        self.lock = threading.Lock()
        self.checked = set()

    def __del__(self, _destroy=_lib.gp_kernel_destroy):
        if getattr(self, "kernel", None):
            _destroy(self.kernel)
            self.kernel = None

    def check(self, cfg):
        """Refuses a launch shape or shared memory the device cannot take, in words."""
        dev, info = self.dev, self.dev.info
        threads = int(np.prod(cfg.threads))
        if threads > info["max_work_group_size"]:
            raise ValueError("gpuport: %d threads in a block (%s), more than %s takes (%d)"
                             % (threads, "x".join(map(str, cfg.threads)), dev.name, info["max_work_group_size"]))
        for d, (t, most) in enumerate(zip(cfg.threads, info["max_work_item_sizes"])):
            if t > most:
                raise ValueError("gpuport: %d threads in dimension %d of a block, more than %s takes (%d)"
                                 % (t, d, dev.name, most))
        shared = self.shared_bytes + (cfg.shared if self.dynamic else 0)
        if shared > info["local_mem_bytes"]:
            raise ValueError("gpuport: the kernel's shared memory (%d bytes%s) is more than %s has for a block "
                             "(%d bytes)" % (shared, ", %d of them dynamic" % cfg.shared if self.dynamic else "",
                                             dev.name, info["local_mem_bytes"]))
        self.checked.add(cfg.key)


class _Config:
    """A launch shape: kernel[blocks, threads] or [blocks, threads, stream, shared_bytes]."""

    def __init__(self, dispatcher, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise TypeError("gpuport: a launch is kernel[blocks, threads], kernel[blocks, threads, stream] or "
                            "kernel[blocks, threads, stream, dynamic_shared_bytes]")
        blocks, threads = (self._dims(c, what) for c, what in zip(config[:2], ("blocks", "threads")))
        dims = max(len(blocks), len(threads))
        self.blocks, self.threads = blocks + (1,) * (dims - len(blocks)), threads + (1,) * (dims - len(threads))
        self.stream = _stream_arg(config[2]) if len(config) > 2 else None
        if self.stream is not None and not isinstance(self.stream, Stream):
            raise TypeError("gpuport: the launch's stream is a cuda.stream() (or 0), not %r" % (self.stream,))
        self.shared = int(config[3]) if len(config) > 3 else 0
        if self.shared < 0:
            raise ValueError("gpuport: dynamic shared memory of %d bytes" % self.shared)
        self.dims = dims
        self.global_ = (ctypes.c_size_t * dims)(*[b * t for b, t in zip(self.blocks, self.threads)])
        self.local = (ctypes.c_size_t * dims)(*self.threads)
        self.key = (self.blocks, self.threads, self.shared)
        self.dispatcher = dispatcher

    @staticmethod
    def _dims(c, what):
        given = c
        c = (c,) if not isinstance(c, (tuple, list)) else tuple(c)
        if not 1 <= len(c) <= 3:
            raise ValueError("gpuport: %s has %d dimensions; a launch takes 1 to 3" % (what, len(c)))
        if not all(isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) and x >= 1 for x in c):
            raise ValueError("gpuport: %s must be a positive integer or a tuple of up to three, not %r"
                             % (what, given))
        return tuple(int(x) for x in c)

    def __call__(self, *args):
        return self.dispatcher._launch(self, args)


def _is_zero(s):
    return isinstance(s, int) and s == 0


class Dispatcher:
    """A @cuda.jit function: a kernel launched as kernel[blocks, threads](args), translated and
    compiled for each device and set of argument types at its first launch (or at once for an
    eager signature), then cached like every gpuport kernel."""

    def __init__(self, fn, device=False, fastmath=False, signatures=None):
        self.py_func, self.fastmath, self.__name__ = fn, fastmath, fn.__name__
        self.__doc__, self.__wrapped__ = fn.__doc__, fn
        self._gp_device_function, self._gp_kernel = device, not device
        self._specs, self._configs = {}, {}
        self._sigs = [_parse_signature(s) for s in signatures] if signatures else None
        if self._sigs:
            for types in self._sigs:
                if len(types) != fn.__code__.co_argcount:
                    raise TypeError("gpuport: the signature of %s has %d arguments, the function %d"
                                    % (fn.__name__, len(types), fn.__code__.co_argcount))
            if not device:
                for types in self._sigs:
                    self._compiled(_device(), tuple(types))

    def __getitem__(self, config):
        if self._gp_device_function:
            raise TypeError("gpuport: %s is a device function (device=True): kernels call it; the host launches "
                            "kernels" % self.__name__)
        c = self._configs.get(config) if isinstance(config, tuple) and len(config) == 2 else None
        if c is None:
            c = _Config(self, config)
            if isinstance(config, tuple) and len(config) == 2:
                try:
                    self._configs[config] = c
                except TypeError:
                    pass
        return c

    def __call__(self, *args):
        if self._gp_device_function:
            raise TypeError("gpuport: %s is a device function: call it from a kernel" % self.__name__)
        raise TypeError("gpuport: %s is a kernel: launch it with a shape, %s[blocks, threads](...)"
                        % (self.__name__, self.__name__))

    def _compiled(self, dev, types):
        key = (dev.spec, tuple(t.key() if isinstance(t, _jit_c.Arr) else t.str for t in types))
        c = self._specs.get(key)
        if c is None:
            c = self._specs[key] = _Compiled(self, dev, list(types))
        return c

    def inspect_source(self):
        """The dialect source of each specialisation compiled so far, by device and argument types."""
        return {(k[0], tuple(map(_jit_c.type_name, c.types))): c.source for k, c in self._specs.items()}

    def _arguments(self, args, dev, stream):
        """Each argument as (type, gpuport array or value); NumPy arrays are copied to the device
        (and listed for the copy back), mapped host arrays unmapped for the launch."""
        types, values, back, mapped = [], [], [], []
        for i, a in enumerate(args):
            if isinstance(a, Array):
                if a.device is not dev:
                    raise ValueError("gpuport: argument %d of %s is an array of %s; the kernel runs on %s"
                                     % (i, self.__name__, a.device.spec, dev.spec))
                arr = a
            elif isinstance(a, np.ndarray):
                hb = getattr(a, "_gp", None)
                if hb is not None and hb.kind == "GP_MEMORY_MAPPED":
                    if hb.dev is not dev:
                        raise ValueError("gpuport: argument %d of %s is mapped memory of %s; the kernel runs on %s"
                                         % (i, self.__name__, hb.dev.spec, dev.spec))
                    arr = Array(a.shape, a.dtype, device=dev, _buffer=hb.buf, _base=a)
                    if all(m is not hb for m in mapped):
                        mapped.append(hb)
                else:
                    check_dtype(a.dtype)
                    arr = asarray(a, device=dev, stream=stream)
                    if a.flags.writeable:
                        back.append((arr, a))
            elif isinstance(a, (bool, np.bool_)):
                types.append(np.dtype(np.bool_))
                values.append(bool(a))
                continue
            elif isinstance(a, int):
                types.append(_I8 if -2 ** 63 <= a < 2 ** 63 else np.dtype(np.uint64))
                values.append(a)
                continue
            elif isinstance(a, float):
                types.append(np.dtype(np.float64))
                values.append(a)
                continue
            elif isinstance(a, np.generic) and a.dtype in _VALUE:
                types.append(a.dtype)
                values.append(a.item())
                continue
            elif hasattr(a, "__cuda_array_interface__"):
                arr = _wrap_cuda(a, a.__cuda_array_interface__, None, dev)
            else:
                raise TypeError("gpuport: argument %d of %s is a %s; kernels take arrays (NumPy, gpuport, or "
                                "__cuda_array_interface__ on CUDA devices) and numbers"
                                % (i, self.__name__, type(a).__name__))
            if arr.dtype.kind == "c":
                raise TypeError("gpuport: argument %d of %s: arrays of %s are not supported by kernels written in "
                                "Python (bool, integers, float32, float64)" % (i, self.__name__, arr.dtype))
            types.append(_jit_c.Arr(arr.dtype, arr.ndim, "C" if arr.contiguous else "A", "global", arr._off != 0))
            values.append(arr)
        return types, values, back, mapped

    def _match(self, types, values):
        """The eager signature the arguments fit, with numbers converted to its types."""
        for sig in self._sigs:
            ok = all((isinstance(s, _jit_c.Arr) and isinstance(t, _jit_c.Arr) and s.dtype == t.dtype and
                      s.ndim == t.ndim and (s.layout == "A" or t.layout == "C")) or
                     (not isinstance(s, _jit_c.Arr) and not isinstance(t, _jit_c.Arr)) for s, t in zip(sig, types))
            if ok:
                return [(_jit_c.Arr(s.dtype, s.ndim, s.layout, "global", t.offset) if isinstance(s, _jit_c.Arr) else s)
                        for s, t in zip(sig, types)]
        raise TypeError("gpuport: no signature of %s matches the arguments (%s); it takes %s"
                        % (self.__name__, ", ".join(map(_jit_c.type_name, types)),
                           " or ".join("(%s)" % ", ".join(map(_jit_c.type_name, s)) for s in self._sigs)))

    def _launch(self, cfg, args):
        nparams = self.py_func.__code__.co_argcount
        if len(args) != nparams:
            raise TypeError("gpuport: %s takes %d arguments, %d given" % (self.__name__, nparams, len(args)))
        dev = cfg.stream.device if cfg.stream is not None else _device()
        types, values, back, mapped = self._arguments(args, dev, cfg.stream)
        if self._sigs:
            types = self._match(types, values)
        c = self._compiled(dev, types)
        if cfg.key not in c.checked:
            c.check(cfg)
        stream = cfg.stream._h if cfg.stream is not None else None
        for hb in mapped:
            _check(_lib.gp_buffer_unmap(stream, hb.buf))
        try:
            with c.lock:
                self._fill(c, values, cfg)
                _check(_lib.gp_kernel_launch(stream, c.kernel, cfg.dims, cfg.global_, cfg.local, c.nargs, c.args))
        finally:
            for hb in mapped:
                if hb.map(stream) != hb.host:
                    raise RuntimeError("gpuport: the driver mapped the host array at another address after the "
                                       "launch; use cuda.to_device instead of mapped memory on this device")
        if cfg.stream is not None:
            off_default_stream(*[v for v in values if isinstance(v, Array)])
        for arr, host in back:  # as Numba: NumPy arrays come back when the kernel is done
            arr.get(cfg.stream, out=host) if host.flags.c_contiguous else host.__setitem__(..., arr.get(cfg.stream))

    @staticmethod
    def _fill(c, values, cfg):
        args, slots = c.args, c.values
        for (kind, first, t), v in zip(c.plan, values):
            if kind == "s":
                slots[first].value = v
                continue
            args[first].buffer = v._buf
            k = first + 1
            for n in v.shape:
                slots[k].value = n
                k += 1
            if t.layout != "C":
                for s in v._st:
                    slots[k].value = s
                    k += 1
            if t.offset:
                slots[k].value = v._off
        if c.dynamic:
            args[c.nargs - 2].size = max(cfg.shared, 16)
            c.values[c.nargs - 1].value = cfg.shared


def jit(func_or_sig=None, device=False, fastmath=False, **options):
    """Numba's cuda.jit: @cuda.jit, @cuda.jit(device=True), @cuda.jit(fastmath=True), and eager
    signatures, @cuda.jit("void(float32[:], int32)"). debug, opt, lineinfo, cache, inline and
    max_registers are taken and change nothing (every kernel is cached)."""
    unknown = set(options) - {"debug", "opt", "lineinfo", "cache", "inline", "max_registers", "link", "boundscheck"}
    if unknown:
        raise TypeError("gpuport: cuda.jit has no option %s" % ", ".join(sorted(unknown)))
    if callable(func_or_sig) and not isinstance(func_or_sig, str):
        return Dispatcher(func_or_sig, device, fastmath)
    sigs = None if func_or_sig is None else [func_or_sig] if isinstance(func_or_sig, str) else list(func_or_sig)

    def decorate(fn):
        return Dispatcher(fn, device, fastmath, sigs)
    return decorate


# ---- the rest of Numba's cuda module ---------------------------------------------------------

def _stream_arg(stream):
    return None if stream is None or _is_zero(stream) or stream is Stream.null else stream


class _NumbaCuda(_Cuda):
    """gpuport.cuda: CuPy's names (Device, Stream, Event) and Numba's (jit, grid, shared, atomic,
    to_device, ...) side by side, for lessons written for either."""

    jit = staticmethod(jit)
    TypingError = _jit_c.TypingError
    grid, gridsize, syncthreads = _jit_c.grid, _jit_c.gridsize, _jit_c.syncthreads
    threadIdx, blockIdx, blockDim, gridDim = _jit_c.threadIdx, _jit_c.blockIdx, _jit_c.blockDim, _jit_c.gridDim
    shared, local, atomic = _jit_c.shared, _jit_c.local, _jit_c.atomic
    MemoryPointer = MemoryPointer  # CuPy's (x.data, RawModule.get_global)

    @staticmethod
    def to_device(obj, stream=0, copy=True, to=None):
        """A device copy of a NumPy array (a gpuport array: itself, or to= filled)."""
        s = _stream_arg(stream)
        if to is not None:
            to.copy_to_device(obj, stream=s)
            return to
        return asarray(obj, stream=s) if not isinstance(obj, Array) else obj

    @staticmethod
    def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
        if strides is not None or order != "C":
            raise ValueError("gpuport: device arrays are made in C order")
        return empty(shape, dtype)

    @staticmethod
    def device_array_like(ary, stream=0):
        return empty(ary.shape, ary.dtype)

    @staticmethod
    def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
        """A NumPy array in page-locked memory: copies to and from the device run faster."""
        return _host_array("GP_MEMORY_PINNED", shape, dtype)

    @staticmethod
    def mapped_array(shape, dtype=np.float64, strides=None, order="C", stream=0, portable=False, wc=False):
        """A NumPy array in host memory that kernels read and write in place (the launch waits for
        the kernel before the host sees it again)."""
        return _host_array("GP_MEMORY_MAPPED", shape, dtype)

    @staticmethod
    def pinned_array_like(ary):
        return _host_array("GP_MEMORY_PINNED", ary.shape, ary.dtype)

    @staticmethod
    def mapped_array_like(ary, stream=0, portable=False, wc=False):
        return _host_array("GP_MEMORY_MAPPED", ary.shape, ary.dtype)

    @staticmethod
    def default_stream():
        return Stream.null

    legacy_default_stream = per_thread_default_stream = default_stream

    @staticmethod
    def synchronize():
        _device().synchronize()

    @staticmethod
    def event(timing=True):
        return Event()

    @staticmethod
    def event_elapsed_time(start, end):
        return start.elapsed_ms(end)

    @staticmethod
    def is_available():
        return bool(devices())

    @staticmethod
    def select_device(i):
        return devices()[i].use()

    @staticmethod
    def get_current_device():
        return _device()

    @staticmethod
    def detect():
        for i, d in enumerate(devices()):
            print("id %d    %s (%s, %s)" % (i, d.name, d.spec, d.type))
        return bool(devices())

    @staticmethod
    def close():
        pass


class _Runtime:
    """cuda.runtime: CuPy's getDeviceCount, over every gpuport device."""

    @staticmethod
    def getDeviceCount():
        return len(devices())


class _Memory:
    """cuda.memory: CuPy's OutOfMemoryError, raised on every backend's out-of-memory."""

    OutOfMemoryError = OutOfMemoryError


def alloc_pinned_memory(nbytes):
    """CuPy's cuda.alloc_pinned_memory: nbytes of page-locked host memory, for
    np.frombuffer(memory, dtype, count)."""
    hb = _HostBuffer(_device(), "GP_MEMORY_PINNED", nbytes)
    memory = type("PinnedMemory", (ctypes.c_byte * int(nbytes),), {}).from_address(hb.host)
    memory._gp = hb  # keeps the buffer for as long as the memory is used
    return memory


class _StreamModule:
    """cuda.stream: Numba's function (cuda.stream() makes a stream) and CuPy's module
    (cuda.stream.Stream, cuda.stream.Event, cuda.stream.get_current_stream) at once."""

    Stream, Event = Stream, Event

    def __call__(self):
        return Stream()

    @staticmethod
    def get_current_stream():
        return get_current_stream()


class PinnedMemoryPool:
    """CuPy's PinnedMemoryPool: malloc(nbytes) gives page-locked host memory (alloc_pinned_memory)."""

    @staticmethod
    def malloc(nbytes):
        return alloc_pinned_memory(nbytes)


def _set_allocator(allocator=None, what="set_allocator", pool=MemoryPool):
    """CuPy's allocator settings: gpuport's own pool is the allocator, so only its own (a pool's
    malloc) or None is taken."""
    if allocator is not None and getattr(allocator, "__qualname__", None) != pool.__name__ + ".malloc":
        raise NotImplementedError("gpuport.cuda.%s: gpuport allocates from its own pool; pass None or %s().malloc"
                                  % (what, pool.__name__))


_NumbaCuda.runtime, _NumbaCuda.memory, _NumbaCuda.stream = _Runtime(), _Memory(), _StreamModule()
_NumbaCuda.alloc_pinned_memory = staticmethod(alloc_pinned_memory)
_NumbaCuda.MemoryPool, _NumbaCuda.PinnedMemoryPool = MemoryPool, PinnedMemoryPool
_NumbaCuda.set_allocator = staticmethod(lambda allocator=None: _set_allocator(allocator))
_NumbaCuda.set_pinned_memory_allocator = staticmethod(
    lambda allocator=None: _set_allocator(allocator, "set_pinned_memory_allocator", PinnedMemoryPool))
cuda = _NumbaCuda()
