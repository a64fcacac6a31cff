// Elementwise activations over N elements, fp32 math, one rounding per store. One launch.
// Expects the FlatPlan defines (N VEC NVEC TAIL UNROLL BLOCK GRID), EARLY_TRIGGER (let the next
// call's blocks in at this call's start) and ACT:
//   0: GELU, erf form:  0.5 x erfc(-x / sqrt 2)  (= 0.5 x (1 + erf(x / sqrt 2)), exact in the tail)
//   1: GELU, tanh form: 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), as x * sigmoid(2u)
//   2: Swish (SiLU):    x * sigmoid(x)
// Each thread loads UNROLL 16-byte vectors (strided by BLOCK, so a warp's accesses are
// contiguous) before it computes any; block 0 also does the N % VEC tail elements.
//
// The math is MUFU-based so that the kernels stay memory-bound at 2-byte types: one ex2.approx
// (relative error about 2^-22) and one fast reciprocal/division per element. erfc is Numerical
// Recipes' Chebyshev fit (fractional error below 1.2e-7; the CPU path uses Abramowitz and Stegun 7.1.26, absolute
// error 1.5e-7, for speed), which
// keeps GELU's relative accuracy far into the negative tail where 1 + erf(x) cancels. libdevice's
// erfcf made GELU-erf compute-bound at bf16 (H100, 2026-11-22: 74.6 us against torch.compile's
// 52.6 on 8192 x 4096).

// erfc(z) for z >= 0.
__device__ __forceinline__ float erfc_pos(float z) {
    const float t = __fdividef(1.0f, fmaf(0.5f, z, 1.0f));
    float p = 0.17087277f;
    p = fmaf(p, t, -0.82215223f);
    p = fmaf(p, t, 1.48851587f);
    p = fmaf(p, t, -1.13520398f);
    p = fmaf(p, t, 0.27886807f);
    p = fmaf(p, t, -0.18628806f);
    p = fmaf(p, t, 0.09678418f);
    p = fmaf(p, t, 0.37409196f);
    p = fmaf(p, t, 1.00002368f);
    p = fmaf(p, t, -1.26551223f);
    return t * ex2(fmaf(-z, z, p) * LOG2E);
}

// x * sigmoid(v) = x / (1 + e^-v); e^-v = inf gives x * 0.
__device__ __forceinline__ float times_sigmoid(float x, float v) {
    return __fdividef(x, 1.0f + ex2(-v * LOG2E));
}

__device__ __forceinline__ float act(float x) {
#if ACT == 0
    const float half_erfc = 0.5f * erfc_pos(fabsf(x) * 0.70710678118654752f);
    // x (1 - h) rather than x - x h: at x = +inf, h = 0 and the latter is inf - inf.
    return x >= 0.0f ? x * (1.0f - half_erfc) : x * half_erfc;
#elif ACT == 1
    const float u = 0.79788456080286536f * fmaf(0.044715f * x, x * x, x);
    return times_sigmoid(x, 2.0f * u);
#else
    return times_sigmoid(x, x);
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK)
activation(const S* __restrict__ x, S* __restrict__ y) {
#if !EARLY_TRIGGER
    // GELU-erf is issue-bound at 16-bit types: with the next call's blocks let in at this
    // call's start, bf16 and fp16 8192 x 512 (one wave) ran 13-17 % slower while every other
    // case gained (H100, 2026-11-26), so where the grid is one wave or less its blocks come in
    // as this call's leave (setup's EARLY_TRIGGER).
    dependent_launch_wait();
#else
    dependent_launch_start();
#endif
    const size_t v0 = (size_t)blockIdx.x * BLOCK * UNROLL + threadIdx.x;
    Raw r[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const size_t vi = v0 + (size_t)u * BLOCK;
        r[u] = vi < NVEC ? load_raw(x + vi * VEC) : fill_raw((S)0);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const size_t vi = v0 + (size_t)u * BLOCK;
        if (vi < NVEC) {
            float f[VEC];
            unpack_f32(r[u], f);
#pragma unroll
            for (int i = 0; i < VEC; ++i) f[i] = act(f[i]);
            store_f32(y + vi * VEC, f);
        }
    }
    if (TAIL > 0 && blockIdx.x == 0 && threadIdx.x < TAIL) {
        const size_t i = (size_t)NVEC * VEC + threadIdx.x;
        y[i] = from_f32(act(to_f32(x[i])));
    }
}
