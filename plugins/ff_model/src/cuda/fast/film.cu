// cuda/fast/film.cu: FiLM: the bidirectional scan and the two linears (ff_film_scan, ff_film_fc1,
// ff_film_out and their _x2 and _one entry points). One part of the fast path's program
// (prelude.cu lists the parts).
// ---------------------------------------------------------------------------------------------
// FiLM in three launches. One block per tile that recomputed the scan and read all of FiLM's
// weights spent 16 us per level waiting on those loads (Nsight Compute, H100); slices of the rows
// per block (then two launches) fixed B=1, but at B=8 every (tile, frame) block still read its
// slice, the same few KiB from L2 by ~1,000 blocks (L1's two launches: 39 us on an H100). Now
// the scan runs once per channel of a frame, and each linear block applies its weight slice to
// up to FILM_TOKENS of the tile's frames at once (4; eight frames a block left 80 blocks for 132
// SMs at B=8 in one launch). The host launches each run of frames (device/streams.rs: at most
// three frames since the nineteenth session) on its own, so a block now takes a run's frames.
// Where several runs overlap, a block takes two tiles of its run's frames (the _x2 entry points,
// device/sizing.rs: film_tiles): the runs together read FiLM's weights half as often (H100, B=8
// 168.3-168.5 -> 159.8-160.5 us in process, twenty-fourth session, call 2). The GEMV reads its
// row's float4s interleaved across the row's threads, so that its vector loads from shared memory
// are conflict-free (with the x2 entry points in the same build: the profile 57.7-57.8 -> 56.2).
//
// ff_film_scan: grid (B, ceil(C / WARPS)), a warp per channel. The bidirectional scan over the
// frame's K tokens (forward over 0..k, backward over K-1..k, from zero states) for every tile:
// s_j = a s_(j-1) + u_j is a linear recurrence, so the warp scans 32 tokens at a time in five
// shuffle steps (s_j += a^d s_(j-d)) and carries the chunk's last state into the next chunk
// (+ a^(lane+1) carry). The cleaned sum of both directions' outputs goes to scanned[b,k,c]
// (forward first, read back by the same warp for the backward pass).
//
// ff_film_scan_map_{s,f}_t16 / _t8 (the pack-free wgmma levels, device/fast.rs): the same scan,
// a channel's warps first taking its K tile means from the level's source map itself, as the
// pack would have (its sums, its order), so that the level launches no pack.
#define FC1_ROWS 32
#define FC2_ROWS 64

// a^n for 1 <= n <= 32 (five squarings).
__device__ __forceinline__ float pow_small(float a, int n) {
    float r = 1.0f;
#pragma unroll
    for (int bit = 0; bit < 6; ++bit) {
        if (n & (1 << bit)) r *= a;
        a *= a;
    }
    return r;
}

// The inclusive scan s_j = a s_(j-1) + u_j over the warp's lanes (token j in lane j), plus
// a^(lane+1) times the state carried in from the previous chunk.
__device__ __forceinline__ float warp_linear_scan(float u, float a, float carry) {
    const int lane = threadIdx.x & 31;
    float s = u, ad = a;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const float up = __shfl_up_sync(0xffffffffu, s, d);
        if (lane >= d) s += ad * up;
        ad *= ad;
    }
    return s + pow_small(a, lane + 1) * carry;
}

// One direction's recurrence of channel c: its coefficients from the level's scan block.
struct ScanDir {
    float a, oma, ig, sb, og, wo;
};

__device__ __forceinline__ ScanDir scan_dir(const float* p, int C, int c, bool forward) {
    const int o = forward ? 0 : 5 * C;
    return ScanDir{p[o + c],         p[o + C + c],     p[o + 2 * C + c],
                   p[o + 3 * C + c], p[o + 4 * C + c], p[(forward ? 10 : 11) * C + c]};
}

// One direction over 32-token chunks: token j = base + lane (forward) or K - 1 - (base + lane)
// (backward); out[j] = wo * og * s_j (forward), out[j] = clean(out[j] + wo * og * s_j)
// (backward, after the forward pass of the same warp). The warp's lanes all take part.
__device__ __forceinline__ void scan_direction(const float* __restrict__ tok, int ts, float* out,
                                               const ScanDir& d, int K, int C, bool forward) {
    const int lane = threadIdx.x & 31;
    float carry = 0.0f;
    for (int base = 0; base < K; base += 32) {
        const int i = base + lane, j = forward ? i : K - 1 - i;
        const bool valid = i < K;
        const float x = valid ? clean_token(tok[(long long)j * ts]) : 0.0f;
        const float s = warp_linear_scan(valid ? d.oma * (d.ig * x + d.sb) : 0.0f, d.a, carry);
        carry = __shfl_sync(0xffffffffu, s, 31);
        if (valid) {
            float* y = out + (long long)j * C;
            *y = forward ? d.wo * (d.og * s) : clean_token(*y + d.wo * (d.og * s));
        }
    }
}

