// TileSSM scan (spec/apex-x-kernels.md §1.5): one chain per (b, c),
//   x = clean(tokens[b,k,c]),  s = a*s + (1-a)*(g*x + bias),  y[b,k,c] = o*s,
// as a chunked parallel scan in ONE launch per call, for every direction.
//
// Defines (the only compile-time inputs; B, K and C are kernel arguments, so one module serves
// every shape): DTYPE (0 fp32, 1 fp16, 2 bf16), CHUNKS (warps per block), TPT (tokens per thread
// per super-chunk), CPL (channels per lane, 1 or 2), PREFETCH (0/1), DECAY_MIN_BITS /
// DECAY_MAX_BITS (the f32 decay clamp).
//
// Layout. Grid (ceil(C/(32*CPL)), B), block (32, CHUNKS): lane = CPL adjacent channels (one
// 2, 4 or 8-byte access per token row), warp = chunk. CPL 2 needs an even C (the host checks). A block walks K
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
// Tried and dropped (H100, 2026-11-25): for K within one super-chunk, a warp per chunk and
// direction (2*CHUNKS warps, backward states handed over in shared memory) halves each thread's
// chain but took 5.46 us at the fixed profile against 4.78 for this kernel (DRAM-cold graph).
//
// Policies shared with the CPU paths: NaN tokens -> 0, then clamp to [-clampv, clampv] (so
// +-inf -> +-clampv); a = clamp(decay, DECAY_MIN, DECAY_MAX); the gate clamped to [0, 1].
// fp16/bf16 are raw 16-bit patterns (plugin-api's storage header), so no CUDA header is needed.

#define LANES 32
#define SUPER (CHUNKS * TPT)

// S, to_f32 and from_f32 come from plugin-api's storage header, which program.rs puts first.

// V: the channels one lane owns, loaded and stored as one access (CPL 2: 4 bytes for 16-bit
// storage, 8 for fp32; the host launches CPL 2 only when C is even, so every access is aligned).
#if CPL == 1
typedef S V;
#elif DTYPE == 0
typedef float2 V;
#else
typedef unsigned int V;
#endif

__device__ __forceinline__ V zero_v() {
#if CPL == 2 && DTYPE == 0
    V v;
    v.x = 0.0f;
    v.y = 0.0f;
    return v;
#else
    return (V)0;
#endif
}

__device__ __forceinline__ void unpack(V v, float (&f)[CPL]) {
#if CPL == 1
    f[0] = to_f32(v);
#elif DTYPE == 0
    f[0] = v.x;
    f[1] = v.y;
#else
    f[0] = to_f32((S)(v & 0xffffu));
    f[1] = to_f32((S)(v >> 16));
#endif
}

