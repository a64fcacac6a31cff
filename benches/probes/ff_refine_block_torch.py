"""What the FF refine block costs PyTorch as the batch grows: a timing probe, not a parity anchor.

ff_model's B=8 line (issue 13) asks a batch of eight frames to run at 4x the frames/s of one.
The plugin's refines are latency-bound at B=1 and do not scale that far (plugins/ff_model/README.md,
"Not done yet"). This probe times the same block, written plainly in PyTorch (cuDNN's depthwise
convolution, cuBLAS's pointwise convolution, GroupNorm, the gate), on the tile counts of one frame
and of eight, so that the plugin's scaling can be read beside a throughput-built library's:

    x' = (1 + gamma) * x + beta                         FiLM, per tile and channel
    y  = pw(dw3x3(x'))                                   depthwise 3x3 (zero padding at the tile's
                                                         edge), pointwise C -> 2C, both with bias
    a, b = GroupNorm(1, 2C)(y).chunk(2)
    out = x + alpha * (a * relu(b) + x' - x)             refine_value, then FusionGate

on packed tiles [N, C, t, t] in fp16 (the profile: C = 128, L0 t = 16 with 20 tiles a frame, L1
t = 8 with 32). The weights are random: timing only. Each row: eager and `torch.compile`, both
replayed from one CUDA graph of CALLS calls over rotating buffer sets (DRAM-cold where the sets
span three L2s, as apex-host's batch mode), microseconds a call.

    python benches/probes/ff_refine_block_torch.py          # on a GPU machine
"""

import json
import os

import torch
import torch.nn.functional as F

CALLS = int(os.environ.get("CALLS", "200"))
C = 128
LEVELS = [("L0", 16, 20), ("L1", 8, 32)]
BATCHES = [int(b) for b in os.environ.get("BATCHES", "1,8").split(",")]


def block(x, gamma, beta, alpha, dw_w, dw_b, pw_w, pw_b, gn_w, gn_b):
    xm = x * (1 + gamma) + beta
    d = F.conv2d(xm, dw_w, dw_b, padding=1, groups=C)
    y = F.conv2d(d, pw_w, pw_b)
    a, b = F.group_norm(y, 1, gn_w, gn_b, eps=1e-5).chunk(2, dim=1)
    return x + alpha * (a * torch.relu(b) + xm - x)


def make(n, t, dev, dt):
    x = torch.randn(n, C, t, t, device=dev, dtype=dt)
    gamma = (0.1 * torch.randn(n, C, 1, 1, device=dev)).to(dt)
    beta = (0.1 * torch.randn(n, C, 1, 1, device=dev)).to(dt)
    alpha = torch.rand(n, 1, t, t, device=dev).to(dt)
    return x, gamma, beta, alpha


def bench_graph(fn, sets, weights):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for i in range(3):  # warm-up (and torch.compile's first call) outside the capture
            fn(*sets[i % len(sets)], *weights)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    ring = [None] * len(sets)  # outputs live until their set comes round: distinct blocks
    with torch.cuda.graph(g):
        for i in range(CALLS):
            ring[i % len(sets)] = fn(*sets[i % len(sets)], *weights)
    del ring
    g.replay()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    g.replay()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) * 1e3 / CALLS


def main():
    dev, dt = "cuda", torch.float16
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    name = torch.cuda.get_device_name(0)
    weights = (
        (0.3 * torch.randn(C, 1, 3, 3, device=dev)).to(dt),
        (0.1 * torch.randn(C, device=dev)).to(dt),
        (torch.randn(2 * C, C, 1, 1, device=dev) / C**0.5).to(dt),
        (0.1 * torch.randn(2 * C, device=dev)).to(dt),
        (1 + 0.1 * torch.randn(2 * C, device=dev)).to(dt),
        (0.1 * torch.randn(2 * C, device=dev)).to(dt),
    )
    compiled = torch.compile(block, dynamic=False)
    rows = []
    for level, t, k in LEVELS:
        for b in BATCHES:
            n = b * k
            one = make(n, t, dev, dt)
            per_set = sum(v.numel() * v.element_size() for v in one)
            count = max(4, min(512, -(-3 * l2 // per_set)))
            sets = [one] + [make(n, t, dev, dt) for _ in range(count - 1)]
            row = {"device": name, "level": level, "batch": b, "tiles": n, "t": t, "sets": count}
            for impl, fn in (("eager", block), ("compile", compiled)):
                row[impl + "_us"] = round(bench_graph(fn, sets, weights), 2)
            row["gemm_gflop"] = round(2 * n * t * t * C * 2 * C / 1e9, 3)
            rows.append(row)
            print(json.dumps(row), flush=True)
            del sets, one
            torch.cuda.empty_cache()
    print(f"\n{name}, fp16, C = {C}, us a call (CUDA graph of {CALLS} calls, rotating sets)")
    print(f"{'level':<6}{'B':>4}{'tiles':>7}{'eager':>10}{'compile':>10}")
    for r in rows:
        print(f"{r['level']:<6}{r['batch']:>4}{r['tiles']:>7}{r['eager_us']:>10}{r['compile_us']:>10}")
    for level, _, _ in LEVELS:
        by = {r["batch"]: r for r in rows if r["level"] == level}
        if 1 in by and 8 in by:
            for impl in ("eager", "compile"):
                ratio = 8 * by[1][impl + "_us"] / by[8][impl + "_us"]
                print(f"{level} {impl}: B=8 runs {ratio:.2f}x the tiles a us of B=1")


if __name__ == "__main__":
    main()
