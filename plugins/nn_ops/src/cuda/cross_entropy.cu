// Cross-entropy over ROWS rows of COLS logits with int64 targets, mean over the rows whose
// target is a class (0 <= t < COLS; -100 and anything else outside is ignored, and zero such rows
// give NaN, as PyTorch's mean does). With GRAD, the same pass also writes the gradient of that
// mean with respect to the logits: (softmax - onehot) / n_valid on counted rows, 0 on ignored
// rows. fp32 math, log2-domain exponentials (ex2). One launch.
// Expects the RowPlan defines (ROWS COLS VEC CV SLICE_V TPR NV SPLIT BLOCK RPB GRID MIN_BLOCKS),
// GRAD, UNROLL, and for GRAD=1 COUNTERS, RESIDENT and SMEM (with SMEM=1: CHUNK_V and CHUNKS).
//
// Forward (GRAD=0): a streaming plan. Each group of TPR threads walks its row UNROLL vectors at a
// time with an online softmax (max and rescaled sum per chunk, one exponential per element),
// keeping nothing: the logits are read once.
//
// Forward + gradient (GRAD=1) needs n_valid, a count over *all* targets, before any block can
// write: the first COUNTERS work tickets count a share of the targets each and publish it
// (W_NVALID, W_COUNTED); every block computes its rows' statistics first and only then waits for
// the count, so the wait is hidden. Three plans:
//   RESIDENT=1: the slice stays in registers (NV raw vectors per thread) between the statistics
//     and the gradient, so the logits are read once. Rows longer than one block (SPLIT > 1)
//     exchange their slices' (max, sum) like LayerNorm's split rows.
//   RESIDENT=0: a streaming plan's statistics, then a second walk over the slice that re-reads
//     the logits and writes the gradient. The slice was read a moment before by the same block
//     and is at most 64 KiB (longer rows are split over blocks that exchange (max, sum) as
//     above), so the second read comes from L2: DRAM still sees one read and one write, and the
//     kernel keeps the streaming plan's occupancy instead of 64 registers of row per thread.
//   SMEM=1 (sm_90): the reread plan's walks over a copy of the block's data in shared memory
//     (dynamic, CHUNKS * CHUNK_V 16-byte vectors at most): its row slice, or its RPB whole rows,
//     which are consecutive in memory when a row fits one block. Right after its ticket one
//     thread starts CHUNKS TMA bulk copies (cp.async.bulk, 16 KiB each), each completing its own
//     mbarrier; a thread waits for a copy before its first vector in it, so the statistics start
//     on the first copy while the others land. The logits are read from DRAM once and never from
//     L2 again, and no registers hold the row: shared memory sets the occupancy (MIN_BLOCKS:
//     three 512-thread blocks per H100 SM with 64 KiB slices). Each thread walks its vectors in
//     the reread plan's chunks with the same arithmetic, so where both plans split a row alike
//     (64 KiB slices, a row of a power-of-two number of them) they compute the same bits.
//
// The loss: each work item publishes the sum and the count of its rows' losses in its 64-bit slot
// (`work`, so the order is fixed; partial_publish, common.cuh); one block collects the slots,
// sums them in f64, writes sum / count and resets every counter: work item 0's block, after its
// own rows, in the forward pass; with GRAD the block that finishes last (W_FINISH), whose
// fences order every block's reads of the counters before the resets.
//
// Scratch words: [W_ARRAYS, +2 GRID) the GRID partial slots, then (SPLIT > 1) ROWS arrival
// counters and ROWS*SPLIT (max, sum) pairs.

#define P_SLOTS W_ARRAYS
#define P_ARRIVED (W_ARRAYS + 2 * GRID)
#define P_STATS (W_ARRAYS + 2 * GRID + ROWS)

__device__ __forceinline__ bool is_class(long long t) { return t >= 0 && t < (long long)COLS; }

#if GRAD && SMEM && defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "SMEM=1 fills shared memory with TMA bulk copies (sm_90 and later); older devices get the reread plan"
#endif

