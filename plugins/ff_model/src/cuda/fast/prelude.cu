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
//                  FILM_TOKENS frames of one tile, or of two: ff_film_fc1_x2; one frame of one
//                  tile in a call of one frame: ff_film_fc1_one)
//   ff_film_out    FiLM's second linear: gamma (tanh), beta per tile (likewise, _x2, _one)
//   ff_refine      modulate, depthwise 3x3, pointwise GEMM (tensor cores) per 32-pixel chunk:
//                  the pre-norm output [B,K,2C,t*t] (f32) and the chunk's GroupNorm partials
//   ff_apply       GroupNorm (the tile's partials combined), a*relu(b) + residual, FusionGate,
//                  and the override unpack into heavy (L0 also keeps its f32 result in `l0map`
//                  for the L1 level; L1 writes detail = heavy - heavy_l0)
//   ff_refine_apply (sm_90) both in one launch, a tile's chunks as one thread-block cluster that
//                  exchanges their GroupNorm partials in distributed shared memory; the host uses
//                  it on each level whose tile fits one cluster (t*t <= 256, C <= 128), and
//                  ff_refine + ff_apply on the others (device/refine.rs); at L0 it keeps the f32
//                  result only at the tiles ff_select split, the only ones L1 reads (keeps_l0),
//                  and writes no heavy there (their L1 children overwrite every pixel of it)
//   ff_refine_apply_lean (sm_90) the same in at most 64 registers (four CTAs a SM; bf16, fp32:
//                  80, three): the GEMM's output waits for the statistics in shared memory, not in
//                  registers, and the finish stores runs of consecutive pixels; it is also
//                  compiled for the profile's two level shapes (ff_refine_apply_lean_c128_t16,
//                  _t8: LEAN_ENTRY); Refine::Auto (device/refine.rs) runs those copies on such a
//                  level at every batch in bf16 and fp32, and the general kernel where its
//                  extra CTAs a SM save a wave of clusters
//   ff_refine_wg_c128_t16, _t8 (fp16, sm_90a) the same refine in 64-pixel CTAs, the GEMM on
//                  warpgroup MMAs (wgmma), the finish from the accumulators; Refine::Auto runs
//                  it on the profile's two level shapes at every batch
//
// The program is plugin-api's storage header (the storage type S, to_f32, from_f32), then
// cuda/fast/*.cu concatenated in this order (program.rs: FAST_SOURCE): prelude.cu (this header,
// the shared formulas, the level's weights, block reductions), base.cu, select.cu, pack.cu,
// film.cu, refine_block.cu (the GEMM, the operand, the GroupNorm partials and statistics),
// refine_split.cu, refine_fused.cu, refine_lean.cu and refine_wg.cu.
// On sm_90 the module is compiled for sm_90a (program.rs: `target`), the wgmma refine's
// architecture; every other kernel's PTX is the same as for sm_90.
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

#ifdef FF_TIMELINE
// A diagnostic, off unless compiled in (APEX_NVRTC_DEFINES="FF_TIMELINE FF_TIMELINE_CALL=N"):
// the timeline of one call as the GPU ran it, which no profiler here gives (no Nsight Systems on
// the GPU machine; Nsight Compute serialises the launches). Thread 0 of every CTA of call N
// (ff_select's first block counts the calls, from 1) records its kernel (FfTlKernel), a key
// that tells the runs of frames apart (bits 8..31 of a pointer the launch writes), its CTA and
// SM, and the globaltimer at its entry and exit, into device memory: no printf while the call
// runs. ff_select of call N + 1 prints the records as `FTL kernel key cta sm start end` lines,
// which benches/probes/ff_timeline.py summarises. Thread 0's exit stands for its CTA's;
// ff_select's other blocks read the count racing its first block, so its row may miss a block.
// A traced B=8 call ran ~2 us slower than an untraced one (H200, 114.9 against 112.7 us,
// thirty-first session).
#define FF_TL_MAX 16384
enum FfTlKernel {
    TL_SELECT, TL_BASE, TL_PACK, TL_SCAN, TL_SCAN_MAP, TL_FC1, TL_OUT, TL_REFINE_T16,
    TL_REFINE_T8, TL_REFINE_OTHER
};
__device__ unsigned int ff_tl_call;
__device__ unsigned int ff_tl_n;
__device__ unsigned long long ff_tl_rec[FF_TL_MAX][3];
__device__ __forceinline__ unsigned long long ff_tl_now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
struct FfTimeline {
    unsigned long long head, start;
    bool on;
    __device__ FfTimeline(int kernel, const void* key) {
        on = threadIdx.x == 0 && *(volatile unsigned*)&ff_tl_call == FF_TIMELINE_CALL;
        if (!on) return;
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        const unsigned cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
        head = ((unsigned long long)kernel << 56) |
               ((((unsigned long long)key >> 8) & 0xFFFFFFull) << 32) |
               ((unsigned long long)(cta & 0xFFFFu) << 16) | (smid & 0xFFFFu);
        start = ff_tl_now();
    }
    __device__ ~FfTimeline() {
        if (!on) return;
        const unsigned long long end = ff_tl_now();
        const unsigned i = atomicAdd(&ff_tl_n, 1u);
        if (i < FF_TL_MAX) {
            ff_tl_rec[i][0] = head;
            ff_tl_rec[i][1] = start;
            ff_tl_rec[i][2] = end;
        }
    }
};
// ff_select's first thread: counts the call, and at call N + 1 prints call N's records (the
// head word decoded as FfTimeline packs it).
__device__ __forceinline__ void ff_tl_count_call() {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const unsigned call = atomicAdd(&ff_tl_call, 1u) + 1;
    if (call != FF_TIMELINE_CALL + 1) return;
    const unsigned n = min(ff_tl_n, (unsigned)FF_TL_MAX);
    for (unsigned i = 0; i < n; ++i) {
        const unsigned long long h = ff_tl_rec[i][0];
        printf("FTL %u %u %u %u %llu %llu\n", (unsigned)(h >> 56),
               (unsigned)((h >> 32) & 0xFFFFFFu), (unsigned)((h >> 16) & 0xFFFFu),
               (unsigned)(h & 0xFFFFu), ff_tl_rec[i][1], ff_tl_rec[i][2]);
    }
}
#define FF_TL(kernel, key) const FfTimeline ff_tl_scope(kernel, key)
#define FF_TL_COUNT_CALL() ff_tl_count_call()
#else
#define FF_TL(kernel, key)
#define FF_TL_COUNT_CALL()
#endif

