// cuda/fast/refine_block.cu: the refine block's parts shared by every refine kernel: the pointwise
// GEMM, the chunk's operand (modulate, depthwise 3x3), the GroupNorm partials and statistics,
// refine_value. One part of the fast path's program (prelude.cu lists the parts).
// ---------------------------------------------------------------------------------------------
// The refine GEMM of one chunk: acc_a / acc_b[nt][4] for the "a" row tile `at` and the "b" row
// tile at + C/16, in the m16n8 accumulator layout (lane g = lane/4, q = lane%4: [0],[1] row g,
// columns 2q, 2q+1; [2],[3] row g+8).
//
// Every storage runs it on tensor cores (mma.sync), f32 accumulators, its operands split in a
// rounded part and the rounded remainder (hi + lo): fp16 m16n8k16 (weights hi only, the fp16
// model's), bf16 m16n8k16 (weights hi + lo: three products), fp32 m16n8k8 in TF32 (3xTF32: hi and
// lo of both operands, three products, ~f32 accuracy; its scalar FMA GEMM had kept fp32's profile
// at 2.4x fp16's and its B=8 at 1.6x its B=1 frames/s, twenty-fifth session).
// MMA_OP: the storage's mma; KSTEP: its k. The weights' fragments are laid out per (row tile,
// k step, lane), one uint4 a lane (host: layout.rs).
#if DTYPE == 0
#define MMA_OP "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
#define KSTEP 8
#elif DTYPE == 1
#define MMA_OP "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
#define KSTEP 16
#else
#define MMA_OP "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
#define KSTEP 16
#endif
// The pointwise weights carry a lo part (bf16, TF32).
#define WEIGHTS_LO (DTYPE != 1)
// bs's row padding in elements (16 bytes in every storage): ldmatrix's eight 16-byte rows of a
// matrix then fall in distinct banks.
#define BPAD (16 / (int)sizeof(S))

// d += a * b for one k step: the weights' fragment `a`, the operand's (b0, b1).
__device__ __forceinline__ void mma_step(float* d, uint4 a, unsigned b0, unsigned b1) {
    asm volatile(MMA_OP " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
}

// The GEMM operand's rounded part of v: the storage's rounding, for fp32 TF32's (round to
// nearest, ties away: cvt.rna, as layout.rs rounds the weights).
__device__ __forceinline__ S operand_hi(float v) {
#if DTYPE == 0
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return __uint_as_float(r);
#else
    return from_f32(v);
#endif
}

// The B fragments of one (nt, k step) in one ldmatrix.x4: the hi parts of the step's first and
// second halves of channels (16-bit: ks*16 .. +7 and +8 .. +15; fp32: kk*8 .. +3 and +4 .. +7)
// of pixels 8*nt .. +7, then the lo parts (bs + CHUNK * bstride). Lane L addresses row L % 8 of
// matrix L / 8, so thread (g, q) receives pixel 8*nt + g, the m16n8k16 B layout's channels 2q and
// 2q + 1 (16-bit) or the m16n8k8 TF32 layout's channel q (fp32) of each.
// `lane`: operand_lane(bstride), the lane's byte offset; `at`: bs's shared-space address plus
// the step's byte offset (sizeof(S) * 8 * nt * bstride + 32 * step: a step's k is 32 bytes).
__device__ __forceinline__ unsigned operand_lane(int bstride) {
    const int lane = threadIdx.x & 31;
    const int row = (lane & 7) * bstride + ((lane >> 4) & 1) * CHUNK * bstride;
    return (unsigned)sizeof(S) * (unsigned)row + 16u * ((lane >> 3) & 1);
}

__device__ __forceinline__ void operand_frags(unsigned at, unsigned& h0, unsigned& h1,
                                              unsigned& l0, unsigned& l1) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(h0), "=r"(h1), "=r"(l0), "=r"(l1)
                 : "r"(at));
}

// The byte offset of step `ks` of pixel block `nt` in bs (see operand_lane).
__device__ __forceinline__ unsigned operand_step(int bstride, int nt, int ks) {
    return (unsigned)sizeof(S) * (unsigned)(nt * 8 * bstride) + 32u * (unsigned)ks;
}

#if WEIGHTS_LO
// The weights' lo fragments (bf16, fp32), after the (2C/16) * (C/KSTEP) * 32 hi ones.
__device__ __forceinline__ const uint4* weights_lo(const uint4* hi, int C) {
    return hi + (long long)(2 * C / 16) * (C / KSTEP) * 32;
}
#endif