// Merges (m_b, s_b) into (m, s): s is a sum of e^(x - m).
__device__ __forceinline__ void merge_stats(float& m, float& s, float m_b, float s_b) {
    if (m_b == NEG_INF) return;
    if (m_b > m) {
        s = (m == NEG_INF ? 0.0f : s * ex2((m - m_b) * LOG2E)) + s_b;
        m = m_b;
    } else {
        s += s_b * ex2((m_b - m) * LOG2E);
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
cross_entropy(const S* __restrict__ logits, const long long* __restrict__ targets, S* __restrict__ grad,
              float* __restrict__ loss, unsigned int* __restrict__ scratch) {
    dependent_launch_start();
    __shared__ double red[32];
    __shared__ unsigned int s_ticket, s_flag, s_nvalid;
    __shared__ float s_stat[2];
    const unsigned int tid = threadIdx.x;
    const unsigned int group = tid / TPR, lane = tid % TPR;
#if GRAD && SMEM
    extern __shared__ Raw s_data[];
    __shared__ unsigned long long s_bar[CHUNKS];
    if (tid == 0) {
        for (unsigned int c = 0; c < CHUNKS; ++c) barrier_init(&s_bar[c]);
        // The initialized barriers must be visible to the copies (the async proxy); the ticket's
        // __syncthreads makes them visible to the other threads.
        bulk_fence();
    }
#endif
#if GRAD
    const unsigned int work = take_ticket(scratch, &s_ticket);
#else
    const unsigned int work = blockIdx.x;
#endif
    const unsigned int row = (work / SPLIT) * RPB + group;
    const unsigned int rank = work % SPLIT;
    const bool row_ok = row < ROWS;
    const size_t base = (size_t)row * COLS;
    const unsigned int v0 = rank * SLICE_V;
    const unsigned int v_end = v0 + SLICE_V < CV ? v0 + SLICE_V : CV;
#if GRAD && SMEM
    // The block's data: this row's slice (SPLIT > 1, one row per block), or rows [first, first +
    // RPB) cut at ROWS, consecutive in memory; group g's slice starts at s_data[g * SLICE_V].
    // Started before the target count below, so the copies overlap it.
    if (tid == 0) {
        const unsigned int first = (work / SPLIT) * RPB;
        const unsigned int held =
            SPLIT > 1 ? (v_end > v0 ? v_end - v0 : 0u) : (ROWS - first < RPB ? ROWS - first : RPB) * CV;
        const Raw* src = reinterpret_cast<const Raw*>(logits) + (size_t)first * CV + v0;
        for (unsigned int c = 0; c * CHUNK_V < held; ++c) {
            const unsigned int n = held - c * CHUNK_V < CHUNK_V ? held - c * CHUNK_V : CHUNK_V;
            bulk_load(s_data + c * CHUNK_V, src + c * CHUNK_V, n * 16u, &s_bar[c]);
        }
    }
#endif
#if GRAD
    if (work < COUNTERS) {
        // This block counts the targets of rows [lo, hi) and publishes the count.
        const unsigned int per = (ROWS + COUNTERS - 1) / COUNTERS;
        const unsigned int lo = work * per;
        const unsigned int hi = lo + per < ROWS ? lo + per : ROWS;
        unsigned int c = 0;
        for (unsigned int i = lo + tid; i < hi; i += BLOCK) c += is_class(targets[i]) ? 1u : 0u;
        c = group_reduce<BLOCK>(c, Sum(), red);
        if (tid == 0) {
            atomicAdd(scratch + W_NVALID, c);
            __threadfence();
            atomicAdd(scratch + W_COUNTED, 1u);
        }
    }
#endif
    const long long t = row_ok ? targets[row] : -1;
    const bool counted = row_ok && is_class(t);

    // Statistics of this thread's elements: m = max, s = sum e^(x - m). Padding is -inf.
    float m = NEG_INF, s = 0.0f;
#if GRAD && RESIDENT
    Raw r[NV];
#pragma unroll
    for (int j = 0; j < NV; ++j) {
        const unsigned int vi = v0 + j * TPR + lane;
        r[j] = (row_ok && vi < v_end) ? load_raw(logits + base + (size_t)vi * VEC) : fill_raw(s_neg_inf());
    }
#pragma unroll
    for (int j = 0; j < NV; ++j) {
        float f[VEC];
        unpack_f32(r[j], f);
#pragma unroll
        for (int i = 0; i < VEC; ++i) m = fmaxf(m, f[i]);
    }
    if (m != NEG_INF) {
        const float ml = m * LOG2E;
#pragma unroll
        for (int j = 0; j < NV; ++j) {
            float f[VEC];
            unpack_f32(r[j], f);
#pragma unroll
            for (int i = 0; i < VEC; ++i) s += ex2(fmaf(f[i], LOG2E, -ml));
        }
    }
#elif GRAD && SMEM
    // Vector k of this thread's slice (k < v_end - v0) is s_data[group * SLICE_V + k] once its
    // copy has landed; a thread's k only grow, so `landed` counts the copies it has waited for.
    // The same chunks of UNROLL vectors as the streaming walk below, so the same sums; each
    // vector is read from shared memory for the max and again for the sum instead of held in
    // registers (the plan's occupancy leaves 32 to 48 registers per thread), and vectors past
    // the slice are skipped where the walk pads with -inf (no effect on a max or a sum).
    unsigned int landed = 0;
    for (unsigned int j0 = 0; j0 < NV; j0 += UNROLL) {
        float cm = NEG_INF;
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const unsigned int k = (j0 + u) * TPR + lane;
            if (row_ok && v0 + k < v_end) {
                const unsigned int i = group * SLICE_V + k;
                while (landed * CHUNK_V <= i) barrier_wait(&s_bar[landed++], 0);
                float f[VEC];
                unpack_f32(shared_vec(s_data + i), f);
#pragma unroll
                for (int e = 0; e < VEC; ++e) cm = fmaxf(cm, f[e]);
            }
        }
        if (cm > m) {
            s = m == NEG_INF ? 0.0f : s * ex2((m - cm) * LOG2E);
            m = cm;
        }
        if (m != NEG_INF) {
            const float ml = m * LOG2E;
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const unsigned int k = (j0 + u) * TPR + lane;
                if (row_ok && v0 + k < v_end) {
                    float f[VEC];
                    unpack_f32(shared_vec(s_data + group * SLICE_V + k), f);
#pragma unroll
                    for (int e = 0; e < VEC; ++e) s += ex2(fmaf(f[e], LOG2E, -ml));
                }
            }
        }
    }
#else
    for (unsigned int j0 = 0; j0 < NV; j0 += UNROLL) {
        Raw r[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const unsigned int vi = v0 + (j0 + u) * TPR + lane;
            r[u] = (row_ok && vi < v_end) ? load_raw(logits + base + (size_t)vi * VEC) : fill_raw(s_neg_inf());
        }
        float cm = NEG_INF;
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            float f[VEC];
            unpack_f32(r[u], f);
#pragma unroll
            for (int i = 0; i < VEC; ++i) cm = fmaxf(cm, f[i]);
        }
        if (cm > m) {
            s = m == NEG_INF ? 0.0f : s * ex2((m - cm) * LOG2E);
            m = cm;
        }
        if (m != NEG_INF) {
            const float ml = m * LOG2E;
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                float f[VEC];
                unpack_f32(r[u], f);
#pragma unroll
                for (int i = 0; i < VEC; ++i) s += ex2(fmaf(f[i], LOG2E, -ml));
            }
        }
    }
