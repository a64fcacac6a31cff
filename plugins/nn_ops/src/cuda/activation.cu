// Elementwise activations over N elements, fp32 math, one rounding per store. One launch.
// Expects the FlatPlan defines (N VEC NVEC TAIL UNROLL BLOCK GRID) and ACT:
//   0: GELU, erf form:  0.5 x erfc(-x / sqrt 2)  (= 0.5 x (1 + erf(x / sqrt 2)), exact in the tail)
//   1: GELU, tanh form: 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), as x * sigmoid(2u)
//   2: Swish (SiLU):    x * sigmoid(x)
// Each thread loads UNROLL 16-byte vectors (strided by BLOCK, so a warp's accesses are
// contiguous) before it computes any; block 0 also does the N % VEC tail elements.

__device__ __forceinline__ float act(float x) {
#if ACT == 0
    return 0.5f * x * erfcf(-x * 0.70710678118654752f);
#elif ACT == 1
    const float u = 0.79788456080286536f * fmaf(0.044715f * x, x * x, x);
    return x / (1.0f + expf(-2.0f * u));
#else
    return x / (1.0f + expf(-x));
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK)
activation(const S* __restrict__ x, S* __restrict__ y) {
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
