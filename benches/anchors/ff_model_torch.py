"""PyTorch anchor for ff_model.infer: the FF inference path written in PyTorch from the spec
(shared/spec/apex-x-kernels.md §1.1, §2.3), fed the plugin's exported weights and inputs.

1. Export a case with the plugin (fp32 CPU outputs and the f64 reference beside them):

       cargo run --release -p apex-plugin-ff-model --example ff_model_export -- --out /tmp/ff_export

2. Run this script on that folder (CPU, or a GPU machine with the folder copied over):

       python benches/anchors/ff_model_torch.py /tmp/ff_export

What it does:
  - selection: the two-stage greedy selection and the Hilbert order, written here again from §1.1,
    must pick exactly the tiles the plugin recorded in manifest.json;
  - parity: the module in fp64 against the plugin's f64 reference (the semantics: same math, so
    ~1e-12), and in fp32 on the CPU against the plugin's fp32 fast path (atol 1e-5 + rtol 1e-4,
    the plugin's fp32 tolerance); max abs error per output. On a GPU the module in fp16 against
    the f64 reference with the fp16 tolerance (atol 1e-3, rtol 1e-2, mismatch ratio <= 1e-3),
    and, when the folder has outputs_cuda_fp16/ (`ff_model_export --cuda`), against the plugin's
    CUDA fp16 fast path on the same inputs with the same tolerance;
  - timing, one frame per call, the host clock (the seeds' frames_per_s = batch / p50):
      CPU: torch eager, fp32, all of torch's CPU threads;
      GPU (when torch.cuda.is_available()): eager, torch.compile, torch.compile(mode="reduce-overhead"),
      fp16, each call ending in cuda.synchronize() as the seed's end-to-end benchmark timed it.
    The selection runs on the host inside every timed frame (the utilities are read back once per
    frame), as in the original; the heavy paths take the ids as index tensors.

Prints one JSON line per implementation in the anchor schema (anchor_row.py; docs/anchors.md)
and writes $OUT/ff_model_torch.jsonl when OUT is set, for `apex-host run --anchor-results FILE`.
FF_ITERS (default 30 on the CPU, 200 on a GPU) sets the timed calls. Exits 1 if a parity check fails.
"""
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from anchor_row import cpu_name, row as anchor_row  # noqa: E402

CLAMP = 1e4
SLACK = 1e-9
EPS = 1e-5


# ------------------------------------------------------------------------------------------------
# Selection (§1.1.1, §1.1.2), host side, in Python floats (f64).

def hilbert_d(x, y, n):
    d = 0
    s = n // 2
    while s > 0:
        rx = 1 if (x & s) > 0 else 0
        ry = 1 if (y & s) > 0 else 0
        d += s * s * ((3 * rx) ^ ry)
        if ry == 0:
            if rx == 1:
                x, y = s - 1 - x, s - 1 - y
            x, y = y, x
        s //= 2
    return d