// The warp's channel c: the bidirectional scan of its K tokens (tok[j * ts]) into out[j * C].
__device__ __forceinline__ void film_scan_channel(const float* tok, int ts, float* out,
                                                  const Level& l, int C, int K, int c) {
    const int lane = threadIdx.x & 31;
    const ScanDir fw = scan_dir(l.scan, C, c, true), bw = scan_dir(l.scan, C, c, false);
    if (K <= 32) {
        // One chunk: both directions at once, lane l holding token l forward and token K-1-l
        // backward; the forward output of token K-1-l comes from lane K-1-l.
        const bool valid = lane < K;
        const int mirror = valid ? K - 1 - lane : 0;
        const float xf = valid ? clean_token(tok[(long long)lane * ts]) : 0.0f;
        const float xb = valid ? clean_token(tok[(long long)mirror * ts]) : 0.0f;
        const float sf = warp_linear_scan(valid ? fw.oma * (fw.ig * xf + fw.sb) : 0.0f, fw.a, 0.0f);
        const float sb = warp_linear_scan(valid ? bw.oma * (bw.ig * xb + bw.sb) : 0.0f, bw.a, 0.0f);
        const float yf = __shfl_sync(0xffffffffu, fw.wo * (fw.og * sf), mirror);
        if (valid) out[(long long)mirror * C] = clean_token(yf + bw.wo * (bw.og * sb));
        return;
    }
    scan_direction(tok, ts, out, fw, K, C, true);
    __syncwarp();  // the forward outputs, written by other lanes, before the backward pass
    scan_direction(tok, ts, out, bw, K, C, false);
}

extern "C" __global__ void __launch_bounds__(THREADS) ff_film_scan(
    const float* __restrict__ tokens, const float* __restrict__ weights, float* __restrict__ scanned,
    int C, int K) {
    FF_TL(TL_SCAN, scanned);
    FF_AFTER_PREDECESSOR();
    const int b = blockIdx.x, c = blockIdx.y * WARPS + (threadIdx.x >> 5);
    if (c >= C) return;
    const Level l = level_at(weights, C);
    film_scan_channel(tokens + (long long)b * K * C + c, C, scanned + (long long)b * K * C + c, l,
                      C, K, c);
}

#if DTYPE == 1 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
// ff_film_scan_map_*: the wgmma refine's levels (fp16, C = 128, t = 16 or 8) take their tokens
// from the level's source map here, with no pack launch (the refine reads the map itself): grid
// (B, C / SCAN_MAP_CHANNELS). The block's K tile ids into shared memory; the WARPS /
// SCAN_MAP_CHANNELS warps of a channel split its tiles (tile k to warp k % that), each tile's
// mean being ff_pack's sum in ff_pack's order (the same tokens), TB tiles' loads in flight a
// warp; then the first warp of each channel scans. Dynamic shared memory: K ints, then
// SCAN_MAP_CHANNELS * K floats. Against a warp a channel over all its tiles (eight channels a
// block), H200, in process, two rounds (thirtieth session, call 3 of
// benches/results/device_scripts_2026-11-28_s30.sh): B=8 116.9 -> 115.2 us with four channels a
// block (two: 118.2, one: 123.5); the launch alone (Nsight Compute) at L0 9.3 -> 7.3-7.7 us.
#define SCAN_MAP_CHANNELS 4
template <typename SRC, int T>
__device__ __forceinline__ void film_scan_map(const SRC* __restrict__ src,
                                              const int* __restrict__ ids,
                                              const float* __restrict__ weights,
                                              float* __restrict__ scanned, int C, int H, int W,
                                              int gw, int K) {
    constexpr int WPC = WARPS / SCAN_MAP_CHANNELS;  // warps a channel
    static_assert(WARPS % SCAN_MAP_CHANNELS == 0, "film_scan_map's warps");
    extern __shared__ float scan_smem[];
    int* tid = reinterpret_cast<int*>(scan_smem);
    const int b = blockIdx.x, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int ch = warp / WPC, part = warp % WPC, c = blockIdx.y * SCAN_MAP_CHANNELS + ch;
    for (int i = threadIdx.x; i < K; i += THREADS) tid[i] = ids[(long long)b * K + i];
    __syncthreads();
    float* tok = scan_smem + K + ch * K;
    if (c < C) {
        constexpr int P = T * T, QUADS = P / 4, NQ = (QUADS + 31) / 32, TB = 16 / NQ;
        const SRC* plane = src + ((long long)b * C + c) * H * W;
        for (int k0 = part; k0 < K; k0 += TB * WPC) {
            float4 v[TB][NQ];
#pragma unroll
            for (int i = 0; i < TB; ++i) {
                const int id = tid[min(k0 + i * WPC, K - 1)];
                const SRC* t0 = plane + (long long)(id / gw) * T * W + (id % gw) * T;
#pragma unroll
                for (int u = 0; u < NQ; ++u) {
                    const int p = 4 * min(lane + 32 * u, QUADS - 1), py = p / T;
                    v[i][u] = load4(t0 + (long long)py * W + p - py * T);
                }
            }
#pragma unroll
            for (int i = 0; i < TB; ++i) {
                float sum = 0.0f;
#pragma unroll
                for (int u = 0; u < NQ; ++u)
                    if (lane + 32 * u < QUADS)
                        sum += (v[i][u].x + v[i][u].y) + (v[i][u].z + v[i][u].w);
                sum = warp_sum(sum);
                if (lane == 0 && k0 + i * WPC < K) tok[k0 + i * WPC] = sum / (float)P;
            }
        }
    }
    __syncthreads();
    if (c >= C || part != 0) return;
    const Level l = level_at(weights, C);
    film_scan_channel(tok, 1, scanned + (long long)b * K * C + c, l, C, K, c);
}

