"""PyTorch/Triton anchors for the tile_ssm CUDA kernels (semantics: shared/spec/apex-x-kernels.md §1.5).

Implementations, at the fixed profile (B=1, K=256, C=128, fp16; forward, backward, bidirectional
with the avg merge) and the large profile (B=8, K=4096, C=1536, fp16):
  triton_original   the original's structure, written in Triton: one program per (b, c) with a
                    serial loop over K (STEPS a constexpr, so every K compiles anew), parameters cast
                    to the token dtype on the host; backward = flip, forward, flip; bidirectional =
                    both plus the merge (as apex_x/kernels/triton/tilessm_scan.py builds them).
  torch_eager       the reference (tilessm_scan_reference): a Python loop over K in fp32.
  torch_compile     torch.compile of that reference (fixed profile only: at K=4096 the traced loop
                    has 4096 steps; the reason is printed instead).
  torch_assoc_scan  torch._higher_order_ops.associative_scan over (a, (1-a)u) pairs, compiled; where
                    it does not run, the reason is printed.
Timing, as apex-host's batch mode: N calls captured in ONE CUDA graph, the graph replayed, mean
per call (CUDA events). The inputs rotate over buffer copies covering >= 3 x L2 (quack's
bench_utils), so a call reads cold data, and each call's outputs rotate with them (kept until
their set comes round again; until 2026-11-26 every call wrote the same block); an implementation whose calls are too heavy to capture
that many times uses fewer calls and says so ("cache": "l2_hot", "sets": n). GB/s use the bytes
the Rust kernels declare (plugins/tile_ssm: Work): tokens read once, y and the state written once,
the four f32 parameter vectors. Every implementation is checked against an fp64 reference first
("max_abs_err").

Prints one JSON line per case in the anchor schema (anchor_row.py; docs/anchors.md; "profile" is the
profile's name) and writes $OUT/tile_ssm_torch.jsonl when OUT is set, for
`apex-host run --anchor-results FILE` (a line at a time, so a run cut short keeps
what it measured). One GPU process: `python benches/anchors/tile_ssm_torch.py`.
TILE_SSM_IMPLS (comma list, default all) and TILE_SSM_PROFILES (fixed,large) narrow the run; the
compiled implementations spend most of their time compiling ("first_call_s").
"""
import json
import math
import os
import time

import torch

from anchor_row import row as anchor_row

dev = "cuda"
torch.manual_seed(0)
CLAMP = 1e4
L2 = torch.cuda.get_device_properties(0).L2_cache_size
DEVICE = torch.cuda.get_device_name(0)
ALL_IMPLS = "triton_original,torch_eager,torch_compile,torch_assoc_scan"
IMPLS = os.environ.get("TILE_SSM_IMPLS", ALL_IMPLS).split(",")
rows = []
out_path = os.path.join(os.environ["OUT"], "tile_ssm_torch.jsonl") if os.environ.get("OUT") else None


def emit(row):
    rows.append(row)
    print(json.dumps(row), flush=True)
    if out_path:
        with open(out_path, "a") as fh:
            fh.write(json.dumps(row) + "\n")


if out_path and os.path.exists(out_path):
    os.remove(out_path)

# ---------------------------------------------------------------------------------------------
# The original's Triton structure: one program per (b, c), serial loop over K.
try:
    import triton
    import triton.language as tl

    @triton.jit
    def _tilessm_scan_kernel(tok_ptr, y_ptr, state_ptr, decay_ptr, gin_ptr, gout_ptr, bias_ptr, C, clamp,
                             STEPS: tl.constexpr):
        pid = tl.program_id(0)
        b = pid // C
        c = pid % C
        a = tl.load(decay_ptr + c).to(tl.float32)
        a = tl.minimum(tl.maximum(a, 1e-6), 1.0 - 1e-6)
        g = tl.load(gin_ptr + c).to(tl.float32)
        o = tl.load(gout_ptr + c).to(tl.float32)
        bias = tl.load(bias_ptr + c).to(tl.float32)
        s = a * 0.0
        base = b * STEPS * C + c
        for k in range(STEPS):
            x = tl.load(tok_ptr + base + k * C).to(tl.float32)
            x = tl.where(x == x, x, 0.0)
            x = tl.minimum(tl.maximum(x, -clamp), clamp)
            s = a * s + (1.0 - a) * (g * x + bias)
            tl.store(y_ptr + base + k * C, (o * s).to(y_ptr.dtype.element_ty))
        tl.store(state_ptr + b * C + c, s.to(state_ptr.dtype.element_ty))

    TRITON_ERROR = None
except Exception as exc:  # no Triton: the row says why
    TRITON_ERROR = f"{type(exc).__name__}: {exc}"


