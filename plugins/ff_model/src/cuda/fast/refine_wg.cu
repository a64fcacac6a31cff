// cuda/fast/refine_wg.cu: ff_refine_wg_c128_t16 / _t8, the refine block on warpgroup MMAs
// (wgmma, sm_90a) for fp16 levels of 128 channels, and ff_refine_wg_map_{s,f}_c128_t16 / _t8, the
// same reading the tile from the level's source map (the pack-free levels of device/fast.rs: L0's
// input, storage-typed; L1's l0map, f32) instead of its packed copy. One part of the fast path's
// program (prelude.cu lists the parts).
// ---------------------------------------------------------------------------------------------
// The refine of ff_refine_apply_lean's shape copies (same arguments, same formulas, the GEMM's
// operands split the same way: the fp16 weights, the depthwise output as hi + lo), cut
// differently: a CTA takes WG_PIX = 64 pixels (four rows of a 16-pixel tile, the tile's four CTAs
// one cluster; or a whole 8-pixel tile, no peer, launched without a cluster attribute) instead
// of 32, two CTAs a SM (t = 8: one, by the shared memory the host asks for, program::wg_smem),
// and
//   1. the operand is built in units of one channel's column quad (four pixels) over the chunk's
//      rows (at t = 16 two adjacent channels' quads), a channel's quads on consecutive lanes:
//      each unit loads its quad of the rows once (a warp's loads of a row read whole segments),
//      modulates it in registers, takes the columns beside the quad from its neighbour lanes
//      (shuffles), runs the depthwise, rounds it to hi + lo (a channel pair's values as one
//      f16x2 word each, else two pixels at a time), and keeps the raw centre rows in shared
//      memory (`base`) for the residual; nothing is staged through shared memory;
//   2. the GEMM (M = 2C = 256 rows, N = 64 pixels, K = 128, hi and lo) is 32 wgmma m64n64k16 a
//      warpgroup, the operand from shared memory, the weights from registers: each warp's
//      m16n8k16 A fragments (Level::pw, the fragment order the mma.sync kernels read), one k
//      step ahead; warpgroup w holds rows 64w.. ("a") and C + 64w.. ("b"), so a*relu(b) pairs
//      values one thread holds, as in the mma.sync kernels;
//   3. the chunk's GroupNorm partial (two passes: the exact sum, then the squares about the
//      chunk's mean), pushed to the cluster's CTAs (Exchange; an 8-pixel tile is one CTA and
//      takes its own), and the finish straight from the accumulators (no stash), each thread
//      storing pixel pairs at offsets fixed but for W (wg_finish: one copy per level kind).
// Steps 1 and 3 and the accumulators' start are functions of their own (wg_build,
// wg_finish_chunk, wg_acc_bias), so that other arrangements of a CTA's work reuse them (the
// fortieth session's two-tile and warp-specialised experiments, benches/results/).
// The operand in shared memory is K-major without swizzle: 8x8 core matrices of 16-bit elements
// (128 contiguous bytes), k-adjacent ones WG_LBO = 144 bytes apart (with a thread a channel, a
// warp's stores of one pixel for 32 channels then fell in distinct banks), 8-pixel groups WG_SBO
// apart (WG_SBO_PAD past their core matrices: the quads' stores, eight channels at four pixels,
// were two-way conflicted without it).
// Measured against the lean copies (H200, in process, the refine blocks alone at B=8; twenty-
// eighth session, benches/results/device_scripts_2026-11-28_s28.sh): the weights in shared
// memory by one bulk copy (98 KiB a CTA) 89.3 us, with the operand's stores conflict-free and
// paired conversions 82.3, the weights from registers (36 KiB a CTA) 67.9, against 80.2; 32-pixel
// CTAs, three a SM: 82.5 (the profile's 18.9 against 19.5); the base values from shared memory
// and no exchange for one-CTA tiles 68.4; a thread a channel's half-chunk (each lane reading its
// own channel's plane: 15 of 32 bytes a sector used) against today's quads: 68.4 -> 60.6 (the
// profile 18.8 -> 17.1; apex-host: the profile 51.08 -> 49.36, B=8 133.0 -> 124.8, call 8).
// Twenty-ninth session (H200, in process, two rounds, benches/results/device_scripts_2026-11-28_
// s29.sh; the variants by APEX_NVRTC_DEFINES, since made the code): the refines alone at B=8
// 61.1 -> 60.0 us with channel pairs, wg_finish and WG_SBO_PAD together (the profile 16.8 ->
// 16.4; WG_SBO_PAD alone -0.3, wg_finish alone nothing though 8 % fewer instructions; the frame
// B=8 129.1 -> 128.0, call 4); every builder unit's loads issued before any unit's work: B=8
// +2.2 (call 1). WG_TRACE's phase clocks (call 1, medians, t = 16): a CTA alone on its SM
// (B=1) ~14,100 cycles (build 3,350, GEMM 3,500, finish 2,900); two a SM at B=8 ~26,100 (build
// 6,900, GEMM 5,300, finish 4,100): two CTAs a SM ran about as many chunks a second as one.
#if DTYPE == 1 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WG_PIX 64
#define WG_C 128
#define WG_LBO 144
// 32 bytes between the 8-pixel groups beyond their 16 core matrices, so that a warp's operand
// stores (eight channels at four column quads) fall in distinct banks.
#define WG_SBO_PAD 32
#define WG_SBO (WG_C / 8 * WG_LBO + WG_SBO_PAD)
#ifdef WG_TRACE
// A diagnostic, off unless compiled in (APEX_NVRTC_DEFINES="WG_TRACE WG_TRACE_FROM=N"): thread
// 0 of every CTA takes clock64 at each phase's end (WG_TS) and the globaltimer at entry and exit;
// the CTAs numbered N .. N + 1999 in order of completion print them as one `WGT` line each
// (benches/results/device_scripts_2026-11-28_s29.sh: trace_summary).
__device__ unsigned int wg_trace_n;
#define WG_TS(i) \
    if (threadIdx.x == 0) wg_ts[i] = clock64();
