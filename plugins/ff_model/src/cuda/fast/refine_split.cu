// cuda/fast/refine_split.cu: the split refine path (ff_refine, then ff_apply). One part of the fast
// path's program (prelude.cu lists the parts).
// ff_refine: grid (chunks, K, B), THREADS threads. Modulate, depthwise 3x3 and the pointwise
// GEMM of one chunk; writes the pre-norm GEMM output pre[b,k,0..2C,p] (f32) and the chunk's
// GroupNorm partials stats[b,k,chunk] = (sum, centred sum of squares). Shared memory: see
// refine_operand.
extern "C" __global__ void __launch_bounds__(THREADS) ff_refine(
    const float* __restrict__ packed, const float* __restrict__ film,
    const float* __restrict__ weights, float* __restrict__ pre, float* __restrict__ stats, int C,
    int t, int K) {
    FF_TL(TL_REFINE_OTHER, film);
    FF_AFTER_PREDECESSOR();
    extern __shared__ float ref_smem[];
    __shared__ float part[WARPS][3];
    const int chunk = blockIdx.x, k = blockIdx.y, b = blockIdx.z, chunks = gridDim.x;
    const int P = t * t, p0 = chunk * CHUNK, p1 = min(p0 + CHUNK, P);
    const Level l = level_at(weights, C);
    const long long tk = (long long)b * K + k;
    const S* bs = refine_operand(packed + tk * C * P, film + tk * 2 * C, l, ref_smem, C, t, p0, p1);

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, q = lane & 3, g = lane >> 2;
    float* out = pre + tk * 2 * C * P;
    float acc_a[NT][4], acc_b[NT][4];
    float cnt = 0.0f, cmean = 0.0f, cm2 = 0.0f;
    for (int at = warp; at < C / 16; at += WARPS) {
        refine_gemm(l, bs, C + BPAD, C, at, acc_a, acc_b);
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
            const int p = p0 + nt * 8 + 2 * q;
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int c = at * 16 + g + half * 8;
                const float a0 = acc_a[nt][2 * half], a1 = acc_a[nt][2 * half + 1];
                const float b0 = acc_b[nt][2 * half], b1 = acc_b[nt][2 * half + 1];
                if (p + 1 < p1) {  // both columns; p is even, so with an even P so is c * P + p
                    if ((P & 1) == 0) {
                        *reinterpret_cast<float2*>(out + (long long)c * P + p) = make_float2(a0, a1);
                        *reinterpret_cast<float2*>(out + (long long)(C + c) * P + p) = make_float2(b0, b1);
                    } else {
                        out[(long long)c * P + p] = a0;
                        out[(long long)c * P + p + 1] = a1;
                        out[(long long)(C + c) * P + p] = b0;
                        out[(long long)(C + c) * P + p + 1] = b1;
                    }
                } else if (p < p1) {
                    out[(long long)c * P + p] = a0;
                    out[(long long)(C + c) * P + p] = b0;
                }
            }
        }
        acc_partial(acc_a, acc_b, p0, p1, cnt, cmean, cm2);
    }
    chunk_partial(cnt, cmean, cm2, part, stats + (tk * chunks + chunk) * 2);
}

// ff_apply: grid (ceil(C*P / (THREADS*APPLY_PER_THREAD)), K, B). GroupNorm of the tile (its chunks' partials
// combined in f64 by each block), a*relu(b) + the modulated residual, FusionGate against the
// packed base, and the override unpack: heavy (storage), l0map (f32, L0 only), detail (L1 only).
extern "C" __global__ void __launch_bounds__(THREADS) ff_apply(
    const float* __restrict__ packed, const float* __restrict__ film,
    const float* __restrict__ weights, const float* __restrict__ pre,
    const float* __restrict__ stats, const int* __restrict__ ids, const S* __restrict__ boundary,
    const S* __restrict__ uncertainty, S* __restrict__ heavy, S* __restrict__ detail,
    float* __restrict__ l0map, int C, int H, int W, int t, int gw, int K, int chunks) {
    FF_TL(TL_REFINE_OTHER, film);
    FF_AFTER_PREDECESSOR();
    __shared__ double partial[2 * 64];
    __shared__ float stat[2];
    const int k = blockIdx.y, b = blockIdx.z, P = t * t;
    const Level l = level_at(weights, C);
    const long long tk = (long long)b * K + k;
    const float* pt = pre + tk * 2 * C * P;
    const float* fk = film + tk * 2 * C;
    const int id = ids[tk];
    const int y0 = (id / gw) * t, x0 = (id % gw) * t;
    const int n = C * P;
    const float inv_p = 1.0f / (float)P, inv_t = 1.0f / (float)t;
    float pa[APPLY_PER_THREAD], pb[APPLY_PER_THREAD], base[APPLY_PER_THREAD];
    float bnd[APPLY_PER_THREAD], unc[APPLY_PER_THREAD];
#pragma unroll
    for (int e = 0; e < APPLY_PER_THREAD; ++e) {  // clamped, unconditional loads (see STAGE)
        const int i = min((blockIdx.x * APPLY_PER_THREAD + e) * blockDim.x + threadIdx.x, n - 1);
        const int c = div_small(i, P, inv_p), p = i - c * P, py = div_small(p, t, inv_t);
        pa[e] = pt[(long long)c * P + p];
        pb[e] = pt[(long long)(C + c) * P + p];
        base[e] = packed[tk * C * P + i];
        const long long pix = ((long long)b * H + y0 + py) * W + x0 + p - py * t;
        bnd[e] = to_f32(boundary[pix]);
        unc[e] = to_f32(uncertainty[pix]);
    }
    // The tile's GroupNorm statistics while those loads are in flight.
    const float* st = stats + tk * chunks * 2;
    if (threadIdx.x < 2 * chunks) partial[threadIdx.x] = st[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) tile_stats(partial, chunks, C, P, stat);
    __syncthreads();
    const float mean = stat[0], inv = stat[1];
#pragma unroll
    for (int e = 0; e < APPLY_PER_THREAD; ++e) {
        const int i = (blockIdx.x * APPLY_PER_THREAD + e) * blockDim.x + threadIdx.x;
        if (i >= n) break;
        const int c = div_small(i, P, inv_p), p = i - c * P, py = div_small(p, t, inv_t);
        const float refined = refine_value(pa[e], pb[e], base[e], mean, inv, l.gn_w[c], l.gn_b[c],
                                           l.gn_w[C + c], l.gn_b[C + c], fk[c], fk[C + c]);
        const float alpha = gate_alpha(l.gate, bnd[e], unc[e]);
        const float o = base[e] + alpha * (refined - base[e]);
        const long long at = (((long long)b * C + c) * H + y0 + py) * W + x0 + p - py * t;
        store_out(heavy + at, o);
        if (l0map) l0map[at] = o;
        if (detail) store_out(detail + at, o - base[e]);
    }
}