// bs: the chunk's depthwise output [CHUNK][bstride] (pixel-major, channel fastest), its hi
// parts, then its lo parts at bs + CHUNK * bstride.
// UNROLL: k steps unrolled for fp16 (the fused kernel's four; the lean kernel's shape copies take
// one: four spill at its 64 registers, one step in flight spilled 32 bytes at t = 8 and ran no
// faster, H100, B=8 180.0-180.3 us against 180.4-181.1, twenty-first session, call 6).
template <int UNROLL = 4>
__device__ __forceinline__ void refine_gemm(const Level& l, const S* bs, int bstride, int C, int at,
                                            float (*acc_a)[4], float (*acc_b)[4]) {
    const int lane = threadIdx.x & 31, g = lane >> 2;
    const int ra = at * 16 + g, rb = ra + C;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        acc_a[nt][0] = acc_a[nt][1] = l.pw_b[ra];
        acc_a[nt][2] = acc_a[nt][3] = l.pw_b[ra + 8];
        acc_b[nt][0] = acc_b[nt][1] = l.pw_b[rb];
        acc_b[nt][2] = acc_b[nt][3] = l.pw_b[rb + 8];
    }
    const int ksteps = C / KSTEP;
    // The weights' fragments: hi, then (bf16, fp32) lo.
    const uint4* hi = reinterpret_cast<const uint4*>(l.pw);
#if WEIGHTS_LO
    const uint4* lo = weights_lo(hi, C);
#endif
    const unsigned bs_at = (unsigned)__cvta_generic_to_shared(bs) + operand_lane(bstride);
    const int bt = at + C / 16;
    // k steps in flight. Three products (bf16, fp32): four spill in ff_refine_apply (128
    // registers), so two; bf16 keeps two in the lean shape copies too (one: B=8 +1 to +2 us,
    // H100, twenty-sixth session, call 3), fp32 takes their one (two spill at 80 registers).
#if DTYPE == 2
#pragma unroll 2
#elif DTYPE == 0
#pragma unroll(UNROLL < 2 ? UNROLL : 2)
#else
#pragma unroll UNROLL
#endif
    for (int ks = 0; ks < ksteps; ++ks) {
        const long long fa = ((long long)at * ksteps + ks) * 32 + lane;
        const long long fb = ((long long)bt * ksteps + ks) * 32 + lane;
        const uint4 ah = hi[fa], bh = hi[fb];
#if WEIGHTS_LO
        const uint4 al = lo[fa], bl = lo[fb];
#endif
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
            unsigned h0, h1, l0, l1;
            operand_frags(bs_at + operand_step(bstride, nt, ks), h0, h1, l0, l1);
#if WEIGHTS_LO
            mma_step(acc_a[nt], al, h0, h1);
            mma_step(acc_b[nt], bl, h0, h1);
#endif
            mma_step(acc_a[nt], ah, l0, l1);
            mma_step(acc_a[nt], ah, h0, h1);
            mma_step(acc_b[nt], bh, l0, l1);
            mma_step(acc_b[nt], bh, h0, h1);
        }
    }
}

// The depthwise output of pixel n, channel c into the GEMM operand bs: hi, and the lo part at
// bs + CHUNK * bstride.
__device__ __forceinline__ void store_operand(S* bs, int bstride, int n, int c, float v) {
    const S hi = operand_hi(v);
    bs[n * bstride + c] = hi;
    bs[CHUNK * bstride + n * bstride + c] = operand_hi(v - to_f32(hi));
}

// The depthwise 3x3 at one pixel from its window (the rows above, at and below it; each its left,
// centre and right value), the bias first, then the taps row by row; `left` / `right`: whether
// the pixel has a left / right neighbour in the tile (the taps beside it are skipped, not
// multiplied by the zero padding).
__device__ __forceinline__ float depthwise_px(const float* wv, float dwb, float l0, float c0,
                                              float r0, float l1, float c1, float r1, float l2,
                                              float c2, float r2, bool left, bool right) {
    float acc = dwb;
    if (left) acc += wv[0] * l0;
    acc += wv[1] * c0;
    if (right) acc += wv[2] * r0;
    if (left) acc += wv[3] * l1;
    acc += wv[4] * c1;
    if (right) acc += wv[5] * r1;
    if (left) acc += wv[6] * l2;
    acc += wv[7] * c2;
    if (right) acc += wv[8] * r2;
    return acc;
}