#endif
    // The group's (max, sum): max first, then every thread rescales its sum to it.
    const float gm = group_reduce<TPR>(m, Max(), red);
    s = (m == NEG_INF) ? 0.0f : s * ex2((m - gm) * LOG2E);
    float gs = group_reduce<TPR>(s, Sum(), red);
    m = gm;
#if SPLIT > 1
    {
        unsigned int* arrived = scratch + P_ARRIVED;
        float* stats = reinterpret_cast<float*>(scratch + P_STATS);
        if (tid == 0) {
            stats[((size_t)row * SPLIT + rank) * 2] = m;
            stats[((size_t)row * SPLIT + rank) * 2 + 1] = gs;
            __threadfence();
            atomicAdd(arrived + row, 1u);
            wait_at_least(arrived + row, SPLIT);
            float mt = NEG_INF, st = 0.0f;
            for (unsigned int k = 0; k < SPLIT; ++k)
                merge_stats(mt, st, __ldcg(stats + ((size_t)row * SPLIT + k) * 2),
                            __ldcg(stats + ((size_t)row * SPLIT + k) * 2 + 1));
            s_stat[0] = mt;
            s_stat[1] = st;
        }
        __syncthreads();
        m = s_stat[0];
        gs = s_stat[1];
    }
#endif
    // Natural-log LSE of the whole row, identical in every thread and block of the row.
    const float lse = m + LN2 * log2f(gs);
    float row_loss = 0.0f;
    if (counted && rank == 0 && lane == 0) row_loss = lse - to_f32(logits[base + (size_t)t]);
    const unsigned int row_count = (counted && rank == 0 && lane == 0) ? 1u : 0u;

