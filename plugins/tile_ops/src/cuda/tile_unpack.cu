// TileUnpack out of place: out = base with every active slot's tile written at its origin.
// Expects BATCH CH HEIGHT WIDTH TILE KMAX CELL MODE VEC (MODE 0 = override, 1 = blend).
//
// Overlaps are resolved by the key (level - min_level) << order_bits + k, highest key wins
// (override) or tiles are blended in ascending key order (blend). Subtracting a constant does not
// change the order, so the kernels compare (level, k) lexicographically: no data-dependent kernel
// argument, so a captured graph stays valid when the inputs change.
//
// Two launches after a memset, no full-map winner buffer:
//   1. tile_unpack_link: every (slot, cell) pair pushes itself onto its cell's list (atomicExch).
//      Cells are CELL x CELL pixels (CELL = TILE, or TILE/2 for half-tile-shifted origins), so a
//      tile covers exactly (TILE/CELL)^2 whole cells. The lists are B * cells heads plus
//      B*K*(TILE/CELL)^2 links: 1/(C*CELL*CELL) of the map.
//   2. tile_unpack_map: one pass over the output, one VEC vector per thread: an uncovered cell
//      copies base, a covered one takes its winner (override) or blends its tiles in key order.
// With unique on-grid ids every list has one entry, so the map pass reads each byte once.

#define GRID_TILES ((HEIGHT / TILE) * (WIDTH / TILE))
#define NCW (WIDTH / CELL)
#define NCH (HEIGHT / CELL)
#define NCELLS (NCH * NCW)
#define SPAN (TILE / CELL)
#define Q (SPAN * SPAN)

extern "C" __global__ void __launch_bounds__(256)
tile_unpack_link(const int* __restrict__ ids, const int* __restrict__ origins, int* __restrict__ head,
                 int* __restrict__ next) {
    const unsigned int node = blockIdx.x * blockDim.x + threadIdx.x;
    if (node >= BATCH * KMAX * Q) return;
    const unsigned int slot = node / Q;
    const unsigned int q = node % Q;
    const int id = ids[slot];
    if (id < 0 || id >= (int)GRID_TILES) return;
    const int oy = origins[2 * slot];
    const int ox = origins[2 * slot + 1];
    if (oy < 0 || ox < 0 || oy % (int)CELL != 0 || ox % (int)CELL != 0) return;
    const unsigned int cy = (unsigned int)oy / CELL + q / SPAN;
    const unsigned int cx = (unsigned int)ox / CELL + q % SPAN;
    if (cy >= NCH || cx >= NCW) return;  // the part of a shifted tile beyond the map is dropped
    const unsigned int b = slot / KMAX;
    next[node] = atomicExch(&head[b * NCELLS + cy * NCW + cx], (int)node + 1);
}

// (level, k) of list entry n (node + 1) as one ordered 64-bit key.
__device__ __forceinline__ long long entry_key(const int* __restrict__ levels, int n) {
    const unsigned int slot = (unsigned int)(n - 1) / Q;
    // A multiply, not a shift: levels may be negative, and shifting a negative value is UB in C++17.
    return (long long)levels[slot] * 4294967296LL + (long long)(slot % KMAX);
}

extern "C" __global__ void __launch_bounds__(256)
tile_unpack_map(const S* __restrict__ base, const S* __restrict__ p, const int* __restrict__ levels,
                const int* __restrict__ origins, const int* __restrict__ head, const int* __restrict__ next,
                S* __restrict__ out, float alpha) {
    const unsigned int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= BATCH * CH * HEIGHT * (WIDTH / VEC)) return;
    const unsigned int x = (v % (WIDTH / VEC)) * VEC;
    const unsigned int r = v / (WIDTH / VEC);
    const unsigned int y = r % HEIGHT;
    const unsigned int bc = r / HEIGHT;
    const unsigned int c = bc % CH;
    const unsigned int b = bc / CH;
    const size_t off = (size_t)v * VEC;
    const int h = head[b * NCELLS + (y / CELL) * NCW + x / CELL];
    if (h == 0) {
        store_raw(out + off, load_raw(base + off));
        return;
    }
#if MODE == 0
    int best = h;
    long long best_key = entry_key(levels, h);
    for (int n = next[h - 1]; n != 0; n = next[n - 1]) {
        const long long key = entry_key(levels, n);
        if (key > best_key) {
            best_key = key;
            best = n;
        }
    }
    const unsigned int slot = (unsigned int)(best - 1) / Q;
    const unsigned int iy = y - (unsigned int)origins[2 * slot];
    const unsigned int ix = x - (unsigned int)origins[2 * slot + 1];
    store_raw(out + off, load_raw(p + (((size_t)slot * CH + c) * TILE + iy) * TILE + ix));
#else
    float acc[VEC];
    load_f32(base + off, acc);
    // Blend in ascending key order: repeatedly take the smallest key above the last one. Lists
    // are short (the tiles covering one cell), so the quadratic walk costs little.
    long long last = -0x7fffffffffffffffLL - 1;
    for (;;) {
        int pick = 0;
        long long pick_key = 0x7fffffffffffffffLL;
        for (int n = h; n != 0; n = next[n - 1]) {
            const long long key = entry_key(levels, n);
            if (key > last && key < pick_key) {
                pick_key = key;
                pick = n;
            }
        }
        if (pick == 0) break;
        last = pick_key;
        const unsigned int slot = (unsigned int)(pick - 1) / Q;
        const unsigned int iy = y - (unsigned int)origins[2 * slot];
        const unsigned int ix = x - (unsigned int)origins[2 * slot + 1];
        float tile[VEC];
        load_f32(p + (((size_t)slot * CH + c) * TILE + iy) * TILE + ix, tile);
#pragma unroll
        for (int i = 0; i < VEC; ++i) acc[i] = fmaf(alpha, tile[i] - acc[i], acc[i]);
    }
    store_f32(out + off, acc);
#endif
}