#define SCAN_MAP_ENTRY(NAME, SRC, TT)                                                           \
    extern "C" __global__ void __launch_bounds__(THREADS) NAME(                                 \
        const SRC* __restrict__ src, const int* __restrict__ ids,                               \
        const float* __restrict__ weights, float* __restrict__ scanned, int C, int H, int W,    \
        int gw, int K) {                                                                        \
        FF_TL(TL_SCAN_MAP, scanned);                                                            \
        FF_AFTER_PREDECESSOR();                                                                 \
        film_scan_map<SRC, TT>(src, ids, weights, scanned, C, H, W, gw, K);                     \
    }
SCAN_MAP_ENTRY(ff_film_scan_map_s_t16, S, 16)
SCAN_MAP_ENTRY(ff_film_scan_map_s_t8, S, 8)
SCAN_MAP_ENTRY(ff_film_scan_map_f_t16, float, 16)
SCAN_MAP_ENTRY(ff_film_scan_map_f_t8, float, 8)
#endif

// The vectors of a FiLM linear block: tiles k0 .. k0 + TILES - 1 (fewer at the end of K) of
// frames b0 .. b0 + frames - 1 (blockIdx.x * TILES, blockIdx.y * FRAMES, at most FRAMES frames
// of the batch's B); vector j is tile k0 + j / frames of frame b0 + j % frames. FRAMES is
// FILM_TOKENS, or 1 for a call of one frame (the _one entry points): the GEMV then carries one
// vector's sums, not FILM_TOKENS' (H200, thirty-ninth session, call 2: the profile 41.05 ->
// 39.4 us in process, 43.00 -> 41.37 in apex-host).
template <int TILES, int FRAMES>
struct FilmBlock {
    static constexpr int MAX = TILES * FRAMES;
    int k0, b0, frames, n;

    __device__ __forceinline__ FilmBlock(int K, int B) {
        k0 = blockIdx.x * TILES;
        b0 = blockIdx.y * FRAMES;
        frames = min(FRAMES, B - b0);
        n = min(TILES, K - k0) * frames;
    }

    // Vector j's offset (in vectors) in a [B][K][...] buffer.
    __device__ __forceinline__ long long at(int j, int K) const {
        const int kk = TILES == 1 ? 0 : j / frames;
        return (long long)(b0 + j - kk * frames) * K + k0 + kk;
    }
};

// The block's vectors of `src` [B][K][C] into `x` [n][C] of shared memory, with the block
// synchronised.
template <int TILES, int FRAMES>
__device__ __forceinline__ void stage_tokens(const float* __restrict__ src, float* x,
                                             const FilmBlock<TILES, FRAMES>& fb, int K, int C) {
    const int n = fb.n * C, bd = blockDim.x;
    for (int i0 = threadIdx.x; i0 < n; i0 += FRAMES * bd) {
        float v[FRAMES];
#pragma unroll
        for (int u = 0; u < FRAMES; ++u) {  // clamped, unconditional loads: all in flight
            const int i = min(i0 + u * bd, n - 1), j = i / C;
            v[u] = src[fb.at(j, K) * C + i - j * C];
        }
#pragma unroll
        for (int u = 0; u < FRAMES; ++u)
            if (i0 + u * bd < n) x[i0 + u * bd] = v[u];
    }
    __syncthreads();
}