def hilbert_order(ids, gh, gw):
    n = 1
    while n < max(gh, gw):
        n *= 2
    return sorted(ids, key=lambda i: hilbert_d(i % gw, i // gw, n))


def greedy(u, c, budget, kmax):
    order = sorted(range(len(u)), key=lambda i: (-(u[i] / max(c[i], 1e-9)), i))
    ids, spent = [], 0.0
    for i in order:
        if len(ids) >= kmax:
            break
        if spent + c[i] <= budget + SLACK:
            spent += c[i]
            ids.append(i)
    return ids, spent


def two_stage(u, split, p, gh, gw):
    delta = p["cost_heavy"] - p["cost_cheap"]
    l0, spent1 = greedy(u, [delta] * len(u), p["budget_b1"], p["kmax_l0"])
    l1, spent2 = [], 0.0
    if l0 and p["kmax_l1"] > 0 and p["budget_b2"] != 0.0:
        over = p["split_overhead"]
        for i in sorted(l0, key=lambda i: (-(split[i] / max(over, 1e-9)), i)):
            if spent2 + over > p["budget_b2"] + SLACK or len(l1) + 4 > p["kmax_l1"]:
                continue
            spent2 += over
            ty, tx = divmod(i, gw)
            for dy, dx in ((0, 0), (0, 1), (1, 0), (1, 1)):
                l1.append((2 * ty + dy) * (2 * gw) + 2 * tx + dx)
        l1 = hilbert_order(l1, 2 * gh, 2 * gw)
    return l0, l1, spent1, spent2


# ------------------------------------------------------------------------------------------------
# The FF module (§1.4, §1.5, §2.3).

class StableScan(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.decay_logit = nn.Parameter(torch.zeros(c))
        self.input_gain_raw = nn.Parameter(torch.zeros(c))
        self.output_gain_raw = nn.Parameter(torch.zeros(c))
        self.state_bias = nn.Parameter(torch.zeros(c))

    def forward(self, x, reverse=False):  # x [B, K, C]
        a = 1e-3 + (0.999 - 1e-3) * torch.sigmoid(self.decay_logit)
        gin = F.softplus(self.input_gain_raw) + 1e-6
        gout = F.softplus(self.output_gain_raw) + 1e-6
        x = torch.nan_to_num(x, nan=0.0, posinf=CLAMP, neginf=-CLAMP).clamp(-CLAMP, CLAMP)
        s = torch.zeros_like(x[:, 0])
        ys = [None] * x.shape[1]
        steps = range(x.shape[1] - 1, -1, -1) if reverse else range(x.shape[1])
        for k in steps:
            s = a * s + (1 - a) * (gin * x[:, k] + self.state_bias)
            ys[k] = gout * s
        return torch.stack(ys, dim=1)


class BidirectionalScan(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.forward_scan = StableScan(c)
        self.backward_scan = StableScan(c)
        self.merge_gate_logit = nn.Parameter(torch.zeros(c))

    def forward(self, x):
        g = torch.sigmoid(self.merge_gate_logit)
        return g * self.forward_scan(x) + (1 - g) * self.backward_scan(x, reverse=True)


class FiLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.LayerNorm(c, eps=EPS)
        self.fc1 = nn.Linear(c, c)
        self.fc2 = nn.Linear(c, 2 * c)

    def forward(self, tokens):
        t = torch.nan_to_num(tokens, nan=0.0, posinf=CLAMP, neginf=-CLAMP).clamp(-CLAMP, CLAMP)
        gamma_raw, beta = self.fc2(F.silu(self.fc1(self.norm(t)))).chunk(2, dim=-1)
        return torch.tanh(gamma_raw), beta


class TileRefineBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 3, padding=1, groups=c)
        self.pw = nn.Conv2d(c, 2 * c, 1)
        self.norm = nn.GroupNorm(1, 2 * c, eps=EPS)

    def forward(self, x):
        a, b = self.norm(self.pw(self.dw(x))).chunk(2, dim=1)
        return a * F.relu(b) + x


class FusionGate(nn.Module):
    def __init__(self):
        super().__init__()
        self.boundary_log_weight = nn.Parameter(torch.tensor(1.0))
        self.uncertainty_log_weight = nn.Parameter(torch.tensor(1.0))
        self.bias = nn.Parameter(torch.tensor(0.0))

    @staticmethod
    def clean(p):
        return torch.nan_to_num(p, nan=0.0, posinf=1.0, neginf=0.0)

    def forward(self, base, heavy, boundary, uncertainty):
        z = (F.softplus(self.boundary_log_weight) * self.clean(boundary)
             + F.softplus(self.uncertainty_log_weight) * self.clean(uncertainty) + self.bias)
        alpha = torch.sigmoid(z)
        return base + alpha * (heavy - base), alpha


class FFHeavyPath(nn.Module):
    def __init__(self, c, t):
        super().__init__()
        self.t = t
        self.film = FiLM(c)
        self.scan = BidirectionalScan(c)
        self.refine = TileRefineBlock(c)
        self.gate = FusionGate()

    def forward(self, base, ids, boundary, uncertainty):
        """base [B,C,H,W]; ids [B,K] (long, Hilbert order) of this path's grid."""
        b, c, h, w = base.shape
        t = self.t
        gh, gw = h // t, w // t
        tiles = base.view(b, c, gh, t, gw, t).permute(0, 2, 4, 1, 3, 5).reshape(b, gh * gw, c, t, t)
        k = ids.shape[1]
        rows = torch.arange(b, device=base.device)[:, None]
        packed = tiles[rows, ids]  # [B,K,C,t,t]
        tokens = packed.mean(dim=(-1, -2))  # [B,K,C]
        mixed = self.scan(tokens)
        gamma, beta = self.film(mixed)
        modulated = (1 + gamma)[..., None, None] * packed + beta[..., None, None]
        refined = self.refine(modulated.reshape(b * k, c, t, t)).reshape(b, k, c, t, t)
        out_tiles = tiles.clone()  # override unpack into a clone of the base
        out_tiles[rows, ids] = refined
        unfused = out_tiles.view(b, gh, gw, c, t, t).permute(0, 3, 1, 4, 2, 5).reshape(b, c, h, w)
        return self.gate(base, unfused, boundary, uncertainty)


class FFModule(nn.Module):
    def __init__(self, c, t0, t1):
        super().__init__()
        self.l0 = FFHeavyPath(c, t0)
        self.l1 = FFHeavyPath(c, t1)

    def heavy(self, dense, ids0, ids1, boundary, uncertainty):
        heavy_l0, _ = self.l0(dense, ids0, boundary, uncertainty)
        heavy, alpha = self.l1(heavy_l0, ids1, boundary, uncertainty)
        return heavy, heavy - heavy_l0, alpha


def state_dict_from_export(folder, c):
    """Our exported names (l0.scan.forward.decay_logit) to this module's (l0.scan.forward_scan...)."""
    sd = {}
    for name in sorted(os.listdir(os.path.join(folder, "weights"))):
        key = name[:-4]
        key = key.replace(".scan.forward.", ".scan.forward_scan.").replace(".scan.backward.", ".scan.backward_scan.")
        sd[key] = torch.from_numpy(np.load(os.path.join(folder, "weights", name)))
    return sd


def select_all(utilities, split, p, gh, gw):
    """Every batch entry's selection, as index tensors of the L0 and L1 grids."""
    u = utilities.tolist()
    s = split.tolist()
    out = [two_stage(u[b], s[b], p, gh, gw) for b in range(len(u))]
    return out


def ids_tensor(sel, which, gh, gw, device):
    rows = [hilbert_order(x[0], gh, gw) if which == 0 else x[1] for x in sel]
    return torch.tensor(rows, dtype=torch.long, device=device)


def load(folder, name):
    return torch.from_numpy(np.load(os.path.join(folder, name)))


def max_abs(a, b):
    return float((a.double() - b.double()).abs().max())


def mismatch_ratio(out, ref, atol, rtol):
    out, ref = out.double(), ref.double()
    bad = ((out - ref).abs() > atol + rtol * ref.abs()) | ~torch.isfinite(out)
    return float(bad.double().mean())


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("FF_EXPORT", "ff_export")
    manifest = json.load(open(os.path.join(folder, "manifest.json")))
    p = manifest["params"]
    c, h, w, t0, t1 = p["channels"], p["height"], p["width"], p["tile_size_l0"], p["tile_size_l1"]
    gh, gw = h // t0, w // t0
    case_params = {k: p[k] for k in ("batch", "channels", "height", "width", "tile_size_l0", "tile_size_l1")}
    out_path = os.path.join(os.environ["OUT"], "ff_model_torch.jsonl") if os.environ.get("OUT") else None
    if out_path and os.path.exists(out_path):
        os.remove(out_path)
    failures = []

    def emit(r):
        print(json.dumps(r), flush=True)
        if out_path:
            with open(out_path, "a") as fh:
                fh.write(json.dumps(r) + "\n")

    model = FFModule(c, t0, t1)
    model.load_state_dict(state_dict_from_export(folder, c), strict=True)
    model.eval()
    inputs = {n: load(folder, f"inputs/{n}.npy") for n in
              ("dense", "utilities", "split_utilities", "boundary", "uncertainty")}
    ref = {n: load(folder, f"reference/{n}.npy") for n in ("heavy_features", "detail_map", "alpha")}
    plugin = {n: load(folder, f"outputs/{n}.npy") for n in ("heavy_features", "detail_map", "alpha")}
    # The plugin's CUDA fp16 fast path on the same seed (`ff_model_export --cuda`), when exported.
    cuda_dir = os.path.join(folder, "outputs_cuda_fp16")
    plugin_gpu = ({n: load(folder, f"outputs_cuda_fp16/{n}.npy") for n in ("heavy_features", "detail_map", "alpha")}
                  if os.path.isdir(cuda_dir) else None)

    # Selection: recomputed here from the spec, must equal what the plugin recorded.
    sel = select_all(inputs["utilities"].double(), inputs["split_utilities"].double(), p, gh, gw)
    for b, (mine, theirs) in enumerate(zip(sel, manifest["selections"])):
        same = (mine[0] == theirs["l0_score_order"] and mine[1] == theirs["l1_hilbert_order"]
                and mine[2] == theirs["budget_b1_spent"] and mine[3] == theirs["budget_b2_spent"]
                and hilbert_order(mine[0], gh, gw) == theirs["l0_hilbert_order"])
        print(f"# selection frame {b}: L0 {len(mine[0])} tiles, L1 {len(mine[1])} tiles, "
              f"b1 spent {mine[2]!r}, b2 spent {mine[3]!r}: {'same as the plugin' if same else 'DIFFERENT'}")
        if not same:
            failures.append(f"selection of frame {b} differs from the plugin's")

    def frame(m, x, dtype, device):
        """One frame: selection on the host (utilities read back), then the heavy paths."""
        s = select_all(x["utilities"].double().cpu(), x["split_utilities"].double().cpu(), p, gh, gw)
        ids0 = ids_tensor(s, 0, gh, gw, device)
        ids1 = ids_tensor(s, 1, 2 * gh, 2 * gw, device)
        return m(x["dense"], ids0, ids1, x["boundary"], x["uncertainty"])

    # Parity on the CPU: fp64 against the f64 reference, fp32 against the plugin's fp32 output.
    with torch.inference_mode():
        for dtype, against, label, atol, rtol in (
                (torch.float64, ref, "torch fp64 vs plugin f64 reference", 1e-9, 1e-9),
                (torch.float32, plugin, "torch fp32 vs plugin fp32 fast CPU path", 1e-5, 1e-4)):
            m = FFModule(c, t0, t1).to(dtype)
            m.load_state_dict(state_dict_from_export(folder, c))
            m.eval()
            x = {k: v.to(dtype) for k, v in inputs.items()}
            got = frame(m.heavy, x, dtype, "cpu")
            for name, g in zip(("heavy_features", "detail_map", "alpha"), got):
                err = max_abs(g, against[name])
                ratio = mismatch_ratio(g, against[name], atol, rtol)
                ok = ratio == 0.0
                print(f"# {label}: {name} max_abs_err {err:.3e} mismatch_ratio {ratio:.2e} "
                      f"(atol {atol:g}, rtol {rtol:g}) {'ok' if ok else 'FAIL'}")
                if not ok:
                    failures.append(f"{label}: {name}")

    iters_default = 200 if torch.cuda.is_available() else 30
    iters = int(os.environ.get("FF_ITERS", iters_default))

    def time_frames(fn, sync, n, warmup=3):
        for _ in range(warmup):
            fn()
            sync()
        ms = []
        for _ in range(n):
            t = time.perf_counter()
            fn()
            sync()
            ms.append((time.perf_counter() - t) * 1e3)
        ms.sort()
        return ms[len(ms) // 2], ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]

    # CPU eager, fp32.
    with torch.inference_mode():
        m = FFModule(c, t0, t1).float()
        m.load_state_dict(state_dict_from_export(folder, c))
        m.eval()
        x = {k: v.float() for k, v in inputs.items()}
        p50, p95 = time_frames(lambda: frame(m.heavy, x, torch.float32, "cpu"), lambda: None, iters)
    mine = manifest.get("cpu_ms", {})
    if mine:
        print(f"# CPU frame p50 (ms): plugin fast path {mine['fast_p50']:.2f} (p95 {mine['fast_p95']:.2f}, "
              f"{mine['threads']} threads, measured by the export), plugin f64 reference "
              f"{mine['reference_f64_p50']:.1f}, torch eager fp32 {p50:.2f} (p95 {p95:.2f}, "
              f"{torch.get_num_threads()} threads): torch / plugin fast = {p50 / mine['fast_p50']:.2f}x")
    emit(anchor_row("ff_model.infer", "torch_eager", case_params, "fp32", "cpu", us_per_call=p50 * 1e3,
                    device=cpu_name(), p95_ms=p95, frames_per_s=p["batch"] / (p50 / 1e3),
                    threads=torch.get_num_threads(), torch=torch.__version__,
                    note="FF module written from the spec, selection on the host inside the frame"))

    if not torch.cuda.is_available():
        print("# no CUDA device: the GPU rows (eager, torch.compile, reduce-overhead; fp16) were not run")
    else:
        dev = "cuda"
        dtype = torch.float16
        xg = {k: v.to(dev, dtype) for k, v in inputs.items()}
        base = FFModule(c, t0, t1)
        base.load_state_dict(state_dict_from_export(folder, c))
        base = base.to(dev, dtype).eval()
        impls = (("torch_eager", base.heavy),
                 ("torch_compile", torch.compile(base.heavy)),
                 ("torch_compile_reduce_overhead", torch.compile(base.heavy, mode="reduce-overhead")))
        for impl, fn in impls:
            with torch.inference_mode():
                t = time.perf_counter()
                got = frame(fn, xg, dtype, dev)
                torch.cuda.synchronize()
                first_s = time.perf_counter() - t
                worst = 0.0
                for name, g in zip(("heavy_features", "detail_map", "alpha"), got):
                    ratio = mismatch_ratio(g.cpu(), ref[name], 1e-3, 1e-2)
                    err = max_abs(g.cpu(), ref[name])
                    worst = max(worst, ratio)
                    print(f"# {impl} fp16 vs plugin f64 reference: {name} max_abs_err {err:.3e} "
                          f"mismatch_ratio {ratio:.2e} {'ok' if ratio <= 1e-3 else 'FAIL'}")
                    if ratio > 1e-3:
                        failures.append(f"{impl} fp16: {name}")
                    if plugin_gpu is not None:
                        # The same module in fp16 against the plugin's fp16 GPU output: each has
                        # its own error against the truth, so this is the stricter check.
                        r2 = mismatch_ratio(g.cpu().float(), plugin_gpu[name], 1e-3, 1e-2)
                        e2 = max_abs(g.cpu().float(), plugin_gpu[name])
                        print(f"# {impl} fp16 vs plugin CUDA fp16 fast path: {name} max_abs_err {e2:.3e} "
                              f"mismatch_ratio {r2:.2e} {'ok' if r2 <= 1e-3 else 'FAIL'}")
                        if r2 > 1e-3:
                            failures.append(f"{impl} fp16 vs the plugin's CUDA fp16: {name}")
                p50, p95 = time_frames(lambda: frame(fn, xg, dtype, dev), torch.cuda.synchronize, iters, warmup=10)
            emit(anchor_row("ff_model.infer", impl, case_params, "fp16", "cuda",
                            us_per_call=p50 * 1e3, device=torch.cuda.get_device_name(0), p95_ms=p95,
                            frames_per_s=p["batch"] / (p50 / 1e3), first_call_s=first_s,
                            mismatch_ratio_vs_reference=worst, torch=torch.__version__,
                            note="host-timed frames ending in cuda.synchronize(), selection on the host"))

    if failures:
        print("# parity FAILED: " + "; ".join(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
