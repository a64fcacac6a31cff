// cuda/fast/refine_lean.cu: ff_refine_apply_lean and its shape-compiled copies. One part of the
// fast path's program (prelude.cu lists the parts).
// ---------------------------------------------------------------------------------------------
// ff_refine_apply_lean (sm_90): ff_refine_apply in at most 64 registers a thread, so four CTAs
// share a SM (__launch_bounds__(THREADS, LEAN_MIN_BLOCKS); ff_refine_apply's 122-128 registers
// leave two; bf16's third product spills at 64, so bf16 takes 80 and three). Same grid, clusters,
// arguments and math as ff_refine_apply; what differs is where the GEMM's output waits for the
// tile's statistics:
//   1. refine_operand as in ff_refine_apply, told the stash's length: the stash [2C][CHUNK] f32
//      (swizzled by stash_at) at the dynamic shared memory's start ends inside the operand's
//      modulated rows `mod`, dead once the operand is built, and never reaches bs (host:
//      lean_smem; at C = 128, t = 16 the rows are the longer: 49.5 KiB a CTA, four fit a SM);
//   2. the GEMM one row tile at a time (refine_gemm_tile: half the accumulators and fragments of
//      refine_gemm live): "a" into the stash's first rows, then "b", with which and "a" read
//      back acc_partial runs on the same values as in ff_refine_apply; chunk_partial, whose
//      block barrier also ends every warp's reads of the operand; then "b" into the stash.
//      Nothing but the residual's base values is live across the wait for the partials;
//   3. the chunks' partials pushed to every CTA of the cluster (Exchange: st.async onto each
//      CTA's mbarrier), not pulled: thread 0 waits for them on its own mbarrier, reads them
//      locally and runs tile_stats; no second cluster barrier (nothing reads a peer's shared
//      memory), and no wait for the peers before exit;
//   4. the finish re-mapped for the stores: each thread takes runs of LEAN_RUN consecutive
//      pixels of one channel (run r: channel r / (CHUNK / LEAN_RUN), pixels LEAN_RUN * (r %
//      (CHUNK / LEAN_RUN)) on; runs spread over the block's threads in order, so warps that own
//      no row tile (C < 16 * WARPS) finish too), reads their pre-norm pairs back from the stash
//      (16-byte loads) and stores each output as one 16-byte (fp32: two) store where t is a
//      multiple of LEAN_RUN (the run then lies in one row of the tile, at an aligned offset),
//      element by element otherwise.
// Each value of the general entry point goes through the same formulas in the same order as in
// ff_refine_apply (the same accumulators, partials, tile_stats, refine_value and gate), so both
// give the same outputs; the shape copies' (LEAN_ENTRY) differ from them in rounding only (WHOLE:
// whole_chunk_partial, GroupNorm's affine folded per channel).
#define LEAN_RUN 8
#define LEAN_RUNS_PER_ROW (CHUNK / LEAN_RUN)
// Runs a thread finishes: C * LEAN_RUNS_PER_ROW <= 16 * WARPS * 4 = 2 * THREADS.
#define LEAN_RUNS_PER_THREAD (16 * WARPS * LEAN_RUNS_PER_ROW / THREADS)

// The stash's f32 offset of (row, column), row < 2C, column < CHUNK: unpadded rows with the
// column XOR-swizzled by ((row & 3) << 3) | ((row & 1) << 2) (pairs and aligned quads stay
// contiguous). The GEMM's float2 stores (a half-warp: rows r..r+3, r % 4 == 0, eight columns)
// hit four distinct 8-bank groups, and the finish's float4 loads (a quarter-warp: two adjacent
// rows, four quads each, at columns LEAN_RUN * j + 4h) alternate the quad's half of each group
// between the rows: both conflict-free without padding.
__device__ __forceinline__ int stash_at(int row, int col) {
    return row * CHUNK + (col ^ (((row & 3) << 3) | ((row & 1) << 2)));
}

