// The verification kit every tile op shares (`device_check.rs`): inputs drawn on the device from
// the seeded stream, the ops' f64 references written from their definitions, and the comparison
// of a case's outputs with them.
//
// The reference kernels are plain thread-per-element code with every shape a kernel argument: they
// share nothing with the kernels under test (no vectors, tables, lists or `#define`d shapes), so
// one compile per storage type serves every case. Expects DTYPE and VEC (common.cuh; VEC = 1).
// Every f64 sum and product is spelled `__dadd_rn` / `__dmul_rn`, so no FMA contraction makes a
// value differ from the CPU reference, which Rust never contracts.

typedef unsigned long long u64;

#define GAMMA 0x9E3779B97F4A7C15ull
#define INF_F64 __longlong_as_double(0x7ff0000000000000ll)

#define GRID_STRIDE(i, n) \
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (u64)gridDim.x * blockDim.x)

__device__ __forceinline__ u64 mix64(u64 z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Storage value to f64, exactly (fp16 and bf16 widen to f32 without rounding).
__device__ __forceinline__ double widen(S v) { return (double)to_f32(v); }

// Draws the first n values of the SplitMix64 stream whose state is `state` (apex_tile_math's
// `Rng`): draw i is mix(state + (i + 1) * GAMMA), its 53 high bits over 2^53 give u in [0, 1),
// lo + span * u is rounded once to f32 and stored (selection.rs: `draw_value`).
extern "C" __global__ void draw_uniform(S* __restrict__ out, u64 n, u64 state, double lo,
                                        double span) {
    GRID_STRIDE(i, n) {
        const u64 z = mix64(state + (i + 1) * GAMMA);
        const double u = (double)(z >> 11) * (1.0 / 9007199254740992.0);
        out[i] = from_f32(__double2float_rn(__dadd_rn(lo, __dmul_rn(span, u))));
    }
}

// dst = src, widened to f64 (the base every scatter reference starts from).
extern "C" __global__ void ref_widen(const S* __restrict__ src, double* __restrict__ dst, u64 n) {
    GRID_STRIDE(i, n) dst[i] = widen(src[i]);
}

// Element e of a [slots, ch, t, t] tile tensor: its slot, channel, row and column.
struct TileIndex {
    u64 slot;
    unsigned int c, i, j;
};

__device__ __forceinline__ TileIndex tile_index(u64 e, unsigned int ch, unsigned int t) {
    const u64 block = (u64)ch * t * t;
    const unsigned int r = (unsigned int)(e % block);
    return TileIndex{e / block, r / (t * t), (r / t) % t, r % t};
}

// TilePack: ref[slot, c, i, j] = F[b, c, y0 + i, x0 + j] with (y0, x0) = origin[slot] and b the
// slot's batch row; zero for an empty slot (y0 < 0).
extern "C" __global__ void ref_pack(const S* __restrict__ f, const int* __restrict__ origin,
                                    double* __restrict__ ref, u64 slots, unsigned int kmax,
                                    unsigned int ch, unsigned int h, unsigned int w, unsigned int t) {
    GRID_STRIDE(e, slots * ch * t * t) {
        const TileIndex x = tile_index(e, ch, t);
        const int y0 = origin[2 * x.slot], x0 = origin[2 * x.slot + 1];
        const u64 b = x.slot / kmax;
        ref[e] = y0 < 0 ? 0.0 : widen(f[((b * ch + x.c) * h + y0 + x.i) * w + x0 + x.j]);
    }
}

// The fused stage inside the selected tiles, over ref = F widened: x -> (vs*x + vb) * max(gs*x +
// gb, 0). A duplicated slot writes the same value again (the op reads F, not its output).
extern "C" __global__ void ref_fused_tiles(const S* __restrict__ f, const int* __restrict__ origin,
                                           double* __restrict__ ref, u64 slots, unsigned int kmax,
                                           unsigned int ch, unsigned int h, unsigned int w,
                                           unsigned int t, double vs, double vb, double gs,
                                           double gb) {
    GRID_STRIDE(e, slots * ch * t * t) {
        const TileIndex x = tile_index(e, ch, t);
        const int y0 = origin[2 * x.slot], x0 = origin[2 * x.slot + 1];
        if (y0 < 0) continue;
        const u64 b = x.slot / kmax;
        const u64 o = ((b * ch + x.c) * h + y0 + x.i) * w + x0 + x.j;
        const double v = widen(f[o]);
        ref[o] = __dmul_rn(__dadd_rn(__dmul_rn(vs, v), vb), fmax(__dadd_rn(__dmul_rn(gs, v), gb), 0.0));
    }
}

// TileUnpack, one rank of every batch row over ref (base widened, then the ranks in key order):
// window[5 * b ..] = (slot, y0, x0, rows, cols) of row b's window of this rank, slot < 0 where row b
// has fewer. Override writes the tile value; blend (1 - alpha) * ref + alpha * value.
extern "C" __global__ void ref_unpack_rank(const S* __restrict__ p, const int* __restrict__ window,
                                           double* __restrict__ ref, unsigned int batch,
                                           unsigned int ch, unsigned int h, unsigned int w,
                                           unsigned int t, double alpha, int blend) {
    GRID_STRIDE(e, (u64)batch * ch * t * t) {
        const TileIndex x = tile_index(e, ch, t);  // x.slot is the batch row here
        const int* win = window + 5 * x.slot;
        const int slot = win[0];
        if (slot < 0 || x.i >= (unsigned int)win[3] || x.j >= (unsigned int)win[4]) continue;
        const u64 o = ((x.slot * ch + x.c) * h + win[1] + x.i) * w + win[2] + x.j;
        const double v = widen(p[(((u64)slot * ch + x.c) * t + x.i) * t + x.j]);
        ref[o] = blend ? __dadd_rn(__dmul_rn(1.0 - alpha, ref[o]), __dmul_rn(alpha, v)) : v;
    }
}

// FusionGate's proxy sanitising: nan -> 0, +inf -> 1, -inf -> 0.
__device__ __forceinline__ double clean_proxy(double v) {
    if (isnan(v)) return 0.0;
    if (isinf(v)) return v > 0.0 ? 1.0 : 0.0;
    return v;
}

// FusionGate's alpha per pixel: sigmoid(wb * boundary + wu * uncertainty + bias).
extern "C" __global__ void ref_gate_alpha(const S* __restrict__ boundary,
                                          const S* __restrict__ uncertainty,
                                          double* __restrict__ alpha, u64 pixels, double wb,
                                          double wu, double bias) {
    GRID_STRIDE(q, pixels) {
        const double z = __dadd_rn(__dadd_rn(__dmul_rn(wb, clean_proxy(widen(boundary[q]))),
                                             __dmul_rn(wu, clean_proxy(widen(uncertainty[q])))),
                                   bias);
        alpha[q] = 1.0 / (1.0 + exp(-z));
    }
}

// FusionGate's fused map: base + alpha * (heavy - base), alpha of the element's pixel.
extern "C" __global__ void ref_gate_fuse(const S* __restrict__ base, const S* __restrict__ heavy,
                                         const double* __restrict__ alpha, double* __restrict__ ref,
                                         u64 n, u64 hw, unsigned int ch) {
    GRID_STRIDE(e, n) {
        const u64 b = e / hw / ch;
        const double a = alpha[b * hw + e % hw];
        const double x = widen(base[e]), v = widen(heavy[e]);
        ref[e] = __dadd_rn(x, __dmul_rn(a, __dsub_rn(v, x)));
    }
}

// One output against its f64 reference, as `apex_plugin_api::compare_outputs` defines the figures:
// each block writes its squared-error sum, largest absolute and relative errors (part_f[3 * block
// ..]) and its mismatch and non-finite counts (part_u[2 * block ..]); the host merges the blocks.
// The grid is at most COMPARE_BLOCKS blocks of 256 threads.
extern "C" __global__ void __launch_bounds__(256)
compare(const S* __restrict__ out, const double* __restrict__ ref, u64 n, double atol, double rtol,
        double* __restrict__ part_f, u64* __restrict__ part_u) {
    double sum_sq = 0.0, max_abs = 0.0, max_rel = 0.0;
    u64 mismatches = 0, non_finite = 0;
    GRID_STRIDE(i, n) {
        const double o = widen(out[i]), r = ref[i];
        if (isnan(o) && isnan(r)) continue;
        if (!isfinite(o) && o != r) {
            ++non_finite;
            ++mismatches;
            max_abs = max_rel = sum_sq = INF_F64;
            continue;
        }
        const double err = fabs(__dsub_rn(o, r));
        sum_sq = __dadd_rn(sum_sq, __dmul_rn(err, err));
        max_abs = fmax(max_abs, err);
        if (r != 0.0) {
            max_rel = fmax(max_rel, err / fabs(r));
        } else if (err > 0.0) {
            max_rel = INF_F64;
        }
        if (err > __dadd_rn(atol, __dmul_rn(rtol, fabs(r)))) ++mismatches;
    }
    __shared__ double sf[3][256];
    __shared__ u64 su[2][256];
    const unsigned int k = threadIdx.x;
    sf[0][k] = sum_sq;
    sf[1][k] = max_abs;
    sf[2][k] = max_rel;
    su[0][k] = mismatches;
    su[1][k] = non_finite;
    __syncthreads();
    for (unsigned int half = 128; half > 0; half >>= 1) {
        if (k < half) {
            sf[0][k] = __dadd_rn(sf[0][k], sf[0][k + half]);
            sf[1][k] = fmax(sf[1][k], sf[1][k + half]);
            sf[2][k] = fmax(sf[2][k], sf[2][k + half]);
            su[0][k] += su[0][k + half];
            su[1][k] += su[1][k + half];
        }
        __syncthreads();
    }
    if (k == 0) {
        part_f[3 * blockIdx.x] = sf[0][0];
        part_f[3 * blockIdx.x + 1] = sf[1][0];
        part_f[3 * blockIdx.x + 2] = sf[2][0];
        part_u[2 * blockIdx.x] = su[0][0];
        part_u[2 * blockIdx.x + 1] = su[1][0];
    }
}