__device__ __forceinline__ V pack(const float (&f)[CPL]) {
#if CPL == 1
    return from_f32(f[0]);
#elif DTYPE == 0
    V v;
    v.x = f[0];
    v.y = f[1];
    return v;
#else
    return (unsigned int)from_f32(f[0]) | ((unsigned int)from_f32(f[1]) << 16);
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

// The lane's place: vector column cv (channels c0 .. c0+CPL-1) of CV = C/CPL columns.
struct Lane {
    int cv, c0, CV;
    bool live;
};

__device__ __forceinline__ Lane lane_of(int C) {
    Lane l;
    l.cv = blockIdx.x * LANES + threadIdx.x;
    l.c0 = l.cv * CPL;
    l.CV = C / CPL;
    l.live = l.c0 < C;
    return l;
}

// Tokens of the TPT steps r0 .. r0+TPT-1 in processing order (REV: step r is k = K-1-r). Steps
// past K and dead lanes load nothing.
template <int REV>
__device__ __forceinline__ void load_tokens(V (&raw)[TPT], const V* __restrict__ tokens, size_t row0, int K,
                                            const Lane& l, int r0) {
#pragma unroll
    for (int t = 0; t < TPT; ++t) {
        const int r = r0 + t;
        V v = zero_v();
        if (l.live && r < K) {
            const int k = REV ? K - 1 - r : r;
            v = tokens[(row0 + (size_t)k) * (size_t)l.CV + l.cv];
        }
        raw[t] = v;
    }
}

__device__ __forceinline__ void to_terms(float (&w)[TPT][CPL], const V (&raw)[TPT], const Chan (&ch)[CPL],
                                         float clampv) {
#pragma unroll
    for (int t = 0; t < TPT; ++t) {
        float x[CPL];
        unpack(raw[t], x);
#pragma unroll
        for (int i = 0; i < CPL; ++i) w[t][i] = fmaf(ch[i].gw, clean_token(x[i], clampv), ch[i].bw);
    }
}

__device__ __forceinline__ int valid_steps(int K, int r0) {
    return min(max(K - r0, 0), TPT);
}

// A chunk maps the carry s entering it to p*s + e. Its summary over its first n (valid) steps,
// visited first to last (BACK: last to first): e, the state reached from 0, and with DECAY p, the
// product of the decays (DECAY false leaves p as it is).
template <bool BACK, bool DECAY>
__device__ __forceinline__ void chunk_summary(const float (&w)[TPT][CPL], const Chan (&ch)[CPL], int n,
                                              float (&e)[CPL], float (&p)[CPL]) {
#pragma unroll
    for (int i = 0; i < CPL; ++i) {
        e[i] = 0.0f;
        if (DECAY) p[i] = 1.0f;
    }
#pragma unroll
    for (int u = 0; u < TPT; ++u) {
        const int t = BACK ? TPT - 1 - u : u;
        if (t < n) {
#pragma unroll
            for (int i = 0; i < CPL; ++i) {
                e[i] = fmaf(ch[i].a, e[i], w[t][i]);
                if (DECAY) p[i] *= ch[i].a;
            }
        }
    }
}

// `carry` folded over the block's chunks first to last (BACK: last to first) through their
// summaries (sp, se: the super-chunk's p and e in shared memory) for channel slot i: returns the
// carry leaving the last one and sets cin to the carry entering chunk j.
template <bool BACK>
__device__ __forceinline__ float fold_chunks(const float (&sp)[CHUNKS][CPL][LANES],
                                             const float (&se)[CHUNKS][CPL][LANES], int i, int lane, int j,
                                             float carry, float& cin) {
    float cur = carry;
    cin = carry;
#pragma unroll
    for (int u = 0; u < CHUNKS; ++u) {
        const int q = BACK ? CHUNKS - 1 - u : u;
        if (q == j) cin = cur;
        cur = fmaf(sp[q][i][lane], cur, se[q][i][lane]);
    }
    return cur;
}

// Forward (REV = 0) or backward (REV = 1): one pass over the tokens.
template <int REV>
__device__ __forceinline__ void scan_single(const V* __restrict__ tokens, const float* __restrict__ params,
                                            const S* __restrict__ init, int has_init, V* __restrict__ y,
                                            S* __restrict__ state, int K, int C, float clampv) {
    __shared__ float sh_e[2][CHUNKS][CPL][LANES];
    __shared__ float sh_p[2][CHUNKS][CPL][LANES];
    const int lane = threadIdx.x, j = threadIdx.y;
    const int b = blockIdx.y;
    const Lane l = lane_of(C);
    Chan ch[CPL];
    float carry[CPL];
#pragma unroll
    for (int i = 0; i < CPL; ++i) {
        ch[i] = load_chan(params, C, l.live ? l.c0 + i : 0);
        carry[i] = (has_init && l.live) ? to_f32(init[(size_t)b * C + l.c0 + i]) : 0.0f;
    }
    const size_t row0 = (size_t)b * (size_t)K;
    const int nsup = (K + SUPER - 1) / SUPER;
    V raw[TPT];
#if PREFETCH
    load_tokens<REV>(raw, tokens, row0, K, l, j * TPT);
#endif
    for (int it = 0; it < nsup; ++it) {
        const int r0 = it * SUPER + j * TPT;
        const int n = valid_steps(K, r0);
#if !PREFETCH
        load_tokens<REV>(raw, tokens, row0, K, l, r0);
#endif
        float w[TPT][CPL];
        to_terms(w, raw, ch, clampv);
#if PREFETCH
        if (it + 1 < nsup) load_tokens<REV>(raw, tokens, row0, K, l, r0 + SUPER);
#endif
        float e[CPL], p[CPL];
        chunk_summary<false, true>(w, ch, n, e, p);
        const int par = it & 1;
#pragma unroll
        for (int i = 0; i < CPL; ++i) {
            sh_e[par][j][i][lane] = e[i];
            sh_p[par][j][i][lane] = p[i];
        }
        __syncthreads();
        float s[CPL];
#pragma unroll
        for (int i = 0; i < CPL; ++i)
            carry[i] = fold_chunks<false>(sh_p[par], sh_e[par], i, lane, j, carry[i], s[i]);
#pragma unroll
        for (int t = 0; t < TPT; ++t) {
            if (t < n) {
                float out[CPL];
#pragma unroll
                for (int i = 0; i < CPL; ++i) {
                    s[i] = fmaf(ch[i].a, s[i], w[t][i]);
                    out[i] = ch[i].o * s[i];
                }
                if (l.live) {
                    const int r = r0 + t;
                    const int k = REV ? K - 1 - r : r;
                    y[(row0 + (size_t)k) * (size_t)l.CV + l.cv] = pack(out);
                }
            }
        }
    }
    if (j == 0 && l.live) {
#pragma unroll
        for (int i = 0; i < CPL; ++i) state[(size_t)b * C + l.c0 + i] = from_f32(carry[i]);
    }
}

extern "C" __global__ void __launch_bounds__(CHUNKS * LANES)
tile_ssm_forward(const V* __restrict__ tokens, const float* __restrict__ params, const S* __restrict__ init,
                 int has_init, V* __restrict__ y, S* __restrict__ state, int K, int C, float clampv) {
    scan_single<0>(tokens, params, init, has_init, y, state, K, C, clampv);
}

extern "C" __global__ void __launch_bounds__(CHUNKS * LANES)
tile_ssm_backward(const V* __restrict__ tokens, const float* __restrict__ params, const S* __restrict__ init,
                  int has_init, V* __restrict__ y, S* __restrict__ state, int K, int C, float clampv) {
    scan_single<1>(tokens, params, init, has_init, y, state, K, C, clampv);
}

// Bidirectional. init: forward state at init[b*init_bstride + c], backward at
// init[b*init_bstride + init_dstride + c] (init_dstride 0: [B,C] shared; C: [B,2,C]).
// merge: 0 sum, 1 avg, 2 gated with gate[b*gate_bstride + c] (gate_bstride 0: [C]; C: [B,1,C]).
// state: [B, 2, C] (forward, backward). scratch: [B, nsup, C] floats, used when K > SUPER.
template <int ONE>
__device__ __forceinline__ void scan_bidirectional(const V* __restrict__ tokens, const float* __restrict__ params,
                       const S* __restrict__ init, int has_init, int init_bstride, int init_dstride,
                       const float* __restrict__ gate, int merge, int gate_bstride, V* __restrict__ y,
                       S* __restrict__ state, float* __restrict__ scratch, int K, int C, float clampv) {
    __shared__ float sh_ef[2][CHUNKS][CPL][LANES];
    __shared__ float sh_eb[2][CHUNKS][CPL][LANES];
    __shared__ float sh_p[2][CHUNKS][CPL][LANES];
    const int lane = threadIdx.x, j = threadIdx.y;
    const int b = blockIdx.y;
    const Lane l = lane_of(C);
    Chan ch[CPL];
    float wf[CPL], wb[CPL], carry_f[CPL], carry_b[CPL];
#pragma unroll
    for (int i = 0; i < CPL; ++i) {
        const int c = l.c0 + i;
        ch[i] = load_chan(params, C, l.live ? c : 0);
        wf[i] = 0.5f;
        wb[i] = 0.5f;
        if (merge == 0) {
            wf[i] = 1.0f;
            wb[i] = 1.0f;
        } else if (merge == 2) {
            const float g = l.live ? fminf(fmaxf(gate[(size_t)b * gate_bstride + c], 0.0f), 1.0f) : 0.5f;
            wf[i] = g;
            wb[i] = 1.0f - g;
        }
        carry_f[i] = 0.0f;
        carry_b[i] = 0.0f;
        if (has_init && l.live) {
            carry_f[i] = to_f32(init[(size_t)b * init_bstride + c]);
            carry_b[i] = to_f32(init[(size_t)b * init_bstride + init_dstride + c]);
        }
    }
    const size_t row0 = (size_t)b * (size_t)K;
    const int nsup = ONE ? 1 : (K + SUPER - 1) / SUPER;
    V raw[TPT];

    // Phase 1 (only when K > SUPER): right to left, the backward carry entering each super-chunk.
    if (nsup > 1) {
        float rc[CPL];
#pragma unroll
        for (int i = 0; i < CPL; ++i) rc[i] = carry_b[i];
#if PREFETCH
        load_tokens<0>(raw, tokens, row0, K, l, (nsup - 1) * SUPER + j * TPT);
#endif
        for (int it = nsup - 1; it >= 1; --it) {
            const int r0 = it * SUPER + j * TPT;
            const int n = valid_steps(K, r0);
#if !PREFETCH
            load_tokens<0>(raw, tokens, row0, K, l, r0);
#endif
            float w[TPT][CPL];
            to_terms(w, raw, ch, clampv);
#if PREFETCH
            if (it > 1) load_tokens<0>(raw, tokens, row0, K, l, r0 - SUPER);
#endif
            float e[CPL], p[CPL];
            chunk_summary<true, true>(w, ch, n, e, p);
            const int par = it & 1;
#pragma unroll
            for (int i = 0; i < CPL; ++i) {
                sh_eb[par][j][i][lane] = e[i];
                sh_p[par][j][i][lane] = p[i];
            }
            __syncthreads();
#pragma unroll
            for (int i = 0; i < CPL; ++i) {
                float unused;
                rc[i] = fold_chunks<true>(sh_p[par], sh_eb[par], i, lane, j, rc[i], unused);
                if (j == 0 && l.live) scratch[((size_t)b * nsup + (it - 1)) * C + l.c0 + i] = rc[i];
            }
        }
        // The scratch writes of phase 1 become visible to the whole block, and no thread is
        // still reading phase 1's shared memory when phase 2 writes it.
        __syncthreads();
    }

    // Phase 2: left to right, both directions, merged stores.
    float cf[CPL], final_b[CPL];
#pragma unroll
    for (int i = 0; i < CPL; ++i) {
        cf[i] = carry_f[i];
        final_b[i] = 0.0f;
    }
#if PREFETCH
    load_tokens<0>(raw, tokens, row0, K, l, j * TPT);
#endif
    for (int it = 0; it < nsup; ++it) {
        const int r0 = it * SUPER + j * TPT;
        const int n = valid_steps(K, r0);
#if !PREFETCH
        load_tokens<0>(raw, tokens, row0, K, l, r0);
#endif
        float w[TPT][CPL];
        to_terms(w, raw, ch, clampv);
#if PREFETCH
        if (it + 1 < nsup) load_tokens<0>(raw, tokens, row0, K, l, r0 + SUPER);
#endif
        float ef[CPL], eb[CPL], p[CPL];
        chunk_summary<false, true>(w, ch, n, ef, p);
        chunk_summary<true, false>(w, ch, n, eb, p);
        const int par = it & 1;
        float right[CPL];
#pragma unroll
        for (int i = 0; i < CPL; ++i) {
            sh_ef[par][j][i][lane] = ef[i];
            sh_eb[par][j][i][lane] = eb[i];
            sh_p[par][j][i][lane] = p[i];
            right[i] = (it == nsup - 1 || !l.live) ? carry_b[i] : scratch[((size_t)b * nsup + it) * C + l.c0 + i];
        }
        __syncthreads();
        float cin_f[CPL], cin_b[CPL];
        // Both directions' folds written out: two fold_chunks calls here change CPL 2's PTX (24 to
        // 40 more SASS instructions, NVRTC 13.0), and these loops are the code that was measured.
#pragma unroll
        for (int i = 0; i < CPL; ++i) {
            float cin = cf[i], cur = cf[i];
#pragma unroll
            for (int q = 0; q < CHUNKS; ++q) {
                if (q == j) cin = cur;
                cur = fmaf(sh_p[par][q][i][lane], cur, sh_ef[par][q][i][lane]);
            }
            cf[i] = cur;
            cin_f[i] = cin;
            cin = right[i];
            cur = right[i];
#pragma unroll
            for (int q = CHUNKS - 1; q >= 0; --q) {
                if (q == j) cin = cur;
                cur = fmaf(sh_p[par][q][i][lane], cur, sh_eb[par][q][i][lane]);
            }
            cin_b[i] = cin;
            // After the whole first super-chunk, the backward chain has processed k = 0: its final state.
            if (it == 0) final_b[i] = cur;
        }
        float sb[TPT][CPL];
        float s[CPL];
#pragma unroll
        for (int i = 0; i < CPL; ++i) s[i] = cin_b[i];
#pragma unroll
        for (int t = TPT - 1; t >= 0; --t) {
#pragma unroll
            for (int i = 0; i < CPL; ++i) {
                if (t < n) s[i] = fmaf(ch[i].a, s[i], w[t][i]);
                sb[t][i] = s[i];
            }
        }
#pragma unroll
        for (int i = 0; i < CPL; ++i) s[i] = cin_f[i];
#pragma unroll
        for (int t = 0; t < TPT; ++t) {
            if (t < n) {
                float out[CPL];
#pragma unroll
                for (int i = 0; i < CPL; ++i) {
                    s[i] = fmaf(ch[i].a, s[i], w[t][i]);
                    out[i] = ch[i].o * fmaf(wf[i], s[i], wb[i] * sb[t][i]);
                }
                if (l.live) y[(row0 + (size_t)(r0 + t)) * (size_t)l.CV + l.cv] = pack(out);
            }
        }
    }
    if (j == 0 && l.live) {
#pragma unroll
        for (int i = 0; i < CPL; ++i) {
            state[((size_t)b * 2) * C + l.c0 + i] = from_f32(cf[i]);
            state[((size_t)b * 2 + 1) * C + l.c0 + i] = from_f32(final_b[i]);
        }
    }
}

#define BIDIRECTIONAL_ENTRY(NAME, ONE)                                                                    \
    extern "C" __global__ void __launch_bounds__(CHUNKS * LANES)                                         \
    NAME(const V* __restrict__ tokens, const float* __restrict__ params, const S* __restrict__ init,     \
         int has_init, int init_bstride, int init_dstride, const float* __restrict__ gate, int merge,   \
         int gate_bstride, V* __restrict__ y, S* __restrict__ state, float* __restrict__ scratch, int K, \
         int C, float clampv) {                                                                          \
        scan_bidirectional<ONE>(tokens, params, init, has_init, init_bstride, init_dstride, gate, merge, \
                                gate_bstride, y, state, scratch, K, C, clampv);                          \
    }
// Two entry points: any K, and `_one` for K <= SUPER, the same code specialised for one
// super-chunk (no loop, prefetch, phase 1 or scratch). H100, fixed profile, NARROW, alternating
// runs (2026-11-25): 4.70 us DRAM-cold / 4.17 L2-hot against 4.79 / 4.26. The same
// specialisation of the forward scan was slower (4.70 against 4.11 DRAM-cold), so it has one.
BIDIRECTIONAL_ENTRY(tile_ssm_bidirectional, 0)
BIDIRECTIONAL_ENTRY(tile_ssm_bidirectional_one, 1)
