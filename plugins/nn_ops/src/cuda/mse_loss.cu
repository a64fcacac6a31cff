// MSE loss: sum((a - b)^2) over N elements, divided by N when MEAN, written as one f32. One
// launch: GRID blocks stride over the vectors (UNROLL 16-byte loads of each input in flight per
// thread), each block publishes its fp32 partial in its slot (partial_publish, common.cuh), and
// block 0, after its own share, collects the GRID partials in a fixed order in f64 and writes
// the loss. Deterministic: the same inputs give the same bits on the same device.
// Expects the FlatPlan defines (N VEC NVEC TAIL UNROLL BLOCK GRID), MEAN (0: sum, 1: mean) and
// MIN_BLOCKS (the grid's blocks per SM, or 0). MIN_BLOCKS in the launch bounds lets ptxas keep
// all 2 x UNROLL loads of a step in flight: without it ptxas aims at 2,048 threads an SM (32
// registers) and issues the second half of a step's loads only once the first half has landed
// and been used (it reuses their registers). The default launch (ops/mse_loss.rs,
// `tuning::Launch::DEFAULT`) is bounded.
//
// Scratch: GRID 64-bit partial slots from word W_ARRAYS.

#if MIN_BLOCKS > 0
#define MSE_LAUNCH_BOUNDS __launch_bounds__(BLOCK, MIN_BLOCKS)
#else
#define MSE_LAUNCH_BOUNDS __launch_bounds__(BLOCK)
#endif

extern "C" __global__ void MSE_LAUNCH_BOUNDS
mse_loss(const S* __restrict__ a, const S* __restrict__ b, float* __restrict__ loss,
         unsigned int* __restrict__ scratch) {
    dependent_launch_start();
    __shared__ double red[32];
    unsigned long long* slots = reinterpret_cast<unsigned long long*>(scratch + W_ARRAYS);
    float acc = 0.0f;
    const size_t step = (size_t)GRID * BLOCK * UNROLL;
    for (size_t v0 = (size_t)blockIdx.x * BLOCK * UNROLL + threadIdx.x; v0 < NVEC; v0 += step) {
        Raw ra[UNROLL], rb[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const size_t vi = v0 + (size_t)u * BLOCK;
            const bool ok = vi < NVEC;
            ra[u] = ok ? load_raw(a + vi * VEC) : fill_raw((S)0);
            rb[u] = ok ? load_raw(b + vi * VEC) : fill_raw((S)0);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            float fa[VEC], fb[VEC];
            unpack_f32(ra[u], fa);
            unpack_f32(rb[u], fb);
#pragma unroll
            for (int i = 0; i < VEC; ++i) {
                const float d = fa[i] - fb[i];
                acc = fmaf(d, d, acc);
            }
        }
    }
    if (TAIL > 0 && blockIdx.x == 0 && threadIdx.x < TAIL) {
        const size_t i = (size_t)NVEC * VEC + threadIdx.x;
        const float d = to_f32(a[i]) - to_f32(b[i]);
        acc = fmaf(d, d, acc);
    }
    acc = group_reduce<BLOCK>(acc, Sum(), red);
    if (threadIdx.x == 0) partial_publish(slots + blockIdx.x, acc, 0u);
    if (blockIdx.x == 0) {
        double s = 0.0;
        unsigned int unused_count = 0u;
        partial_collect_sum<GRID, 1>(slots, s, unused_count);
        s = group_reduce<BLOCK>(s, Sum(), red);
        if (threadIdx.x == 0) loss[0] = (float)(MEAN ? s / (double)N : s);
    }
}
