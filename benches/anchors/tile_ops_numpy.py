"""NumPy anchors for the tile_ops CPU paths (semantics: shared/spec/apex-x-kernels.md §1.2-1.6).

Shapes: the Apex-X CPU perf profile (base/heavy [1,64,128,128] fp32, tile 16, 10 ids) and the GPU fixed
profile in fp32 ([1,128,128,128], tile 8, 32 ids). Timing: median of 200 calls after 20 warm-up calls,
the same as `cargo run --release -p apex-plugin-tile-ops --example tile_ops_cpu_bench`, so run both
back to back and compare ratios. Prints one JSON line per case in the anchor schema (anchor_row.py;
docs/anchors.md; the original keys op, dtype, ms, B, C, H, W, t, K follow the canonical ones) and
writes $OUT/tile_ops_numpy.jsonl when OUT is set, for `apex-host run --anchor-results FILE`.
"""
import json
import os
import time

import numpy as np

from anchor_row import cpu_name, row as anchor_row

rng = np.random.default_rng(0)
out_path = os.path.join(os.environ["OUT"], "tile_ops_numpy.jsonl") if os.environ.get("OUT") else None
if out_path:
    open(out_path, "w").close()


def median_ms(fn, n=200, warmup=20):
    for _ in range(warmup):
        fn()
    xs = []
    for _ in range(n):
        s = time.perf_counter()
        fn()
        xs.append(time.perf_counter() - s)
    xs.sort()
    return xs[n // 2] * 1e3


PROFILES = [
    (1, 64, 128, 128, 16, [0, 5, 9, 12, 18, 27, 33, 40, 50, 63]),
    (1, 128, 128, 128, 8, list(range(0, 256, 8))),
]

for B, C, H, W, t, ids in PROFILES:
    Gw = W // t
    K = len(ids)
    F = rng.standard_normal((B, C, H, W), dtype=np.float32)
    heavy = rng.standard_normal((B, C, H, W), dtype=np.float32)
    bnd = rng.random((B, 1, H, W), dtype=np.float32)
    unc = rng.random((B, 1, H, W), dtype=np.float32)
    idx = np.array([ids])
    ty, tx = idx // Gw, idx % Gw
    bi = np.arange(B)[:, None]
    v = F.reshape(B, C, H // t, t, Gw, t)

    def pack():
        return v[bi, :, ty, :, tx, :]

    P = pack()

    def unpack():
        out = F.copy()
        out.reshape(B, C, H // t, t, Gw, t)[bi, :, ty, :, tx, :] = P
        return out

    def fusion():
        a = 1.0 / (1.0 + np.exp(-(1.3133 * bnd + 1.3133 * unc)))
        return F + a * (heavy - F), a

    def fused():
        out = F.copy()
        o = out.reshape(B, C, H // t, t, Gw, t)
        x = o[bi, :, ty, :, tx, :]
        o[bi, :, ty, :, tx, :] = (1.1 * x + 0.1) * np.maximum(0.9 * x - 0.05, 0.0)
        return out

    for name, fn in [("tile_pack", pack), ("tile_unpack", unpack), ("fusion_gate", fusion), ("fused_stage", fused)]:
        ms = median_ms(fn)
        # Our parameter names; fusion_gate has no tiles, so it takes the map's only.
        params = dict(batch=B, channels=C, height=H, width=W)
        if name != "fusion_gate":
            params.update(tile_size=t, kmax=K)
        row = anchor_row(f"tile_ops.{name}", "numpy", params, "fp32", "cpu", ms * 1e3, device=cpu_name(),
                         op=name, dtype="fp32", ms=ms, B=B, C=C, H=H, W=W, t=t, K=K)
        print(json.dumps(row), flush=True)
        if out_path:
            with open(out_path, "a") as fh:
                fh.write(json.dumps(row) + "\n")
