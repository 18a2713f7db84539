"""gpuport.mpi: libgpuport-mpi's stencil grid over the ranks of an mpi4py communicator, one device
a rank: the device each rank takes, the grid, scatter and gather of NumPy arrays through a root
rank, steps with their halo exchanges, and reductions over the whole grid (docs/python.md)."""
import ctypes
import os

import numpy as np

try:
    from mpi4py import MPI
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError("gpuport.mpi needs mpi4py (Debian: apt install python3-mpi4py): %s" % e) from None

from . import _where
from ._array import GP_TYPES
from ._device import Device
from ._ffi import CONSTANTS as _C, RECORDS as _R, check as _check
from ._primitives import _SHAPES

# An MPI_Comm as the C library takes it: a pointer (Open MPI) or an int (MPICH).
_COMM = ctypes.c_void_p if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_void_p) else ctypes.c_int


class _Block(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int), ("size", ctypes.c_int), ("dims", ctypes.c_int * 3),
                ("coords", ctypes.c_int * 3), ("origin", ctypes.c_size_t * 3), ("extent", ctypes.c_size_t * 3),
                ("local", ctypes.c_size_t * 3), ("first", ctypes.c_size_t), ("comm", _COMM)]


class _Transport(ctypes.Structure):
    _fields_ = [("transport", ctypes.c_int), ("name", ctypes.c_char_p), ("reason", ctypes.c_char * 400)]


class _Stats(ctypes.Structure):
    _fields_ = [("steps", ctypes.c_size_t), ("run_s", ctypes.c_double), ("mpi_s", ctypes.c_double),
                ("exchanges", ctypes.c_size_t), ("exchange_s", ctypes.c_double), ("halo_bytes", ctypes.c_size_t)]


def _load():
    """libgpuport-mpi beside the libgpuport this package uses, else the loader's search path."""
    here = os.path.dirname(os.path.abspath(__file__))
    names = [os.path.normpath(os.path.join(here, d, "libgpuport-mpi.so.0")) for d in _where.LIBRARY_DIRS]
    names.append("libgpuport-mpi.so.0")
    tried = []
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError as e:
            tried.append(str(e))
    raise ImportError("gpuport.mpi: cannot load libgpuport-mpi (this gpuport was built without MPI, or it is "
                      "not installed beside libgpuport): " + "; ".join(tried))


_lib = _load()
_P = ctypes.c_void_p
for _name, _args in {
        "gp_mpi_device_select": [_COMM, ctypes.POINTER(_P)],
        "gp_mpi_grid_create": [_COMM, _P, ctypes.POINTER(_R["gp_stencil"]), ctypes.POINTER(ctypes.c_int * 3),
                               ctypes.POINTER(_P)],
        "gp_mpi_grid_destroy": [_P], "gp_mpi_grid_get_block": [_P, ctypes.POINTER(_Block)],
        "gp_mpi_grid_scatter": [_P, ctypes.c_int, ctypes.c_int, _P],
        "gp_mpi_grid_gather": [_P, ctypes.c_int, ctypes.c_int, _P],
        "gp_mpi_grid_run": [_P, ctypes.c_size_t], "gp_mpi_grid_exchange": [_P],
        "gp_mpi_grid_get_transport": [_P, ctypes.POINTER(_Transport)],
        "gp_mpi_grid_get_stats": [_P, ctypes.POINTER(_Stats)],
        "gp_mpi_grid_reduce": [_P, ctypes.c_int, ctypes.POINTER(ctypes.c_double)]}.items():
    getattr(_lib, _name).argtypes = _args
    getattr(_lib, _name).restype = ctypes.c_int

_REDUCE = {"sum": 0, "min": 1, "max": 2, "norm": 3, "update_norm": 4}
_FIELDS = {"u": 0, "source": 1}


def _comm(comm):
    if not isinstance(comm, MPI.Comm):
        raise TypeError("gpuport.mpi: comm must be an mpi4py communicator (such as MPI.COMM_WORLD), not %s"
                        % type(comm).__name__)
    return _COMM(MPI._handleof(comm))


def device(comm=None):
    """The device this rank takes (gp_mpi_device_select; collective): GPUPORT_DEVICE where set,
    else the ranks of a node share its GPUs round-robin, else its CPU devices."""
    h = _P()
    _check(_lib.gp_mpi_device_select(_comm(comm or MPI.COMM_WORLD), ctypes.byref(h)))
    return Device(h)


