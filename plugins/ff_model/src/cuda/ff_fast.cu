// The FF frame's fast path (spec/apex-x-kernels.md §1.1, §2.3): twelve launches per call
// (fourteen with both levels' refine split), no host synchronisation, every shape a kernel
// argument (one module per storage type serves every case). The host may run the levels for runs
// of the batch's frames on streams of their own (device/streams.rs): every kernel but ff_select
// and ff_base reads and writes only the frames of its grid, from the pointers it is given.
//
//   ff_select      both selection stages and the Hilbert orders, on the device, per batch entry
//   ff_base        heavy = dense, detail = 0 where no refine writes them, alpha = the L1 gate
//                  over the whole map (one pass, in few blocks beside the levels)
//   per level (L0 on dense, then L1 on the L0 result):
//   ff_pack_*      the selected tiles copied out as f32 [B,K,C,t,t] and their token means
//   ff_film_scan   the bidirectional scan over the frame's tiles (a warp per channel)
//   ff_film_fc1    LayerNorm, FiLM's first linear + SiLU per tile (a weight slice for up to
//                  FILM_TOKENS frames of one tile, or of two: ff_film_fc1_x2)
//   ff_film_out    FiLM's second linear: gamma (tanh), beta per tile (likewise, _x2)
//   ff_refine      modulate, depthwise 3x3, pointwise GEMM (tensor cores) per 32-pixel chunk:
//                  the pre-norm output [B,K,2C,t*t] (f32) and the chunk's GroupNorm partials
//   ff_apply       GroupNorm (the tile's partials combined), a*relu(b) + residual, FusionGate,
//                  and the override unpack into heavy (L0 also keeps its f32 result in `l0map`
//                  for the L1 level; L1 writes detail = heavy - heavy_l0)
//   ff_refine_apply (sm_90) both in one launch, a tile's chunks as one thread-block cluster that
//                  exchanges their GroupNorm partials in distributed shared memory; the host uses
//                  it on each level whose tile fits one cluster (t*t <= 256, C <= 128), and
//                  ff_refine + ff_apply on the others (device/refine.rs); at L0 it keeps the f32
//                  result only at the tiles ff_select split, the only ones L1 reads (keeps_l0)
//   ff_refine_apply_lean (sm_90) the same in at most 64 registers (four CTAs a SM; bf16, fp32:
//                  80, three): the GEMM's output waits for the statistics in shared memory, not in
//                  registers, and the finish stores runs of consecutive pixels; it is also
//                  compiled for the profile's two level shapes (ff_refine_apply_lean_c128_t16,
//                  _t8: LEAN_ENTRY); Refine::Auto (device/refine.rs) runs those copies on such a
//                  level at every batch in every storage, and the general kernel where its
//                  extra CTAs a SM save a wave of clusters
//
// Defines: DTYPE (0 fp32, 1 fp16, 2 bf16): the storage of the maps, the proxies and the outputs.
// Every op computes in f32, values are rounded once when stored, and the L1 level reads the L0
// result in f32 (a 16-bit model would otherwise round heavy_l0 between the levels). The GEMM's
// activations (the depthwise output) are split into hi + lo parts (16-bit; TF32 for fp32); so
// are the bf16 and fp32 cases' weights (three products, f32 accumulators): bf16's 8-bit mantissa
// would otherwise cost ~1e-3 of every pre-norm value, TF32's 10 bits the fp32 tolerance. fp16
// keeps the weights rounded to fp16 (the fp16 model's weights; their 2^-12 relative error stays
// far inside the fp16 tolerance), two products.
//
// Outside the selected tiles `base + alpha*(base - base)` is the base itself, so the gate runs
// only inside them, and `detail` is 0 there (ff_base writes both); the f64 reference computes the
// literal whole-map steps and verify compares the two.
//
// GroupNorm(1) needs the statistics of the whole tile before it applies. Split, ff_refine writes
// the pre-norm tensor (5 MiB at the profile's L0, in L2; 42 MB at B=8, through DRAM) with
// each chunk's (sum, centred sum of squares), and ff_apply combines a tile's partials (Chan's
// formula, f64) and finishes. Fused, the tile's CTAs keep their GEMM output in registers, trade
// only the partials, and finish in place (see ff_refine_apply).
//
// GEMM (pointwise 1x1, C -> 2C, per chunk M = 2C rows x N = 32 pixels x K = C): fp16 and bf16 use
// mma.sync m16n8k16, fp32 m16n8k8 in TF32, with f32 accumulators; the A operand (the weights, hi
// and lo) is stored by the host in fragment order, so each lane loads a fragment with one 16-byte
// load; the B operand (the depthwise output, hi and lo) sits in shared memory pixel-major, rows
// padded by 16 bytes (conflict-free ldmatrix loads).
// Warp w owns the "a" row tiles w, w+8, ... and, for each, the "b" row tile C/16 tiles further,
// so a*relu(b) pairs values the same thread holds.

#define CHUNK 32
#define NT (CHUNK / 8)
#define WARPS 8
#define THREADS (WARPS * 32)
#define NORM_EPS 1e-5
#define TOKEN_CLAMP 1e4f
#define APPLY_PER_THREAD 4
// Loads a thread keeps in flight in the staging loops. A guarded load followed by its use in an
// unrolled loop compiles to one load per branch, each waiting for the last; these loops clamp the
// index, load unconditionally into registers, then guard only the stores.
#define STAGE 8

#if DTYPE == 0
typedef float S;
#else
typedef unsigned short S;
#endif

__device__ __forceinline__ float to_f32(S v) {
#if DTYPE == 0
    return v;
#elif DTYPE == 1
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
#else
    return __uint_as_float(((unsigned int)v) << 16);
#endif
}

__device__ __forceinline__ S from_f32(float f) {
#if DTYPE == 0
    return f;
#elif DTYPE == 1
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    unsigned int u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)0x7fc0u;
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
#endif
}

// ---------------------------------------------------------------------------------------------
// Shared formulas (apex-tile-math's, in f32).

__device__ __forceinline__ float sigmoidf_(float x) { return 1.0f / (1.0f + expf(-x)); }

__device__ __forceinline__ float clean_proxy(float v) {
    if (isnan(v)) return 0.0f;
    if (isinf(v)) return v > 0.0f ? 1.0f : 0.0f;
    return v;
}

__device__ __forceinline__ float clean_token(float x) {
    if (isnan(x)) return 0.0f;
    return fminf(fmaxf(x, -TOKEN_CLAMP), TOKEN_CLAMP);
}

// gate = (softplus(wb), softplus(wu), bias), computed on the host.
__device__ __forceinline__ float gate_alpha(const float* gate, float boundary, float uncertainty) {
    float z = gate[0] * clean_proxy(boundary) + gate[1] * clean_proxy(uncertainty) + gate[2];
    return sigmoidf_(z);
}

// One level's weights, packed by the host into one f32 buffer (program.rs::LevelLayout).
struct Level {
    const float* scan;   // [12][C]: a, 1-a, in gain, bias, out gain (forward, backward), g, 1-g
    const float* ln_w;   // [C]
    const float* ln_b;   // [C]
    const float* fc1;    // [C out][C in]
    const float* fc1_b;  // [C]
    const float* fc2;    // [2C out][C in]
    const float* fc2_b;  // [2C]
    const float* dw_w;   // [C][9]
    const float* dw_b;   // [C]
    const float* pw_b;   // [2C]
    const float* gn_w;   // [2C]
    const float* gn_b;   // [2C]
    const float* gate;   // [4]: softplus(wb), softplus(wu), bias, 0
    const float* pw;     // fragment order, hi then lo (bf16, fp32; see refine_gemm)
    // (fc1, fc2: 16-byte aligned, C a multiple of 16: the GEMVs load float4 rows)
};

