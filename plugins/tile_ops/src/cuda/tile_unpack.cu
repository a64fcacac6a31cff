// TileUnpack out of place: out = base with every active slot's tile written at its origin.
// Expects BATCH CH HEIGHT WIDTH TILE KMAX CELL VEC, plus RUN_CELLS CPB UNROLL for override.
//
// Overlaps are resolved by the key (level - min_level) << order_bits + k, highest key wins
// (override) or tiles are blended in ascending key order (blend). Subtracting a constant does not
// change the order, so the kernels compare (level, k) lexicographically: no data-dependent kernel
// argument, so a captured graph stays valid when the inputs change.
//
// Cells are CELL x CELL pixels (CELL = TILE, or TILE/2 for half-tile-shifted origins), so a tile
// covers exactly (TILE/CELL)^2 whole cells and every cell has one source: base, or one tile
// (override), or base and its tiles in key order (blend).

#define GRID_TILES ((HEIGHT / TILE) * (WIDTH / TILE))
#define NCW (WIDTH / CELL)
#define NCH (HEIGHT / CELL)
#define NCELLS (NCH * NCW)
#define SPAN (TILE / CELL)
#define Q (SPAN * SPAN)

// Whether a slot with this id and origin is active and on the cell grid (false: an empty slot).
__device__ __forceinline__ bool slot_active(int id, int oy, int ox) {
    return id >= 0 && id < (int)GRID_TILES && oy >= 0 && ox >= 0 && oy % (int)CELL == 0 && ox % (int)CELL == 0;
}

// Override, one launch. Block (b * NCH + cy, g) owns cell row cy of batch b in channels
// g*CPB .. g*CPB+CPB-1:
//   1. its threads walk the batch's KMAX slots and, for every cell of the row a slot covers,
//      atomicMax the slot's key into shared memory: the winner per cell, recomputed by every
//      channel group (KMAX small loads against CPB * CELL * WIDTH moved elements);
//   2. every vector of the row is copied from its source, base or the winner's tile.
// The key is (level with its sign bit flipped, k + 1, qy, qx): the first two order the slots
// (k + 1 > 0 tells a winner from "no tile"), the last two say which cell of the winner's tile
// this is, so step 2 needs no second look at the origins. k + 1 < 2^29 (the shape keeps
// B*K*C*t*t below 2^31), so (k + 1) << 2 fits in 32 bits.
// Vector order within one channel's row: (cell group, row iy, cell in group, vector), with
// RUN_CELLS cells per group, so a warp's stores form runs of RUN_CELLS * CELL elements and its
// tile loads read whole tile rows. Every thread loads UNROLL vectors before it stores any.
#define VPC (CELL / VEC)
#define ROW_VECS (CELL * NCW * VPC)
#define ITEMS (CPB * ROW_VECS)
#define TT (TILE * TILE)
extern "C" __global__ void __launch_bounds__(256)
tile_unpack_override(const S* __restrict__ base, const S* __restrict__ p, const int* __restrict__ ids,
                     const int* __restrict__ levels, const int* __restrict__ origins, S* __restrict__ out) {
    __shared__ unsigned long long best[NCW];
    const unsigned int b = blockIdx.x / NCH;
    const unsigned int cy = blockIdx.x % NCH;
    for (unsigned int cx = threadIdx.x; cx < NCW; cx += 256) best[cx] = 0;
    __syncthreads();
    for (unsigned int k = threadIdx.x; k < KMAX; k += 256) {
        const unsigned int slot = b * KMAX + k;
        // All four loads first: one round trip.
        const int id = ids[slot];
        const int oy = origins[2 * slot];
        const int ox = origins[2 * slot + 1];
        const int level = levels[slot];
        if (!slot_active(id, oy, ox)) continue;
        const unsigned int cy0 = (unsigned int)oy / CELL;
        if (cy < cy0 || cy >= cy0 + SPAN) continue;
        const unsigned long long key = ((unsigned long long)((unsigned int)level ^ 0x80000000u) << 32) |
                                       ((k + 1u) << 2) | ((cy - cy0) << 1);
        const unsigned int cx0 = (unsigned int)ox / CELL;
#pragma unroll
        for (unsigned int q = 0; q < SPAN; ++q)
            if (cx0 + q < NCW) atomicMax(&best[cx0 + q], key | q);
    }
    __syncthreads();
    const unsigned int c0 = blockIdx.y * CPB;
    for (unsigned int i0 = threadIdx.x; i0 < ITEMS; i0 += 256 * UNROLL) {
        Raw v[UNROLL];
        size_t o[UNROLL];
#pragma unroll
        for (unsigned int u = 0; u < UNROLL; ++u) {
            const unsigned int item = i0 + u * 256;
            const unsigned int c = c0 + item / ROW_VECS;
            o[u] = ~(size_t)0;
            if (item >= ITEMS || c >= CH) continue;
            unsigned int r = item % ROW_VECS;
            const unsigned int vx = r % VPC;
            r /= VPC;
            const unsigned int cl = r % RUN_CELLS;
            r /= RUN_CELLS;
            const unsigned int iy = r % CELL;
            const unsigned int cx = (r / CELL) * RUN_CELLS + cl;
            o[u] = (((size_t)b * CH + c) * HEIGHT + cy * CELL + iy) * WIDTH + cx * CELL + vx * VEC;
            const unsigned long long w = best[cx];
            const S* src = base + o[u];
            if (w != 0) {
                const unsigned int k = (unsigned int)(w & 0xffffffffu) >> 2;  // k + 1
                const unsigned int qy = (unsigned int)(w >> 1) & 1u, qx = (unsigned int)w & 1u;
                src = p + (((size_t)(b * KMAX + k - 1u) * CH + c) * TILE + qy * CELL + iy) * TILE + qx * CELL +
                      vx * VEC;
            }
            v[u] = load_raw(src);
        }
#pragma unroll
        for (unsigned int u = 0; u < UNROLL; ++u)
            if (o[u] != ~(size_t)0) store_raw(out + o[u], v[u]);
    }
}

// Blend, two launches after a memset of head, no full-map winner buffer:
//   1. tile_unpack_link: every (slot, cell) pair pushes itself onto its cell's list (atomicExch).
//      The lists are B * cells heads plus B*K*(TILE/CELL)^2 links: 1/(C*CELL*CELL) of the map.
//   2. tile_unpack_blend: one pass over the output, one VEC vector per thread: an uncovered cell
//      copies base, a covered one blends its tiles in key order.
extern "C" __global__ void __launch_bounds__(256)
tile_unpack_link(const int* __restrict__ ids, const int* __restrict__ origins, int* __restrict__ head,
                 int* __restrict__ next) {
    const unsigned int node = blockIdx.x * blockDim.x + threadIdx.x;
    if (node >= BATCH * KMAX * Q) return;
    const unsigned int slot = node / Q;
    const unsigned int q = node % Q;
    const int oy = origins[2 * slot];
    const int ox = origins[2 * slot + 1];
    if (!slot_active(ids[slot], oy, ox)) return;
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
tile_unpack_blend(const S* __restrict__ base, const S* __restrict__ p, const int* __restrict__ levels,
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
}
