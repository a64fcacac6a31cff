"""NumPy anchors for the tile_ops CPU paths (semantics: shared/spec/apex-x-kernels.md §1.2-1.6).

Shapes: the Apex-X CPU perf profile (base/heavy [1,64,128,128] fp32, tile 16, 10 ids) and the GPU fixed
profile in fp32 ([1,128,128,128], tile 8, 32 ids). Timing: median of 200 calls after 20 warm-up calls,
the same as `cargo run --release -p apex-plugin-tile-ops --example tile_ops_cpu_bench`, so run both
back to back and compare ratios. Prints one JSON object per line.
"""
import json
import time

import numpy as np

rng = np.random.default_rng(0)


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
        row = dict(op=name, impl="numpy", dtype="fp32", ms=median_ms(fn), B=B, C=C, H=H, W=W, t=t, K=K)
        print(json.dumps(row), flush=True)
