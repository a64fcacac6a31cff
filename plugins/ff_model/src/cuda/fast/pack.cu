// cuda/fast/pack.cu: the selected tiles packed as f32 with their token means (ff_pack_s,
// ff_pack_f). One part of the fast path's program (prelude.cu lists the parts).
// ---------------------------------------------------------------------------------------------
// ff_pack_s / ff_pack_f: grid (K, B, ceil(C / WARPS)), a warp per channel. packed[b,k,c,:] = the
// tile's pixels of src[b,c,:,:] as f32; tokens[b,k,c] = their mean. Where t and W are multiples
// of 4 (every tile row a run of whole 4-pixel groups, 8- or 16-byte aligned) each lane moves four
// pixels a load and a float4 a store, all its loads in flight at once; elsewhere a pixel a load.
// The loads are evict-first (ld.global.cs): nothing else in the frame reads a selected tile's
// source (ff_base skips L0's, the refines read the packed copy, and l0map's pixels feed only the
// L1 pack). H100, apex-host against plain loads in one call: B=8 199.0-199.1 us against
// 200.8-202.6, every other case within 0.4 us (twentieth session, call 3). The refines' staging
// loads of the packed tile, evict-first or without L1 allocation, cost B=8 ~5 us (same call).

template <typename T>
__device__ __forceinline__ float load_f32(const T* p);
template <>
__device__ __forceinline__ float load_f32<float>(const float* p) { return __ldcs(p); }
#if DTYPE != 0
template <>
__device__ __forceinline__ float load_f32<S>(const S* p) { return to_f32(__ldcs(p)); }
#endif

// Four consecutive elements from a 4-element-aligned address, as f32.
template <typename T>
__device__ __forceinline__ float4 load4_f32(const T* p);
template <>
__device__ __forceinline__ float4 load4_f32<float>(const float* p) {
    return __ldcs(reinterpret_cast<const float4*>(p));
}
#if DTYPE != 0
template <>
__device__ __forceinline__ float4 load4_f32<S>(const S* p) {
    return unpack4(__ldcs(reinterpret_cast<const uint2*>(p)));
}
#endif

// 4-pixel loads a lane keeps in flight in ff_pack (a 16x16 tile is 64 of them: two a lane).
#define PACK_STAGE 2

template <typename T>
__device__ void ff_pack(const T* __restrict__ src, const int* __restrict__ ids,
                        float* __restrict__ packed, float* __restrict__ tokens, int C, int H, int W,
                        int t, int gw, int K) {
    const int k = blockIdx.x, b = blockIdx.y;
    const int lane = threadIdx.x & 31, c = blockIdx.z * WARPS + (threadIdx.x >> 5);
    if (c >= C) return;
    const int id = ids[b * K + k];
    const int y0 = (id / gw) * t, x0 = (id % gw) * t, P = t * t;
    const float inv_t = 1.0f / (float)t;
    const T* plane = src + ((long long)b * C + c) * H * W;
    float* out = packed + (((long long)b * K + k) * C + c) * P;
    float sum = 0.0f;
    if ((t & 3) == 0 && (W & 3) == 0) {
        const int quads = P / 4;
        for (int q0 = lane; q0 < quads; q0 += 32 * PACK_STAGE) {
            float4 v[PACK_STAGE];
#pragma unroll
            for (int u = 0; u < PACK_STAGE; ++u) {  // clamped, unconditional loads: all in flight
                const int p = 4 * min(q0 + 32 * u, quads - 1), py = div_small(p, t, inv_t);
                v[u] = load4_f32<T>(plane + (long long)(y0 + py) * W + x0 + p - py * t);
            }
#pragma unroll
            for (int u = 0; u < PACK_STAGE; ++u) {
                const int q = q0 + 32 * u;
                if (q < quads) {
                    reinterpret_cast<float4*>(out)[q] = v[u];
                    sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
                }
            }
        }
    } else {
        for (int p0 = lane; p0 < P; p0 += 32 * STAGE) {
            float v[STAGE];
#pragma unroll
            for (int u = 0; u < STAGE; ++u) {  // clamped, unconditional loads: all in flight
                const int p = min(p0 + 32 * u, P - 1);
                const int py = div_small(p, t, inv_t);
                v[u] = load_f32<T>(plane + (long long)(y0 + py) * W + x0 + p - py * t);
            }
#pragma unroll
            for (int u = 0; u < STAGE; ++u) {
                const int p = p0 + 32 * u;
                if (p < P) {
                    out[p] = v[u];
                    sum += v[u];
                }
            }
        }
    }
    sum = warp_sum(sum);
    if (lane == 0) tokens[((long long)b * K + k) * C + c] = sum / (float)P;
}

