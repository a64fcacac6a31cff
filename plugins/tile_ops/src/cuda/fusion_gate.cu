// FusionGate, alpha and fuse in one pass:
//   alpha = sigmoid(wb * clean(boundary) + wu * clean(uncertainty) + bias)     [B,1,H,W]
//   fused = base + alpha * (heavy - base)                                        [B,C,H,W]
// clean(): nan -> 0, +inf -> 1, -inf -> 0. All arithmetic in fp32, one rounding per store.
// Expects BATCH CH HW VEC CPB UNROLL (and optionally HINT). Grid (ceil(HW/VEC/256), ceil(CH/CPB),
// BATCH): each thread owns one pixel vector and CPB channels, so alpha is computed once per pixel
// vector and reused across channels, and the y = 0 blocks also store it. Every element of both
// outputs is written (the original's grid assumed BLOCK_SIZE 1024 while the autotuner picked 256
// and computed a quarter).
//
// The channel loop loads UNROLL channels of base and heavy (2*UNROLL 16-byte loads) before it uses
// any of them, so one thread keeps several loads in flight instead of load-wait-compute-store.

__device__ __forceinline__ float clean_proxy(float v) {
    if (v != v) return 0.0f;
    if (v == __int_as_float(0x7f800000)) return 1.0f;
    if (v == __int_as_float(0xff800000)) return 0.0f;
    return v;
}

__device__ __forceinline__ Raw fuse_vec(Raw xr, Raw hr, const float (&a)[VEC]) {
    float x[VEC], h[VEC];
    unpack_f32(xr, x);
    unpack_f32(hr, h);
#pragma unroll
    for (int i = 0; i < VEC; ++i) x[i] = fmaf(a[i], h[i] - x[i], x[i]);
    return pack_f32(x);
}

extern "C" __global__ void __launch_bounds__(256)
fusion_gate(const S* __restrict__ base, const S* __restrict__ heavy, const S* __restrict__ boundary,
            const S* __restrict__ uncertainty, S* __restrict__ fused, S* __restrict__ alpha_out, float wb,
            float wu, float bias) {
    const unsigned int pv = blockIdx.x * blockDim.x + threadIdx.x;
    if (pv >= HW / VEC) return;
    const unsigned int b = blockIdx.z;
    const size_t poff = (size_t)b * HW + (size_t)pv * VEC;
    const unsigned int c0 = blockIdx.y * CPB;
    const unsigned int c1 = c0 + CPB < CH ? c0 + CPB : CH;
    const size_t off0 = ((size_t)b * CH + c0) * HW + (size_t)pv * VEC;
    // The first channels' loads go out before the alpha math, which then hides part of their latency.
    Raw xr[UNROLL], hr[UNROLL];
    const bool full0 = c0 + UNROLL <= c1;
    if (full0) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            xr[u] = load_raw(base + off0 + (size_t)u * HW);
            hr[u] = load_raw(heavy + off0 + (size_t)u * HW);
        }
    }
    float bd[VEC], un[VEC], a[VEC];
    load_f32(boundary + poff, bd);
    load_f32(uncertainty + poff, un);
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        const float z = fmaf(wb, clean_proxy(bd[i]), fmaf(wu, clean_proxy(un[i]), bias));
        a[i] = 1.0f / (1.0f + expf(-z));
    }
    if (blockIdx.y == 0) store_f32(alpha_out + poff, a);
    unsigned int c = c0;
    if (full0) {
        for (;;) {
            const size_t off = off0 + (size_t)(c - c0) * HW;
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) store_raw(fused + off + (size_t)u * HW, fuse_vec(xr[u], hr[u], a));
            c += UNROLL;
            if (c + UNROLL > c1) break;
            const size_t next = off + (size_t)UNROLL * HW;
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                xr[u] = load_raw(base + next + (size_t)u * HW);
                hr[u] = load_raw(heavy + next + (size_t)u * HW);
            }
        }
    }
    for (; c < c1; ++c) {
        const size_t off = off0 + (size_t)(c - c0) * HW;
        store_raw(fused + off, fuse_vec(load_raw(base + off), load_raw(heavy + off), a));
    }
}
