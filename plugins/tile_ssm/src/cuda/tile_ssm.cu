// TileSSM scan (spec/apex-x-kernels.md §1.5): one chain per (b, c),
//   x = clean(tokens[b,k,c]),  s = a*s + (1-a)*(g*x + bias),  y[b,k,c] = o*s,
// as a chunked parallel scan in ONE launch per call, for every direction.
//
// Defines (the only compile-time inputs; B, K and C are kernel arguments, so one module serves
// every shape): DTYPE (0 fp32, 1 fp16, 2 bf16), CHUNKS (warps per block), TPT (tokens per thread
// per super-chunk), PREFETCH (0/1), DECAY_MIN_BITS / DECAY_MAX_BITS (the f32 decay clamp).
//
// Layout. Grid (ceil(C/32), B), block (32, CHUNKS): lane = channel, warp = chunk. A block walks K
// in super-chunks of SUPER = CHUNKS*TPT steps; in each, warp j owns the TPT steps
// [j*TPT, (j+1)*TPT) and holds their tokens in registers (loaded once, coalesced over channels).
//   1. Each thread scans its chunk from s = 0: end state e_j, and p_j = a^n_j (n_j valid steps;
//      steps past K are the identity, so K need not be a multiple of anything).
//   2. e_j and p_j go to shared memory (double-buffered by super-chunk parity: one barrier per
//      super-chunk). Every thread folds the carry over the chunks, carry <- p_q*carry + e_q, which
//      gives its own carry-in and the block's carry into the next super-chunk.
//   3. Each thread re-scans its chunk from its carry-in, from registers, and stores y.
// With PREFETCH the next super-chunk's tokens are loaded while the current one is scanned.
//
// Bidirectional: each thread scans its chunk both ways (two independent chains), the forward
// carry folds from the left and the backward carry from the right, and y = o*(wf*s_f + wb*s_b)
// is stored once. When K fits one super-chunk this is a single pass over the tokens. Longer K
// first walks the super-chunks right to left and records the backward carry entering each one
// in `scratch` ([B, nsup, C] floats), then walks left to right as above (tokens read twice).
//
// Policies shared with the CPU paths: NaN tokens -> 0, then clamp to [-clampv, clampv] (so
// +-inf -> +-clampv); a = clamp(decay, DECAY_MIN, DECAY_MAX); the gate clamped to [0, 1].
// fp16/bf16 are raw 16-bit patterns converted with PTX cvt (fp16) or integer round-to-nearest-
// even (bf16), so no CUDA header is needed.

#define LANES 32
#define SUPER (CHUNKS * TPT)

#if DTYPE == 0
typedef float S;
#else
typedef unsigned short S;
#endif

__device__ __forceinline__ float to_f32(S v) {
#if DTYPE == 0
    return v;
#elif DTYPE == 1
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
#else
    return __uint_as_float(((unsigned int)v) << 16);
#endif
}

__device__ __forceinline__ S from_f32(float f) {
#if DTYPE == 0
    return f;
#elif DTYPE == 1
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    unsigned int u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)0x7fc0u;
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
#endif
}

// Per-channel constants: w = gw*x + bw is the (1-a)*(g*x + bias) term of the step.
struct Chan {
    float a, gw, bw, o;
};

__device__ __forceinline__ Chan load_chan(const float* __restrict__ params, int C, int c) {
    const float a = fminf(fmaxf(params[c], __int_as_float(DECAY_MIN_BITS)), __int_as_float(DECAY_MAX_BITS));
    const float oma = 1.0f - a;
    Chan ch;
    ch.a = a;
    ch.gw = oma * params[C + c];
    ch.o = params[2 * C + c];
    ch.bw = oma * params[3 * C + c];
    return ch;
}

__device__ __forceinline__ float clean_token(float x, float clampv) {
    if (x != x) return 0.0f;
    return fminf(fmaxf(x, -clampv), clampv);
}

// Tokens of the TPT steps r0 .. r0+TPT-1 in processing order (REV: step r is k = K-1-r). Steps
// past K and dead lanes (c >= C) load nothing.
template <int REV>
__device__ __forceinline__ void load_tokens(S (&raw)[TPT], const S* __restrict__ tokens, size_t row0, int K,
                                            int C, int c, bool live, int r0) {
#pragma unroll
    for (int t = 0; t < TPT; ++t) {
        const int r = r0 + t;
        S v = (S)0;
        if (live && r < K) {
            const int k = REV ? K - 1 - r : r;
            v = tokens[(row0 + (size_t)k) * (size_t)C + c];
        }
        raw[t] = v;
    }
}

__device__ __forceinline__ void to_terms(float (&w)[TPT], const S (&raw)[TPT], const Chan& ch, float clampv) {
#pragma unroll
    for (int t = 0; t < TPT; ++t) w[t] = fmaf(ch.gw, clean_token(to_f32(raw[t]), clampv), ch.bw);
}

__device__ __forceinline__ int valid_steps(int K, int r0) {
    return min(max(K - r0, 0), TPT);
}

