"""PyTorch anchors for the nn_ops CUDA kernels: torch eager and torch.compile on the same cases as
`nn_ops_gpu_check --bench` and the CUDA part of plugins/nn_ops/bench.yaml, in ONE GPU process.

Timing is apex-host's DRAM-cold batch mode (quack's `_bench_cuda_graph_l2_rotate`): the inputs
of a call are cloned into n buffer sets totalling at least 3 x L2 (n in [4, 16], fewer if memory
is short), CALLS round-robin calls are captured in one CUDA graph, one replay is timed with CUDA
events (after a warm-up replay), and the time is divided by CALLS. Each call returns its outputs
as torch does; inside the graph they come from the graph's private memory pool (copying them into
cloned output buffers would add a read and a write that the Rust kernels do not pay), and each
stays referenced until its buffer set comes round again, so the outputs rotate over n + 1 blocks
as apex-host's rotate with its inputs (until 2026-11-26 they were dropped at once and every call
wrote the same block, still in L2: see bench_graph). GB/s count
the same minimum traffic the Rust kernels declare (Work): inputs read once, outputs written once
(cross-entropy: logits + int64 targets, + the gradient with grad, + 4 bytes for the loss).

Cross-entropy "grad" is the composite forward+backward the fused kernel replaces: loss and
d loss / d logits of F.cross_entropy(logits, targets) (mean, ignore_index -100), via
torch.autograd.grad inside the captured region.

Prints one JSON line per case in the anchor schema (anchor_row.py; docs/anchors.md; "cache" is
dram_cold when the buffer sets cover 3 x L2, else l2_hot) and writes $OUT/nn_ops_torch.jsonl when
OUT is set, for `apex-host run --anchor-results FILE`. The copy line is a row of kernel "copy",
which matches no case (apex-host measures its own with `calibrate`). torch.compile compiles per shape (dynamic=False),
so it runs on the LLM grid and a few seed shapes only; budget about 4 minutes on an H100.

Run on the GPU machine: `python benches/anchors/nn_ops_torch.py [--quick] [--only TEXT] [--seed-small]
[--l2-hot]` (`--only`: just the cases whose kernel id contains TEXT, e.g. `--only layer_norm`; the
copy line always runs; `--seed-small`: only the seed's 2 M-element shapes (16 x 256 x 512, 4096 x
512 logits), eager and compiled in both precisions; `--l2-hot`: one buffer set, so a working set
smaller than the L2 stays there between calls, the counterpart of `apex-host run --l2-hot`'s
`batch_hot` mode; its rows say `cache: l2_hot`).
"""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

from anchor_row import row as anchor_row

dev = "cuda"
torch.manual_seed(0)
props = torch.cuda.get_device_properties(0)
L2 = getattr(props, "L2_cache_size", 50 << 20) or (50 << 20)
DEVICE = props.name
CALLS = 20
QUICK = "--quick" in sys.argv
ONLY = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
SEED_SMALL = "--seed-small" in sys.argv
L2_HOT = "--l2-hot" in sys.argv
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
rows_out = []
out_path = os.path.join(os.environ["OUT"], "nn_ops_torch.jsonl") if os.environ.get("OUT") else None
t_start = time.time()
if out_path:
    open(out_path, "w").close()


def emit(row):
    rows_out.append(row)
    print(json.dumps(row), flush=True)
    if out_path:
        with open(out_path, "a") as fh:
            fh.write(json.dumps(row) + "\n")