extern "C" __global__ void __launch_bounds__(THREADS) ff_pack_s(
    const S* __restrict__ src, const int* __restrict__ ids, float* __restrict__ packed,
    float* __restrict__ tokens, int C, int H, int W, int t, int gw, int K) {
    FF_TL(TL_PACK, tokens);
    FF_AFTER_PREDECESSOR();
    ff_pack<S>(src, ids, packed, tokens, C, H, W, t, gw, K);
}

extern "C" __global__ void __launch_bounds__(THREADS) ff_pack_f(
    const float* __restrict__ src, const int* __restrict__ ids, float* __restrict__ packed,
    float* __restrict__ tokens, int C, int H, int W, int t, int gw, int K) {
    FF_TL(TL_PACK, tokens);
    FF_AFTER_PREDECESSOR();
    ff_pack<float>(src, ids, packed, tokens, C, H, W, t, gw, K);
}

#define GEMV_LOADS 8
// Frames of one tile index a FiLM linear block takes at most (its run's frames, up to this).
#define FILM_TOKENS 4
// A slice of y_t = w x_t + bias for nt <= NV vectors x_t (w row-major [n_out][n_in] in global
// memory; x [nt][n_in] in shared memory; both 16-byte aligned, n_in a multiple of 4): the rows
// [row0, row0 + blockDim/split), each shared by `split` adjacent threads (a power of two <= 32).
// Thread s of a row's group reads the row's float4s s, s + split, ... (interleaved: the group's
// lanes read adjacent float4s of each vector, so a quarter-warp's shared loads are
// conflict-free), uses each loaded weight for every vector, and the group adds its partials with
// shuffles. gemv_begin issues the thread's first GEMV_LOADS weight loads (all of them at
// C = 128), so that they are in flight while the block stages and normalises its vectors;
// gemv_finish then gives z[t] row o's value for x_t on the group's first thread (s == 0; the
// return value), nothing past n_out. nt is the same for the whole block.
struct GemvSlice {
    const float4* row;
    int quads, o, oc, s;
    float4 v[GEMV_LOADS];
};

__device__ __forceinline__ GemvSlice gemv_begin(const float* __restrict__ w, int n_in, int n_out,
                                                int row0, int split) {
    GemvSlice g;
    g.quads = n_in / 4;
    g.s = threadIdx.x % split;
    g.o = row0 + threadIdx.x / split;
    g.oc = min(g.o, n_out - 1);
    g.row = reinterpret_cast<const float4*>(w + (long long)g.oc * n_in);
#pragma unroll
    for (int u = 0; u < GEMV_LOADS; ++u) g.v[u] = g.row[min(g.s + u * split, g.quads - 1)];
    return g;
}

template <int NV>
__device__ __forceinline__ bool gemv_finish(GemvSlice& g, const float* __restrict__ bias,
                                            const float* x, int nt, int split, int n_out,
                                            float* z) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const int quads = g.quads, step = GEMV_LOADS * split;
#pragma unroll
    for (int t = 0; t < NV; ++t) z[t] = 0.0f;
    for (int j = g.s; j < quads; j += step) {
        if (j != g.s) {
#pragma unroll
            for (int u = 0; u < GEMV_LOADS; ++u) g.v[u] = g.row[min(j + u * split, quads - 1)];
        }
#pragma unroll
        for (int u = 0; u < GEMV_LOADS; ++u) {
            const int jj = j + u * split;
            if (jj >= quads) break;
#pragma unroll
            for (int t = 0; t < NV; ++t) {
                if (t >= nt) break;
                const float4 xv = x4[t * quads + jj];
                z[t] += g.v[u].x * xv.x + g.v[u].y * xv.y + g.v[u].z * xv.z + g.v[u].w * xv.w;
            }
        }
    }
#pragma unroll
    for (int t = 0; t < NV; ++t) {
        if (t >= nt) break;
        for (int m = split / 2; m > 0; m >>= 1) z[t] += __shfl_xor_sync(0xffffffffu, z[t], m);
        z[t] += bias[g.oc];
    }
    return g.s == 0 && g.o < n_out;
}
