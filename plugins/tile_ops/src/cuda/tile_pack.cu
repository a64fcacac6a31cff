// TilePack: P[b,k,c,i,j] = F[b,c,y0+i,x0+j]; an empty slot (id < 0 or id >= G) is written as zeros.
// Expects BATCH CH HEIGHT WIDTH TILE KMAX VEC NV RUN_SLOTS (and optionally HINT).
//
// Vector order (fastest first): vector in the tile row, slot within a run of RUN_SLOTS slots, tile
// row i, channel, run. So a warp copies row i of RUN_SLOTS consecutive slots side by side: where
// the selection is sorted, their tiles are neighbours in F and the loads are one run of
// RUN_SLOTS * TILE elements; the stores are RUN_SLOTS runs of whole tile rows. RUN_SLOTS = 1 is the
// plain slot-major order (stores contiguous, loads one tile row at a time).
// Block n copies vectors n*256*NV + threadIdx.x + m*256 (m < NV): each thread first loads its NV
// vectors (ids, then the NV gathers, all in flight together) and only then stores them. The grid
// covers every vector of P for any tile size (the original's autotuned BLOCK_PIX without a
// pixel-block axis left t >= 16 tiles partly unwritten); slots past the last are skipped.

#define GW (WIDTH / TILE)
#define GRID_TILES ((HEIGHT / TILE) * GW)
#define VPR (TILE / VEC)
#define SLOTS (BATCH * KMAX)
#define RUNS ((SLOTS + RUN_SLOTS - 1) / RUN_SLOTS)
#define NVEC (RUNS * RUN_SLOTS * CH * TILE * VPR)

extern "C" __global__ void __launch_bounds__(256)
tile_pack(const S* __restrict__ f, const int* __restrict__ ids, S* __restrict__ p) {
    const unsigned int first = blockIdx.x * (256u * NV) + threadIdx.x;
    Raw val[NV];
    size_t dst[NV];
#pragma unroll
    for (unsigned int n = 0; n < NV; ++n) {
        const unsigned int v = first + n * 256u;
        val[n] = zero_raw();
        dst[n] = ~(size_t)0;
        if (v >= NVEC) continue;
        const unsigned int jv = v % VPR;
        unsigned int r = v / VPR;
        const unsigned int sl = r % RUN_SLOTS;
        r /= RUN_SLOTS;
        const unsigned int i = r % TILE;
        r /= TILE;
        const unsigned int c = r % CH;
        const unsigned int slot = (r / CH) * RUN_SLOTS + sl;
        if (slot >= SLOTS) continue;
        dst[n] = (((size_t)slot * CH + c) * TILE + i) * TILE + jv * VEC;
        const int id = ids[slot];
        if (id >= 0 && id < (int)GRID_TILES) {
            const unsigned int y = ((unsigned int)id / GW) * TILE + i;
            const unsigned int x = ((unsigned int)id % GW) * TILE + jv * VEC;
            val[n] = load_raw(f + ((size_t)((slot / KMAX) * CH + c) * HEIGHT + y) * WIDTH + x);
        }
    }
#pragma unroll
    for (unsigned int n = 0; n < NV; ++n)
        if (dst[n] != ~(size_t)0) store_raw(p + dst[n], val[n]);
}
