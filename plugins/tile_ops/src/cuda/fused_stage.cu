// Fused pack -> op -> unpack ("stage 1"): out = F, except that every pixel x inside a selected
// tile becomes (vs*x + vb) * max(gs*x + gb, 0). The op reads F, not out, so a duplicated id writes
// the same value twice: duplicates are harmless. Empty slots (id < 0 or >= G) are skipped.
// Expects BATCH CH HEIGHT WIDTH TILE KMAX VEC.
//   fused_mark: cover[b, id] = 1 for every active slot (after a memset of cover).
//   fused_map:  one pass over the map, one VEC vector per thread (never straddles a tile).

#define GW (WIDTH / TILE)
#define GRID_TILES ((HEIGHT / TILE) * GW)

extern "C" __global__ void __launch_bounds__(256)
fused_mark(const int* __restrict__ ids, int* __restrict__ cover) {
    const unsigned int slot = blockIdx.x * blockDim.x + threadIdx.x;
    if (slot >= BATCH * KMAX) return;
    const int id = ids[slot];
    if (id < 0 || id >= (int)GRID_TILES) return;
    cover[(slot / KMAX) * GRID_TILES + (unsigned int)id] = 1;
}

extern "C" __global__ void __launch_bounds__(256)
fused_map(const S* __restrict__ f, const int* __restrict__ cover, S* __restrict__ out, float vs, float vb,
          float gs, float gb) {
    const unsigned int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= BATCH * CH * HEIGHT * (WIDTH / VEC)) return;
    const unsigned int x = (v % (WIDTH / VEC)) * VEC;
    const unsigned int r = v / (WIDTH / VEC);
    const unsigned int y = r % HEIGHT;
    const unsigned int b = r / HEIGHT / CH;
    const size_t off = (size_t)v * VEC;
    if (!cover[b * GRID_TILES + (y / TILE) * GW + x / TILE]) {
        store_raw(out + off, load_raw(f + off));
        return;
    }
    float val[VEC];
    load_f32(f + off, val);
#pragma unroll
    for (int i = 0; i < VEC; ++i) val[i] = fmaf(vs, val[i], vb) * fmaxf(fmaf(gs, val[i], gb), 0.0f);
    store_f32(out + off, val);
}
