// Fused pack -> op -> unpack ("stage 1"): out = F, except that every pixel x inside a selected
// tile becomes (vs*x + vb) * max(gs*x + gb, 0). The op reads F, not out, so a duplicated id writes
// the same value twice: duplicates are harmless. Empty slots (id < 0 or >= G) are skipped.
// Expects BATCH CH HEIGHT WIDTH TILE KMAX VEC CPB UNROLL.
//
// One launch. Block (b * GH + ty, g) owns tile row ty of batch b in channels g*CPB .. g*CPB+CPB-1:
//   1. its threads mark, in shared memory, which of the row's GW tiles some active slot selects
//      (the batch row's KMAX ids, recomputed by every channel group);
//   2. it streams the row band (TILE full map rows per channel, contiguous) in map order, applying
//      the op inside marked tiles. Every thread loads UNROLL vectors before it stores any.

#define GW (WIDTH / TILE)
#define GH (HEIGHT / TILE)
#define GRID_TILES (GH * GW)
#define BAND_VECS (TILE * WIDTH / VEC)
#define ITEMS (CPB * BAND_VECS)

extern "C" __global__ void __launch_bounds__(256)
fused_stage(const S* __restrict__ f, const int* __restrict__ ids, S* __restrict__ out, float vs, float vb,
            float gs, float gb) {
    __shared__ unsigned char covered[GW];
    const unsigned int b = blockIdx.x / GH;
    const unsigned int ty = blockIdx.x % GH;
    for (unsigned int tx = threadIdx.x; tx < GW; tx += 256) covered[tx] = 0;
    __syncthreads();
    for (unsigned int k = threadIdx.x; k < KMAX; k += 256) {
        const int id = ids[b * KMAX + k];
        if (id >= 0 && id < (int)GRID_TILES && (unsigned int)id / GW == ty) covered[(unsigned int)id % GW] = 1;
    }
    __syncthreads();
    const unsigned int c0 = blockIdx.y * CPB;
    for (unsigned int i0 = threadIdx.x; i0 < ITEMS; i0 += 256 * UNROLL) {
        Raw v[UNROLL];
        size_t o[UNROLL];
#pragma unroll
        for (unsigned int u = 0; u < UNROLL; ++u) {
            const unsigned int item = i0 + u * 256;
            const unsigned int c = c0 + item / BAND_VECS;
            o[u] = ~(size_t)0;
            if (item >= ITEMS || c >= CH) continue;
            o[u] = (((size_t)b * CH + c) * HEIGHT + ty * TILE) * WIDTH + (size_t)(item % BAND_VECS) * VEC;
            v[u] = load_raw(f + o[u]);
        }
#pragma unroll
        for (unsigned int u = 0; u < UNROLL; ++u) {
            if (o[u] == ~(size_t)0) continue;
            if (covered[(unsigned int)(o[u] % WIDTH) / TILE]) {
                float val[VEC];
                unpack_f32(v[u], val);
#pragma unroll
                for (int i = 0; i < VEC; ++i) val[i] = fmaf(vs, val[i], vb) * fmaxf(fmaf(gs, val[i], gb), 0.0f);
                v[u] = pack_f32(val);
            }
            store_raw(out + o[u], v[u]);
        }
    }
}
