"""gpuport.Array: an n-dimensional view (shape, strides, offset) of elements in a device buffer,
with NumPy's indexing and operators, and the functions that make arrays."""
import ctypes
import math
import numbers
import operator
import threading

import numpy as np

from ._device import _handle_out, _stream, device as _device, streams_current as _streams_current
from ._ffi import CONSTANTS as _C, RECORDS as _R, check as _check, lib as _lib

# The element types an array may hold, with their names in the kernel dialect.
CTYPES = {np.dtype(np.bool_): "uchar", np.dtype(np.int8): "char", np.dtype(np.uint8): "uchar",
          np.dtype(np.int16): "short", np.dtype(np.uint16): "ushort", np.dtype(np.int32): "int",
          np.dtype(np.uint32): "uint", np.dtype(np.int64): "long", np.dtype(np.uint64): "ulong",
          np.dtype(np.float32): "float", np.dtype(np.float64): "double", np.dtype(np.complex64): "gp_c64",
          np.dtype(np.complex128): "gp_c128"}
# ... and those the C primitives (gp_map, gp_reduce, gp_scan, gp_gemm) take, as gp_type.
GP_TYPES = {np.dtype(np.float32): _C["GP_F32"], np.dtype(np.float64): _C["GP_F64"], np.dtype(np.int32): _C["GP_I32"],
            np.dtype(np.uint32): _C["GP_U32"], np.dtype(np.int64): _C["GP_I64"], np.dtype(np.uint64): _C["GP_U64"]}
MAX_BYTES = (1 << 63) - 1


def check_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype not in CTYPES:
        raise TypeError("gpuport: arrays of %s are not supported (bool, int8, uint8, int16, uint16, int32, uint32, "
                        "int64, uint64, float32, float64, complex64, complex128)" % dtype)
    return dtype


def _shape(shape):
    given = shape
    if isinstance(shape, numbers.Integral) or (hasattr(shape, "__index__") and not isinstance(shape, (tuple, list))):
        shape = (shape,)
    try:
        if any(isinstance(s, (bool, np.bool_)) for s in shape):  # NumPy refuses them, though they are ints
            raise TypeError
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError("gpuport: a shape is an integer or a tuple of integers, not %r" % (given,)) from None
    if any(s < 0 for s in shape):
        raise ValueError("gpuport: negative dimensions are not allowed: %s" % (shape,))
    return shape


def c_strides(shape):
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= s
    return tuple(reversed(st))