def sets_for(nbytes):
    free, _ = torch.cuda.mem_get_info()
    n = max(4, min(16, -(-3 * L2 // max(nbytes, 1))))
    fit = max(1, int((free - (2 << 30)) // max(nbytes, 1)))
    return max(1, min(n, fit))


def bench_graph(fn, sets):
    """us per call: CALLS round-robin calls over `sets` buffer sets in one CUDA graph."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for i in range(3):  # warm-up (and torch.compile's first call) outside the capture
            fn(sets[i % len(sets)])
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    # Each call's outputs stay referenced until its buffer set comes round again, so the graph's
    # pool gives the calls len(sets) distinct output blocks in turn, as apex-host rotates its
    # outputs with its inputs. Dropped at once (before 2026-11-26), every call got the same
    # block back and wrote into lines still in L2.
    ring = [None] * len(sets)
    with torch.cuda.graph(g):
        for i in range(CALLS):
            ring[i % len(sets)] = fn(sets[i % len(sets)])
    del ring
    g.replay()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    g.replay()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) * 1e3 / CALLS


def run_case(kernel, params, precision, make, fn, nbytes, compile_too):
    """make() -> one buffer set (a tuple); fn(set) performs one call writing into the set."""
    if ONLY is not None and ONLY not in kernel:
        return
    base = make()
    per_set = sum(t.numel() * t.element_size() for t in base if torch.is_tensor(t))
    n = 1 if L2_HOT else sets_for(per_set)
    sets = [base] + [tuple(t.clone() if torch.is_tensor(t) else t for t in base) for _ in range(n - 1)]
    impls = [("torch_eager", fn)]
    if compile_too:
        impls.append(("torch_compile", torch.compile(fn, dynamic=False)))
    cache = "dram_cold" if n * per_set >= 3 * L2 else "l2_hot"
    for impl, f in impls:
        try:
            us = bench_graph(f, sets)
            row = anchor_row(kernel, impl, params, precision, "cuda", us, gbps=nbytes / us / 1e3, cache=cache,
                             device=DEVICE, sets=n)
        except Exception as exc:  # a failing impl is reported, the others still run
            row = anchor_row(kernel, impl, params, precision, "cuda", error=f"{type(exc).__name__}: {str(exc)[:200]}",
                             device=DEVICE, sets=n)
        emit(row)
    del sets, base
    torch.cuda.empty_cache()


def elementwise(kernel, b, s, d, precision, compile_too, approximate="none"):
    dt = DTYPES[precision]
    es = torch.finfo(dt).bits // 8
    n = b * s * d
    params = dict(batch=b, seq=s, dim=d)
    if kernel == "nn_ops.gelu":
        params["approximate"] = approximate
        op = lambda st: F.gelu(st[0], approximate=approximate)
    else:
        op = lambda st: F.silu(st[0])
    make = lambda: (torch.rand(b, s, d, device=dev, dtype=dt) * 10 - 5,)
    run_case(kernel, params, precision, make, op, 2 * n * es, compile_too)


def layer_norm(b, s, d, precision, compile_too):
    dt = DTYPES[precision]
    es = torch.finfo(dt).bits // 8
    make = lambda: (
        torch.rand(b, s, d, device=dev, dtype=dt) * 4 - 1.5,
        torch.rand(d, device=dev, dtype=dt) + 0.5,
        torch.rand(d, device=dev, dtype=dt) - 0.5,
    )
    op = lambda st: F.layer_norm(st[0], (d,), st[1], st[2], 1e-5)
    run_case("nn_ops.layer_norm", dict(batch=b, seq=s, dim=d), precision, make, op, (2 * b * s * d + 2 * d) * es, compile_too)


def mse(b, s, d, precision, compile_too):
    dt = DTYPES[precision]
    es = torch.finfo(dt).bits // 8
    make = lambda: (
        torch.rand(b, s, d, device=dev, dtype=dt) * 4 - 2,
        torch.rand(b, s, d, device=dev, dtype=dt) * 4 - 2,
    )
    op = lambda st: F.mse_loss(st[0], st[1])
    run_case("nn_ops.mse_loss", dict(batch=b, seq=s, dim=d, reduction="mean"), precision, make, op, 2 * b * s * d * es + 4, compile_too)


def cross_entropy(rows, vocab, grad, precision, compile_too):
    dt = DTYPES[precision]
    es = torch.finfo(dt).bits // 8

    def make():
        logits = torch.rand(rows, vocab, device=dev, dtype=dt) * 10 - 5
        t = torch.randint(0, vocab, (rows,), device=dev)
        t[torch.rand(rows, device=dev) < 0.1] = -100
        return logits, t

    if grad:
        def op(st):
            x = st[0].detach().requires_grad_(True)
            loss = F.cross_entropy(x, st[1], ignore_index=-100)
            (gx,) = torch.autograd.grad(loss, x)
            return loss, gx
    else:
        def op(st):
            return F.cross_entropy(st[0], st[1], ignore_index=-100)
    n = rows * vocab
    nbytes = n * es + 8 * rows + (n * es if grad else 0) + 4
    run_case("nn_ops.cross_entropy", dict(rows=rows, vocab=vocab, grad=grad), precision, make, op, nbytes, compile_too)


def copy_line():
    a = torch.empty(1 << 28, device=dev)
    b = torch.empty_like(a)
    us = bench_graph(lambda st: st[1].copy_(st[0]), [(a, b)])  # the copy line: 1 GiB read + write
    emit(anchor_row("copy", "torch", dict(bytes=2 << 30), "fp32", "cuda", us, gbps=(2 << 30) / us / 1e3, device=DEVICE))


copy_line()
precisions = ["bf16"] if QUICK else ["bf16", "fp32"]
# LLM grid: 8,192 tokens x hidden 512 ... 8,192. torch.compile on every bf16 case and on a few fp32
# ones (each shape compiles once, several seconds); eager everywhere.
for p in [] if SEED_SMALL else precisions:
    bf = p == "bf16"
    for d in ([1024, 4096] if QUICK else [512, 1024, 2048, 4096, 8192]):
        layer_norm(1, 8192, d, p, bf or d in (1024, 8192))
    for d in [4096, 8192]:
        elementwise("nn_ops.gelu", 1, 8192, d, p, bf)
        elementwise("nn_ops.gelu", 1, 8192, d, p, bf, approximate="tanh")
        elementwise("nn_ops.swish", 1, 8192, d, p, bf)
        mse(1, 8192, d, p, bf)
    for v in [32768, 131072, 262144]:
        for grad in [False, True]:
            cross_entropy(4096, v, grad, p, bf or v == 32768)
# The seed's shapes: the 2 M-element one with compile (bf16; both with --seed-small), a few more
# eager only.
for p in precisions:
    seed_shapes = [(16, 256, 512)] if SEED_SMALL else [(16, 256, 512), (16, 256, 8), (128, 2048, 512), (64, 1024, 64)]
    for (b, s, d) in seed_shapes:
        c = (p == "bf16" or SEED_SMALL) and (b, s, d) == (16, 256, 512)
        layer_norm(b, s, d, p, c)
        elementwise("nn_ops.gelu", b, s, d, p, c)
        elementwise("nn_ops.swish", b, s, d, p, c)
        mse(b, s, d, p, c)
    cross_entropy(4096, 512, False, p, p == "bf16" or SEED_SMALL)
    if not SEED_SMALL:
        cross_entropy(262144, 512, False, p, False)
# Not an anchor row: on stderr, so stdout stays one schema line per case.
print(json.dumps(dict(done=True, cases=len(rows_out), seconds=round(time.time() - t_start, 1))), file=sys.stderr, flush=True)
