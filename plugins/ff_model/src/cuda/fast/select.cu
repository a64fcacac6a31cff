// cuda/fast/select.cu: both selection stages on the device (ff_select). One part of the fast path's
// program (prelude.cu lists the parts).
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
    FF_TL_COUNT_CALL();
    FF_TL(TL_SELECT, ids_l0);
    FF_AFTER_PREDECESSOR();
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