#else
#define WG_TS(i)
#endif
// The operand's hi or lo part, bytes.
#define WG_B_BYTES (WG_PIX / 8 * WG_SBO)
// The raw centre rows [C][WG_BASE_STRIDE] f32: the finish's float2 reads of a half-warp (four
// channels, four pixel pairs) fall in distinct banks.
#define WG_BASE_STRIDE (WG_PIX + 8)
// Dynamic shared memory (bytes): the operand's hi and lo parts, then the centre rows.
#define WG_SMEM (2 * WG_B_BYTES + 4 * WG_C * WG_BASE_STRIDE)

// The element offset of the operand's (pixel n, channel k).
__device__ __forceinline__ int wg_b_at(int n, int k) {
    return (n >> 3) * (WG_SBO / 2) + (k >> 3) * (WG_LBO / 2) + ((n & 7) << 3) + (k & 7);
}

// The wgmma descriptor of the operand block at shared address `addr`.
__device__ __forceinline__ unsigned long long wg_desc(unsigned addr) {
    return (unsigned long long)((addr >> 4) & 0x3FFFu) |
           ((unsigned long long)(WG_LBO >> 4) << 16) | ((unsigned long long)(WG_SBO >> 4) << 32);
}

// hi = (v0, v1) rounded to fp16 as one pair (v0 in the low half), lo = the rounded remainders
// (cvt.rn.f16x2: one ALU instruction where two single conversions take the conversion unit):
// two adjacent channels of a pixel, one word each.
__device__ __forceinline__ void split_channels(float v0, float v1, unsigned& hi, unsigned& lo) {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(hi) : "f"(v1), "f"(v0));
    const float r0 = v0 - to_f32((S)(hi & 0xFFFFu)), r1 = v1 - to_f32((S)(hi >> 16));
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(lo) : "f"(r1), "f"(r0));
}

