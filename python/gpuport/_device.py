"""Devices, the current device (`with gp.Device("cuda:1"):`), streams and events."""
import atexit
import contextlib
import ctypes
import threading

from ._ffi import RECORDS as _R, check as _check, lib as _lib


def _text(chars):
    return bytes(chars).split(b"\0", 1)[0].decode(errors="replace")


def _handle_out(call, *args):
    """Calls call(*args, &handle) and returns the handle (a ctypes c_void_p)."""
    h = ctypes.c_void_p()
    _check(call(*args, ctypes.byref(h)))
    return h


def _finish_at_exit():
    """Lets every device used finish its queues before the interpreter frees the arrays and
    kernels they use (libgpuport's own exit handler then finds nothing left to wait for)."""
    for d in list(Device._known.values()):
        _lib.gp_device_synchronize(d._h)


atexit.register(_finish_at_exit)


class Device:
    """A device of a backend, owned by gpuport and alive for the process: Device("cuda:1"),
    Device("gpu"), Device("cpu"), or Device() for the default. One object per device, so
    `a.device is b.device` tells whether two arrays share one. As a context manager it is where
    new arrays go: `with gp.Device("opencl:0"): x = gp.zeros(3)`."""

    _known = {}

    def __new__(cls, spec=None):
        if isinstance(spec, Device):
            return spec
        if spec is None or isinstance(spec, str):
            return device(spec)
        key = spec.value
        if key not in cls._known:
            d = super().__new__(cls)
            d._h = spec
            info = _R["gp_device_info"]()
            _check(_lib.gp_device_get_info(spec, ctypes.byref(info)))
            d.info = {f: getattr(info, f) for f, _ in info._fields_}
            d.info.update({f: v.decode(errors="replace") for f, v in d.info.items() if isinstance(v, bytes)})
            d.info["max_work_item_sizes"] = list(info.max_work_item_sizes)
            d.info["type"] = {1: "gpu", 2: "cpu"}.get(info.type, "other")
            d.spec = "%s:%d" % (d.info["backend"], d.info["backend_index"])
            cls._known[key] = d
        return cls._known[key]

    name = property(lambda self: self.info["name"])
    backend = property(lambda self: self.info["backend"])
    type = property(lambda self: self.info["type"])
    id = property(lambda self: devices().index(self))

    def synchronize(self):
        """Waits for every stream of the device."""
        _check(_lib.gp_device_synchronize(self._h))

    def use(self):
        """Makes this the current device of the thread (as entering a with block does)."""
        _local.stack[-1:] = [self]
        return self

    def __enter__(self):
        _local.stack.append(self)
        return self

    def __exit__(self, *exc):
        _local.stack.pop()

    def __repr__(self):
        return "<gpuport.Device %s: %s (%s)>" % (self.spec, self.name, self.type)


class _Local(threading.local):
    def __init__(self):
        self.stack = []
        self.streams = []  # CuPy's current stream: `with stream:` and stream.use()


# How many threads have a stream of their own current: while any has, freed arrays' memory is
# not reused (their work on that stream may still be queued; see _array.off_default_stream).
streams_current = [0]


_local = _Local()


def devices():
    """Every device of every available backend, in gpuport's order."""
    n = ctypes.c_size_t()
    _check(_lib.gp_device_count(ctypes.byref(n)))
    return [Device(_handle_out(_lib.gp_device_get, i)) for i in range(n.value)]


_default = None


def device(spec=None):
    """The device a spec names ("cuda:0", "opencl:1", "gpu", "cpu"), or with none the current
    one: the innermost `with Device(...)` of this thread, else GPUPORT_DEVICE when set, else the
    best device gpuport finds."""
    global _default
    if isinstance(spec, Device):
        return spec
    if spec is None:
        if _local.stack:
            return _local.stack[-1]
        if _default is None:
            _default = Device(_handle_out(_lib.gp_device_default))
        return _default
    if not isinstance(spec, str):
        raise TypeError("gpuport: a device is a gpuport.Device or a name such as 'cuda:0', not %r" % (spec,))
    return Device(_handle_out(_lib.gp_device_find, spec.encode()))


