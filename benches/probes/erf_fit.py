#!/usr/bin/env python3
"""The coefficients of nn_ops' CPU `erf_f32` (plugins/nn_ops/src/fast_math.rs).

erf(x) ~ x P(x^2) / Q(x^2) on [0, 4], P of degree 6 and Q of degree 4 in x^2, Q(0) = 1: the
linearized least-squares problem x P - erf Q = 0 on 40,001 points, reweighted by 1 / Q (Loeb)
and by the current error (Lawson, toward the minimax fit), 60 rounds. Prints the coefficients,
the fit's maximum absolute error in f64 (about 1.5e-7) and the error of the f32 Horner
evaluation with x clamped to [-4, 4] (about 4e-7: f32 rounding).

    python3 benches/probes/erf_fit.py
"""

import math

import numpy as np

xs = np.linspace(0, 4, 40001)
f = np.array([math.erf(v) for v in xs])
t = xs * xs
NP, NQ = 7, 4
w = np.ones_like(xs)
qv = np.ones_like(xs)
for _ in range(60):
    a = np.hstack([
        np.stack([xs * t**k for k in range(NP)], 1),
        -np.stack([f * t**k for k in range(1, NQ + 1)], 1),
    ])
    weights = (w / qv)[:, None]
    sol, *_ = np.linalg.lstsq(a * weights, f * weights[:, 0], rcond=None)
    p, q = sol[:NP], np.concatenate([[1.0], sol[NP:]])
    qv = sum(q[k] * t**k for k in range(NQ + 1))
    err = np.abs(xs * sum(p[k] * t**k for k in range(NP)) / qv - f)
    w = w * (err / err.max()) ** 0.3 + 1e-12
    w /= w.max()
print("P (x^0 .. x^12):", [float(c) for c in p])
print("Q (x^0 .. x^8): ", [float(c) for c in q])
print("max abs error, f64:", err.max())

x32 = np.linspace(-6, 6, 240001).astype(np.float32)
xc = np.clip(x32, np.float32(-4), np.float32(4))
u = xc * xc
pp = np.float32(p[-1]) + np.zeros_like(u)
for c in p[-2::-1]:
    pp = (pp * u + np.float32(c)).astype(np.float32)
qq = np.float32(q[-1]) + np.zeros_like(u)
for c in q[-2::-1]:
    qq = (qq * u + np.float32(c)).astype(np.float32)
ref = np.array([math.erf(v) for v in x32.astype(np.float64)])
print("max abs error, f32 evaluation on [-6, 6]:", np.abs((xc * pp / qq) - ref).max())