// refine_gemm for one row tile `rt` (rows 16 * rt + g and + 8) into acc[nt][4]: each
// accumulator takes the same products in the same order as there (bias, then per k step the
// lo-weight product (bf16, fp32), the lo-activation product, the hi product), with half the
// accumulators and fragments live. ff_refine_apply_lean runs it for "a", then for "b".
__device__ __forceinline__ void refine_gemm_tile(const Level& l, const S* bs, int bstride, int C,
                                                 int rt, float (*acc)[4]) {
    const int lane = threadIdx.x & 31, g = lane >> 2;
    const int r = rt * 16 + g;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        acc[nt][0] = acc[nt][1] = l.pw_b[r];
        acc[nt][2] = acc[nt][3] = l.pw_b[r + 8];
    }
    const int ksteps = C / KSTEP;
    const uint4* hi = reinterpret_cast<const uint4*>(l.pw);
#if WEIGHTS_LO
    const uint4* lo = weights_lo(hi, C);
#endif
    const unsigned bs_at = (unsigned)__cvta_generic_to_shared(bs) + operand_lane(bstride);
    // The next k step's fragments load while this one's products run (the last step reloads
    // its own: clamped, unconditional).
    const long long f0 = (long long)rt * ksteps * 32 + lane;
    uint4 ah = hi[f0];
#if WEIGHTS_LO
    uint4 al = lo[f0];
#endif
#pragma unroll 1
    for (int ks = 0; ks < ksteps; ++ks) {
        const long long fn = f0 + (long long)min(ks + 1, ksteps - 1) * 32;
        const uint4 nh = hi[fn];
#if WEIGHTS_LO
        const uint4 nl = lo[fn];
#endif
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
            unsigned h0, h1, l0, l1;
            operand_frags(bs_at + operand_step(bstride, nt, ks), h0, h1, l0, l1);
#if WEIGHTS_LO
            mma_step(acc[nt], al, h0, h1);
#endif
            mma_step(acc[nt], ah, l0, l1);
            mma_step(acc[nt], ah, h0, h1);
        }
        ah = nh;
#if WEIGHTS_LO
        al = nl;
#endif
    }
}

// A row tile's accumulators (the thread's rows `row` ([0], [1]) and row + 8 ([2], [3]), its
// columns 8 * nt + 2q and the next) into the stash.
__device__ __forceinline__ void stash_tile(float* stash, int row, const float (*acc)[4]) {
    const int q = threadIdx.x & 3;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            *reinterpret_cast<float2*>(stash + stash_at(row + half * 8, nt * 8 + 2 * q)) =
                make_float2(acc[nt][2 * half], acc[nt][2 * half + 1]);
        }
    }
}

#if __CUDA_ARCH__ >= 900
// LEAN_RUN consecutive outputs from f32, rounded once each, evict-first as store_out's; dst
// aligned to the run (16 bytes for 16-bit storage, 32 for f32).
__device__ __forceinline__ void store_run(S* dst, const float* v) {
#if DTYPE == 0
    __stcs(reinterpret_cast<float4*>(dst), make_float4(v[0], v[1], v[2], v[3]));
    __stcs(reinterpret_cast<float4*>(dst) + 1, make_float4(v[4], v[5], v[6], v[7]));
#else
    __stcs(reinterpret_cast<uint4*>(dst), make_uint4(pack_pair(v[0], v[1]), pack_pair(v[2], v[3]),
                                                     pack_pair(v[4], v[5]), pack_pair(v[6], v[7])));
#endif
}

// CTAs a SM the register budget allows (ptxas sm_90, CUDA 13.0: fp16 fits 64 registers without
// spilling; bf16 spills 20 bytes there, so it takes 80; fp32's TF32 operand (65.5 KiB of shared
// memory at C = 128, t = 16) leaves room for three CTAs a SM anyway: 80 too).
#if DTYPE == 1
#define LEAN_MIN_BLOCKS 4
#else
#define LEAN_MIN_BLOCKS 3
#endif