def get_device(spec=None):
    return device(spec)


class Stream:
    """An in-order queue of work on a device. None, wherever a stream is taken, is the device's
    default stream."""

    def __init__(self, dev=None, non_blocking=False, ptds=False):
        """non_blocking and ptds are CuPy's, taken and not needed: every stream here is one of its own."""
        self.device = device(dev)
        self._h = _handle_out(_lib.gp_stream_create, self.device._h)

    def synchronize(self):
        """Waits for the stream's work; other Python threads run meanwhile."""
        _check(_lib.gp_stream_synchronize(self._h))

    @contextlib.contextmanager
    def auto_synchronize(self):
        """Numba's: `with stream.auto_synchronize():` synchronizes the stream at the block's end."""
        yield self
        self.synchronize()

    def wait(self, event):
        """Work queued on this stream from now on waits for event (of any device)."""
        _check(_lib.gp_stream_wait_event(self._h, event._h))

    wait_event = wait  # CuPy's name

    def record(self, event=None):
        """CuPy's: records event (a new one when None) here and returns it."""
        return (event or Event(self.device)).record(self)

    def use(self):
        """CuPy's: makes this the thread's current stream, which work given no stream runs on."""
        _set_streams([self] if self._h is not None else [])
        return self

    def __enter__(self):
        _set_streams(_local.streams + [self])
        return self

    def __exit__(self, *exc):
        _set_streams(_local.streams[:-1])

    def __del__(self, _destroy=_lib.gp_stream_destroy):
        if getattr(self, "_h", None):
            _destroy(self._h)  # safe while work is queued: it finishes first
            self._h = None


class _NullStream(Stream):
    """A device's default stream as an object (CuPy's Stream.null, Numba's cuda.default_stream()):
    None, or 0, wherever a stream is taken means the same."""

    _h = None

    def __init__(self):
        pass

    device = property(lambda self: device())

    def synchronize(self):
        device().synchronize()

    def record(self, event=None):
        return (event or Event()).record(None)

    def wait_event(self, event):
        _check(_lib.gp_stream_wait_event(None, event._h))


Stream.null = _NullStream()


def _set_streams(streams):
    own = lambda ss: any(x._h is not None for x in ss)  # noqa: E731
    streams_current[0] += own(streams) - own(_local.streams)
    _local.streams = streams


def _stream(s):
    """The handle of stream s: None (or Numba's 0) is the current stream, the default one unless
    `with stream:` or stream.use() made another current."""
    if s is None or (type(s) is int and s == 0):
        return _local.streams[-1]._h if _local.streams else None
    return s._h


def get_current_stream():
    return _local.streams[-1] if _local.streams else Stream.null


class Event:
    """A point in a stream's work, for ordering and for device-measured time."""

    def __init__(self, dev=None):
        self.device = device(dev)
        self._h = _handle_out(_lib.gp_event_create, self.device._h)

    def record(self, stream=None):
        _check(_lib.gp_event_record(self._h, _stream(stream)))
        return self

    def synchronize(self):
        _check(_lib.gp_event_synchronize(self._h))

    def elapsed_ms(self, end):
        """Milliseconds of device time from this event to end (both recorded, on one device)."""
        ms = ctypes.c_double()
        _check(_lib.gp_event_elapsed_ms(self._h, end._h, ctypes.byref(ms)))
        return ms.value

    elapsed_time = elapsed_ms  # Numba's name

    def __del__(self, _destroy=_lib.gp_event_destroy):
        if getattr(self, "_h", None):
            _destroy(self._h)
            self._h = None


class _Cuda:
    """CuPy's names for the same things, so that a lesson written for CuPy runs with `cp` renamed:
    cuda.Device(i) is the i-th device of devices() (GPUs come first), on any backend."""

    @staticmethod
    def Device(i=None):
        return device() if i is None else (devices()[i] if isinstance(i, int) else device(i))

    Stream = Stream

    @staticmethod
    def Event(*args, **kwargs):
        return Event()

    @staticmethod
    def get_elapsed_time(start, end):
        return start.elapsed_ms(end)

    @staticmethod
    def get_current_stream():
        return get_current_stream()


cuda = _Cuda()