__device__ __forceinline__ Level level_at(const float* w, int C) {
    Level l;
    l.scan = w;
    l.ln_w = w + 12 * C;
    l.ln_b = l.ln_w + C;
    l.fc1 = l.ln_b + C;
    l.fc1_b = l.fc1 + C * C;
    l.fc2 = l.fc1_b + C;
    l.fc2_b = l.fc2 + 2 * C * C;
    l.dw_w = l.fc2_b + 2 * C;
    l.dw_b = l.dw_w + 9 * C;
    l.pw_b = l.dw_b + C;
    l.gn_w = l.pw_b + 2 * C;
    l.gn_b = l.gn_w + 2 * C;
    l.gate = l.gn_b + 2 * C;
    l.pw = l.gate + 4;
    return l;
}

// ---------------------------------------------------------------------------------------------
// Block reductions (THREADS threads; `red` holds WARPS + 1 floats of shared memory).

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ float block_sum(float v, float* red) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float t = lane < WARPS ? red[lane] : 0.0f;
        t = warp_sum(t);
        if (lane == 0) red[WARPS] = t;
    }
    __syncthreads();
    return red[WARPS];
}

// n / d for 0 <= n < 2^21 and 1 <= d <= 4096, with inv = 1.0f / d: (n + 0.5) * inv is within
// 2^-21 (relative) of the exact quotient, and its fractional part stays at least 0.5 / d away
// from an integer, so the truncation is exact. An integer division by a run-time divisor is ~20
// instructions; these index computations sit in the hot loops.
__device__ __forceinline__ int div_small(int n, int d, float inv) {
    (void)d;
    return (int)(((float)n + 0.5f) * inv);
}

// Merges (nb, mb, m2b) into (n, m, m2): count, mean, centred sum of squares (Chan et al.).
// Equal counts (the butterflies over a whole chunk's threads) weigh both halves by exactly 1/2,
// without the division (a float division is a call with a slow path: ~6 % of the lean kernel's
// instructions at B=8 went to the chunk's butterfly, H100, 2026-11-27).
__device__ __forceinline__ void chan_merge(float& n, float& m, float& m2, float nb, float mb,
                                           float m2b) {
    if (nb == 0.0f) return;
    const float total = n + nb, d = mb - m;
    const float f = nb == n ? 0.5f : nb / total;
    m += d * f;
    m2 += m2b + d * d * (n * f);
    n = total;
}

// Exclusive prefix count of `flag` over the block (threads in order); `*total` gets the count.
__device__ int block_scan(int flag, int* warp_base, int* total) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned ballot = __ballot_sync(0xffffffffu, flag);
    int before = __popc(ballot & ((1u << lane) - 1u));
    __syncthreads();
    if (lane == 0) warp_base[warp] = __popc(ballot);
    __syncthreads();
    if (threadIdx.x == 0) {
        int run = 0;
        for (int w = 0; w < WARPS; ++w) {
            int n = warp_base[w];
            warp_base[w] = run;
            run += n;
        }
        *total = run;
    }
    __syncthreads();
    return warp_base[warp] + before;
}

// ---------------------------------------------------------------------------------------------
// ff_base: heavy = dense and detail = 0 over [B,C,H,W] where no refine writes them, alpha =
// gate(boundary, uncertainty) over [B,H,W] (the L1 level's gate: the reported alpha is the L1
// path's). It runs after ff_select, whose coverage map `cover` [B, G] marks per L0 tile bit 0
// selected (the L0 refine writes heavy at every pixel of the tile) and bit 1 split (its four L1
// children cover it, and the L1 refine writes detail at every pixel of theirs): the pass skips
// those bytes, and the dense reads of the first (at the profile, 20 of the 64 tiles' heavy).
// Nothing else reads what it writes, so the host runs it beside the levels, in few blocks
// (device/streams.rs: one per 16 bands). The work is B * H / t0 * ceil(C / BASE_CHANNELS)
// bands, band ((b, r), channel group) being tile row r (t0 rows of W) of BASE_CHANNELS
// consecutive planes of frame b, which share their coverage; block i copies bands i, i +
// gridDim.x, ... (base_band), then the blocks share alpha's pixels.
#define BASE_CHANNELS 8

// One band (C a multiple of BASE_CHANNELS: the fast path's C is one of 16, device/sizing.rs): a
// thread looks up the coverage of its columns once and copies them in every plane, all its loads
// in flight. Threads go over the band's 16-byte vectors where t0 and W are multiples of a
// vector's elements (a vector then never straddles a tile), over its elements elsewhere. A block a band (one vector a thread at the profile) spent ~200 instructions a warp
// on its indices: 20 % of a B=8 frame's instructions (H100, 2026-11-27), issue slots the levels
// beside it need. The vectors stream (ld/st.global.cs, evict-first): beside the levels the base's
// bytes would otherwise push the levels' packed tiles and weights out of L2 (H100, apex-host: B=8
// 170.2-170.6 us against 175.0-175.2 with plain loads and stores, 256x256 77.2 against 86.8-87.1;
// twenty-third session, call 4).
__device__ __forceinline__ void base_band(const S* __restrict__ dense,
                                          const unsigned char* __restrict__ cover,
                                          S* __restrict__ heavy, S* __restrict__ detail, int band,
                                          int c0, int C, int H, int W, int t0) {
    const int gh = H / t0, gw = W / t0;
    const int b = band / gh, r = band - b * gh;
    const unsigned char* row = cover + (long long)band * gw;  // cover[b, r * gw ..]
    const long long plane = (long long)H * W;
    const long long at0 = ((long long)b * C + c0) * plane + (long long)r * t0 * W;
    const S* d = dense + at0;
    S* h = heavy + at0;
    S* z = detail + at0;
    const int per = 16 / sizeof(S);
    if (W % per == 0 && t0 % per == 0) {
        const int vpr = W / per, tv = t0 / per, n = t0 * vpr;
        const long long pv = plane / per;  // a plane in vectors
        const uint4* d4 = reinterpret_cast<const uint4*>(d);
        uint4* h4 = reinterpret_cast<uint4*>(h);
        uint4* z4 = reinterpret_cast<uint4*>(z);
        for (int j = threadIdx.x; j < n; j += blockDim.x) {
            const int cov = row[(j % vpr) / tv];
            if (!(cov & 1)) {
                uint4 v[BASE_CHANNELS];
#pragma unroll
                for (int i = 0; i < BASE_CHANNELS; ++i) v[i] = __ldcs(&d4[i * pv + j]);
#pragma unroll
                for (int i = 0; i < BASE_CHANNELS; ++i) __stcs(&h4[i * pv + j], v[i]);
            }
            if (!(cov & 2)) {
#pragma unroll
                for (int i = 0; i < BASE_CHANNELS; ++i)
                    __stcs(&z4[i * pv + j], make_uint4(0u, 0u, 0u, 0u));
            }
        }
    } else {
        const int n = t0 * W;
        for (int e = threadIdx.x; e < n; e += blockDim.x) {
            const int cov = row[(e % W) / t0];
            for (int i = 0; i < BASE_CHANNELS; ++i) {
                if (!(cov & 1)) h[i * plane + e] = d[i * plane + e];
                if (!(cov & 2)) z[i * plane + e] = from_f32(0.0f);
            }
        }
    }
}

