"""gpuport.mpi under mpiexec (any number of ranks): each check against NumPy on rank 0, and every
refusal raised on every rank, so that no rank is left waiting in a collective call.

    mpiexec -n 2 python3 tests/python/mpi_checks.py"""
import sys

import numpy as np
from mpi4py import MPI

import gpuport as gp
import gpuport.mpi as gpm

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def raises(kind, call, what):
    try:
        call()
    except kind:
        return
    except Exception as e:  # noqa: BLE001 - the wrong kind is a failure too
        failures.append("%s: %s instead of %s" % (what, type(e).__name__, kind.__name__))
        return
    failures.append("%s: no %s" % (what, kind.__name__))


def grid_checks(shape, weights, dtype):
    rng = np.random.default_rng(7)
    field = rng.random(shape).astype(dtype) - 0.25
    with gpm.Grid(shape, weights, dtype=dtype) as g:
        b = g.block
        check(b["size"] == size and np.prod(b["dims"]) == size, "block: %s" % b)
        check(g.transport[0] in ("mapped", "staged", "nccl", "mpi"), "transport: %s" % (g.transport,))
        g.scatter(field if rank == 0 else None)
        back = g.gather()
        if rank == 0:
            check(back.dtype == dtype and np.array_equal(back, field), "scatter then gather of %s %s" % (shape, dtype))
        total = g.reduce("sum")
        tol = 1e-4 if dtype == np.float32 else 1e-10
        check(abs(total - float(field.astype(np.float64).sum())) <= tol * field.size, "sum: %r" % total)
        check(g.reduce("min") == float(field.min()) and g.reduce("max") == float(field.max()), "min and max")
        norm = g.reduce("norm")
        check(abs(norm - float(np.linalg.norm(field.astype(np.float64)))) <= tol * norm, "norm: %r" % norm)
        # One step against gpuport.stencil on one device: the same cells (fixed edges).
        g.run(1)
        one = gp.stencil(gp.asarray(field, device=gpm.device(MPI.COMM_SELF)), weights)
        stepped = g.gather()
        if rank == 0:
            check(np.array_equal(stepped, one.get()), "a step of %s against gpuport.stencil" % (shape,))
        check(g.stats["steps"] == 1, "stats: %s" % g.stats)
        # A wrong shape on the root is refused on every rank.
        raises(ValueError, lambda: g.scatter(np.zeros((3, 3)) if rank == 0 else None), "scatter of a wrong shape")
        raises(ValueError, lambda: g.reduce("median"), "an unknown reduction")
        raises(ValueError, lambda: g.gather(field="v"), "an unknown field")
    raises(ValueError, lambda: g.run(1), "a closed grid")


grid_checks((32, 24), [0, 0.25, 0.25, 0.25, 0.25], np.float64)
grid_checks((10, 12, 9), [0.4, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], np.float32)
raises(TypeError, lambda: gpm.Grid((8, 8), [0, 0.25, 0.25, 0.25, 0.25], comm="world"), "a comm that is no comm")
raises(ValueError, lambda: gpm.Grid((8, 8), [1, 2, 3], dtype=np.float32), "three weights")
raises(TypeError, lambda: gpm.Grid((8, 8), [0, 0.25, 0.25, 0.25, 0.25], dtype=np.int32), "an int grid")
raises(gp.GpuportError, lambda: gpm.Grid((8, 8), [0, 0.25, 0.25, 0.25, 0.25], dims=(size + 1, 1, 1)),
       "dims that are not the ranks")

every = comm.allgather(failures)
if rank == 0:
    for r, f in enumerate(every):
        for what in f:
            print("rank %d: %s" % (r, what))
    print("gpuport.mpi on %d ranks: %s" % (size, "FAILED" if any(every) else "every check passed"))
sys.exit(1 if any(every) else 0)