// refine_operand's depthwise 3x3 over `rows` whole rows of a T-pixel tile, one channel: `m` the
// channel's staged rows (T f32 each, zero outside the tile), the first output row at m's row
// `r0` (the row of the chunk's pixel n0). Each row is a window sliding along it, three new values a
// pixel instead of nine, fully unrolled; each output takes the same products in the same order
// as the general loop (whose out-of-tile columns add 0 * a neighbour), without the per-tap
// clamps, bound tests and index divisions that made the depthwise ~30 % of the lean kernel's
// instructions (H100, B=8, 2026-11-26).
template <int T>
__device__ __forceinline__ void depthwise_rows(const float* m, const float* wv, float dwb, S* bs,
                                               int bstride, int c, int n0, int rows, int r0) {
    for (int y = 0; y < rows; ++y) {
        const float* above = m + (r0 + y - 1) * T;
        const float* row = above + T;
        const float* below = row + T;
        float l0 = 0.0f, l1 = 0.0f, l2 = 0.0f;  // the window's left column (x - 1)
        float c0 = above[0], c1 = row[0], c2 = below[0];
#pragma unroll
        for (int x = 0; x < T; ++x) {
            const float r0v = x + 1 < T ? above[x + 1] : 0.0f;
            const float r1v = x + 1 < T ? row[x + 1] : 0.0f;
            const float r2v = x + 1 < T ? below[x + 1] : 0.0f;
            const float acc =
                depthwise_px(wv, dwb, l0, c0, r0v, l1, c1, r1v, l2, c2, r2v, x > 0, x + 1 < T);
            store_operand(bs, bstride, n0 + y * T + x, c, acc);
            l0 = c0, l1 = c1, l2 = c2;
            c0 = r0v, c1 = r1v, c2 = r2v;
        }
    }
}

// The chunk's GEMM operand, shared by ff_refine and ff_refine_apply: the tile's channels
// modulated by FiLM ((1 + gamma) * x + beta), then the depthwise 3x3 with its bias, for the
// chunk's pixels [p0, p1); returns `bs`, with the block synchronised. Dynamic shared memory
// `smem` (host: refine_smem; lean_smem where `stash` > 0):
//   lead [max(0, stash - min(CB, C) * ms)] f32, unused here: the lean kernel's stash of `stash`
//                     f32 from `smem` on then ends inside `mod` (dead once bs is built), never
//                     in bs; 0 where mod is the longer, as at C = 128, t = 16
//   mod  [CB][ms]     f32, the modulated rows the chunk's 3x3 reads for up to CB channels at a
//                     time (zero outside the tile), ms = rows*t + 1 (odd: channel-strided reads
//                     hit distinct banks)
//   bs   [CHUNK][C+BPAD] S, the depthwise output (GEMM operand B): hi, then lo
// At C <= CB all channels' rows arrive in one round of loads (eight float4s a thread at C = 128,
// t = 16): with 32 channels a round, the four rounds' load latencies were the largest share of
// the lean kernel's stall samples at B=8 (H100, 2026-11-26).
#define CB 128

// The block's threads: blockDim.x unless the caller fixes them (BD > 0: the shape-compiled lean
// kernels pass THREADS). Unsigned, as blockDim.x: with it read where it is used, ptxas fits the
// general lean kernel in 64 registers without spilling, fp16 included.
template <int BD>
__device__ __forceinline__ unsigned block_threads() {
    return BD > 0 ? (unsigned)BD : blockDim.x;
}