// At most 64 registers (four blocks a SM): a block then takes the registers of one lean refine
// CTA on its SM, not two (99 unbounded).
extern "C" __global__ void __launch_bounds__(THREADS, 4) ff_base(
    const S* __restrict__ dense, const S* __restrict__ boundary, const S* __restrict__ uncertainty,
    const float* __restrict__ weights_l1, const unsigned char* __restrict__ cover,
    S* __restrict__ heavy, S* __restrict__ detail, S* __restrict__ alpha, long long pixels, int C,
    int H, int W, int t0) {
    const int groups = (C + BASE_CHANNELS - 1) / BASE_CHANNELS;
    const int bands = (int)(pixels / ((long long)W * t0)) * groups;
    for (int i = blockIdx.x; i < bands; i += gridDim.x) {
        const int band = i / groups;
        base_band(dense, cover, heavy, detail, band, (i - band * groups) * BASE_CHANNELS, C, H, W,
                  t0);
    }
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (first - threadIdx.x >= pixels) return;
    const Level l1 = level_at(weights_l1, C);
    for (long long i = first; i < pixels; i += stride) {
        alpha[i] = from_f32(gate_alpha(l1.gate, to_f32(boundary[i]), to_f32(uncertainty[i])));
    }
}

// ---------------------------------------------------------------------------------------------
// ff_select: one block per batch entry. Every L0 tile costs the same, so stage 1 takes the k0
// best scores (utility/cost desc, id asc: the host's sort) and stage 2 splits the s best
// selected parents by split score; the host computes k0 and s from the budgets (the counts do
// not depend on the utilities). Both lists are then compacted in Hilbert order: hil0 / hil1 list
// every tile id of the L0 / L1 grid in Hilbert order, and cover[b, tile] tells ff_base which
// tiles the refines write. Scores are f64 as on the host.
// Shared memory: 2*G doubles, G ints, G bytes.

extern "C" __global__ void __launch_bounds__(THREADS) ff_select(
    const float* __restrict__ utilities, const float* __restrict__ split_utilities,
    const int* __restrict__ hil0, const int* __restrict__ hil1, int* __restrict__ ids_l0,
    int* __restrict__ ids_l1, unsigned char* __restrict__ cover, int G, int gw, int k0,
    int splits, double cost, double overhead) {
    extern __shared__ double sel_smem[];
    __shared__ int warp_base[WARPS];
    __shared__ int total;
    double* score = sel_smem;
    double* split_score = sel_smem + G;
    int* state = reinterpret_cast<int*>(sel_smem + 2 * G);  // 0 none, 1 selected by stage 1
    // 1: a selected tile that stage 2 splits. Apart from `state`, which stage 2 reads while it
    // ranks: writing the marks into it raced with those reads (compute-sanitizer's racecheck,
    // 2026-11-26), even though a mark never changed what a read decided.
    unsigned char* split = reinterpret_cast<unsigned char*>(state + G);
    const int b = blockIdx.x;
    for (int i = threadIdx.x; i < G; i += blockDim.x) {
        score[i] = (double)utilities[(long long)b * G + i] / cost;
        split_score[i] = (double)split_utilities[(long long)b * G + i] / overhead;
        split[i] = 0;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < G; i += blockDim.x) {
        double s = score[i];
        int rank = 0;
        for (int j = 0; j < G; ++j) {
            double o = score[j];
            rank += (o > s) || (o == s && j < i);
        }
        state[i] = rank < k0 ? 1 : 0;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < G; i += blockDim.x) {
        if (state[i] == 0) continue;
        double s = split_score[i];
        int rank = 0;
        for (int j = 0; j < G; ++j) {
            if (state[j] == 0) continue;
            double o = split_score[j];
            rank += (o > s) || (o == s && j < i);
        }
        split[i] = rank < splits ? 1 : 0;
    }
    __syncthreads();
    // ff_base's coverage map: bit 0 selected, bit 1 split.
    for (int i = threadIdx.x; i < G; i += blockDim.x)
        cover[(long long)b * G + i] = (unsigned char)((state[i] != 0) | (split[i] << 1));
    int base = 0;
    for (int r0 = 0; r0 < G; r0 += blockDim.x) {
        int r = r0 + threadIdx.x;
        int id = r < G ? hil0[r] : 0;
        int flag = r < G && state[id] != 0;
        int at = block_scan(flag, warp_base, &total);
        if (flag) ids_l0[(long long)b * k0 + base + at] = id;
        base += total;
    }
    const int l1w = 2 * gw, G1 = 4 * G;
    base = 0;
    for (int r0 = 0; r0 < G1; r0 += blockDim.x) {
        int r = r0 + threadIdx.x;
        int id = r < G1 ? hil1[r] : 0;
        int parent = (id / l1w / 2) * gw + (id % l1w) / 2;
        int flag = r < G1 && split[parent] != 0;
        int at = block_scan(flag, warp_base, &total);
        if (flag) ids_l1[(long long)b * 4 * splits + base + at] = id;
        base += total;
    }
}

// ---------------------------------------------------------------------------------------------
// ff_pack_s / ff_pack_f: grid (K, B, ceil(C / WARPS)), a warp per channel. packed[b,k,c,:] = the
// tile's pixels of src[b,c,:,:] as f32; tokens[b,k,c] = their mean. Where t and W are multiples
// of 4 (every tile row a run of whole 4-pixel groups, 8- or 16-byte aligned) each lane moves four
// pixels a load and a float4 a store, all its loads in flight at once; elsewhere a pixel a load.
// The loads are evict-first (ld.global.cs): nothing else in the frame reads a selected tile's
// source (ff_base skips L0's, the refines read the packed copy, and l0map's pixels feed only the
// L1 pack). H100, apex-host against plain loads in one call: B=8 199.0-199.1 us against
// 200.8-202.6, every other case within 0.4 us (twentieth session, call 3). The refines' staging
// loads of the packed tile, evict-first or without L1 allocation, cost B=8 ~5 us (same call).

template <typename T>
__device__ __forceinline__ float load_f32(const T* p);
template <>
__device__ __forceinline__ float load_f32<float>(const float* p) { return __ldcs(p); }
#if DTYPE != 0
template <>
__device__ __forceinline__ float load_f32<S>(const S* p) { return to_f32(__ldcs(p)); }
#endif

// Four consecutive elements from a 4-element-aligned address, as f32.
template <typename T>
__device__ __forceinline__ float4 load4_f32(const T* p);
template <>
__device__ __forceinline__ float4 load4_f32<float>(const float* p) {
    return __ldcs(reinterpret_cast<const float4*>(p));
}
#if DTYPE != 0
template <>
__device__ __forceinline__ float4 load4_f32<S>(const S* p) {
    const uint2 v = __ldcs(reinterpret_cast<const uint2*>(p));
    return make_float4(to_f32((S)(v.x & 0xffffu)), to_f32((S)(v.x >> 16)),
                       to_f32((S)(v.y & 0xffffu)), to_f32((S)(v.y >> 16)));
}
#endif

// 4-pixel loads a lane keeps in flight in ff_pack (a 16x16 tile is 64 of them: two a lane).
#define PACK_STAGE 2

template <typename T>
__device__ void ff_pack(const T* __restrict__ src, const int* __restrict__ ids,
                        float* __restrict__ packed, float* __restrict__ tokens, int C, int H, int W,
                        int t, int gw, int K) {
    const int k = blockIdx.x, b = blockIdx.y;
    const int lane = threadIdx.x & 31, c = blockIdx.z * WARPS + (threadIdx.x >> 5);
    if (c >= C) return;
    const int id = ids[b * K + k];
    const int y0 = (id / gw) * t, x0 = (id % gw) * t, P = t * t;
    const float inv_t = 1.0f / (float)t;
    const T* plane = src + ((long long)b * C + c) * H * W;
    float* out = packed + (((long long)b * K + k) * C + c) * P;
    float sum = 0.0f;
    if ((t & 3) == 0 && (W & 3) == 0) {
        const int quads = P / 4;
        for (int q0 = lane; q0 < quads; q0 += 32 * PACK_STAGE) {
            float4 v[PACK_STAGE];
#pragma unroll
            for (int u = 0; u < PACK_STAGE; ++u) {  // clamped, unconditional loads: all in flight
                const int p = 4 * min(q0 + 32 * u, quads - 1), py = div_small(p, t, inv_t);
                v[u] = load4_f32<T>(plane + (long long)(y0 + py) * W + x0 + p - py * t);
            }
#pragma unroll
            for (int u = 0; u < PACK_STAGE; ++u) {
                const int q = q0 + 32 * u;
                if (q < quads) {
                    reinterpret_cast<float4*>(out)[q] = v[u];
                    sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
                }
            }
        }
    } else {
        for (int p0 = lane; p0 < P; p0 += 32 * STAGE) {
            float v[STAGE];
#pragma unroll
            for (int u = 0; u < STAGE; ++u) {  // clamped, unconditional loads: all in flight
                const int p = min(p0 + 32 * u, P - 1);
                const int py = div_small(p, t, inv_t);
                v[u] = load_f32<T>(plane + (long long)(y0 + py) * W + x0 + p - py * t);
            }
#pragma unroll
            for (int u = 0; u < STAGE; ++u) {
                const int p = p0 + 32 * u;
                if (p < P) {
                    out[p] = v[u];
                    sum += v[u];
                }
            }
        }
    }
    sum = warp_sum(sum);
    if (lane == 0) tokens[((long long)b * K + k) * C + c] = sum / (float)P;
}