// The body of every lean entry point (LEAN_ENTRY below): CC, TT > 0 fix the channels and the tile
// size (the arguments then carry the same values), 0 takes them from the arguments.
template <int CC, int TT>
__device__ __forceinline__ void refine_apply_lean(
    const float* __restrict__ packed, const float* __restrict__ film,
    const float* __restrict__ weights, const int* __restrict__ ids, const S* __restrict__ boundary,
    const S* __restrict__ uncertainty, S* __restrict__ heavy, S* __restrict__ detail,
    float* __restrict__ l0map, const unsigned char* __restrict__ cover, int c_arg, int H, int W,
    int t_arg, int gw, int K) {
    const int C = CC > 0 ? CC : c_arg, t = TT > 0 ? TT : t_arg;
    extern __shared__ float ref_smem[];
    __shared__ float part[WARPS][3];
    __shared__ float published[2];  // this chunk's (sum, M2), pushed to every CTA of the cluster
    __shared__ __align__(8) float recv[2 * MAX_CLUSTER];  // every chunk's, pushed by its CTA
    __shared__ unsigned long long recv_bar;
    __shared__ double partial[2 * MAX_CLUSTER];
    __shared__ float stat[2];
    __shared__ __align__(16) float pixel_alpha[CHUNK];  // FusionGate's alpha at the chunk's pixels
    __shared__ int pixel_offset[CHUNK];                 // their offsets in a [H, W] plane
    // GroupNorm's weights and biases and the tile's FiLM, [2C] each, staged before the GEMM (see
    // ff_refine_apply).
    __shared__ float norm_w[32 * WARPS], norm_b[32 * WARPS], gamma_beta[32 * WARPS];
    const int chunk = blockIdx.x, k = blockIdx.y, b = blockIdx.z;
    const int chunks = TT > 0 ? (TT * TT + CHUNK - 1) / CHUNK : (int)gridDim.x;
    // A shape copy whose chunks are whole and whose warps all own a row-tile pair: its GroupNorm
    // partial is whole_chunk_partial's and its finish takes GroupNorm's affine per channel.
    constexpr bool WHOLE = TT > 0 && (TT * TT) % CHUNK == 0 && CC == 16 * WARPS;
    const int P = t * t, p0 = chunk * CHUNK, p1 = min(p0 + CHUNK, P);
    const Level l = level_at(weights, C);
    const long long tk = (long long)b * K + k;
    const float* fk = film + tk * 2 * C;
    const float* tile = packed + tk * C * P;
    stage_norm_film(l, fk, C, norm_w, norm_b, gamma_beta);  // visible after refine_operand's sync
    const Exchange x{recv, &recv_bar};
    exchange_begin(x, chunks);
    // The stash [2C][CHUNK] at the start of the dynamic shared memory, ending inside the
    // operand's modulated rows (dead once the operand is built: "a" is stashed after that) and
    // before its bs (whose last read precedes the "b" rows' stores); host: lean_smem.
    float* stash = ref_smem;
    const S* bs =
        refine_operand<(TT > 0 ? THREADS : 0)>(tile, fk, l, ref_smem, C, t, p0, p1, 2 * C * CHUNK);

    {
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
        const bool owner = warp < C / 16;
        const int ca = warp * 16 + g;  // the warp's rows ca ([0], [1]) and ca + 8 ([2], [3])
        float acc[NT][4], acc_a[NT][4];
        float cnt = 0.0f, cmean = 0.0f, cm2 = 0.0f;
        if (owner) {
            if (WHOLE) {
                // Both row tiles in one k loop, their fragments loaded together: eight waits on
                // L2 a warp instead of sixteen (H100, fp16, B=8 186.6-187.2 -> 180.4-181.1 us in
                // process, the refines alone 92.2 -> 86.8; twenty-first session, call 6; bf16,
                // at its 80 registers without spilling: apex-host, the profile 58.5 -> 56.4, B=8
                // 185.1 -> 176.3; fp32, one k step in flight: the profile's lean copies 66.4 ->
                // 62.4-62.7 in process, B=8 250.8 -> 245.2-245.6; twenty-sixth session, calls
                // 2-3); "a" stashed after the loop.
                refine_gemm<1>(l, bs, C + BPAD, C, warp, acc_a, acc);
                stash_tile(stash, ca, acc_a);
            } else {
                // "a": into the stash's first C rows, below the operand.
                refine_gemm_tile(l, bs, C + BPAD, C, warp, acc);
                stash_tile(stash, ca, acc);
                // "b", then the pair's partial with "a" read back (this thread's own stores).
                refine_gemm_tile(l, bs, C + BPAD, C, warp + C / 16, acc);
#pragma unroll
                for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
                    for (int half = 0; half < 2; ++half) {
                        const float2 v = *reinterpret_cast<const float2*>(
                            stash + stash_at(ca + half * 8, nt * 8 + 2 * q));
                        acc_a[nt][2 * half] = v.x;
                        acc_a[nt][2 * half + 1] = v.y;
                    }
                }
            }
            if (!WHOLE) acc_partial(acc_a, acc, p0, p1, cnt, cmean, cm2);
        }
        // Its block barrier is also the last read of the operand by any warp: "b" may overwrite it.
        if (WHOLE) {
            whole_chunk_partial<NT * 4>(&acc_a[0][0], &acc[0][0], part, published,
                                        1.0f / (float)(2 * C * CHUNK));
        } else {
            chunk_partial(cnt, cmean, cm2, part, published);
        }
        if (owner) stash_tile(stash, C + ca, acc);
    }
    exchange_push(x, chunks, published);

    // While the other chunks finish their GEMMs: the residual's base values of the thread's runs
    // (the packed tile, f32; clamped, unconditional loads, see STAGE), and the gate and map
    // offset of each pixel.
    const int runs = C * LEAN_RUNS_PER_ROW;
    const bool vec = (t % LEAN_RUN) == 0;  // then P % CHUNK == 0: every run is whole, one row
    float base[LEAN_RUNS_PER_THREAD][LEAN_RUN];
