#!/usr/bin/env python3
"""GPU anchor for the poisson plugin: matrix-free CG in CuPy (a RawKernel 7-point stencil, CuPy
vector ops and dots), eager and graph-free: every iteration syncs on its dot products as a
plain CuPy solver does. Reports µs per iteration and per solve, fp32 and fp64, on the plugin's
problem (see poisson_scipy.py): 64^3 to 256^3, the seed's 50-iteration cap and "to 1e-5".

Prints JSON lines in the anchor schema (anchor_row.py; docs/anchors.md), plus "us_per_iteration",
"iterations", "relres", "converged", and writes $OUT/poisson_cupy.jsonl when OUT is set, for
`apex-host run --anchor-results FILE`. fp64 is precision fp32 with `f64_solve: true` in our
terms; a solve "to tolerance" gives no `max_iterations` (its cap does not bind).
Without CuPy or a GPU it says why and exits 2.

    pip install cupy-cuda13x   # or the wheel matching the driver
    python3 benches/anchors/poisson_cupy.py [--grids 64x64x64,256x256x256]
"""

import argparse
import json
import os
import sys
import time

try:
    import cupy as cp
except ImportError:
    print("poisson_cupy.py: CuPy is not installed (pip install cupy-cuda13x); no GPU anchor", file=sys.stderr)
    sys.exit(2)
try:
    cp.cuda.runtime.getDeviceCount()
except Exception as e:  # noqa: BLE001 - any CUDA failure means no GPU anchor
    print(f"poisson_cupy.py: no usable GPU: {e}", file=sys.stderr)
    sys.exit(2)

import numpy as np

from anchor_row import row as anchor_row

SRC = r"""
template <typename T>
__device__ void stencil(const T* p, T* q, int nx, int ny, int nz) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long n = (long long)nx * ny * nz;
    if (i >= n) return;
    int x = i % nx; long long r = i / nx; int y = r % ny; int z = r / ny;
    long long plane = (long long)nx * ny;
    T s = 0;
    if (x > 0) s += p[i - 1];
    if (x + 1 < nx) s += p[i + 1];
    if (y > 0) s += p[i - nx];
    if (y + 1 < ny) s += p[i + nx];
    if (z > 0) s += p[i - plane];
    if (z + 1 < nz) s += p[i + plane];
    q[i] = (T)6 * p[i] - s;
}
extern "C" __global__ void stencil_f32(const float* p, float* q, int nx, int ny, int nz) { stencil(p, q, nx, ny, nz); }
extern "C" __global__ void stencil_f64(const double* p, double* q, int nx, int ny, int nz) { stencil(p, q, nx, ny, nz); }
"""


def problem(nx, ny, nz, seed=1):
    rng = np.random.default_rng(seed)
    s = [np.sin(np.pi * (np.arange(n) + 1) / (n + 1)) for n in (nx, ny, nz)]
    u = (s[2][:, None, None] * s[1][None, :, None] * s[0][None, None, :]).ravel()
    return u + 0.25 * rng.uniform(-1.0, 1.0, u.size)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grids", default="64x64x64,128x128x128,256x256x256")
    ap.add_argument("--tol", type=float, default=1e-5)
    args = ap.parse_args()
    mod = cp.RawModule(code=SRC, options=("--std=c++17",))
    device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    rows = []
    for g in args.grids.split(","):
        nx, ny, nz = (int(v) for v in g.split("x"))
        n = nx * ny * nz
        for dtype, name in ((cp.float32, "fp32"), (cp.float64, "fp64")):
            k = mod.get_function("stencil_f32" if dtype == cp.float32 else "stencil_f64")
            grid, block = ((n + 255) // 256,), (256,)
            u = cp.asarray(problem(nx, ny, nz), dtype=cp.float64)
            b64 = cp.empty_like(u)
            mod.get_function("stencil_f64")(grid, block, (u, b64, np.int32(nx), np.int32(ny), np.int32(nz)))
            b = b64.astype(dtype)

            def solve(maxiter):
                x = cp.zeros_like(b)
                r = b.copy()
                p = r.copy()
                q = cp.empty_like(b)
                rr = float(cp.dot(r, r))
                rr0 = rr
                it = 0
                while it < maxiter and rr > args.tol**2 * rr0:
                    k(grid, block, (p, q, np.int32(nx), np.int32(ny), np.int32(nz)))
                    alpha = rr / float(cp.dot(p, q))
                    x += alpha * p
                    r -= alpha * q
                    rr_new = float(cp.dot(r, r))
                    p *= rr_new / rr
                    p += r
                    rr = rr_new
                    it += 1
                return x, it, (rr / rr0) ** 0.5

            solve(5)
            for maxiter, label in ((50, "seed cap"), (100000, "to tolerance")):
                cp.cuda.Device().synchronize()
                t = time.perf_counter()
                x, it, rel = solve(maxiter)
                cp.cuda.Device().synchronize()
                el = time.perf_counter() - t
                # f64_solve given either way: a subset without it would match both of our solves.
                params = {"grid_size": [nx, ny, nz], "tolerance": args.tol, "f64_solve": name == "fp64"}
                if label == "seed cap":
                    params["max_iterations"] = maxiter
                row = anchor_row(
                    "poisson.cg", f"cupy {cp.__version__} RawKernel stencil CG, eager ({label})", params,
                    "fp32", "cuda", el * 1e6, device=device, dtype=name, maxiter=maxiter,
                    us_per_iteration=el * 1e6 / max(it, 1), iterations=it, relres=rel, converged=rel <= args.tol,
                )
                rows.append(row)
                print(json.dumps(row), flush=True)
    out = os.environ.get("OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "poisson_cupy.jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