// Forward (REV = 0) or backward (REV = 1): one pass over the tokens.
template <int REV>
__device__ __forceinline__ void scan_single(const S* __restrict__ tokens, const float* __restrict__ params,
                                            const S* __restrict__ init, int has_init, S* __restrict__ y,
                                            S* __restrict__ state, int K, int C, float clampv) {
    __shared__ float sh_e[2][CHUNKS][LANES];
    __shared__ float sh_p[2][CHUNKS][LANES];
    const int lane = threadIdx.x, j = threadIdx.y;
    const int b = blockIdx.y;
    const int c = blockIdx.x * LANES + lane;
    const bool live = c < C;
    const Chan ch = load_chan(params, C, live ? c : 0);
    const size_t row0 = (size_t)b * (size_t)K;
    float carry = (has_init && live) ? to_f32(init[(size_t)b * C + c]) : 0.0f;
    const int nsup = (K + SUPER - 1) / SUPER;
    S raw[TPT];
#if PREFETCH
    load_tokens<REV>(raw, tokens, row0, K, C, c, live, j * TPT);
#endif
    for (int it = 0; it < nsup; ++it) {
        const int r0 = it * SUPER + j * TPT;
        const int n = valid_steps(K, r0);
#if !PREFETCH
        load_tokens<REV>(raw, tokens, row0, K, C, c, live, r0);
#endif
        float w[TPT];
        to_terms(w, raw, ch, clampv);
#if PREFETCH
        if (it + 1 < nsup) load_tokens<REV>(raw, tokens, row0, K, C, c, live, r0 + SUPER);
#endif
        float e = 0.0f, p = 1.0f;
#pragma unroll
        for (int t = 0; t < TPT; ++t) {
            if (t < n) {
                e = fmaf(ch.a, e, w[t]);
                p *= ch.a;
            }
        }
        const int par = it & 1;
        sh_e[par][j][lane] = e;
        sh_p[par][j][lane] = p;
        __syncthreads();
        float cin = carry, cur = carry;
#pragma unroll
        for (int q = 0; q < CHUNKS; ++q) {
            if (q == j) cin = cur;
            cur = fmaf(sh_p[par][q][lane], cur, sh_e[par][q][lane]);
        }
        carry = cur;
        float s = cin;
#pragma unroll
        for (int t = 0; t < TPT; ++t) {
            if (t < n) {
                s = fmaf(ch.a, s, w[t]);
                if (live) {
                    const int r = r0 + t;
                    const int k = REV ? K - 1 - r : r;
                    y[(row0 + (size_t)k) * (size_t)C + c] = from_f32(ch.o * s);
                }
            }
        }
    }
    if (j == 0 && live) state[(size_t)b * C + c] = from_f32(carry);
}

extern "C" __global__ void __launch_bounds__(CHUNKS * LANES)
tile_ssm_forward(const S* __restrict__ tokens, const float* __restrict__ params, const S* __restrict__ init,
                 int has_init, S* __restrict__ y, S* __restrict__ state, int K, int C, float clampv) {
    scan_single<0>(tokens, params, init, has_init, y, state, K, C, clampv);
}

extern "C" __global__ void __launch_bounds__(CHUNKS * LANES)
tile_ssm_backward(const S* __restrict__ tokens, const float* __restrict__ params, const S* __restrict__ init,
                  int has_init, S* __restrict__ y, S* __restrict__ state, int K, int C, float clampv) {
    scan_single<1>(tokens, params, init, has_init, y, state, K, C, clampv);
}