template <int BD = 0>
__device__ __forceinline__ S* refine_operand(const float* __restrict__ tile,
                                             const float* __restrict__ fk, const Level& l,
                                             float* smem, int C, int t, int p0, int p1,
                                             int stash = 0) {
    const int P = t * t;
    const int row_lo = p0 / t - 1, rows = (p1 - 1) / t + 1 - row_lo + 1;
    const int ms = rows * t + 1, bstride = C + BPAD, window = rows * t;
    const float inv_t = 1.0f / (float)t;
    float* mod = stash > 0 ? smem + max(0, stash - min(CB, C) * ms) : smem;
    S* bs = reinterpret_cast<S*>(mod + min(CB, C) * ms);  // host: refine_smem, lean_smem
    for (int c0 = 0, cb = 0; c0 < C; c0 += cb) {
        // A power of two (C - c0 is a multiple of 16), so that cb divides the block.
        cb = 1 << (31 - __clz(min(CB, C - c0)));
        if (c0 > 0) __syncthreads();  // the previous block's mod reads are done
        const int bd = block_threads<BD>();
        if ((t & 3) == 0) {
            // float4 loads (t a multiple of 4: a group of four never straddles a row, and every
            // row offset is 16-byte aligned). Each thread keeps one group position of the window
            // (its row and column: one division, here) and steps over the channels, `lanes`
            // channels a step; the threads past lanes * quads (blockDim not a multiple of quads)
            // stage nothing. Dividing each element's index instead was ~20 % of the lean kernel's
            // instructions (H100, B=8, 2026-11-27).
            const int quads = window / 4, lanes = bd / quads;
            const int first = threadIdx.x / quads, w = 4 * (threadIdx.x - first * quads);
            const int wr = w / t, row = row_lo + wr;
            const bool inside = row >= 0 && row < t;
            const float* src = tile + (long long)c0 * P + min(max(row, 0), t - 1) * t + w - wr * t;
            float* dst = mod + w;
            const int step = STAGE * lanes;
            for (int cc0 = first < lanes ? first : cb; cc0 < cb; cc0 += step) {
                float4 v[STAGE];
                float gm[STAGE], bt[STAGE];
#pragma unroll
                for (int u = 0; u < STAGE; ++u) {
                    const int cc = min(cc0 + u * lanes, cb - 1);  // clamped: every load in flight
                    v[u] = *reinterpret_cast<const float4*>(src + (long long)cc * P);
                    gm[u] = 1.0f + fk[c0 + cc];
                    bt[u] = fk[C + c0 + cc];
                }
#pragma unroll
                for (int u = 0; u < STAGE; ++u) {
                    const int cc = cc0 + u * lanes;
                    if (cc >= cb) break;
                    float* m = dst + cc * ms;
                    m[0] = inside ? gm[u] * v[u].x + bt[u] : 0.0f;
                    m[1] = inside ? gm[u] * v[u].y + bt[u] : 0.0f;
                    m[2] = inside ? gm[u] * v[u].z + bt[u] : 0.0f;
                    m[3] = inside ? gm[u] * v[u].w + bt[u] : 0.0f;
                }
            }
        } else {
            const int n1 = cb * window;
            for (int i0 = threadIdx.x; i0 < n1; i0 += STAGE * bd) {
                float v[STAGE], gm[STAGE], bt[STAGE];
#pragma unroll
                for (int u = 0; u < STAGE; ++u) {
                    const int i = min(i0 + u * bd, n1 - 1), cc = i / window, w = i - cc * window;
                    const int c = c0 + cc, row = min(max(row_lo + w / t, 0), t - 1);
                    v[u] = tile[c * P + row * t + w % t];
                    gm[u] = 1.0f + fk[c];
                    bt[u] = fk[C + c];
                }
#pragma unroll
                for (int u = 0; u < STAGE; ++u) {
                    const int i = i0 + u * bd;
                    if (i >= n1) break;
                    const int cc = i / window, w = i - cc * window, row = row_lo + w / t;
                    mod[cc * ms + w] = row >= 0 && row < t ? gm[u] * v[u] + bt[u] : 0.0f;
                }
            }
        }
        __syncthreads();
        // Depthwise 3x3 with zero padding. cb (16 to 128) divides the block, so each thread
        // keeps one channel (its 9 weights loaded once) and takes every (blockDim.x / cb)-th
        // pixel of the chunk, or where that run is whole rows of a 16- or 8-pixel tile (C = 128:
        // two threads a channel, 16 pixels each), the run's rows (depthwise_rows).
        const int cc = threadIdx.x % cb, c = c0 + cc, h = threadIdx.x / cb;
        float wv[9];
#pragma unroll
        for (int j = 0; j < 9; ++j) wv[j] = l.dw_w[c * 9 + j];
        const float dwb = l.dw_b[c];
        const float* m = mod + cc * ms;
        const int run = CHUNK * cb / block_threads<BD>();
        if (p1 - p0 == CHUNK && t == 16 && run % 16 == 0) {
            depthwise_rows<16>(m, wv, dwb, bs, bstride, c, h * run, run / 16,
                               (p0 + h * run) / 16 - row_lo);
        } else if (p1 - p0 == CHUNK && t == 8 && run % 8 == 0) {
            depthwise_rows<8>(m, wv, dwb, bs, bstride, c, h * run, run / 8,
                              (p0 + h * run) / 8 - row_lo);
        } else {
            // Branch-free: an out-of-tile column reads a clamped neighbour with weight 0; a pixel
            // past the chunk's end computes a value that is then replaced by 0 (its GEMM column
            // is never stored).
            for (int n = h; n < CHUNK; n += block_threads<BD>() / cb) {
                const int p = min(p0 + n, p1 - 1);
                const int py = div_small(p, t, inv_t), x = p - py * t, r = py - row_lo;
                float acc = dwb;
#pragma unroll
                for (int di = 0; di < 3; ++di) {
                    const float* mr = m + (r - 1 + di) * t;
#pragma unroll
                    for (int dj = 0; dj < 3; ++dj) {
                        const int xx = x - 1 + dj;
                        const float wk = (xx >= 0 && xx < t) ? wv[di * 3 + dj] : 0.0f;
                        acc += wk * mr[min(max(xx, 0), t - 1)];
                    }
                }
                if (p0 + n >= p1) acc = 0.0f;
                store_operand(bs, bstride, n, c, acc);
            }
        }
    }
    __syncthreads();
    return bs;
}

