// LayerNorm over rows of COLS: y = (x - mean) / sqrt(var + eps) * w + b, var biased (PyTorch),
// fp32 statistics, one rounding per store. One launch. Expects the RowPlan defines (ROWS COLS
// VEC CV SLICE_V TPR NV SPLIT BLOCK RPB GRID).
//
// Each group of TPR threads owns one row slice of SLICE_V vectors and holds it in registers (NV
// raw vectors per thread, loaded before any is used), so x is read from DRAM once: mean, then
// the sum of squared deviations from the mean (two passes over registers, no cancellation),
// then the stores. Short rows pack BLOCK/TPR rows per block (RPB), long rows use SPLIT blocks per
// row: each block publishes its slice's (mean, M2) and waits for its siblings (work tickets, see
// common.cuh), then every block merges the SPLIT pairs in slice order (Chan et al.), so all
// blocks of a row use bit-identical statistics.
//
// Without split rows, blocks loop over work items (RPB rows each). With PREFETCH, each thread loads
// its next item's slice into a second register set before the current item's statistics, so the
// block keeps DRAM reads in flight through its reductions and stores.
//
// Scratch (SPLIT > 1): words [W_ARRAYS, +ROWS) arrival counters, then ROWS*SPLIT (mean, M2) pairs.

#define P_ARRIVED W_ARRAYS
#define P_STATS (W_ARRAYS + ROWS)

// Elements in slice k of a row.
__device__ __forceinline__ float slice_elems(unsigned int k) {
    const unsigned int lo = k * SLICE_V;
    const unsigned int hi = lo + SLICE_V < CV ? lo + SLICE_V : CV;
    return hi > lo ? (float)((hi - lo) * VEC) : 0.0f;
}

// The slice of work item `work` that this thread holds (zeros past the row's end, and for a
// work item past the grid: row >= ROWS).
__device__ __forceinline__ void load_slice(const S* __restrict__ x, unsigned int work,
                                           unsigned int group, unsigned int lane, Raw (&r)[NV]) {
    const unsigned int row = (work / SPLIT) * RPB + group;
    const unsigned int v0 = (work % SPLIT) * SLICE_V;
    const unsigned int v_end = v0 + SLICE_V < CV ? v0 + SLICE_V : CV;
    const size_t base = (size_t)row * COLS;
#pragma unroll
    for (int j = 0; j < NV; ++j) {
        const unsigned int vi = v0 + j * TPR + lane;
        r[j] = (row < ROWS && vi < v_end) ? load_raw(x + base + (size_t)vi * VEC) : fill_raw((S)0);
    }
}

// Normalizes work item `work` from the slice in `r` and stores it. Every thread of the block
// calls it (the reductions synchronize the block).
__device__ __forceinline__ void normalize_slice(const Raw (&r)[NV], unsigned int work,
                                                unsigned int group, unsigned int lane,
                                                const S* __restrict__ w, const S* __restrict__ b,
                                                S* __restrict__ y, unsigned int* __restrict__ scratch,
                                                float eps, double* red, float* s_stat) {
    const unsigned int tid = threadIdx.x;
    const unsigned int row = (work / SPLIT) * RPB + group;
    const unsigned int rank = work % SPLIT;
    const bool row_ok = row < ROWS;
    const size_t base = (size_t)row * COLS;
    const unsigned int v0 = rank * SLICE_V;
    const unsigned int v_end = v0 + SLICE_V < CV ? v0 + SLICE_V : CV;
    // Padding vectors hold zeros: they add nothing to the sum and are skipped below.
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < NV; ++j) {
        float f[VEC];
        unpack_f32(r[j], f);
#pragma unroll
        for (int i = 0; i < VEC; ++i) sum += f[i];
    }
    sum = group_reduce<TPR>(sum, Sum(), red);
    const float n_slice = slice_elems(rank);
    float mean = n_slice > 0.0f ? sum / n_slice : 0.0f;
    float m2 = 0.0f;
#pragma unroll
    for (int j = 0; j < NV; ++j) {
        const unsigned int vi = v0 + j * TPR + lane;
        if (vi < v_end) {
            float f[VEC];
            unpack_f32(r[j], f);
#pragma unroll
            for (int i = 0; i < VEC; ++i) {
                const float d = f[i] - mean;
                m2 = fmaf(d, d, m2);
            }
        }
    }
    m2 = group_reduce<TPR>(m2, Sum(), red);