#pragma unroll
    for (int i = 0; i < LEAN_RUNS_PER_THREAD; ++i) {
        const int r = min((int)threadIdx.x + i * THREADS, runs - 1);
        const int c = r / LEAN_RUNS_PER_ROW, n0 = (r % LEAN_RUNS_PER_ROW) * LEAN_RUN;
        const float* src = tile + (long long)c * P;
        if (vec) {
            const float4 u = *reinterpret_cast<const float4*>(src + p0 + n0);
            const float4 v = *reinterpret_cast<const float4*>(src + p0 + n0 + 4);
            base[i][0] = u.x, base[i][1] = u.y, base[i][2] = u.z, base[i][3] = u.w;
            base[i][4] = v.x, base[i][5] = v.y, base[i][6] = v.z, base[i][7] = v.w;
        } else {
#pragma unroll
            for (int e = 0; e < LEAN_RUN; ++e) base[i][e] = src[min(p0 + n0 + e, p1 - 1)];
        }
    }
    chunk_pixels(l, ids + tk, boundary, uncertainty, b, H, W, t, gw, p0, p1, pixel_alpha,
                 pixel_offset);
    if (threadIdx.x == 0) exchange_stats(x, partial, chunks, C, P, stat);
    __syncthreads();  // also publishes the stash, the gate and the offsets to every thread
    // L0 keeps its f32 result only where L1 reads it (keeps_l0; ids[tk] is cached: chunk_pixels
    // read it).
    if (l0map && !keeps_l0(cover, b, ids[tk], H, t, gw)) l0map = nullptr;

    const float mean = stat[0], inv = stat[1];
