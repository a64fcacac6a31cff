// TilePack: P[b,k,c,i,j] = F[b,c,y0+i,x0+j]; an empty slot (id < 0 or id >= G) is written as zeros.
// One thread per VEC-element vector of P, so the grid covers every output element for any tile
// size (the original's autotuned BLOCK_PIX without a pixel-block axis left t >= 16 tiles partly
// unwritten). Expects BATCH CH HEIGHT WIDTH TILE KMAX VEC.

#define GW (WIDTH / TILE)
#define GRID_TILES ((HEIGHT / TILE) * GW)
#define VPR (TILE / VEC)

extern "C" __global__ void __launch_bounds__(256)
tile_pack(const S* __restrict__ f, const int* __restrict__ ids, S* __restrict__ p) {
    const unsigned int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= BATCH * KMAX * CH * TILE * VPR) return;
    const unsigned int jv = v % VPR;
    unsigned int r = v / VPR;
    const unsigned int i = r % TILE;
    r /= TILE;
    const unsigned int c = r % CH;
    const unsigned int slot = r / CH;
    const unsigned int b = slot / KMAX;
    const int id = ids[slot];
    Raw val;
    if (id >= 0 && id < (int)GRID_TILES) {
        const unsigned int y = ((unsigned int)id / GW) * TILE + i;
        const unsigned int x = ((unsigned int)id % GW) * TILE + jv * VEC;
        val = load_raw(f + ((size_t)(b * CH + c) * HEIGHT + y) * WIDTH + x);
    } else {
        val = zero_raw();
    }
    store_raw(p + (size_t)v * VEC, val);
}
