// cuda/fast/refine_fused.cu: the fused refine's cluster helpers and exchange, and ff_refine_apply.
// One part of the fast path's program (prelude.cu lists the parts).
// Whether the L0 level keeps tile `id`'s f32 result in l0map: only where ff_select split it
// (cover bit 1), since the L1 level reads l0map only inside its own tiles, the split tiles'
// children (at B=8, 64 of the 160 L0 tiles: 12.6 MB of writes fewer). The L0 grid: H / t rows of
// gw tiles. ff_apply (the split path) writes l0map at every tile. Where a fused kernel keeps the
// f32 result it stores no heavy: the tile's four L1 children overwrite heavy at every pixel
// (thirty-third session).
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

// Threads 0 .. N-1: FusionGate's alpha at the chunk's N pixels [p0, p1) of tile *tile_id (past
// p1: the last pixel's) and (pixel_offset not null) their offsets in a [H, W] plane, into shared
// memory.
template <int N = CHUNK>
__device__ __forceinline__ void chunk_pixels(const Level& l, const int* tile_id,
                                             const S* __restrict__ boundary,
                                             const S* __restrict__ uncertainty, int b, int H,
                                             int W, int t, int gw, int p0, int p1,
                                             float* pixel_alpha, int* pixel_offset) {
    if (threadIdx.x >= N) return;
    const int id = *tile_id, p = min(p0 + (int)threadIdx.x, p1 - 1);
    const int py = div_small(p, t, 1.0f / (float)t);
    const int at = ((id / gw) * t + py) * W + (id % gw) * t + p - py * t;
    const long long pix = (long long)b * H * W + at;
    pixel_alpha[threadIdx.x] = gate_alpha(l.gate, to_f32(boundary[pix]), to_f32(uncertainty[pix]));
    if (pixel_offset) pixel_offset[threadIdx.x] = at;
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
template <int CH = CHUNK>
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
    tile_stats<CH>(partial, chunks, C, P, stat);
}

// Two CTAs a SM (at most 128 registers, ff_refine's count): without the minimum ptxas gives bf16
// 134 registers, which leaves one CTA a SM.
extern "C" __global__ void __launch_bounds__(THREADS, 2) ff_refine_apply(
    const float* __restrict__ packed, const float* __restrict__ film,
    const float* __restrict__ weights, const int* __restrict__ ids, const S* __restrict__ boundary,
    const S* __restrict__ uncertainty, S* __restrict__ heavy, S* __restrict__ detail,
    float* __restrict__ l0map, const unsigned char* __restrict__ cover, int C, int H, int W, int t,
    int gw, int K) {
    FF_TL(TL_REFINE_OTHER, film);
    FF_AFTER_PREDECESSOR();
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
                    if (l0map)
                        *reinterpret_cast<float2*>(l0map + at) = make_float2(o[0], o[1]);
                    else
                        store_out_pair(heavy + at, o[0], o[1]);
                    if (detail) store_out_pair(detail + at, d[0], d[1]);
                } else {
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        if (p0 + n + e >= p1) continue;
                        const long long at = plane + pixel_offset[n + e];
                        if (l0map)
                            l0map[at] = o[e];
                        else
                            store_out(heavy + at, o[e]);
                        if (detail) store_out(detail + at, d[e]);
                    }
                }
            }
        }
    }
    cluster_wait();
}
#endif