extern "C" __global__ void __launch_bounds__(THREADS) ff_pack_s(
    const S* __restrict__ src, const int* __restrict__ ids, float* __restrict__ packed,
    float* __restrict__ tokens, int C, int H, int W, int t, int gw, int K) {
    ff_pack<S>(src, ids, packed, tokens, C, H, W, t, gw, K);
}

extern "C" __global__ void __launch_bounds__(THREADS) ff_pack_f(
    const float* __restrict__ src, const int* __restrict__ ids, float* __restrict__ packed,
    float* __restrict__ tokens, int C, int H, int W, int t, int gw, int K) {
    ff_pack<float>(src, ids, packed, tokens, C, H, W, t, gw, K);
}

#define GEMV_LOADS 8
// Frames of one tile index a FiLM linear block takes at most (its run's frames, up to this).
#define FILM_TOKENS 4
// A slice of y_t = w x_t + bias for nt <= NV vectors x_t (w row-major [n_out][n_in] in global
// memory; x [nt][n_in] in shared memory; both 16-byte aligned, n_in a multiple of 4): the rows
// [row0, row0 + blockDim/split), each shared by `split` adjacent threads (a power of two <= 32).
// Thread s of a row's group reads the row's float4s s, s + split, ... (interleaved: the group's
// lanes read adjacent float4s of each vector, so a quarter-warp's shared loads are
// conflict-free), uses each loaded weight for every vector, and the group adds its partials with
// shuffles. gemv_begin issues the thread's first GEMV_LOADS weight loads (all of them at
// C = 128), so that they are in flight while the block stages and normalises its vectors;
// gemv_finish then gives z[t] row o's value for x_t on the group's first thread (s == 0; the
// return value), nothing past n_out. nt is the same for the whole block.
struct GemvSlice {
    const float4* row;
    int quads, o, oc, s;
    float4 v[GEMV_LOADS];
};

__device__ __forceinline__ GemvSlice gemv_begin(const float* __restrict__ w, int n_in, int n_out,
                                                int row0, int split) {
    GemvSlice g;
    g.quads = n_in / 4;
    g.s = threadIdx.x % split;
    g.o = row0 + threadIdx.x / split;
    g.oc = min(g.o, n_out - 1);
    g.row = reinterpret_cast<const float4*>(w + (long long)g.oc * n_in);
#pragma unroll
    for (int u = 0; u < GEMV_LOADS; ++u) g.v[u] = g.row[min(g.s + u * split, g.quads - 1)];
    return g;
}

template <int NV>
__device__ __forceinline__ bool gemv_finish(GemvSlice& g, const float* __restrict__ bias,
                                            const float* x, int nt, int split, int n_out,
                                            float* z) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const int quads = g.quads, step = GEMV_LOADS * split;
#pragma unroll
    for (int t = 0; t < NV; ++t) z[t] = 0.0f;
    for (int j = g.s; j < quads; j += step) {
        if (j != g.s) {
#pragma unroll
            for (int u = 0; u < GEMV_LOADS; ++u) g.v[u] = g.row[min(j + u * split, quads - 1)];
        }
#pragma unroll
        for (int u = 0; u < GEMV_LOADS; ++u) {
            const int jj = j + u * split;
            if (jj >= quads) break;
#pragma unroll
            for (int t = 0; t < NV; ++t) {
                if (t >= nt) break;
                const float4 xv = x4[t * quads + jj];
                z[t] += g.v[u].x * xv.x + g.v[u].y * xv.y + g.v[u].z * xv.z + g.v[u].w * xv.w;
            }
        }
    }
#pragma unroll
    for (int t = 0; t < NV; ++t) {
        if (t >= nt) break;
        for (int m = split / 2; m > 0; m >>= 1) z[t] += __shfl_xor_sync(0xffffffffu, z[t], m);
        z[t] += bias[g.oc];
    }
    return g.s == 0 && g.o < n_out;
}

// ---------------------------------------------------------------------------------------------
// FiLM in three launches. One block per tile that recomputed the scan and read all of FiLM's
// weights spent 16 us per level waiting on those loads (Nsight Compute, H100); slices of the rows
// per block (then two launches) fixed B=1, but at B=8 every (tile, frame) block still read its
// slice, the same few KiB from L2 by ~1,000 blocks (L1's two launches: 39 us on an H100). Now
// the scan runs once per channel of a frame, and each linear block applies its weight slice to
// up to FILM_TOKENS of the tile's frames at once (4; eight frames a block left 80 blocks for 132
// SMs at B=8 in one launch). The host launches each run of frames (device/streams.rs: at most
// three frames since the nineteenth session) on its own, so a block now takes a run's frames.
// Where several runs overlap, a block takes two tiles of its run's frames (the _x2 entry points,
// device/sizing.rs: film_tiles): the runs together read FiLM's weights half as often (H100, B=8
// 168.3-168.5 -> 159.8-160.5 us in process, twenty-fourth session, call 2). The GEMV reads its
// row's float4s interleaved across the row's threads, so that its vector loads from shared memory
// are conflict-free (with the x2 entry points in the same build: the profile 57.7-57.8 -> 56.2).
//
// ff_film_scan: grid (B, ceil(C / WARPS)), a warp per channel. The bidirectional scan over the
// frame's K tokens (forward over 0..k, backward over K-1..k, from zero states) for every tile:
// s_j = a s_(j-1) + u_j is a linear recurrence, so the warp scans 32 tokens at a time in five
// shuffle steps (s_j += a^d s_(j-d)) and carries the chunk's last state into the next chunk
// (+ a^(lane+1) carry). The cleaned sum of both directions' outputs goes to scanned[b,k,c]
// (forward first, read back by the same warp for the backward pass).
#define FC1_ROWS 32
#define FC2_ROWS 64

// a^n for 1 <= n <= 32 (five squarings).
__device__ __forceinline__ float pow_small(float a, int n) {
    float r = 1.0f;
#pragma unroll
    for (int bit = 0; bit < 6; ++bit) {
        if (n & (1 << bit)) r *= a;
        a *= a;
    }
    return r;
}

// The inclusive scan s_j = a s_(j-1) + u_j over the warp's lanes (token j in lane j), plus
// a^(lane+1) times the state carried in from the previous chunk.
__device__ __forceinline__ float warp_linear_scan(float u, float a, float carry) {
    const int lane = threadIdx.x & 31;
    float s = u, ad = a;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const float up = __shfl_up_sync(0xffffffffu, s, d);
        if (lane >= d) s += ad * up;
        ad *= ad;
    }
    return s + pow_small(a, lane + 1) * carry;
}

