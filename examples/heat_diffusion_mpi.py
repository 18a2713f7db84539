"""heat_diffusion_mpi.py: the heat lesson's scale-out, heat_diffusion_mpi.c in Python. A plate of
N x N cells held at 0 on its edges, heated at its centre, relaxed by Jacobi steps until the norm
of a step's change falls below 1e-4 (taken every K steps), over the ranks of an mpi4py
communicator with gpuport.mpi, one device a rank. With --check, rank 0 also solves the same
plate on its device alone with gpuport.stencil and checks that the ranks took the same steps
and reached the same centre.

    mpirun -np 4 python3 examples/heat_diffusion_mpi.py --n 256 --check"""
import argparse
import sys

import numpy as np
from mpi4py import MPI

import gpuport as gp
import gpuport.mpi as gpm

SOURCE, TOLERANCE, WEIGHTS = 10000.0, 1e-4, [0, 0.25, 0.25, 0.25, 0.25]


def solve_ranks(n, every, max_steps, dtype):
    """Steps, final norm and the gathered field (rank 0; None elsewhere) over every rank."""
    source = np.zeros((n, n), dtype)
    source[n // 2, n // 2] = SOURCE
    with gpm.Grid((n, n), WEIGHTS, dtype=dtype, source_weight=0.25 / (n * n)) as grid:
        grid.scatter(source, field="source")
        steps, norm = 0, np.inf
        while steps < max_steps and not norm < TOLERANCE:
            k = min(every, max_steps - steps)
            grid.run(k)
            steps += k
            norm = grid.reduce("update_norm")
        if grid.block["rank"] == 0:
            print("%d ranks (%s), halos by %s" % (grid.block["size"], "x".join(map(str, grid.block["dims"])),
                                                  grid.transport[0]))
        return steps, norm, grid.gather()


def solve_one(n, every, max_steps, dtype, device):
    """The same on one device: steps, norm and the field."""
    source = gp.zeros((n, n), dtype, device)
    source[n // 2, n // 2] = SOURCE
    u, steps, norm = gp.zeros((n, n), dtype, device), 0, np.inf
    while steps < max_steps and not norm < TOLERANCE:
        k = min(every, max_steps - steps)
        before = gp.stencil(u, WEIGHTS, source=source, source_weight=0.25 / (n * n), steps=k - 1)
        u = gp.stencil(before, WEIGHTS, source=source, source_weight=0.25 / (n * n))
        steps += k
        norm = float(gp.linalg.norm(u - before))
    return steps, norm, u.get()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--check-every", type=int, default=100)
    ap.add_argument("--max-steps", type=int, default=100000)
    ap.add_argument("--f32", action="store_true", help="single precision (default: double)")
    ap.add_argument("--check", action="store_true", help="rank 0 also solves on its device alone and compares")
    a = ap.parse_args()
    dtype = np.float32 if a.f32 else np.float64
    rank = MPI.COMM_WORLD.Get_rank()
    steps, norm, field = solve_ranks(a.n, a.check_every, a.max_steps, dtype)
    failed = 0
    if rank == 0:
        print("N = %d, %s: %d steps, norm %.3e, centre u = %.6f" % (a.n, np.dtype(dtype).name, steps, norm,
                                                                   field[a.n // 2, a.n // 2]))
        if a.check:
            s1, n1, f1 = solve_one(a.n, a.check_every, a.max_steps, dtype, gpm.device(MPI.COMM_SELF))
            diff = float(np.max(np.abs(field - f1)))
            failed = s1 != steps or diff > 0
            print("one device: %d steps, centre u = %.6f; the ranks' field differs by at most %.3g: %s"
                  % (s1, f1[a.n // 2, a.n // 2], diff, "WRONG" if failed else "the same"))
    return MPI.COMM_WORLD.bcast(failed, root=0)


if __name__ == "__main__":
    sys.exit(main())