// Programmatic dependent launch (device/fast.rs: `Level::launch_ex`): on sm_90 and later a
// level's launches carry the programmatic-serialisation attribute, so the GPU launches a kernel as
// the last CTA of the stream's previous kernel exits, not after that grid has completed and
// flushed. Every kernel waits here, before its first global memory access, until its predecessor
// has completed with its writes visible (after a plain launch the wait returns at once). No kernel
// triggers its dependents early: CTAs let in at a predecessor's start sat on the SMs it needed
// (the profile 44.65 -> 46.1 us; at the CTAs' exit 42.6, B=8 111.1 -> 104.4; H200, in process,
// thirty-fourth session, call 1).
#if __CUDA_ARCH__ >= 900
#define FF_AFTER_PREDECESSOR() asm volatile("griddepcontrol.wait;" ::: "memory")
#else
#define FF_AFTER_PREDECESSOR()
#endif

// S, to_f32 and from_f32: plugin-api's storage header, which program.rs puts first.

// The stores of the call's outputs, heavy and detail, in every refine: evict-first
// (st.global.cs). Nothing in the call reads them again, so they should not push the levels'
// tiles, FiLM vectors and weights out of L2; l0map, which L1 reads, keeps plain stores. H200,
// apex-host, two rounds: the wgmma refine's (fp16) took the profile 46.27-46.30 -> 42.99-43.01 us
// and B=8 107.46-107.50 -> 106.69-106.72 (thirty-sixth session, call 4 of
// benches/results/device_scripts_2026-11-29_s36.sh); the lean, fused and split refines' (bf16
// and fp32) the profile 53.01-53.05 -> 50.01-50.04 in bf16 and 60.54-60.61 -> 57.06-57.17 in
// fp32, fp16 unchanged (thirty-seventh session, that script's next1).
__device__ __forceinline__ void store_out(S* dst, float v) { __stcs(dst, from_f32(v)); }

#if DTYPE != 0
// Two 16-bit elements from f32, rounded once each, packed in one word (v0 in the low half).
__device__ __forceinline__ unsigned int pack_pair(float v0, float v1) {
    return (unsigned int)from_f32(v0) | ((unsigned int)from_f32(v1) << 16);
}
#endif

// Two adjacent outputs, rounded once each; dst aligned to the pair.
__device__ __forceinline__ void store_out_pair(S* dst, float v0, float v1) {
#if DTYPE == 0
    __stcs(reinterpret_cast<float2*>(dst), make_float2(v0, v1));
#else
    __stcs(reinterpret_cast<unsigned int*>(dst), pack_pair(v0, v1));
#endif
}

#if DTYPE != 0
// Four 16-bit elements packed in a uint2 (the first in the low half of x), as f32.
__device__ __forceinline__ float4 unpack4(uint2 v) {
    return make_float4(to_f32((S)(v.x & 0xffffu)), to_f32((S)(v.x >> 16)),
                       to_f32((S)(v.y & 0xffffu)), to_f32((S)(v.y >> 16)));
}
#endif

// Four consecutive elements from a 16-byte (f32) or 8-byte (16-bit storage) aligned address,
// as f32 (pack.cu's load4_f32 is the evict-first variant).
__device__ __forceinline__ float4 load4(const float* p) {
    return *reinterpret_cast<const float4*>(p);
}
#if DTYPE != 0
__device__ __forceinline__ float4 load4(const S* p) {
    return unpack4(*reinterpret_cast<const uint2*>(p));
}
#endif

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