// One direction's recurrence of channel c: its coefficients from the level's scan block.
struct ScanDir {
    float a, oma, ig, sb, og, wo;
};

__device__ __forceinline__ ScanDir scan_dir(const float* p, int C, int c, bool forward) {
    const int o = forward ? 0 : 5 * C;
    return ScanDir{p[o + c],         p[o + C + c],     p[o + 2 * C + c],
                   p[o + 3 * C + c], p[o + 4 * C + c], p[(forward ? 10 : 11) * C + c]};
}

// One direction over 32-token chunks: token j = base + lane (forward) or K - 1 - (base + lane)
// (backward); out[j] = wo * og * s_j (forward), out[j] = clean(out[j] + wo * og * s_j)
// (backward, after the forward pass of the same warp). The warp's lanes all take part.
__device__ __forceinline__ void scan_direction(const float* __restrict__ tok, float* out,
                                               const ScanDir& d, int K, int C, bool forward) {
    const int lane = threadIdx.x & 31;
    float carry = 0.0f;
    for (int base = 0; base < K; base += 32) {
        const int i = base + lane, j = forward ? i : K - 1 - i;
        const bool valid = i < K;
        const float x = valid ? clean_token(tok[(long long)j * C]) : 0.0f;
        const float s = warp_linear_scan(valid ? d.oma * (d.ig * x + d.sb) : 0.0f, d.a, carry);
        carry = __shfl_sync(0xffffffffu, s, 31);
        if (valid) {
            float* y = out + (long long)j * C;
            *y = forward ? d.wo * (d.og * s) : clean_token(*y + d.wo * (d.og * s));
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) ff_film_scan(
    const float* __restrict__ tokens, const float* __restrict__ weights, float* __restrict__ scanned,
    int C, int K) {
    const int b = blockIdx.x, c = blockIdx.y * WARPS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (c >= C) return;
    const Level l = level_at(weights, C);
    const float* tok = tokens + (long long)b * K * C + c;
    float* out = scanned + (long long)b * K * C + c;
    const ScanDir fw = scan_dir(l.scan, C, c, true), bw = scan_dir(l.scan, C, c, false);
    if (K <= 32) {
        // One chunk: both directions at once, lane l holding token l forward and token K-1-l
        // backward; the forward output of token K-1-l comes from lane K-1-l.
        const bool valid = lane < K;
        const int mirror = valid ? K - 1 - lane : 0;
        const float xf = valid ? clean_token(tok[(long long)lane * C]) : 0.0f;
        const float xb = valid ? clean_token(tok[(long long)mirror * C]) : 0.0f;
        const float sf = warp_linear_scan(valid ? fw.oma * (fw.ig * xf + fw.sb) : 0.0f, fw.a, 0.0f);
        const float sb = warp_linear_scan(valid ? bw.oma * (bw.ig * xb + bw.sb) : 0.0f, bw.a, 0.0f);
        const float yf = __shfl_sync(0xffffffffu, fw.wo * (fw.og * sf), mirror);
        if (valid) out[(long long)mirror * C] = clean_token(yf + bw.wo * (bw.og * sb));
        return;
    }
    scan_direction(tok, out, fw, K, C, true);
    __syncwarp();  // the forward outputs, written by other lanes, before the backward pass
    scan_direction(tok, out, bw, K, C, false);
}

// The vectors of a FiLM linear block: tiles k0 .. k0 + TILES - 1 (fewer at the end of K) of
// frames b0 .. b0 + frames - 1 (blockIdx.x * TILES, blockIdx.y * FILM_TOKENS, at most
// FILM_TOKENS frames of the batch's B); vector j is tile k0 + j / frames of frame b0 + j % frames.
template <int TILES>
struct FilmBlock {
    static constexpr int MAX = TILES * FILM_TOKENS;
    int k0, b0, frames, n;

    __device__ __forceinline__ FilmBlock(int K, int B) {
        k0 = blockIdx.x * TILES;
        b0 = blockIdx.y * FILM_TOKENS;
        frames = min(FILM_TOKENS, B - b0);
        n = min(TILES, K - k0) * frames;
    }

    // Vector j's offset (in vectors) in a [B][K][...] buffer.
    __device__ __forceinline__ long long at(int j, int K) const {
        const int kk = TILES == 1 ? 0 : j / frames;
        return (long long)(b0 + j - kk * frames) * K + k0 + kk;
    }
};

// The block's vectors of `src` [B][K][C] into `x` [n][C] of shared memory, with the block
// synchronised.
template <int TILES>
__device__ __forceinline__ void stage_tokens(const float* __restrict__ src, float* x,
                                             const FilmBlock<TILES>& fb, int K, int C) {
    const int n = fb.n * C, bd = blockDim.x;
    for (int i0 = threadIdx.x; i0 < n; i0 += FILM_TOKENS * bd) {
        float v[FILM_TOKENS];
#pragma unroll
        for (int u = 0; u < FILM_TOKENS; ++u) {  // clamped, unconditional loads: all in flight
            const int i = min(i0 + u * bd, n - 1), j = i / C;
            v[u] = src[fb.at(j, K) * C + i - j * C];
        }
#pragma unroll
        for (int u = 0; u < FILM_TOKENS; ++u)
            if (i0 + u * bd < n) x[i0 + u * bd] = v[u];
    }
    __syncthreads();
}

// ff_film_fc1 (TILES 1) and ff_film_fc1_x2 (2): grid (ceil(K / TILES), ceil(B / FILM_TOKENS),
// ceil(C / FC1_ROWS)). LayerNorm(C) of the scan's output for the block's vectors (FilmBlock; warp
// w normalises vectors w, w + WARPS, ... in place), then FC1_ROWS rows of FiLM's first linear
// (C -> C) and SiLU: hidden[b,k,:]. Shared memory: TILES * min(B, FILM_TOKENS) * C floats.
template <int TILES>
__device__ __forceinline__ void film_fc1(const float* __restrict__ scanned,
                                         const float* __restrict__ weights,
                                         float* __restrict__ hidden, int C, int K, int B) {
    extern __shared__ float film_smem[];
    const FilmBlock<TILES> fb(K, B);
    const Level l = level_at(weights, C);
    const int split = THREADS / FC1_ROWS;
    GemvSlice g = gemv_begin(l.fc1, C, C, blockIdx.z * FC1_ROWS, split);
    stage_tokens(scanned, film_smem, fb, K, C);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int t = warp; t < fb.n; t += WARPS) {
        float* x = film_smem + t * C;
        float part = 0.0f;
        for (int c = lane; c < C; c += 32) part += x[c];
        const float mean = warp_sum(part) / (float)C;
        part = 0.0f;
        for (int c = lane; c < C; c += 32) part += (x[c] - mean) * (x[c] - mean);
        const float inv = rsqrtf(warp_sum(part) / (float)C + (float)NORM_EPS);
        for (int c = lane; c < C; c += 32) x[c] = (x[c] - mean) * inv * l.ln_w[c] + l.ln_b[c];
    }
    __syncthreads();
    float z[fb.MAX];
    if (gemv_finish<fb.MAX>(g, l.fc1_b, film_smem, fb.n, split, C, z)) {
#pragma unroll
        for (int t = 0; t < fb.MAX; ++t)
            if (t < fb.n) hidden[fb.at(t, K) * C + g.o] = z[t] * sigmoidf_(z[t]);
    }
}

// ff_film_out (TILES 1) and ff_film_out_x2 (2): grid (ceil(K / TILES), ceil(B / FILM_TOKENS),
// ceil(2C / FC2_ROWS)). FC2_ROWS rows of FiLM's second linear (C -> 2C) for the block's vectors
// (FilmBlock): film[b,k,0..C) = tanh(gamma_raw), film[b,k,C..2C) = beta. Shared memory: as
// film_fc1's.
template <int TILES>
__device__ __forceinline__ void film_out(const float* __restrict__ hidden,
                                         const float* __restrict__ weights,
                                         float* __restrict__ film, int C, int K, int B) {
    extern __shared__ float film_smem[];
    const FilmBlock<TILES> fb(K, B);
    const Level l = level_at(weights, C);
    const int split = THREADS / FC2_ROWS;
    GemvSlice g = gemv_begin(l.fc2, C, 2 * C, blockIdx.z * FC2_ROWS, split);
    stage_tokens(hidden, film_smem, fb, K, C);
    float z[fb.MAX];
    if (gemv_finish<fb.MAX>(g, l.fc2_b, film_smem, fb.n, split, 2 * C, z)) {
        const int o = g.o;
#pragma unroll
        for (int t = 0; t < fb.MAX; ++t)
            if (t < fb.n) film[fb.at(t, K) * 2 * C + o] = o < C ? tanhf(z[t]) : z[t];
    }
}

#define FILM_ENTRY(NAME, BODY, TILES)                                                             \
    extern "C" __global__ void __launch_bounds__(THREADS) NAME(                                   \
        const float* __restrict__ in, const float* __restrict__ weights, float* __restrict__ out, \
        int C, int K, int B) {                                                                    \
        BODY<TILES>(in, weights, out, C, K, B);                                                   \
    }
FILM_ENTRY(ff_film_fc1, film_fc1, 1)
FILM_ENTRY(ff_film_fc1_x2, film_fc1, 2)
FILM_ENTRY(ff_film_out, film_out, 1)
FILM_ENTRY(ff_film_out_x2, film_out, 2)

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
    // The weights' fragments (bf16, fp32: hi, then lo; (2C/16) * ksteps * 32 uint4 each).
    const uint4* hi = reinterpret_cast<const uint4*>(l.pw);
#if WEIGHTS_LO
    const uint4* lo = hi + (long long)(2 * C / 16) * ksteps * 32;
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
            float acc = dwb;
            if (x > 0) acc += wv[0] * l0;
            acc += wv[1] * c0;
            if (x + 1 < T) acc += wv[2] * r0v;
            if (x > 0) acc += wv[3] * l1;
            acc += wv[4] * c1;
            if (x + 1 < T) acc += wv[5] * r1v;
            if (x > 0) acc += wv[6] * l2;
            acc += wv[7] * c2;
            if (x + 1 < T) acc += wv[8] * r2v;
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
// kernel's shape copies, C = 16 * WARPS): the chunk's exact sum first (each warp's, then the
// block's, every thread adding the warps in the same order), then the squares about the chunk's
// mean, in two block barriers; `inv_count` = 1 / (2C * CHUNK). Chan's merges (a division and a
// branch each, per thread and per shuffle step) were ~45 % of the lean kernel's GEMM-and-partial
// region (Nsight Compute, H100, B=8, twenty-first session, call 3). Thread 0 writes out[0] = sum,
// out[1] = M2, as chunk_partial does; the values differ from it only in rounding.
__device__ __forceinline__ void whole_chunk_partial(const float (*acc_a)[4],
                                                    const float (*acc_b)[4], float (*part)[3],
                                                    float* out, float inv_count) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float s = 0.0f;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) s += acc_a[nt][e] + acc_b[nt][e];
    }
    s = warp_sum(s);
    if (lane == 0) part[warp][0] = s;
    __syncthreads();
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) sum += part[w][0];
    const float m = sum * inv_count;
    float q = 0.0f;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const float da = acc_a[nt][e] - m, db = acc_b[nt][e] - m;
            q = fmaf(da, da, q);
            q = fmaf(db, db, q);
        }
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
// ff_apply and ff_refine_apply both run it, so both paths normalise with the same numbers.
__device__ __forceinline__ void tile_stats(const double* partial, int chunks, int C, int P, float* stat) {
    double n_all = 0.0, sum_all = 0.0;
    for (int j = 0; j < chunks; ++j) {
        n_all += 2.0 * C * (min((j + 1) * CHUNK, P) - j * CHUNK);
        sum_all += partial[2 * j];
    }
    const double mean = sum_all / n_all;
    // n d^2 with d = sum/n - mean is (sum - n mean)^2 / n: one reciprocal for the full chunks'
    // count and one for the last chunk's (f64 divisions are long dependent sequences, and one
    // thread runs this while its CTA waits).
    const double n_full = 2.0 * C * CHUNK, n_last = 2.0 * C * (P - (chunks - 1) * CHUNK);
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

// ff_refine: grid (chunks, K, B), THREADS threads. Modulate, depthwise 3x3 and the pointwise
// GEMM of one chunk; writes the pre-norm GEMM output pre[b,k,0..2C,p] (f32) and the chunk's
// GroupNorm partials stats[b,k,chunk] = (sum, centred sum of squares). Shared memory: see
// refine_operand.
extern "C" __global__ void __launch_bounds__(THREADS) ff_refine(
    const float* __restrict__ packed, const float* __restrict__ film,
    const float* __restrict__ weights, float* __restrict__ pre, float* __restrict__ stats, int C,
    int t, int K) {
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
        heavy[at] = from_f32(o);
        if (l0map) l0map[at] = o;
        if (detail) detail[at] = from_f32(o - base[e]);
    }
}