def triton_forward(tokens, p):
    B, K, C = tokens.shape
    assert K <= 4096, "the original runs K > 4096 as chunks of 4096; the profiles here need one chunk"
    y = torch.empty_like(tokens)
    state = torch.empty(B, C, device=dev, dtype=tokens.dtype)
    _tilessm_scan_kernel[(B * C,)](tokens, y, state, p["decay_t"], p["gin_t"], p["gout_t"], p["bias_t"], C, CLAMP,
                                   STEPS=K)
    return y, state


def triton_original(tokens, p, direction):
    if direction == "forward":
        return triton_forward(tokens, p)
    yb, sb = triton_forward(torch.flip(tokens, dims=[1]), p)
    yb = torch.flip(yb, dims=[1])
    if direction == "backward":
        return yb, sb
    yf, sf = triton_forward(tokens, p)
    return 0.5 * (yf + yb), torch.stack([sf, sb], dim=1)


# ---------------------------------------------------------------------------------------------
# The reference (fp32 math, outputs in the token dtype).
def reference(tokens, p, direction):
    dt = tokens.dtype
    x = torch.nan_to_num(tokens.float(), nan=0.0, posinf=CLAMP, neginf=-CLAMP).clamp(-CLAMP, CLAMP)
    a = p["decay"].clamp(1e-6, 1 - 1e-6)
    u = (1 - a) * (p["gin"] * x + p["bias"])
    K = tokens.shape[1]

    def run(order):
        s = torch.zeros_like(u[:, 0])
        ys = [None] * K
        for k in order:
            s = a * s + u[:, k]
            ys[k] = p["gout"] * s
        return torch.stack(ys, dim=1), s

    if direction == "forward":
        y, s = run(range(K))
        return y.to(dt), s.to(dt)
    yb, sb = run(range(K - 1, -1, -1))
    if direction == "backward":
        return yb.to(dt), sb.to(dt)
    yf, sf = run(range(K))
    return (0.5 * (yf + yb)).to(dt), torch.stack([sf, sb], dim=1).to(dt)


def reference_f64(tokens, p, direction):
    t = tokens.double()
    q = {k: v.double() for k, v in p.items() if k in ("decay", "gin", "gout", "bias")}
    x = torch.nan_to_num(t, nan=0.0, posinf=CLAMP, neginf=-CLAMP).clamp(-CLAMP, CLAMP)
    a = q["decay"].clamp(1e-6, 1 - 1e-6)
    u = (1 - a) * (q["gin"] * x + q["bias"])
    K = t.shape[1]
    out = {}
    for name, order in (("f", range(K)), ("b", range(K - 1, -1, -1))):
        s = torch.zeros_like(u[:, 0])
        ys = [None] * K
        for k in order:
            s = a * s + u[:, k]
            ys[k] = q["gout"] * s
        out[name] = torch.stack(ys, dim=1)
    return {"forward": out["f"], "backward": out["b"], "bidirectional": 0.5 * (out["f"] + out["b"])}[direction]


# ---------------------------------------------------------------------------------------------
# The associative scan: s_k = A_k * s_{k-1} + U_k composes as (a1, u1) then (a2, u2) = (a1*a2, a2*u1 + u2).
def make_assoc(direction):
    from torch._higher_order_ops.associative_scan import associative_scan

    def combine(left, right):
        return left[0] * right[0], right[0] * left[1] + right[1]

    def scan(tokens, p):
        dt = tokens.dtype
        x = torch.nan_to_num(tokens.float(), nan=0.0, posinf=CLAMP, neginf=-CLAMP).clamp(-CLAMP, CLAMP)
        a = p["decay"].clamp(1e-6, 1 - 1e-6)
        u = (1 - a) * (p["gin"] * x + p["bias"])
        A = a.expand_as(u).contiguous()
        outs = {}
        for name, rev in (("f", False), ("b", True)):
            if direction == "forward" and rev or direction == "backward" and not rev:
                continue
            _, s = associative_scan(combine, (A, u), dim=1, reverse=rev, combine_mode="pointwise")
            outs[name] = s
        if direction == "forward":
            return (p["gout"] * outs["f"]).to(dt), outs["f"][:, -1].to(dt)
        if direction == "backward":
            return (p["gout"] * outs["b"]).to(dt), outs["b"][:, 0].to(dt)
        y = 0.5 * p["gout"] * (outs["f"] + outs["b"])
        return y.to(dt), torch.stack([outs["f"][:, -1], outs["b"][:, 0]], dim=1).to(dt)

    return torch.compile(scan, fullgraph=True, dynamic=False)