class Grid:
    """A global grid of shape (ny, nx) or (nz, ny, nx), NumPy's order, split over the ranks of
    comm: weights as gpuport.stencil takes them (5 or 9 for 2D, 7 for 3D), boundary "fixed",
    "clamp" or "zero", dtype float32 or float64, dims the ranks along (x, y, z) or None for
    libgpuport-mpi's choice. Every call but the properties is collective. Close it (or use it as
    a context manager) before MPI finalizes."""

    def __init__(self, shape, weights, comm=None, dtype=np.float64, boundary="fixed", source_weight=0.0,
                 device=None, dims=None):
        self.comm = comm or MPI.COMM_WORLD
        self.shape, self.dtype = tuple(int(n) for n in shape), np.dtype(dtype)
        weights = [float(w) for w in weights]
        name = {(2, 5): "5point", (2, 9): "3x3", (3, 7): "7point"}.get((len(self.shape), len(weights)))
        if name is None:
            raise ValueError("gpuport.mpi.Grid: %d weights on a %d-D grid: 5 or 9 weights take a 2D grid, 7 a 3D one"
                             % (len(weights), len(self.shape)))
        if self.dtype not in GP_TYPES or self.dtype.kind != "f":
            raise TypeError("gpuport.mpi.Grid: float32 or float64 grids only, not %s" % self.dtype)
        b = {"fixed": "GP_BOUNDARY_FIXED", "clamp": "GP_BOUNDARY_CLAMP", "zero": "GP_BOUNDARY_ZERO"}.get(boundary)
        if b is None:
            raise ValueError("gpuport.mpi.Grid: boundary %r is not fixed, clamp or zero" % (boundary,))
        s = _R["gp_stencil"]()
        s.shape, s.type, s.boundary = _C[_SHAPES[(name, len(weights))]], GP_TYPES[self.dtype], _C[b]
        s.nx, s.ny, s.nz = self.shape[-1], self.shape[-2], self.shape[0] if len(self.shape) == 3 else 1
        for i, w in enumerate(weights):
            s.weights[i] = w
        s.source_weight = source_weight
        self.device = Device(device) if device is not None else globals()["device"](self.comm)
        d = (ctypes.c_int * 3)(*(dims or (0, 0, 0)))
        self._h = _P()
        _check(_lib.gp_mpi_grid_create(_comm(self.comm), self.device._h, ctypes.byref(s), ctypes.byref(d),
                                       ctypes.byref(self._h)))

    def _grid(self):
        if not self._h:
            raise ValueError("gpuport.mpi.Grid: the grid is closed")
        return self._h

    def scatter(self, array=None, root=0, field="u"):
        """The whole field from a NumPy array of the grid's shape on root (other ranks pass
        nothing) into every rank's block; field "u" or "source"."""
        grid, buf, why = self._grid(), None, None
        if field not in _FIELDS:
            raise ValueError("gpuport.mpi.Grid.scatter: field %r is not u or source" % (field,))
        if self.comm.Get_rank() == root:
            buf = np.ascontiguousarray(array, dtype=self.dtype)
            if buf.shape != self.shape:
                why = "gpuport.mpi.Grid.scatter: an array of shape %s on rank %d, not %s" % (buf.shape, root,
                                                                                            self.shape)
        why = self.comm.bcast(why, root=root)  # every rank raises, or none waits in the scatter
        if why:
            raise ValueError(why)
        _check(_lib.gp_mpi_grid_scatter(grid, _FIELDS[field], root, buf.ctypes.data if buf is not None else None))

    def gather(self, root=0, field="u"):
        """The whole field as a NumPy array on root; None on the other ranks."""
        if field not in _FIELDS:
            raise ValueError("gpuport.mpi.Grid.gather: field %r is not u or source" % (field,))
        grid, out = self._grid(), np.empty(self.shape, self.dtype) if self.comm.Get_rank() == root else None
        _check(_lib.gp_mpi_grid_gather(grid, _FIELDS[field], root, out.ctypes.data if out is not None else None))
        return out

    def run(self, steps):
        """steps applications of the stencil, a halo exchange before each."""
        _check(_lib.gp_mpi_grid_run(self._grid(), int(steps)))

    def exchange(self):
        _check(_lib.gp_mpi_grid_exchange(self._grid()))

    def reduce(self, op="sum"):
        """Over the whole grid: "sum", "min", "max", "norm" (the 2-norm) or "update_norm" (the
        norm of the last step's change), the same number on every rank."""
        if op not in _REDUCE:
            raise ValueError("gpuport.mpi.Grid.reduce: op %r is not one of %s" % (op, ", ".join(_REDUCE)))
        r = ctypes.c_double()
        _check(_lib.gp_mpi_grid_reduce(self._grid(), _REDUCE[op], ctypes.byref(r)))
        return r.value

    @property
    def block(self):
        """This rank's part: rank, size, dims and coords (x, y, z), origin and extent of its block
        in the global grid (x, y, z)."""
        b = _Block()
        _check(_lib.gp_mpi_grid_get_block(self._grid(), ctypes.byref(b)))
        return {"rank": b.rank, "size": b.size, "dims": tuple(b.dims), "coords": tuple(b.coords),
                "origin": tuple(b.origin), "extent": tuple(b.extent)}

    @property
    def transport(self):
        """How the halos travel, and why: ("nccl", "NCCL 2.28.3 (libnccl.so.2), on every rank")."""
        t = _Transport()
        _check(_lib.gp_mpi_grid_get_transport(self._grid(), ctypes.byref(t)))
        return t.name.decode(), t.reason.decode(errors="replace")

    @property
    def stats(self):
        s = _Stats()
        _check(_lib.gp_mpi_grid_get_stats(self._grid(), ctypes.byref(s)))
        return {f: getattr(s, f) for f, _ in s._fields_}

    def close(self):
        """Destroys the grid (collective); later calls raise ValueError."""
        if self._h:
            _check(_lib.gp_mpi_grid_destroy(self._h))
            self._h = _P()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