// Whether the L0 level keeps tile `id`'s f32 result in l0map: only where ff_select split it
// (cover bit 1), since the L1 level reads l0map only inside its own tiles, the split tiles'
// children (at B=8, 64 of the 160 L0 tiles: 12.6 MB of writes fewer). The L0 grid: H / t rows of
// gw tiles. ff_apply (the split path) writes l0map at every tile.
__device__ __forceinline__ bool keeps_l0(const unsigned char* __restrict__ cover, int b, int id,
                                         int H, int t, int gw) {
    return (cover[(long long)b * (H / t) * gw + id] & 2) != 0;
}

// ---------------------------------------------------------------------------------------------
// ff_refine_apply (sm_90): ff_refine and ff_apply of one tile as one thread-block cluster, so the
// pre-norm tensor never leaves the SM. Grid (chunks, K, B), clusters of (chunks, 1, 1) (the host
// launches it with cuLaunchKernelEx; chunks <= MAX_CLUSTER, the portable cluster size), so chunk
// j is the tile's cluster rank j; C <= 16 * WARPS, so warp w owns at most the row-tile pair w
// and keeps its accumulators through the tile's statistics. Each CTA:
//   1. ff_refine's chunk (same shared memory): modulate, depthwise 3x3, the GEMM into acc_a /
//      acc_b, the chunk's (sum, M2) published in its shared memory;
//   2. cluster barrier (arrive.release ... wait.acquire; between them the residual's base
//      values, the gate at the chunk's pixels and their map offsets are loaded);
//   3. thread 0 reads every chunk's partial through distributed shared memory (mapa +
//      ld.shared::cluster) and combines them in chunk order with ff_apply's code (tile_stats),
//      so every CTA of the tile normalises with bit-identical statistics, computed from the
//      same partials by the same code as on the split path;
//   4. ff_apply's finish straight from the accumulators (refine_value, FusionGate), each thread
//      storing its two adjacent pixels per (channel, column pair) of the m16n8 layout;
//   5. a second cluster barrier, arrived at after step 3's reads and waited on before exit: a
//      CTA's shared memory must outlive its peers' reads.
#if __CUDA_ARCH__ >= 900
#define MAX_CLUSTER 8

