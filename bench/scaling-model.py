#!/usr/bin/env python3
"""The strong-scaling model of docs/scaling.md, from measured costs.

A rank's step is its block's interior, computed while the halos travel, then the cells next to
the halos:  T(P) = max(c * interior, X) + c * boundary,  with c the time per cell on one device
(one rank's step / its cells), X the halo exchange (alpha + halo bytes / beta) and the block a
Cartesian share of the grid (MPI_Dims_create's layout). Parallel efficiency is T(1) / (P T(P)).

    scaling-model.py check SCALING.csv          model against bench/mpi-scaling.sh's measurements:
                                                c from the one-rank row, X the measured exchange
    scaling-model.py project [--alpha-us A] [--beta-gbs B] [--c2-ps C] [--c3-ps C]
                                                2D 32768^2 and 3D 1024^3 f32 grids on 8 to 1024 GPUs
"""
import argparse
import csv
import math


def dims_create(p, nd):
    """MPI_Dims_create's balanced factorization (largest factors first)."""
    dims = [1] * nd
    f, primes = p, []
    d = 2
    while f > 1:
        while f % d == 0:
            primes.append(d)
            f //= d
        d += 1
    for q in sorted(primes, reverse=True):
        dims[dims.index(min(dims))] *= q
    return sorted(dims, reverse=True)


def block(sides, p):
    """The busiest rank's block: its cells, its boundary cells (a layer on each face with a
    neighbour) and the elements it sends, for a grid of these sides over p ranks."""
    d = dims_create(p, len(sides))
    b = [math.ceil(s / k) for s, k in zip(sides, d)]
    cells, faces = math.prod(b), 0
    for i, k in enumerate(d):
        if k > 1:
            faces += (2 if k > 2 else 1) * (cells // b[i])  # a middle block has two neighbours
    return cells, min(faces, cells), faces


def predict(c, x, sides, p):
    cells, boundary, _ = block(sides, p)
    return max(c * (cells - boundary), x) + c * boundary


def check(path):
    """The model for each multi-rank row of a bench/mpi-scaling.sh CSV: c from the one-rank row of
    the same mode and shape, X the measured exchange alone; for weak rows also c from the ranks
    apart (each its own block at once, no exchange), which carries the cost of sharing the machine."""
    rows = list(csv.DictReader(open(path)))
    print("| mode | shape | ranks | measured ms per step | model | model / measured | model / measured, c of the ranks apart |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    per_cell, apart = {}, {}
    for r in rows:
        sides = [int(v) for v in r["grid"].split("x")]
        if r["shape"] != "7point":
            sides = sides[:2]
        if r["mode"] == "apart":
            apart[(r["shape"], int(r["ranks"]))] = float(r["ms_per_step"]) / math.prod(sides)
    for r in rows:
        sides = [int(v) for v in r["grid"].split("x")]
        if r["shape"] != "7point":
            sides = sides[:2]
        key, p = (r["mode"], r["shape"]), int(r["ranks"])
        if r["mode"] == "apart":
            continue
        if p == 1:
            per_cell[key] = float(r["ms_per_step"]) / math.prod(sides)
            continue
        measured = float(r["ms_per_step"])
        model = predict(per_cell[key], float(r["exchange_ms"]), sides, p)
        c_apart = apart.get((r["shape"], p)) if r["mode"] == "weak" else None
        shared = "%.2f" % (predict(c_apart, float(r["exchange_ms"]), sides, p) / measured) if c_apart else ""
        print("| %s | %s | %d | %.3f | %.3f | %.2f | %s |" % (r["mode"], r["shape"], p, measured, model, model / measured, shared))


def project(alpha_us, beta_gbs, c2_ps, c3_ps):
    print("| grid | GPUs | cells per GPU | halo sent per GPU | compute (interior) | exchange | ms per step | efficiency |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, n, nd, c_ps in [("2D 32768^2", 32768, 2, c2_ps), ("3D 1024^3", 1024, 3, c3_ps)]:
        c = c_ps * 1e-9  # ms per cell
        t1 = c * n ** nd
        for p in [1, 8, 16, 32, 64, 128, 256, 512, 1024]:
            cells, boundary, faces = block([n] * nd, p)
            halo = 4 * faces  # f32
            x = 0 if p == 1 else alpha_us * 1e-3 + halo / (beta_gbs * 1e6)
            t = predict(c, x, [n] * nd, p)
            print("| %s | %d | %.3g M cells | %.0f KiB | %.4f ms | %.4f ms | %.4f | %.2f |" % (
                label, p, cells / 1e6, halo / 1024, c * (cells - boundary), x, t, t1 / (p * t)))


def main():
    ap = argparse.ArgumentParser(description="docs/scaling.md's model")
    sub = ap.add_subparsers(dest="cmd", required=True)
    ch = sub.add_parser("check")
    ch.add_argument("csv")
    pr = sub.add_parser("project")
    pr.add_argument("--alpha-us", type=float, default=30.0)
    pr.add_argument("--beta-gbs", type=float, default=25.0)
    pr.add_argument("--c2-ps", type=float, default=2.98)
    pr.add_argument("--c3-ps", type=float, default=3.39)
    a = ap.parse_args()
    if a.cmd == "check":
        check(a.csv)
    else:
        project(a.alpha_us, a.beta_gbs, a.c2_ps, a.c3_ps)


if __name__ == "__main__":
    main()
