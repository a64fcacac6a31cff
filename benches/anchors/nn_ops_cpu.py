"""CPU anchors for the nn_ops CPU path: the seed's small shapes (batch 16 x seq 256 x dim 8/64/512,
fp32; cross-entropy over 4,096 rows of 8 and 512 classes, forward and forward+gradient), in PyTorch
CPU when it is installed, else NumPy. Median of N calls after warm-up, one JSON line per case in the
anchor schema (anchor_row.py; docs/anchors.md: "us_per_call", with "ms" kept), also written to
$OUT/nn_ops_cpu.jsonl when OUT is set, for `apex-host run --anchor-results FILE`.

NumPy has no erf: GELU (erf form) uses the same Chebyshev erfc (Numerical Recipes, fractional error
< 1.2e-7) as the Rust CPU path, in vectorised NumPy. The Rust side of the comparison:
`cargo run --release -p apex-plugin-nn-ops --example nn_ops_cpu_bench`.

Run: `python benches/anchors/nn_ops_cpu.py` (needs numpy; torch optional).
"""
import json
import os
import time

import numpy as np

from anchor_row import cpu_name, row as anchor_row

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None

N, WARMUP = 30, 3
out_path = os.path.join(os.environ["OUT"], "nn_ops_cpu.jsonl") if os.environ.get("OUT") else None
if out_path:
    open(out_path, "w").close()
rng = np.random.default_rng(0)


def median_ms(fn):
    for _ in range(WARMUP):
        fn()
    ts = []
    for _ in range(N):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


def emit(kernel, impl, params, fn):
    ms = round(median_ms(fn), 4)
    row = anchor_row(kernel, impl, params, "fp32", "cpu", ms * 1e3, device=cpu_name(), ms=ms)
    print(json.dumps(row), flush=True)
    if out_path:
        with open(out_path, "a") as fh:
            fh.write(json.dumps(row) + "\n")


def erfc_pos(z):
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (
        0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
    return t * np.exp(poly)


def np_gelu(x):
    h = np.float32(0.5) * erfc_pos(np.abs(x) * np.float32(0.7071067811865476))
    return np.where(x >= 0, x - x * h, x * h)


def np_layer_norm(x, w, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + np.float32(1e-5)) * w + b


def np_ce(x, t, grad):
    valid = t >= 0
    m = x.max(1, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(1, keepdims=True)
    lse = (m + np.log(s))[:, 0]
    tt = np.where(valid, t, 0)
    loss = (lse - x[np.arange(len(t)), tt])[valid].mean()
    if not grad:
        return loss
    g = e / s
    g[np.arange(len(t)), tt] -= 1.0
    g *= (valid / max(valid.sum(), 1))[:, None].astype(np.float32)
    return loss, g


impl = "torch_cpu" if torch is not None else "numpy"
for d in [8, 64, 512]:
    p = dict(batch=16, seq=256, dim=d)
    x = (rng.random((16, 256, d), dtype=np.float32) * 4 - 1.5)
    y = (rng.random((16, 256, d), dtype=np.float32) * 4 - 2)
    w = (rng.random(d, dtype=np.float32) + 0.5)
    b = (rng.random(d, dtype=np.float32) - 0.5)
    if torch is not None:
        tx, ty, tw, tb = map(torch.from_numpy, (x, y, w, b))
        emit("nn_ops.layer_norm", impl, p, lambda: F.layer_norm(tx, (d,), tw, tb, 1e-5))
        emit("nn_ops.gelu", impl, p, lambda: F.gelu(tx))
        emit("nn_ops.swish", impl, p, lambda: F.silu(tx))
        emit("nn_ops.mse_loss", impl, p, lambda: F.mse_loss(tx, ty))
    else:
        emit("nn_ops.layer_norm", impl, p, lambda: np_layer_norm(x, w, b))
        emit("nn_ops.gelu", impl, p, lambda: np_gelu(x))
        emit("nn_ops.swish", impl, p, lambda: x / (np.float32(1) + np.exp(-x)))
        emit("nn_ops.mse_loss", impl, p, lambda: np.mean((x - y) ** 2))
for v in [8, 512]:
    x = rng.random((4096, v), dtype=np.float32) * 10 - 5
    t = rng.integers(0, v, 4096)
    t[rng.random(4096) < 0.1] = -100
    for grad in [False, True]:
        p = dict(rows=4096, vocab=v, grad=grad)
        if torch is not None:
            tx, tt = torch.from_numpy(x), torch.from_numpy(t)

            def f(tx=tx, tt=tt, grad=grad):
                if not grad:
                    return F.cross_entropy(tx, tt)
                z = tx.detach().requires_grad_(True)
                loss = F.cross_entropy(z, tt)
                return torch.autograd.grad(loss, z)
            emit("nn_ops.cross_entropy", impl, p, f)
        else:
            emit("nn_ops.cross_entropy", impl, p, lambda x=x, t=t, grad=grad: np_ce(x, t, grad))
