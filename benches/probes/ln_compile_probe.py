"""torch.compile's LayerNorm at one shape, for a profiler: compiles F.layer_norm for
x[rows, dim] (bf16 unless --fp32) with affine weight and bias, then runs it `--calls` times.

  ncu --kernel-name regex:triton python3 benches/probes/ln_compile_probe.py --rows 8192 --dim 1024

Pairs with `nn_ops_gpu_check --bench-only --only dim=1024` under the same ncu options (issue 14:
LayerNorm bf16 8192 x 1024, ours 13.05 us against compile's 11.69, H100 session 8 call 8).
"""
import argparse

import torch
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--rows", type=int, default=8192)
p.add_argument("--dim", type=int, default=1024)
p.add_argument("--calls", type=int, default=5)
p.add_argument("--fp32", action="store_true")
a = p.parse_args()
dt = torch.float32 if a.fp32 else torch.bfloat16
x = torch.randn(a.rows, a.dim, device="cuda", dtype=dt)
w = torch.randn(a.dim, device="cuda", dtype=dt)
b = torch.randn(a.dim, device="cuda", dtype=dt)
f = torch.compile(lambda x, w, b: F.layer_norm(x, (a.dim,), w, b, 1e-5), dynamic=False)
for _ in range(a.calls):
    y = f(x, w, b)
torch.cuda.synchronize()
print("ok", tuple(y.shape), y.dtype)
