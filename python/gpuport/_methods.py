"""Array's methods that compute: copies that convert or gather, its operators and its reductions.
They are implemented by _elementwise, _reduction and _products, which build on Array, so they are
attached to the class here, once those exist; _array.py keeps only what needs no kernel."""
import numpy as np

from . import _elementwise as ew
from . import _masks as masks
from . import _protocols
from . import _reduction as red
from . import _sort
from ._array import Array, check_dtype, off_default_stream
from ._device import _stream
from ._ffi import check as _check, lib as _lib
from ._products import dot, matmul


def _is_mask(key):
    return isinstance(key, (Array, np.ndarray)) and key.dtype == np.bool_


def _is_indices(key):
    return isinstance(key, (Array, np.ndarray)) and key.dtype.kind in "iu"


class _Computing:
    def copy(self, stream=None):
        """A new C-ordered array with the same elements, on the same device."""
        out = Array(self.shape, self.dtype, device=self.device)
        if stream is not None:
            off_default_stream(self, out)
        if self.contiguous:
            if self.nbytes:
                _check(_lib.gp_buffer_copy(_stream(stream), out._buf, 0, self._buf, self._off * self.itemsize,
                                           self.nbytes))
            return out
        return ew.assign(out, self, stream)

    def astype(self, dtype, copy=True):
        dtype = check_dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        return ew.assign(Array(self.shape, dtype, device=self.device), self)

    def fill(self, value, stream=None):
        """Sets every element to value (converted as NumPy converts it to this dtype)."""
        ew.assign(self, value, stream)
        return self

    def __getitem__(self, key):
        key = np.asarray(key) if isinstance(key, list) else key
        if _is_mask(key):
            return masks.get(self, key)
        return masks.take_rows(self, key) if _is_indices(key) else self._index(key)

    def __setitem__(self, key, value):
        key = np.asarray(key) if isinstance(key, list) else key
        if _is_mask(key):
            masks.put(self, key, value)
        elif _is_indices(key):
            masks.put_rows(self, key, value)
        else:
            ew.assign(self._index(key), value)

    def conj(self):
        return ew.conjugate(self)

    conjugate = conj

    def nonzero(self):
        return masks.nonzero(self)

    # operators (ufuncs of _elementwise)
    def __add__(self, o): return ew.add(self, o)
    def __radd__(self, o): return ew.add(o, self)
    def __sub__(self, o): return ew.subtract(self, o)
    def __rsub__(self, o): return ew.subtract(o, self)
    def __mul__(self, o): return ew.multiply(self, o)
    def __rmul__(self, o): return ew.multiply(o, self)
    def __truediv__(self, o): return ew.true_divide(self, o)
    def __rtruediv__(self, o): return ew.true_divide(o, self)
    def __floordiv__(self, o): return ew.floor_divide(self, o)
    def __rfloordiv__(self, o): return ew.floor_divide(o, self)
    def __mod__(self, o): return ew.remainder(self, o)
    def __rmod__(self, o): return ew.remainder(o, self)
    def __pow__(self, o): return ew.power(self, o)
    def __rpow__(self, o): return ew.power(o, self)
    def __lshift__(self, o): return ew.left_shift(self, o)
    def __rlshift__(self, o): return ew.left_shift(o, self)
    def __rshift__(self, o): return ew.right_shift(self, o)
    def __rrshift__(self, o): return ew.right_shift(o, self)
    def __ilshift__(self, o): return ew.left_shift(self, o, out=self)
    def __irshift__(self, o): return ew.right_shift(self, o, out=self)
    def __and__(self, o): return ew.bitwise_and(self, o)
    def __rand__(self, o): return ew.bitwise_and(o, self)
    def __or__(self, o): return ew.bitwise_or(self, o)
    def __ror__(self, o): return ew.bitwise_or(o, self)
    def __xor__(self, o): return ew.bitwise_xor(self, o)
    def __rxor__(self, o): return ew.bitwise_xor(o, self)
    def __lt__(self, o): return ew.less(self, o)
    def __le__(self, o): return ew.less_equal(self, o)
    def __gt__(self, o): return ew.greater(self, o)
    def __ge__(self, o): return ew.greater_equal(self, o)
    def __eq__(self, o): return ew.equal(self, o)
    def __ne__(self, o): return ew.not_equal(self, o)
    def __neg__(self): return ew.negative(self)
    def __pos__(self): return ew.positive(self)
    def __abs__(self): return ew.absolute(self)
    def __invert__(self): return ew.invert(self)
    def __matmul__(self, o): return matmul(self, o)
    def __rmatmul__(self, o): return matmul(o, self)

    def __iadd__(self, o): return ew.add(self, o, out=self)
    def __isub__(self, o): return ew.subtract(self, o, out=self)
    def __imul__(self, o): return ew.multiply(self, o, out=self)
    def __itruediv__(self, o): return ew.true_divide(self, o, out=self)
    def __ifloordiv__(self, o): return ew.floor_divide(self, o, out=self)
    def __imod__(self, o): return ew.remainder(self, o, out=self)
    def __ipow__(self, o): return ew.power(self, o, out=self)
    def __iand__(self, o): return ew.bitwise_and(self, o, out=self)
    def __ior__(self, o): return ew.bitwise_or(self, o, out=self)
    def __ixor__(self, o): return ew.bitwise_xor(self, o, out=self)

    # reductions (_reduction)
    def sum(self, axis=None, dtype=None, keepdims=False): return red.sum(self, axis, dtype, keepdims=keepdims)
    def prod(self, axis=None, dtype=None, keepdims=False): return red.prod(self, axis, dtype, keepdims=keepdims)
    def min(self, axis=None, keepdims=False): return red.min(self, axis, keepdims=keepdims)
    def max(self, axis=None, keepdims=False): return red.max(self, axis, keepdims=keepdims)
    def mean(self, axis=None, dtype=None, keepdims=False): return red.mean(self, axis, dtype, keepdims=keepdims)
    def var(self, axis=None, dtype=None, ddof=0, keepdims=False): return red.var(self, axis, dtype, ddof=ddof,
                                                                                 keepdims=keepdims)
    def std(self, axis=None, dtype=None, ddof=0, keepdims=False): return red.std(self, axis, dtype, ddof=ddof,
                                                                                 keepdims=keepdims)
    def argmin(self, axis=None, keepdims=False): return red.argmin(self, axis, keepdims=keepdims)
    def argmax(self, axis=None, keepdims=False): return red.argmax(self, axis, keepdims=keepdims)
    def any(self, axis=None, keepdims=False): return red.any(self, axis, keepdims=keepdims)
    def all(self, axis=None, keepdims=False): return red.all(self, axis, keepdims=keepdims)
    def dot(self, other): return dot(self, other)
    def clip(self, a_min=None, a_max=None): return ew.clip(self, a_min, a_max)

    def compress(self, condition, axis=None): return masks.compress(condition, self, axis)

    # sorting (_sort)
    def argsort(self, axis=-1, kind=None, order=None): return _sort.argsort(self, axis, kind, order)

    def sort(self, axis=-1, kind=None, order=None):
        """Sorts the array in place, as NumPy's ndarray.sort."""
        ew.assign(self, _sort.sort(self, axis, kind, order))


for _name, _method in vars(_Computing).items():
    if _name not in ("__module__", "__qualname__", "__dict__", "__weakref__", "__doc__"):
        setattr(Array, _name, _method)
Array.__array_ufunc__ = _protocols.array_ufunc
Array.__array_function__ = _protocols.array_function
Array.__array__ = _protocols.no_implicit_copy
