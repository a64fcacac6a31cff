"""PyTorch anchors for the tile_ops CUDA kernels (semantics: shared/spec/apex-x-kernels.md §1.2-1.6).

Eager and torch.compile equivalents of tile_pack, tile_unpack (override, unique ids), fusion_gate
(alpha + fused) and fused_stage, at the fixed profile and the large profiles, timed the same way as
`tile_ops_gpu_check --bench`:
  cold:  256 MiB L2 flush before each call, CUDA events around the call, median of 100;
  graph: 20 calls captured in one CUDA graph, replayed 10 times, mean per call (no launch gaps).
GB/s use the bytes the Rust kernels declare (plugins/tile_ops: Work), so ratios are like for like.
Prints one JSON line per case in the anchor schema (anchor_row.py; docs/anchors.md): the time is the
graph figure (graph replay, as apex-host's batch mode), the cold figure stays in "cold_ms"; the
original keys (op, dtype, B, C, H, W, t, K, graph_ms, …) follow. Writes $OUT/tile_ops_torch.jsonl
(current folder without OUT), for `apex-host run --anchor-results FILE`. The copy line is a row of
kernel "copy", which matches no case (apex-host measures its own with `calibrate`).

Run on the GPU machine: `python benches/anchors/tile_ops_torch.py`
"""
import json
import os

import torch

from anchor_row import row as anchor_row

dev = "cuda"
torch.manual_seed(0)
DEVICE = torch.cuda.get_device_name(0)
rows = []
out_path = os.path.join(os.environ.get("OUT", "."), "tile_ops_torch.jsonl")
open(out_path, "w").close()


def emit(r):
    rows.append(r)
    print(json.dumps(r), flush=True)
    with open(out_path, "a") as fh:
        fh.write(json.dumps(r) + "\n")


def canonical(op, impl, kw, us=None, error=None, gbps=None, **extra):
    """The schema's keys for a tile_ops row (fusion_gate has no tiles: the map's params only)."""
    if "B" not in kw:  # the copy line
        return anchor_row("copy", impl, {}, "fp32", "cuda", us, gbps=gbps, error=error, device=DEVICE,
                          op=op, **extra)
    params = dict(batch=kw["B"], channels=kw["C"], height=kw["H"], width=kw["W"])
    if op != "fusion_gate":
        params.update(tile_size=kw["t"], kmax=kw["K"])
    return anchor_row(f"tile_ops.{op}", impl, params, kw["dtype"], "cuda", us, gbps=gbps, error=error,
                      device=DEVICE, op=op, **kw, **extra)
flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)


def cold_ms(fn, n=100):
    times = []
    for _ in range(n):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[n // 2]


def graph_ms(fn, calls=20, replays=10):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    g.replay()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(replays):
        g.replay()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) / (calls * replays)


def bench(op, impl, fn, nbytes, **kw):
    r = {}
    r["cold_ms"] = cold_ms(fn)
    r["cold_gbps"] = nbytes / r["cold_ms"] / 1e6
    try:
        r["graph_ms"] = graph_ms(fn)
        r["graph_gbps"] = nbytes / r["graph_ms"] / 1e6
    except Exception as exc:  # some compiled graphs refuse capture; the cold figure still stands
        r["graph_error"] = f"{type(exc).__name__}: {str(exc)[:120]}"
    if "graph_ms" in r:
        emit(canonical(op, impl, kw, r["graph_ms"] * 1e3, gbps=r["graph_gbps"], **r))
    else:
        emit(canonical(op, impl, kw, error=f"graph capture failed (cold_ms is the cold figure): {r['graph_error']}",
                       **r))


def profile(B, C, H, W, t, K, dt):
    es = torch.finfo(dt).bits // 8
    Gh, Gw = H // t, W // t
    G = Gh * Gw
    assert K <= G, "unique ids need K <= G"
    F_ = torch.rand(B, C, H, W, device=dev, dtype=dt) * 4 - 2
    idx = torch.stack([torch.randperm(G, device=dev)[:K].sort().values for _ in range(B)])
    ty, tx = idx // Gw, idx % Gw
    bi = torch.arange(B, device=dev)[:, None].expand(B, K)
    P = torch.rand(B, K, C, t, t, device=dev, dtype=dt) * 4 - 2
    base = torch.rand_like(F_) * 4 - 2
    heavy = torch.rand_like(F_) * 4 - 2
    bnd = torch.rand(B, 1, H, W, device=dev, dtype=dt)
    unc = torch.rand_like(bnd)

    def pack(F_, ty, tx):
        return F_.view(B, C, Gh, t, Gw, t)[bi, :, ty, :, tx, :]

    def unpack(base, P, ty, tx):
        out = base.clone()
        out.view(B, C, Gh, t, Gw, t)[bi, :, ty, :, tx, :] = P
        return out

    def fusion(base, heavy, bnd, unc):
        a = torch.sigmoid(1.3133 * torch.nan_to_num(bnd, 0.0, 1.0, 0.0) + 1.3133 * torch.nan_to_num(unc, 0.0, 1.0, 0.0))
        return base + a * (heavy - base), a

    def fused(F_, ty, tx):
        out = F_.clone()
        v = out.view(B, C, Gh, t, Gw, t)
        x = v[bi, :, ty, :, tx, :]
        v[bi, :, ty, :, tx, :] = (1.1 * x + 0.1) * torch.relu(0.9 * x - 0.05)
        return out

    # The Rust kernels' declared bytes (Work, the logical minimum for the actual selection): pack
    # R+W tiles (+ids); unpack with unique on-grid ids R base where no tile lands + the tiles (one
    # map in all), W map; fusion R 2 maps + 2 proxies, W map + alpha; fused R+W map (+ids).
    tiles, mp, px = B * K * C * t * t * es, B * C * H * W * es, B * H * W * es
    kw = dict(B=B, C=C, H=H, W=W, t=t, K=K, dtype={torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}[dt])
    cases = {
        "tile_pack": (pack, (F_, ty, tx), 2 * tiles + 4 * B * K),
        "tile_unpack": (unpack, (base, P, ty, tx), 2 * mp + 16 * B * K),
        "fusion_gate": (fusion, (base, heavy, bnd, unc), 3 * mp + 3 * px),
        "fused_stage": (fused, (F_, ty, tx), 2 * mp + 4 * B * K),
    }
    for name, (f, args, nb) in cases.items():
        bench(name, "torch_eager", lambda: f(*args), nb, **kw)
        try:
            cf = torch.compile(f, dynamic=False)
            cf(*args)
            torch.cuda.synchronize()
            bench(name, "torch_compile", lambda: cf(*args), nb, **kw)
        except Exception as exc:
            emit(canonical(name, "torch_compile", kw, error=f"{type(exc).__name__}: {str(exc)[:200]}"))


profile(1, 128, 128, 128, 8, 32, torch.float16)  # Apex-X fixed profile
for t, K in ((8, 256), (16, 256), (32, 64)):
    profile(8, 256, 256, 256, t, K, torch.float16)  # large profile
profile(8, 256, 256, 256, 16, 256, torch.float32)
a = torch.empty(1 << 28, device=dev)
b = torch.empty_like(a)
bench("copy", "torch", lambda: b.copy_(a), 2 * a.numel() * 4)