class _Pool:
    """Device memory of arrays that are gone, kept for the next array of the same rounded size on
    that device, as CuPy's memory pool keeps it: freeing device memory waits for the device
    (cuMemFree does), which would stall a loop of small operations at every temporary. Only
    memory used on its device's default stream comes back here: work on that stream runs in
    order, so the next array's work runs after the last one's. At most a quarter of the device's
    memory (and 2 GiB) is kept; gp.free_memory() gives it back. One lock guards it, so that
    free_memory, garbage collection and arrays made on other threads never share or destroy a
    buffer that another array holds; reentrant, since collecting an array (give) can happen while
    this thread holds it."""

    def __init__(self):
        self.free, self.kept, self.used = {}, {}, {}  # by device: handles by size, bytes kept, bytes in arrays
        self.lock = threading.RLock()

    @staticmethod
    def size(nbytes):
        return -(-max(nbytes, 1) // 512) * 512

    def take(self, dev, nbytes):
        size = self.size(nbytes)
        with self.lock:
            handles = self.free.get((dev.spec, size))
            if handles:
                self.kept[dev.spec] -= size
                self.used[dev.spec] += size
                return handles.pop()
        h = ctypes.c_void_p()
        status = _lib.gp_buffer_create(dev._h, _C["GP_MEMORY_DEVICE"], size, ctypes.byref(h))
        if status == _C["GP_ERROR_OUT_OF_DEVICE_MEMORY"] and self.kept.get(dev.spec):
            self.release(dev)
            status = _lib.gp_buffer_create(dev._h, _C["GP_MEMORY_DEVICE"], size, ctypes.byref(h))
        _check(status)
        with self.lock:
            self.used[dev.spec] = self.used.get(dev.spec, 0) + size
        return h

    def forget(self, dev, nbytes):
        """An array's memory is destroyed rather than kept."""
        with self.lock:
            self.used[dev.spec] -= self.size(nbytes)

    def give(self, dev, nbytes, handle, destroy):
        size = self.size(nbytes)
        limit = min(dev.info["global_mem_bytes"] // 4, 2 << 30)
        with self.lock:
            self.used[dev.spec] -= size
            if self.kept.get(dev.spec, 0) + size <= limit:
                self.free.setdefault((dev.spec, size), []).append(handle)
                self.kept[dev.spec] = self.kept.get(dev.spec, 0) + size
                return
        destroy(handle)

    def release(self, dev=None):
        with self.lock:
            gone = [(key, self.free.pop(key)) for key in list(self.free) if dev is None or key[0] == dev.spec]
            for (spec, _), _ in gone:
                self.kept[spec] = 0
        for _, handles in gone:  # outside the lock: destroying waits for the device
            for h in handles:
                _lib.gp_buffer_destroy(h)


_pool = _Pool()


def free_memory(device=None):
    """Gives the memory of arrays that are gone, which gpuport keeps for reuse, back to the
    device (every device for None)."""
    _pool.release(None if device is None else _device(device))


class MemoryPool:
    """CuPy's view of the memory pool, for the current device: used_bytes() in arrays,
    total_bytes() with what is kept for reuse, free_all_blocks() gives the kept part back."""

    def _spec(self):
        return _device().spec

    def used_bytes(self):
        return _pool.used.get(self._spec(), 0)

    def free_bytes(self):
        return _pool.kept.get(self._spec(), 0)

    def total_bytes(self):
        return self.used_bytes() + self.free_bytes()

    def n_free_blocks(self):
        spec = self._spec()
        with _pool.lock:
            return sum(len(h) for (s, _), h in _pool.free.items() if s == spec)

    def free_all_blocks(self, stream=None):
        free_memory(_device())

    def malloc(self, nbytes):
        """CuPy's allocator interface: nbytes of the current device, as a MemoryPointer."""
        return empty(int(nbytes), np.uint8).data


def get_default_memory_pool():
    return MemoryPool()


def off_default_stream(*arrays):
    """Marks the memory of arrays used on a stream of their own: it is not reused after them."""
    for a in arrays:
        while isinstance(a, Array):
            a._pool_ok = False
            a = a._base


class _Flags:
    """NumPy's flags of an array, the ones gpuport keeps: c_contiguous and writeable (False for a
    broadcast view, whose elements alias, and for views of a read-only array)."""

    def __init__(self, a):
        self._a = a

    c_contiguous = property(lambda self: self._a.contiguous)

    @property
    def writeable(self):
        return not self._a._ro

    @writeable.setter
    def writeable(self, value):
        a = self._a
        if value and (a._ro == "broadcast" or (isinstance(a._base, Array) and a._base._ro)):
            raise ValueError("cannot set WRITEABLE flag to True of this array")
        a._ro = False if value else True

    def __repr__(self):
        return "  C_CONTIGUOUS : %s\n  WRITEABLE : %s" % (self.c_contiguous, self.writeable)


def check_out(out, dtype, what, shape=None):
    """Refuses out= where NumPy does: not a gpuport array (TypeError), read-only (ValueError), a
    result of dtype that does not cast to it under same_kind (TypeError), another shape."""
    if not isinstance(out, Array):
        raise TypeError("gpuport: out must be a gpuport array, not %s" % type(out).__name__)
    if out._ro:
        raise ValueError("output array is read-only")
    if np.dtype(dtype) != out.dtype and not np.can_cast(dtype, out.dtype, "same_kind"):
        raise TypeError("Cannot cast %s output from %r to %r with casting rule 'same_kind'"
                        % (what, np.dtype(dtype), out.dtype))
    if shape is not None and tuple(shape) != out.shape:
        raise ValueError("gpuport.%s: out has shape %s, the result %s" % (what, out.shape, tuple(shape)))


class Array:
    """Elements of one dtype on one device: a view (shape, strides and offset, in elements) of a
    gpuport buffer, as a NumPy array is of its memory. Slicing, .T, reshape of a contiguous array
    and ravel make views that share the buffer; operators broadcast as NumPy's do and run as
    kernels on the device. get() (or gp.asnumpy(array)) copies it to a NumPy array; NumPy's
    functions and ufuncs given one run gpuport's (_protocols.py)."""

    def __init__(self, shape, dtype=np.float32, memptr=None, strides=None, order="C", *, device=None,
                 _buffer=None, _base=None, _strides=None, _offset=0):
        self.dtype = check_dtype(dtype)
        self.shape = _shape(shape)
        self.size = math.prod(self.shape)
        self.nbytes = self.size * self.dtype.itemsize
        if self.nbytes > MAX_BYTES:
            raise ValueError("gpuport: an array of shape %s and dtype %s would have %d bytes, more than 2^63 - 1"
                             % (self.shape, self.dtype, self.nbytes))
        if order not in ("C", "F"):
            raise ValueError("gpuport.ndarray: order is 'C' or 'F', not %r" % (order,))
        if order == "F" and _strides is None:
            _strides = c_strides(self.shape[::-1])[::-1]
        if memptr is not None:
            device, _buffer, _base, _strides, _offset = _over(memptr, self, strides, _strides)
        elif strides is not None:
            raise ValueError("gpuport.ndarray: strides= are for an array over memptr=")
        self.device = _device(device)
        self._base = _base  # what keeps the buffer alive: the array viewed, or another library's object
        self._st = tuple(_strides) if _strides is not None else c_strides(self.shape)
        self._off = _offset
        self._owned = _buffer is None
        self._pool_ok = True
        self._ro = False  # read-only: True, or "broadcast" for a view whose elements alias
        self._buf = _buffer if _buffer is not None else _pool.take(self.device, self.nbytes)

    def __del__(self, _destroy=_lib.gp_buffer_destroy, _pool=_pool, _current=_streams_current):
        # Bound at definition: when Python exits, module globals may already be gone.
        if getattr(self, "_owned", False) and getattr(self, "_buf", None):
            if self._pool_ok and not _current[0]:
                _pool.give(self.device, self.nbytes, self._buf, _destroy)
            else:
                _pool.forget(self.device, self.nbytes)
                _destroy(self._buf)  # safe while work is queued: it finishes first
            self._buf = None

    ndim = property(lambda self: len(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    strides = property(lambda self: tuple(s * self.dtype.itemsize for s in self._st))
    flags = property(lambda self: _Flags(self))
    T = property(lambda self: self.transpose())
    mT = property(lambda self: self.swapaxes(-1, -2))

    @property
    def real(self):
        """The real parts: a view of a complex array, the array itself otherwise (as NumPy's)."""
        return self._part(0) if self.dtype.kind == "c" else self

    @property
    def imag(self):
        """The imaginary parts: a view of a complex array; zeros (read-only) otherwise."""
        if self.dtype.kind == "c":
            return self._part(1)
        z = zeros(self.shape, self.dtype, self.device)
        z._ro = True
        return z

    @real.setter
    def real(self, value):
        self.real[...] = value

    @imag.setter
    def imag(self, value):
        if self.dtype.kind != "c":
            raise TypeError("gpuport: array does not have imaginary part to set")
        self._part(1)[...] = value

    def _part(self, which):
        v = self._view(self.shape, [2 * s for s in self._st], 2 * self._off + which)
        v.dtype = np.dtype(self.dtype.char.lower())
        v.nbytes //= 2
        return v

    @property
    def contiguous(self):
        """True when the elements lie in C order, one after another (a view can, or not)."""
        return all(s == c for s, c, n in zip(self._st, c_strides(self.shape), self.shape) if n > 1)

    def _view(self, shape, strides, offset):
        """Another view of this array's buffer; shape and strides come from this array's own, so
        they need no checks (an operation makes several views: this is its hot path)."""
        v = object.__new__(Array)
        v.dtype, v.device, v._buf, v._base, v._owned, v._pool_ok = self.dtype, self.device, self._buf, self, False, True
        v._ro = self._ro
        v.shape, v._st, v._off = tuple(shape), tuple(strides), offset
        v.size = math.prod(v.shape)
        v.nbytes = v.size * self.dtype.itemsize
        return v

    # ---- to and from the host ----------------------------------------------------------------

    def get(self, stream=None, out=None):
        """The elements, copied into a new NumPy array (waits for the stream's work)."""
        src = self if self.contiguous else self.copy()
        host = np.empty(self.shape, self.dtype) if out is None else out
        if host.shape != self.shape or host.dtype != self.dtype or not host.flags.c_contiguous:
            raise ValueError("gpuport: out must be a C-contiguous %s array of shape %s" % (self.dtype, self.shape))
        if self.nbytes:
            _check(_lib.gp_buffer_read(_stream(stream), src._buf, src._off * self.itemsize, host.ctypes.data,
                                       self.nbytes))
        return host

    def copy_to_host(self, ary=None, stream=0):
        """Numba's name for get(): into ary (a C-contiguous NumPy array) when given."""
        return self.get(stream, out=ary)

    def copy_to_device(self, ary, stream=0):
        """Numba's: copies ary (host or device, of this shape and dtype) into this array."""
        if getattr(ary, "shape", None) != self.shape:
            raise ValueError("gpuport: copy_to_device of shape %s into an array of shape %s"
                             % (getattr(ary, "shape", None), self.shape))
        self[...] = ary
        return self

    def is_c_contiguous(self):
        return self.contiguous

    def set(self, values, stream=None):
        """Copies values (anything NumPy broadcasts to this shape) into the array, in place."""
        self[...] = values
        return self

    def item(self):
        if self.size != 1:
            raise ValueError("gpuport: can only convert an array of size 1 to a Python scalar")
        return self.get().item()

    def tolist(self):
        return self.get().tolist()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self.dtype.kind not in "iub":
            raise TypeError("gpuport: only integer arrays can be used as an index")
        return operator.index(self.item())

    def __bool__(self):
        if self.size != 1:
            raise ValueError("gpuport: the truth value of an array with more than one element is ambiguous; "
                             "use a.any() or a.all()")
        return bool(self.item())

    def __format__(self, spec):
        return format(self.get()[()] if self.ndim == 0 else self.get(), spec)

    def __repr__(self):
        return repr(self.get())

    def __str__(self):
        return str(self.get())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # ---- copies, devices and types ----------------------------------------------------------

    def to(self, dev, stream=None):
        """A copy of the array on another device (of any backend), or on this one."""
        dev = _device(dev)
        src = self if self.contiguous else self.copy(stream)
        out = Array(self.shape, self.dtype, device=dev)
        if self.nbytes:
            _check(_lib.gp_buffer_copy(_stream(stream), out._buf, 0, src._buf, src._off * self.itemsize,
                                       self.nbytes))
        return out

    # ---- shape -------------------------------------------------------------------------------

    def reshape(self, *shape, order="C"):
        if order != "C":
            raise ValueError("gpuport: reshape supports order='C' only")
        shape = list(shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)
        shape = [operator.index(s) for s in shape]
        if shape.count(-1) > 1:
            raise ValueError("gpuport: can only specify one unknown dimension")
        if -1 in shape:
            rest = math.prod(s for s in shape if s != -1)
            if rest == 0 or self.size % rest:
                raise ValueError("gpuport: cannot reshape an array of size %d into shape %s" % (self.size,
                                                                                            tuple(shape)))
            shape[shape.index(-1)] = self.size // rest
        if math.prod(shape) != self.size or any(s < 0 for s in shape):
            raise ValueError("gpuport: cannot reshape an array of size %d into shape %s" % (self.size, tuple(shape)))
        src = self if self.contiguous else self.copy()
        return src._view(tuple(shape), c_strides(shape), src._off)

    def ravel(self):
        return self.reshape(self.size)

    def flatten(self):
        return self.copy().reshape(self.size)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        axes = [normalize_axis(a, self.ndim) for a in axes] if axes else list(range(self.ndim))[::-1]
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError("gpuport: axes %s are not a permutation of the array's %d dimensions" % (axes, self.ndim))
        return self._view([self.shape[a] for a in axes], [self._st[a] for a in axes], self._off)

    def swapaxes(self, a, b):
        axes = list(range(self.ndim))
        a, b = normalize_axis(a, self.ndim), normalize_axis(b, self.ndim)
        axes[a], axes[b] = axes[b], axes[a]
        return self.transpose(axes)

    def squeeze(self, axis=None):
        axes = range(self.ndim) if axis is None else [normalize_axis(a, self.ndim) for a in
                                                       (axis if isinstance(axis, tuple) else (axis,))]
        if any(self.shape[a] != 1 for a in axes if axis is not None):
            raise ValueError("gpuport: cannot squeeze an axis whose length is not 1")
        keep = [d for d in range(self.ndim) if not (d in axes and self.shape[d] == 1)]
        return self._view([self.shape[d] for d in keep], [self._st[d] for d in keep], self._off)

    def broadcast_to(self, shape):
        shape = _shape(shape)
        lead = len(shape) - self.ndim
        if lead < 0:
            raise ValueError("gpuport: cannot broadcast shape %s to %s" % (self.shape, shape))
        st = [0] * lead
        for s, n, want in zip(self._st, self.shape, shape[lead:]):
            if n != want and n != 1:
                raise ValueError("gpuport: operands could not be broadcast together with shapes %s and %s"
                                 % (self.shape, shape))
            st.append(s if n == want else 0)
        v = self._view(shape, st, self._off)
        v._ro = "broadcast"  # as NumPy's: written through, its aliased elements would race
        return v

    # ---- indexing ----------------------------------------------------------------------------

    def _index(self, key):
        key = key if isinstance(key, tuple) else (key,)
        for k in key:
            if isinstance(k, (Array, np.ndarray, list)) or isinstance(k, (bool, np.bool_)):
                raise IndexError("gpuport: only basic indexing (integers, slices, ..., None) and one boolean mask of "
                                 "the array's shape are supported; index arrays are not")
        real = [k for k in key if k is not None and k is not Ellipsis]
        if len(real) > self.ndim:
            raise IndexError("gpuport: too many indices for an array of %d dimensions: %d were given"
                             % (self.ndim, len(real)))
        if sum(k is Ellipsis for k in key) > 1:
            raise IndexError("gpuport: an index can only have a single ellipsis ('...')")
        if Ellipsis not in key:
            key = key + (Ellipsis,)
        shape, st, off, dim = [], [], self._off, 0
        for k in key:
            if k is None:
                shape.append(1)
                st.append(0)
            elif k is Ellipsis:
                for _ in range(self.ndim - len(real)):
                    shape.append(self.shape[dim])
                    st.append(self._st[dim])
                    dim += 1
            elif isinstance(k, slice):
                start, stop, step = k.indices(self.shape[dim])
                n = len(range(start, stop, step))
                off += start * self._st[dim] if n else 0
                shape.append(n)
                st.append(self._st[dim] * step)
                dim += 1
            else:
                try:
                    i = operator.index(k)
                except TypeError:
                    raise IndexError("gpuport: %r is not a valid index (integers, slices, ..., None)" % (k,)) from None
                n = self.shape[dim]
                if not -n <= i < n:
                    raise IndexError("gpuport: index %d is out of bounds for axis %d with size %d" % (i, dim, n))
                off += (i + n if i < 0 else i) * self._st[dim]
                dim += 1
        return self._view(shape, st, off)

    # Set explicitly: the operators, __eq__ among them, are attached by _methods.py, after the class
    # is made, and the class would otherwise keep object's hash.
    __hash__ = None

    # ---- other libraries ---------------------------------------------------------------------

    @property
    def data(self):
        """CuPy's x.data: a MemoryPointer to the array's first element."""
        size = ctypes.c_size_t()
        _check(_lib.gp_buffer_get_size(self._buf, ctypes.byref(size)))
        start = self._off * self.itemsize
        return MemoryPointer(self._buf, start, size.value - start, self.device, self)

    @property
    def __cuda_array_interface__(self):
        """The array's device memory for CuPy, Numba, PyTorch (CUDA devices only)."""
        if self.device.backend != "cuda":
            raise AttributeError("gpuport: __cuda_array_interface__ is for arrays of CUDA devices; this one is on %s"
                                 % self.device.spec)
        native = _R["gp_native_buffer"]()
        _check(_lib.gp_buffer_get_native(self._buf, ctypes.byref(native)))
        return {"shape": self.shape, "typestr": self.dtype.str, "strides": self.strides,
                "data": ((native.device_ptr or 0) + self._off * self.itemsize, False),
                "version": 3, "stream": 1}  # 1: the legacy default stream, gpuport's default


class MemoryPointer:
    """CuPy's cuda.MemoryPointer: a place in a device's memory (x.data, RawModule.get_global),
    over which gp.ndarray(shape, dtype, memptr) makes an array. ptr is its address, where the
    backend has addresses (CUDA, HIP); an OpenCL buffer has none."""

    def __init__(self, buf, offset, nbytes, device, owner):
        self._buf, self._offset, self._nbytes, self.device, self._owner = buf, offset, nbytes, device, owner

    def __add__(self, n):
        n = operator.index(n)
        if not 0 <= n <= self._nbytes:
            raise ValueError("gpuport.MemoryPointer: %d bytes on, past the %d there are" % (n, self._nbytes))
        return MemoryPointer(self._buf, self._offset + n, self._nbytes - n, self.device, self._owner)

    @property
    def ptr(self):
        if self.device.backend == "opencl":
            raise TypeError("gpuport: OpenCL buffers have no address (MemoryPointer.ptr is for CUDA and HIP "
                            "devices); pass the array itself to kernels")
        native = _R["gp_native_buffer"]()
        _check(_lib.gp_buffer_get_native(self._buf, ctypes.byref(native)))
        return (native.device_ptr or 0) + self._offset

    def __int__(self):
        return self.ptr


def _over(memptr, a, strides, st):
    """ndarray(shape, dtype, memptr, strides): the device, buffer, owner, element strides and
    offset of an array over memptr's memory, checked to lie inside it."""
    if not isinstance(memptr, MemoryPointer):
        raise TypeError("gpuport.ndarray: memptr is a MemoryPointer (x.data, RawModule.get_global), not %s"
                        % type(memptr).__name__)
    size = a.itemsize
    if memptr._offset % size or (strides is not None and any(s % size for s in strides)):
        raise ValueError("gpuport.ndarray: memptr's offset and the strides must be multiples of the item size, %d"
                         % size)
    st = tuple(s // size for s in strides) if strides is not None else st or c_strides(a.shape)
    if len(st) != len(a.shape):
        raise ValueError("gpuport.ndarray: %d strides for %d dimensions" % (len(st), len(a.shape)))
    lo = sum(s * (n - 1) for s, n in zip(st, a.shape) if s < 0)
    hi = sum(s * (n - 1) for s, n in zip(st, a.shape) if s > 0)
    if a.size and (lo * size < -memptr._offset or (hi + 1) * size > memptr._nbytes):
        raise ValueError("gpuport.ndarray: shape %s of %s needs memory outside memptr's %d bytes"
                         % (a.shape, a.dtype, memptr._nbytes))
    return memptr.device, memptr._buf, memptr, st, memptr._offset // size


def normalize_axis(axis, ndim):
    a = operator.index(axis)
    if not -ndim <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
        raise getattr(np, "exceptions", np).AxisError(a, ndim)
    return a + ndim if a < 0 else a


class _Borrowed:
    """Keeps a wrapped buffer's gpuport handle and its owner (another library's array) together."""

    def __init__(self, buf, owner):
        self.buf, self.owner = buf, owner

    def __del__(self, _destroy=_lib.gp_buffer_destroy):
        _destroy(self.buf)


# ---- making arrays ---------------------------------------------------------------------------

def _upload(host, dev, stream=None):
    host = host if host.flags.c_contiguous else host.copy()  # (ascontiguousarray makes a 0-d array 1-d)
    out = Array(host.shape, host.dtype, device=dev)
    if stream is not None:
        off_default_stream(out)
    if out.nbytes:
        _check(_lib.gp_buffer_write(_stream(stream), out._buf, 0, host.ctypes.data, out.nbytes))
    return out


def _host_dtype(host, dtype):
    return check_dtype(host.dtype if dtype is None else dtype)


def asarray(obj, dtype=None, device=None, stream=None, copy=None):
    """obj as an Array on the device (default: a gpuport array's own, else the current one): the
    array itself when it is one there with that dtype; a copy for an array of another device; memory of another
    CUDA library (__cuda_array_interface__: CuPy, Numba, PyTorch) wrapped in place on a CUDA
    device; anything else through NumPy, copied."""
    dev = obj.device if device is None and isinstance(obj, Array) else _device(device)
    if isinstance(obj, Array):
        out = obj if obj.device is dev else obj.to(dev, stream)
        out = out if dtype is None else out.astype(dtype, copy=False)
        if out is obj and copy is False or copy is None:
            return out
        if copy is False:
            raise ValueError("gpuport.asarray: copy=False, but a copy is needed (another device or dtype)")
        return out.copy() if out is obj else out
    if copy is False:
        raise ValueError("gpuport.asarray: copy=False, but %s must be copied to the device" % type(obj).__name__)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return _wrap_cuda(obj, cai, dtype, dev)
    host = np.asarray(obj)
    return _upload(host.astype(_host_dtype(host, dtype), copy=False), dev, stream)


def astype(x, dtype, copy=True):
    """The array API's astype(x, dtype): x.astype(dtype)."""
    return asarray(x).astype(dtype, copy=copy)


def array(obj, dtype=None, copy=True, device=None, ndmin=0):
    """A new array from obj (NumPy's np.array): a copy unless copy=False allows the same array."""
    out = asarray(obj, dtype, device, copy=None if copy else False)
    if copy and out is obj:
        out = out.copy()
    while out.ndim < ndmin:
        out = out[None]
    return out


def asnumpy(a, stream=None, out=None):
    """a as a NumPy array: copied from the device for a gpuport array, np.asarray(a) otherwise."""
    return a.get(stream, out) if isinstance(a, Array) else np.asarray(a)


def ascontiguousarray(a, dtype=None):
    a = asarray(a, dtype)
    return a if a.contiguous else a.copy()


def _wrap_cuda(obj, cai, dtype, dev):
    if dev.backend != "cuda":
        raise ValueError("gpuport: an object with __cuda_array_interface__ can be used only on a CUDA device, not %s"
                         % dev.spec)
    typestr, shape = np.dtype(cai["typestr"]), tuple(cai["shape"])
    if dtype is not None and np.dtype(dtype) != typestr:
        raise TypeError("gpuport: the object holds %s, not %s" % (typestr, np.dtype(dtype)))
    strides = cai.get("strides")
    if strides is not None and tuple(strides) != tuple(np.empty(shape, typestr).strides):
        raise ValueError("gpuport: only C-contiguous memory can be wrapped (the object has strides %s)"
                         % (tuple(strides),))
    native = _R["gp_native_buffer"]()
    native.backend = _C["GP_BACKEND_CUDA"]
    native.device_ptr = cai["data"][0]
    native.bytes = math.prod(shape) * typestr.itemsize
    if native.bytes == 0:
        return Array(shape, typestr, device=dev)
    buf = _handle_out(_lib.gp_buffer_wrap, dev._h, ctypes.byref(native), _C["GP_BORROW"])
    return Array(shape, typestr, device=dev, _buffer=buf, _base=_Borrowed(buf, obj))


def empty(shape, dtype=np.float64, device=None):
    return Array(shape, dtype, device=device)


def zeros(shape, dtype=np.float64, device=None):
    return Array(shape, dtype, device=device).fill(0)


def ones(shape, dtype=np.float64, device=None):
    return Array(shape, dtype, device=device).fill(1)


def full(shape, fill_value, dtype=None, device=None):
    if dtype is None:
        dtype = fill_value.dtype if isinstance(fill_value, Array) else np.asarray(fill_value).dtype
    return Array(shape, dtype, device=device).fill(fill_value)


def _like(a, dtype, shape):
    return (a.shape if shape is None else shape), (a.dtype if dtype is None else dtype), \
        (a.device if isinstance(a, Array) else None)


def empty_like(a, dtype=None, shape=None):
    return empty(*_like(a, dtype, shape))


def zeros_like(a, dtype=None, shape=None):
    return zeros(*_like(a, dtype, shape))


def ones_like(a, dtype=None, shape=None):
    return ones(*_like(a, dtype, shape))


def full_like(a, fill_value, dtype=None, shape=None):
    shape, dtype, dev = _like(a, dtype, shape)
    return full(shape, fill_value, dtype, dev)