// Only thread 0 writes what a peer reads (its CTA's partial) or reads a peer's shared memory,
// so only thread 0 fences at cluster scope; every thread then arrives relaxed (a release arrive
// is a fence in each thread: 17 % of the lean kernel's stall samples at B=8, H100).
__device__ __forceinline__ void cluster_arrive() {
    if (threadIdx.x == 0) asm volatile("fence.acq_rel.cluster;" ::: "memory");
    __syncwarp();
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

__device__ __forceinline__ void cluster_wait() {
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The f32 at `p` (this CTA's shared memory) in the shared memory of the cluster's CTA `rank`.
__device__ __forceinline__ float ld_peer_f32(const float* p, unsigned int rank) {
    const unsigned int local = (unsigned int)__cvta_generic_to_shared(p);
    unsigned int remote;
    float v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
    return v;
}

// GroupNorm's weights and biases and the tile's FiLM (gamma, beta), [2C] each, into shared memory
// (no barrier: the caller's next one publishes them).
__device__ __forceinline__ void stage_norm_film(const Level& l, const float* fk, int C,
                                                float* norm_w, float* norm_b, float* gamma_beta) {
    for (int i = threadIdx.x; i < 2 * C; i += blockDim.x) {
        norm_w[i] = l.gn_w[i];
        norm_b[i] = l.gn_b[i];
        gamma_beta[i] = fk[i];
    }
}

// Threads 0 .. CHUNK-1: FusionGate's alpha at the chunk's pixels [p0, p1) of tile *tile_id (past
// p1: the last pixel's) and their offsets in a [H, W] plane, into shared memory.
__device__ __forceinline__ void chunk_pixels(const Level& l, const int* tile_id,
                                             const S* __restrict__ boundary,
                                             const S* __restrict__ uncertainty, int b, int H,
                                             int W, int t, int gw, int p0, int p1,
                                             float* pixel_alpha, int* pixel_offset) {
    if (threadIdx.x >= CHUNK) return;
    const int id = *tile_id, p = min(p0 + (int)threadIdx.x, p1 - 1);
    const int py = div_small(p, t, 1.0f / (float)t);
    const int at = ((id / gw) * t + py) * W + (id % gw) * t + p - py * t;
    const long long pix = (long long)b * H * W + at;
    pixel_alpha[threadIdx.x] = gate_alpha(l.gate, to_f32(boundary[pix]), to_f32(uncertainty[pix]));
    pixel_offset[threadIdx.x] = at;
}

// One thread, after the cluster barrier that publishes every chunk's partial: the cluster's
// `chunks` (sum, M2) pairs read from their CTAs' `published` (every load in flight, then the used
// ones kept) into `partial`, then the tile's statistics into `stat`.
__device__ __forceinline__ void peer_tile_stats(const float* published, double* partial,
                                                int chunks, int C, int P, float* stat) {
    float v[2 * MAX_CLUSTER];
#pragma unroll
    for (int j = 0; j < 2 * MAX_CLUSTER; ++j)
        v[j] = ld_peer_f32(published + (j & 1), (unsigned int)min(j >> 1, chunks - 1));
#pragma unroll
    for (int j = 0; j < 2 * MAX_CLUSTER; ++j) partial[j] = v[j];
    tile_stats(partial, chunks, C, P, stat);
}

// The lean kernel's exchange of the chunks' partials: each CTA pushes its (sum, M2) into slot
// `rank` of every CTA's `recv` (its own included) with st.async, which counts the bytes on the
// receiver's mbarrier; a CTA's thread 0 waits on its own mbarrier for all `chunks` pairs and
// reads them locally. Nothing reads a peer's shared memory, so no cluster barrier is needed after
// the statistics nor before exit; the one cluster barrier left (arrived at when the kernel
// starts, waited on by warp 0 before its pushes) orders each CTA's mbarrier initialisation
// before its peers' pushes. The pull this replaces (still ff_refine_apply's): a cluster barrier,
// thread 0's remote loads, a second barrier before exit. H100, twenty-second session, call 2,
// against main in one call: B=8 179.7-179.8 -> 178.2-178.4 us in process, the refines alone
// 86.7 -> 85.1; apex-host 180.6-181.1 -> 179.9-180.2, the profile (fused, unchanged) 61.8.
// ff_refine_apply keeps the pull on purpose: on this exchange (call 6, 36 checks ok) the profile,
// which runs it, went 62.4 -> 62.7-62.8 us in process and 61.8 -> 62.5 in apex-host, 256x256
// 92.8 -> 93.6-93.8 (benches/results/ff_model_fused_push_experiment_s22.patch).
struct Exchange {
    float* recv;              // [2 * MAX_CLUSTER]
    unsigned long long* bar;  // counts the pushed bytes
};

// Thread 0: the mbarrier expecting `chunks` pairs (one arrival: its own, with the byte count),
// initialised for the cluster; then every thread arrives at the cluster barrier.
__device__ __forceinline__ void exchange_begin(const Exchange& x, int chunks) {
    if (threadIdx.x == 0) {
        const unsigned bar = (unsigned)__cvta_generic_to_shared(x.bar);
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                     "r"(8 * chunks)
                     : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncwarp();
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

// Thread 0 (warp 0 waits for every CTA of the cluster to have begun): its (sum, M2) `pair` to
// every CTA's slot `rank`. The other warps arrived and never wait: PTX only asks a wait between
// two arrives of a thread, and each wait empties the SM's L1 (CCTL.IVALL) for every CTA on it.
__device__ __forceinline__ void exchange_push(const Exchange& x, int chunks, const float* pair) {
    if (threadIdx.x >= 32) return;
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    if (threadIdx.x != 0) return;
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    const unsigned slot = (unsigned)__cvta_generic_to_shared(x.recv + 2 * rank);
    const unsigned bar = (unsigned)__cvta_generic_to_shared(x.bar);
    for (int r = 0; r < chunks; ++r) {
        unsigned rslot, rbar;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rslot) : "r"(slot), "r"(r));
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbar) : "r"(bar), "r"(r));
        asm volatile(
            "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(
                rslot),
            "f"(pair[0]), "f"(pair[1]), "r"(rbar)
            : "memory");
    }
}

// Thread 0: waits until every chunk's pair has arrived, then the tile's statistics into `stat`.
__device__ __forceinline__ void exchange_stats(const Exchange& x, double* partial, int chunks,
                                               int C, int P, float* stat) {
    const unsigned bar = (unsigned)__cvta_generic_to_shared(x.bar);
    unsigned done = 0;
    while (!done) {
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0; "
            "selp.u32 %0, 1, 0, p; }"
            : "=r"(done)
            : "r"(bar)
            : "memory");
    }
#pragma unroll
    for (int j = 0; j < 2 * MAX_CLUSTER; ++j) partial[j] = x.recv[min(j, 2 * chunks - 1)];
    tile_stats(partial, chunks, C, P, stat);
}

// Two adjacent elements of storage type from f32, rounded once each; dst aligned to the pair.
__device__ __forceinline__ void store_pair(S* dst, float v0, float v1) {
#if DTYPE == 0
    *reinterpret_cast<float2*>(dst) = make_float2(v0, v1);
#else
    *reinterpret_cast<unsigned int*>(dst) =
        (unsigned int)from_f32(v0) | ((unsigned int)from_f32(v1) << 16);
#endif
}

