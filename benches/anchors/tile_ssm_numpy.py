"""NumPy anchor for the tile_ssm CPU paths (semantics: shared/spec/apex-x-kernels.md §1.5).

The TileSSM scan at the Apex-X fixed profile (B=1, K=steps=256, C=128), every direction
(bidirectional with the avg merge), fp16 and fp32 tokens with fp32 arithmetic, as the original's
reference does: a Python loop over K with each step vectorized over (B, C). Timing: median of 200
calls after 20 warm-up calls, the same as
`cargo run --release -p apex-plugin-tile-ssm --example tile_ssm_cpu_bench`, so run both back to back
and compare. GB/s use the bytes the Rust kernels declare (plugins/tile_ssm: Work). Prints one JSON
line per case in the anchor schema (anchor_row.py; docs/anchors.md) and writes
$OUT/tile_ssm_numpy.jsonl when OUT is set, for `apex-host run --anchor-results FILE`.

Run: `python benches/anchors/tile_ssm_numpy.py`
"""
import json
import os
import time

import numpy as np

from anchor_row import cpu_name, row as anchor_row

B, K, C = 1, 256, 128
CLAMP = np.float32(1e4)
DMIN, DMAX = np.float32(1e-6), np.float32(1.0) - np.float32(1e-6)
rng = np.random.default_rng(0)
rows = []


def median_us(fn, n=200, warmup=20):
    for _ in range(warmup):
        fn()
    xs = []
    for _ in range(n):
        s = time.perf_counter()
        fn()
        xs.append(time.perf_counter() - s)
    xs.sort()
    return xs[n // 2] * 1e6


def scan(tokens, decay, gin, gout, bias, direction, merge="avg", gate=None, init=None):
    """The original's reference (tilessm_scan_reference) in NumPy: fp32 math, y and state in the token dtype."""
    dt = tokens.dtype
    x = np.nan_to_num(tokens.astype(np.float32), nan=0.0, posinf=CLAMP, neginf=-CLAMP)
    x = np.clip(x, -CLAMP, CLAMP)
    a = np.clip(decay, DMIN, DMAX)
    u = (1 - a) * (gin * x + bias)  # [B, K, C]

    def run(order, s0):
        s = np.zeros((B, C), np.float32) if s0 is None else s0.astype(np.float32)
        y = np.empty_like(u)
        for k in order:
            s = a * s + u[:, k]
            y[:, k] = gout * s
        return y, s

    if direction == "forward":
        y, s = run(range(K), init)
        return y.astype(dt), s.astype(dt)
    if direction == "backward":
        y, s = run(range(K - 1, -1, -1), init)
        return y.astype(dt), s.astype(dt)
    yf, sf = run(range(K), init)
    yb, sb = run(range(K - 1, -1, -1), init)
    if merge == "sum":
        y = yf + yb
    elif merge == "avg":
        y = 0.5 * (yf + yb)
    else:
        g = np.clip(gate, 0.0, 1.0)
        y = g * yf + (1 - g) * yb
    return y.astype(dt), np.stack([sf, sb], axis=1).astype(dt)


decay = rng.uniform(0.1, 0.9, C).astype(np.float32)
gin = rng.uniform(0.05, 1.55, C).astype(np.float32)
gout = rng.uniform(0.05, 1.55, C).astype(np.float32)
bias = (0.1 * rng.standard_normal(C)).astype(np.float32)

for precision, dt in (("fp16", np.float16), ("fp32", np.float32)):
    tokens = rng.uniform(-2, 2, (B, K, C)).astype(dt)
    es = np.dtype(dt).itemsize
    for direction in ("forward", "backward", "bidirectional"):
        states = 2 if direction == "bidirectional" else 1
        nbytes = 2 * B * K * C * es + 16 * C + states * B * C * es
        us = median_us(lambda: scan(tokens, decay, gin, gout, bias, direction))
        params = {"batch": B, "steps": K, "channels": C}
        if direction == "bidirectional":
            params["merge"] = "avg"
        row = anchor_row(f"tile_ssm.{direction}", "numpy", params, precision, "cpu", round(us, 2),
                         gbps=round(nbytes / us / 1e3, 4), device=cpu_name())
        rows.append(row)
        print(json.dumps(row), flush=True)

if os.environ.get("OUT"):
    with open(os.path.join(os.environ["OUT"], "tile_ssm_numpy.jsonl"), "w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