// split_channels for two pixels of one channel, each part as its two 16-bit halves.
__device__ __forceinline__ void split_pair(float v0, float v1, unsigned short (&hi)[2],
                                           unsigned short (&lo)[2]) {
    unsigned h, l;
    split_channels(v0, v1, h, l);
    hi[0] = (unsigned short)(h & 0xFFFFu);
    hi[1] = (unsigned short)(h >> 16);
    lo[0] = (unsigned short)(l & 0xFFFFu);
    lo[1] = (unsigned short)(l >> 16);
}

// d (m64n64, f32) += a (64x16: each warp's 16 rows in registers, the m16n8k16 A fragment) * b
// (16x64 from shared memory, descriptor `b`).
__device__ __forceinline__ void wg_mma(float* d, uint4 a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "{%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
          "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
          "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
          "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
          "+f"(d[30]), "+f"(d[31])
        : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "l"(b));
}

// The finish's stores are store_out_pair's (evict-first, prelude.cu). The same stores through
// shared memory as 16-byte row segments (two threads a t = 16 row's 32-byte sector) lost: B=8
// +6.4-6.9 us plain, +1.7-2.2 evict-first (H200, in process, thirty-sixth session, call 3).
//
// The finish of the thread's 32 values: rows ra and ra + 8 (half 0, 1) at pixel pairs 8j + 2q,
// each pair's output stored at at0[half] + its offset (compile-time but for W); DETAIL: L1's
// detail map besides heavy; L0MAP: L0's f32 result instead of heavy, as the level and tile ask
// (one copy each, no branch in the loop). L0MAP is a tile that ff_select split (keeps_l0), and
// its four L1 children overwrite its heavy at every pixel: those stores would be dead bytes
// (H200, in process, thirty-third session, call 4: left out, the refines alone at B=8 60.8 ->
// 59.0 us, the frame at B=8 113.0 -> 111.9, B=16 192.7 -> 188.6, the profile 45.0 -> 44.6).
template <int T, bool DETAIL, bool L0MAP>
__device__ __forceinline__ void wg_finish(const float* acc_a, const float* acc_b,
                                          const float* base, const float* pixel_alpha,
                                          const FoldedPair* f, const long long* at0, S* heavy,
                                          S* detail, float* l0map, int W, int ra, int q) {
    S* hp[2] = {heavy + at0[0], heavy + at0[1]};
#pragma unroll
    for (int j = 0; j < WG_PIX / 8; ++j) {
        const int n = 8 * j + 2 * q, off = (8 * j / T) * W + (8 * j) % T;
        const float2 al = *reinterpret_cast<const float2*>(pixel_alpha + n);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int c = ra + 8 * half;
            const float2 xv = *reinterpret_cast<const float2*>(base + c * WG_BASE_STRIDE + n);
            const float o0 = folded_output(f[half], acc_a[4 * j + 2 * half],
                                           acc_b[4 * j + 2 * half], xv.x, al.x);
            const float o1 = folded_output(f[half], acc_a[4 * j + 2 * half + 1],
                                           acc_b[4 * j + 2 * half + 1], xv.y, al.y);
            if (L0MAP)
                *reinterpret_cast<float2*>(l0map + at0[half] + off) = make_float2(o0, o1);
            else
                store_out_pair(hp[half] + off, o0, o1);
            if (DETAIL) store_out_pair(detail + at0[half] + off, o0 - xv.x, o1 - xv.y);
        }
    }
}