// Two CTAs a SM (at most 128 registers, ff_refine's count): without the minimum ptxas gives bf16
// 134 registers, which leaves one CTA a SM.
extern "C" __global__ void __launch_bounds__(THREADS, 2) ff_refine_apply(
    const float* __restrict__ packed, const float* __restrict__ film,
    const float* __restrict__ weights, const int* __restrict__ ids, const S* __restrict__ boundary,
    const S* __restrict__ uncertainty, S* __restrict__ heavy, S* __restrict__ detail,
    float* __restrict__ l0map, const unsigned char* __restrict__ cover, int C, int H, int W, int t,
    int gw, int K) {
    extern __shared__ float ref_smem[];
    __shared__ float part[WARPS][3];
    __shared__ float published[2];  // this chunk's (sum, M2), read by every CTA of the cluster
    __shared__ double partial[2 * MAX_CLUSTER];
    __shared__ float stat[2];
    __shared__ float pixel_alpha[CHUNK];  // FusionGate's alpha at the chunk's pixels
    __shared__ int pixel_offset[CHUNK];   // their offsets in a [H, W] plane
    // GroupNorm's weights and biases and the tile's FiLM, [2C] each (C <= 16 * WARPS), staged
    // before the GEMM: read from global memory after it, their addresses (level_at's offsets,
    // quadratic in C) stay live through the GEMM, where bf16's three products leave no register
    // for them (ptxas spilled them).
    __shared__ float norm_w[32 * WARPS], norm_b[32 * WARPS], gamma_beta[32 * WARPS];
    const int chunk = blockIdx.x, k = blockIdx.y, b = blockIdx.z, chunks = gridDim.x;
    const int P = t * t, p0 = chunk * CHUNK, p1 = min(p0 + CHUNK, P);
    const Level l = level_at(weights, C);
    const long long tk = (long long)b * K + k;
    const float* fk = film + tk * 2 * C;
    const float* tile = packed + tk * C * P;
    stage_norm_film(l, fk, C, norm_w, norm_b, gamma_beta);  // visible after refine_operand's sync
    const S* bs = refine_operand(tile, fk, l, ref_smem, C, t, p0, p1);

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
    const bool owner = warp < C / 16;
    // The warp's rows: channel ca = 16*warp + g (accumulator entries [0], [1]) and ca + 8
    // ([2], [3]); the thread's columns: pixels p0 + 8*nt + 2q and the next.
    const int ca = warp * 16 + g;
    float acc_a[NT][4], acc_b[NT][4];
    float cnt = 0.0f, cmean = 0.0f, cm2 = 0.0f;
    if (owner) {
        refine_gemm(l, bs, C + BPAD, C, warp, acc_a, acc_b);
        acc_partial(acc_a, acc_b, p0, p1, cnt, cmean, cm2);
    }
    chunk_partial(cnt, cmean, cm2, part, published);
    cluster_arrive();

    // While the other chunks finish their GEMMs: the residual's base values (the packed tile,
    // f32; clamped, unconditional loads, see STAGE), and the gate and map offset of each pixel.
    float base[NT][4];
    if (owner) {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int p = min(p0 + nt * 8 + 2 * q + (e & 1), p1 - 1);
                base[nt][e] = tile[(long long)(ca + (e >> 1) * 8) * P + p];
            }
        }
    }
    chunk_pixels(l, ids + tk, boundary, uncertainty, b, H, W, t, gw, p0, p1, pixel_alpha,
                 pixel_offset);
    cluster_wait();
    if (threadIdx.x == 0) peer_tile_stats(published, partial, chunks, C, P, stat);
    __syncthreads();
    cluster_arrive();  // this CTA's reads of its peers' shared memory are done
    // L0 keeps its f32 result only where L1 reads it (keeps_l0; ids[tk] is cached: chunk_pixels
    // read it).
    if (l0map && !keeps_l0(cover, b, ids[tk], H, t, gw)) l0map = nullptr;

    if (owner) {
        const float mean = stat[0], inv = stat[1];
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int c = ca + half * 8;
            const float gwa = norm_w[c], gba = norm_b[c], gwb = norm_w[C + c], gbb = norm_b[C + c];
            const float gamma = gamma_beta[c], beta = gamma_beta[C + c];
            const long long plane = ((long long)b * C + c) * H * W;
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) {
                const int n = nt * 8 + 2 * q;  // the pair's first pixel in the chunk
                float o[2], d[2];
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int i = 2 * half + e;
                    const float refined = refine_value(acc_a[nt][i], acc_b[nt][i], base[nt][i],
                                                       mean, inv, gwa, gba, gwb, gbb, gamma, beta);
                    o[e] = base[nt][i] + pixel_alpha[n + e] * (refined - base[nt][i]);
                    d[e] = o[e] - base[nt][i];
                }
                if ((t & 1) == 0) {
                    // t even makes P, p0, p1 and n even: the pair is both in or both out of
                    // the chunk, on one row, at an even (pair-aligned) offset (W is even too).
                    if (p0 + n >= p1) continue;
                    const long long at = plane + pixel_offset[n];
                    store_pair(heavy + at, o[0], o[1]);
                    if (l0map) *reinterpret_cast<float2*>(l0map + at) = make_float2(o[0], o[1]);
                    if (detail) store_pair(detail + at, d[0], d[1]);
                } else {
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        if (p0 + n + e >= p1) continue;
                        const long long at = plane + pixel_offset[n + e];
                        heavy[at] = from_f32(o[e]);
                        if (l0map) l0map[at] = o[e];
                        if (detail) detail[at] = from_f32(d[e]);
                    }
                }
            }
        }
    }
    cluster_wait();
}
#endif

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
    const uint4* lo = hi + (long long)(2 * C / 16) * ksteps * 32;
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
// LEAN_RUN consecutive elements of storage type from f32, rounded once each; dst aligned to the
// run (16 bytes for 16-bit storage, 32 for f32).
__device__ __forceinline__ void store_run(S* dst, const float* v) {
#if DTYPE == 0
    reinterpret_cast<float4*>(dst)[0] = make_float4(v[0], v[1], v[2], v[3]);
    reinterpret_cast<float4*>(dst)[1] = make_float4(v[4], v[5], v[6], v[7]);
#else
    uint4 u;
    u.x = (unsigned int)from_f32(v[0]) | ((unsigned int)from_f32(v[1]) << 16);
    u.y = (unsigned int)from_f32(v[2]) | ((unsigned int)from_f32(v[3]) << 16);
    u.z = (unsigned int)from_f32(v[4]) | ((unsigned int)from_f32(v[5]) << 16);
    u.w = (unsigned int)from_f32(v[6]) | ((unsigned int)from_f32(v[7]) << 16);
    *reinterpret_cast<uint4*>(dst) = u;
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
            whole_chunk_partial(acc_a, acc, part, published, 1.0f / (float)(2 * C * CHUNK));
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
        // WHOLE: GroupNorm's affine of the channel's pair folded once, (x - mean) * inv * w + b
        // as x * sa + oa, and the residual's 1 + gamma (the same values up to rounding).
        const float sa = inv * gwa, oa = gba - mean * sa, sb = inv * gwb, ob = gbb - mean * sb;
        const float g1 = 1.0f + gamma;
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
                    const float an = fmaf(va[e], sa, oa), bn = fmaf(vb[e], sb, ob);
                    const float refined = fmaf(an, fmaxf(bn, 0.0f), fmaf(g1, x, beta));
                    o[4 * h + e] = fmaf(alpha[e], refined - x, x);
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
            store_run(heavy + at, o);
            if (l0map) {
                reinterpret_cast<float4*>(l0map + at)[0] = make_float4(o[0], o[1], o[2], o[3]);
                reinterpret_cast<float4*>(l0map + at)[1] = make_float4(o[4], o[5], o[6], o[7]);
            }
            if (detail) store_run(detail + at, d);
        } else {
#pragma unroll
            for (int e = 0; e < LEAN_RUN; ++e) {
                if (p0 + n0 + e >= p1) break;
                const long long at = plane + pixel_offset[n0 + e];
                heavy[at] = from_f32(o[e]);
                if (l0map) l0map[at] = o[e];
                if (detail) detail[at] = from_f32(d[e]);
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
        refine_apply_lean<CC, TT>(packed, film, weights, ids, boundary, uncertainty, heavy,       \
                                  detail, l0map, cover, C, H, W, t, gw, K);                       \
    }
LEAN_ENTRY(ff_refine_apply_lean, 0, 0)
LEAN_ENTRY(ff_refine_apply_lean_c128_t16, 128, 16)
LEAN_ENTRY(ff_refine_apply_lean_c128_t8, 128, 8)
#endif