// Merges the thread's GEMM values of one row-tile pair (its accumulators; the chunk's pixels
// [p0, p1)) into its (count, mean, centred sum of squares): the pair's mean and M2 first, then
// Chan's formula (no E[x^2] - E[x]^2 cancellation).
__device__ __forceinline__ void acc_partial(const float (*acc_a)[4], const float (*acc_b)[4],
                                            int p0, int p1, float& cnt, float& cmean, float& cm2) {
    const int q = threadIdx.x & 3;
    float s = 0.0f, n = 0.0f;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        const int p = p0 + nt * 8 + 2 * q;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const float a0 = acc_a[nt][2 * half], a1 = acc_a[nt][2 * half + 1];
            const float b0 = acc_b[nt][2 * half], b1 = acc_b[nt][2 * half + 1];
            if (p + 1 < p1) {
                s += a0 + a1 + b0 + b1;
                n += 4.0f;
            } else if (p < p1) {
                s += a0 + b0;
                n += 2.0f;
            }
        }
    }
    if (n > 0.0f) {
        const float m = s / n;
        float m2 = 0.0f;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                if (p0 + nt * 8 + 2 * q + (e & 1) >= p1) continue;
                const float da = acc_a[nt][e] - m, db = acc_b[nt][e] - m;
                m2 += da * da + db * db;
            }
        }
        chan_merge(cnt, cmean, cm2, n, m, m2);
    }
}

// The chunk's GroupNorm partial from its threads' (count, mean, M2): merged across each warp,
// then by thread 0 over the warps in order; thread 0 writes out[0] = sum, out[1] = M2. `part`:
// WARPS x 3 floats of shared memory.
__device__ __forceinline__ void chunk_partial(float cnt, float cmean, float cm2, float (*part)[3],
                                              float* out) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1) {
        const float n2 = __shfl_xor_sync(0xffffffffu, cnt, o);
        const float mean2 = __shfl_xor_sync(0xffffffffu, cmean, o);
        const float m22 = __shfl_xor_sync(0xffffffffu, cm2, o);
        chan_merge(cnt, cmean, cm2, n2, mean2, m22);
    }
    if (lane == 0) {
        part[warp][0] = cnt;
        part[warp][1] = cmean;
        part[warp][2] = cm2;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < WARPS; ++w) chan_merge(cnt, cmean, cm2, part[w][0], part[w][1], part[w][2]);
        out[0] = cmean * cnt;
        out[1] = cm2;
    }
}

// chunk_partial for a chunk of whole pixels whose every warp owns a row-tile pair (the lean
// kernel's shape copies, C = 16 * WARPS; the wgmma refine), from each thread's N "a" and N "b"
// values: the chunk's exact sum first (each warp's, then the block's, every thread adding the
// warps in the same order), then the squares about the chunk's mean, in two block barriers;
// `inv_count` = 1 / (2C * the chunk's pixels). Chan's merges (a division and a
// branch each, per thread and per shuffle step) were ~45 % of the lean kernel's GEMM-and-partial
// region (Nsight Compute, H100, B=8, twenty-first session, call 3). Thread 0 writes out[0] = sum,
// out[1] = M2, as chunk_partial does; the values differ from it only in rounding.
template <int N>
__device__ __forceinline__ void whole_chunk_partial(const float* acc_a, const float* acc_b,
                                                    float (*part)[3], float* out,
                                                    float inv_count) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < N; ++i) s += acc_a[i] + acc_b[i];
    s = warp_sum(s);
    if (lane == 0) part[warp][0] = s;
    __syncthreads();
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) sum += part[w][0];
    const float m = sum * inv_count;
    float q = 0.0f;
