// TilePack: P[b,k,c,i,j] = F[b,c,y0+i,x0+j]; an empty slot (id < 0 or id >= G) is written as zeros.
// Vector v (VEC elements) of P is copied by block v / (256*NV), thread v % 256, so the grid covers
// every output element for any tile size (the original's autotuned BLOCK_PIX without a pixel-block
// axis left t >= 16 tiles partly unwritten). Each thread first loads its NV vectors (ids, then the
// NV gathers, all in flight together) and only then stores them. Consecutive threads write
// consecutive vectors of P, so stores coalesce; loads follow tile rows.
// Expects BATCH CH HEIGHT WIDTH TILE KMAX VEC NV (and optionally HINT).

#define GW (WIDTH / TILE)
#define GRID_TILES ((HEIGHT / TILE) * GW)
#define VPR (TILE / VEC)
#define NVEC (BATCH * KMAX * CH * TILE * VPR)

extern "C" __global__ void __launch_bounds__(256)
tile_pack(const S* __restrict__ f, const int* __restrict__ ids, S* __restrict__ p) {
    const unsigned int first = blockIdx.x * (256u * NV) + threadIdx.x;
    Raw val[NV];
#pragma unroll
    for (unsigned int n = 0; n < NV; ++n) {
        const unsigned int v = first + n * 256u;
        val[n] = zero_raw();
        if (v >= NVEC) continue;
        const unsigned int jv = v % VPR;
        unsigned int r = v / VPR;
        const unsigned int i = r % TILE;
        r /= TILE;
        const unsigned int c = r % CH;
        const unsigned int slot = r / CH;
        const unsigned int b = slot / KMAX;
        const int id = ids[slot];
        if (id >= 0 && id < (int)GRID_TILES) {
            const unsigned int y = ((unsigned int)id / GW) * TILE + i;
            const unsigned int x = ((unsigned int)id % GW) * TILE + jv * VEC;
            val[n] = load_raw(f + ((size_t)(b * CH + c) * HEIGHT + y) * WIDTH + x);
        }
    }
#pragma unroll
    for (unsigned int n = 0; n < NV; ++n) {
        const unsigned int v = first + n * 256u;
        if (v < NVEC) store_raw(p + (size_t)v * VEC, val[n]);
    }
}

// The same gather for rows of one vector (TILE == VEC: t = 8 in fp16/bf16), slot-major: block
// (slot group g, channel c) copies channel c of slots g*SPB .. g*SPB+SPB-1, SPB = 256 / TILE.
// Warp w reads row w of 32 consecutive slots, so the rows of neighbouring (sorted) tiles, which
// share DRAM sectors and pages, are fetched together; the rows go through shared memory so the
// stores still write each slot's TILE rows as one contiguous run. Grid: ceil(slots / SPB) * CH.
#define SPB (256u / TILE)
#define SLOTS (BATCH * KMAX)

extern "C" __global__ void __launch_bounds__(256)
tile_pack_rows(const S* __restrict__ f, const int* __restrict__ ids, S* __restrict__ p) {
    __shared__ Raw rows[TILE][SPB + 1];
    const unsigned int c = blockIdx.x % CH;
    const unsigned int s0 = (blockIdx.x / CH) * SPB;
    {
        const unsigned int sl = threadIdx.x % SPB;
        const unsigned int i = threadIdx.x / SPB;
        const unsigned int slot = s0 + sl;
        Raw val = zero_raw();
        if (slot < SLOTS) {
            const int id = ids[slot];
            if (id >= 0 && id < (int)GRID_TILES) {
                const unsigned int y = ((unsigned int)id / GW) * TILE + i;
                const unsigned int x = ((unsigned int)id % GW) * TILE;
                val = load_raw(f + ((size_t)((slot / KMAX) * CH + c) * HEIGHT + y) * WIDTH + x);
            }
        }
        rows[i][sl] = val;
    }
    __syncthreads();
    const unsigned int sl = threadIdx.x / TILE;
    const unsigned int i = threadIdx.x % TILE;
    const unsigned int slot = s0 + sl;
    if (slot < SLOTS) store_raw(p + (((size_t)slot * CH + c) * TILE + i) * VEC, rows[i][sl]);
}