# ---------------------------------------------------------------------------------------------
def make_inputs(B, K, C, dt, sets):
    decay = torch.rand(C, device=dev) * 0.8 + 0.1
    gin = torch.rand(C, device=dev) * 1.5 + 0.05
    gout = torch.rand(C, device=dev) * 1.5 + 0.05
    bias = 0.1 * torch.randn(C, device=dev)
    base = (torch.rand(B, K, C, device=dev) * 4 - 2).to(dt)
    out = []
    for _ in range(sets):
        p = dict(decay=decay.clone(), gin=gin.clone(), gout=gout.clone(), bias=bias.clone())
        # The original casts the parameters to the token dtype before its Triton launch.
        p.update(decay_t=p["decay"].to(dt), gin_t=p["gin"].to(dt), gout_t=p["gout"].to(dt), bias_t=p["bias"].to(dt))
        out.append((base.clone(), p))
    return out


def graph_us(fn, inputs, calls, replays):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for i in range(min(3, len(inputs))):
            fn(*inputs[i])
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    # Each call's outputs stay referenced until its input set comes round again, so the graph's
    # pool hands the calls distinct output blocks in turn (outputs rotate with the inputs, as in
    # apex-host's batch mode); dropped at once, every call would write the same block.
    ring = [None] * len(inputs)
    with torch.cuda.graph(g):
        for i in range(calls):
            ring[i % len(inputs)] = fn(*inputs[i % len(inputs)])
    del ring
    g.replay()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(replays):
        g.replay()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) * 1e3 / (calls * replays)


def profile(B, K, C, dt, label):
    es = torch.finfo(dt).bits // 8
    precision = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}[dt]
    for direction in ("forward", "backward", "bidirectional"):
        states = 2 if direction == "bidirectional" else 1
        nbytes = 2 * B * K * C * es + 16 * C + states * B * C * es
        want_sets = max(1, min(2048, math.ceil(3 * L2 / nbytes)))
        params = dict(batch=B, steps=K, channels=C)
        if direction == "bidirectional":
            params["merge"] = "avg"
        kernel = f"tile_ssm.{direction}"
        impls = [
            ("triton_original", (lambda t, p, d=direction: triton_original(t, p, d)) if TRITON_ERROR is None else None,
             TRITON_ERROR, 2048, 10),
            ("torch_eager", lambda t, p, d=direction: reference(t, p, d), None, 20 if K <= 256 else 2,
             5 if K <= 256 else 2),
        ]
        if "torch_compile" not in IMPLS:
            pass
        elif K <= 256:
            try:
                cf = torch.compile(lambda t, p, d=direction: reference(t, p, d), dynamic=False)
                impls.append(("torch_compile", cf, None, 2048, 10))
            except Exception as exc:
                impls.append(("torch_compile", None, f"{type(exc).__name__}: {str(exc)[:200]}", 0, 0))
        else:
            impls.append(("torch_compile", None, f"skipped: torch.compile would trace a {K}-step Python loop", 0, 0))
        try:
            if "torch_assoc_scan" in IMPLS:
                impls.append(("torch_assoc_scan", make_assoc(direction), None, 2048, 10))
        except Exception as exc:
            impls.append(("torch_assoc_scan", None, f"{type(exc).__name__}: {str(exc)[:200]}", 0, 0))
        for impl, fn, why, max_calls, replays in impls:
            if impl not in IMPLS:
                continue
            if fn is None:
                emit(anchor_row(kernel, impl, params, precision, "cuda", error=why, device=DEVICE, profile=label))
                continue
            row = {}
            try:
                sets = min(want_sets, max_calls)
                inputs = make_inputs(B, K, C, dt, sets)
                t0 = time.perf_counter()
                y, _ = fn(*inputs[0])
                torch.cuda.synchronize()
                row["first_call_s"] = round(time.perf_counter() - t0, 2)
                ref = reference_f64(inputs[0][0], inputs[0][1], direction)
                row["max_abs_err"] = float((y.double() - ref).abs().max())
                row["max_abs_err_over_scale"] = row["max_abs_err"] / float(ref.abs().max())
                calls = min(max(sets, 20), max_calls)
                us = graph_us(fn, inputs, calls, replays)
                touched = min(sets, calls)
                row = anchor_row(kernel, impl, params, precision, "cuda", round(us, 3), gbps=round(nbytes / us / 1e3, 2),
                                 cache="dram_cold" if touched * nbytes >= 3 * L2 else "l2_hot", device=DEVICE,
                                 profile=label, calls_per_graph=calls, sets=sets, **row)
                del inputs
            except Exception as exc:
                row = anchor_row(kernel, impl, params, precision, "cuda", error=f"{type(exc).__name__}: {str(exc)[:300]}",
                                 device=DEVICE, profile=label, **row)
            emit(row)
            torch.cuda.empty_cache()


PROFILES = os.environ.get("TILE_SSM_PROFILES", "fixed,large").split(",")
if "fixed" in PROFILES:
    profile(1, 256, 128, torch.float16, "fixed")  # Apex-X fixed profile
if "large" in PROFILES:
    profile(8, 4096, 1536, torch.float16, "large")  # large profile