#pragma unroll
    for (int i = 0; i < LEAN_RUNS_PER_THREAD; ++i) {
        const int r = threadIdx.x + i * THREADS;
        if (r >= runs) break;
        const int c = r / LEAN_RUNS_PER_ROW, n0 = (r % LEAN_RUNS_PER_ROW) * LEAN_RUN;
        const float gwa = norm_w[c], gba = norm_b[c], gwb = norm_w[C + c], gbb = norm_b[C + c];
        const float gamma = gamma_beta[c], beta = gamma_beta[C + c];
        // WHOLE: GroupNorm's affine of the channel's pair folded once (fold_pair).
        const FoldedPair f = fold_pair(mean, inv, gwa, gba, gwb, gbb, gamma, beta);
        float o[LEAN_RUN], d[LEAN_RUN];
#pragma unroll
        for (int h = 0; h < LEAN_RUN / 4; ++h) {
            const int n = n0 + 4 * h;
            const float4 pa = *reinterpret_cast<const float4*>(stash + stash_at(c, n));
            const float4 pb = *reinterpret_cast<const float4*>(stash + stash_at(C + c, n));
            const float4 al = *reinterpret_cast<const float4*>(pixel_alpha + n);
            const float va[4] = {pa.x, pa.y, pa.z, pa.w}, vb[4] = {pb.x, pb.y, pb.z, pb.w};
            const float alpha[4] = {al.x, al.y, al.z, al.w};
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const float x = base[i][4 * h + e];
                if (WHOLE) {
                    o[4 * h + e] = folded_output(f, va[e], vb[e], x, alpha[e]);
                } else {
                    const float refined =
                        refine_value(va[e], vb[e], x, mean, inv, gwa, gba, gwb, gbb, gamma, beta);
                    o[4 * h + e] = x + alpha[e] * (refined - x);
                }
                d[4 * h + e] = o[4 * h + e] - x;
            }
        }
        const long long plane = ((long long)b * C + c) * H * W;
        if (vec) {
            // t a multiple of LEAN_RUN makes W, x0, p0 and n0 multiples of it: the run is one
            // row segment at a run-aligned offset.
            const long long at = plane + pixel_offset[n0];
            if (l0map) {
                reinterpret_cast<float4*>(l0map + at)[0] = make_float4(o[0], o[1], o[2], o[3]);
                reinterpret_cast<float4*>(l0map + at)[1] = make_float4(o[4], o[5], o[6], o[7]);
            } else {
                store_run(heavy + at, o);
            }
            if (detail) store_run(detail + at, d);
        } else {
#pragma unroll
            for (int e = 0; e < LEAN_RUN; ++e) {
                if (p0 + n0 + e >= p1) break;
                const long long at = plane + pixel_offset[n0 + e];
                if (l0map)
                    l0map[at] = o[e];
                else
                    store_out(heavy + at, o[e]);
                if (detail) store_out(detail + at, d[e]);
            }
        }
    }
}

// The kernel's entry points: the general one (every shape an argument) and copies compiled for
// one shape each (C = CC, t = TT; program.rs: LEAN_SHAPES), whose index math, loop bounds and
// chunk count fold to constants, and whose staging takes the block size as THREADS; their
// GroupNorm partial and finish take the WHOLE branches (outputs equal to the general kernel's up
// to rounding). H100, in process,
// against main in one call: B=8 197.2-198.4 -> 190.2-190.9 us, the refine blocks alone at B=8
// 101.6 -> 95.3; apex-host: B=8 199.5-200.0 -> 191.5-192.3, every other fast case within 0.3 us
// or faster (twenty-first session, calls 1-2). The general kernel keeps blockDim.x: a constant
// there moves ptxas to a 4-byte spill in fp16.
#define LEAN_ENTRY(NAME, CC, TT)                                                                  \
    extern "C" __global__ void __launch_bounds__(THREADS, LEAN_MIN_BLOCKS) NAME(                  \
        const float* __restrict__ packed, const float* __restrict__ film,                         \
        const float* __restrict__ weights, const int* __restrict__ ids,                           \
        const S* __restrict__ boundary, const S* __restrict__ uncertainty, S* __restrict__ heavy, \
        S* __restrict__ detail, float* __restrict__ l0map, const unsigned char* __restrict__ cover,\
        int C, int H, int W, int t, int gw, int K) {                                              \
        FF_TL(TL_REFINE_OTHER, film);                                                             \
        FF_AFTER_PREDECESSOR();                                                                   \
        refine_apply_lean<CC, TT>(packed, film, weights, ids, boundary, uncertainty, heavy,       \
                                  detail, l0map, cover, C, H, W, t, gw, K);                       \
    }
LEAN_ENTRY(ff_refine_apply_lean, 0, 0)
LEAN_ENTRY(ff_refine_apply_lean_c128_t16, 128, 16)
LEAN_ENTRY(ff_refine_apply_lean_c128_t8, 128, 8)
#endif