#if GRAD
    if (tid == 0) {
        wait_at_least(scratch + W_COUNTED, COUNTERS);
        s_nvalid = ld_volatile(scratch + W_NVALID);
    }
    __syncthreads();
    const float inv_n = 1.0f / (float)s_nvalid;
    // The gradient of one vector of the row, written in place of its logits in f.
    auto grad_of = [&](unsigned int vi, float(&f)[VEC]) {
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const float p = ex2((f[i] - lse) * LOG2E);
            float g = counted ? p * inv_n : 0.0f;
            if (counted && (long long)(vi * VEC + i) == t) g = fmaf(p, inv_n, -inv_n);
            f[i] = g;
        }
    };
#if RESIDENT
#pragma unroll
    for (int j = 0; j < NV; ++j) {
        const unsigned int vi = v0 + j * TPR + lane;
        if (row_ok && vi < v_end) {
            float f[VEC];
            unpack_f32(r[j], f);
            grad_of(vi, f);
            store_f32(grad + base + (size_t)vi * VEC, f);
        }
    }
#elif SMEM
    // Every vector this thread reads here it read (and waited for) in the statistics.
    for (unsigned int j = 0; j < NV; ++j) {
        const unsigned int k = j * TPR + lane;
        if (row_ok && v0 + k < v_end) {
            float f[VEC];
            unpack_f32(shared_vec(s_data + group * SLICE_V + k), f);
            grad_of(v0 + k, f);
            store_f32(grad + base + (size_t)(v0 + k) * VEC, f);
        }
    }
#else
    for (unsigned int j0 = 0; j0 < NV; j0 += UNROLL) {
        Raw r2[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const unsigned int vi = v0 + (j0 + u) * TPR + lane;
            r2[u] = (row_ok && vi < v_end) ? load_raw(logits + base + (size_t)vi * VEC) : fill_raw((S)0);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const unsigned int vi = v0 + (j0 + u) * TPR + lane;
            if (row_ok && vi < v_end) {
                float f[VEC];
                unpack_f32(r2[u], f);
                grad_of(vi, f);
                store_f32(grad + base + (size_t)vi * VEC, f);
            }
        }
    }
#endif
#endif
    // The work item's loss sum and count, in a fixed tree over the block.
    const float block_loss = group_reduce<BLOCK>(row_loss, Sum(), red);
    const unsigned int block_count = group_reduce<BLOCK>(row_count, Sum(), red);
    unsigned long long* slots = reinterpret_cast<unsigned long long*>(scratch + P_SLOTS);
    if (tid == 0) partial_publish(slots + work, block_loss, block_count);
#if GRAD
    // The block that finishes last collects (it finds every slot set): over the gradient pass's
    // many waves (32,768 blocks at bf16 vocab 262,144, 1.8 ms) block 0 spinning from its own
    // rows' end cost 9-11 % at vocab 131,072 and 262,144 (H100, 2026-11-26).
    const bool collects = finished_last(scratch, &s_flag);
#else
    const bool collects = work == 0;
#endif
    if (collects) {
        double sum = 0.0;
        unsigned int count = 0;
        partial_collect_sum<GRID, GRAD ? 4 : 1>(slots, sum, count);
        // The count first: in the other order ptxas spilled 8 bytes of this cold path at the
        // shared-memory plan's 40 registers per thread (the results do not depend on it).
        count = group_reduce<BLOCK>(count, Sum(), red);
        sum = group_reduce<BLOCK>(sum, Sum(), red);
#if SPLIT > 1
        for (unsigned int i = tid; i < ROWS; i += BLOCK) scratch[P_ARRIVED + i] = 0u;
#endif
        if (tid == 0) {
            loss[0] = (float)(sum / (double)count);
            scratch[W_TICKET] = 0u;
            scratch[W_FINISH] = 0u;
            scratch[W_COUNTED] = 0u;
            scratch[W_NVALID] = 0u;
        }
    }
}