// The chunk's operand (hi and lo parts, K-major core matrices) and its raw centre rows (`base`)
// from the tile's channel planes (`cstride` apart, rows `rstride` apart) and the tile's FiLM
// vector `fk`.
template <int T, typename SRC>
__device__ __forceinline__ void wg_build(const SRC* tile, long long cstride, long long rstride,
                                         const float* fk, const Level& l, int p0,
                                         unsigned short* bhi, unsigned short* blo, float* base) {
    constexpr int C = WG_C;
    // The operand: a unit is one channel's column quad (four pixels) over the chunk's ROWS rows,
    // QR = T/4 units a channel on consecutive lanes, so that a warp's loads of a row read whole
    // 64-byte (t = 16) or 32-byte (t = 8) segments; a unit loads its quad of the rows y0 - 1 ..
    // y0 + ROWS (clamped, zero outside the tile) and takes the columns beside its quad from the
    // neighbouring lanes (shuffles).
    {
        constexpr int QR = T / 4, ROWS = WG_PIX / T;
        // Two adjacent channels a unit where the units still fill the block (t = 16): their hi
        // and lo parts convert and store as pairs.
        constexpr int CH = C * QR % (2 * THREADS) == 0 ? 2 : 1;
        constexpr int UNITS = C * QR / (CH * THREADS);
        static_assert(UNITS >= 1 && C * QR % (CH * THREADS) == 0, "refine_wg's units");
        const int y0 = p0 / T;
#pragma unroll 1
        for (int u = 0; u < UNITS; ++u) {
            const int g = threadIdx.x + u * THREADS, j = g % QR, c0 = CH * (g / QR);
            float4 v[CH][ROWS + 2];
#pragma unroll
            for (int h = 0; h < CH; ++h) {
                const SRC* src = tile + (c0 + h) * cstride + 4 * j;
#pragma unroll
                for (int r = 0; r < ROWS + 2; ++r)
                    v[h][r] = load4(src + min(max(y0 - 1 + r, 0), T - 1) * rstride);
            }
            float out[CH][ROWS][4];
#pragma unroll
            for (int h = 0; h < CH; ++h) {
                const int c = c0 + h;
                const float gm = 1.0f + fk[c], bt = fk[C + c];
                float wv[9];
#pragma unroll
                for (int k9 = 0; k9 < 9; ++k9) wv[k9] = l.dw_w[c * 9 + k9];
                const float dwb = l.dw_b[c];
                // m[r][0 .. 5]: the modulated row r at columns 4j - 1 .. 4j + 4.
                float m[ROWS + 2][6];
#pragma unroll
                for (int r = 0; r < ROWS + 2; ++r) {
                    const bool inside = (unsigned)(y0 - 1 + r) < (unsigned)T;
                    if (r >= 1 && r <= ROWS) {
                        // A centre row: the residual's base values, raw.
                        *reinterpret_cast<float4*>(base + c * WG_BASE_STRIDE + (r - 1) * T +
                                                   4 * j) = v[h][r];
                    }
                    m[r][1] = inside ? gm * v[h][r].x + bt : 0.0f;
                    m[r][2] = inside ? gm * v[h][r].y + bt : 0.0f;
                    m[r][3] = inside ? gm * v[h][r].z + bt : 0.0f;
                    m[r][4] = inside ? gm * v[h][r].w + bt : 0.0f;
                    m[r][0] = __shfl_up_sync(0xffffffffu, m[r][4], 1);
                    m[r][5] = __shfl_down_sync(0xffffffffu, m[r][1], 1);
                }
#pragma unroll
                for (int y = 0; y < ROWS; ++y) {
#pragma unroll
                    for (int i = 0; i < 4; ++i) {
                        const int x = 4 * j + i;  // the tile column
                        out[h][y][i] = depthwise_px(
                            wv, dwb, m[y][i], m[y][i + 1], m[y][i + 2], m[y + 1][i],
                            m[y + 1][i + 1], m[y + 1][i + 2], m[y + 2][i], m[y + 2][i + 1],
                            m[y + 2][i + 2], x > 0, x + 1 < T);
                    }
                }
            }
            // Pixel y*T + 4j + i sits (y*T/8) 8-pixel groups and i rows of its core matrix past
            // pixel 4j (4j + i never crosses a group: T is a multiple of 8).
            const int at0 = wg_b_at(4 * j, c0);
#pragma unroll
            for (int y = 0; y < ROWS; ++y) {
#pragma unroll
                for (int i = 0; i < 4; i += 2) {
                    const int at = at0 + y * (T / 8) * (WG_SBO / 2) + i * 8;
                    if constexpr (CH == 2) {
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            unsigned hi, lo;
                            split_channels(out[0][y][i + e], out[1][y][i + e], hi, lo);
                            *reinterpret_cast<unsigned*>(bhi + at + 8 * e) = hi;
                            *reinterpret_cast<unsigned*>(blo + at + 8 * e) = lo;
                        }
                    } else {
                        unsigned short hi[2], lo[2];
                        split_pair(out[0][y][i], out[0][y][i + 1], hi, lo);
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            bhi[at + 8 * e] = hi[e];
                            blo[at + 8 * e] = lo[e];
                        }
                    }
                }
            }
        }
    }
}