// ff_film_fc1 (TILES 1), ff_film_fc1_x2 (2) and ff_film_fc1_one (1, FRAMES 1): grid
// (ceil(K / TILES), ceil(B / FRAMES), ceil(C / FC1_ROWS)). LayerNorm(C) of the scan's output for
// the block's vectors (FilmBlock; warp w normalises vectors w, w + WARPS, ... in place), then
// FC1_ROWS rows of FiLM's first linear (C -> C) and SiLU: hidden[b,k,:]. Shared memory: TILES *
// min(B, FRAMES) * C floats.
template <int TILES, int FRAMES>
__device__ __forceinline__ void film_fc1(const float* __restrict__ scanned,
                                         const float* __restrict__ weights,
                                         float* __restrict__ hidden, int C, int K, int B) {
    extern __shared__ float film_smem[];
    const FilmBlock<TILES, FRAMES> fb(K, B);
    const Level l = level_at(weights, C);
    const int split = THREADS / FC1_ROWS;
    GemvSlice g = gemv_begin(l.fc1, C, C, blockIdx.z * FC1_ROWS, split);
    stage_tokens(scanned, film_smem, fb, K, C);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int t = warp; t < fb.n; t += WARPS) {
        float* x = film_smem + t * C;
        float part = 0.0f;
        for (int c = lane; c < C; c += 32) part += x[c];
        const float mean = warp_sum(part) / (float)C;
        part = 0.0f;
        for (int c = lane; c < C; c += 32) part += (x[c] - mean) * (x[c] - mean);
        const float inv = rsqrtf(warp_sum(part) / (float)C + (float)NORM_EPS);
        for (int c = lane; c < C; c += 32) x[c] = (x[c] - mean) * inv * l.ln_w[c] + l.ln_b[c];
    }
    __syncthreads();
    float z[fb.MAX];
    if (gemv_finish<fb.MAX>(g, l.fc1_b, film_smem, fb.n, split, C, z)) {
#pragma unroll
        for (int t = 0; t < fb.MAX; ++t)
            if (t < fb.n) hidden[fb.at(t, K) * C + g.o] = z[t] * sigmoidf_(z[t]);
    }
}

// ff_film_out (TILES 1), ff_film_out_x2 (2) and ff_film_out_one (1, FRAMES 1): grid
// (ceil(K / TILES), ceil(B / FRAMES), ceil(2C / FC2_ROWS)). FC2_ROWS rows of FiLM's second linear
// (C -> 2C) for the block's vectors (FilmBlock): film[b,k,0..C) = tanh(gamma_raw),
// film[b,k,C..2C) = beta. Shared memory: as film_fc1's.
template <int TILES, int FRAMES>
__device__ __forceinline__ void film_out(const float* __restrict__ hidden,
                                         const float* __restrict__ weights,
                                         float* __restrict__ film, int C, int K, int B) {
    extern __shared__ float film_smem[];
    const FilmBlock<TILES, FRAMES> fb(K, B);
    const Level l = level_at(weights, C);
    const int split = THREADS / FC2_ROWS;
    GemvSlice g = gemv_begin(l.fc2, C, 2 * C, blockIdx.z * FC2_ROWS, split);
    stage_tokens(hidden, film_smem, fb, K, C);
    float z[fb.MAX];
    if (gemv_finish<fb.MAX>(g, l.fc2_b, film_smem, fb.n, split, 2 * C, z)) {
        const int o = g.o;
#pragma unroll
        for (int t = 0; t < fb.MAX; ++t)
            if (t < fb.n) film[fb.at(t, K) * 2 * C + o] = o < C ? tanhf(z[t]) : z[t];
    }
}

#define FILM_ENTRY(NAME, BODY, TILES, FRAMES, TL_KIND)                                            \
    extern "C" __global__ void __launch_bounds__(THREADS) NAME(                                   \
        const float* __restrict__ in, const float* __restrict__ weights, float* __restrict__ out, \
        int C, int K, int B) {                                                                    \
        FF_TL(TL_KIND, out);                                                                      \
        FF_AFTER_PREDECESSOR();                                                                   \
        BODY<TILES, FRAMES>(in, weights, out, C, K, B);                                           \
    }
FILM_ENTRY(ff_film_fc1, film_fc1, 1, FILM_TOKENS, TL_FC1)
FILM_ENTRY(ff_film_fc1_x2, film_fc1, 2, FILM_TOKENS, TL_FC1)
FILM_ENTRY(ff_film_fc1_one, film_fc1, 1, 1, TL_FC1)
FILM_ENTRY(ff_film_out, film_out, 1, FILM_TOKENS, TL_OUT)
FILM_ENTRY(ff_film_out_x2, film_out, 2, FILM_TOKENS, TL_OUT)
FILM_ENTRY(ff_film_out_one, film_out, 1, 1, TL_OUT)
