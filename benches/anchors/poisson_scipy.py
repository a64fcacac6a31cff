#!/usr/bin/env python3
"""CPU anchor for the poisson plugin: SciPy CG on a sparse 7-point matrix, and PyAMG
(Ruge-Stueben and smoothed aggregation), on the plugin's problem and grids. One run each.

Problem (as plugins/poisson/src/problem.rs): unit 7-point Laplacian A u = 6u - sum(neighbours)
with zero Dirichlet values one spacing outside an nx*ny*nz grid (x fastest), manufactured
solution u* = sin(pi(x+1)/(nx+1)) sin(pi(y+1)/(ny+1)) sin(pi(z+1)/(nz+1)) + 0.25*w, w uniform in
[-1, 1) (NumPy's generator here, SplitMix64 in the plugin: same statistics, other values),
b = A u*. Every solve starts from x = 0; tolerance is ||b - A x|| / ||b||.

Prints JSON lines in the anchor schema (anchor_row.py; docs/anchors.md), plus "us_per_iteration",
"iterations", "relres", "converged", "setup_us" where they apply, and writes
$OUT/poisson_scipy.jsonl when OUT is set, for `apex-host run --anchor-results FILE`. SciPy solves in
f64: in our terms precision fp32 with `f64_solve: true` (the plugin's f64 path); the default CPU
suite has no f64 case, so add one in bench.yaml.d/ to see these rows matched (docs/anchors.md).
A solve "to tolerance" gives no `max_iterations` (its cap does not bind), the seed-cap one does.

    pip install scipy pyamg
    python3 benches/anchors/poisson_scipy.py [--grids 64x64x64,128x64x32] [--maxiter 50]
"""

import argparse
import json
import os
import sys
import time

import numpy as np

from anchor_row import cpu_name, row as anchor_row

try:
    import scipy
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
except ImportError:  # pragma: no cover - reported, not hidden
    print("poisson_scipy.py: SciPy is not installed (pip install scipy pyamg)", file=sys.stderr)
    sys.exit(2)


def laplacian(nx, ny, nz):
    def d1(n):
        return sp.diags([-np.ones(n - 1), np.full(n, 2.0), -np.ones(n - 1)], [-1, 0, 1])

    ix, iy, iz = sp.identity(nx), sp.identity(ny), sp.identity(nz)
    # x fastest: index = (z*ny + y)*nx + x, so x is the last Kronecker factor.
    a = sp.kron(sp.kron(iz, iy), d1(nx)) + sp.kron(sp.kron(iz, d1(ny)), ix) + sp.kron(sp.kron(d1(nz), iy), ix)
    return sp.csr_matrix(a)


def problem(nx, ny, nz, seed=1):
    rng = np.random.default_rng(seed)
    s = [np.sin(np.pi * (np.arange(n) + 1) / (n + 1)) for n in (nx, ny, nz)]
    u = (s[2][:, None, None] * s[1][None, :, None] * s[0][None, None, :]).ravel()
    u = u + 0.25 * rng.uniform(-1.0, 1.0, u.size)
    return u


def emit(rows, row):
    rows.append(row)
    print(json.dumps(row), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grids", default="64x64x64")
    ap.add_argument("--maxiter", type=int, default=50, help="the seed's iteration cap")
    ap.add_argument("--tol", type=float, default=1e-5)
    args = ap.parse_args()
    rows = []
    for g in args.grids.split(","):
        nx, ny, nz = (int(v) for v in g.split("x"))
        params = {"grid_size": [nx, ny, nz], "tolerance": args.tol, "f64_solve": True}
        a = laplacian(nx, ny, nz)
        u = problem(nx, ny, nz)
        b = a @ u
        bn = np.linalg.norm(b)

        # SpMV alone.
        t = time.perf_counter()
        for _ in range(10):
            a @ b
        spmv_us = (time.perf_counter() - t) / 10 * 1e6

        for maxiter, label in ((args.maxiter, "seed cap"), (100000, "to tolerance")):
            count = [0]

            def cb(_xk):
                count[0] += 1

            t = time.perf_counter()
            x, _info = spla.cg(a, b, rtol=args.tol, atol=0.0, maxiter=maxiter, callback=cb)
            el = time.perf_counter() - t
            rel = float(np.linalg.norm(b - a @ x) / bn)
            capped = {**params, "max_iterations": maxiter} if label == "seed cap" else params
            emit(rows, anchor_row(
                "poisson.cg", f"scipy.sparse.linalg.cg (CSR, {label})", capped, "fp32", "cpu", el * 1e6,
                device=cpu_name(), dtype="fp64", maxiter=maxiter,
                us_per_iteration=el * 1e6 / max(count[0], 1), iterations=count[0], relres=rel,
                converged=rel <= args.tol, error_max=float(np.abs(x - u).max()), spmv_us=spmv_us,
            ))

        try:
            import pyamg
        except ImportError:
            print("poisson_scipy.py: PyAMG is not installed (pip install pyamg); skipping AMG", file=sys.stderr)
            continue
        for name, make in (("ruge_stuben", pyamg.ruge_stuben_solver), ("smoothed_aggregation", pyamg.smoothed_aggregation_solver)):
            t = time.perf_counter()
            ml = make(a)
            setup = time.perf_counter() - t
            res = []
            t = time.perf_counter()
            x = ml.solve(b, tol=args.tol, maxiter=args.maxiter, residuals=res)
            el = time.perf_counter() - t
            cycles = len(res) - 1
            rel = float(np.linalg.norm(b - a @ x) / bn)
            emit(rows, anchor_row(
                "poisson.mg", f"pyamg {pyamg.__version__} {name} V-cycles",
                {**params, "max_iterations": args.maxiter}, "fp32", "cpu", (setup + el) * 1e6,
                device=cpu_name(), note="algebraic multigrid; the time includes its setup (setup_us)",
                dtype="fp64", setup_us=setup * 1e6, solve_us=el * 1e6,
                us_per_iteration=el * 1e6 / max(cycles, 1), iterations=cycles, relres=rel,
                converged=rel <= args.tol,
            ))
    out = os.environ.get("OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "poisson_scipy.jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    print(f"# scipy {scipy.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs", file=sys.stderr)


if __name__ == "__main__":
    main()