// The chunk's finish from its accumulators (the thread's rows ra, ra + 8 of "a" and "b", pixel
// pairs 8j + 2q), the tile's GroupNorm statistics (`mean`, `inv`) and FiLM vector: heavy (L1
// with detail; L0 at a tile ff_select split, its f32 result in l0map instead).
template <int T>
__device__ __forceinline__ void wg_finish_chunk(const float* acc_a, const float* acc_b,
                                                const float* base, const float* pixel_alpha,
                                                const float* norm_w, const float* norm_b,
                                                const float* gamma_beta, float mean, float inv,
                                                int id, int b, int p0, int H, int W, int gw,
                                                S* heavy, S* detail, float* l0map) {
    constexpr int C = WG_C;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, q = lane & 3;
    const int ra = 64 * (warp >> 2) + 16 * (warp & 3) + (lane >> 2);
    // The thread's pixel pairs: n = 8j + 2q sits (8j / T) rows and (8j % T) + 2q columns past
    // the chunk's first pixel, whose offset in a plane is the tile's origin plus p0's row.
    const long long org = (long long)((id / gw) * T + p0 / T) * W + (id % gw) * T + 2 * q;
    FoldedPair f[2];
    long long at0[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int c = ra + 8 * half;
        f[half] = fold_pair(mean, inv, norm_w[c], norm_b[c], norm_w[C + c], norm_b[C + c],
                            gamma_beta[c], gamma_beta[C + c]);
        at0[half] = ((long long)b * C + c) * H * W + org;
    }
    if (detail)
        wg_finish<T, true, false>(acc_a, acc_b, base, pixel_alpha, f, at0, heavy, detail, l0map,
                                  W, ra, q);
    else if (l0map)
        wg_finish<T, false, true>(acc_a, acc_b, base, pixel_alpha, f, at0, heavy, detail, l0map,
                                  W, ra, q);
    else
        wg_finish<T, false, false>(acc_a, acc_b, base, pixel_alpha, f, at0, heavy, detail,
                                   l0map, W, ra, q);
}

// The accumulators' start: the pointwise bias of the thread's rows ra, ra + 8 ("a") and C + ra,
// C + ra + 8 ("b") at every pixel.
__device__ __forceinline__ void wg_acc_bias(const Level& l, int ra, float* acc_a, float* acc_b) {
    constexpr int C = WG_C;
    const float a0 = l.pw_b[ra], a1 = l.pw_b[ra + 8], b0 = l.pw_b[C + ra], b1 = l.pw_b[C + ra + 8];
#pragma unroll
    for (int j = 0; j < WG_PIX / 8; ++j) {
        acc_a[4 * j] = acc_a[4 * j + 1] = a0;
        acc_a[4 * j + 2] = acc_a[4 * j + 3] = a1;
        acc_b[4 * j] = acc_b[4 * j + 1] = b0;
        acc_b[4 * j + 2] = acc_b[4 * j + 3] = b1;
    }
}

template <int TT, typename SRC, bool MAP>
__device__ __forceinline__ void refine_apply_wg(
    const SRC* __restrict__ src, const float* __restrict__ film,
    const float* __restrict__ weights, const int* __restrict__ ids, const S* __restrict__ boundary,
    const S* __restrict__ uncertainty, S* __restrict__ heavy, S* __restrict__ detail,
    float* __restrict__ l0map, const unsigned char* __restrict__ cover, int H, int W, int gw,
    int K) {
    constexpr int C = WG_C, T = TT, P = T * T, CHUNKS = P / WG_PIX;
    static_assert(THREADS == 2 * C && P % WG_PIX == 0 && T % 4 == 0, "refine_wg's shape");
    extern __shared__ __align__(128) unsigned short wg_smem[];
    unsigned short* bhi = wg_smem;
    unsigned short* blo = bhi + WG_B_BYTES / 2;
    float* base = reinterpret_cast<float*>(blo + WG_B_BYTES / 2);
    __shared__ float part[WARPS][3];
    __shared__ float published[2];
    __shared__ __align__(8) float recv[2 * MAX_CLUSTER];
    __shared__ unsigned long long recv_bar;
    __shared__ double partial[2 * MAX_CLUSTER];
    __shared__ float stat[2];
    __shared__ __align__(16) float pixel_alpha[WG_PIX];
    __shared__ float norm_w[2 * C], norm_b[2 * C], gamma_beta[2 * C];
#ifdef WG_TRACE
    __shared__ long long wg_ts[10];
    unsigned long long g_start = 0;
    if (threadIdx.x == 0) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g_start));
