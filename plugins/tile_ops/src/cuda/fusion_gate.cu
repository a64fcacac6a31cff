// FusionGate, alpha and fuse in one pass:
//   alpha = sigmoid(wb * clean(boundary) + wu * clean(uncertainty) + bias)     [B,1,H,W]
//   fused = base + alpha * (heavy - base)                                        [B,C,H,W]
// clean(): nan -> 0, +inf -> 1, -inf -> 0. All arithmetic in fp32, one rounding per store.
// Expects BATCH CH HW VEC CPB. Grid (ceil(HW/VEC/256), ceil(CH/CPB), BATCH): each thread owns one
// pixel vector and CPB channels, so alpha is computed once per pixel vector and reused across
// channels, and the y = 0 blocks also store it. Every element of both outputs is written (the
// original's grid assumed BLOCK_SIZE 1024 while the autotuner picked 256 and computed a quarter).

__device__ __forceinline__ float clean_proxy(float v) {
    if (v != v) return 0.0f;
    if (v == __int_as_float(0x7f800000)) return 1.0f;
    if (v == __int_as_float(0xff800000)) return 0.0f;
    return v;
}

extern "C" __global__ void __launch_bounds__(256)
fusion_gate(const S* __restrict__ base, const S* __restrict__ heavy, const S* __restrict__ boundary,
            const S* __restrict__ uncertainty, S* __restrict__ fused, S* __restrict__ alpha_out, float wb,
            float wu, float bias) {
    const unsigned int pv = blockIdx.x * blockDim.x + threadIdx.x;
    if (pv >= HW / VEC) return;
    const unsigned int b = blockIdx.z;
    const size_t poff = (size_t)b * HW + (size_t)pv * VEC;
    float bd[VEC], un[VEC], a[VEC];
    load_f32(boundary + poff, bd);
    load_f32(uncertainty + poff, un);
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        const float z = fmaf(wb, clean_proxy(bd[i]), fmaf(wu, clean_proxy(un[i]), bias));
        a[i] = 1.0f / (1.0f + expf(-z));
    }
    if (blockIdx.y == 0) store_f32(alpha_out + poff, a);
    const unsigned int c0 = blockIdx.y * CPB;
    const unsigned int c1 = c0 + CPB < CH ? c0 + CPB : CH;
    for (unsigned int c = c0; c < c1; ++c) {
        const size_t off = ((size_t)b * CH + c) * HW + (size_t)pv * VEC;
        float x[VEC], h[VEC];
        load_f32(base + off, x);
        load_f32(heavy + off, h);
#pragma unroll
        for (int i = 0; i < VEC; ++i) x[i] = fmaf(a[i], h[i] - x[i], x[i]);
        store_f32(fused + off, x);
    }
}