#if SPLIT > 1
    {
        unsigned int* arrived = scratch + P_ARRIVED;
        float* stats = reinterpret_cast<float*>(scratch + P_STATS);
        if (tid == 0) {
            stats[((size_t)row * SPLIT + rank) * 2] = mean;
            stats[((size_t)row * SPLIT + rank) * 2 + 1] = m2;
            __threadfence();
            atomicAdd(arrived + row, 1u);
            wait_at_least(arrived + row, SPLIT);
            float n_a = 0.0f, mean_a = 0.0f, m2_a = 0.0f;
            for (unsigned int k = 0; k < SPLIT; ++k) {
                const float n_b = slice_elems(k);
                if (n_b == 0.0f) continue;
                const float mean_b = __ldcg(stats + ((size_t)row * SPLIT + k) * 2);
                const float m2_b = __ldcg(stats + ((size_t)row * SPLIT + k) * 2 + 1);
                const float n = n_a + n_b;
                const float delta = mean_b - mean_a;
                mean_a += delta * (n_b / n);
                m2_a += m2_b + delta * delta * (n_a * (n_b / n));
                n_a = n;
            }
            s_stat[0] = mean_a;
            s_stat[1] = m2_a;
        }
        __syncthreads();
        mean = s_stat[0];
        m2 = s_stat[1];
    }
#else
    (void)tid;
    (void)scratch;
    (void)s_stat;
#endif
    const float rstd = 1.0f / sqrtf(m2 / (float)COLS + eps);
#pragma unroll
    for (int j = 0; j < NV; ++j) {
        const unsigned int vi = v0 + j * TPR + lane;
        if (row_ok && vi < v_end) {
            float f[VEC], wv[VEC], bv[VEC];
            unpack_f32(r[j], f);
            load_f32(w + (size_t)vi * VEC, wv);
            load_f32(b + (size_t)vi * VEC, bv);
#pragma unroll
            for (int i = 0; i < VEC; ++i) f[i] = fmaf((f[i] - mean) * rstd, wv[i], bv[i]);
            store_f32(y + base + (size_t)vi * VEC, f);
        }
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
layer_norm(const S* __restrict__ x, const S* __restrict__ w, const S* __restrict__ b, S* __restrict__ y,
           unsigned int* __restrict__ scratch, float eps) {
    dependent_launch_start();
    __shared__ double red[32];
    __shared__ unsigned int s_ticket, s_flag;
    __shared__ float s_stat[2];
    const unsigned int tid = threadIdx.x;
    const unsigned int group = tid / TPR, lane = tid % TPR;
    Raw r[NV];
#if SPLIT > 1
    const unsigned int work = take_ticket(scratch, &s_ticket);
    load_slice(x, work, group, lane, r);
    normalize_slice(r, work, group, lane, w, b, y, scratch, eps, red, s_stat);
    if (finished_last(scratch, &s_flag)) {
        for (unsigned int i = tid; i < ROWS; i += BLOCK) scratch[P_ARRIVED + i] = 0u;
        if (tid == 0) {
            scratch[W_TICKET] = 0u;
            scratch[W_FINISH] = 0u;
        }
    }
#else
    (void)s_ticket;
    (void)s_flag;
    // GRID work items of RPB rows, dealt round robin to the blocks launched (setup launches at
    // most what the device holds at once, one wave, unless the schedule is a block per item).
    unsigned int work = blockIdx.x;
    load_slice(x, work, group, lane, r);
    for (; work < GRID; work += gridDim.x) {
#if PREFETCH
        Raw next[NV];
        load_slice(x, work + gridDim.x, group, lane, next);
        normalize_slice(r, work, group, lane, w, b, y, scratch, eps, red, s_stat);
#pragma unroll
        for (int j = 0; j < NV; ++j) r[j] = next[j];
#else
        normalize_slice(r, work, group, lane, w, b, y, scratch, eps, red, s_stat);
        load_slice(x, work + gridDim.x, group, lane, r);
#endif
    }
#endif
}