#endif
    WG_TS(0)
    const int chunk = blockIdx.x, k = blockIdx.y, b = blockIdx.z;
    const int p0 = chunk * WG_PIX;
    const Level l = level_at(weights, C);
    const long long tk = (long long)b * K + k;
    const float* fk = film + tk * 2 * C;
    // The tile's channel planes: its packed f32 copy, or (MAP: the pack-free levels) the
    // level's source map at the tile's origin (L0 the input, L1 l0map).
    const SRC* tile;
    long long cstride, rstride;
    if constexpr (MAP) {
        const int id = ids[tk];
        tile = src + (long long)b * C * H * W + (long long)(id / gw) * T * W + (id % gw) * T;
        cstride = (long long)H * W;
        rstride = W;
    } else {
        tile = src + tk * C * P;
        cstride = P;
        rstride = T;
    }
    stage_norm_film(l, fk, C, norm_w, norm_b, gamma_beta);
    const Exchange x{recv, &recv_bar};
    if (CHUNKS > 1) exchange_begin(x, CHUNKS);
    WG_TS(1)

    wg_build<T>(tile, cstride, rstride, fk, l, p0, bhi, blo, base);
    WG_TS(2)
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    // The warp's weight fragments (fragment order: row tile, k step, lane): its "a" row tile
    // 4 * warpgroup + warp % 4 and the "b" one C/16 further, two k steps in registers, the first
    // loaded before the barrier.
    const uint4* frag = reinterpret_cast<const uint4*>(l.pw);
    const int fa0 = ((4 * (warp >> 2) + (warp & 3)) * (C / 16)) * 32 + lane;
    const int fb0 = fa0 + (C / 16) * (C / 16) * 32;
    uint4 fa[2], fb[2];
    fa[0] = frag[fa0], fb[0] = frag[fb0];
    // The operand's generic-proxy stores, visible to the wgmma (async proxy) after the barrier.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    WG_TS(3)

    const int ra = 64 * (warp >> 2) + 16 * (warp & 3) + (lane >> 2);  // rows ra and ra + 8
    float acc_a[WG_PIX / 2], acc_b[WG_PIX / 2];
    {
        wg_acc_bias(l, ra, acc_a, acc_b);
        const unsigned hs = (unsigned)__cvta_generic_to_shared(bhi);
        const unsigned ls = (unsigned)__cvta_generic_to_shared(blo);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int ks = 0; ks < C / 16; ++ks) {
            // Per k step the lo product, then the hi one (the mma.sync kernels' order).
            const unsigned step = 2 * ks * WG_LBO;
            const unsigned long long dl = wg_desc(ls + step), dh = wg_desc(hs + step);
            wg_mma(acc_a, fa[ks % 2], dl);
            wg_mma(acc_a, fa[ks % 2], dh);
            wg_mma(acc_b, fb[ks % 2], dl);
            wg_mma(acc_b, fb[ks % 2], dh);
            asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
            if (ks + 1 < C / 16) {
                // Step ks - 1's group is done: its fragments' registers take step ks + 1's.
                asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
                fa[(ks + 1) % 2] = frag[fa0 + 32 * (ks + 1)];
                fb[(ks + 1) % 2] = frag[fb0 + 32 * (ks + 1)];
            }
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }
    WG_TS(4)

    // The chunk's GroupNorm partial: its exact sum, then the squares about its mean.
    whole_chunk_partial<WG_PIX / 2>(acc_a, acc_b, part, published,
                                    1.0f / (float)(2 * C * WG_PIX));
    WG_TS(5)
    if (CHUNKS > 1) exchange_push(x, CHUNKS, published);
    // While the peers finish: the gate and map offset of each pixel.
    chunk_pixels<WG_PIX>(l, ids + tk, boundary, uncertainty, b, H, W, T, gw, p0, p0 + WG_PIX,
                         pixel_alpha, nullptr);
    WG_TS(6)
    if (threadIdx.x == 0) {
        if (CHUNKS > 1) {
            exchange_stats<WG_PIX>(x, partial, CHUNKS, C, P, stat);
        } else {
            partial[0] = published[0];
            partial[1] = published[1];
            tile_stats<WG_PIX>(partial, 1, C, P, stat);
        }
    }
    __syncthreads();
    WG_TS(7)
    if (l0map && !keeps_l0(cover, b, ids[tk], H, T, gw)) l0map = nullptr;

    wg_finish_chunk<T>(acc_a, acc_b, base, pixel_alpha, norm_w, norm_b, gamma_beta, stat[0],
                       stat[1], ids[tk], b, p0, H, W, gw, heavy, detail, l0map);