// Bidirectional. init: forward state at init[b*init_bstride + c], backward at
// init[b*init_bstride + init_dstride + c] (init_dstride 0: [B,C] shared; C: [B,2,C]).
// merge: 0 sum, 1 avg, 2 gated with gate[b*gate_bstride + c] (gate_bstride 0: [C]; C: [B,1,C]).
// state: [B, 2, C] (forward, backward). scratch: [B, nsup, C] floats, used when K > SUPER.
extern "C" __global__ void __launch_bounds__(CHUNKS * LANES)
tile_ssm_bidirectional(const S* __restrict__ tokens, const float* __restrict__ params,
                       const S* __restrict__ init, int has_init, int init_bstride, int init_dstride,
                       const float* __restrict__ gate, int merge, int gate_bstride, S* __restrict__ y,
                       S* __restrict__ state, float* __restrict__ scratch, int K, int C, float clampv) {
    __shared__ float sh_ef[2][CHUNKS][LANES];
    __shared__ float sh_eb[2][CHUNKS][LANES];
    __shared__ float sh_p[2][CHUNKS][LANES];
    const int lane = threadIdx.x, j = threadIdx.y;
    const int b = blockIdx.y;
    const int c = blockIdx.x * LANES + lane;
    const bool live = c < C;
    const Chan ch = load_chan(params, C, live ? c : 0);
    const size_t row0 = (size_t)b * (size_t)K;
    float wf = 0.5f, wb = 0.5f;
    if (merge == 0) {
        wf = 1.0f;
        wb = 1.0f;
    } else if (merge == 2) {
        const float g = live ? fminf(fmaxf(gate[(size_t)b * gate_bstride + c], 0.0f), 1.0f) : 0.5f;
        wf = g;
        wb = 1.0f - g;
    }
    float carry_f = 0.0f, carry_b = 0.0f;
    if (has_init && live) {
        carry_f = to_f32(init[(size_t)b * init_bstride + c]);
        carry_b = to_f32(init[(size_t)b * init_bstride + init_dstride + c]);
    }
    const int nsup = (K + SUPER - 1) / SUPER;
    S raw[TPT];

    // Phase 1 (only when K > SUPER): right to left, the backward carry entering each super-chunk.
    if (nsup > 1) {
        float rc = carry_b;
#if PREFETCH
        load_tokens<0>(raw, tokens, row0, K, C, c, live, (nsup - 1) * SUPER + j * TPT);
#endif
        for (int it = nsup - 1; it >= 1; --it) {
            const int r0 = it * SUPER + j * TPT;
            const int n = valid_steps(K, r0);
#if !PREFETCH
            load_tokens<0>(raw, tokens, row0, K, C, c, live, r0);
#endif
            float w[TPT];
            to_terms(w, raw, ch, clampv);
#if PREFETCH
            if (it > 1) load_tokens<0>(raw, tokens, row0, K, C, c, live, r0 - SUPER);
#endif
            float e = 0.0f, p = 1.0f;
#pragma unroll
            for (int t = TPT - 1; t >= 0; --t) {
                if (t < n) {
                    e = fmaf(ch.a, e, w[t]);
                    p *= ch.a;
                }
            }
            const int par = it & 1;
            sh_eb[par][j][lane] = e;
            sh_p[par][j][lane] = p;
            __syncthreads();
            float cur = rc;
#pragma unroll
            for (int q = CHUNKS - 1; q >= 0; --q) cur = fmaf(sh_p[par][q][lane], cur, sh_eb[par][q][lane]);
            rc = cur;
            if (j == 0 && live) scratch[((size_t)b * nsup + (it - 1)) * C + c] = rc;
        }
        // The scratch writes of phase 1 become visible to the whole block, and no thread is
        // still reading phase 1's shared memory when phase 2 writes it.
        __syncthreads();
    }

    // Phase 2: left to right, both directions, merged stores.
    float cf = carry_f, final_b = 0.0f;
#if PREFETCH
    load_tokens<0>(raw, tokens, row0, K, C, c, live, j * TPT);
#endif
    for (int it = 0; it < nsup; ++it) {
        const int r0 = it * SUPER + j * TPT;
        const int n = valid_steps(K, r0);
#if !PREFETCH
        load_tokens<0>(raw, tokens, row0, K, C, c, live, r0);
#endif
        float w[TPT];
        to_terms(w, raw, ch, clampv);
#if PREFETCH
        if (it + 1 < nsup) load_tokens<0>(raw, tokens, row0, K, C, c, live, r0 + SUPER);
#endif
        float ef = 0.0f, eb = 0.0f, p = 1.0f;
#pragma unroll
        for (int t = 0; t < TPT; ++t) {
            if (t < n) {
                ef = fmaf(ch.a, ef, w[t]);
                p *= ch.a;
            }
        }
#pragma unroll
        for (int t = TPT - 1; t >= 0; --t) {
            if (t < n) eb = fmaf(ch.a, eb, w[t]);
        }
        const int par = it & 1;
        sh_ef[par][j][lane] = ef;
        sh_eb[par][j][lane] = eb;
        sh_p[par][j][lane] = p;
        const float right = (it == nsup - 1 || !live) ? carry_b : scratch[((size_t)b * nsup + it) * C + c];
        __syncthreads();
        float cin_f = cf, cur = cf;
#pragma unroll
        for (int q = 0; q < CHUNKS; ++q) {
            if (q == j) cin_f = cur;
            cur = fmaf(sh_p[par][q][lane], cur, sh_ef[par][q][lane]);
        }
        cf = cur;
        float cin_b = right;
        cur = right;
#pragma unroll
        for (int q = CHUNKS - 1; q >= 0; --q) {
            if (q == j) cin_b = cur;
            cur = fmaf(sh_p[par][q][lane], cur, sh_eb[par][q][lane]);
        }
        // After the whole first super-chunk, the backward chain has processed k = 0: its final state.
        if (it == 0) final_b = cur;
        float sb[TPT];
        float s = cin_b;
#pragma unroll
        for (int t = TPT - 1; t >= 0; --t) {
            if (t < n) s = fmaf(ch.a, s, w[t]);
            sb[t] = s;
        }
        s = cin_f;
#pragma unroll
        for (int t = 0; t < TPT; ++t) {
            if (t < n) {
                s = fmaf(ch.a, s, w[t]);
                if (live) y[(row0 + (size_t)(r0 + t)) * (size_t)C + c] = from_f32(ch.o * fmaf(wf, s, wb * sb[t]));
            }
        }
    }
    if (j == 0 && live) {
        state[((size_t)b * 2) * C + c] = from_f32(cf);
        state[((size_t)b * 2 + 1) * C + c] = from_f32(final_b);
    }
}