#pragma unroll
    for (int i = 0; i < N; ++i) {
        const float da = acc_a[i] - m, db = acc_b[i] - m;
        q = fmaf(da, da, q);
        q = fmaf(db, db, q);
    }
    q = warp_sum(q);
    if (lane == 0) part[warp][1] = q;
    __syncthreads();
    if (threadIdx.x == 0) {
        float m2 = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) m2 += part[w][1];
        out[0] = sum;
        out[1] = m2;
    }
}

// The tile's GroupNorm statistics from its chunks' partials (partial[2j], partial[2j+1]: chunk
// j's sum and M2), combined in f64 in chunk order: stat[0] = mean, stat[1] = 1/sqrt(var + eps).
// ff_apply and ff_refine_apply both run it, so both paths normalise with the same numbers. CH:
// the pixels of a chunk (the wgmma refine's chunks are WG_PIX long).
template <int CH = CHUNK>
__device__ __forceinline__ void tile_stats(const double* partial, int chunks, int C, int P, float* stat) {
    double n_all = 0.0, sum_all = 0.0;
    for (int j = 0; j < chunks; ++j) {
        n_all += 2.0 * C * (min((j + 1) * CH, P) - j * CH);
        sum_all += partial[2 * j];
    }
    const double mean = sum_all / n_all;
    // n d^2 with d = sum/n - mean is (sum - n mean)^2 / n: one reciprocal for the full chunks'
    // count and one for the last chunk's (f64 divisions are long dependent sequences, and one
    // thread runs this while its CTA waits).
    const double n_full = 2.0 * C * CH, n_last = 2.0 * C * (P - (chunks - 1) * CH);
    const double r_full = 1.0 / n_full, r_last = 1.0 / n_last;
    double m2 = 0.0;
    for (int j = 0; j < chunks; ++j) {
        const bool last = j == chunks - 1;
        const double e = partial[2 * j] - (last ? n_last : n_full) * mean;
        m2 += partial[2 * j + 1] + e * e * (last ? r_last : r_full);
    }
    stat[0] = (float)mean;
    stat[1] = (float)(1.0 / sqrt(m2 / n_all + NORM_EPS));
}

// GroupNorm's affine of channel c's pre-norm pair (weights and biases gw*, gb*) folded with the
// tile's statistics, (v - mean) * inv * w + b as v * s + o, and the residual's FiLM (1 + gamma,
// beta): refine_value's terms up to rounding, computed once a channel (the lean shape copies'
// finish and the wgmma refine's).
struct FoldedPair {
    float sa, oa, sb, ob, g1, beta;
};

__device__ __forceinline__ FoldedPair fold_pair(float mean, float inv, float gwa, float gba,
                                                float gwb, float gbb, float gamma, float beta) {
    FoldedPair f;
    f.sa = inv * gwa;
    f.oa = gba - mean * f.sa;
    f.sb = inv * gwb;
    f.ob = gbb - mean * f.sb;
    f.g1 = 1.0f + gamma;
    f.beta = beta;
    return f;
}

// One element's output from its pre-norm pair (va, vb), its base value x and FusionGate's alpha:
// a*relu(b) plus the modulated residual, gated against x.
__device__ __forceinline__ float folded_output(const FoldedPair& f, float va, float vb, float x,
                                               float alpha) {
    const float an = fmaf(va, f.sa, f.oa), bn = fmaf(vb, f.sb, f.ob);
    const float refined = fmaf(an, fmaxf(bn, 0.0f), fmaf(f.g1, x, f.beta));
    return fmaf(alpha, refined - x, x);
}

// One element's refined value before FusionGate: GroupNorm's affine of the pre-norm pair (pa of
// channel c, pb of channel C + c; weights and biases gw*, gb*), a*relu(b), plus the residual
// modulated by the tile's FiLM at c (gamma, beta).
__device__ __forceinline__ float refine_value(float pa, float pb, float base, float mean,
                                              float inv, float gwa, float gba, float gwb,
                                              float gbb, float gamma, float beta) {
    const float an = (pa - mean) * inv * gwa + gba;
    const float bn = (pb - mean) * inv * gwb + gbb;
    return an * fmaxf(bn, 0.0f) + ((1.0f + gamma) * base + beta);
}