#ifdef WG_TRACE
    WG_TS(8)
    if (threadIdx.x == 0) {
        unsigned long long g_end, smid;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g_end));
        asm volatile("{ .reg .u32 s; mov.u32 s, %%smid; cvt.u64.u32 %0, s; }" : "=l"(smid));
        const unsigned idx = atomicAdd(&wg_trace_n, 1u);
        if (idx >= WG_TRACE_FROM && idx < WG_TRACE_FROM + 2000)
            printf("WGT %d %u %llu %d %d %d %llu %llu %lld %lld %lld %lld %lld %lld %lld %lld\n", T,
                   idx, smid, chunk, k, b, g_start, g_end, wg_ts[1] - wg_ts[0],
                   wg_ts[2] - wg_ts[0], wg_ts[3] - wg_ts[0], wg_ts[4] - wg_ts[0],
                   wg_ts[5] - wg_ts[0], wg_ts[6] - wg_ts[0], wg_ts[7] - wg_ts[0],
                   wg_ts[8] - wg_ts[0]);
    }
#endif
}

// Two CTAs a SM fit its registers: at most 128 a thread (the 64 accumulators and two k steps of
// fragments).
// SRC, MAP: what the tile is read from (see refine_apply_wg).
#define WG_ENTRY(NAME, TT, SRC, MAP)                                                              \
    extern "C" __global__ void __launch_bounds__(THREADS, 2) NAME(                                \
        const SRC* __restrict__ src, const float* __restrict__ film,                              \
        const float* __restrict__ weights, const int* __restrict__ ids,                           \
        const S* __restrict__ boundary, const S* __restrict__ uncertainty, S* __restrict__ heavy, \
        S* __restrict__ detail, float* __restrict__ l0map, const unsigned char* __restrict__ cover,\
        int C, int H, int W, int t, int gw, int K) {                                              \
        FF_TL(TT == 16 ? TL_REFINE_T16 : TL_REFINE_T8, film);                                     \
        FF_AFTER_PREDECESSOR();                                                                   \
        refine_apply_wg<TT, SRC, MAP>(src, film, weights, ids, boundary, uncertainty, heavy,      \
                                      detail, l0map, cover, H, W, gw, K);                         \
    }
WG_ENTRY(ff_refine_wg_c128_t16, 16, float, false)
WG_ENTRY(ff_refine_wg_c128_t8, 8, float, false)
WG_ENTRY(ff_refine_wg_map_s_c128_t16, 16, S, true)
WG_ENTRY(ff_refine_wg_map_s_c128_t8, 8, S, true)
WG_ENTRY(ff_refine_wg_map_f_c128_t16, 16, float, true)
WG_ENTRY(ff_refine_wg_map_f_c128_t8, 8, float, true)
#endif
